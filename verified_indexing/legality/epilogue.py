"""Reduction epilogue fusion (TVM's ``fuse_reduction_epilogue``), legality checked, the fused form proven.

A reduction into ``C`` (an init block ``C__reduce_init`` storing ``I`` and an
update block ``C`` storing ``C[s] = C[s] (+) u(s, k)`` inside one more loop, the
reduction loop ``k``) followed by an elementwise epilogue ``D[w(t)] = g(C[r(t)], ...)``
is fused into one reduction that computes ``D`` directly; ``C`` disappears.

Two fused forms are generated, whichever applies first:

* **fold into the init** (TVM's bias-add fusion): when ``g(c) = c (+) b`` (or
  ``b (+) c``) with the reduction's own associative and commutative operator
  ``(+)`` (``+``, ``*``, ``max``, ``min``) and ``b`` independent of ``C``, the
  init becomes ``b`` (when ``I`` is the identity of ``(+)``, else ``I (+) b``)
  and the update accumulates into ``D``. Proof assumes: ``(+)`` associative,
  commutative, and ``I`` its identity (as TVM does for floats; rounding may
  differ).
* **epilogue on the last reduction iteration** (anything else, e.g. ReLU
  ``max(C, 0)``): the update accumulates into ``D`` and applies ``g`` to the new
  accumulator when ``k`` is the last iteration:
  ``D[w] = select((k == LAST), g(D[w] (+) u), (D[w] (+) u))``. The proof assumes
  no algebraic law: ``g`` is applied exactly once, after the last update.

Size parameters lead every map (every obligation for every size at once); a
symbolic reduction length ``K`` gives the guard ``k == K - 1`` and an init that
applies the epilogue when ``K <= 0``. Predicates (``T.where``) are part of the
blocks' domains: the init and update under one predicate over the outer loops,
kept by the fused stores. A block that never runs (a loop of extent 0) is
decided (both never run: removed; one runs: refused with its first iteration).

Obligations (each reported, with a witness when it fails): the reduction is
recognized; the epilogue is one store and the only reader of ``C``, which is not
an output; it reads ``C`` at one index tuple, injectively, and exactly the
region the reduction writes (both inclusions, isl); the epilogue's other inputs
are not written after the reduction starts; the read has a proven inverse
(which places the epilogue at the reduction's element). The fused program (ours
or one given with ``fused=``) is then compared with the original:

1. by exact evaluation (:mod:`~verified_indexing.legality.cinn_eval`) on a few
   deterministic inputs: a difference refutes the fusion with the element, the
   sizes and both values;
2. by induction over the reduction loop, with z3 on uninterpreted values (tensor
   reads, constants and operators are uninterpreted functions; only the laws
   named above are assumed): for every element, the fused accumulator ``G_n``
   and the original one ``F_n`` satisfy an invariant (``G_n = F_n (+) b`` for the
   fold form; ``G_n = F_n`` before the last iteration and ``G_K = g(F_K)`` for the
   last-iteration form) at ``n = 0``, it is preserved by every step
   ``0 <= n < K``, and at ``n = K`` it gives the epilogue's value; the fused
   store's indices equal the epilogue's.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from verified_indexing.engines import Verdict, Z3Encoder
from verified_indexing.engines.sizes import with_sizes_in_results
from verified_indexing.engines.z3 import Env
from verified_indexing.errors import VerifiedIndexingError
from verified_indexing.expr import AffineExpr, Dim
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.legality._proofs import now, reads_inside
from verified_indexing.legality.cinn_eval import INPUT_RULE, Unwritten, run_exact, tensor_of
from verified_indexing.legality.cinn_ir import (
    Bind,
    BinOp,
    BlockContext,
    Call,
    Cond,
    For,
    If,
    IndexValue,
    Load,
    Neg,
    Num,
    ScheduleBlock,
    Stmt,
    Store,
    Value,
    at_sizes,
    find_block,
    format_conds,
    format_program,
    program_params,
    program_sizes,
    walk_blocks,
)
from verified_indexing.legality.inline import (
    InlineCheck,
    _assign,
    _empty_domain,
    _encode_conds,
    _first_point,
    _Frame,
    _frame,
    _loop_bounds,
    _map_value,
    _only_store,
    _own_stores,
    _replace_block,
    _subst_value,
    _tidy_index,
    _value_loads,
    _ValueEncoder,
    access_conflicts,
)
from verified_indexing.legality.inverse import collision, inverse, is_injective

__all__ = ["EVALUATION_LIMIT", "EpilogueReport", "Reduction", "compare_programs", "evaluation_size",
           "find_reduction", "fuse_reduction_epilogue"]

EpilogueStatus = Literal["fused", "illegal", "unknown"]

#: Associative and commutative reduction operators and their identities (as values).
_IDENTITY: dict[str, Fraction] = {
    "+": Fraction(0),
    "*": Fraction(1),
    "max": -Fraction(340282347) * 10**30,
    "min": Fraction(340282347) * 10**30,
}


@dataclass(frozen=True)
class Reduction:
    """A recognized reduction: ``init`` and ``update`` blocks, the reduction
    loop, the operator (``+ * max min`` or ``""`` when the update is not
    ``C (+) u``) and the update value ``u`` (``None`` when not recognized)."""

    tensor: str
    init: BlockContext
    update: BlockContext
    init_store: Store
    update_store: Store
    loop: For
    op: str
    operand: Value | None


@dataclass(frozen=True)
class EpilogueReport:
    """The outcome of :func:`fuse_reduction_epilogue`: ``fused`` (every obligation
    proved, ``program`` is the fused program), ``illegal`` (a check failed or the
    fused program differs; ``witness`` says where) or ``unknown``."""

    block: str
    reduction: str
    status: EpilogueStatus
    reason: str
    checks: tuple[InlineCheck, ...]
    program: Stmt | None = None
    form: str = ""
    laws: tuple[str, ...] = field(default=())

    @property
    def exit_code(self) -> int:
        return {"fused": 0, "illegal": 1, "unknown": 2}[self.status]

    def __str__(self) -> str:
        """The command line's text (see :func:`verified_indexing._repr.report_str`)."""
        from verified_indexing._repr import report_str

        return report_str(self)

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        return {
            "block": self.block,
            "reduction": self.reduction,
            "status": self.status,
            "reason": self.reason,
            "form": self.form,
            "laws_assumed": list(self.laws),
            "checks": [c.to_json() for c in self.checks],
            "program": format_program(self.program) if self.program is not None else None,
        }


