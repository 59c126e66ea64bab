"""Auditing XLA's claims: the indexing maps XLA printed, checked against our
(proven) analysis of the same module.

A claim is what XLA prints for one operand (``operand id = K``; the map on the
same or the next lines; ``KNOWN EMPTY``; ``unknown indexing``): an indexing map
and its ``runtime variables:`` section binding each ``rtN`` to an instruction
and a map giving the element of that instruction that holds the value. The
operands are a fusion's parameters, or (``instruction NAME``, or a module
without fusions: its root) one instruction's operands, whatever they are (a
reduce-window's init value); grouped-by-producer printouts (``producer NAME``,
``hlo: NAME``, the instruction's text, or ``NAME:``) give the maps from the
root's output to an instruction of the fusion; ``physical`` claims are
between physical-layout indices.

Runtime variables are compared by what they stand for: one bound (on either
side) to a value known before the program runs -- an integer constant, an
iota, a clamp of those, through bitcasts, broadcasts, reshapes, slices,
transposes and widening converts -- is replaced by that value clamped to the
variable's bounds (the clamp XLA's emitters apply to a dynamic offset). The
claims for one operand are then decided together, their reads (range variables
existential, runtime variables as inputs) against ours, by isl:

* ``proved``: the same reads; then each claim's range variables pointwise
  (XLA keeps them as loop variables: a loop running other iterations is
  refuted) and the bindings of the runtime variables left (a wrong binding is
  refuted).
* ``over-approximates``: every read claimed (a sound superset), and an element
  claimed that the output never reads (the witness).
* ``refuted``: a read the claims miss (the output element, the element missed,
  the runtime values), a wrong binding, or a loop difference.
* ``unknown``: with the reason (our map over-approximates or some path is
  unknown, so a difference may not be real; not comparable).

Every witness is re-checked by the plain evaluator before it is reported. A
wrong claim is never ``over-approximates``; a superset is never ``refuted``.

The claims file (text) is a sequence of blocks::

    fusion NAME               (or: computation NAME; optional for a module with one fusion)
    instruction NAME          (optional: the operands of this instruction)
    physical                  (optional: physical-layout indices; 'logical' switches back)
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
    producer NAME             (then the maps from the root to NAME, no operand line)
    (d0) -> (d0), domain: d0 in [0, 9]

Lines starting with ``//`` or ``#`` are comments. JSON: ``{"claims": [{"fusion":
..., "output": 0, "operand": K, "map": "...", "runtime_variables": [{"rt": 0,
"instruction": "p1", "map": "..."}]}]}`` (or the list alone; also ``instruction``,
``producer``, ``physical``; ``"map": "unknown indexing"``).
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from verified_indexing.engines import prove_equal, prove_pointwise_equal
from verified_indexing.engines.verdict import Counterexample, Verdict
from verified_indexing.errors import MapError, ParseError, UnsupportedError, VerifiedIndexingError
from verified_indexing.expr import AffineExpr, Const, Dim, RtSym, Sym, emax, emin
from verified_indexing.hlo.fusion import (
    AccessMap,
    ComputationIndexing,
    TargetIndexing,
    _trace_step,
    input_to_output_maps,
    output_to_input_maps,
    trace_origins,
)
from verified_indexing.hlo.ir import Computation, Instruction, Module
from verified_indexing.indexing_map import IndexingMap, Variable
from verified_indexing.interval import Interval
from verified_indexing.syntax import format_expr, parse_indexing_map

__all__ = [
    "Claim", "RuntimeBinding", "AuditResult", "parse_claims", "audit", "audit_claim", "format_audit",
    "split_runtime_variables", "evaluate_binding", "STATUSES", "exit_code",
]

#: The verdicts of a claim (and ``error``: the claim names nothing in the module).
STATUSES = ("proved", "over-approximates", "refuted", "unknown", "error")


def exit_code(statuses: set[str]) -> int:
    """The command's exit status: 3 an error, 1 a refutation, 2 an unknown, 5 an
    over-approximation (and nothing worse), 0 every claim proved."""
    if "error" in statuses:
        return 3
    if "refuted" in statuses:
        return 1
    if statuses - {"proved", "over-approximates"}:  # unknown, or a status not named here
        return 2
    if "over-approximates" in statuses:
        return 5
    return 0


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
    #: ``map`` (the map, KNOWN EMPTY included) or ``unknown`` (XLA's ``unknown indexing``).
    kind: str = "map"
    #: A per-instruction claim: ``operand`` numbers this instruction's operands
    #: (XLA's indexing of one instruction; its operands need not be parameters).
    instruction: str | None = None
    #: A grouped-by-producer claim: the map from the root's output to this instruction's output.
    producer: str | None = None
    #: Physical-layout indices (each shape's dimensions in its layout's major-to-minor order).
    physical: bool = False

    def label(self) -> str:
        where = f"fusion {self.fusion}" if self.fusion else ""
        if self.computation:
            where = f"computation {self.computation}"
        if self.instruction:
            where = f"{where + ', ' if where else ''}instruction {self.instruction}"
        what = f"producer {self.producer}" if self.producer is not None else f"operand {self.operand}"
        parts = [p for p in (where, f"output {self.output}" if self.output else "", what) if p]
        if self.direction != "output-to-input":
            parts.append(self.direction)
        if self.physical:
            parts.append("physical layout")
        return ", ".join(parts)


@dataclass
class AuditResult:
    claim: Claim
    status: str  # proved | over-approximates | refuted | unknown | error
    steps: list[tuple[str, str]] = field(default_factory=list)  # (step, what happened)
    witness: list[str] = field(default_factory=list)
    ours: list[AccessMap] = field(default_factory=list)
    #: Our map the claim was proved equal to (as a relation), if any.
    matched: AccessMap | None = None
    #: The refutation's counterexample (claim = source, analysis = target), confirmed by the evaluator.
    counterexample: Counterexample | None = None

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

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
            "kind": self.claim.kind,
        }


# -- reading claims -----------------------------------------------------------------------------

_HEADER_RE = re.compile(r"^\s*(fusion|computation)\s+%?([\w.\-]+)\s*:?\s*$")
_OUTPUT_RE = re.compile(r"^\s*output\s+(?:id\s*=\s*)?(\d+)\s*:?\s*$")
_DIRECTION_RE = re.compile(r"^\s*(?:direction\s*[:=]?\s*)?(output-to-input|input-to-output)\s*:?\s*$")
_OPERAND_RE = re.compile(r"^\s*(?:operand id\s*=\s*|operand\s+)(\d+)\s*:?\s*(.*?)\s*$")
_INSTRUCTION_RE = re.compile(r"^\s*instruction\s+%?([\w.\-]+)\s*:?\s*$")
# Grouped by producer: "producer NAME", "hlo: %NAME = ...", an instruction's text alone, or "NAME:".
_PRODUCER_RE = re.compile(
    r"^\s*(?:producer\s+%?([\w.\-]+)\s*:?|hlo\s*:\s*(?:ROOT\s+)?%?([\w.\-]+)(?:\s*=.*)?"
    r"|(?:ROOT\s+)?%?([\w.\-]+)\s*=\s*\S+\[[^\]]*\]\S*\s+[\w\-]+\(.*"
    r"|%?((?!domain\b|rt\d|runtime\b|operand\b)[A-Za-z_][\w.\-]*)\s*:)\s*$"
)
_PHYSICAL_RE = re.compile(r"^\s*(physical|logical)(?:\s+layout)?\s*:?\s*$|^\s*use_physical_layout\s*[=:]\s*"
                          r"(true|false)\s*$", re.IGNORECASE)
_NOT_A_MAP_RE = re.compile(r"^\s*(unknown indexing|undefined indexing( map)?|UNDEFINED)\s*,?\s*$", re.IGNORECASE)
_KNOWN_EMPTY_RE = re.compile(r"^\s*KNOWN EMPTY\s*,?\s*$")
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
    # XLA's HloInstructionIndexing::ToString prints no separator after "unknown indexing":
    # "operand id = 0 unknown indexingoperand id = 1 ..." (a line break put back)
    text = re.sub(r"(unknown indexing)[ \t]*(?=operand id\s*=)", "\\1\n", text)
    lines = text.splitlines()
    offsets = [0]
    for ln in lines:
        offsets.append(offsets[-1] + len(ln) + 1)
    claims: list[Claim] = []
    fusion: str | None = None
    computation: str | None = None
    output = 0
    direction = "output-to-input"
    instruction: str | None = None
    producer: str | None = None
    physical = False
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
                or _RT_SECTION_RE.match(ln) or not ln.strip() or _INSTRUCTION_RE.match(ln)
                or _PHYSICAL_RE.match(ln) or _KNOWN_EMPTY_RE.match(ln) or _NOT_A_MAP_RE.match(ln)
                or (_PRODUCER_RE.match(ln) and not _RT_RE.match(ln))
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

    def binding_map(body: str, at: int, owner: IndexingMap) -> IndexingMap:
        """A binding's map; printed without a domain (``(d0, d1) -> ()``), its
        variables have the bounds of the claim's."""
        if "domain" in body or owner.state != "ok":
            return parse_map(body, at)
        head = body.rstrip().rstrip(",")
        bounds = [f"d{i} in [{v.bounds.lo}, {v.bounds.hi}]" for i, v in enumerate(owner.dims)]
        bounds += [f"s{i} in [{v.bounds.lo}, {v.bounds.hi}]" for i, v in enumerate(owner.range_vars)]
        try:
            return parse_indexing_map(head + (", domain: " + ", ".join(bounds) if bounds else ""), source)
        except ParseError:
            return parse_map(body, at)

    while i < len(lines):
        ln = lines[i]
        if not ln.strip() or ln.lstrip().startswith(("//", "#")):
            i += 1
            continue
        if m := _HEADER_RE.match(ln):
            fusion, computation = (m.group(2), None) if m.group(1) == "fusion" else (None, m.group(2))
            output, instruction, producer, physical = 0, None, None, False
            i += 1
            continue
        if m := _INSTRUCTION_RE.match(ln):
            instruction, producer, output = m.group(1), None, 0
            i += 1
            continue
        if m := _PHYSICAL_RE.match(ln):
            physical = (m.group(1) or "").lower() == "physical" or (m.group(2) or "").lower() == "true"
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
        inline_at = -1
        if (m := _OPERAND_RE.match(ln)) and not _PRODUCER_RE.match(ln):
            operand = int(m.group(1))
            producer = None
            if m.group(2):  # "operand id = 0 (d0) -> ..." : the map on the same line
                inline_at = m.start(2)
            else:
                i += 1
                while i < len(lines) and not lines[i].strip():
                    i += 1
        elif m := _PRODUCER_RE.match(ln):
            producer = next(g for g in m.groups() if g)
            operand = -1
            i += 1
            continue
        elif producer is not None:
            operand = -1  # the maps of a producer
        elif claims and (ln.lstrip().startswith("(") or _KNOWN_EMPTY_RE.match(ln) or _NOT_A_MAP_RE.match(ln)) \
                and claims[-1].fusion == fusion and claims[-1].computation == computation:
            operand = claims[-1].operand  # another map of the same operand's set
        else:
            raise ParseError("expected 'operand id = K' (or a producer: 'producer NAME') before a claimed map", text,
                             offsets[i], len(ln), source)
        if i >= len(lines):
            raise ParseError("a claim without its map", text, offsets[operand_line], 1, source)
        body, at, i = block(i)
        if inline_at >= 0:
            body, at = body[inline_at:], at + inline_at
        kind = "unknown" if _NOT_A_MAP_RE.match(body.strip().splitlines()[0] if body.strip() else "") else "map"
        claimed = IndexingMap.undefined() if kind == "unknown" else parse_map(body, at)
        claim = Claim(operand, claimed, [], fusion, computation, output, operand_line + 1, direction, kind,
                      instruction, producer, physical)
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
                                                         binding_map(body, line_at + inline.start(), claim.map)))
                    continue
                body, at, i = block(i)
                claim.bindings.append(RuntimeBinding(k, _instruction_name(inst_text), binding_map(body, at, claim.map)))
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
        if not isinstance(item, dict) or "map" not in item or ("operand" not in item and "producer" not in item):
            raise VerifiedIndexingError(f"{source}: claim {n}: expected an object with 'operand' (or 'producer') "
                                        "and 'map'")
        bindings = [
            RuntimeBinding(int(b.get("rt", k)), _instruction_name(str(b["instruction"])),
                           parse_indexing_map(str(b["map"]), f"{source}: claim {n} rt{k}"))
            for k, b in enumerate(item.get("runtime_variables", []))
        ]
        text_map = str(item["map"])
        kind = "unknown" if _NOT_A_MAP_RE.match(text_map) else "map"
        claims.append(
            Claim(int(item["operand"]) if item.get("operand") is not None else -1,
                  IndexingMap.undefined() if kind == "unknown" else parse_indexing_map(text_map,
                                                                                        f"{source}: claim {n}"),
                  bindings, item.get("fusion"), item.get("computation"), int(item.get("output", 0)), n + 1,
                  str(item.get("direction", "output-to-input")), kind, item.get("instruction"), item.get("producer"),
                  bool(item.get("physical", False)))
        )
    return claims


