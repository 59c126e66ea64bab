"""Auditing XLA's claims: an indexing map XLA printed for a fusion, checked
against our (proven) analysis of the same module.

A claim is what XLA prints for one operand of a fusion (``operand id = K``): an
indexing map, and its ``runtime variables:`` section binding each ``rtN`` to an
instruction and a map giving the element of that instruction that holds the
value. :func:`audit` checks it in three steps, each a proof or a refutation with
a counterexample the evaluator confirmed:

1. **relation**: the claim relates each output index to the same elements as our
   map (range variables existential). A refutation names an output index and the
   element claimed but never read, or read but not claimed.
2. **range variables**: XLA keeps range variables as loop variables, so their
   exact set matters: with the same numbers of variables the maps must be equal
   pointwise. A refutation names a range-variable value one map admits and the
   other drops (or where they read different elements).
3. **runtime variables**: each ``rtN`` must be bound to the instruction our
   analysis traces it to (or one on the chain of value-preserving instructions
   traced through) by a pointwise-equal map. A refutation names the point where
   the claimed and the actual element holding the offset differ.

Statuses: ``proved``, ``refuted``, ``mismatch`` (the maps are not comparable step by
step, e.g. different numbers of range variables; no counterexample is claimed),
``unknown`` (our analysis has no exact map to compare with), ``error``.

The claims file (text) is a sequence of blocks::

    fusion NAME               (or: computation NAME; optional for a module with one fusion)
    input-to-output           (optional: from parameter K to output N; default output-to-input)
    output N                  (optional, default 0)
    operand id = K
    (d0, d1){rt0} -> (d0 + rt0, d1),
    domain:
    ...
    runtime variables:
    rt0: %p1 = s32[] parameter(1)     (XLA's instruction text, or just its name)
      (d0, d1) -> (),
      domain:
      ...

Lines starting with ``//`` or ``#`` are comments. JSON: ``{"claims": [{"fusion":
..., "output": 0, "operand": K, "map": "...", "runtime_variables": [{"rt": 0,
"instruction": "p1", "map": "..."}]}]}`` (or the list alone).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from verified_indexing.engines import prove_equal, prove_pointwise_equal, prove_subset
from verified_indexing.engines.verdict import Counterexample, Verdict
from verified_indexing.errors import MapError, ParseError, UnsupportedError, VerifiedIndexingError
from verified_indexing.hlo.fusion import AccessMap, _trace_step, input_to_output_maps, output_to_input_maps
from verified_indexing.hlo.ir import Computation, Module
from verified_indexing.indexing_map import IndexingMap, Variable
from verified_indexing.interval import Interval
from verified_indexing.syntax import parse_indexing_map

__all__ = [
    "Claim", "RuntimeBinding", "AuditResult", "parse_claims", "audit", "format_audit", "split_runtime_variables",
]


@dataclass(frozen=True)
class RuntimeBinding:
    """``rtN``: the instruction holding its value, and the map from the claim's
    variables to the element of that instruction."""

    index: int
    instruction: str
    map: IndexingMap


@dataclass
class Claim:
    operand: int
    map: IndexingMap
    bindings: list[RuntimeBinding] = field(default_factory=list)
    fusion: str | None = None
    computation: str | None = None
    output: int = 0
    line: int = 1
    #: ``output-to-input`` (operand = the parameter read) or ``input-to-output``
    #: (operand = the parameter mapped from, output = the root output mapped to).
    direction: str = "output-to-input"

    def label(self) -> str:
        where = f"fusion {self.fusion}" if self.fusion else ""
        if self.computation:
            where = f"computation {self.computation}"
        parts = [p for p in (where, f"output {self.output}" if self.output else "", f"operand {self.operand}") if p]
        if self.direction != "output-to-input":
            parts.append(self.direction)
        return ", ".join(parts)


@dataclass
class AuditResult:
    claim: Claim
    status: str  # proved | refuted | mismatch | unknown | error
    steps: list[tuple[str, str]] = field(default_factory=list)  # (step, what happened)
    witness: list[str] = field(default_factory=list)
    ours: list[AccessMap] = field(default_factory=list)
    #: Our map the claim was proved equal to (as a relation), if any.
    matched: AccessMap | None = None
    #: The refutation's counterexample (claim = source, analysis = target), confirmed by the evaluator.
    counterexample: Counterexample | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "claim": self.claim.label(),
            "line": self.claim.line,
            "status": self.status,
            "steps": [{"step": s, "result": r} for s, r in self.steps],
            "witness": self.witness,
            "counterexample": None if self.counterexample is None else {
                "values": dict(self.counterexample.values),
                "claimed": None if self.counterexample.source is None else list(self.counterexample.source),
                "analysis": None if self.counterexample.target is None else list(self.counterexample.target),
            },
            "ours": [str(a.map) for a in self.ours],
        }


# -- reading claims -----------------------------------------------------------------------------

_HEADER_RE = re.compile(r"^\s*(fusion|computation)\s+%?([\w.\-]+)\s*:?\s*$")
_OUTPUT_RE = re.compile(r"^\s*output\s+(?:id\s*=\s*)?(\d+)\s*:?\s*$")
_DIRECTION_RE = re.compile(r"^\s*(?:direction\s*[:=]?\s*)?(output-to-input|input-to-output)\s*:?\s*$")
_OPERAND_RE = re.compile(r"^\s*(?:operand id\s*=\s*|operand\s+)(\d+)\s*:?\s*$")
_RT_RE = re.compile(r"^\s*rt(\d+)\s*:\s*(.*?)\s*$")
_RT_SECTION_RE = re.compile(r"^\s*runtime variables\s*:\s*$")
# Where a map starts: "(d0, d1)", optional "[s0]" and "{rt0}", then "->".
_MAP_START_RE = re.compile(r"\((?:\s*d\d+\s*(?:,\s*d\d+\s*)*)?\)\s*(?:\[[^\]]*\])?\s*(?:\{[^}]*\})?\s*->")


def _instruction_name(text: str) -> str:
    """``%p1 = s32[] parameter(1)`` -> ``p1``; ``ROOT %x = ...`` -> ``x``; ``p1`` -> ``p1``."""
    text = text.strip()
    head = text.split("=", 1)[0] if "=" in text else text
    head = re.sub(r"^(hlo\s*:\s*)?(ROOT\s+)?", "", head.strip())
    return head.strip().lstrip("%")


def parse_claims(text: str, source: str = "<claims>") -> list[Claim]:
    """The claims of a text file (XLA's printouts) or a JSON document."""
    stripped = text.strip()
    if stripped.startswith(("{", "[")):
        return _claims_from_json(stripped, source)
    lines = text.splitlines()
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln) + 1)
    claims: list[Claim] = []
    fusion: str | None = None
    computation: str | None = None
    output = 0
    direction = "output-to-input"
    i = 0

    def block(start: int) -> tuple[str, int, int]:
        """The text of a map starting at line ``start``: up to a header, an rt
        binding, the runtime-variables line or a blank line after the domain."""
        j = start
        while j < len(lines):
            ln = lines[j]
            if j > start and (
                _HEADER_RE.match(ln) or _OUTPUT_RE.match(ln) or _OPERAND_RE.match(ln) or _RT_RE.match(ln)
                or _DIRECTION_RE.match(ln) or _MAP_START_RE.match(ln.lstrip())
                or _RT_SECTION_RE.match(ln) or not ln.strip()
            ):
                break
            j += 1
        return "\n".join(lines[start:j]), offsets[start], j

    def parse_map(body: str, at: int) -> IndexingMap:
        try:
            return parse_indexing_map(body.strip(), source)
        except ParseError as exc:
            # Re-position the error in the whole file.
            lead = len(body) - len(body.lstrip())
            raise ParseError(exc.message, text, at + lead + exc.offset, exc.length, source) from None

    while i < len(lines):
        ln = lines[i]
        if not ln.strip() or ln.lstrip().startswith(("//", "#")):
            i += 1
            continue
        if m := _HEADER_RE.match(ln):
            fusion, computation = (m.group(2), None) if m.group(1) == "fusion" else (None, m.group(2))
            output = 0
            i += 1
            continue
        if m := _DIRECTION_RE.match(ln):
            direction = m.group(1)
            i += 1
            continue
        if m := _OUTPUT_RE.match(ln):
            output = int(m.group(1))
            i += 1
            continue
        operand_line = i
        if m := _OPERAND_RE.match(ln):
            operand = int(m.group(1))
            i += 1
            while i < len(lines) and not lines[i].strip():
                i += 1
        elif claims and ln.lstrip().startswith("(") and claims[-1].fusion == fusion and \
                claims[-1].computation == computation:
            operand = claims[-1].operand  # another map of the same operand's set
        else:
            raise ParseError("expected 'operand id = K' before a claimed map", text, offsets[i], len(ln), source)
        if i >= len(lines):
            raise ParseError("a claim without its map", text, offsets[operand_line], 1, source)
        body, at, i = block(i)
        claim = Claim(operand, parse_map(body, at), [], fusion, computation, output, operand_line + 1, direction)
        while i < len(lines) and not lines[i].strip():
            i += 1
        if i < len(lines) and _RT_SECTION_RE.match(lines[i]):
            i += 1
            while i < len(lines):
                while i < len(lines) and not lines[i].strip():
                    i += 1
                if i >= len(lines) or not (rm := _RT_RE.match(lines[i])):
                    break
                k, inst_text = int(rm.group(1)), rm.group(2)
                line_at = offsets[i] + rm.start(2)
                i += 1
                if not inst_text:  # the instruction on the next line
                    inst_text = lines[i].strip() if i < len(lines) else ""
                    i += 1
                inline = _MAP_START_RE.search(inst_text)
                if inline is not None:  # "rt0: NAME: (d0, d1) -> (), domain: ..." on one line (and more lines)
                    head = inst_text[: inline.start()].rstrip(" :,")
                    continues = (
                        i < len(lines) and lines[i].strip() and not _RT_RE.match(lines[i])
                        and not _MAP_START_RE.match(lines[i].lstrip()) and not _HEADER_RE.match(lines[i])
                        and not _OPERAND_RE.match(lines[i]) and not _OUTPUT_RE.match(lines[i])
                        and not _DIRECTION_RE.match(lines[i])
                    )
                    more, _, i = block(i) if continues else ("", 0, i)
                    body = inst_text[inline.start():] + ("\n" + more if more else "")
                    claim.bindings.append(RuntimeBinding(k, _instruction_name(head),
                                                         parse_map(body, line_at + inline.start())))
                    continue
                body, at, i = block(i)
                claim.bindings.append(RuntimeBinding(k, _instruction_name(inst_text), parse_map(body, at)))
        claims.append(claim)
    if not claims:
        raise ParseError("no claim in the file (expected 'operand id = K' and a map)", text, 0, 1, source)
    return claims