# ---------------------------------------------------------------------------
# Recognizing the reduction
# ---------------------------------------------------------------------------


def _single_store(ctx: BlockContext, allow_guards: bool = False) -> Store | None:
    """The block's one store (after an optional axis.bind); ``None`` for any
    other shape, and for predicated blocks unless ``allow_guards`` (predicates
    around the block or inside it around the store -- TVM's ``T.where`` --, which
    are part of its domain: :func:`~verified_indexing.legality.inline._frame` with the store)."""
    if ctx.guards and not allow_guards:
        return None
    own = _own_stores(ctx)
    body = ctx.block.body
    rest = [s for s in body if not isinstance(s, Bind)]
    if len(own) != 1 or len(rest) != 1 or len(body) > 2:
        return None
    if not isinstance(rest[0], Store) and not (allow_guards and _only_store(rest[0])):
        return None
    return own[0]


def _split_update(store: Store, frame: _Frame, tensor: str) -> tuple[str, Value | None]:
    """``(op, u)`` when the update is ``C (+) u`` / ``u (+) C`` with the self-load at the store's indices."""
    v = store.value

    def is_self(x: Value) -> bool:
        return isinstance(x, Load) and x.tensor == tensor and \
            [frame.resolve(i) for i in x.indices] == [frame.resolve(i) for i in store.indices]

    def free(x: Value) -> bool:
        return not any(ld.tensor == tensor for ld in _value_loads(x))

    if isinstance(v, BinOp) and v.op in ("+", "*"):
        if is_self(v.lhs) and free(v.rhs):
            return v.op, v.rhs
        if is_self(v.rhs) and free(v.lhs):
            return v.op, v.lhs
    if isinstance(v, Call) and v.name in ("max", "min") and len(v.args) == 2:
        a, b = v.args
        if is_self(a) and free(b):
            return v.name, b
        if is_self(b) and free(a):
            return v.name, a
    return "", None


def find_reduction(program: Stmt, tensor: str, *, predicated: bool = False) -> Reduction | str:
    """The reduction into ``tensor``, or why there is none that is modelled. With ``predicated``, the
    init and update blocks may run under one predicate (``T.where``, ``if``) over the outer loops, the
    same for both (the frames of the blocks with their stores carry it); without, a predicated block is
    not a modelled reduction."""
    contexts = list(walk_blocks(program))
    inits = [c for c in contexts if any(tensor_of(s.tensor) == tensor and s.tensor.endswith("__reduce_init")
                                        for s in _own_stores(c))]
    updates = [c for c in contexts if any(s.tensor == tensor for s in _own_stores(c))]
    if len(inits) != 1 or len(updates) != 1:
        return (f"{tensor} is not written by one init block ({tensor}__reduce_init) and one update block "
                f"({len(inits)} init, {len(updates)} update)")
    init, update = inits[0], updates[0]
    istore, ustore = _single_store(init, predicated), _single_store(update, predicated)
    if istore is None or ustore is None:
        return (f"the init and update blocks of {tensor} must each hold one store (after an optional axis.bind)"
                + ("" if predicated else ", not under a predicate"))
    n = len(init.loops)
    if len(update.loops) != n + 1 or any(a is not b for a, b in zip(init.loops, update.loops)):
        return (f"the update block {update.block.name} must sit in exactly one more loop (the reduction loop) "
                f"than the init block {init.block.name}, inside the same outer loops")
    if init.order > update.order:
        return f"the init block of {tensor} comes after its update block"
    uf, inf = _frame(update), _frame(init)
    u_idx = [uf.resolve(i) for i in ustore.indices]
    if any(n in {x.index for x in e.walk() if isinstance(x, Dim)} for e in u_idx):
        return f"the update's store indices depend on the reduction loop {update.loops[-1].var}"
    i_idx = [inf.resolve(i) for i in istore.indices]
    if u_idx != i_idx:
        return f"the init and update blocks of {tensor} write different index expressions"
    if any(ld.tensor == tensor for ld in _value_loads(istore.value)):
        return f"the init value of {tensor} reads {tensor}"
    self_loads = [ld for ld in _value_loads(ustore.value) if ld.tensor == tensor]
    if not self_loads:
        return f"the update block {update.block.name} does not read {tensor} (not a reduction)"
    if any([uf.resolve(i) for i in ld.indices] != u_idx for ld in self_loads):
        return f"the update block {update.block.name} reads {tensor} at another element than it writes"
    if predicated:
        pu, pi = _frame(update, ustore).conds(), _frame(init, istore).conds()
        if n in {x.index for a, _, b in pu for e in (a, b) for x in e.walk() if isinstance(x, Dim)}:
            return f"the update's predicate depends on the reduction loop {update.loops[-1].var}"
        if pu != pi:
            return f"the init and update blocks of {tensor} run under different predicates"
    op, operand = _split_update(ustore, uf, tensor)
    return Reduction(tensor, init, update, istore, ustore, update.loops[-1], op, operand)


# ---------------------------------------------------------------------------
# z3 encoding of values with an accumulator, selects and integer comparisons
# ---------------------------------------------------------------------------


def _canonical_num(text: str) -> str:
    t = text.rstrip("f")
    try:
        return str(Fraction(t))
    except ValueError:
        return t


def _is_int_like(v: Value) -> bool:
    return isinstance(v, IndexValue) or (isinstance(v, Num) and v.text.lstrip("-").isdigit())