# -- checking -------------------------------------------------------------------------------------


def _resolve(module: Module, claim: Claim) -> Computation:
    if claim.computation is not None:
        if claim.computation not in module.computations:
            raise VerifiedIndexingError(f"claim at line {claim.line}: no computation {claim.computation!r} in module "
                                        f"{module.name!r} (it has: {', '.join(module.computations)})")
        return module.computations[claim.computation]
    fusions = module.fusions()
    if claim.fusion is not None:
        for inst, comp in fusions:
            if inst.name == claim.fusion or comp.name == claim.fusion:
                return comp
        raise VerifiedIndexingError(f"claim at line {claim.line}: no fusion {claim.fusion!r} in module {module.name!r} "
                                    f"(fusions: {', '.join(i.name for i, _ in fusions) or 'none'})")
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


# -- what the analysis says for a claim's target -------------------------------------------------


@dataclass
class _Target:
    """Our side of a claim: the computation whose instruction names the bindings
    use, our maps (exact or marked over-approximations), the ops hiding other
    paths, and the shapes of the source and of the target (for ``unknown
    indexing`` claims)."""

    comp: Computation
    maps: list[AccessMap]
    unsupported: list[str]
    source_dims: tuple[int, ...] | None
    target_dims: tuple[int, ...] | None
    #: A fusion computation the range-variable step may re-analyse keeping every loop variable.
    loops: Computation | None = None


def _resolve_instruction(module: Module, claim: Claim) -> tuple[Computation, Instruction] | None:
    """The instruction a per-instruction claim is about (None: the claim is about a
    computation's parameters)."""
    if claim.instruction is not None:
        comps = [module.computations[claim.computation]] if claim.computation in module.computations else (
            [module.entry, *module.computations.values()] if claim.computation is None else []
        )
        for comp in comps:
            if claim.instruction in comp.by_name:
                return comp, comp.by_name[claim.instruction]
        raise VerifiedIndexingError(f"claim at line {claim.line}: no instruction {claim.instruction!r} in module "
                                    f"{module.name!r}")
    if claim.fusion is None and claim.computation is None and claim.producer is None and not module.fusions():
        root = module.entry.root
        if root.opcode not in ("fusion", "tuple", "parameter"):
            return module.entry, root
    return None