def split_runtime_variables(text: str, source: str = "<input>") -> tuple[str, list[RuntimeBinding]]:
    """XLA's full printed form of a map: the map's text (before ``runtime variables:``)
    and the bindings of that section (``rtN: INSTRUCTION`` then the map)."""
    m = re.search(r"^\s*runtime variables\s*:\s*$", text, re.MULTILINE)
    if m is None:
        return text, []
    head = text[: m.start()]
    claims = parse_claims("operand id = 0\n" + "\n".join(
        ln if ln.strip() else "" for ln in (head.strip().splitlines() + text[m.start():].strip().splitlines())
    ), source)
    return head, claims[0].bindings


def _claims_from_json(text: str, source: str) -> list[Claim]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"malformed JSON: {exc.msg}", text, exc.pos, 1, source) from None
    items = data.get("claims") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise VerifiedIndexingError(f"{source}: expected a list of claims or {{\"claims\": [...]}}")
    claims = []
    for n, item in enumerate(items):
        if not isinstance(item, dict) or "map" not in item or "operand" not in item:
            raise VerifiedIndexingError(f"{source}: claim {n}: expected an object with 'operand' and 'map'")
        bindings = [
            RuntimeBinding(int(b.get("rt", k)), _instruction_name(str(b["instruction"])),
                           parse_indexing_map(str(b["map"]), f"{source}: claim {n} rt{k}"))
            for k, b in enumerate(item.get("runtime_variables", []))
        ]
        claims.append(
            Claim(int(item["operand"]), parse_indexing_map(str(item["map"]), f"{source}: claim {n}"), bindings,
                  item.get("fusion"), item.get("computation"), int(item.get("output", 0)), n + 1,
                  str(item.get("direction", "output-to-input")))
        )
    return claims