class _AccEncoder(_ValueEncoder):
    """Uninterpreted values; numerals by value; ``select`` on an integer
    comparison is an if-then-else; loads of ``acc_tensor`` are ``acc``."""

    def value(self, v: Value, env: Env, load: Any = None) -> Any:
        z3 = self.enc.z3
        if isinstance(v, (Num, Neg)) and _num_value(v) is not None:
            return z3.Const(f"num {_num_value(v)}", self.sort)
        if isinstance(v, Call) and v.name == "select" and len(v.args) == 3:
            c = self.condition(v.args[0], env)
            if c is not None:
                return z3.If(c, self.value(v.args[1], env, load), self.value(v.args[2], env, load))
        return super().value(v, env, load)

    def condition(self, v: Value, env: Env) -> Any:
        z3 = self.enc.z3
        if isinstance(v, BinOp) and v.op in ("&&", "||"):
            a, b = self.condition(v.lhs, env), self.condition(v.rhs, env)
            if a is None or b is None:
                return None
            return z3.And(a, b) if v.op == "&&" else z3.Or(a, b)
        if isinstance(v, BinOp) and v.op in ("<", "<=", ">", ">=", "==", "!=") and _is_int_like(v.lhs) \
                and _is_int_like(v.rhs):
            a, b = self.int_term(v.lhs, env), self.int_term(v.rhs, env)
            return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[v.op]
        return None

    def int_term(self, v: Value, env: Env) -> Any:
        if isinstance(v, IndexValue):
            return self.enc.expr(v.expr, env)
        assert isinstance(v, Num)
        return self.enc.int_val(int(v.text))

    def combine(self, op: str, a: Any, b: Any) -> Any:
        if op in ("+", "*"):
            return self.func(f"op {op}", [a, b], [self.sort, self.sort])
        return self.func(f"call {op}", [a, b], [self.sort, self.sort])

    def laws(self, op: str, identity: bool) -> tuple[list[Any], list[str]]:
        z3 = self.enc.z3
        x, y, w = (z3.Const(n, self.sort) for n in ("law_x", "law_y", "law_z"))
        f = self.combine
        shown = op
        axioms = [z3.ForAll([x, y, w], f(op, f(op, x, y), w) == f(op, x, f(op, y, w))),
                  z3.ForAll([x, y], f(op, x, y) == f(op, y, x))]
        names = [f"{shown} is associative", f"{shown} is commutative"]
        if identity:
            e = z3.Const(f"num {_IDENTITY[op]}", self.sort)
            axioms.append(z3.ForAll([x], f(op, e, x) == x))
            names.append(f"{_IDENTITY_TEXT[op]} is the identity of {shown}")
        return axioms, names


_IDENTITY_TEXT = {"+": "0", "*": "1", "max": "-3.40282347e+38f", "min": "3.40282347e+38f"}


def _num_value(v: Value) -> Fraction | None:
    """The value of a numeral or a negated numeral."""
    sign = 1
    if isinstance(v, Neg):
        sign, v = -1, v.operand
    if not isinstance(v, Num):
        return None
    try:
        return sign * Fraction(_canonical_num(v.text))
    except ValueError:
        return None


def _is_identity(v: Value, op: str) -> bool:
    return op in _IDENTITY and _num_value(v) == _IDENTITY[op]


# ---------------------------------------------------------------------------
# Splitting the epilogue value g(c) = c (+) b
# ---------------------------------------------------------------------------


def _fold_operand(g: Value, tensor: str, op: str) -> Value | None:
    """``b`` when ``g`` is ``C[..] (+) b`` or ``b (+) C[..]`` with ``b`` free of ``C``."""
    def is_c(x: Value) -> bool:
        return isinstance(x, Load) and x.tensor == tensor

    def free(x: Value) -> bool:
        return not any(ld.tensor == tensor for ld in _value_loads(x))

    pair: tuple[Value, Value] | None = None
    if isinstance(g, BinOp) and g.op == op and op in ("+", "*"):
        pair = (g.lhs, g.rhs)
    elif isinstance(g, Call) and g.name == op and op in ("max", "min") and len(g.args) == 2:
        pair = (g.args[0], g.args[1])
    if pair is None:
        return None
    a, b = pair
    if is_c(a) and free(b):
        return b
    if is_c(b) and free(a):
        return a
    return None


def _combine_value(op: str, a: Value, b: Value) -> Value:
    return BinOp(op, a, b) if op in ("+", "*") else Call(op, (a, b))


# ---------------------------------------------------------------------------
# Fusion
# ---------------------------------------------------------------------------


def _materialized(program: Stmt, contexts: list[BlockContext], tensor: str, outputs: Iterable[str] | None,
                  exclude: Callable[[BlockContext], bool]) -> str | None:
    """Why ``tensor`` must stay materialized: a block of ``contexts`` (but the ``exclude``d)
    reads it, or it is a program output (``outputs``, default the program's parameters);
    ``None`` when neither."""
    readers = [c.block.name for c in contexts if not exclude(c)
               and any(ld.tensor == tensor for s in _own_stores(c) for ld in _value_loads(s.value))]
    out_set = set(outputs) if outputs is not None else set(program_params(program))
    if readers or tensor in out_set:
        what = f"{tensor} is also read by {', '.join(readers)}" if readers else f"{tensor} is a program output"
        return f"{what}; it must stay materialized"
    return None


def _outside_witness(rw: dict[str, Any], loops: list[str], k: int) -> tuple[dict[str, Any], tuple[int, ...]]:
    """A copy of :func:`reads_inside`'s witness ``rw`` (an iteration reaching an element outside the
    other map) with the element's ``k`` size coordinates dropped and the iteration named by ``loops``
    (``"iteration"``); and that iteration."""
    cw = dict(rw)
    it = tuple(rw["consumer_iteration"])
    cw["element"] = list(rw["element"][k:])
    cw["iteration"] = dict(zip(loops, it))
    return cw, it


def _one_side_runs(m: IndexingMap, loops: list[str], timeout: float, w_empty: bool, reader: str, writer: str,
                   tensor: str, dname: str, moved: str) -> tuple[str, dict[str, Any]] | None:
    """When only one of ``reader`` (reads ``tensor``) and ``writer`` (writes it) runs, the other's loops
    being empty (``w_empty``: the writer's): the note and the witness of the running side's first iteration
    (``m`` over ``loops``, z3, re-checked by the evaluator), an element read that nothing writes, or written
    by ``moved`` where the program writes no element of ``dname``; ``None`` when z3 finds no iteration."""
    point = _first_point(m, timeout)
    if point is None:
        return None
    elem = list(m.evaluate(point))
    if w_empty:
        note = (f"{writer} never runs (a loop of extent 0); {reader}'s iteration ({_assign(loops, point)}) "
                f"reads {tensor}{elem}, which nothing writes")
    else:
        note = (f"{reader} never runs (a loop of extent 0); {writer}'s iteration ({_assign(loops, point)}) "
                f"writes {tensor}{elem}: {moved} would write an element of {dname} the program never writes")
    return note, {"iteration": dict(zip(loops, point)), "element": elem, "note": note}


