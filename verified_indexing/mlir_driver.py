"""Validating MLIR's own fusion pass (issue 24 item 4): ``verified-indexing validate-mlir``.

:func:`validate_mlir` runs MLIR's real pass (``linalg-fuse-elementwise-ops`` by
default) through ``iree-opt`` (the ``mlir`` extra, ``iree-base-compiler``) and
checks every fused op the pass produced:

1. The input is printed back by ``iree-opt`` with its locations
   (``--mlir-print-debuginfo --mlir-print-local-scope``) and SSA names unique in
   the module (``--mlir-print-unique-ssa-ids``); that text (``before``) is what the
   pass runs on, so MLIR verifies the input first (an error is bad input, with
   MLIR's own message and position).
2. The pass's output (``after``) is matched to ``before`` by location: MLIR gives
   a fused op its consumer's location, and every op it keeps its own; values of
   ``after`` are renamed to the ``before`` value of the same location (values
   with no counterpart get a fresh ``%h_`` name). An ``after`` op named as a
   ``before`` op ``C`` some of whose producers vanished is a fused op; the
   vanished producers feeding it (transitively) are what it replaced.
3. **Proof**: the pair (or chain) is decided by the project
   (:func:`verified_indexing.legality.linalg.check_fusion`); when it is ``legal``,
   MLIR's fused op is proven by the whole-op proof
   (:func:`verified_indexing.legality.linalg_semantics.prove_fused_equivalent`:
   every result, every size, uninterpreted payload operations). A chain is
   folded one producer at a time through the project's own proven fused ops,
   the last step against MLIR's op.
4. **Refutation**: both modules are run by the numpy Linalg interpreter
   (:mod:`verified_indexing.legality.linalg_interpreter`) on random small-integer
   inputs (function arguments and constants shared by name; ``tensor.empty`` is
   NaN, i.e. undefined) and every value the pass kept is compared: a difference
   is reported with the element and both values (the interpreter re-runs the
   pair and the fused op alone on the same inputs before it is reported). An
   element undefined before the pass (NaN) is not a difference.
5. **Refusals**: every producer-consumer pair of ``before`` the pass left
   unfused is decided by the project; a ``legal`` one is reported with why the
   pass refused (``areElementwiseOpsFusable``'s failing check, or the pass's
   default control function: the producer has more than one use), as
   :func:`verified_indexing.legality.linalg.pass_decision` models it (the same
   model as ``fuse``'s MLIR column in context).

Statuses per fused op: ``proved``, ``refuted`` (interpreter-confirmed),
``unknown`` (with the reason; e.g. a producer result the pass preserves, a fused
op the project cannot match, a pair the project does not prove legal).
"""

from __future__ import annotations

import dataclasses
import math
import re
import shutil
import subprocess
import sys
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from verified_indexing.errors import VerifiedIndexingError

__all__ = ["IreeMissing", "find_iree_opt", "run_iree_opt", "FusedCheck", "Refusal", "MlirValidation",
           "validate_mlir", "validate_output", "DEFAULT_PASS", "PRINT_FLAGS", "Decision",
           "validate_jax"]

DEFAULT_PASS = "linalg-fuse-elementwise-ops"
PRINT_FLAGS = ["--mlir-print-debuginfo", "--mlir-print-local-scope", "--mlir-print-unique-ssa-ids"]
_SSA = re.compile(r"%[\w$.-]+")
_LOC = r"loc\(((?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)"
_LINE_DEF = re.compile(r"^[ \t]*(%[\w$.-]+)(?::\d+)?\s*=\s*([^\n]*?)\s" + _LOC + r"[ \t]*$", re.MULTILINE)
_ARG_DEF = re.compile(r"(?:(?<=\()|(?<=, ))(%[\w$.-]+)\s*:\s*[^,()\n]*?(?:<[^\n]*?>)?[^,()\n]*?\s" + _LOC
                      + r"(?=\s*[,)])")
_ARG_TYPE = re.compile(r"(%[\w$.-]+)\s*:\s*((?:tensor|memref)<[^>]*>|[if]\d+|bf16|index)\s*(?:loc|[,)])")
_EMPTY = re.compile(r"^[ \t]*(%[\w$.-]+)\s*=\s*tensor\.empty\(\)\s*:\s*(tensor<[^>]*>)", re.MULTILINE)
_EMPTY_ANY = re.compile(r"^[ \t]*(%[\w$.-]+)\s*=\s*tensor\.empty\(", re.MULTILINE)
_RETURN = re.compile(r"^[ \t]*(?:func\.return|return|util\.return|flow\.return|[\w.]*dispatch\.tensor\.store)\b"
                     r"([^\n]*)", re.MULTILINE)
_CONST_DEF = re.compile(r"^[ \t]*(%[\w$.-]+)\s*=\s*(arith\.constant\s+[^\n<>]*?:\s*[\w]+)\s*(?:loc\(|$)",
                        re.MULTILINE)
_RET_LOC = re.compile(r"^[ \t]*(?:func\.return|return|util\.return)\b([^\n:]*)(?::[^\n]*?)?\s" + _LOC + r"[ \t]*$",
                      re.MULTILINE)
_CONST = re.compile(r"^[ \t]*(%[\w$.-]+)\s*=\s*arith\.constant\s+(-?[\d.eE+-]+|true|false)\s*(?::\s*([\w]+))?",
                    re.MULTILINE)


class IreeMissing(VerifiedIndexingError):
    """``iree-opt`` is not installed (the ``mlir`` extra): the command cannot run (exit 3)."""


def find_iree_opt() -> str | None:
    """``iree-opt`` next to the running Python (a venv), else on ``PATH``; ``None`` when absent."""
    local = Path(sys.executable).parent / "iree-opt"
    return str(local) if local.exists() else shutil.which("iree-opt")


def _pass_flags(pass_name: str) -> list[str]:
    if "(" in pass_name:
        return [f"--pass-pipeline={pass_name}"]
    if not re.fullmatch(r"[A-Za-z][\w-]*(\{[^}]*\})?", pass_name):
        raise VerifiedIndexingError(f"--pass {pass_name!r}: expected a pass name (linalg-fuse-elementwise-ops) "
                                    "or a pipeline (builtin.module(func.func(...)))")
    return [f"--{pass_name}"]


