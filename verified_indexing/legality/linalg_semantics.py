"""The whole-op proof of a Linalg fusion: the fused op, read back, computes what
the producer-consumer pair computed, for every size.

A payload is read as a list of SSA statements (:func:`parse_payload`) and
evaluated symbolically (:class:`PayloadModel`) into z3 terms:

* values live in one uninterpreted sort ``Val``; every tensor operand ``%t`` of
  rank ``n`` is an uninterpreted function ``%t : Int^n -> Val`` (its elements);
* every payload operation is an uninterpreted function of its operands, keyed
  by its whole text with the SSA names blanked out (``arith.addf %_, %_ : f32``,
  ``arith.constant 1.0 : f32``, ``arith.cmpf olt, %_, %_ : f32``): the same
  operation on equal operands gives equal values, and nothing else is assumed
  (no commutativity, no arithmetic) -- sound for pure operations, which is what
  ``linalg.generic`` payloads are;
* ``linalg.index k`` is the integer loop index ``k``; ``affine.apply`` of an
  ``affine_map`` on such integers and ``arith.constant N : index`` are exact
  integer terms (the project's floordiv/mod semantics, :class:`Z3Encoder`);
  an integer used by any other operation enters ``Val`` through one
  uninterpreted injection ``index``;
* a value defined outside the payload (``%cst`` of the enclosing function) is a
  free ``Val`` constant named by its SSA name;
* ``linalg.yield`` gives the op's values for the iteration.

:func:`prove_fused_equivalent` states, over all sizes, all consumer
iterations ``c``, all producer iterations ``p`` writing the element the consumer
reads at ``c``, all accumulator values and all interpretations of the
uninterpreted functions, that each value the fused op yields equals the value
the consumer yields when fed with the producer's value. The fused op has the
consumer's loops, iterator types and outputs (checked), so equal per-iteration
values give equal results for reductions too (the same fold in the same order
over equal steps). A refutation gives the iteration, the element written and
both terms, with the sizes and iterations re-checked by the plain evaluator.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from verified_indexing.engines import Verdict, Z3Encoder
from verified_indexing.engines.z3 import Env
from verified_indexing.errors import UnsupportedError, VerifiedIndexingError
from verified_indexing.expr import AffineExpr, Dim, VarKind
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.legality._proofs import now as _now
from verified_indexing.legality.linalg_ir import _BLOCK_RE, GenericOp
from verified_indexing.legality.linalg_types import _statements
from verified_indexing.syntax import parse_affine_map

__all__ = [
    "Stmt", "Payload", "parse_payload", "PayloadModel", "prove_fused_equivalent", "FusionSemantics",
    "evaluate_payload", "separating_inputs", "same_value",
]

_SSA_RE = re.compile(r"%[\w.$-]+(?:#\d+)?")
_RESULT_RE = re.compile(r"^(%[\w.$-]+)(?::(\d+))?\s*=\s*(.*)$", re.DOTALL)
_OPNAME_RE = re.compile(r'^"?([A-Za-z_][\w.]*)"?')
_AFFINE_RE = re.compile(r"affine_map\s*<")


@dataclass(frozen=True)
class Stmt:
    """One payload statement: ``results = op operands`` (``key`` is the text with
    the SSA names blanked out: the identity of the operation)."""

    results: tuple[str, ...]
    op: str
    key: str
    operands: tuple[str, ...]
    text: str


@dataclass(frozen=True)
class Payload:
    """A payload region: its block arguments, statements and yielded values."""

    block_args: tuple[str, ...]
    stmts: tuple[Stmt, ...]
    yields: tuple[str, ...]

    def defined(self) -> set[str]:
        out = set(self.block_args)
        for s in self.stmts:
            out.update(s.results)
        return out


def parse_payload(op: GenericOp) -> Payload:
    """The payload of ``op`` as statements; :class:`UnsupportedError` when it is
    not one block of result-producing operations ending in ``linalg.yield``."""
    header = _BLOCK_RE.search(op.payload)
    if header is None:
        raise UnsupportedError(f"{op.name}: the payload has no block header")
    args = tuple(a.split(":")[0].strip() for a in header.group(1).split(",") if a.strip())
    body = op.payload[header.end():]
    if "^" in body:
        raise UnsupportedError(f"{op.name}: the payload has several blocks")
    # join continuation lines (an operation spread over lines)
    stmts_text = _statements(body)
    stmts: list[Stmt] = []
    yields: tuple[str, ...] | None = None
    for t in stmts_text:
        if yields is not None:
            raise UnsupportedError(f"{op.name}: operations after linalg.yield in the payload")
        m = _RESULT_RE.match(t)
        if m is None:
            om = _OPNAME_RE.match(t)
            if om is not None and om.group(1) == "linalg.yield":
                rest = t[om.end():]
                head = rest.split(":")[0] if not rest.lstrip().startswith("(") else rest.split(")")[0]
                yields = tuple(_SSA_RE.findall(head))
                continue
            raise UnsupportedError(f"{op.name}: payload operation without a result is not modelled: {t!r}")
        if re.search(r"\(\s*\{|\{\s*$|\bdo\b|\^", m.group(3)):
            raise UnsupportedError(f"{op.name}: a payload operation with a region is not modelled: {t!r}")
        count = int(m.group(2)) if m.group(2) else 1
        base = m.group(1)
        results = (base,) if count == 1 else tuple(f"{base}#{i}" for i in range(count))
        rhs = m.group(3).strip()
        om = _OPNAME_RE.match(rhs)
        if om is None:
            raise UnsupportedError(f"{op.name}: cannot read the payload operation {t!r}")
        operands = tuple(_SSA_RE.findall(rhs))
        key = re.sub(r"\s+", " ", _SSA_RE.sub("%_", rhs)).replace('"', "")
        stmts.append(Stmt(results, om.group(1), key, operands, t))
    if yields is None:
        raise UnsupportedError(f"{op.name}: the payload does not end in linalg.yield")
    names = [*args, *(r for s in stmts for r in s.results)]
    if len(set(names)) != len(names):
        dup = next(n for n in names if names.count(n) > 1)
        raise UnsupportedError(f"{op.name}: {dup} is defined twice in the payload (not SSA)")
    return Payload(args, tuple(stmts), yields)


class PayloadModel:
    """Symbolic evaluation of payloads into z3 terms (module docstring)."""

    def __init__(self, enc: Z3Encoder) -> None:
        self.enc = enc
        z3 = enc.z3
        self.z3 = z3
        self.val = z3.DeclareSort("Val", enc.ctx)
        self._funcs: dict[tuple[str, int, int], Any] = {}
        self._names: dict[str, int] = {}
        self._consts: dict[str, Any] = {}

    def _fresh_name(self, base: str) -> str:
        n = self._names.get(base, 0)
        self._names[base] = n + 1
        return base if n == 0 else f"{base}'{n}"

    def func(self, key: str, arity: int, index: int, name: str) -> Any:
        k = (key, arity, index)
        f = self._funcs.get(k)
        if f is None:
            sorts = [self.val] * arity + [self.val]
            if key.startswith("tensor "):
                sorts = [self.z3.IntSort(self.enc.ctx)] * arity + [self.val]
            elif key == "index":
                sorts = [self.z3.IntSort(self.enc.ctx), self.val]
            elif key == "bool":
                sorts = [self.z3.BoolSort(self.enc.ctx), self.val]
            nm = self._fresh_name(name)
            f = self.z3.Function(nm, *sorts) if len(sorts) > 1 else self.z3.Const(nm, self.val)
            self._funcs[k] = f
        return f

    def const(self, name: str) -> Any:
        c = self._consts.get(name)
        if c is None:
            c = self.z3.Const(name, self.val)
            self._consts[name] = c
        return c

    def read(self, tensor: str, indices: Sequence[Any]) -> Any:
        """Element ``indices`` of the tensor (or scalar) operand ``tensor``."""
        if not indices:
            return self.const(tensor)
        return self.func(f"tensor {tensor}", len(indices), 0, tensor)(*indices)

    def as_val(self, t: Any) -> Any:
        if t.sort() == self.val:
            return t
        if self.z3.is_bool(t):
            return self.func("bool", 1, 0, "bool")(t)
        return self.func("index", 1, 0, "index")(t)

    def run(self, payload: Payload, args: Sequence[Any], loops: Sequence[Any], owner: str) -> list[Any]:
        """The yielded terms for block arguments ``args`` and loop indices ``loops``."""
        env: dict[str, Any] = dict(zip(payload.block_args, args))
        for s in payload.stmts:
            vals: list[Any]
            if s.op == "linalg.index":
                m = re.search(r"linalg\.index\s+(\d+)", s.key)
                if m is None or int(m.group(1)) >= len(loops):
                    raise UnsupportedError(f"{owner}: {s.text!r} names no loop of the op")
                vals = [loops[int(m.group(1))]]
            elif s.op == "affine.apply":
                vals = [self._affine_apply(s, env, owner)]
            elif s.op == "arith.constant" and re.fullmatch(r"arith\.constant (-?\d+) : index", s.key):
                vals = [self.enc.int_val(int(s.key.split()[1]))]
            elif (exact := self._exact(s, env)) is not None:
                vals = [exact]
            else:
                ops = [self._value(x, env) for x in s.operands]
                ops = [self.as_val(x) for x in ops]
                vals = [self.func(s.key, len(ops), i, s.op if len(s.results) == 1 else f"{s.op}#{i}")(*ops)
                        if ops else self.func(s.key, 0, i, s.op if len(s.results) == 1 else f"{s.op}#{i}")
                        for i in range(len(s.results))]
            for r, v in zip(s.results, vals):
                env[r] = v
        return [self.as_val(self._value(y, env)) for y in payload.yields]

    _CMPI: ClassVar[dict[str, str]] = {
        "eq": "__eq__", "ne": "__ne__", "slt": "__lt__", "sle": "__le__", "sgt": "__gt__", "sge": "__ge__",
        "ult": "__lt__", "ule": "__le__", "ugt": "__gt__", "uge": "__ge__",
    }

    def _exact(self, s: Stmt, env: dict[str, Any]) -> Any | None:
        """``arith.cmpi`` of two index values, ``arith.andi``/``ori`` of two
        booleans and ``arith.select`` on a boolean, interpreted exactly (index
        values are non-negative here, so the unsigned predicates agree);
        ``None`` for anything else (then uninterpreted)."""
        z3 = self.z3
        ops = [self._value(x, env) for x in s.operands]
        if s.op == "arith.cmpi" and len(ops) == 2 and s.key.endswith(": index"):
            m = re.match(r"arith\.cmpi (\w+),", s.key)
            if m and m.group(1) in self._CMPI and all(z3.is_int(o) for o in ops):
                return getattr(ops[0], self._CMPI[m.group(1)])(ops[1])
        if s.op in ("arith.andi", "arith.ori") and len(ops) == 2 and all(z3.is_bool(o) for o in ops):
            return z3.And(*ops) if s.op == "arith.andi" else z3.Or(*ops)
        if s.op == "arith.select" and len(ops) == 3 and z3.is_bool(ops[0]):
            return z3.If(ops[0], self.as_val(ops[1]), self.as_val(ops[2]))
        return None

    def _value(self, name: str, env: dict[str, Any]) -> Any:
        if name in env:
            return env[name]
        return self.const(name)  # defined outside the payload: a free value

    def _affine_apply(self, s: Stmt, env: dict[str, Any], owner: str) -> Any:
        m = _AFFINE_RE.search(s.text)
        if m is None:
            raise UnsupportedError(f"{owner}: affine.apply needs an inline affine_map: {s.text!r}")
        depth, i = 0, m.end() - 1
        while i < len(s.text):
            if s.text[i] == "<":
                depth += 1
            elif s.text[i] == ">" and s.text[i - 1] != "-":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        amap = parse_affine_map(s.text[m.start(): i + 1])
        ops = [self._value(x, env) for x in s.operands]
        if amap.num_results != 1 or amap.num_symbols or len(ops) != amap.num_dims:
            raise UnsupportedError(f"{owner}: affine.apply with symbols or several results: {s.text!r}")
        if any(o.sort() == self.val for o in ops):
            raise UnsupportedError(f"{owner}: affine.apply of a non-index value: {s.text!r}")
        return self.enc.expr(amap.results[0], {("d", j): o for j, o in enumerate(ops)})


@dataclass(frozen=True)
class FusionSemantics:
    """What the whole-op proof needs of a pair: the sized iteration domains
    (``k`` leading size dims shared by both), the consumer operand read and the
    producer result written."""

    producer: GenericOp
    consumer: GenericOp
    operand_index: int
    result_index: int
    producer_domain: IndexingMap  # dims: sizes then producer loops
    consumer_domain: IndexingMap  # dims: sizes then consumer loops
    num_sizes: int
    size_names: tuple[str, ...] = ()
    first_visit: str | None = None  # outs fusion: "always" or "reduction-zero"
    kept: tuple[tuple[int, Any], ...] = ()  # (producer result, fused output map) returned by the fused op too


def _exprs(enc: Z3Encoder, results: Sequence[AffineExpr], env: Env) -> list[Any]:
    return [enc.expr(r, env) for r in results]


def _shift(m: Any, k: int) -> list[AffineExpr]:
    """The results of an AffineMap over the loops, as expressions over (sizes, loops)."""
    return [r.substitute(dims=[Dim(k + i) for i in range(m.num_dims)]) for r in m.results]


def prove_fused_equivalent(sem: FusionSemantics, fused: GenericOp, *, timeout: float = 10.0
                           ) -> tuple[Verdict, dict[str, Any] | None]:
    """The whole-op proof (module docstring) of the fused op ``fused`` (read back
    from its text) against the pair. Returns the verdict and, when refuted, a
    witness ``{sizes, consumer_iteration, producer_iteration, result, element,
    original, fused, note}``."""
    question = "the fused op, read back, yields what the pair yields (every size, every iteration)"
    t0 = _now()
    p, c = sem.producer, sem.consumer
    k = sem.num_sizes

    def verdict(status: str, reason: str = "", engine: str = "z3") -> Verdict:
        return Verdict(status, engine, _now() - t0, question, reason)  # type: ignore[arg-type]

    if fused.iterator_types != c.iterator_types:
        return verdict("refuted", f"the fused op's iterators {list(fused.iterator_types)} are not the consumer's "
                       f"{list(c.iterator_types)}", "syntax"), None
    operand = c.operands[sem.operand_index]
    into_outs = not operand.is_input
    j0 = sem.operand_index - len(c.inputs)
    expected = [(p.outputs[sem.result_index].value if into_outs and j == j0 else o.value, o.map)
                for j, o in enumerate(c.outputs)]
    expected += [(p.outputs[rk].value, m) for rk, m in sem.kept]
    if [(o.value, o.map) for o in fused.outputs] != expected:
        return verdict("refuted", "the fused op's outputs are not the consumer's outputs with the consumer's maps "
                       "(the producer's init in place of the fused init)", "syntax"), None
    if into_outs and sem.first_visit not in ("always", "reduction-zero"):
        return verdict("unknown", "the first write of each element is not modelled", "syntax"), None
    try:
        pp, cp, fp = parse_payload(p), parse_payload(c), parse_payload(fused)
    except UnsupportedError as exc:
        return verdict("unknown", str(exc), "syntax"), None
    enc = Z3Encoder()
    model = PayloadModel(enc)
    z3 = enc.z3
    sizes = [enc.int_var(n) for n in (sem.size_names or [f"N{i}" for i in range(k)])]
    penv: dict[tuple[VarKind, int], Any] = {("d", i): sizes[i] for i in range(k)}
    penv.update({("d", k + i): enc.int_var(f"p{i}") for i in range(p.num_loops)})
    cenv: dict[tuple[VarKind, int], Any] = {("d", i): sizes[i] for i in range(k)}
    cenv.update({("d", k + i): enc.int_var(f"c{i}") for i in range(c.num_loops)})
    ploops = [penv[("d", k + i)] for i in range(p.num_loops)]
    cloops = [cenv[("d", k + i)] for i in range(c.num_loops)]
    try:
        facts = enc.domain(sem.producer_domain, penv) + enc.domain(sem.consumer_domain, cenv)
        write = _exprs(enc, _shift(p.outputs[sem.result_index].map, k), penv)
        read = _exprs(enc, _shift(operand.map, k), cenv)
        facts += [w == r for w, r in zip(write, read)]
        # the producer's values at p
        pargs = [model.read(o.value, _exprs(enc, _shift(o.map, k), penv)) for o in p.operands]
        pvals = model.run(pp, pargs, ploops, p.name)
        accs = [z3.Const(f"acc{j}", model.val) for j in range(len(c.outputs))]
        # Fusing into outs: at the first write of an element the consumer's
        # accumulator is the producer's value (the pair) and the fused op's init
        # element (the fused op); afterwards both are the running value.
        first = z3.BoolVal(sem.first_visit == "always", enc.ctx)
        if sem.first_visit == "reduction-zero":
            first = z3.And(*(cloops[i] == 0 for i, t in enumerate(c.iterator_types) if t != "parallel"))
        cargs: list[Any] = []
        for j, o in enumerate(c.operands):
            if j == sem.operand_index and not into_outs:
                cargs.append(pvals[sem.result_index])
            elif o.is_input:
                cargs.append(model.read(o.value, _exprs(enc, _shift(o.map, k), cenv)))
            elif into_outs and j == sem.operand_index:
                cargs.append(z3.If(first, pvals[sem.result_index], accs[j0]))
            else:
                cargs.append(accs[j - len(c.inputs)])
        original = model.run(cp, cargs, cloops, c.name)
        faccs = list(accs)
        if into_outs:
            init = model.read(fused.outputs[j0].value, _exprs(enc, _shift(fused.outputs[j0].map, k), cenv))
            faccs[j0] = z3.If(first, init, accs[j0])
        faccs += [z3.Const(f"kept{i}", model.val) for i in range(len(sem.kept))]
        fargs = [model.read(o.value, _exprs(enc, _shift(o.map, k), cenv)) for o in fused.inputs] + faccs
        fvals = model.run(fp, fargs, cloops, fused.name)
        original = original + [pvals[rk] for rk, _ in sem.kept]
    except (UnsupportedError, VerifiedIndexingError, KeyError) as exc:
        return verdict("unknown", f"the payloads could not be modelled: {exc}"), None
    if len(fvals) != len(original):
        return verdict("refuted", f"the fused op yields {len(fvals)} values, the consumer {len(original)}",
                       "syntax"), None
    s = enc.solver(timeout=timeout)
    diff = [a != b for a, b in zip(fvals, original)]
    s.add(*facts, *enc.side_conditions, z3.Or(*diff) if diff else z3.BoolVal(False, enc.ctx))
    r = s.check()
    if r == z3.unsat:
        return verdict("proved"), None
    if r != z3.sat:
        return verdict("unknown", f"z3: {s.reason_unknown()}"), None
    mdl = s.model()

    def num(x: Any) -> int:
        return int(mdl.eval(x, model_completion=True).as_long())

    size_vals = [num(x) for x in sizes]
    cv = [num(x) for x in cloops]
    pv = [num(x) for x in ploops]
    j = next(i for i, d in enumerate(diff) if z3.is_true(mdl.eval(d, model_completion=True)))
    # Re-check the iterations with the plain evaluator (the terms are syntax).
    if not (sem.consumer_domain.contains(size_vals + cv) and sem.producer_domain.contains(size_vals + pv)):
        return verdict("error", "encoding disagrees with evaluator"), None
    pw = sem.producer_domain.replace(results=_shift(p.outputs[sem.result_index].map, k))
    cr = sem.consumer_domain.replace(results=_shift(operand.map, k))
    if pw.evaluate(size_vals + pv) != cr.evaluate(size_vals + cv):
        return verdict("error", "encoding disagrees with evaluator"), None
    subst = [(x, enc.int_val(v)) for x, v in zip([*sizes, *cloops, *ploops], [*size_vals, *cv, *pv])]
    orig_t = str(z3.simplify(z3.substitute(original[j], *subst)))
    fused_t = str(z3.simplify(z3.substitute(fvals[j], *subst)))
    out_op = fused.outputs[j]
    out_map = sem.consumer_domain.replace(results=_shift(out_op.map, k))
    element = list(out_map.evaluate(size_vals + cv))
    size_txt = ", ".join(f"{n} = {v}" for n, v in zip(sem.size_names, size_vals))
    what = c.results[j] if j < len(c.results) else (p.results[sem.kept[j - len(c.outputs)][0]]
                                                    if j >= len(c.outputs) else out_op.value)
    note = (f"{'at ' + size_txt + ', ' if size_txt else ''}consumer iteration {tuple(cv)} (producer iteration "
            f"{tuple(pv)}) writes {what}{element}: the pair computes {orig_t}, the fused op {fused_t}")
    witness = {
        "sizes": dict(zip(sem.size_names, size_vals)),
        "consumer_iteration": cv,
        "producer_iteration": pv,
        "result": j,
        "element": element,
        "original": orig_t,
        "fused": fused_t,
        "note": note,
    }
    return verdict("refuted", note), witness


# ---------------------------------------------------------------------------
# Concrete evaluation (to confirm a refutation found over uninterpreted terms)
# ---------------------------------------------------------------------------

_FBIN = {
    "arith.addf": lambda a, b: a + b, "arith.subf": lambda a, b: a - b, "arith.mulf": lambda a, b: a * b,
}
_INT_OPS = {"arith.addi", "arith.subi", "arith.muli", "arith.divsi", "arith.divui", "arith.remsi", "arith.remui",
            "arith.maxsi", "arith.minsi", "arith.maxui", "arith.minui", "arith.andi", "arith.ori", "arith.xori"}


def _int_type(text: str) -> str:
    """The type an integer statement is written with (``... : i32``)."""
    return text.rsplit(":", 1)[1].split("loc(")[0].strip() if ":" in text else ""
_FCMP = {"oeq": "__eq__", "one": "__ne__", "olt": "__lt__", "ole": "__le__", "ogt": "__gt__", "oge": "__ge__",
         "eq": "__eq__", "ne": "__ne__", "slt": "__lt__", "sle": "__le__", "sgt": "__gt__", "sge": "__ge__"}


def _fdiv(a: float, b: float) -> float:
    if b == 0:
        if a == 0 or a != a:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def _fmax(a: float, b: float, pick_max: bool) -> float:
    if a != a or b != b:  # maximumf/minimumf propagate NaN
        return math.nan
    return max(a, b) if pick_max else min(a, b)


def evaluate_payload(payload: Payload, args: Sequence[Any], loops: Sequence[int]) -> list[Any] | None:
    """The payload's yielded values for concrete block arguments (floats, ints)
    and loop indices, with IEEE float semantics for the arith/math operations it
    knows and MLIR's integer semantics at the type's width for the integer ones
    (signed and unsigned; a value that is no integer, or an undefined case, gives
    ``None``); ``None`` when it meets any other operation (then nothing is claimed)."""
    env: dict[str, Any] = dict(zip(payload.block_args, args))
    for s in payload.stmts:
        ops: list[Any] = [env.get(x) for x in s.operands]
        if any(o is None for o in ops):
            return None  # a value of the enclosing function: unknown here
        out: Any
        try:
            if s.op == "linalg.index":
                out = loops[int(s.key.split()[1])]
            elif s.op == "arith.constant":
                m = re.fullmatch(r"arith\.constant (\S+) : (\w+)", s.key)
                if m is None:
                    return None
                lit, ty = m.group(1), m.group(2)
                out = (lit == "true") if lit in ("true", "false") else (float(lit) if ty.startswith(("f", "bf"))
                                                                        else int(lit))
            elif s.op in _FBIN:
                out = _FBIN[s.op](ops[0], ops[1])
            elif s.op in _INT_OPS and not all(isinstance(o, bool) for o in ops):
                # MLIR's integer semantics at the type's width (the Linalg interpreter's); a value that is no
                # integer of the type, or an undefined case (division by zero), gives no value
                from verified_indexing.legality.linalg_interpreter import int_binary

                out = int_binary(s.op, ops[0], ops[1], _int_type(s.text))
            elif s.op == "arith.divf":
                out = _fdiv(ops[0], ops[1])
            elif s.op in ("arith.maximumf", "arith.minimumf"):
                out = _fmax(ops[0], ops[1], s.op == "arith.maximumf")
            elif s.op == "arith.negf":
                out = -ops[0]
            elif s.op == "math.exp":
                out = math.exp(ops[0]) if ops[0] < 700 else math.inf
            elif s.op == "math.absf":
                out = abs(ops[0])
            elif s.op in ("arith.index_cast", "arith.sitofp"):
                out = float(ops[0]) if s.op == "arith.sitofp" else ops[0]
            elif s.op in ("arith.cmpf", "arith.cmpi"):
                pred = s.key.split()[1].rstrip(",")
                if pred not in _FCMP:
                    return None
                out = getattr(ops[0], _FCMP[pred])(ops[1])
            elif s.op == "arith.select":
                out = ops[1] if ops[0] else ops[2]
            else:
                return None
        except (ArithmeticError, ValueError, IndexError, NotImplementedError):
            return None
        for r in s.results:
            env[r] = out
    vals = [env.get(y) for y in payload.yields]
    return None if any(v is None for v in vals) else vals


def same_value(a: Any, b: Any) -> bool:
    """Equal values (two NaNs are the same value written)."""
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    return bool(a == b)


def separating_inputs(
    payload: Payload, reads: Sequence[Sequence[tuple[str, tuple[int, ...]]]], loops: Sequence[Sequence[int]],
    index: int, tries: int = 64,
) -> tuple[dict[str, float], list[Any]] | None:
    """Concrete operand elements for which the payload yields different values
    (result ``index``) at several iterations: ``reads[j]`` lists the operand
    elements (tensor, indices) iteration ``j`` reads, in block-argument order.
    Deterministic search over small integers, 0.5 and the infinities; ``None``
    when none separates them (or the payload has an operation not evaluated)."""
    import random

    rng = random.Random(0)
    keys = sorted({f"{t}{list(ix)}" for rs in reads for t, ix in rs})
    pool = [-2.0, -1.0, 0.0, 1.0, 2.0, 3.0, 0.5, math.inf, -math.inf]
    if any(st.op in _INT_OPS or st.op == "arith.cmpi" for st in payload.stmts):
        pool = [-2.0, -1.0, 0.0, 1.0, 2.0, 3.0]  # integer operands: integers only (0.5, inf are no i32 values)
    for n in range(tries):
        values = {kk: (pool[(n + i) % len(pool)] if n < len(pool) else rng.choice(pool)) for i, kk in enumerate(keys)}
        outs = []
        for rs, lp in zip(reads, loops):
            ys = evaluate_payload(payload, [values[f"{t}{list(ix)}"] for t, ix in rs], lp)
            if ys is None:
                return None
            outs.append(ys[index])
        if any(not same_value(outs[0], o) for o in outs[1:]):
            return values, outs
    return None