def fuse_reduction_epilogue(
    program: Stmt,
    block: str,
    *,
    outputs: Iterable[str] | None = None,
    fused: Stmt | None = None,
    timeout: float = 10.0,
) -> EpilogueReport:
    """Fuse the elementwise epilogue block ``block`` into the reduction whose
    tensor it reads (see the module docstring). With ``fused``, check that
    program (a candidate fusion, e.g. what a compiler produced) instead of
    generating one. Raises :class:`VerifiedIndexingError` when there is no such
    block."""
    contexts = list(walk_blocks(program))
    ectx = find_block(contexts, block)
    checks: list[InlineCheck] = []
    red_name = ""

    def report(status: EpilogueStatus, reason: str, prog: Stmt | None = None, form: str = "",
               laws: tuple[str, ...] = ()) -> EpilogueReport:
        return EpilogueReport(block, red_name, status, reason, tuple(checks), prog, form, laws)

    def refuse(name: str, detail: str, witness: dict[str, Any] | None = None, engine: str = "syntax") -> EpilogueReport:
        checks.append(InlineCheck(name, "refuted", detail, engine, witness))
        return report("illegal", detail)

    def give_up(name: str, detail: str, engine: str = "syntax") -> EpilogueReport:
        checks.append(InlineCheck(name, "unknown", detail, engine))
        return report("unknown", detail)

    def ok(name: str, detail: str = "", engine: str = "syntax") -> None:
        checks.append(InlineCheck(name, "proved", detail, engine))

    estore = _single_store(ectx, allow_guards=True)
    if estore is None or not ectx.loops:
        own = _own_stores(ectx)
        what = ("is not inside a loop nest" if estore is not None
                else "is under a predicate (T.where or if)" if ectx.guards or (len(own) == 1 and any(
                    not isinstance(x, (Bind, Store)) for x in ectx.block.body))
                else f"holds {len(own)} store(s) in {len(ectx.block.body)} statement(s)")
        return give_up("the epilogue is one store in a loop nest",
                       f"not modelled: block {block} {what}; only one store (after an optional axis.bind) inside "
                       "loops is")
    dname = estore.tensor
    # The reduction: the tensor the epilogue reads that has an init block.
    red: Reduction | None = None
    why = f"block {block} reads no reduction's tensor"
    for t in dict.fromkeys(ld.tensor for ld in _value_loads(estore.value)):
        found = find_reduction(program, t, predicated=True)
        if isinstance(found, Reduction):
            red = found
            break
        if any(c.block.name == f"{t}__reduce_init" or any(s.tensor == f"{t}__reduce_init" for s in _own_stores(c))
               for c in contexts):
            why = found
    if red is None:
        return give_up("the reduction is recognized", why)
    red_name = red.update.block.name
    ctensor = red.tensor
    ok("the reduction is recognized",
       f"init {red.init.block.name}, update {red_name} over loop {red.loop.var}"
       + (f", operator {red.op}" if red.op else ""))
    writers = [c.block.name for c in contexts if c is not ectx and any(tensor_of(s.tensor) == dname
                                                                      for s in _own_stores(c))]
    if writers or dname == ctensor:
        what = (f"{dname} is also written by {', '.join(writers)}" if writers
                else f"the epilogue writes {ctensor}, the reduction's own tensor")
        return refuse("the epilogue is one store in a loop nest", what)
    if ectx.order < red.update.order or any(a is b and a.kind != "size" for a, b in zip(ectx.loops, red.update.loops)):
        return give_up("the epilogue is one store in a loop nest",
                       f"block {block} must come after the reduction's loop nest, sharing no loop with it")
    ok("the epilogue is one store in a loop nest", f"{dname}[...] = ... is the only write of {dname}")
    kept = _materialized(program, contexts, ctensor, outputs, lambda c: c is ectx or c.order == red.update.order)
    if kept is not None:
        return refuse(f"{block} is the only reader of {ctensor}, which is not an output", kept)
    ok(f"{block} is the only reader of {ctensor}, which is not an output")
    ef = _frame(ectx, estore)
    cloads = [ld for ld in _value_loads(estore.value) if ld.tensor == ctensor]
    tuples = {tuple(ef.resolve(i) for i in ld.indices) for ld in cloads}
    if len(tuples) != 1:
        return refuse(f"{block} reads {ctensor} at one index tuple",
                      f"{block} reads {ctensor} at {len(tuples)} different index tuples; each element of the "
                      "fused reduction can feed only the epilogue iteration that reads it")
    ok(f"{block} reads {ctensor} at one index tuple")
    # Inputs of the epilogue must not change between the reduction's start and the epilogue (it moves
    # there), nor may a block in between read what it writes (z3, re-checked by evaluation).
    middle = [c for c in contexts if red.init.order <= c.order < ectx.order and c not in (red.init, red.update)]
    lname = f"{block}'s other inputs are not written during or after the reduction"
    ks = sum(1 for f in ectx.loops if f.kind == "size")
    inside = [c for c in middle if any(a is b and a.kind != "size" for a, b in zip(c.loops, red.update.loops))]
    for loads_of in (None, dname):
        status, note, wit = access_conflicts(ectx, estore, loads_of, inside, ks, timeout)
        if status != "proved":  # interleaved with the reduction: when it runs relative to the fused epilogue
            return give_up(lname, f"not modelled: a block inside the reduction's loop nest touches what {block} "
                           f"accesses ({note})", "z3")
        status, note, wit = access_conflicts(ectx, estore, loads_of, middle, ks, timeout)
        if status == "refuted":
            return refuse(lname, note, wit, "z3")
        if status != "proved":
            return give_up(lname, note, "z3")
    ok(lname, "", "z3" if middle else "syntax")
    red_reads = {ld.tensor for st in (red.init_store, red.update_store) for ld in _value_loads(st.value)}
    if dname in red_reads:
        # moved into the reduction, the epilogue's writes interleave with the reduction's reads of them
        return give_up(f"the reduction does not read {dname}, which {block} writes",
                       f"not modelled: the reduction {red_name} reads {dname}, which {block} writes (an update in "
                       f"place): fused, {block}'s writes would interleave with {red_name}'s reads")
    rf, inf = _frame(red.update, red.update_store), _frame(red.init, red.init_store)
    read = ef.domain(ef.resolve(i) for i in cloads[0].indices)
    written = inf.domain(inf.resolve(i) for i in red.init_store.indices)
    if read.is_known_empty or written.is_known_empty:  # a loop of extent 0: a block that never runs
        r_empty, w_empty = _empty_domain(read, timeout), _empty_domain(written, timeout)
        if r_empty and w_empty:
            ok(f"{block} and the reduction's outer loops never run", "both execute nothing: removed")
            gone: Stmt | None = program
            for name in (block, red.init.block.name, red.update.block.name):
                assert gone is not None
                gone = _replace_block(gone, name, lambda sb: None)
            assert gone is not None
            return report("fused", f"all obligations proved: {block} and the reduction never run; removed", gone)
        m, loops_of, who = (read, ectx, block) if w_empty else (written, red.init, red.init.block.name)
        name = (f"{block} reads only elements the reduction writes" if w_empty
                else f"{block} reads every element the reduction writes")
        one_side = _one_side_runs(m, [f.var for f in loops_of.loops], timeout, w_empty, block, "the reduction",
                                  ctensor, dname, "the fused reduction")
        if one_side is None:
            return give_up(name, f"whether {who} runs is not decided", "z3")
        note, witness = one_side
        return refuse(name, note, witness, "z3")
    if len(read.results) != len(written.results):
        raise VerifiedIndexingError(f"{block} reads {ctensor} with {len(read.results)} indices; it is written with "
                                    f"{len(written.results)}")
    k = ef.sizes  # size parameters: every obligation for every size at once (engines.sizes)
    if k != _frame(red.init).sizes:
        return give_up("the loop structure is modelled", "not modelled: the epilogue and the reduction see "
                       "different size parameters")
    inj = is_injective(read, timeout=timeout, sizes=k)
    rname = f"{block}'s read of {ctensor} is injective"
    enames = [f.var for f in ectx.loops]
    if inj.refuted:
        pair = collision(with_sizes_in_results(read, k), inj)
        assert pair is not None
        w: dict[str, Any] = {"iterations": [dict(zip(enames, pair[0])), dict(zip(enames, pair[1]))],
                             "element": list(pair[2][k:]),
                             "note": f"iterations ({_assign(enames, pair[0])}) and ({_assign(enames, pair[1])}) "
                                     f"both read {ctensor}{list(pair[2][k:])}"}
        return refuse(rname, str(w["note"]), w, inj.engine)
    if not inj.proved:
        return give_up(rname, inj.reason, inj.engine)
    ok(rname, "", inj.engine)
    wname = f"the reduction's update of {ctensor} is injective in its outer loops"
    winj = is_injective(written, timeout=timeout, sizes=k)
    if not winj.proved:
        return give_up(wname, f"{winj.status}: several outer iterations reduce into one element is not modelled",
                       winj.engine)
    ok(wname, "", winj.engine)
    partial = False
    for sub, sup, name, who, loops in (
        (read, written, f"{block} reads only elements the reduction writes", block, enames),
        (written, read, f"{block} reads every element the reduction writes", red.init.block.name,
         [f.var for f in red.init.loops]),
    ):
        v, rw = reads_inside(sub, sup, timeout, sizes=k)
        if v.refuted and rw is not None and who != block:
            # the reduction computes elements the epilogue never reads: the fused stores are guarded
            it = tuple(rw["consumer_iteration"])
            ok(f"{name}, or the fused stores are guarded", f"the reduction writes {ctensor}"
               f"{list(rw['element'][k:])} (iteration ({_assign(loops, it)})), which {block} never reads: the "
               "fused init and update run under a predicate (T.where)", v.engine)
            partial = True
            continue
        if v.refuted and rw is not None:
            cw, it = _outside_witness(rw, loops, k)
            if who == block:
                cw["note"] = (f"{block}'s iteration ({_assign(loops, it)}) reads {ctensor}{list(cw['element'])}, "
                              "which the reduction never writes")
            else:
                cw["note"] = (f"the reduction writes {ctensor}{list(cw['element'])} (iteration "
                              f"({_assign(loops, it)})), which {block} never reads: the fused reduction would "
                              f"write an extra element of {dname}")
            return refuse(name, cw["note"], cw, v.engine)
        if not v.proved:
            return give_up(name, v.reason, v.engine)
        ok(name, "", v.engine)
    inv = inverse(read, timeout=timeout, sizes=k)
    if not inv.proved or inv.inverse is None:
        return give_up(f"{block}'s read of {ctensor} has a proven inverse", inv.reason, "isl")
    ok(f"{block}'s read of {ctensor} has a proven inverse", inv.inverse.format(one_line=True), "isl")
    g_inv = inv.inverse

    def exact(given: list[Cond] | None) -> tuple[Verdict, tuple[Cond, ...]]:
        """The predicate on the reduction's elements the epilogue reads (built, or ``given`` checked), exact."""
        from verified_indexing.legality.reverse_inline import _guard

        t_loops = [r.substitute(dims=[Dim(i) for i in range(k)] + [inf.resolve(x) for x in red.init_store.indices])
                   for r in g_inv.results]
        return _guard(inf, red.init_store, ef, cloads[0], t_loops, timeout, given)

    guard: tuple[Cond, ...] = ()
    if partial:
        gv, guard = exact(None)
        gname = f"the fused stores' predicate holds exactly on the elements {block} reads"
        if not gv.proved:
            return give_up(gname, gv.reason or gv.status, gv.engine)
        ok(gname, format_conds(guard, red.init_store.scope), gv.engine)

    def at_element(frame: _Frame, idx: tuple[AffineExpr, ...]) -> list[AffineExpr]:
        """The epilogue's scope, over ``frame``'s scope, at the element ``idx``."""
        loops = [r.substitute(dims=[Dim(i) for i in range(k)] + list(idx)) for r in g_inv.results]
        return loops + [b.substitute(dims=loops) for b in ef.bind_values]

    def epilogue_here(frame: _Frame, idx: tuple[AffineExpr, ...], acc: Value | None) -> tuple[tuple[AffineExpr, ...],
                                                                                                Value]:
        """The epilogue's store indices and value at reduction element ``idx``;
        its load of C replaced by ``acc``."""
        sub = at_element(frame, idx)
        didx = tuple(_tidy_index(e.substitute(dims=sub), frame) for e in estore.indices)
        value = _subst_value(estore.value, sub)
        value = _map_value(value, lambda x: Load(x.tensor, tuple(_tidy_index(e, frame) for e in x.indices)),
                           lambda e: e)
        if acc is not None:
            value = _map_value(value, lambda x: acc if x.tensor == ctensor else x, lambda e: e)
        return didx, value

    form = "last"
    b_value = _fold_operand(estore.value, ctensor, red.op) if red.op else None
    if b_value is not None:
        form = "fold"
    if fused is None:
        fused = _generate(program, red, ectx, dname, form, epilogue_here, guard)
        origin = "ours"
    else:
        origin = "given"
    # 1. Exact evaluation on deterministic inputs (when small enough to run).
    small, diff = _compare_at_sizes(program, fused, dname)
    if diff is not None:
        sizes = ", ".join(f"{k} = {v}" for k, v in diff["sizes"].items())
        note = (f"{dname}{diff['element']}: original {diff['original']}, fused {diff['fused']} "
                f"(loop extents {sizes}; {diff['inputs']})")
        diff["note"] = note
        if origin == "ours":
            checks.append(InlineCheck("the fused program computes the same values", "error",
                                      f"internal error: our fused form differs: {note}", "evaluation", diff))
            return report("unknown", f"internal error: our fused form differs: {note}", fused, form)
        return refuse("the fused program computes the same values", f"the fused program differs: "
                      f"{note}", diff, "evaluation")
    if small:
        ok("the fused program computes the same values", "no difference on 3 input sets", "evaluation")
    # 2. Induction over the reduction loop.
    verdict, laws = _prove_fold(program, fused, red, ectx, estore, dname, b_value, inf, rf, epilogue_here, timeout,
                                exact)
    checks.append(InlineCheck(verdict.question, verdict.status, verdict.reason, verdict.engine))
    if not verdict.proved:
        return report("unknown", f"{verdict.question}: {verdict.reason or verdict.status}", fused, form, laws)
    return report("fused", "all obligations proved", fused, form, laws)