def run_iree_opt(text: str, flags: Sequence[str], *, source: str = "<input>", timeout: float | None = None) -> str:
    """``iree-opt FLAGS`` on ``text``: its output, or :class:`VerifiedIndexingError`
    with MLIR's diagnostic (file positions are MLIR's, in ``source``). It runs for at
    most ``timeout`` seconds and what is left of the command's budget (no limit when
    both are absent); past that :class:`~verified_indexing.engines.deadline.BudgetExpired`
    (the command line's ``unknown``, exit 2: MLIR did not reject the input)."""
    import math

    from verified_indexing.engines.deadline import BudgetExpired, remaining

    left = remaining(math.inf if timeout is None else timeout)
    exe = find_iree_opt()
    if exe is None:
        raise IreeMissing("validate-mlir needs MLIR's iree-opt, which is not installed "
                          "(pip install 'verified-indexing[mlir]', i.e. iree-base-compiler)")
    try:
        proc = subprocess.run([exe, *flags, "-"], input=text, capture_output=True, text=True,
                              timeout=None if math.isinf(left) else max(left, 0.01), check=False)
    except subprocess.TimeoutExpired:
        raise BudgetExpired(f"iree-opt {' '.join(flags)} did not finish within {left:.3g} s") from None
    if proc.returncode != 0:
        msg = proc.stderr.strip().replace("<stdin>", source) or f"exit {proc.returncode}"
        raise VerifiedIndexingError(f"MLIR rejected {source}: {msg[:2000]}")
    return proc.stdout


# ---------------------------------------------------------------------------
# Matching the pass's output to its input
# ---------------------------------------------------------------------------


def _defs_by_loc(text: str) -> dict[str, list[str]]:
    """Location -> the values defined there (op results and block arguments)."""
    from verified_indexing.legality.linalg_ir import parse_linalg_module

    out: dict[str, list[str]] = {}

    def add(loc: str, name: str) -> None:
        if loc.split(" ", 1)[1].strip() in ("unknown", ""):
            return
        lst = out.setdefault(loc, [])
        if name not in lst:
            lst.append(name)

    for m in _LINE_DEF.finditer(text):
        # an op other than a generic is matched only to the same op (names blanked):
        # a constant the pass changed at the same location is another value
        add("line " + m.group(3) + " | " + _SSA.sub("%_", m.group(2)), m.group(1))
    # region arguments (functions, dispatch regions); a payload's block arguments
    # are local to it (the fused op's take its operands' locations) and not matched
    for line in text.splitlines():
        if not re.match(r"\s*\^bb", line):
            for m in _ARG_DEF.finditer(line):
                add("arg " + m.group(2), m.group(1))
    for op in parse_linalg_module(text).ops:
        lm = re.match(r"\s*" + _LOC, text[op.end:])
        if lm is not None and op.results:
            add("op " + lm.group(1), op.results[0].split("#")[0])
    return out


def _rename_table(before: str, after: str) -> dict[str, str]:
    """``after`` value -> the ``before`` value of the same location (one-to-one only)."""
    b, a = _defs_by_loc(before), _defs_by_loc(after)
    pairs: set[tuple[str, str]] = set()
    for loc, names in a.items():
        olds = b.get(loc)
        if olds is not None and len(olds) == len(names):
            pairs.update(zip(names, olds))
    # function arguments by position (util.func prints none of their locations)
    hb, ha = _headers(before), _headers(after)
    for fn, aargs in ha.items():
        bargs = hb.get(fn)
        if bargs is not None and len(bargs) == len(aargs):
            pairs.update(zip(aargs, bargs))
    news = [n for n, _ in pairs]
    olds_ = [o for _, o in pairs]
    return {n: o for n, o in pairs if news.count(n) == 1 and olds_.count(o) == 1}


def _per_function(text: str) -> str:
    """Names MLIR prints from hints (``%cst``, ``%c0``, ``%in``) repeat across
    functions even with ``--mlir-print-unique-ssa-ids``: each gets its function's
    number (``%cst_f2``); numbered values and arguments are unique already."""
    out = []
    k = 0
    for line in text.splitlines(keepends=True):
        if re.match(r"\s*(?:func\.func|util\.func)\b", line):
            k += 1
        out.append(_SSA.sub(lambda m, k=k: m.group() if re.fullmatch(r"%(?:arg)?\d+", m.group())  # type: ignore[misc]
                            else f"{m.group()}_f{k}", line))
    return "".join(out)


def _headers(text: str) -> dict[str, list[str]]:
    """Every function's symbol -> its arguments, in order (MLIR prints a header on one line)."""
    out: dict[str, list[str]] = {}
    for m in re.finditer(r"^[ \t]*(?:func\.func|util\.func)\s+(?:(?:public|private|nested)\s+)*@([\w.$-]+)\(([^\n]*)$",
                         text, re.MULTILINE):
        out.setdefault(m.group(1), re.findall(r"(%[\w$.-]+)\s*:", m.group(2).split(") ->")[0].split(") {")[0]))
    return out