# -- checking -------------------------------------------------------------------------------------


def _resolve(module: Module, claim: Claim) -> Computation:
    if claim.computation is not None:
        if claim.computation not in module.computations:
            raise VerifiedIndexingError(f"no computation {claim.computation!r} in module {module.name!r}")
        return module.computations[claim.computation]
    fusions = module.fusions()
    if claim.fusion is not None:
        for inst, comp in fusions:
            if inst.name == claim.fusion or comp.name == claim.fusion:
                return comp
        raise VerifiedIndexingError(f"no fusion {claim.fusion!r} in module {module.name!r}")
    if len(fusions) == 1:
        return fusions[0][1]
    if not fusions:
        return module.entry
    raise VerifiedIndexingError(
        f"claim at line {claim.line}: the module has {len(fusions)} fusions; name one ('fusion NAME' before the claim)"
    )


def _witness(v: Verdict) -> list[str]:
    """The counterexample of ``v`` in words (claim = source side, ours = target)."""
    return [] if v.counterexample is None else _witness_of(v.counterexample)


def _witness_of(c: Counterexample) -> list[str]:
    """A counterexample in words (claim = source side, ours = target)."""
    values = ", ".join(f"{k} = {x}" for k, x in c.values)
    side = {"source": c.source, "target": c.target}
    if c.kind in ("relation", "subset"):
        # A pair (output index -> element) in one relation only.
        has, lacks = ("claimed", "the analysis") if c.source is not None else ("the analysis", "the claim")
        element = c.source if c.source is not None else c.target
        dims = ", ".join(f"{k} = {x}" for k, x in c.values if k.startswith("d") or k.startswith("rt"))
        return [
            f"at {values}:",
            f"  {has}: output ({dims}) reads element ({', '.join(map(str, element or ()))})",
            f"  {lacks}: no range-variable value makes that output read it",
        ]
    lines = [f"at {values}:"]
    for name, who in (("source", "claimed"), ("target", "analysis")):
        res = side[name]
        lines.append(f"  {who}: " + ("not in the domain" if res is None else f"element ({', '.join(map(str, res))})"))
    if c.note:
        lines.append(f"  ({c.note})")
    return lines