def _generate(program: Stmt, red: Reduction, ectx: BlockContext, dname: str, form: str, epilogue_here: Any,
              where: tuple[Cond, ...] = ()) -> Stmt:
    inf, uf = _frame(red.init, red.init_store), _frame(red.update, red.update_store)
    ctensor = red.tensor
    didx_i, b_init = epilogue_here(inf, red.init_store.indices, None)
    # init
    if form == "fold":
        b = _fold_operand(b_init, ctensor, red.op)
        assert b is not None
        init_value = b if _is_identity(red.init_store.value, red.op) else _combine_value(red.op,
                                                                                          red.init_store.value, b)
    elif red.loop.bound is not None:
        # a symbolic reduction length K: when K <= 0 no last iteration applies the epilogue, the init must
        g_init = epilogue_here(inf, red.init_store.indices, red.init_store.value)[1]
        empty = BinOp("<=", IndexValue(red.loop.bound), Num("0"))
        init_value = Call("select", (empty, g_init, red.init_store.value))
    elif red.loop.extent <= 0:
        # an empty reduction loop: no last iteration applies the epilogue, the init must
        init_value = epilogue_here(inf, red.init_store.indices, red.init_store.value)[1]
    else:
        init_value = red.init_store.value
    new_init = Store(f"{dname}__reduce_init", didx_i, init_value, red.init_store.scope)
    didx_u, _ = epilogue_here(uf, red.update_store.indices, None)
    acc_load = Load(dname, didx_u)
    acc = _map_value(red.update_store.value, lambda x: acc_load if x.tensor == ctensor else x, lambda e: e)
    if form == "fold":
        upd_value = acc
    else:
        _, g_acc = epilogue_here(uf, red.update_store.indices, acc)
        k = Dim(len(red.update.loops) - 1)
        if red.loop.bound is not None:
            guard = BinOp("==", IndexValue(k), IndexValue(red.loop.bound + (red.loop.start - 1)))
        else:
            guard = BinOp("==", IndexValue(k), Num(str(red.loop.start + red.loop.extent - 1)))
        upd_value = Call("select", (guard, g_acc, acc))
    new_upd = Store(dname, didx_u, upd_value, red.update_store.scope)

    def swap(sb: ScheduleBlock, store: Store, name: str) -> Stmt:
        def go(s: Stmt) -> Stmt:  # the store, under the block's predicates if any, and the guard
            if isinstance(s, Store):
                return If(where, (store,), store.scope) if where else store
            return If(s.conds, tuple(go(c) for c in s.body), s.scope) if isinstance(s, If) else s

        return ScheduleBlock(name, tuple(go(s) for s in sb.body))

    p = _replace_block(program, ectx.block.name, lambda sb: None)  # first: the fused blocks may take its name
    assert p is not None
    p = _replace_block(p, red.init.block.name, lambda sb: swap(sb, new_init, f"{dname}__reduce_init"))
    assert p is not None
    p = _replace_block(p, red.update.block.name, lambda sb: swap(sb, new_upd, dname))
    assert p is not None
    return p