def _renamed(after: str, table: dict[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        v = m.group()
        return table.get(v, "%h_" + v[1:])
    return _SSA.sub(sub, after)


# ---------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class FusedCheck:
    """One op the pass produced by fusion: what it replaced and the verdict."""

    op: str  # the consumer's value (the fused op carries the consumer's location)
    line: int  # the consumer's line in the input as MLIR printed it
    replaced: tuple[str, ...]  # the producers it absorbed, innermost last
    status: str  # proved / refuted / unknown
    reason: str
    witness: dict[str, Any] | None = None
    project: str = ""  # the project's verdict on the (last) pair
    fused_text: str = ""

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        return {"op": self.op, "line": self.line, "replaced": list(self.replaced), "status": self.status,
                "reason": self.reason, "witness": self.witness, "project": self.project}


@dataclass(frozen=True)
class Refusal:
    """A pair the pass left unfused that the project proves legal."""

    producer: str
    consumer: str
    why_refused: str
    project: str

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        return {"producer": self.producer, "consumer": self.consumer, "why_refused": self.why_refused,
                "project": self.project}


@dataclass(frozen=True)
class Decision:
    """The pass's decision on one pair of the input: modelled and observed."""

    producer: str
    consumer: str
    predicted: bool | None  # None: the model does not decide (folding it does not model)
    fused: bool
    why: str
    decided_by: str = ""  # which part of the pass: FoldFillWithGenericOp, areElementwiseOpsFusable, control function

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        return {"producer": self.producer, "consumer": self.consumer, "predicted": self.predicted,
                "fused": self.fused, "why": self.why, "decided_by": self.decided_by}


@dataclass
class MlirValidation:
    """Everything :func:`validate_mlir` found."""

    pass_name: str
    fused: list[FusedCheck] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    pairs: int = 0  # producer-consumer pairs of the input
    decisions: list[Decision] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    oracle_runs: int = 0
    before: str = ""
    after: str = ""

    @property
    def exit_code(self) -> int:
        """1 when a fused op is refuted, 2 when one is unknown, else 0."""
        if any(f.status == "refuted" for f in self.fused):
            return 1
        if any(f.status != "proved" for f in self.fused):
            return 2
        return 0

    def __str__(self) -> str:
        """The command line's text (see :func:`verified_indexing._repr.report_str`)."""
        from verified_indexing._repr import report_str

        return report_str(self)

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        return {"pass": self.pass_name, "pairs": self.pairs, "fused": [f.to_json() for f in self.fused],
                "refusals": [r.to_json() for r in self.refusals], "notes": list(self.notes),
                "decisions": [d.to_json() for d in self.decisions],
                "interpreter_runs": self.oracle_runs}


# ---------------------------------------------------------------------------
# The interpreter oracle
# ---------------------------------------------------------------------------


def _static_shape(t: str) -> tuple[int, ...] | None:
    from verified_indexing.legality._mlir_text import parse_type

    st = parse_type(t, 0, "<type>", t)
    dims = [d for d in st.shape if isinstance(d, int)]
    return tuple(dims) if len(dims) == len(st.shape) else None


def _inputs(texts: Sequence[str], seed: int) -> tuple[dict[str, Any], list[str]]:
    """Values for the function arguments, constants and ``tensor.empty`` (NaN) of ``texts``."""
    import numpy as np

    env: dict[str, Any] = {}
    notes: list[str] = []
    for text in texts:
        heads = "\n".join(ln for ln in text.splitlines() if re.search(r"\b(?:func\.func|util\.func)\b", ln))
        for m in _ARG_TYPE.finditer(heads):
            name, t = m.group(1), m.group(2)
            if name in env:
                continue
            rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
            if t.startswith(("tensor", "memref")):
                shape = _static_shape(t)
                if shape is None:
                    note = "a function argument has a dynamic shape: the interpreter (static shapes) skips what uses it"
                    if note not in notes:
                        notes.append(note)
                    continue
                env[name] = rng.integers(-3, 4, size=shape).astype(np.float64)
            else:
                env[name] = float(rng.integers(-3, 4))
        for m in _EMPTY.finditer(text):
            shape = _static_shape(m.group(2))
            if shape is not None and m.group(1) not in env:
                env[m.group(1)] = np.full(shape, np.nan)
        for m in _CONST.finditer(text):
            v = m.group(2)
            if m.group(1) not in env:
                env[m.group(1)] = 1.0 if v == "true" else 0.0 if v == "false" else float(v)
    return env, notes


def _run(ops: Sequence[Any], env: dict[str, Any], reshapes: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Every op whose operands are known, in order; the others (and ops the
    interpreter does not model) leave their results unbound. ``reshapes``: the
    text's static ``tensor.expand_shape`` values
    (:func:`verified_indexing.legality.linalg_reshape.expand_shape_facts`), computed
    as numpy's row-major reshape once their source is known."""
    from verified_indexing.legality.linalg_interpreter import run_generic

    env = dict(env)

    def reshape() -> None:
        for v, f in (reshapes or {}).items():
            if v not in env and f.source in env and getattr(env[f.source], "shape", None) == f.source_shape:
                env[v] = env[f.source].reshape(f.shape)

    for op in sorted(ops, key=lambda o: o.offset):
        reshape()
        if any(o.value not in env for o in op.operands):
            continue
        try:
            outs = run_generic(op, env)
        except (NotImplementedError, IndexError, KeyError, ValueError, OverflowError, ZeroDivisionError):
            continue
        for name, arr in zip(op.results, outs):
            env[name] = arr
    reshape()
    return env


def _first_difference(a: Any, b: Any) -> tuple[tuple[int, ...], float, float] | None:
    """The first element where ``b`` differs from a defined (non-NaN) ``a``."""
    import numpy as np

    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return (), math.nan, math.nan
    bad = ~np.isnan(a) & ~((a == b) | np.isclose(a, b, rtol=1e-6, atol=1e-9))
    if not bad.any():
        return None
    idx = tuple(int(i) for i in np.argwhere(bad)[0])
    return idx, float(a[idx]), float(b[idx])


# ---------------------------------------------------------------------------
# The validation
# ---------------------------------------------------------------------------


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def validate_mlir(text: str, source: str = "<input>", *, pass_name: str = DEFAULT_PASS, timeout: float = 10.0,
                  seeds: int = 3) -> MlirValidation:
    """Run MLIR's pass ``pass_name`` on ``text`` through ``iree-opt`` and check every
    fused op it produced (module docstring). Raises :class:`IreeMissing` without
    IREE and :class:`VerifiedIndexingError` when MLIR rejects the input."""
    flags = _pass_flags(pass_name)
    if "loc(" in text:  # the input's own locations may repeat: fresh ones, from MLIR's printing
        text = run_iree_opt(text, ["--strip-debuginfo"], source=source)
    before = run_iree_opt(text, PRINT_FLAGS, source=source)
    after_raw = run_iree_opt(before, [*flags, *PRINT_FLAGS], source=source)
    before, after_raw = _per_function(before), _per_function(after_raw)
    return validate_output(before, after_raw, source, pass_name=pass_name, timeout=timeout, seeds=seeds)


def validate_output(before: str, after_raw: str, source: str = "<input>", *, pass_name: str = DEFAULT_PASS,
                    timeout: float = 10.0, seeds: int = 3) -> MlirValidation:
    """The checks of :func:`validate_mlir` on a pass's input ``before`` and output
    ``after_raw``, both as ``iree-opt`` prints them with locations and unique SSA
    names (a test plants a wrong output here)."""
    from verified_indexing.legality.linalg_interpreter import HAVE_NUMPY
    from verified_indexing.legality.linalg_ir import parse_linalg_module

    after = _renamed(after_raw, _rename_table(before, after_raw))
    res = MlirValidation(pass_name, before=before, after=after)
    bops = list(parse_linalg_module(before, source).ops)
    aops = list(parse_linalg_module(after, "<pass output>").ops)
    from verified_indexing.legality.linalg import fusion_candidates

    cands = fusion_candidates(bops)
    from verified_indexing.legality.linalg import reshape_candidates

    through = reshape_candidates(before, bops)  # pairs through a tensor.expand_shape
    res.pairs = len({(id(p), id(c)) for p, c, _ in cands}) + len({(id(p), c.name) for p, c, _, _ in through})
    bdef = {r: op for op in bops for r in op.results}
    b_by_name = {op.name: op for op in bops}
    a_names = {op.name for op in aops}
    vanished = {op.name for op in bops if op.name not in a_names}

    from verified_indexing.legality.linalg_reshape import expand_shape_facts, reshape_facts

    bexp, aexp = reshape_facts(before), expand_shape_facts(after)
    acol = {v: f for v, f in reshape_facts(after).items() if v not in aexp}  # the output's collapse_shapes
    # the interpreter oracle: every value both modules compute
    empties = {m.group(1) for m in _EMPTY_ANY.finditer(after)}
    consts = {**_scalar_constants(before), **_scalar_constants(after)}
    observable = {v for m in _RETURN.finditer(after) for v in _SSA.findall(m.group(1))}
    returns_a, returns_b = _returns(after), _returns(before)
    adef = {r: op for op in aops for r in op.results}
    refuted_at: dict[str, dict[str, Any]] = {}
    unmatched = [v for args in _headers(after).values() for v in args if v.startswith("%h_")]
    if unmatched:  # the two runs would not get the same inputs: no comparison
        res.notes.append(f"function arguments of the pass's output not matched to the input's ({unmatched[0]}): "
                         "the interpreter oracle did not run")
    elif HAVE_NUMPY:
        for seed in range(seeds):
            env, notes = _inputs([before, after], seed)
            for n in notes:
                if n not in res.notes:
                    res.notes.append(n)
            eb, ea = _run(bops, env, bexp), _run(aops, env, {**aexp, **acol})
            res.oracle_runs += 1
            # the returned values, matched by the return's location, position by position
            for loc, avals in returns_a.items():
                bvals = returns_b.get(loc)
                if bvals is None or len(bvals) != len(avals):
                    continue
                for vb, va in zip(bvals, avals):
                    if vb not in eb or va not in ea:
                        continue
                    d = _first_difference(eb[vb], ea[va])
                    maker = adef.get(va)
                    key = maker.name if maker is not None else va
                    if d is not None and key not in refuted_at:
                        refuted_at[key] = {"seed": seed, "value": vb, "after_value": va,
                                           "shape": list(getattr(eb[vb], "shape", ())), "element": list(d[0]),
                                           "before": d[1], "after": d[2]}
            for op in aops:
                for r in op.results:
                    if (r in eb and r in ea and r not in env and r.split("#")[0] not in observable
                            and getattr(eb[r], "shape", ()) == getattr(ea[r], "shape", ())):
                        d = _first_difference(eb[r], ea[r])
                        if d is not None and not any(n.startswith(f"{r} (not returned)") for n in res.notes):
                            res.notes.append(
                                f"{r} (not returned) differs at an element after the pass, e.g. {list(d[0])}: "
                                f"{d[1]:g} before, {_show(d[2])} after; no returned value is found to differ "
                                "through it")
    else:
        res.notes.append("numpy is not installed: the interpreter oracle did not run")

    lines = {n: int(m.group(1)) for loc, ns in _defs_by_loc(before).items() for n in ns
             if (m := re.search(r'":(\d+):\d+\s*$', loc)) is not None}
    # reshape propagation (FoldReshapeWithGenericOpByExpansion): an op the pass rewrote over an expanded
    # iteration space (its result types changed) is checked to compute its original's expand_shape; a fused
    # op reading such a result reads the input's expand_shape of the original (renamed to it, when proven)
    from verified_indexing.legality.linalg_reshape import check_expanded

    facts = dict(aexp)
    undefined = empties | {m.group(1) for m in _EMPTY_ANY.finditer(before)}
    reshaped: set[str] = set()
    for a in aops:
        b = b_by_name.get(a.name)
        if (b is None or len(a.result_types) != len(b.result_types) or a.num_loops <= b.num_loops
                or [str(t) for t in a.result_types] == [str(t) for t in b.result_types]):
            continue  # not the op rewritten over more loops, with other result shapes
        reshaped.add(a.name)
        st, why, outs = check_expanded(a, b, facts, undefined)
        absorbed = _absorbed(b, bdef, vanished, bexp)
        if st != "proved" and absorbed:
            # the pass also fused producers into it: its original is the project's own fused op of that chain
            folded, note = _folded_chain(b, absorbed, before, timeout, bexp)
            if folded is not None:
                st2, why2, outs2 = check_expanded(a, folded, facts, undefined)
                if st2 == "proved":
                    st, why, outs = st2, f"{why2}; {note}", outs2
                else:
                    why = f"{why} (and against {note}: {why2})"
            else:
                why = f"{why} (the producers it absorbed, {', '.join(p.name for p in absorbed)}: {note})"
        if st == "proved":
            facts.update({o.value: o for o in outs})
        res.fused.append(FusedCheck(a.name, lines.get(a.name, b.line), (), st,
                                    f"reshape propagation by expansion: {why}"))
    before_expands = {(f.source, f.groups, f.shape): v for v, f in bexp.items()}

    def through_reshapes(a: Any) -> Any:
        ops_ = [dataclasses.replace(o, value=before_expands.get((facts[o.value].source, facts[o.value].groups,
                                                                  facts[o.value].shape), o.value))
                if o.value in facts and o.value not in a.results else o for o in a.operands]
        if [o.value for o in ops_] == [o.value for o in a.operands]:
            return a
        return dataclasses.replace(a, inputs=tuple(ops_[:len(a.inputs)]), outputs=tuple(ops_[len(a.inputs):]))

    folded_pairs: set[tuple[str, str]] = set()
    reshaped_values = {r for a in aops if a.name in reshaped for r in a.results}
    kept_same: set[str] = set()
    for a in aops:
        if a.name not in b_by_name:
            same = [b for b in bops if b.name in vanished and _same_op(a, b)]
            if len(same) == 1:  # an op the pass kept whose location was not unique
                vanished.discard(same[0].name)
                kept_same.add(a.name)
    for a in aops:
        c = b_by_name.get(a.name)
        if a.name in reshaped:
            continue
        a = through_reshapes(a)
        if c is None:
            if a.name in kept_same:
                continue
            if a.name.startswith("%h_"):
                res.fused.append(FusedCheck(a.name, _line_of(after, a.offset), (), "unknown",
                                            "an op of the pass's output with no counterpart in the input (its "
                                            "location matches no op)"))
            continue
        folded = _folded_fills(a, c, bdef, vanished)
        folded_pairs.update((q.name, c.name) for q in folded)
        # a producer the pass fused through a tensor.expand_shape: the input op and the pass's op both read
        # through the collapsed maps (exact rewrites), so the pair is checked as any other
        c, a, via = _read_through_reshapes(c, a, bdef, vanished, bexp, facts, reshaped_values)
        folded_pairs.update(via)
        absorbed = _absorbed(c, bdef, vanished, bexp) + folded
        if not absorbed:
            w = refuted_at.get(a.name)
            if w is not None:  # an op the pass kept computes something else: report it too
                res.fused.append(FusedCheck(a.name, lines.get(a.name, c.line), (), "refuted", _diff_note(w), w))
            else:
                # an init the pass replaced by a fresh tensor.empty where that is not shown to keep the
                # values (the payload reads it, or the map does not write every element)
                a2 = _unread_inits(a, c, empties)[0]
                changed = [f"{co.value} -> {ao.value}" for co, ao in zip(c.outputs, a2.outputs)
                           if len(a2.outputs) == len(c.outputs) and ao.value != co.value and ao.value in empties
                           and co.value not in empties]
                if changed:
                    res.fused.append(FusedCheck(
                        a.name, lines.get(a.name, c.line), (), "unknown",
                        f"the pass changed this op's init without fusing a producer into it ({', '.join(changed)}: "
                        "a tensor.empty), and the change is not shown to keep its values: its payload reads the "
                        "init, or its map does not write every element"))
            continue
        chk = _check_fused(_with_constants(a, consts), _with_constants(c, consts),
                           [_constant_scalars(_with_constants(p, consts), consts) for p in absorbed], bdef, before,
                           timeout, empties, {m.group(1) for m in _EMPTY_ANY.finditer(before)},
                           folded={q.name for q in folded}, bexp=bexp)
        w = refuted_at.get(a.name) or next((refuted_at[r] for r in a.results if r in refuted_at), None)
        if w is not None:
            w = _recheck(w, a, c, absorbed, bdef, before, after)
        if w is not None:
            if chk.status == "proved":
                from verified_indexing.legality.linalg_interpreter import Disagreement

                raise Disagreement(  # never happens unless the proof or the interpreter is wrong
                    f"internal disagreement: {a.name} proved, but the interpreter finds {_diff_note(w)}")
            chk = FusedCheck(chk.op, chk.line, chk.replaced, "refuted", _diff_note(w), w, chk.project,
                             chk.fused_text)
        res.fused.append(dataclasses.replace(chk, line=lines.get(chk.op, chk.line)))

    # a returned value of an op the pass kept differs: the fused op upstream of it
    # (when there is one, unproved) is what the pass got wrong
    fused_at = {f.op: i for i, f in enumerate(res.fused) if f.replaced or f.reason.startswith("the pass changed")}
    for f in [f for f in res.fused if not f.replaced and f.status == "refuted"]:
        assert f.witness is not None
        seen: set[str] = set()
        todo = [f.op]
        ups: list[int] = []
        while todo:
            v = todo.pop()
            cur = adef.get(v) or next((o for o in aops if o.name == v), None)
            if cur is None:
                continue
            for o in cur.operands:
                u = adef.get(o.value)
                if u is not None and u.name not in seen:
                    seen.add(u.name)
                    todo.append(u.name)
                    if u.name in fused_at:
                        ups.append(fused_at[u.name])
        if len(ups) == 1 and res.fused[ups[0]].status != "proved":
            up = res.fused[ups[0]]
            res.fused[ups[0]] = dataclasses.replace(
                up, status="refuted", witness=f.witness,
                reason=f"{_diff_note(f.witness)}, computed from this op by ops the pass kept unchanged "
                f"(the proof of this op: {up.reason.split(' (the interpreter found no difference')[0]})")
            res.fused.remove(f)

    # the pass's whole decision, modelled (pass_decision), against what it did
    absorbed_all = {q.name for a in aops if a.name in b_by_name
                    for q in _absorbed(b_by_name[a.name], bdef, vanished, bexp)}
    from verified_indexing.legality.linalg import (
        after_earlier_fusions,
        pass_decision,
        producer_uses,
        simulate_fusions,
        unused_results,
    )

    events = simulate_fusions(before, bops)
    for p, c, k in cands:
        dec = pass_decision(p, c, k, producer_uses(before, p, bops), unused_results(before, p), upstream=bops,
                        text=before)
        if not dec.fuses and dec.decided_by == "control function":
            dec = after_earlier_fusions(dec, p, events)
        observed = p.name in absorbed_all or (p.name, c.name) in folded_pairs
        res.decisions.append(Decision(p.name, c.name, dec.fuses, observed, dec.why, dec.decided_by))
    from verified_indexing.legality.linalg import reshape_decision

    for p, c, k, how in through:
        dec = reshape_decision(p, c, k, producer_uses(before, p, bops), how, b_by_name.get(c.name), before)
        observed = (p.name, c.name) in folded_pairs or p.name in absorbed_all
        res.decisions.append(Decision(p.name, c.name, dec.fuses, observed, dec.why, dec.decided_by))

    # pairs the pass left alone that the project proves legal
    for p, c, k in cands:
        if p.name in vanished or c.name in vanished:
            continue
        kept_c = next((x for x in aops if x.name == c.name), None)
        if kept_c is None or not any(o.value in p.results for o in kept_c.operands):
            continue
        why, project = _refusal(p, c, k, bops, before, timeout)
        if project == "legal" and all(not (r.producer == p.name and r.consumer == c.name) for r in res.refusals):
            res.refusals.append(Refusal(p.name, c.name, why, "legal"))
    return res


def _same_op(a: Any, b: Any) -> bool:
    """The same op (operands, maps, iterators, kind), results aside."""
    return bool(a.kind == b.kind and a.iterator_types == b.iterator_types and a.operands == b.operands)


def validate_jax(fn: Any, *args: Any, pass_name: str = DEFAULT_PASS, timeout: float = 10.0, seeds: int = 3
                 ) -> MlirValidation:
    """:func:`validate_mlir` on a JAX function: ``jax.jit(fn).lower(*args)`` gives
    StableHLO, IREE's input pipeline (``iree-compile --compile-to=input``) turns it
    into Linalg on tensors (``util.func``), and MLIR's pass runs on that."""
    import jax

    from verified_indexing.errors import UnsupportedError

    stablehlo = jax.jit(fn).lower(*args).as_text()
    exe = find_iree_opt()
    compile_exe = str(Path(exe).with_name("iree-compile")) if exe is not None else None
    if compile_exe is None or not Path(compile_exe).exists():
        raise IreeMissing("validate_jax needs IREE's iree-compile, which is not installed "
                          "(pip install 'verified-indexing[mlir]')")
    proc = subprocess.run([compile_exe, "--compile-to=input", "-", "-o", "-"], input=stablehlo, capture_output=True,
                          text=True, timeout=300, check=False)
    if proc.returncode != 0:
        raise UnsupportedError(f"iree-compile --compile-to=input failed: {proc.stderr.strip()[:2000]}")
    return validate_mlir(proc.stdout, "<jax>", pass_name=pass_name, timeout=timeout, seeds=seeds)


def _returns(text: str) -> dict[str, list[str]]:
    """Every return of ``text`` (``return``, ``func.return``, ``util.return``): its location -> its values."""
    return {m.group(2): re.findall(r"%[\w$.-]+(?:#\d+)?", m.group(1)) for m in _RET_LOC.finditer(text)}


def _show(x: float) -> str:
    return "undefined (NaN: an element of a tensor.empty)" if math.isnan(x) else f"{x:g}"


def _diff_note(w: dict[str, Any]) -> str:
    return (f"the interpreter (inputs seed {w['seed']}): the returned value {w['value']}{w['element']} (shape "
            f"{w['shape']}) is {w['before']:g} before the pass and {_show(w['after'])} after it")


def _absorbed(c: Any, bdef: dict[str, Any], vanished: set[str], bexp: Mapping[str, Any] | None = None) -> list[Any]:
    """The vanished producers feeding ``c`` (transitively through vanished ones, and
    through the input's ``tensor.expand_shape``s ``bexp``), nearest first."""
    out: list[Any] = []
    todo = [c]
    while todo:
        cur = todo.pop(0)
        for o in cur.operands:
            f = (bexp or {}).get(o.value)
            p = bdef.get(f.source if f is not None else o.value)
            if p is not None and p.name in vanished and p is not c and all(p is not q for q in out):
                out.append(p)
                todo.append(p)
    return out


def _recheck(w: dict[str, Any], a: Any, c: Any, absorbed: Sequence[Any], bdef: dict[str, Any], before: str,
             after: str) -> dict[str, Any] | None:
    """Re-run the replaced ops and the fused op alone on the witness's inputs; the
    witness stands when they differ at its element again."""
    env, _ = _inputs([before, after], int(w["seed"]))
    from verified_indexing.legality.linalg_reshape import expand_shape_facts

    full = _run(list(bdef.values()), env, expand_shape_facts(before))
    local = {o.value: full[o.value] for op in (*absorbed, c, a) for o in op.operands if o.value in full}
    eb = _run([*sorted(absorbed, key=lambda o: o.offset), c], dict(local))
    ea = _run([a], dict(local))
    rb, ra = w["value"], w.get("after_value", w["value"])
    if rb not in eb or ra not in ea:
        return w  # a value downstream: the whole modules' run stands
    d = _first_difference(eb[rb], ea[ra])
    return w if d is not None else None


def _init_reads_as_inputs(a: Any, rep: Any, timeout: float) -> tuple[Any, list[str]] | None:
    """The fused op keeps a producer result whose init the producer's payload reads
    (MLIR cannot drop that output): the payload reads the output's block argument.
    When the output's map is injective over the fused op's iteration domain (isl),
    every element is read once, before its only write, so the read is the init:
    ``a`` with that init read as an input instead (the whole-op proof's model of
    the pair), and the outputs so treated. ``None`` when not proven injective."""
    from verified_indexing.expr import Dim
    from verified_indexing.legality.inverse import is_injective
    from verified_indexing.legality.linalg_ir import _BLOCK_RE

    nco = len(rep.consumer.outputs)
    reads = [j for j in range(nco, len(a.outputs)) if a.payload_uses(len(a.inputs) + j)]
    if not reads:
        return a, []
    header = _BLOCK_RE.search(a.payload)
    if header is None or len(a.block_args) != len(a.operands) or rep.sizes is None:
        return None
    k = rep.sizes.k
    names_in, names_out = list(a.block_args[:len(a.inputs)]), list(a.block_args[len(a.inputs):])
    inputs = list(a.inputs)
    body = a.payload[header.end():]
    done: list[str] = []
    for j in reads:
        o = a.outputs[j]
        res = [Dim(i) for i in range(k)] + [e.substitute(dims=[Dim(k + i) for i in range(o.map.num_dims)])
                                            for e in o.map.results]
        try:
            inj = is_injective(rep.sizes.consumer_domain.replace(results=res), timeout=timeout)
        except VerifiedIndexingError:
            return None
        if not inj.proved:
            return None
        fresh = f"%h_init{j}"
        body = re.sub(re.escape(names_out[j]) + r"(?![\w$.-])", fresh, body)
        inputs.append(dataclasses.replace(o, is_input=True))
        names_in.append(fresh)
        done.append(o.value)
    names = names_in + names_out
    types = [op.type.element for op in (*inputs, *a.outputs)]
    hdr = "^bb0(" + ", ".join(f"{n}: {t}" for n, t in zip(names, types)) + "):"
    payload = a.payload[:header.start()] + hdr + body
    return dataclasses.replace(a, inputs=tuple(inputs), payload=payload, block_args=tuple(names)), done


def _unread_inits(a: Any, c: Any, empties: set[str]) -> tuple[Any, list[str]]:
    """MLIR's canonicalization gives an output whose init the payload does not read
    a fresh ``tensor.empty``: the fused op ``a`` with the consumer's init there
    instead (the same values when every element is written: the output map's
    results are distinct loops), and the inits swapped."""
    from dataclasses import replace

    from verified_indexing.expr import Dim

    outs = list(a.outputs)
    swapped = []
    if len(outs) < len(c.outputs):
        return a, []
    # the consumer's outputs come first (the producer results a fused op keeps follow them)
    for j, (ao, co) in enumerate(zip(a.outputs, c.outputs)):
        distinct = all(isinstance(e, Dim) for e in co.map.results) and len(
            {e.index for e in co.map.results}) == len(co.map.results)
        if (ao.value != co.value and ao.value in empties and ao.map == co.map and ao.type == co.type and distinct
                and not a.payload_uses(len(a.inputs) + j) and not c.payload_uses(len(c.inputs) + j)):
            outs[j] = replace(ao, value=co.value)
            swapped.append(co.value)
    return (replace(a, outputs=tuple(outs)) if swapped else a), swapped


def _scalar_constants(text: str) -> dict[str, str]:
    """Every scalar ``arith.constant`` of ``text``: its value -> its definition's right-hand side."""
    return {m.group(1): m.group(2) for m in _CONST_DEF.finditer(text)}


def _with_constants(op: Any, consts: dict[str, str]) -> Any:
    """``op`` with the scalar constants its payload reads from outside defined in the
    payload (the pass hoists a payload's constants out of it; the whole-op proof
    treats an outside value as an unknown)."""
    from verified_indexing.legality.linalg_ir import _BLOCK_RE

    header = _BLOCK_RE.search(op.payload)
    if header is None:
        return op
    body = op.payload[header.end():]
    defined = set(re.findall(r"(%[\w$.-]+)(?::\d+)?\s*=", body))
    used = [v for v in dict.fromkeys(_SSA.findall(body)) if v in consts and v not in defined]
    if not used:
        return op
    lines = "".join(f"\n    {v} = {consts[v]}" for v in used)
    return dataclasses.replace(op, payload=op.payload[:header.end()] + lines + body)


def _constant_scalars(op: Any, consts: dict[str, str]) -> Any:
    """``op`` with each scalar input that is a scalar ``arith.constant`` of the
    function (a ``linalg.fill``'s value, say) defined in its payload instead of
    read as an operand: the pass's fused op holds the constant itself
    (``FoldFillWithGenericOp`` then constant folding), and the whole-op proof
    treats an operand as an unknown value."""
    from verified_indexing.legality.linalg_ir import _BLOCK_RE

    header = _BLOCK_RE.search(op.payload)
    if header is None or len(op.block_args) != len(op.operands):
        return op
    drop = [i for i, o in enumerate(op.inputs) if o.type.kind == "scalar" and o.value in consts]
    if not drop:
        return op
    body = op.payload[header.end():]
    defs = ""
    for i in drop:
        fresh = f"%h_k{i}"
        body = re.sub(re.escape(op.block_args[i]) + r"(?![\w$.-])", fresh, body)
        defs += f"\n    {fresh} = {consts[op.inputs[i].value]}"
    keep = [i for i in range(len(op.operands)) if i not in drop]
    names = [op.block_args[i] for i in keep]
    types = [op.operands[i].type.element for i in keep]
    hdr = "^bb0(" + ", ".join(f"{n}: {t}" for n, t in zip(names, types)) + "):"
    payload = op.payload[:header.start()] + hdr + defs + body
    inputs = tuple(o for i, o in enumerate(op.inputs) if i not in drop)
    return dataclasses.replace(op, inputs=inputs, payload=payload, block_args=tuple(names))


def _preserved_last(a: Any, c: Any, absorbed: Sequence[Any], empties: set[str], before_empties: set[str]
                    ) -> tuple[Any, list[str]] | None:
    """MLIR's fused op returns the producer results it preserves first; the
    project's, last: ``a`` with those outputs (and yields, results) moved last,
    and the producer results they are. ``None`` when they are not matched (one
    producer; an init is the producer's, or a fresh ``tensor.empty`` for a
    producer init that is a ``tensor.empty`` too: undefined either way)."""
    if len(absorbed) != 1:
        return None
    p = absorbed[0]
    n = len(a.outputs) - len(c.outputs)
    if n <= 0 or n > len(p.outputs):
        return None
    names: list[str] = []
    outs = list(a.outputs)
    taken: set[int] = set()
    for i in range(n):
        o = a.outputs[i]
        js = [j for j, po in enumerate(p.outputs) if j not in taken and po.value == o.value]
        if not js and o.value in empties:
            # an init neither op reads, and either undefined before too or written everywhere (its map's
            # results are distinct loops): the fresh tensor.empty holds the same values once written
            js = [j for j, po in enumerate(p.outputs) if j not in taken and po.type == o.type
                  and (po.value in before_empties or _writes_every_element(po.map))
                  and not p.payload_uses(len(p.inputs) + j) and not a.payload_uses(len(a.inputs) + i)]
        if len(js) != 1 or js[0] >= len(p.results):
            return None
        taken.add(js[0])
        names.append(p.results[js[0]])
        outs[i] = dataclasses.replace(o, value=p.outputs[js[0]].value)
    m = re.search(r"linalg\.yield\s+([^:\n]*?)\s*:\s*([^\n]*)", a.payload)
    if m is None:
        return None
    vals = [v.strip() for v in m.group(1).split(",")]
    types = [t.strip() for t in m.group(2).split(",")]
    if len(vals) != len(a.outputs) or len(types) != len(vals):
        return None
    vals, types = vals[n:] + vals[:n], types[n:] + types[:n]
    payload = a.payload[:m.start()] + f"linalg.yield {', '.join(vals)} : {', '.join(types)}" + a.payload[m.end():]
    results = a.results[n:] + a.results[:n] if len(a.results) == len(a.outputs) else a.results
    # the block arguments follow the outputs: the payload's header is rebuilt in the new order
    from verified_indexing.legality.linalg_ir import _BLOCK_RE

    header = _BLOCK_RE.search(payload)
    if header is None or len(a.block_args) != len(a.operands):
        return None
    ni = len(a.inputs)
    bnames = [*a.block_args[:ni], *a.block_args[ni + n:], *a.block_args[ni:ni + n]]
    new_outs = outs[n:] + outs[:n]
    types = [o.type.element for o in (*a.inputs, *new_outs)]
    hdr = "^bb0(" + ", ".join(f"{b}: {t}" for b, t in zip(bnames, types)) + "):"
    payload = payload[:header.start()] + hdr + payload[header.end():]
    moved = dataclasses.replace(a, outputs=tuple(new_outs), payload=payload, results=results,
                                result_types=a.result_types[n:] + a.result_types[:n], block_args=tuple(bnames))
    return moved, names


def _folded_chain(c: Any, absorbed: Sequence[Any], before: str, timeout: float,
                  bexp: Mapping[str, Any] | None = None) -> tuple[Any | None, str]:
    """The project's fused op of the chain ``absorbed`` -> ``c`` (each step proven
    legal by the project: every value of the chain, every size), named as ``c``;
    ``None`` and why when a step is not legal."""
    from verified_indexing.legality.linalg import check_fusion, fused_generic_text, results_used_elsewhere
    from verified_indexing.legality.linalg_ir import parse_linalg

    current = c
    remaining = list(absorbed)
    while remaining:
        step = _next_in_chain(current, remaining, bexp)
        if step is None:
            return None, "the absorbed producers do not form a chain into it"
        current, p, k = step
        keep = results_used_elsewhere(before, p, c, k) if current is c else ()
        if keep:
            return None, f"{p.name} has other uses"
        try:
            rep = check_fusion(p, current, operand_index=k, timeout=timeout)
        except VerifiedIndexingError as exc:
            return None, f"the pair {p.name} -> {current.name}: {exc}"
        text = fused_generic_text(rep) if rep.condition in (None, "every size") else None
        if text is None:
            return None, f"the project does not prove fusing {p.name} into {current.name} legal ({rep.reason})"
        (fop,) = parse_linalg(text)
        current = dataclasses.replace(fop, results=c.results, name=c.name)
    return current, (f"the project's fused op of {', '.join(p.name for p in absorbed)} into {c.name} (proven to "
                     "compute what they compute, every size)")


def _read_through_reshapes(c: Any, a: Any, bdef: dict[str, Any], vanished: set[str], bexp: Mapping[str, Any],
                           aexp: Mapping[str, Any], reshaped_values: set[str]) -> tuple[Any, Any, set[tuple[str, str]]]:
    """``c`` reading each ``tensor.expand_shape`` of a vanished producer's result
    through the collapsed map instead, and ``a`` reading each ``expand_shape`` of
    the pass's output whose source is a value of the input (not an op the pass
    rewrote over other shapes), and each op proven to be an input op expanded
    (``aexp`` holds both), the same way (:func:`~verified_indexing.legality.linalg_reshape.read_through`);
    and the (producer, consumer) pairs so joined."""
    from verified_indexing.legality.linalg_reshape import read_through

    via: set[tuple[str, str]] = set()
    if any(o.value in bexp for o in c.operands):
        for k, o in enumerate(c.operands):
            f = bexp.get(o.value)
            p = bdef.get(f.source) if f is not None else None
            if f is None or p is None or p.name not in vanished:
                continue
            ri = p.results.index(f.source)
            if ri < len(p.result_types) and tuple(p.result_types[ri].shape) == f.source_shape:
                c = read_through(c, k, f, p.result_types[ri])
                via.add((p.name, c.name))
    for k, o in enumerate(a.operands):
        f = aexp.get(o.value)
        # an expand_shape of an input value (read through), or an op proven to compute an input op's
        # expand_shape (its value and the input op's share the name): exact rewrites of what a reads
        if f is not None and (f.source not in reshaped_values or (f.value == f.source and o.value in reshaped_values)):
            a = read_through(a, k, f)
    return c, a, via


def _folded_fills(a: Any, c: Any, bdef: dict[str, Any], vanished: set[str]) -> list[Any]:
    """The ``linalg.fill``s the input op ``c`` reads as inputs that the pass's op
    ``a`` (same location) no longer reads, though they stay (another use):
    ``FoldFillWithGenericOp`` folded them into ``a``."""
    out: list[Any] = []
    for o in c.inputs:
        p = bdef.get(o.value)
        if (p is not None and p.kind == "linalg.fill" and p.name not in vanished and all(p is not q for q in out)
                and not any(x.value in p.results for x in a.operands)):
            out.append(p)
    return out


def _next_in_chain(current: Any, remaining: list[Any], bexp: Mapping[str, Any] | None) -> tuple[Any, Any, int] | None:
    """The next step of a chain of producers fused into ``current``: the op of ``remaining`` whose result
    ``current`` reads, ``current`` (reading it through an input tensor.expand_shape / collapse_shape when it
    reads none directly: :func:`_through_reshape_step`) and the operand it reads it at; the op is removed from
    ``remaining`` unless ``current`` reads it at another operand too (fused again through that one, as the
    pass does). ``None`` when ``current`` reads none of them."""
    p = next((q for q in remaining if any(o.value in q.results for o in current.operands)), None)
    if p is None and bexp:
        current, p = _through_reshape_step(current, remaining, bexp)
    if p is None:
        return None
    k = next(i for i, o in enumerate(current.operands) if o.value in p.results)
    if sum(1 for o in current.operands if o.value in p.results) == 1:
        remaining.remove(p)
    return current, p, k


def _through_reshape_step(current: Any, remaining: Sequence[Any], bexp: Mapping[str, Any]) -> tuple[Any, Any]:
    """``current`` reading, through an input reshape, the result of one of ``remaining``
    (:func:`~verified_indexing.legality.linalg_reshape.read_through`), and that op;
    ``(current, None)`` when it reads none so."""
    from verified_indexing.legality.linalg_reshape import read_through

    for k, o in enumerate(current.operands):
        f = bexp.get(o.value)
        q = next((q for q in remaining if f is not None and f.source in q.results), None)
        if f is not None and q is not None:
            ri = q.results.index(f.source)
            if ri < len(q.result_types) and tuple(q.result_types[ri].shape) == f.source_shape:
                return read_through(current, k, f, q.result_types[ri]), q
    return current, None


def _writes_every_element(m: Any) -> bool:
    """Whether an output map's results are distinct loops (each of the tensor's
    dimensions is a loop of its size: every element is written)."""
    from verified_indexing.expr import Dim

    return all(isinstance(e, Dim) for e in m.results) and len({e.index for e in m.results}) == len(m.results)


def _check_fused(a: Any, c: Any, absorbed: Sequence[Any], bdef: dict[str, Any], before: str,
                 timeout: float, empties: set[str] = frozenset(),  # type: ignore[assignment]
                 before_empties: set[str] = frozenset(),  # type: ignore[assignment]
                 folded: set[str] = frozenset(),  # type: ignore[assignment]
                 bexp: Mapping[str, Any] | None = None) -> FusedCheck:
    """The proof of MLIR's fused op ``a`` against ``c`` and the producers it absorbed
    (``folded``: fills folded into it that stay for their other uses: nothing of
    theirs is returned by ``a``)."""
    from verified_indexing.legality.linalg import check_fusion, fused_generic_text, results_used_elsewhere, semantics
    from verified_indexing.legality.linalg_ir import parse_linalg
    from verified_indexing.legality.linalg_semantics import prove_fused_equivalent

    replaced = tuple(p.name for p in absorbed)
    text = ""

    def unknown(why: str, project: str = "") -> FusedCheck:
        return FusedCheck(c.name, c.line, replaced, "unknown", why, None, project, text)

    preserved: list[str] = []
    if len(a.outputs) != len(c.outputs):
        moved = _preserved_last(a, c, absorbed, empties, before_empties)
        if moved is None:
            return unknown(f"the fused op has {len(a.outputs)} outputs, the consumer {len(c.outputs)}: the "
                           "producer results the pass preserved (returned first) are not matched")
        a, preserved = moved
    current = c
    remaining = list(absorbed)
    while remaining:
        step = _next_in_chain(current, remaining, bexp)
        if step is None:
            return unknown("the replaced producers do not form a chain into the consumer")
        current, p, k = step
        keep = results_used_elsewhere(before, p, c, k) if current is c and p.name not in folded else ()
        if preserved and not remaining:
            keep = tuple(preserved)
        try:
            rep = check_fusion(p, current, operand_index=k, timeout=timeout, keep=keep)
        except VerifiedIndexingError as exc:
            return unknown(f"the project cannot state the pair {p.name} -> {current.name}: {exc}")
        project = f"{rep.status}: {rep.reason}"
        if rep.status != "legal" or (rep.condition not in (None, "every size")):
            return unknown(f"the project does not prove fusing {p.name} into {current.name} legal ({project}): "
                           "no proof of the pass's op", project)
        if not remaining:
            if len(rep.kept) != len(preserved):
                return unknown(f"the pass preserved {len(preserved)} producer result(s), the project's fusion "
                               f"keeps {len(rep.kept)}", project)
            a, swapped = _unread_inits(a, current, empties)
            as_inputs = _init_reads_as_inputs(a, rep, timeout)
            if as_inputs is None:
                return unknown("the fused op's payload reads the block argument of a producer result it keeps, "
                               "whose map is not proven injective over the fused op's loops: an element may be "
                               "read after the fused op wrote it (not the init)", project)
            a, read_once = as_inputs
            v, _ = prove_fused_equivalent(semantics(rep), a, timeout=timeout)
            if v.proved:
                n = len(absorbed)
                what = f"the pair {p.name} -> {c.name}" if n == 1 else f"the chain of {n + 1} ops into {c.name}"
                extra = (f"; the pass gave the fused op a fresh tensor.empty for the unread init(s) "
                         f"{', '.join(swapped)}") if swapped else ""
                if read_once:
                    extra += (f"; the kept output(s) {', '.join(read_once)} whose block argument the payload reads "
                              "are written once per element (injective map, isl): the read is the init")
                return FusedCheck(c.name, c.line, replaced, "proved",
                                  f"MLIR's fused op computes every value {what} computes (every size; whole-op "
                                  f"proof, the project proves the fusion legal){extra}", None, project, text)
            return unknown(f"the whole-op proof is {v.status}: {v.reason} (the interpreter found no difference "
                           "on the returned values it ran, so it is not reported as refuted)", project)
        ftxt = fused_generic_text(rep)
        if ftxt is None:
            return unknown(f"no fused op for the inner pair {p.name} -> {current.name}", project)
        text = ftxt
        (current,) = parse_linalg(ftxt)
    return unknown("nothing replaced")


def _refusal(p: Any, c: Any, k: int, bops: Sequence[Any], before: str, timeout: float) -> tuple[str, str]:
    """Why the pass would not fuse ``p`` into ``c`` (the pass's whole decision), and the project's status."""
    from verified_indexing.legality.linalg import (
        check_fusion,
        pass_decision,
        producer_uses,
        results_used_elsewhere,
        unused_results,
    )

    d = pass_decision(p, c, k, producer_uses(before, p, bops), unused_results(before, p), upstream=bops,
                        text=before)
    fuse, why = d.fuses, d.why
    if fuse:
        why = f"not explained by the model of the pass, which predicts a rewrite ({why})"
    try:
        rep = check_fusion(p, c, operand_index=k, timeout=timeout, keep=results_used_elsewhere(before, p, c, k))
    except VerifiedIndexingError as exc:
        return why, f"error: {exc}"
    ok = rep.status == "legal" and rep.condition in (None, "every size")
    return why, "legal" if ok else rep.status