def _compare_binding(
    comp: Computation, b: RuntimeBinding, ours: IndexingMap, k: int
) -> tuple[str, str, list[str], Verdict | None]:
    """(status, text, witness, verdict) for the binding of ``rt{k}``."""
    v = ours.rt_vars[k]
    origin = v.origin
    name = getattr(origin, "operand_name", None)
    om = getattr(origin, "map", None)
    if not isinstance(name, str) or not isinstance(om, IndexingMap):
        return "unknown", f"rt{k}: the analysis has no origin to compare with", [], None
    via = list(getattr(origin, "via", ()))
    claim_map = b.map
    if b.instruction != name:
        if b.instruction not in via:
            return (
                "refuted",
                f"rt{k}: claimed bound to {b.instruction}, but its value comes from {name}"
                + (f" (through {', '.join(via)})" if via else ""),
                [f"the analysis (proven) reads rt{k} from {name}[{', '.join(str(r) for r in om.results)}]"],
                None,
            )
        # Follow the claim's element through the value-preserving chain down to ``name``.
        at = b.instruction
        results = list(claim_map.results)
        while at != name:
            step = _trace_step(comp, at)
            if step is None:
                return "unknown", f"rt{k}: cannot follow {b.instruction} to {name}", [], None
            at, op_map = step
            results = [r.substitute(dims=results) for r in op_map.results]
        claim_map = claim_map.replace(results=results)
    # Our origin maps are aligned with the owning map (its range and runtime variables too);
    # a claimed binding that declares none of them does not depend on them.
    if not claim_map.num_range_vars and om.num_range_vars:
        claim_map = claim_map.replace(range_vars=list(om.range_vars))
    if not claim_map.num_rt_vars and om.num_rt_vars:
        claim_map = claim_map.replace(rt_vars=list(om.rt_vars))
    if (claim_map.num_dims, claim_map.num_range_vars, claim_map.num_results) != (
        om.num_dims, om.num_range_vars, om.num_results
    ):
        return (
            "mismatch",
            f"rt{k}: the claimed map {claim_map.format(one_line=True)} and the analysis' "
            f"{om.format(one_line=True)} have different variables or results",
            [],
            None,
        )
    verdict = prove_pointwise_equal(claim_map, om, cache=None)
    if verdict.proved:
        return "proved", f"rt{k} = {name}: the binding is proved ({verdict.engine})", [], verdict
    if verdict.refuted:
        text = f"rt{k}: the claimed element of {name} is not the one holding the value"
        return "refuted", text, _witness(verdict), verdict
    return verdict.status, f"rt{k}: {verdict.reason}", [], verdict