#: Programs executing more stores than this are not run by the exact evaluator.
EVALUATION_LIMIT = 20_000


def evaluation_size(p: Stmt) -> int:
    """How many stores the program executes (predicates ignored: an upper bound). A symbolic extent
    counts at its value when it depends on fixed sizes only (:func:`~verified_indexing.legality.cinn_ir.at_sizes`),
    else as unbounded."""
    total = 0
    for c in walk_blocks(p):
        n = 1
        for d, f in enumerate(c.loops):
            if f.kind == "size":
                if f.extent != 1:  # a size parameter not fixed by at_sizes: the program cannot run
                    return EVALUATION_LIMIT + 1
                continue
            extent = f.extent
            if f.bound is not None:
                if any(i >= d or c.loops[i].kind != "size" for _, i in f.bound.variables()):
                    return EVALUATION_LIMIT + 1
                extent = f.bound.evaluate([g.start for g in c.loops[:d]])
            n *= max(0, extent)
        total += n * len(_own_stores(c))
    return total


#: The sizes at which programs with size parameters are compared by evaluation.
EVALUATION_SIZES = (0, 1, 2, 3)


def _compare_at_sizes(original: Stmt, fused: Stmt, tensor: str) -> tuple[bool, dict[str, Any] | None]:
    """:func:`compare_programs` at every size assignment from :data:`EVALUATION_SIZES` (each size
    parameter, at most 64 assignments) small enough to run; ``(ran any, first difference)``."""
    names = program_sizes(original)
    if names != program_sizes(fused):
        return False, None
    ran = False
    for values in itertools.islice(itertools.product(EVALUATION_SIZES, repeat=len(names)), 64):
        at = dict(zip(names, values))
        a, b = (at_sizes(original, at), at_sizes(fused, at)) if names else (original, fused)
        if max(evaluation_size(a), evaluation_size(b)) > EVALUATION_LIMIT:
            continue
        try:
            diff = compare_programs(a, b, tensor)
        except VerifiedIndexingError:
            if not names:
                raise
            continue  # the original reads an unwritten element at these sizes: undefined there, not compared
        ran = True
        if diff is not None:
            diff["sizes"] = {**at, **diff["sizes"]}
            return True, diff
    return ran, None