def _with_producer_as_parameter(comp: Computation, name: str) -> tuple[Computation, int]:
    """``comp`` with instruction ``name`` turned into a fresh parameter: the maps
    to that parameter are the maps from the root to ``name`` (XLA's grouped
    indexing by producer)."""
    inst = comp.by_name[name]
    if inst.opcode == "parameter":
        return comp, inst.parameter_number or 0
    number = 1 + max((p.parameter_number or 0 for p in comp.parameters()), default=-1)
    param = Instruction(name, "parameter", inst.shape, parameter_number=number, is_root=inst.is_root,
                        offset=inst.offset, source_text=inst.source_text, source_name=inst.source_name)
    return Computation(f"{comp.name}/{name}", [param if i.name == name else i for i in comp.instructions]), number


def _exact_dus(inst: Instruction, comp: Computation, k: int) -> list[AccessMap] | None:
    """The exact reads of a dynamic-update-slice's src or update, or of a pad's
    padding value (where the analysis' maps, the spec's, over-approximate), as
    exact maps; None otherwise."""
    from verified_indexing.hlo.ops import dus_exact_o2i, pad_value_exact_o2i

    try:
        if inst.opcode == "dynamic-update-slice" and k in (0, 1):
            maps = dus_exact_o2i(inst, comp, k)
        elif inst.opcode == "pad" and k == 1:
            maps = pad_value_exact_o2i(inst, comp)
        else:
            return None
    except VerifiedIndexingError:
        return None
    return [AccessMap(trace_origins(m, comp), 1, None, [], ()) for m in maps]


def _instruction_forward(module: Module, claim: Claim, comp: Computation, inst: Instruction,
                         cache: dict[Any, Any]) -> _Target:
    """Input-to-output claims of one instruction: from operand ``claim.operand``
    to output ``claim.output``."""
    from verified_indexing.hlo.ops import input_to_output

    if claim.physical:
        raise UnsupportedError("physical-layout input-to-output claims of one instruction are not audited")
    key = ("instruction-i2o", comp.name, inst.name, claim.operand)
    if key not in cache:
        cache[key] = input_to_output(inst, comp, claim.operand)
    maps = cache[key]
    if claim.output >= len(maps):
        raise VerifiedIndexingError(f"claim at line {claim.line}: {inst.name} has no output {claim.output}")
    out_shape = inst.shape.tuple_shapes[claim.output] if inst.shape.is_tuple else inst.shape
    src_shape = comp.by_name[inst.operands[claim.operand]].shape
    approx = _approx_of(inst, comp, claim.operand, module)
    access = AccessMap(trace_origins(maps[claim.output], comp), 1, None, [], approx)
    return _Target(comp, [access], [], None if src_shape.is_tuple else tuple(src_shape.dims),
                   None if out_shape.is_tuple else tuple(out_shape.dims))


def _approx_of(inst: Instruction, comp: Computation, k: int, module: Module) -> tuple[str, ...]:
    from verified_indexing.hlo.fusion import _approx

    return _approx(inst, comp, k, module)


def _target(module: Module, claim: Claim, cache: dict[Any, Any]) -> _Target:
    """Our maps for ``claim`` (raises :class:`UnsupportedError` when the analysis
    has none, :class:`VerifiedIndexingError` when the claim names nothing)."""
    from verified_indexing.hlo.fusion import _approx, _single_instruction, to_physical
    from verified_indexing.hlo.ops import output_to_input

    forward = claim.direction == "input-to-output"
    picked = _resolve_instruction(module, claim)
    if picked is not None:
        comp, inst = picked
        if claim.operand >= len(inst.operands):
            raise VerifiedIndexingError(f"claim at line {claim.line}: {inst.name} has {len(inst.operands)} operands, "
                                        f"no operand {claim.operand}")
        if forward:
            return _instruction_forward(module, claim, comp, inst, cache)
        key: Any = ("instruction", comp.name, inst.name, claim.output, claim.physical)
        if key not in cache:
            per_op = output_to_input(inst, comp, claim.output)
            targets = []
            for k, (name, m) in enumerate(zip(inst.operands, per_op)):
                shape = comp.by_name[name].shape
                t = TargetIndexing(k, name, shape)
                t.maps.append(AccessMap(trace_origins(m, comp), 1, None, [], _approx(inst, comp, k, module)))
                targets.append(t)
            result = ComputationIndexing(comp.name, "output-to-input", claim.output, targets, [], False)
            if claim.physical:
                result = to_physical(result, _single_instruction(comp, inst))
            cache[key] = result
        t = cache[key].targets[claim.operand]
        exact = None if claim.physical else _exact_dus(inst, comp, claim.operand)
        if exact is not None:
            t = TargetIndexing(t.index, t.name, t.shape, exact)
        out_shape = inst.shape.tuple_shapes[claim.output] if inst.shape.is_tuple else inst.shape
        src = tuple(out_shape.dims) if not out_shape.is_tuple else None
        if claim.physical and src is not None:
            src = tuple(out_shape.dims[d] for d in reversed(out_shape.minor_to_major()))
        tgt = None if t.shape.is_tuple else tuple(t.shape.dims)
        if claim.physical and tgt is not None:
            tgt = tuple(t.shape.dims[d] for d in reversed(t.shape.minor_to_major()))
        return _Target(comp, list(t.maps), list(t.unsupported), src, tgt)
    comp = _resolve(module, claim)
    analysed, number = comp, claim.operand
    if claim.producer is not None:
        if claim.producer not in comp.by_name:
            raise VerifiedIndexingError(f"claim at line {claim.line}: no instruction {claim.producer!r} in {comp.name}")
        analysed, number = _with_producer_as_parameter(comp, claim.producer)
    key = (analysed.name, claim.direction, number if forward else claim.output, claim.physical)
    if key not in cache:
        result = (
            input_to_output_maps(analysed, number, module=module)
            if forward
            else output_to_input_maps(analysed, output_index=claim.output, module=module)
        )
        cache[key] = to_physical(result, analysed) if claim.physical else result
    result = cache[key]
    if forward:
        targets = [t for t in result.targets if t.index == claim.output]
    else:
        targets = [t for t in result.targets if t.index == number and t.element is None]
    if not targets:
        what = f"output {claim.output}" if forward else f"array parameter {claim.operand}"
        raise VerifiedIndexingError(f"claim at line {claim.line}: {comp.name} has no {what}")
    t = targets[0]
    root = analysed.root
    if not forward and not claim.physical and claim.output == 0 and any(a.over_approximation for a in t.maps) \
            and not root.shape.is_tuple:
        # the parameter only an operand of a dynamic-update-slice or pad the root reads element for element
        from verified_indexing.hlo.kernels import _exact_through_identity

        exact = _exact_through_identity(analysed, number, module)
        if exact is not None:
            t = TargetIndexing(t.index, t.name, t.shape, exact)
    out_shape = root.shape.tuple_shapes[claim.output] if root.shape.is_tuple and not forward else root.shape
    param = next((p for p in analysed.parameters() if p.parameter_number == number), None)
    src_shape = (param.shape if param is not None else None) if forward else out_shape
    src = None if src_shape is None or src_shape.is_tuple else tuple(src_shape.dims)
    tgt = None if t.shape.is_tuple else tuple(t.shape.dims)
    if claim.physical:
        src = None if src is None or src_shape is None else tuple(
            src_shape.dims[d] for d in reversed(src_shape.minor_to_major()))
        tgt = None if tgt is None else tuple(t.shape.dims[d] for d in reversed(t.shape.minor_to_major()))
    loops = analysed if (not forward and not claim.physical) else None
    return _Target(comp, list(t.maps), list(t.unsupported), src, tgt, loops)


# -- runtime variables folded: a constant, an iota, a clamp ---------------------------------------

#: A value as pieces: (constraints on the owner's variables, the value there).
_Pieces = list[tuple[list[tuple[AffineExpr, Interval]], AffineExpr]]