def audit_claim(
    module: Module, claim: Claim, cache: dict[Any, Any] | None = None, alone: bool = True
) -> AuditResult:
    """Check one claim (see the module docstring for the steps); ``alone``: no
    other claim stands for the same operand (then a read the claim misses is a
    refutation, not a matter of coverage)."""
    comp = _resolve(module, claim)
    cache = cache if cache is not None else {}
    forward = claim.direction == "input-to-output"
    if claim.direction not in ("output-to-input", "input-to-output"):
        return AuditResult(claim, "error", [("direction", f"unknown direction {claim.direction!r}")])
    key: Any = (comp.name, claim.direction, claim.operand if forward else claim.output)
    if key not in cache:
        try:
            cache[key] = (
                input_to_output_maps(comp, claim.operand, module=module)
                if forward
                else output_to_input_maps(comp, output_index=claim.output, module=module)
            )
        except UnsupportedError as exc:
            return AuditResult(claim, "unknown", [("relation", f"the analysis has no map: {exc}")])
    result = cache[key]
    if forward:
        targets = [t for t in result.targets if t.index == claim.output]
    else:
        targets = [t for t in result.targets if t.index == claim.operand and t.element is None]
    if not targets:
        what = f"output {claim.output}" if forward else f"array parameter {claim.operand}"
        return AuditResult(claim, "error", [("operand", f"{comp.name} has no {what}")])
    target = targets[0]
    ours = list(target.maps)
    res = AuditResult(claim, "unknown", ours=ours)
    if not ours:
        res.steps.append(("relation", "the analysis has no map for this operand: unknown indexing through "
                          + ", ".join(target.unsupported)))
        return res
    # 1. the relation
    verdicts = [prove_equal(claim.map, a.map, cache=None) for a in ours]
    match = next((a for a, v in zip(ours, verdicts) if v.proved), None)
    res.matched = match
    if match is None:
        return _no_match(res, claim, ours, verdicts, target.unsupported, alone)
    exactness = "" if not match.over_approximation else " (our map is an over-approximation)"
    res.steps.append(("relation", f"proved ({verdicts[ours.index(match)].engine}){exactness}"))
    # 2. range variables, pointwise (against the composition with every loop variable kept when
    # XLA's claim keeps range variables our simplified map does without)
    pointwise_with = match
    if claim.map.num_range_vars != match.map.num_range_vars and forward:
        res.status = "mismatch"
        res.steps.append(("range variables", f"the claim keeps {claim.map.num_range_vars} range variables, the "
                          f"analysis {match.map.num_range_vars}: no pointwise comparison (input to output)"))
        return res
    if claim.map.num_range_vars != match.map.num_range_vars:
        loops_key = (comp.name, claim.output, "loops")
        if loops_key not in cache:
            cache[loops_key] = output_to_input_maps(comp, output_index=claim.output, module=module, keep_loops=True)
        loop_targets = [t for t in cache[loops_key].targets if t.index == claim.operand and t.element is None]
        candidates = [
            a for a in (loop_targets[0].maps if loop_targets else [])
            if a.map.num_range_vars == claim.map.num_range_vars and a.verdict is not None and a.verdict.proved
            and prove_equal(claim.map, a.map, cache=None).proved
        ]
        if not candidates:
            res.status = "mismatch"
            res.steps.append(("range variables", f"the claim keeps {claim.map.num_range_vars} range variables, the "
                              f"analysis {match.map.num_range_vars} (and no composition with the claim's loops has "
                              "as many): no pointwise comparison"))
            return res
        pointwise_with = candidates[0]
        res.steps.append(("range variables", "compared with the composition keeping every loop variable: "
                          + pointwise_with.map.format(one_line=True)))
    if claim.map.num_range_vars:
        pv = prove_pointwise_equal(claim.map, pointwise_with.map, cache=None)
        if pv.refuted:
            res.status = "refuted"
            res.steps.append(("range variables", "the range variables differ pointwise (a loop runs other "
                              "iterations or reads other elements)"))
            res.witness, res.counterexample = _witness(pv), pv.counterexample
            return res
        if not pv.proved:
            res.steps.append(("range variables", f"{pv.status}: {pv.reason}"))
            return res
        res.steps.append(("range variables", f"proved pointwise ({pv.engine})"))
    # 3. runtime variables
    by_index = {b.index: b for b in claim.bindings}
    for k in range(claim.map.num_rt_vars):
        if k not in by_index:
            res.steps.append(("runtime variables", f"rt{k}: no binding given (not checked)"))
            continue
        status, text, witness, bv = _compare_binding(comp, by_index[k], match.map, k)
        res.steps.append(("runtime variables", text))
        if status != "proved":
            res.status = status
            res.witness = witness
            res.counterexample = bv.counterexample if bv is not None else None
            return res
    extra = sorted(set(by_index) - set(range(claim.map.num_rt_vars)))
    if extra:
        res.status = "error"
        res.steps.append(("runtime variables", f"bindings for undeclared runtime variables: rt{extra[0]}"))
        return res
    res.status = "proved"
    return res