def _inputs(p: Stmt) -> set[str]:
    stored = {tensor_of(s.tensor) for c in walk_blocks(p) for s in _own_stores(c)}
    read = {ld.tensor for c in walk_blocks(p) for s in _own_stores(c) for ld in _value_loads(s.value)}
    return read - stored


def compare_programs(
    original: Stmt, fused: Stmt, tensor: str, seeds: Iterable[int] = (0, 1, 2)
) -> dict[str, Any] | None:
    """The first element of ``tensor`` where the two programs differ (exact
    evaluation, inputs by :data:`~verified_indexing.legality.cinn_eval.INPUT_RULE`),
    as ``{element, original, fused, sizes, inputs, seed}``; ``None`` when they agree."""
    # a parameter holds the caller's data: read before the program writes it, it is an input (in place)
    inputs = _inputs(original) | _inputs(fused) | set(program_params(original))
    sizes = {c.var: c.extent for ctx in walk_blocks(original) for c in ctx.loops if c.kind != "size"
             and c.bound is None}
    for seed in seeds:
        try:
            a = run_exact(original, inputs, seed).get(tensor, {})
        except Unwritten as exc:
            raise VerifiedIndexingError(f"the original program reads an unwritten element: {exc}") from None
        try:
            b = run_exact(fused, inputs, seed).get(tensor, {})
        except Unwritten as exc:
            return {"element": [], "original": "", "fused": f"reads an unwritten element ({exc})", "sizes": sizes,
                    "inputs": f"{INPUT_RULE}, seed {seed}", "seed": seed}
        for idx in sorted(set(a) | set(b)):
            va, vb = a.get(idx), b.get(idx)
            if va != vb:
                return {"element": list(idx), "original": _show(va), "fused": _show(vb), "sizes": sizes,
                        "inputs": f"{INPUT_RULE}, seed {seed}", "seed": seed}
    return None


def _show(v: Fraction | None) -> str:
    if v is None:
        return "not written"
    return str(v.numerator) if v.denominator == 1 else str(v)


def _prove_fold(
    program: Stmt, fused: Stmt, red: Reduction, ectx: BlockContext, estore: Store, dname: str,
    b_value: Value | None, inf: _Frame, rf: _Frame, epilogue_here: Any, timeout: float, exact: Any,
) -> tuple[Verdict, tuple[str, ...]]:
    """Induction over the reduction loop (module docstring), with each invariant
    template in turn; ``proved`` when one template proves base, step and
    conclusion."""
    question = f"the fused {dname} equals the epilogue of the reduction, for every element (induction over " \
               f"{red.loop.var})"
    t0 = now()
    fred = find_reduction(fused, dname, predicated=True)
    if not isinstance(fred, Reduction):
        return Verdict("unknown", "z3", now() - t0, question, f"the fused program is not a reduction into {dname}: "
                       f"{fred}"), ()
    same_loops = len(fred.init.loops) == len(red.init.loops) and all(
        (a.start, a.extent, a.bound) == (b.start, b.extent, b.bound)
        for a, b in zip(fred.update.loops, red.update.loops))
    if not same_loops:
        return Verdict("unknown", "z3", now() - t0, question,
                       "the fused reduction's loops differ from the original's (not modelled)"), ()
    fconds, oconds = _frame(fred.init, fred.init_store).conds(), _frame(red.init, red.init_store).conds()
    if any(c not in fconds for c in oconds):
        return Verdict("unknown", "z3", now() - t0, question,
                       "the fused reduction drops a predicate of the original (not modelled)"), ()
    # Extra comparisons must hold exactly on the elements the epilogue reads (none when it reads them all).
    gv, _ = exact([c for c in fconds if c not in oconds])
    if not gv.proved:
        return Verdict("unknown", "z3", now() - t0, question,
                       f"the fused reduction's predicate is not proven to be exactly the elements the epilogue "
                       f"reads: {gv.reason or gv.status}"), ()
    rest_a = _rest(program, {red.init.block.name, red.update.block.name, ectx.block.name})
    rest_b = _rest(fused, {fred.init.block.name, fred.update.block.name})
    if rest_a != rest_b:
        return Verdict("unknown", "z3", now() - t0, question,
                       "the fused program changes blocks other than the reduction and the epilogue"), ()
    templates: list[str] = (["fold"] if b_value is not None else []) + ["last"]
    last_reason = ""
    for template in templates:
        v, laws = _induction(red, fred, estore, dname, template, epilogue_here, timeout)
        if v == "proved":
            invariant = (f"G = F {red.op} b" if template == "fold"
                         else "G = F before the last iteration, G = g(F) after it")
            return Verdict("proved", "z3", now() - t0, question, f"invariant: {invariant}"), laws
        last_reason = v
    return Verdict("unknown", "z3", now() - t0, question, f"no invariant template proves it ({last_reason})"), ()