_MAX_CONSTANT_PIECES = 256
_WIDE_INTS = {"s8": 8, "s16": 16, "s32": 32, "s64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}


def _literal_values(inst: Instruction) -> list[int] | None:
    """The integers of an integer constant, row-major (None when not one)."""
    if inst.shape.is_tuple or inst.shape.element_type not in _WIDE_INTS or inst.literal is None:
        return None
    text = inst.literal.strip()
    if not re.fullmatch(r"[\s{},\-\d]*", text):
        return None
    values = [int(x) for x in re.findall(r"-?\d+", text)]
    return values if len(values) == inst.shape.num_elements() else None


def evaluate_binding(comp: Computation, name: str, index: list[AffineExpr], depth: int = 0) -> _Pieces | None:
    """The value of element ``index`` (expressions of the owner map's dims and
    range variables) of instruction ``name`` of ``comp``, when it is known
    before the program runs: an integer constant (a table: one piece per
    element), an iota (its index along the iota dimension), a ``clamp`` of such
    values (``min(max(x, lo), hi)``, HLO's clamp), through instructions that move
    values unchanged (bitcast, broadcast, reshape, slice, transpose, ...) and
    integer converts that keep every value. None otherwise."""
    inst = comp.by_name.get(name)
    if inst is None or depth > len(comp.instructions) or any(
        isinstance(v, RtSym) for e in index for v in _variables(e)
    ):
        return None
    step = _trace_step(comp, name)
    if step is not None:
        operand, m = step
        return evaluate_binding(comp, operand, [r.substitute(dims=index) for r in m.results], depth + 1)
    if inst.opcode == "constant":
        values = _literal_values(inst)
        if values is None or len(index) != inst.shape.rank:
            return None
        if len(set(values)) == 1:
            return [([], Const(values[0]))]
        if all(isinstance(e, Const) for e in index):
            flat = 0
            for e, size in zip(index, inst.shape.dims):
                if not 0 <= e.evaluate() < size:
                    return None
                flat = flat * size + e.evaluate()
            return [([], Const(values[flat]))]
        if len(values) > _MAX_CONSTANT_PIECES:
            return None
        pieces: _Pieces = []
        for flat, value in enumerate(values):
            at, rest = [], flat
            for size in reversed(inst.shape.dims):
                at.append(rest % size)
                rest //= size
            at.reverse()
            pieces.append(([(e, Interval(x, x)) for e, x in zip(index, at)], Const(value)))
        return pieces
    if inst.opcode == "iota":
        if inst.shape.element_type not in _WIDE_INTS or inst.iota_dimension is None or len(index) != inst.shape.rank:
            return None
        size = inst.shape.dims[inst.iota_dimension]
        bits = _WIDE_INTS[inst.shape.element_type] - (0 if inst.shape.element_type.startswith("u") else 1)
        if size - 1 >= 2**bits:
            return None
        return [([], index[inst.iota_dimension])]
    if inst.opcode == "convert" and len(inst.operands) == 1:
        src = comp.by_name.get(inst.operands[0])
        to, frm = inst.shape.element_type, src.shape.element_type if src is not None else ""
        if to in _WIDE_INTS and frm in _WIDE_INTS and _WIDE_INTS[to] > _WIDE_INTS[frm] and to.startswith("s"):
            return evaluate_binding(comp, inst.operands[0], index, depth + 1)
        return None
    if inst.opcode == "clamp" and len(inst.operands) == 3:
        parts = []
        for operand in inst.operands:
            op = comp.by_name.get(operand)
            if op is None or op.shape.is_tuple:
                return None
            parts.append(evaluate_binding(comp, operand, [] if not op.shape.dims else index, depth + 1))
        if any(p is None for p in parts) or math.prod(len(p or []) for p in parts) > _MAX_CONSTANT_PIECES:
            return None
        lo, x, hi = parts
        return [
            ([*cl, *cx, *ch], emin(emax(ex, el), eh))
            for (cl, el), (cx, ex), (ch, eh) in itertools.product(lo or [], x or [], hi or [])
        ]
    return None


def _variables(e: AffineExpr) -> list[AffineExpr]:
    out: list[AffineExpr] = []

    def go(x: AffineExpr) -> AffineExpr:
        if isinstance(x, (Dim, Sym, RtSym)):
            out.append(x)
            return x
        return x.map_children(go)

    go(e)
    return out


def _fold(m: IndexingMap, values: dict[int, _Pieces]) -> list[IndexingMap]:
    """``m`` with each runtime variable ``k`` of ``values`` replaced by its value
    clamped to the variable's bounds (XLA's emitters clamp a runtime offset
    into them): one map per combination of pieces. The other runtime variables
    stay, renumbered, their origins re-expressed."""
    if not values or m.state != "ok":
        return [m]
    keep = [k for k in range(m.num_rt_vars) if k not in values]
    out = []
    for combo in itertools.product(*(values[k] for k in sorted(values))):
        chosen = dict(zip(sorted(values), combo))
        subst: list[AffineExpr] = []
        extra: list[tuple[AffineExpr, Interval]] = []
        for k in range(m.num_rt_vars):
            if k in chosen:
                cons, expr = chosen[k]
                b = m.rt_vars[k].bounds
                subst.append(emin(emax(expr, Const(b.lo)), Const(b.hi)))
                extra.extend(cons)
            else:
                subst.append(RtSym(keep.index(k)))
        plain = [Variable(m.rt_vars[k].bounds) for k in keep]
        rts = []
        for k in keep:
            v = m.rt_vars[k]
            om = getattr(v.origin, "map", None)
            origin = v.origin
            if isinstance(om, IndexingMap) and om.state == "ok" and om.num_rt_vars == m.num_rt_vars \
                    and dataclasses.is_dataclass(origin) and not isinstance(origin, type):
                new_om = IndexingMap(om.dims, [r.substitute(rts=subst) for r in om.results], om.range_vars, plain)
                origin = dataclasses.replace(origin, map=new_om)
            rts.append(Variable(v.bounds, None, origin))
        cons_all = [(e.substitute(rts=subst), iv) for e, iv in m.constraints] + extra
        out.append(IndexingMap(m.dims, [r.substitute(rts=subst) for r in m.results], m.range_vars, rts, cons_all))
    return [x for x in out if not x.is_known_empty] or [IndexingMap.known_empty()]


_Known = tuple[str, "_Pieces", Interval]


def _through_clamps(
    comp: Computation, name: str, index: list[AffineExpr], bounds: Interval
) -> tuple[str, list[AffineExpr], Interval, list[str]]:
    """A runtime variable bound to ``clamp(lo, x, hi)`` (``lo``, ``hi`` known scalars,
    ``lo <= hi``) stands for ``x`` clamped to its bounds intersected with ``[lo, hi]``
    (``clamp(clamp(x, lo, hi), a, b) = clamp(x, max(lo, a), min(hi, b))`` when they
    overlap): the binding moved to ``x``, through value-preserving instructions."""
    via: list[str] = []
    for _ in range(len(comp.instructions)):
        step = _trace_step(comp, name)
        if step is not None:
            via.append(name)
            name, m = step
            index = [r.substitute(dims=index) for r in m.results]
            continue
        inst = comp.by_name.get(name)
        if inst is None or inst.opcode != "clamp" or len(inst.operands) != 3:
            break
        lo_i, x_i, hi_i = (comp.by_name.get(n) for n in inst.operands)
        if lo_i is None or x_i is None or hi_i is None or lo_i.shape.dims or hi_i.shape.dims \
                or x_i.shape.dims != inst.shape.dims or x_i.shape.element_type != inst.shape.element_type:
            break
        lo, hi = evaluate_binding(comp, lo_i.name, []), evaluate_binding(comp, hi_i.name, [])
        if not lo or not hi or len(lo) != 1 or len(hi) != 1 or not isinstance(lo[0][1], Const) \
                or not isinstance(hi[0][1], Const) or lo[0][0] or hi[0][0]:
            break
        a, b = lo[0][1].value, hi[0][1].value
        new = Interval(max(a, bounds.lo), min(b, bounds.hi))
        if a > b or new.is_empty():
            break
        via.append(name)
        name, bounds = x_i.name, new
    return name, index, bounds, via


def _rebind_clamps(comp: Computation, m: IndexingMap) -> tuple[IndexingMap, list[str]]:
    """``m`` with each runtime variable bound to a clamp of known bounds rebound
    to the clamped value, its bounds narrowed (see :func:`_through_clamps`)."""
    if m.state != "ok" or not m.num_rt_vars:
        return m, []
    rts, notes = list(m.rt_vars), []
    for k, v in enumerate(rts):
        name = getattr(v.origin, "operand_name", None)
        om = getattr(v.origin, "map", None)
        if not isinstance(name, str) or not isinstance(om, IndexingMap) or om.state != "ok" \
                or not dataclasses.is_dataclass(v.origin) or isinstance(v.origin, type):
            continue
        new_name, index, bounds, via = _through_clamps(comp, name, list(om.results), v.bounds)
        if new_name == name or not any(comp.by_name[x].opcode == "clamp" for x in via if x in comp.by_name):
            continue
        origin = dataclasses.replace(v.origin, operand_name=new_name, map=om.replace(results=index),
                                     via=(*getattr(v.origin, "via", ()), *via))
        rts[k] = Variable(bounds, v.name, origin)
        notes.append(f"rt{k} = {name}, a clamp: stands for {new_name} clamped to [{bounds.lo}, {bounds.hi}]")
    return (m.replace(rt_vars=rts), notes) if notes else (m, [])


def _fold_ours(target: _Target, a: AccessMap, known: list[_Known] | None = None) -> tuple[list[IndexingMap], list[str]]:
    """Our map with every runtime variable whose value is known folded in, and
    the folds in words (each fold also appended to ``known``: its name, value
    and bounds, for the witnesses); runtime variables bound to a clamp are
    rebound to the clamped value first."""
    m, notes = _rebind_clamps(target.comp, a.map)
    values: dict[int, _Pieces] = {}
    for k, v in enumerate(m.rt_vars):
        name = getattr(v.origin, "operand_name", None)
        om = getattr(v.origin, "map", None)
        if not isinstance(name, str) or not isinstance(om, IndexingMap) or om.state != "ok":
            continue
        pieces = evaluate_binding(target.comp, name, list(om.results))
        if pieces is not None:
            values[k] = pieces
            where = ", ".join(format_expr(r, m.var_name) for r in om.results)
            if known is not None:
                known.append((f"rt{k} = {name}[{where}]", pieces, v.bounds))
            notes.append(f"rt{k} = {name}[{where}] is known: "
                         + (format_expr(pieces[0][1], m.var_name) if len(pieces) == 1 else f"{len(pieces)} pieces")
                         + f", clamped to [{v.bounds.lo}, {v.bounds.hi}]")
    return _fold(m, values), notes


def _fold_claim(target: _Target, claim: Claim) -> tuple[list[IndexingMap], list[RuntimeBinding], list[str]]:
    """The claim's map with every runtime variable bound to a known value folded
    in (clamped to the claimed bounds), the other bindings renumbered."""
    m = claim.map
    values: dict[int, _Pieces] = {}
    notes = []
    bindings = []
    if m.state == "ok":  # a binding to a clamp of known bounds: rebound to the clamped value
        rts = list(m.rt_vars)
        for b in claim.bindings:
            if b.index < m.num_rt_vars and b.map.state == "ok" and not b.map.num_rt_vars:
                name, index, bounds, via = _through_clamps(target.comp, b.instruction, list(b.map.results),
                                                           rts[b.index].bounds)
                if name != b.instruction and any(target.comp.by_name[x].opcode == "clamp" for x in via):
                    rts[b.index] = rts[b.index].with_bounds(bounds)
                    b = RuntimeBinding(b.index, name, b.map.replace(results=index))
                    notes.append(f"claimed rt{b.index}: a clamp, stands for {name} clamped to "
                                 f"[{bounds.lo}, {bounds.hi}]")
            bindings.append(b)
        m = m.replace(rt_vars=rts)
    else:
        bindings = list(claim.bindings)
    for b in bindings:
        if b.index >= m.num_rt_vars or b.map.state != "ok" or b.map.num_dims != m.num_dims \
                or b.map.num_range_vars not in (0, m.num_range_vars) or b.map.num_rt_vars:
            continue
        pieces = evaluate_binding(target.comp, b.instruction, list(b.map.results))
        if pieces is not None:
            values[b.index] = pieces
            notes.append(f"claimed rt{b.index} = {b.instruction}[...] is known: folded in")
    keep = [k for k in range(m.num_rt_vars) if k not in values]
    rest = [RuntimeBinding(keep.index(b.index), b.instruction, b.map) for b in bindings if b.index in keep]
    return _fold(m, values), rest, notes


# -- deciding a claim (or a set of claims for one operand) ----------------------------------------


def _isl_union(maps: list[IndexingMap], ctx: Any) -> Any:
    from verified_indexing.engines.isl import to_isl_map

    union = None
    for m in maps:
        if m.is_known_empty:
            continue
        r = to_isl_map(m, ctx=ctx)
        union = r if union is None else union.union(r)
    return union


def _sample(rel: Any, nd: int, nrt: int, nres: int) -> tuple[dict[str, int], tuple[int, ...]]:
    from verified_indexing.engines.isl import point_values

    values = point_values(rel.wrap().lexmin().sample_point(), nd + nrt + nres)
    names = [f"d{i}" for i in range(nd)] + [f"rt{k}" for k in range(nrt)]
    return dict(zip(names, values[: nd + nrt])), tuple(values[nd + nrt:])


def _universal(dims: tuple[int, ...] | None, target_dims: tuple[int, ...] | None,
               like: IndexingMap | None) -> IndexingMap | None:
    """``unknown indexing``: every output index may read every element."""
    if target_dims is None or (like is None and dims is None):
        return None
    dvars = list(like.dims) if like is not None else [Variable(Interval(0, n - 1)) for n in dims or ()]
    rts = [Variable(v.bounds) for v in like.rt_vars] if like is not None else []
    return IndexingMap(dvars, [Sym(i) for i in range(len(target_dims))],
                       [Variable(Interval(0, n - 1)) for n in target_dims], rts)


def _runtime_values(known: list[_Known], values: dict[str, int]) -> list[str]:
    """The folded runtime variables' values at a witness's output index."""
    dims = [values[f"d{i}"] for i in range(sum(1 for k in values if k.startswith("d")))]
    out = []
    for label, pieces, bounds in known:
        for cons, expr in pieces:
            try:
                if all(e.evaluate(dims) in iv for e, iv in cons):
                    v = expr.evaluate(dims)
                    out.append(f"  runtime value: {label} = {v}, clamped to [{bounds.lo}, {bounds.hi}]: "
                               f"{max(bounds.lo, min(v, bounds.hi))}")
                    break
            except (IndexError, ZeroDivisionError):  # the value depends on a range variable
                break
    return out


def _decide(
    results: list[AuditResult], target: _Target, module: Module, cache: dict[Any, Any]
) -> list[AuditResult]:
    """Decide the claims of ``results`` (one operand's set) against ``target``:
    each result gets its status; a missed read of the set is reported once."""
    claims = [r.claim for r in results]
    ours_folded: list[tuple[AccessMap, list[IndexingMap]]] = []
    fold_notes: list[str] = []
    known: list[_Known] = []
    for a in target.maps:
        maps, notes = _fold_ours(target, a, known)
        ours_folded.append((a, maps))
        fold_notes.extend(notes)
    for r in results:
        r.ours = list(target.maps)
        if fold_notes:
            r.steps.append(("runtime variables", "; ".join(dict.fromkeys(fold_notes))))
    like = next((m for _, ms in ours_folded for m in ms if m.state == "ok"), None)
    claim_maps: list[list[IndexingMap]] = []
    rest_bindings: list[list[RuntimeBinding]] = []
    for r in results:
        c = r.claim
        if c.kind == "unknown":
            u = _universal(target.source_dims, target.target_dims, like)
            if u is None:
                return _all(results, "unknown", "relation", "the claim is 'unknown indexing' and the analysis has no "
                            "map to compare with")
            claim_maps.append([u])
            rest_bindings.append([])
            continue
        if c.map.is_undefined:
            return _all(results, "unknown", "relation", "the claimed map is UNDEFINED")
        maps, rest, notes = _fold_claim(target, c)
        if notes:
            r.steps.append(("runtime variables", "; ".join(notes)))
        claim_maps.append(maps)
        rest_bindings.append(rest)
    claim_maps, ours_folded = _lift_runtime_free(claim_maps, ours_folded)
    all_ok = [m for ms in claim_maps for m in ms if m.state == "ok"] + [
        m for _, ms in ours_folded for m in ms if m.state == "ok"]
    spaces = {(m.num_dims, m.num_rt_vars, m.num_results) for m in all_ok}
    if len(spaces) > 1:
        ours_s = sorted({(m.num_dims, m.num_rt_vars, m.num_results) for _, ms in ours_folded for m in ms
                         if m.state == "ok"})
        return _all(results, "unknown", "relation", "not comparable: the claim and the analysis have different "
                    f"numbers of dims, runtime variables or results (ours: {ours_s}; runtime variables whose value "
                    "is not known before the program runs are not folded)")
    if not spaces:  # nothing read on either side
        if target.unsupported:
            return _all(results, "unknown", "relation", "the analysis has no map: unknown indexing through "
                        + ", ".join(target.unsupported))
        return _all(results, "proved", "relation", "proved: neither the claim nor the analysis reads an element")
    nd, nrt, nres = next(iter(spaces))
    if nrt:
        wrong = _wrong_binding(results, rest_bindings, ours_folded)
        if wrong is not None:
            return wrong
        claim_maps, ours_folded = _widen(claim_maps, ours_folded, nrt)
    import islpy as isl

    ctx = isl.Context()
    c_rel = _isl_union([m for ms in claim_maps for m in ms], ctx)
    exact = [ms for a, ms in ours_folded if not a.over_approximation]
    approx_reasons = [x for a, _ in ours_folded for x in a.over_approximation]
    # 1. a read the claims miss (from an exact map of ours: a read that happens)
    for ms in exact:
        o_rel = _isl_union(ms, ctx)
        if o_rel is None:
            continue
        missed = o_rel if c_rel is None else o_rel.subtract(c_rel)
        if missed.is_empty():
            continue
        values, element = _sample(missed, nd, nrt, nres)
        if not any(_read_at(m, values, element) for m in ms) or any(
            _read_at(m, values, element) is not False for cm in claim_maps for m in cm if m.state == "ok"
        ):
            return _all(results, "unknown", "relation", "a read the claim seems to miss was not confirmed by the "
                        "evaluator")
        witness = _missed_witness(values, element) + _runtime_values(known, values)
        verdict_text = "the claim misses a read of the output"
        if len(results) == 1:
            res = results[0]
            res.status, res.witness = "refuted", witness
            res.counterexample = Counterexample("relation", tuple(values.items()), None, element)
            res.steps.append(("relation", verdict_text))
            return results
        for res in results:
            _individual(res, claim_maps[results.index(res)], ours_folded, ctx, "refuted")
        cover = AuditResult(claims[0], "refuted", ours=list(target.maps))
        cover.steps.append(("coverage", verdict_text + " (none of the claims for this operand reads it)"))
        cover.witness = witness
        cover.counterexample = Counterexample("relation", tuple(values.items()), None, element)
        return [*results, cover]
    # 2. every exact read is claimed: an element claimed that nothing reads
    o_all = _isl_union([m for _, ms in ours_folded for m in ms], ctx)
    approximate_left = bool(approx_reasons)
    if target.unsupported:
        return _all(results, "unknown", "relation", "the claim holds every read of the analysis' maps, but some "
                    "paths are unknown: " + ", ".join(target.unsupported))
    if c_rel is not None:
        extra = c_rel if o_all is None else c_rel.subtract(o_all)
        if not extra.is_empty():
            values, element = _sample(extra, nd, nrt, nres)
            if any(_read_at(m, values, element) is not False for _, ms in ours_folded for m in ms
                   if m.state == "ok") or not any(_read_at(m, values, element) for cm in claim_maps for m in cm
                                                  if m.state == "ok"):
                return _all(results, "unknown", "relation", "an extra element the claim seems to read was not "
                            "confirmed by the evaluator")
            # (our over-approximations hold every read: a claim holding them is sound too)
            witness = _extra_witness(values, element) + _runtime_values(known, values)
            for n, res in enumerate(results):
                own = _individual(res, claim_maps[n], ours_folded, ctx, "over-approximates")
                if res.status != "proved":
                    res.status = "over-approximates"
                    res.steps.append(("relation", "a sound superset: the claim holds every read"
                                      + (" (with the other claims for this operand)" if len(results) > 1 else "")))
                    res.witness = (own + _runtime_values(known, values)) if own else witness
                    if res.counterexample is None:
                        res.counterexample = Counterexample("relation", tuple(values.items()), element, None)
            return results
    if approximate_left:
        return _all(results, "unknown", "relation", "the claim equals the analysis' over-approximation ("
                    + "; ".join(dict.fromkeys(approx_reasons)) + "): the exact reads are not known")
    # 3. the same reads: range variables pointwise, then the runtime-variable bindings
    for n, res in enumerate(results):
        res.steps.append(("relation", "proved: the claim reads exactly the elements the analysis reads"
                          + (" (with the other claims for this operand)" if len(results) > 1 else "")))
        res.status = "proved"
        if res.claim.kind != "map":
            continue
        _pointwise_and_bindings(res, claim_maps[n], rest_bindings[n], ours_folded, target, module, cache)
    return results


def _lift_runtime_free(
    claim_maps: list[list[IndexingMap]], ours_folded: list[tuple[AccessMap, list[IndexingMap]]]
) -> tuple[list[list[IndexingMap]], list[tuple[AccessMap, list[IndexingMap]]]]:
    """A map without runtime variables reads the same for every runtime value: when
    the other side has runtime variables (one count, the same bounds), it gets them
    unused, so the two compare value by value."""
    ours_ok = [m for _, ms in ours_folded for m in ms if m.state == "ok"]
    claims_ok = [m for ms in claim_maps for m in ms if m.state == "ok"]

    def template(maps: list[IndexingMap]) -> list[Variable] | None:
        shapes = {tuple(v.bounds for v in m.rt_vars) for m in maps}
        if len(shapes) != 1:
            return None
        (bounds,) = shapes
        return [Variable(b) for b in bounds] if bounds else None

    def lift(m: IndexingMap, rts: list[Variable]) -> IndexingMap:
        return m.replace(rt_vars=rts) if m.state == "ok" and not m.num_rt_vars else m

    ours_rts = template(ours_ok)
    if ours_rts is not None and any(not m.num_rt_vars for m in claims_ok):
        claim_maps = [[lift(m, ours_rts) for m in ms] for ms in claim_maps]
    claim_rts = template(claims_ok)
    if claim_rts is not None and ours_ok and all(not m.num_rt_vars for m in ours_ok):
        ours_folded = [(a, [lift(m, claim_rts) for m in ms]) for a, ms in ours_folded]
    return claim_maps, ours_folded


def _wrong_binding(
    results: list[AuditResult], bindings: list[list[RuntimeBinding]],
    ours_folded: list[tuple[AccessMap, list[IndexingMap]]],
) -> list[AuditResult] | None:
    """A claimed runtime variable bound to an instruction that is not where our
    (proven) analysis takes its value from: the claim names a wrong binding."""
    for res, claimed in zip(results, bindings):
        for b in claimed:
            sources = set()
            for _, ms in ours_folded:
                for m in ms:
                    if m.state != "ok" or b.index >= m.num_rt_vars:
                        continue
                    origin = m.rt_vars[b.index].origin
                    name = getattr(origin, "operand_name", None)
                    if not isinstance(name, str):
                        return None
                    sources.add((name, tuple(getattr(origin, "via", ()))))
            if len(sources) != 1:
                continue
            ((name, via),) = sources
            if b.instruction != name and b.instruction not in via:
                for other in results:
                    other.status = "unknown"
                    other.steps.append(("runtime variables", "another claim for this operand names a wrong binding"))
                res.status = "refuted"
                res.steps[-1:] = [("runtime variables", f"rt{b.index}: claimed bound to {b.instruction}, but its value "
                                   f"comes from {name}" + (f" (through {', '.join(via)})" if via else ""))]
                res.witness = [f"the analysis (proven) reads rt{b.index} from {name}"]
                return results
    return None


def _widen(
    claim_maps: list[list[IndexingMap]], ours_folded: list[tuple[AccessMap, list[IndexingMap]]], nrt: int
) -> tuple[list[list[IndexingMap]], list[tuple[AccessMap, list[IndexingMap]]]]:
    """Runtime variables left on both sides stand for the same value only when
    bound alike (checked) *and* clamped alike: where the bounds differ, each side's
    ``rtK`` becomes the raw value clamped to that side's bounds, the raw value
    ranging one past every bound (beyond them every clamp is constant)."""
    every = [m for ms in claim_maps for m in ms if m.state == "ok"] + [
        m for _, ms in ours_folded for m in ms if m.state == "ok"]
    changed = False
    wide: list[Interval | None] = []
    for k in range(nrt):
        bounds = {m.rt_vars[k].bounds for m in every}
        if len(bounds) == 1:
            wide.append(None)
            continue
        changed = True
        wide.append(Interval(min(b.lo for b in bounds) - 1, max(b.hi for b in bounds) + 1))
    if not changed:
        return claim_maps, ours_folded

    def go(m: IndexingMap) -> IndexingMap:
        if m.state != "ok":
            return m
        subst: list[AffineExpr] = []
        for k, w in enumerate(wide):
            b = m.rt_vars[k].bounds
            subst.append(RtSym(k) if w is None else emin(emax(RtSym(k), Const(b.lo)), Const(b.hi)))
        rts = [v if w is None else Variable(w, v.name, v.origin) for v, w in zip(m.rt_vars, wide)]
        return IndexingMap(m.dims, [r.substitute(rts=subst) for r in m.results], m.range_vars, rts,
                           [(e.substitute(rts=subst), iv) for e, iv in m.constraints])

    return [[go(m) for m in ms] for ms in claim_maps], [(a, [go(m) for m in ms]) for a, ms in ours_folded]


def _all(results: list[AuditResult], status: str, step: str, text: str) -> list[AuditResult]:
    for r in results:
        r.status = status
        r.steps.append((step, text))
    return results


def _missed_witness(values: dict[str, int], element: tuple[int, ...]) -> list[str]:
    at = ", ".join(f"{k} = {x}" for k, x in values.items())
    dims = ", ".join(str(x) for k, x in values.items() if k.startswith("d"))
    rts = ", ".join(f"{k} = {x}" for k, x in values.items() if k.startswith("rt"))
    return [f"at {at}:", f"  the analysis: output ({dims}) reads element ({', '.join(map(str, element))})"
            + (f" (runtime values {rts}, each side clamping them to its bounds)" if rts else ""),
            "  the claim: no range-variable value makes that output read it"]


def _extra_witness(values: dict[str, int], element: tuple[int, ...]) -> list[str]:
    at = ", ".join(f"{k} = {x}" for k, x in values.items())
    dims = ", ".join(str(x) for k, x in values.items() if k.startswith("d"))
    return [f"at {at}:", f"  claimed: output ({dims}) reads element ({', '.join(map(str, element))})",
            "  the analysis: the output never reads it"]


def _individual(res: AuditResult, maps: list[IndexingMap], ours_folded: list[tuple[AccessMap, list[IndexingMap]]],
                ctx: Any, otherwise: str) -> list[str]:
    """A claim of a set: ``proved`` when it equals one exact map of ours, else
    ``otherwise`` with its own witness (an element it reads that we do not)."""
    if len(maps) == 1 and maps[0].state == "ok":
        for a, ms in ours_folded:
            if not a.over_approximation and len(ms) == 1 and ms[0].state == "ok" and \
                    (ms[0].num_dims, ms[0].num_rt_vars, ms[0].num_results) == \
                    (maps[0].num_dims, maps[0].num_rt_vars, maps[0].num_results) and \
                    prove_equal(maps[0], ms[0], cache=None).proved:
                res.status = "proved"
                res.matched = a
                res.steps.append(("relation", "proved: equal to one of the analysis' maps"))
                return []
    res.status = otherwise
    c = _isl_union(maps, ctx)
    o = _isl_union([m for _, ms in ours_folded for m in ms], ctx)
    if c is not None:
        extra = c if o is None else c.subtract(o)
        if not extra.is_empty():
            m0 = next(m for m in maps if m.state == "ok")
            values, element = _sample(extra, m0.num_dims, m0.num_rt_vars, m0.num_results)
            if any(_read_at(m, values, element) for m in maps) and all(
                _read_at(m, values, element) is False for _, ms in ours_folded for m in ms if m.state == "ok"
            ):
                res.counterexample = Counterexample("relation", tuple(values.items()), element, None)
                res.witness = _extra_witness(values, element)
                res.steps.append(("relation", "the claim reads an element the output never reads"))
                return res.witness
    res.steps.append(("relation", "part of a set of claims (decided together)"))
    return []


def _reordered_loops(claim: IndexingMap, ours: IndexingMap, limit: int = 5) -> tuple[int, ...] | None:
    """An order of the claim's range variables (at most ``limit`` of them) under
    which it equals ``ours`` pointwise: the same loops listed in another order."""
    n = claim.num_range_vars
    if n < 2 or n > limit or claim.state != "ok":
        return None
    for perm in itertools.permutations(range(n)):
        if perm == tuple(range(n)):
            continue
        # new s_j is old s_perm[j]: old s_i becomes the new variable at position perm.index(i)
        subst: list[AffineExpr] = [Sym(perm.index(i)) for i in range(n)]
        moved = IndexingMap(claim.dims, [r.substitute(syms=subst) for r in claim.results],
                            [claim.range_vars[perm[j]] for j in range(n)], claim.rt_vars,
                            [(e.substitute(syms=subst), iv) for e, iv in claim.constraints])
        if prove_pointwise_equal(moved, ours, cache=None).proved:
            return perm
    return None


def _pointwise_and_bindings(
    res: AuditResult, maps: list[IndexingMap], bindings: list[RuntimeBinding],
    ours_folded: list[tuple[AccessMap, list[IndexingMap]]], target: _Target, module: Module, cache: dict[Any, Any]
) -> None:
    """After the relation is proved: the range variables pointwise (XLA keeps
    them as loop variables) and the bindings of the runtime variables left."""
    claim = res.claim
    if len(maps) != 1 or maps[0].state != "ok":
        return
    cm = maps[0]
    match = None
    for a, ms in ours_folded:
        if len(ms) == 1 and ms[0].state == "ok" and (ms[0].num_dims, ms[0].num_rt_vars, ms[0].num_results) == (
                cm.num_dims, cm.num_rt_vars, cm.num_results) and prove_equal(cm, ms[0], cache=None).proved:
            match = (a, ms[0])
            break
    if match is None:
        if cm.num_rt_vars:
            res.status = "unknown"
            res.steps.append(("runtime variables", "the claim equals the union of several of our maps: the "
                              "bindings of its runtime variables are not compared"))
        else:
            res.steps.append(("range variables", "the claim equals the union of several of our maps: its range "
                              "variables are not compared"))
        return
    a, om = match
    res.matched = a
    pointwise_with: IndexingMap | None = om
    if cm.num_range_vars != om.num_range_vars:
        pointwise_with = None
        if target.loops is not None and not om.num_rt_vars and not a.map.num_rt_vars:
            key = (target.loops.name, claim.output, "loops")
            if key not in cache:
                try:
                    cache[key] = output_to_input_maps(target.loops, output_index=claim.output, module=module,
                                                      keep_loops=True)
                except UnsupportedError:
                    cache[key] = None
            loop_targets = [] if cache[key] is None else [
                t for t in cache[key].targets if t.index == claim.operand and t.element is None]
            candidates = [
                x.map for x in (loop_targets[0].maps if loop_targets else [])
                if x.map.num_range_vars == cm.num_range_vars and x.map.num_rt_vars == 0 and x.verdict is not None
                and x.verdict.proved and prove_equal(cm, x.map, cache=None).proved
            ]
            pointwise_with = candidates[0] if candidates else None
        if pointwise_with is None:
            res.steps.append(("range variables", f"the claim keeps {cm.num_range_vars} range variables, the "
                              f"analysis {om.num_range_vars}: the same reads, the loops not compared pointwise"))
        else:
            res.steps.append(("range variables", "compared with the composition keeping every loop variable: "
                              + pointwise_with.format(one_line=True)))
    if pointwise_with is not None and cm.num_range_vars:
        pv: Verdict | None = prove_pointwise_equal(cm, pointwise_with, cache=None)
        if pv is not None and pv.refuted:
            order = _reordered_loops(cm, pointwise_with)
            if order is not None:
                res.steps.append(("range variables", f"proved pointwise with the claim's range variables in the "
                                  f"order {', '.join(f's{i}' for i in order)} (the same loops, listed otherwise)"))
                pv = None
        if pv is not None and pv.refuted:
            res.status = "refuted"
            res.steps.append(("range variables", "the range variables differ pointwise (a loop runs other "
                              "iterations or reads other elements)"))
            res.witness, res.counterexample = _witness(pv), pv.counterexample
            return
        if pv is not None and not pv.proved:
            res.status = "unknown"
            res.steps.append(("range variables", f"{pv.status}: {pv.reason}"))
            return
        if pv is not None:
            res.steps.append(("range variables", f"proved pointwise ({pv.engine})"))
    by_index = {b.index: b for b in bindings}
    for k in range(cm.num_rt_vars):
        if k not in by_index:
            res.steps.append(("runtime variables", f"rt{k}: no binding given (not checked)"))
            continue
        status, text, witness, bv = _compare_binding(target.comp, by_index[k], om, k)
        res.steps.append(("runtime variables", text))
        if status != "proved":
            res.status = "unknown" if status not in ("refuted", "proved") else status
            res.witness = witness
            res.counterexample = bv.counterexample if bv is not None else None
            return
    extra = sorted(set(by_index) - set(range(cm.num_rt_vars)))
    if extra:
        res.status = "error"
        res.steps.append(("runtime variables", f"bindings for undeclared runtime variables: rt{extra[0]}"))


def audit(module: Module, claims: list[Claim]) -> list[AuditResult]:
    """Decide each claim; the claims for the same operand (XLA prints a set of
    maps per operand) are decided together, as the union of their reads:
    ``proved`` (the same reads; then each claim's range variables pointwise and
    its runtime-variable bindings), ``over-approximates`` (every read claimed,
    and an element claimed that the output never reads), ``refuted`` (a read
    missed -- or a wrong binding, or a loop running other iterations -- with a
    witness the evaluator confirmed), ``unknown`` with the reason, ``error``."""
    cache: dict[Any, Any] = {}
    groups: dict[tuple[Any, ...], list[Claim]] = {}
    for cl in claims:
        groups.setdefault(_group_key(cl), []).append(cl)
    decided: dict[int, list[AuditResult]] = {}
    for group in groups.values():
        results = [AuditResult(c, "unknown") for c in group]
        first = group[0]
        if first.direction not in ("output-to-input", "input-to-output"):
            out = _all(results, "error", "direction", f"unknown direction {first.direction!r}")
        else:
            try:
                target = _target(module, first, cache)
            except UnsupportedError as exc:
                out = _all(results, "unknown", "relation", f"the analysis has no map: {exc}")
            except VerifiedIndexingError as exc:
                if _resolve_fails(module, first):
                    raise
                out = _all(results, "error", "operand", str(exc))
            else:
                if not target.maps and target.unsupported and not any(c.map.is_known_empty for c in group):
                    out = _all(results, "unknown", "relation", "the analysis has no map for this operand: unknown "
                               "indexing through " + ", ".join(target.unsupported))
                else:
                    out = _decide(results, target, module, cache)
                    if any(r.status in ("refuted", "unknown") for r in out) and not first.physical:
                        out = _maybe_physical(module, group, target, out, cache)
                    unproven = [a.verdict for a in target.maps if a.verdict is not None and a.verdict.unknown]
                    for r in out if unproven else ():  # our map's own proof ran out (a time budget): no proof
                        if r.status in ("proved", "over-approximates"):
                            r.status = "unknown"
                            r.steps.append(("analysis", "the proof of the analysis' own map was not finished: "
                                            f"{unproven[0].reason}"))
        decided[id(first)] = out
    ordered: list[AuditResult] = []
    extra: list[AuditResult] = []
    for group in groups.values():
        out = decided[id(group[0])]
        ordered.extend(out[: len(group)])
        extra.extend(out[len(group):])
    by_claim = {id(r.claim): r for r in ordered}
    return [by_claim[id(c)] for c in claims] + extra


def _claimed_box(c: Claim) -> tuple[int, ...] | None:
    """The sizes of a claim's dims (None when they do not start at 0)."""
    if c.kind != "map" or c.map.state != "ok" or any(v.bounds.lo != 0 for v in c.map.dims):
        return None
    return tuple(v.bounds.hi + 1 for v in c.map.dims)


def _maybe_physical(module: Module, group: list[Claim], target: _Target, out: list[AuditResult],
                    cache: dict[Any, Any]) -> list[AuditResult]:
    """A claim whose dims are the source's physical shape and not its logical
    one is about physical-layout indices (XLA prints such maps for a layout
    that is not the default): decided again as such, when that is what its
    domain says."""
    boxes = {_claimed_box(c) for c in group}
    if len(boxes) != 1 or None in boxes or boxes == {target.source_dims}:
        return out
    copies = [dataclasses.replace(c, physical=True) for c in group]
    try:
        physical = _target(module, copies[0], cache)
    except VerifiedIndexingError:
        return out
    if boxes != {physical.source_dims}:
        return out
    again = _decide([AuditResult(c, "unknown") for c in copies], physical, module, cache)
    for r, c in zip(again, group):
        r.claim = c
        r.steps.insert(0, ("layout", "the claim's dims are the physical shape of the source: read as a map between "
                           "physical-layout indices"))
    for r in again[len(group):]:
        r.claim = group[0]
    return again


def _group_key(c: Claim) -> tuple[Any, ...]:
    return (c.fusion, c.computation, c.instruction, c.producer, c.physical, c.direction, c.operand, c.output)


def _resolve_fails(module: Module, claim: Claim) -> bool:
    """True when the claim's fusion or computation cannot be chosen (bad input)."""
    if claim.instruction is not None:
        return False
    try:
        _resolve(module, claim)
    except VerifiedIndexingError:
        return True
    return False


def audit_claim(module: Module, claim: Claim) -> AuditResult:
    """One claim decided alone (see :func:`audit`)."""
    return audit(module, [claim])[0]


def format_audit(results: list[AuditResult]) -> str:
    blocks = []
    for n, r in enumerate(results, 1):
        lines = [f"claim {n} (line {r.claim.line}; {r.claim.label()}): {r.status.upper()}"]
        claimed = "unknown indexing" if r.claim.kind == "unknown" else r.claim.map.format(one_line=True)
        lines.append(f"  claimed: {claimed}")
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