def _read_at(b: IndexingMap, values: dict[str, int], element: tuple[int, ...]) -> bool | None:
    """Whether ``b`` reads ``element`` at the dims and runtime variables ``values``
    (some range-variable value): enumerated; None when it cannot tell."""
    try:
        dims = [values[f"d{i}"] for i in range(b.num_dims)]
        rts = [values[f"rt{k}"] for k in range(b.num_rt_vars)]
    except KeyError:
        return None
    if len(element) != b.num_results or any(
        x not in v.bounds for v, x in zip([*b.dims, *b.rt_vars], [*dims, *rts])
    ):
        return False if len(element) == b.num_results else None
    point = b.replace(
        dims=[Variable(Interval(x, x), v.name) for v, x in zip(b.dims, dims)],
        rt_vars=[Variable(Interval(x, x), v.name, v.origin) for v, x in zip(b.rt_vars, rts)],
    )
    try:
        return any(point.evaluate(d, sy, r) == tuple(element) for d, sy, r in point.domain_points(200_000))
    except MapError:
        return None


def _no_match(
    res: AuditResult, claim: Claim, ours: list[AccessMap], verdicts: list[Verdict], unknown: list[str], alone: bool
) -> AuditResult:
    """The claim equals none of our maps: a refutation only with a confirmed
    element (claimed and read by none of our maps; or, for a claim standing alone
    against one exact map of ours, read by it and not claimed)."""
    if not any(v.refuted for v in verdicts):
        reasons = "; ".join(dict.fromkeys(v.reason for v in verdicts if v.reason))
        res.status = "mismatch"
        res.steps.append(("relation", f"not comparable: {reasons}"))
        return res
    if unknown:
        res.steps.append(("relation", "differs from our maps, but some paths are unknown: " + ", ".join(unknown)))
        return res
    # A claimed read that none of our maps makes.
    for a in ours:
        sub = prove_subset(claim.map, a.map, cache=None)
        ce = sub.counterexample
        if not sub.refuted or ce is None or ce.source is None:
            continue
        values = dict(ce.values)
        if all(_read_at(b.map, values, ce.source) is False for b in ours if b is not a):
            res.status = "refuted"
            res.steps.append(("relation", "the claim reads an element none of the analysis' maps reads"))
            res.witness, res.counterexample = _witness(sub), ce
            return res
    # Only reads the claim misses.
    if alone and len(ours) == 1 and not ours[0].over_approximation:
        sub = prove_subset(ours[0].map, claim.map, cache=None)
        ce = sub.counterexample
        if sub.refuted and ce is not None:
            swapped = {"source": "target", "target": "source"}.get(ce.in_domain, ce.in_domain)
            res.counterexample = Counterexample(
                ce.kind, ce.values, ce.target, ce.source, ce.subexpressions, swapped, ce.other_values, ce.note
            )
            res.status = "refuted"
            res.steps.append(("relation", "the claim misses an element the analysis reads"))
            res.witness = _witness_of(res.counterexample)
            return res
    res.status = "unknown" if any(a.over_approximation for a in ours) else "mismatch"
    if _equals_union(claim.map, [a.map for a in ours]):
        res.steps.append(("relation", f"the claim equals the union of our {len(ours)} maps (isl), which we keep "
                          "apart: the range variables are not compared"))
        return res
    res.steps.append(("relation", f"the claim equals none of our {len(ours)} maps and claims no element they do not "
                      "read (another claim may hold the rest: see the coverage)"))
    return res