_Rest = list[tuple[str, tuple[Stmt, ...], tuple[tuple[str, int, int, AffineExpr | None], ...]]]


def _rest(p: Stmt, drop: set[str]) -> _Rest:
    return [(c.block.name, c.block.body, tuple((f.var, f.start, f.extent, f.bound) for f in c.loops))
            for c in walk_blocks(p)
            if c.block.name not in drop and (any(f.kind != "size" for f in c.loops) or c.block.name != "root")]


def _induction(
    red: Reduction, fred: Reduction, estore: Store, dname: str, template: str, epilogue_here: Any, timeout: float,
) -> tuple[str, tuple[str, ...]]:
    """Base, step and conclusion of the induction for one template: ``"proved"``
    or the first failing obligation's outcome."""
    laws: tuple[str, ...] = ()
    for obligation in ("base", "step", "conclusion"):
        outcome, laws = _obligation(red, fred, dname, template, epilogue_here, timeout, obligation)
        if outcome != "proved":
            return f"{obligation}: {outcome}", laws
    return "proved", laws


def _obligation(
    red: Reduction, fred: Reduction, dname: str, template: str, epilogue_here: Any, timeout: float, obligation: str,
) -> tuple[str, tuple[str, ...]]:
    """One obligation (``base``, ``step`` or ``conclusion``) of the induction."""
    uf, inf = _frame(red.update, red.update_store), _frame(red.init, red.init_store)
    fuf, finf = _frame(fred.update, fred.update_store), _frame(fred.init, fred.init_store)
    laws: tuple[str, ...] = ()
    enc = Z3Encoder()
    z3 = enc.z3
    ve = _AccEncoder(enc)
    s = enc.solver(timeout=timeout)
    sp = [enc.int_var(f"s_{f.var}") for f in red.init.loops]
    s.add(*_loop_bounds(enc, inf, sp))
    s.add(*_encode_conds(enc, inf, {("d", i): x for i, x in enumerate(sp)}))  # the reduction's predicate
    s.add(*_encode_conds(enc, finf, {("d", i): x for i, x in enumerate(sp)}))  # and the fused one's guard
    n = enc.int_var("n")
    big_k: Any = red.loop.extent
    if red.loop.bound is not None:  # the symbolic reduction length, max(0, K)
        kk = enc.expr(red.loop.bound, {("d", i): x for i, x in enumerate(sp)})
        big_k = z3.If(kk > 0, kk, enc.int_val(0))
    k = n + red.loop.start

    def scope_env(frame: _Frame, with_k: bool) -> Env:
        loops = list(sp) + ([k] if with_k else [])
        lenv: Env = {("d", i): x for i, x in enumerate(loops)}
        sc = loops + [enc.expr(b, lenv) for b in frame.bind_values]
        return {("d", i): x for i, x in enumerate(sc)}

    ienv, uenv = scope_env(inf, False), scope_env(uf, True)
    fienv, fuenv = scope_env(finf, False), scope_env(fuf, True)
    acc_f, acc_g = z3.Const("F", ve.sort), z3.Const("G", ve.sort)

    def with_acc(tensor: str, acc: Any) -> Any:
        return lambda ld: acc if ld.tensor == tensor else None

    # the epilogue at the element: indices and value g(acc)
    didx, gval = epilogue_here(inf, red.init_store.indices, None)

    def g_of(acc: Any) -> Any:
        return ve.value(gval, ienv, with_acc(red.tensor, acc))

    b_term = None
    if template == "fold":
        b = _fold_operand(gval, red.tensor, red.op)
        if b is None:
            return "the epilogue is not C (+) b", ()
        b_term = ve.value(b, ienv)

    def inv(nv: Any, g_: Any, f_: Any) -> Any:
        if template == "fold":
            return g_ == ve.combine(red.op, f_, b_term)
        return z3.And(z3.Implies(nv < big_k, g_ == f_), z3.Implies(nv == big_k, g_ == g_of(f_)))

    if template == "fold":
        axioms, names = ve.laws(red.op, _is_identity(red.init_store.value, red.op)
                                or _is_identity(fred.init_store.value, red.op))
        s.add(*axioms)
        laws = tuple(names)
    if obligation == "base":
        goal = inv(enc.int_val(0), ve.value(fred.init_store.value, fienv), ve.value(red.init_store.value, ienv))
        # the fused init and update write the epilogue's element
        same = [enc.expr(a, fienv) == enc.expr(b_, ienv) for a, b_ in zip(fred.init_store.indices, didx)]
        goal = z3.And(goal, *same)
        if len(fred.init_store.indices) != len(didx):
            return "the fused store has another rank", ()
    elif obligation == "step":
        s.add(n >= 0, n < big_k)
        s.add(inv(n, acc_g, acc_f))
        f_next = ve.value(red.update_store.value, uenv, with_acc(red.tensor, acc_f))
        g_next = ve.value(fred.update_store.value, fuenv, with_acc(dname, acc_g))
        same = [enc.expr(a, fuenv) == enc.expr(b_, ienv) for a, b_ in zip(fred.update_store.indices, didx)]
        goal = z3.And(inv(n + 1, g_next, f_next), *same)
    else:
        s.add(inv(big_k if red.loop.bound is not None else enc.int_val(big_k), acc_g, acc_f))
        goal = acc_g == g_of(acc_f)
    s.add(*enc.side_conditions)
    s.add(z3.Not(goal))
    r = s.check()
    if r == z3.unsat:
        return "proved", laws
    return ("fails (the template does not hold)" if r == z3.sat else f"unknown ({s.reason_unknown()})"), laws