def _equals_union(m: IndexingMap, maps: list[IndexingMap]) -> bool:
    """``m``'s relation is the union of ``maps``' (isl; False when it cannot tell)."""
    try:
        from verified_indexing.engines.isl import to_isl_map

        if any((x.num_dims, x.num_rt_vars, x.num_results) != (m.num_dims, m.num_rt_vars, m.num_results)
               or x.state != "ok" for x in maps) or m.state != "ok":
            return False
        union = to_isl_map(maps[0])
        for x in maps[1:]:
            union = union.union(to_isl_map(x, ctx=union.get_ctx()))
        return bool(to_isl_map(m, ctx=union.get_ctx()).is_equal(union))
    except Exception:  # an isl limit or error: no claim either way
        return False


def audit(module: Module, claims: list[Claim]) -> list[AuditResult]:
    """Each claim checked (:func:`audit_claim`), then, per operand with claims,
    **coverage**: every map of ours must be among the claimed maps (XLA prints the
    whole set of maps for an operand). A map of ours no claim equals is a read the
    claims miss: refuted with a witness when one claim stands for the operand
    (an element we read and the claim does not), a mismatch with several; not
    a refutation when our map is an over-approximation (unknown)."""
    cache: dict[Any, Any] = {}
    sizes: dict[tuple[Any, ...], int] = {}
    for cl in claims:
        k = (cl.fusion, cl.computation, cl.direction, cl.operand, cl.output)
        sizes[k] = sizes.get(k, 0) + 1
    results = [
        audit_claim(module, c, cache, sizes[(c.fusion, c.computation, c.direction, c.operand, c.output)] == 1)
        for c in claims
    ]
    groups: dict[tuple[Any, ...], list[AuditResult]] = {}
    for r in results:
        cl = r.claim
        groups.setdefault((cl.fusion, cl.computation, cl.direction, cl.operand, cl.output), []).append(r)
    for group in groups.values():
        ours = group[0].ours
        if not ours or any(r.matched is None for r in group):
            continue  # a claim that matched none of our maps is reported already
        matched = [r.matched for r in group]
        for a in ours:
            if any(m is a for m in matched):
                continue
            first = group[0].claim
            out = AuditResult(first, "mismatch", ours=[a])
            text = f"the analysis' map {a.map.format(one_line=True)} is not among the claimed maps"
            if a.over_approximation:
                out.status = "unknown"
                out.steps.append(("coverage", text + " (it is an over-approximation: "
                                  + "; ".join(a.over_approximation) + ")"))
            elif len(group) == 1:
                sub = prove_subset(a.map, first.map, cache=None)
                if sub.refuted:
                    out.status = "refuted"
                    out.steps.append(("coverage", text + ": it reads elements the claim does not"))
                    ce = sub.counterexample
                    if ce is not None:
                        # Swap the sides: the subset question had the analysis as its source.
                        swapped = {"source": "target", "target": "source"}.get(ce.in_domain, ce.in_domain)
                        out.counterexample = Counterexample(
                            ce.kind, ce.values, ce.target, ce.source, ce.subexpressions, swapped, ce.other_values,
                            ce.note,
                        )
                        out.witness = _witness_of(out.counterexample)
                else:
                    out.steps.append(("coverage", text))
            else:
                out.steps.append(("coverage", text))
            results.append(out)
    return results


def format_audit(results: list[AuditResult]) -> str:
    blocks = []
    for n, r in enumerate(results, 1):
        lines = [f"claim {n} (line {r.claim.line}; {r.claim.label()}): {r.status.upper()}"]
        lines.append(f"  claimed: {r.claim.map.format(one_line=True)}")
        for m in r.ours:
            lines.append(f"  ours:    {m.map.format(one_line=True)}")
        for step, text in r.steps:
            lines.append(f"  {step}: {text}")
        for w in r.witness:
            lines.append(f"    {w}")
        blocks.append("\n".join(lines))
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    summary = "summary: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
    return "\n\n".join(blocks) + "\n\n" + summary
