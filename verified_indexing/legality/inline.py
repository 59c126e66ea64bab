"""CINN's ComputeInline, with legality decided and the result proven.

:func:`compute_inline` removes a producer ``ScheduleBlock`` (and the loops left
empty by its removal, as ``LeafBlockRemovalPlan`` does) and replaces every load
of its tensor in the consumer blocks by the producer's stored value, with the
producer's variables expressed through the consumer's load indices.

CINN substitutes the store's index variables by the load's indices. That is
only right when the store indices are distinct plain variables. Here the
producer's loop variables are recovered from a load's indices through the
**proven inverse** of the store map (:func:`verified_indexing.legality.inverse`),
so ``B[i0 + 1]`` or ``B[i0 floordiv 2, i0 mod 2]`` inline correctly, and a
non-injective store is refused with two iterations writing one element.

Legality checks (each reported, in this order): the block exists and is not
the root; it holds a single store (after an optional ``axis.bind``) and no
other block writes its tensor; the store does not read its own tensor (no
reduction; a ``NAME__reduce_init`` block is the init of reduction ``NAME``);
the tensor is not a program output; the producer precedes every consumer; no
block writes a tensor the producer reads *between* the producer and a consumer
(a write before the producer, as in a chain ``B -> C -> D`` inlining ``C``, or
after the consumer is harmless; z3 searches the consumer, producer and writer
iterations of a harmful one, including an earlier iteration of the consumer
itself, re-checked by the evaluator; a writer inside their loop nest is
``unknown``); the store indices are injective on
the producer's iteration domain; every consumer load lies in the stored region;
when producer and consumer share enclosing loops, every element is written at
or before the shared iteration that reads it (z3, a violation refused with two
evaluator-confirmed iterations). Inlined load indices are tidied by the
verified simplifier on the consumer's domain. After the rewrite, for every consumer block, z3 proves that the
inlined stored value equals the original one for every consumer iteration, the
original load of the producer tensor standing for the value the producer
stored at that element; tensor reads, constants and value operations are
uninterpreted functions, so the proof holds whatever they compute.

:func:`inline_all` repeats this over every candidate block, in order, as CINN's
``DoComputeInline`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from verified_indexing.engines import Verdict, Z3Encoder
from verified_indexing.engines.sizes import (
    loop_constraint,
    size_condition,
    violating_sizes_injective,
    violating_sizes_subset,
    with_sizes_in_results,
)
from verified_indexing.engines.z3 import Env
from verified_indexing.errors import VerifiedIndexingError
from verified_indexing.expr import AffineExpr, CeilDiv, Const, Dim, FloorDiv, Max, Min, Mod
from verified_indexing.indexing_map import IndexingMap, Variable
from verified_indexing.interval import Interval, range_of
from verified_indexing.legality._proofs import now, reads_inside
from verified_indexing.legality.cinn_eval import tensor_of
from verified_indexing.legality.cinn_ir import (
    SIZE_MAX,
    Bind,
    BinOp,
    BlockContext,
    Call,
    Cond,
    For,
    Group,
    If,
    IndexValue,
    Load,
    Neg,
    Num,
    ScheduleBlock,
    Stmt,
    Store,
    Value,
    cond_constraints,
    find_block,
    format_program,
    parse_program,
    program_params,
    program_sizes,
    walk_blocks,
)
from verified_indexing.legality.inverse import InverseResult, collision, inverse, is_injective

__all__ = [
    "access_conflicts",
    "InlineCheck",
    "InlineReport",
    "compute_inline",
    "inline_all",
    "inline_candidates",
    "parse_program",
    "format_program",
]

InlineStatus = Literal["inlined", "refused", "unknown"]


@dataclass(frozen=True)
class InlineCheck:
    """One legality check or proof: ``status`` proved / refuted / unknown / error."""

    name: str
    status: str
    detail: str = ""
    engine: str = ""
    witness: dict[str, Any] | None = None

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        return {"check": self.name, "status": self.status, "detail": self.detail, "engine": self.engine,
                "witness": self.witness}


@dataclass(frozen=True)
class InlineReport:
    """The outcome of :func:`compute_inline`: ``inlined`` (``program`` is the new
    program, every check and proof ``proved``), ``refused`` (a check failed;
    ``reason`` and the check's witness say why) or ``unknown``."""

    block: str
    status: InlineStatus
    reason: str
    checks: tuple[InlineCheck, ...]
    program: Stmt | None = None
    store_inverse: InverseResult | None = None
    consumers: tuple[str, ...] = field(default=())
    #: With size parameters: the condition on the sizes under which a refused check
    #: holds (``refused``), or under which every check was proved (``inlined``,
    #: ``program`` is then valid under it and guarded by it); ``""`` for every size.
    when: str = ""
    condition: Any = field(default=None, compare=False, repr=False)
    #: ``"inline"`` (:func:`compute_inline`) or ``"reverse-inline"`` (:func:`~verified_indexing.legality.
    #: reverse_inline.reverse_compute_inline`): which command's text ``str()`` is.
    kind: str = field(default="inline", compare=False)

    @property
    def exit_code(self) -> int:
        return {"inlined": 0, "refused": 1, "unknown": 2}[self.status]

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
            "status": self.status,
            "reason": self.reason,
            "consumers": list(self.consumers),
            "checks": [c.to_json() for c in self.checks],
            "store_inverse": self.store_inverse.to_json() if self.store_inverse else None,
            "legal_when": self.when or None,
            "program": format_program(self.program) if self.program is not None else None,
        }


# ---------------------------------------------------------------------------
# Program queries
# ---------------------------------------------------------------------------


def _stores(s: Stmt) -> Iterable[Store]:
    if isinstance(s, Store):
        yield s
    elif isinstance(s, (For, Group, ScheduleBlock, If)):
        for c in s.body:
            yield from _stores(c)


def _value_loads(v: Value) -> Iterable[Load]:
    if isinstance(v, Load):
        yield v
    elif isinstance(v, BinOp):
        yield from _value_loads(v.lhs)
        yield from _value_loads(v.rhs)
    elif isinstance(v, Neg):
        yield from _value_loads(v.operand)
    elif isinstance(v, Call):
        for a in v.args:
            yield from _value_loads(a)


def _own_stores(ctx: BlockContext) -> list[Store]:
    """Stores directly in the block (not in nested ScheduleBlocks)."""
    out: list[Store] = []

    def go(s: Stmt) -> None:
        if isinstance(s, Store):
            out.append(s)
        elif isinstance(s, (For, Group, If)):
            for c in s.body:
                go(c)

    for c in ctx.block.body:
        go(c)
    return out


def _inner_conds(ctx: BlockContext, store: Store) -> tuple[Cond, ...]:
    """The predicates inside the block around ``store`` (over the block's scope)."""
    def go(s: Stmt, conds: tuple[Cond, ...]) -> tuple[Cond, ...] | None:
        if s is store:
            return conds
        if isinstance(s, If):
            conds = conds + s.conds
        if isinstance(s, (For, Group, If)):
            for c in s.body:
                r = go(c, conds)
                if r is not None:
                    return r
        return None

    for c in ctx.block.body:
        r = go(c, ())
        if r is not None:
            return r
    return ()


def _loads_of(ctx: BlockContext, tensor: str) -> list[tuple[Store, Load]]:
    return [(st, ld) for st in _own_stores(ctx) for ld in _value_loads(st.value) if ld.tensor == tensor]


def inline_candidates(program: Stmt) -> list[str]:
    """Blocks whose tensor some other block reads (the ones worth inlining), in order."""
    blocks = [b for b in walk_blocks(program) if b.loops or b.block.name != "root"]
    out = []
    for b in blocks:
        tensors = {s.tensor for s in _own_stores(b)}
        if any(_loads_of(o, t) for o in blocks if o is not b for t in tensors):
            out.append(b.block.name)
    return out


# ---------------------------------------------------------------------------
# Maps of a block: everything over the block's loop variables
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Frame:
    """A block's loops and how its scope (loop vars then iteration vars) is
    expressed over the loop variables."""

    ctx: BlockContext
    bind_values: tuple[AffineExpr, ...]
    inner: tuple[Cond, ...] = ()

    @property
    def loops(self) -> tuple[For, ...]:
        return self.ctx.loops

    def conds(self) -> list[Cond]:
        """Every predicate the store runs under, over the loop variables."""
        out = [c for g in self.ctx.guards for c in g.conds]
        return out + [(self.resolve(a), op, self.resolve(b)) for a, op, b in self.inner]

    @property
    def sizes(self) -> int:
        """How many leading loops are size parameters."""
        return sum(1 for f in self.loops if f.kind == "size")

    def constraints(self) -> list[tuple[AffineExpr, Interval]]:
        bounds = [Interval(f.start, f.start + f.extent - 1) for f in self.loops]
        symbolic = [loop_constraint(Dim(d), f.bound, f.start) for d, f in enumerate(self.loops) if f.bound is not None]
        return symbolic + cond_constraints(self.conds(), bounds)

    def domain(self, results: Iterable[AffineExpr]) -> IndexingMap:
        dims = [Variable(Interval(f.start, f.start + f.extent - 1), f.var) for f in self.loops]
        return IndexingMap(dims, list(results), constraints=self.constraints())

    def resolve(self, e: AffineExpr) -> AffineExpr:
        """A scope expression over the loop variables only."""
        n = len(self.loops)
        return e.substitute(dims=[Dim(i) for i in range(n)] + list(self.bind_values))


def _frame(ctx: BlockContext, store: Store | None = None) -> _Frame:
    """The block's frame; with ``store``, its domain includes the predicates
    inside the block around that store."""
    binds = [s for s in ctx.block.body if isinstance(s, Bind)]
    values: tuple[AffineExpr, ...] = ()
    if binds:
        values = binds[0].values
    return _Frame(ctx, values, _inner_conds(ctx, store) if store is not None else ())


# ---------------------------------------------------------------------------
# Rewriting
# ---------------------------------------------------------------------------


def _map_value(v: Value, fn: Callable[[Load], Value], idx: Callable[[AffineExpr], AffineExpr]) -> Value:
    if isinstance(v, Load):
        return fn(v)
    if isinstance(v, BinOp):
        return BinOp(v.op, _map_value(v.lhs, fn, idx), _map_value(v.rhs, fn, idx))
    if isinstance(v, Neg):
        return Neg(_map_value(v.operand, fn, idx))
    if isinstance(v, Call):
        return Call(v.name, tuple(_map_value(a, fn, idx) for a in v.args))
    if isinstance(v, IndexValue):
        return IndexValue(idx(v.expr))
    return v


def _subst_value(v: Value, sub: list[AffineExpr]) -> Value:
    """The value with every scope variable replaced (``Dim(k) -> sub[k]``)."""
    def idx(e: AffineExpr) -> AffineExpr:
        return e.substitute(dims=sub)

    return _map_value(v, lambda ld: Load(ld.tensor, tuple(idx(i) for i in ld.indices)), idx)


def _scope_domain(frame: _Frame) -> IndexingMap:
    """The consumer's scope (loop variables, then iteration variables) as a
    domain: loop ranges, and each iteration variable equal to its bound value."""
    loops = [Interval(f.start, f.start + f.extent - 1) for f in frame.loops]
    n = len(loops)
    iters = [range_of(b, loops) for b in frame.bind_values]
    if frame.sizes or any(f.bound is not None for f in frame.loops):
        iters = [iv if iv.hi - iv.lo < 2**62 else Interval(-(2**80), 2**80) for iv in iters]
    dims = [Variable(iv) for iv in loops + iters]
    constraints = [(Dim(n + k) - b, Interval(0, 0)) for k, b in enumerate(frame.bind_values)]
    return IndexingMap(dims, [], constraints=constraints + frame.constraints())


def _tidy_index(e: AffineExpr, frame: _Frame) -> AffineExpr:
    """``e`` through the verified simplifier on the consumer's scope (cosmetic:
    the value-equality proof that follows the rewrite checks the result anyway,
    and any failure keeps ``e``)."""
    if not any(isinstance(x, (FloorDiv, Mod, CeilDiv, Min, Max)) for x in e.walk()):
        return e
    try:
        from verified_indexing.simplify import simplify_expr

        return simplify_expr(e, _scope_domain(frame))
    except Exception:  # the simplifier is optional here; the z3 proof decides
        return e


def _replace_block(s: Stmt, name: str, fn: Callable[[ScheduleBlock], Stmt | None]) -> Stmt | None:
    """The statement with ScheduleBlock ``name`` replaced by ``fn(block)``; loops
    and groups left empty by a removal are removed too (never the root)."""
    if isinstance(s, ScheduleBlock) and s.name == name:
        return fn(s)
    if isinstance(s, (For, Group, ScheduleBlock, If)):
        body = []
        for c in s.body:
            r = _replace_block(c, name, fn)
            if r is not None:
                body.append(r)
        if not body and s.body and not isinstance(s, ScheduleBlock):
            return None
        if isinstance(s, For):
            return replace(s, body=tuple(body))
        if isinstance(s, If):
            return If(s.conds, tuple(body), s.scope)
        if isinstance(s, Group):
            return Group(tuple(body))
        return replace(s, body=tuple(body))  # the root keeps its parameters (the buffers the caller sees)
    return s


# ---------------------------------------------------------------------------
# The value-equality proof (z3, uninterpreted values)
# ---------------------------------------------------------------------------


class _ValueEncoder:
    def __init__(self, enc: Z3Encoder) -> None:
        self.enc = enc
        z3 = enc.z3
        self.sort = z3.DeclareSort("Val", enc.ctx)
        self.funcs: dict[tuple[str, int], Any] = {}

    def func(self, name: str, args: list[Any], arg_sorts: list[Any]) -> Any:
        z3 = self.enc.z3
        key = (name, len(args))
        f = self.funcs.get(key)
        if f is None:
            f = z3.Function(f"{name}/{len(args)}", *arg_sorts, self.sort)
            self.funcs[key] = f
        return f(*args) if args else f()  # a nullary function: its constant

    def value(self, v: Value, env: Env, load: Callable[[Load], Any] | None = None) -> Any:
        z3 = self.enc.z3
        ints = z3.IntSort(self.enc.ctx)
        if isinstance(v, Num):
            return z3.Const(f"num {v.text}", self.sort)
        if isinstance(v, Load):
            if load is not None:
                hit = load(v)
                if hit is not None:
                    return hit
            idx = [self.enc.expr(i, env) for i in v.indices]
            return self.func(f"load {v.tensor}", idx, [ints] * len(idx))
        if isinstance(v, BinOp):
            a, b = self.value(v.lhs, env, load), self.value(v.rhs, env, load)
            return self.func(f"op {v.op}", [a, b], [self.sort, self.sort])
        if isinstance(v, Neg):
            return self.func("neg", [self.value(v.operand, env, load)], [self.sort])
        if isinstance(v, Call):
            args = [self.value(a, env, load) for a in v.args]
            return self.func(f"call {v.name}", args, [self.sort] * len(args))
        return self.func("int", [self.enc.expr(v.expr, env)], [ints])


def _loop_bounds(enc: Z3Encoder, frame: _Frame, xs: list[Any]) -> list[Any]:
    """The loops' ranges (symbolic extents included) as z3 constraints."""
    env: Env = {("d", i): x for i, x in enumerate(xs)}
    out = []
    for f, x in zip(frame.loops, xs):
        out += [x >= f.start, x <= f.start + f.extent - 1]
        if f.bound is not None:
            out.append(x <= enc.expr(f.bound, env) + (f.start - 1))
    return out


def _encode_conds(enc: Z3Encoder, frame: _Frame, loop_env: Env) -> list[Any]:
    """The frame's predicates as z3 constraints over its loop variables."""
    out = []
    for a, op, b in frame.conds():
        x, y = enc.expr(a, loop_env), enc.expr(b, loop_env)
        out.append({"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y, "==": x == y}[op])
    return out


def _prove_consumer(
    producer: _Frame, pstore: Store, consumer: _Frame, old: Store, new: Store, tensor: str, timeout: float
) -> Verdict:
    """z3: for every consumer iteration, the new stored value equals the old one
    with each load of ``tensor`` standing for the producer's value there."""
    question = f"inlined {consumer.ctx.block.name} stores the same values as before"
    t0 = now()
    enc = Z3Encoder()
    z3 = enc.z3
    ve = _ValueEncoder(enc)
    s = enc.solver(timeout=timeout)
    cl = [enc.int_var(f"c_{f.var}") for f in consumer.loops]
    cenv_loops: Env = {("d", i): x for i, x in enumerate(cl)}
    s.add(*_loop_bounds(enc, consumer, cl))
    s.add(*_encode_conds(enc, consumer, cenv_loops))
    cscope = list(cl) + [enc.expr(b, cenv_loops) for b in consumer.bind_values]
    cenv: Env = {("d", i): x for i, x in enumerate(cscope)}
    counter = [0]

    def producer_value(ld: Load) -> Any:
        if ld.tensor != tensor:
            return None
        counter[0] += 1
        # the sizes are the consumer's: one program, one size
        pl = cl[:producer.sizes] + [enc.int_var(f"p{counter[0]}_{f.var}") for f in producer.loops[producer.sizes:]]
        s.add(*_loop_bounds(enc, producer, pl))
        penv_loops: Env = {("d", i): x for i, x in enumerate(pl)}
        s.add(*_encode_conds(enc, producer, penv_loops))
        pscope = list(pl) + [enc.expr(b, penv_loops) for b in producer.bind_values]
        penv: Env = {("d", i): x for i, x in enumerate(pscope)}
        for si, li in zip(pstore.indices, ld.indices):
            s.add(enc.expr(si, penv) == enc.expr(li, cenv))
        return ve.value(pstore.value, penv)

    before = ve.value(old.value, cenv, producer_value)
    after = ve.value(new.value, cenv)
    same_index = [enc.expr(a, cenv) == enc.expr(b, cenv) for a, b in zip(old.indices, new.indices)]
    s.add(*enc.side_conditions)
    s.add(z3.Not(z3.And(before == after, *same_index)))
    r = s.check()
    if r == z3.unsat:
        return Verdict("proved", "z3", now() - t0, question)
    if r == z3.sat:
        return Verdict("error", "z3", now() - t0, question, "the inlined value differs (internal inconsistency)")
    return Verdict("unknown", "z3", now() - t0, question, str(s.reason_unknown()))


# ---------------------------------------------------------------------------
# ComputeInline
# ---------------------------------------------------------------------------


def _unsupported(ctx: BlockContext) -> str | None:
    """Why the block's structure is outside the model (``None`` when it is inside)."""
    name = ctx.block.name
    if sum(1 for s in ctx.block.body if isinstance(s, Bind)) > 1:
        return f"block {name} has several axis.bind statements"
    def direct_stores(body: tuple[Stmt, ...]) -> list[Store]:
        return [s for s in body if isinstance(s, Store)] + [x for s in body if isinstance(s, If)
                                                             for x in direct_stores(s.body)]

    if len(direct_stores(ctx.block.body)) != len(_own_stores(ctx)):
        return f"block {name} has loops inside its body"
    return None


def _only_store(s: Stmt) -> bool:
    """A store under (possibly nested) predicates only."""
    return isinstance(s, Store) or (isinstance(s, If) and len(s.body) == 1 and _only_store(s.body[0]))


def _shared_loops(a: BlockContext, b: BlockContext) -> int:
    """How many enclosing loops (an outer prefix) the two blocks share."""
    n = 0
    for f, g in zip(a.loops, b.loops):
        if f is not g:
            break
        n += 1
    return n


def _same_element(
    a: IndexingMap, b: IndexingMap, sizes: int, timeout: float, prefixes: tuple[str, str]
) -> tuple[Z3Encoder, Any, Env, Env]:
    """A z3 solver (with its encoder and the two maps' variables, named with ``prefixes``)
    asserting an iteration of ``a`` and one of ``b``, each in its domain, that reach the same
    element with the same size parameters (the first ``sizes`` dims); the caller adds its
    question and ``enc.side_conditions``."""
    enc = Z3Encoder()
    aenv, benv = enc.map_vars(a, prefixes[0]), enc.map_vars(b, prefixes[1])
    sol = enc.solver(timeout=timeout)
    sol.add(*enc.domain(a, aenv), *enc.domain(b, benv))
    sol.add(*[enc.expr(x, aenv) == enc.expr(y, benv) for x, y in zip(a.results, b.results)])
    sol.add(*[aenv[("d", i)] == benv[("d", i)] for i in range(sizes)])  # one program, one size
    return enc, sol, aenv, benv


def _iteration(model: Any, env: Env, m: IndexingMap) -> tuple[int, ...]:
    """The values of ``m``'s dims (``env``'s variables) in the z3 ``model``."""
    return tuple(model.eval(env[("d", i)], model_completion=True).as_long() for i in range(m.num_dims))


def _written_before_read(
    write: IndexingMap, read: IndexingMap, shared: int, timeout: float, sizes: int = 0
) -> tuple[Verdict, dict[str, Any] | None]:
    """With ``shared`` common outer loops and the producer block first in their
    body, the element a consumer iteration ``c`` reads is written before the
    read exactly when its writer ``p`` has ``p[:shared] <=lex c[:shared]``.
    z3 searches a writer that comes later; a model is re-checked with the plain
    evaluator before it is reported (two iterations, the element)."""
    question = "every element is written before it is read (shared loops)"
    t0 = now()
    enc, s, penv, cenv = _same_element(write, read, sizes, timeout, ("p_", "c_"))
    z3 = enc.z3
    p = [penv[("d", i)] for i in range(sizes, shared)]
    c = [cenv[("d", i)] for i in range(sizes, shared)]
    later = [z3.And(*[p[j] == c[j] for j in range(k)], p[k] > c[k]) for k in range(len(p))]
    s.add(z3.Or(*later) if later else z3.BoolVal(False, enc.ctx))
    s.add(*enc.side_conditions)
    r = s.check()
    if r == z3.unsat:
        return Verdict("proved", "z3", now() - t0, question), None
    if r != z3.sat:
        return Verdict("unknown", "z3", now() - t0, question, str(s.reason_unknown())), None
    model = s.model()
    pv, cv = _iteration(model, penv, write), _iteration(model, cenv, read)
    ok = (write.contains(pv) and read.contains(cv) and write.evaluate(pv) == read.evaluate(cv)
          and pv[:sizes] == cv[:sizes] and pv[sizes:shared] > cv[sizes:shared])
    if not ok:
        return Verdict("error", "z3", now() - t0, question, "encoding disagrees with evaluator"), None
    witness: dict[str, Any] = {"producer_iteration": list(pv), "consumer_iteration": list(cv),
                               "element": list(write.evaluate(pv))}
    return Verdict("refuted", "z3", now() - t0, question), witness


def access_conflicts(
    moved: BlockContext, moved_store: Store, loads_of: str | None, others: list[BlockContext], sizes: int,
    timeout: float,
) -> tuple[str, str, dict[str, Any] | None]:
    """Whether a block of ``others`` (run between the old and the new place of ``moved``'s store) touches what
    the move changes: with ``loads_of=None``, an element ``moved`` reads (of any tensor) that one of
    ``others`` writes; with a tensor name, an element of ``moved``'s tensor (``loads_of``) that one of
    ``others`` reads. z3 searches the two iterations (sizes equal); a model is re-checked by the plain
    evaluator. Returns ``("proved", "", None)`` (no conflict), ``("refuted", note, witness)`` or
    ``("unknown", reason, None)``; a block sharing loops (beyond the sizes) with ``moved`` is ``unknown``."""
    mf = _frame(moved, moved_store)
    mnames = [f.var for f in moved.loops]
    for octx in others:
        pairs: list[tuple[IndexingMap, IndexingMap, str]] = []  # (moved's access, other's access, tensor)
        for st in _own_stores(octx):
            of = _frame(octx, st)
            if loads_of is None:
                for ld in _value_loads(moved_store.value):
                    if tensor_of(st.tensor) == ld.tensor and len(ld.indices) == len(st.indices):
                        pairs.append((mf.domain(mf.resolve(i) for i in ld.indices),
                                      of.domain(of.resolve(i) for i in st.indices), ld.tensor))
            else:
                for ld in _value_loads(st.value):
                    if ld.tensor == loads_of and len(ld.indices) == len(moved_store.indices):
                        pairs.append((mf.domain(mf.resolve(i) for i in moved_store.indices),
                                      of.domain(of.resolve(i) for i in ld.indices), loads_of))
        if not pairs:
            continue
        if _shared_loops(moved, octx) > sizes:
            return "unknown", (f"not modelled: {octx.block.name} shares loops with {moved.block.name} and "
                               f"{'writes what it reads' if loads_of is None else 'reads what it writes'}"), None
        for a, b, tensor in pairs:
            if a.is_known_empty or b.is_known_empty:
                continue
            enc, sol, aenv, benv = _same_element(a, b, sizes, timeout, ("m_", "o_"))
            z3 = enc.z3
            sol.add(*enc.side_conditions)
            r = sol.check()
            if r == z3.unsat:
                continue
            if r != z3.sat:
                return "unknown", str(sol.reason_unknown()), None
            model = sol.model()
            pa, pb = _iteration(model, aenv, a), _iteration(model, benv, b)
            if not (a.contains(pa) and b.contains(pb) and a.evaluate(pa) == b.evaluate(pb)):
                return "unknown", "internal error: encoding disagrees with evaluator", None
            onames = [f.var for f in octx.loops]
            elem = list(a.evaluate(pa))
            if loads_of is None:
                note = (f"{octx.block.name}'s iteration ({_assign(onames, pb)}) writes {tensor}{elem}, which "
                        f"{moved.block.name}'s iteration ({_assign(mnames, pa)}) reads: moved, it would read the "
                        "value from before that write")
            else:
                note = (f"{octx.block.name}'s iteration ({_assign(onames, pb)}) reads {tensor}{elem}, which "
                        f"{moved.block.name}'s iteration ({_assign(mnames, pa)}) writes: moved, the write would "
                        "come before that read")
            return "refuted", note, {"moved_iteration": dict(zip(mnames, pa)),
                                     "other_iteration": dict(zip(onames, pb)), "element": elem, "note": note}
    return "proved", "", None


def _first_point(m: IndexingMap, timeout: float) -> tuple[int, ...] | None:
    """A point of ``m``'s domain (z3), re-checked by the evaluator; ``None`` when z3 finds none."""
    enc = Z3Encoder()
    env = enc.map_vars(m, "x_")
    sol = enc.solver(timeout=timeout)
    sol.add(*enc.domain(m, env))
    sol.add(*enc.side_conditions)
    if sol.check() != enc.z3.sat:
        return None
    model = sol.model()
    point = _iteration(model, env, m)
    return point if m.contains(point) else None


def _empty_domain(m: IndexingMap, timeout: float) -> bool:
    """Whether ``m``'s domain is empty: known (a loop of extent 0) or proven by z3 (a predicate no
    iteration satisfies). ``False`` when z3 does not decide."""
    if m.is_known_empty:
        return True
    enc = Z3Encoder()
    env = enc.map_vars(m, "x_")
    sol = enc.solver(timeout=timeout)
    sol.add(*enc.domain(m, env))
    sol.add(*enc.side_conditions)
    return bool(sol.check() == enc.z3.unsat)


def _inline_empty_producer(
    program: Stmt, block: str, tensor: str, consumers: list[BlockContext], checks: list[InlineCheck],
    timeout: float = 10.0,
) -> InlineReport:
    """The producer never runs. A consumer iteration that runs reads an element nothing wrote: refused
    with it (the original program reads unwritten memory there). When no consumer runs either, the
    producer and those consumers are removed (they execute nothing)."""
    for cctx in consumers:
        for st, ld in _loads_of(cctx, tensor):
            cf = _frame(cctx, st)
            read = cf.domain(cf.resolve(i) for i in ld.indices)
            name = f"{cctx.block.name}'s load of {tensor} lies in the stored region"
            if _empty_domain(read, timeout):
                continue
            point = _first_point(read, timeout)
            if point is None:
                checks.append(InlineCheck(name, "unknown", f"{block} never runs; whether "
                                          f"{cctx.block.name} does is not decided", "z3"))
                return InlineReport(block, "unknown", f"{name}: {block} never runs; whether {cctx.block.name} "
                                    "runs is not decided", tuple(checks))
            names = [f.var for f in cctx.loops]
            elem = list(read.evaluate(point))
            note = (f"{block} never runs (a loop of extent 0 or a predicate nothing satisfies); {cctx.block.name}'s "
                    "iteration "
                    f"({_assign(names, point)}) reads {tensor}{elem}, which nothing writes")
            checks.append(InlineCheck(name, "refuted", note, "z3",
                                      {"consumer_iteration": dict(zip(names, point)), "element": elem,
                                       "note": note}))
            return InlineReport(block, "refused", note, tuple(checks))
    out: Stmt | None = program
    for name in [block, *(c.block.name for c in consumers)]:
        assert out is not None
        out = _replace_block(out, name, lambda sb: None)
    assert out is not None
    checks.append(InlineCheck("the producer and its consumers never run", "proved",
                              f"{block} and {', '.join(c.block.name for c in consumers)} execute nothing: removed"))
    return InlineReport(block, "inlined", f"all checks proved: {block} and its consumers never run; removed",
                        tuple(checks), out, None, tuple(c.block.name for c in consumers))


def _check_overwrite(
    block: str, pf: _Frame, pstore: Store, cctx: BlockContext, read: IndexingMap, write: IndexingMap,
    wctx: BlockContext, sizes: int, timeout: float,
) -> InlineCheck:
    """Whether block ``wctx`` (between the producer and consumer ``cctx`` in program order, sharing no loop
    with either) overwrites an element the producer read to compute an element ``cctx`` reads: z3 searches
    a consumer iteration ``t``, the producer iteration ``s`` writing what ``t`` reads, a load of ``s`` and
    an iteration ``w`` of the writer storing the element that load reads. A model is re-checked by the plain
    evaluator (``error`` otherwise); ``unsat`` proves the inlined value reads what the producer read."""
    wname = wctx.block.name
    itself = wctx is cctx
    name = (f"{wname} (between {block} and {cctx.block.name}) writes nothing {block} read for {cctx.block.name}"
            if not itself else f"no iteration of {wname} writes what {block} read for a later iteration of it")
    hits: list[tuple[Load, Store]] = [(ld, st) for ld in _value_loads(pstore.value) for st in _own_stores(wctx)
                                      if tensor_of(st.tensor) == ld.tensor and len(ld.indices) == len(st.indices)]
    if any(len(ld.indices) != len(st.indices) for ld in _value_loads(pstore.value) for st in _own_stores(wctx)
           if tensor_of(st.tensor) == ld.tensor):
        return InlineCheck(name, "unknown", "the tensor is written and read with different ranks", "syntax")
    for ld, st in hits:
        wfs = _frame(wctx, st)
        if _unsupported(wctx) is not None:
            return InlineCheck(name, "unknown", str(_unsupported(wctx)), "syntax")
        pload = pf.domain(pf.resolve(i) for i in ld.indices)
        wmap = wfs.domain(wfs.resolve(i) for i in st.indices)
        if read.is_known_empty or write.is_known_empty or wmap.is_known_empty:
            continue
        enc = Z3Encoder()
        z3 = enc.z3
        cenv, penv, wenv = enc.map_vars(read, "c_"), enc.map_vars(write, "p_"), enc.map_vars(wmap, "w_")
        sol = enc.solver(timeout=timeout)
        sol.add(*enc.domain(read, cenv), *enc.domain(write, penv), *enc.domain(wmap, wenv))
        sol.add(*[enc.expr(a, cenv) == enc.expr(b, penv) for a, b in zip(read.results, write.results)])
        sol.add(*[enc.expr(a, penv) == enc.expr(b, wenv) for a, b in zip(pload.results, wmap.results)])
        for i in range(sizes):  # one program, one size
            sol.add(cenv[("d", i)] == penv[("d", i)], penv[("d", i)] == wenv[("d", i)])
        nd = read.num_dims
        if itself:  # an earlier iteration of the consumer (a store reads its value, then writes)
            cs = [cenv[("d", i)] for i in range(sizes, nd)]
            ws = [wenv[("d", i)] for i in range(sizes, nd)]
            sol.add(z3.Or(*[z3.And(*[ws[j] == cs[j] for j in range(i)], ws[i] < cs[i]) for i in range(len(cs))])
                    if cs else z3.BoolVal(False, enc.ctx))
        sol.add(*enc.side_conditions)
        r = sol.check()
        if r == z3.unsat:
            continue
        if r != z3.sat:
            return InlineCheck(name, "unknown", str(sol.reason_unknown()), "z3")
        model = sol.model()
        c, p_, w = (_iteration(model, env, m) for m, env in ((read, cenv), (write, penv), (wmap, wenv)))
        confirmed = (read.contains(c) and write.contains(p_) and wmap.contains(w)
                     and read.evaluate(c) == write.evaluate(p_) and pload.evaluate(p_) == wmap.evaluate(w)
                     and (not itself or w[sizes:] < c[sizes:]))
        if not confirmed:
            return InlineCheck(name, "error", "encoding disagrees with evaluator", "z3")
        cn, pn, wn = ([f.var for f in x.loops] for x in (cctx, pf.ctx, wctx))
        elem = list(wmap.evaluate(w))
        note = (f"{wname}'s iteration ({_assign(wn, w)}) writes {ld.tensor}{elem} after {block}'s iteration "
                f"({_assign(pn, p_)}) read it to compute {pstore.tensor}{list(write.evaluate(p_))[sizes:]}, which "
                f"{cctx.block.name}'s iteration ({_assign(cn, c)}) reads: inlined, {cctx.block.name} would read "
                f"the value {wname} wrote")
        witness: dict[str, Any] = {"consumer_iteration": dict(zip(cn, c)), "producer_iteration": dict(zip(pn, p_)),
                                   "writer_iteration": dict(zip(wn, w)), "element": elem, "note": note}
        return InlineCheck(name, "refuted", note, "z3", witness)
    return InlineCheck(name, "proved", "z3: no writer iteration stores an element the producer read for a consumer "
                       "iteration (unsat)", "z3")  # no time here: --no-timing output is the same on every run


def _size_condition(violations: list[Any], k: int, names: list[str]) -> Any:
    """Where the obligation holds (:func:`engines.sizes.size_condition`), ``None`` without sizes."""
    if not k:
        return None
    try:
        return size_condition(violations, k, names)
    except Exception:  # the condition is a courtesy; the witness stands on its own
        return None


def _when_text(cond: Any) -> str:
    """`` (this check holds exactly when N <= 8)`` when the obligation fails for some sizes only."""
    if cond is None:
        return ""
    if cond.status == "when":
        return f" (this check holds exactly when {cond.text})"
    if cond.status == "never":
        return " (this check fails for every size at which no tensor is empty)"
    return ""


def _assign(names: list[str], values: tuple[int, ...]) -> str:
    return ", ".join(f"{n} = {v}" for n, v in zip(names, values))


def compute_inline(
    program: Stmt, block: str | None = None, *, outputs: Iterable[str] | None = None, timeout: float = 10.0
) -> InlineReport:
    """Inline ScheduleBlock ``block`` (default: the first of :func:`inline_candidates`)
    into every block that reads its tensor (see the module docstring).

    ``outputs`` names the program's output tensors (default: every tensor that
    is stored and never read, and every buffer the caller sees: a TVMScript
    function's parameter buffers, ``cinn_ir.program_params``). Raises :class:`VerifiedIndexingError` when there
    is no such block or nothing to inline.

    With size parameters every obligation is asked for every size at once. When
    one fails for some sizes only, isl gives the exact condition under which it
    holds; the inline is then decided again on the program guarded by that
    condition (``if (...)`` around the root, so every domain includes it), up to
    three times: ``inlined`` with ``when`` set means legal exactly under ``when``
    (the new program carries the guard); otherwise the first refusal (its
    witness holds at concrete sizes) is returned with ``when`` naming the
    condition under which that check would hold.
    """
    program, fits = int64_guard(program)
    first = _strip_guard(_compute_inline(program, block, outputs, timeout), fits)
    rep = first
    constraints: list[tuple[AffineExpr, Interval]] = []
    texts: list[str] = []
    for _ in range(3):
        cond = rep.condition
        if rep.status != "refused" or cond is None or cond.status != "when" or cond.constraints is None:
            break
        constraints += list(cond.constraints)
        texts.append(cond.text)
        if not _some_size_satisfies(constraints, len(program_sizes(program)), min(timeout, 2.0)):
            break  # the conditions exclude each other: refused at every size
        rep = _strip_guard(_compute_inline(_guard_sizes(program, constraints), block, outputs, timeout), fits)
        if rep.status == "inlined":
            when = " and ".join(texts)
            return replace(rep, reason=f"all checks proved when {when}", when=when)
    return first


def _some_size_satisfies(constraints: list[tuple[AffineExpr, Interval]], k: int, timeout: float) -> bool:
    """Whether some sizes (``0 <= N <= SIZE_MAX``) satisfy every constraint (z3; ``True`` when undecided)."""
    enc = Z3Encoder()
    z3 = enc.z3
    xs = [enc.int_var(f"n{i}") for i in range(k)]
    env: Env = {("d", i): x for i, x in enumerate(xs)}
    sol = enc.solver(timeout=timeout)
    sol.add(*[x >= 0 for x in xs], *[x <= SIZE_MAX for x in xs])
    for e, iv in constraints:
        t = enc.expr(e, env)
        sol.add(t >= iv.lo, t <= iv.hi)
    sol.add(*enc.side_conditions)
    return bool(sol.check() != z3.unsat)


def int64_guard(program: Stmt) -> tuple[Stmt, tuple[Cond, ...]]:
    """The program restricted to the sizes at which every symbolic extent fits in
    an int64 (``START + EXTENT <= SIZE_MAX``): outside them the loop dims' bounds
    (``[START, START + SIZE_MAX - 1]``) would cut loops short, and a witness there
    would be an artefact of the encoding. Returns the guarded program and the
    guard's comparisons (``()`` when there is none)."""
    sizes: list[For] = []
    p = program
    while isinstance(p, For) and p.kind == "size":
        sizes.append(p)
        p = p.body[0]
    k = len(sizes)
    conds: list[Cond] = []
    for ctx in walk_blocks(p):  # p is below the size pseudo-loops: ctx.loops are real loops
        for f in ctx.loops:
            if f.bound is not None and all(i < k for _, i in f.bound.variables()):
                c: Cond = (f.bound + f.start, "<=", Const(SIZE_MAX))
                if c not in conds:
                    conds.append(c)
    if not conds:
        return program, ()
    out: Stmt = If(tuple(conds), (p,), tuple(f.var for f in sizes))
    for f in reversed(sizes):
        out = replace(f, body=(out,))
    return out, tuple(conds)


def _strip_guard(rep: InlineReport, conds: tuple[Cond, ...]) -> InlineReport:
    """``rep`` with the int64 guard of :func:`int64_guard` removed from its program."""
    if not conds or rep.program is None:
        return rep

    def go(s: Stmt) -> Stmt:
        if isinstance(s, If) and s.conds == conds and len(s.body) == 1:
            return s.body[0]
        if isinstance(s, (For, If)) and len(s.body) == 1 and (isinstance(s, If) or s.kind == "size"):
            return replace(s, body=(go(s.body[0]),))
        return s

    return replace(rep, program=go(rep.program))


def _guard_sizes(program: Stmt, constraints: list[tuple[AffineExpr, Interval]]) -> Stmt:
    """The program with ``if (constraints)`` inside its size pseudo-loops, around the rest."""
    sizes: list[For] = []
    p = program
    while isinstance(p, For) and p.kind == "size":
        sizes.append(p)
        p = p.body[0]
    names = tuple(f.var for f in sizes)
    conds: list[Cond] = []
    for e, iv in constraints:
        op = "==" if iv.lo == iv.hi else ">="
        # ``N + k >= lo`` reads better as ``N >= lo - k``, ``-N + k >= lo`` as ``N <= k - lo``
        const = e.evaluate([0] * len(names))
        lin = e - Const(const)
        if isinstance(lin, Dim):
            conds.append((lin, op, Const(iv.lo - const)))
        elif isinstance(-lin, Dim):
            conds.append((-lin, "==" if op == "==" else "<=", Const(const - iv.lo)))
        else:
            conds.append((e, op, Const(iv.lo)))
    out: Stmt = If(tuple(conds), (p,), names)
    for f in reversed(sizes):
        out = replace(f, body=(out,))
    return out


def _compute_inline(
    program: Stmt, block: str | None, outputs: Iterable[str] | None, timeout: float
) -> InlineReport:
    contexts = list(walk_blocks(program))
    if block is None:
        cands = inline_candidates(program)
        if not cands:
            raise VerifiedIndexingError("no block's tensor is read by another block: nothing to inline")
        block = cands[0]
    pctx = find_block(contexts, block)
    checks: list[InlineCheck] = []

    def refuse(name: str, detail: str, witness: dict[str, Any] | None = None, engine: str = "syntax",
               condition: Any = None) -> InlineReport:
        checks.append(InlineCheck(name, "refuted", detail, engine, witness))
        when = condition.text if condition is not None and condition.status == "when" else ""
        return InlineReport(block or "", "refused", detail, tuple(checks), when=when, condition=condition)

    def ok(name: str, detail: str = "", engine: str = "syntax") -> None:
        checks.append(InlineCheck(name, "proved", detail, engine))

    if pctx.block is program:
        return refuse("the block is not the root", "the root block cannot be inlined")
    body = pctx.block.body
    own = _own_stores(pctx)
    shape_ok = len(own) == 1 and all(isinstance(s, (Bind, Store)) or (isinstance(s, If) and _only_store(s))
                                     for s in body) and len(body) <= 2
    if not shape_ok:
        return refuse("a single store in the producer block",
                      f"ComputeInline needs a block whose body is one store (after an optional axis.bind, under "
                      f"optional predicates), as TVM and CINN require; block {block} holds {len(own)} store(s) in "
                      f"{len(body)} statement(s)")
    pstore = own[0]
    tensor = pstore.tensor
    if tensor.endswith("__reduce_init") or block.endswith("__reduce_init"):
        base = tensor.removesuffix("__reduce_init")
        return refuse("no reduction", f"{block} is the init block of the reduction {base}: its value is only final "
                      "after the reduction's update block")
    writers = [c.block.name for c in contexts if c is not pctx and any(s.tensor == tensor for s in _own_stores(c))]
    if writers:
        return refuse("a single store in the producer block",
                      f"{tensor} is also written by block(s) {', '.join(writers)}")
    ok("a single store in the producer block", f"{tensor}[...] = ... is the only write of {tensor}")
    if any(ld.tensor == tensor for ld in _value_loads(pstore.value)):
        return refuse("no reduction", f"the store reads {tensor} itself (a reduction or update)")
    ok("no reduction")
    consumers = [c for c in contexts if c is not pctx and _loads_of(c, tensor)]
    out_set = set(outputs) if outputs is not None else None
    # default: a buffer the caller sees (a TVMScript function's parameters) when the program declares them,
    # else a tensor no block reads (CINN's convention)
    params = program_params(program)
    if out_set is not None:
        is_output = tensor in out_set
    else:
        is_output = tensor in params if params else not consumers
    if is_output:
        because = ("it is a parameter of the function" if out_set is None and params
                   else "it is named an output" if out_set is not None else "no block reads it")
        return refuse("the tensor is not a program output",
                      f"{tensor} is a program output ({because}); it must stay materialized")
    if not consumers:  # dead: nothing reads it and the caller does not see it
        ok("the tensor is not a program output", f"{tensor} is read by no block and is not an output")
        dead = _replace_block(program, block, lambda sb: None)
        assert dead is not None
        return InlineReport(block, "inlined", f"all checks proved: {tensor} is never read, {block} is removed",
                            tuple(checks), dead)
    ok("the tensor is not a program output", f"{tensor} is read by {', '.join(c.block.name for c in consumers)}")
    early = [c.block.name for c in consumers if c.order < pctx.order]
    if early:
        return refuse("the producer precedes its consumers",
                      f"block(s) {', '.join(early)} read {tensor} before {block}")
    ok("the producer precedes its consumers")
    # Inlining evaluates the producer's value when a consumer runs instead of when the producer ran: a
    # write to a tensor the producer reads *between* the two can change it. Writes before the producer
    # (B -> C -> D, inline C) or after the last consumer cannot.
    reads = {ld.tensor for ld in _value_loads(pstore.value)}
    between: list[tuple[BlockContext, BlockContext]] = []  # (writer, consumer)
    hazard = "no block writes a tensor the producer reads between the producer and a consumer"
    for wctx in contexts:
        if wctx is pctx or not {tensor_of(s.tensor) for s in _own_stores(wctx)} & reads:
            continue
        k0 = sum(1 for f in pctx.loops if f.kind == "size")
        for cctx in consumers:
            if wctx is not cctx and max(_shared_loops(wctx, pctx), _shared_loops(wctx, cctx)) > k0:
                checks.append(InlineCheck(hazard, "unknown", f"{wctx.block.name} writes "
                                          f"{', '.join(sorted(reads))} read by {block} inside a loop nest shared "
                                          f"with {block} or {cctx.block.name}: the order of its writes and the "
                                          "consumer's reads is not modelled"))
                return InlineReport(block, "unknown", f"not modelled: {wctx.block.name} writes a tensor "
                                    f"{block} reads, inside the loop nest of {block} or {cctx.block.name}",
                                    tuple(checks))
            if wctx is cctx and _shared_loops(pctx, cctx) > k0:
                checks.append(InlineCheck(hazard, "unknown", f"{cctx.block.name} writes "
                                          f"{', '.join(sorted(reads))} read by {block} and shares its loops: "
                                          "not modelled"))
                return InlineReport(block, "unknown", f"not modelled: {cctx.block.name} writes a tensor {block} "
                                    "reads and shares its loops", tuple(checks))
            if pctx.order < wctx.order < cctx.order or wctx is cctx:
                between.append((wctx, cctx))
    for cctx in [pctx, *consumers]:
        why = _unsupported(cctx)
        if why is not None:
            checks.append(InlineCheck("the loop structure is modelled", "unknown", why))
            return InlineReport(block, "unknown", f"unsupported: {why}", tuple(checks))
    pf = _frame(pctx, pstore)
    write = pf.domain(pf.resolve(i) for i in pstore.indices)
    k = pf.sizes
    size_names = [f.var for f in pctx.loops[:k]]
    if write.is_known_empty:  # the producer never runs (a loop of extent 0): it writes nothing
        return _inline_empty_producer(program, block, tensor, consumers, checks)
    inj = is_injective(write, timeout=timeout, sizes=k)
    if inj.refuted:
        pair = collision(with_sizes_in_results(write, k), inj)
        assert pair is not None
        names = [f.var for f in pctx.loops]
        w: dict[str, Any] = {
            "iterations": [dict(zip(names, pair[0])), dict(zip(names, pair[1]))],
            "element": list(pair[2][k:]),
            "note": f"iterations ({_assign(names, pair[0])}) and ({_assign(names, pair[1])}) both write "
            f"{tensor}{list(pair[2][k:])}",
        }
        cond = _size_condition([violating_sizes_injective(write, k)], k, size_names)
        w["note"] += _when_text(cond)
        if k:
            w["sizes"] = dict(zip(size_names, pair[0][:k]))
        return refuse("store indices are injective", str(w["note"]), w, inj.engine, cond)
    if not inj.proved:
        checks.append(InlineCheck("store indices are injective", inj.status, inj.reason, inj.engine))
        return InlineReport(block, "unknown", f"injectivity: {inj.reason}", tuple(checks))
    ok("store indices are injective", "", inj.engine)
    for cctx in consumers:
        for _st, ld in _loads_of(cctx, tensor):
            cf = _frame(cctx, _st)
            if len(ld.indices) != len(pstore.indices):
                raise VerifiedIndexingError(
                    f"{cctx.block.name} reads {tensor} with {len(ld.indices)} indices; {block} writes it with "
                    f"{len(pstore.indices)}"
                )
            read = cf.domain(cf.resolve(i) for i in ld.indices)
            name = f"{cctx.block.name}'s load of {tensor} lies in the stored region"
            if read.is_known_empty:  # the consumer never runs: it reads nothing
                ok(name, f"{cctx.block.name} never runs (a loop of extent 0 or an empty predicate)")
                continue
            v, rw = reads_inside(read, write, timeout, sizes=k)
            if v.refuted and rw is not None:
                cw: dict[str, Any] = dict(rw)
                loop_names = [f.var for f in cctx.loops]
                cw["consumer_iteration"] = dict(zip(loop_names, rw["consumer_iteration"]))
                cw["element"] = list(rw["element"][k:])
                if k:
                    cw["sizes"] = dict(zip(size_names, rw["consumer_iteration"][:k]))
                cond = _size_condition([violating_sizes_subset(read, write, k)], k, size_names)
                cw["note"] = (
                    f"{cctx.block.name}'s iteration ({_assign(loop_names, tuple(rw['consumer_iteration']))}) reads "
                    f"{tensor}{cw['element']}, which {block} never writes" + _when_text(cond)
                )
                return refuse(name, cw["note"], cw, v.engine, cond)
            if not v.proved:
                checks.append(InlineCheck(name, v.status, v.reason, v.engine))
                return InlineReport(block, "unknown", f"{name}: {v.reason}", tuple(checks))
            ok(name, "", v.engine)
            shared = _shared_loops(pctx, cctx)
            if shared > k:
                loop_names = [f.var for f in cctx.loops]
                oname = (f"{block} writes each element {cctx.block.name} reads before the read "
                         f"(shared loops {', '.join(loop_names[k:shared])})")
                ov, ow = _written_before_read(write, read, shared, timeout, sizes=k)
                if ov.refuted and ow is not None:
                    pnames = [f.var for f in pctx.loops]
                    ow["note"] = (
                        f"{cctx.block.name}'s iteration ({_assign(loop_names, tuple(ow['consumer_iteration']))}) reads "
                        f"{tensor}{ow['element']} before {block}'s iteration "
                        f"({_assign(pnames, tuple(ow['producer_iteration']))}) writes it"
                    )
                    return refuse(oname, ow["note"], ow, "z3")
                if not ov.proved:
                    checks.append(InlineCheck(oname, ov.status, ov.reason, ov.engine))
                    return InlineReport(block, "unknown", f"{oname}: {ov.reason}", tuple(checks))
                ok(oname, "", "z3")
            for wctx, _c in [(w_, c_) for w_, c_ in between if c_ is cctx]:
                wrep = _check_overwrite(block, pf, pstore, cctx, read, write, wctx, k, timeout)
                checks.append(wrep)
                if wrep.status == "refuted":
                    return InlineReport(block, "refused", wrep.detail, tuple(checks))
                if wrep.status != "proved":
                    return InlineReport(block, "unknown", f"{wrep.name}: {wrep.detail}", tuple(checks))
    if not between:
        ok(hazard)
    if _empty_domain(write, timeout):  # every consumer load lies in an empty region: no consumer runs either
        return _inline_empty_producer(program, block, tensor, consumers, checks, timeout)
    inv = inverse(write, timeout=timeout, sizes=k)
    if not inv.proved or inv.inverse is None:
        checks.append(InlineCheck("the store map has a proven inverse", inv.status, inv.reason))
        return InlineReport(block, "unknown", f"inverse of the store map: {inv.reason}", tuple(checks),
                            store_inverse=inv)
    ok("the store map has a proven inverse", inv.inverse.format(one_line=True), "isl")
    g = inv.inverse

    def replacement(ld: Load, cf: _Frame) -> Value:
        loops = [r.substitute(dims=[Dim(i) for i in range(k)] + list(ld.indices)) for r in g.results]
        iters = [b.substitute(dims=loops) for b in pf.bind_values]
        value = _subst_value(pstore.value, loops + iters)
        return _map_value(value, lambda x: Load(x.tensor, tuple(_tidy_index(e, cf) for e in x.indices)),
                          lambda e: e)

    new_program: Stmt | None = program
    for cctx in consumers:
        cf = _frame(cctx)

        def rewrite(sb: ScheduleBlock, cf: _Frame = cf) -> Stmt:
            def fix(s: Stmt) -> Stmt:
                if isinstance(s, Store):
                    def swap(ld: Load) -> Value:
                        return replacement(ld, cf) if ld.tensor == tensor else ld

                    return Store(s.tensor, s.indices, _map_value(s.value, swap, lambda e: e), s.scope)
                if isinstance(s, For):
                    return replace(s, body=tuple(fix(c) for c in s.body))
                if isinstance(s, If):
                    return If(s.conds, tuple(fix(c) for c in s.body), s.scope)
                if isinstance(s, Group):
                    return Group(tuple(fix(c) for c in s.body))
                return s

            return ScheduleBlock(sb.name, tuple(fix(c) for c in sb.body))

        assert new_program is not None
        new_program = _replace_block(new_program, cctx.block.name, rewrite)
    assert new_program is not None
    new_program = _replace_block(new_program, block, lambda sb: None)
    assert new_program is not None
    new_contexts = {c.block.name: c for c in walk_blocks(new_program)}
    for cctx in consumers:
        nctx = new_contexts[cctx.block.name]
        for old, new in zip(_own_stores(cctx), _own_stores(nctx)):
            v = _prove_consumer(pf, pstore, _frame(cctx, old), old, new, tensor, timeout)
            checks.append(InlineCheck(v.question, v.status, v.reason, v.engine))
            if not v.proved:
                return InlineReport(block, "unknown", f"{v.question}: {v.status}", tuple(checks), None, inv)
    every = f"all checks proved for every size ({', '.join(size_names)})" if k else "all checks proved"
    return InlineReport(block, "inlined", every, tuple(checks), new_program, inv,
                        tuple(c.block.name for c in consumers))


def inline_all(
    program: Stmt, *, outputs: Iterable[str] | None = None, timeout: float = 10.0
) -> tuple[Stmt, list[InlineReport]]:
    """Inline every block that can be, as CINN's ``DoComputeInline`` walks the
    blocks in order: repeatedly, the first candidate (:func:`inline_candidates`)
    whose :func:`compute_inline` is ``inlined`` is applied, until none is.

    Returns the final program and one report per attempt (inlined, refused or
    unknown), in order; every applied step carries its own proofs, so the final
    program computes the outputs of the original. ``outputs`` defaults to the
    original program's outputs: the buffers the caller sees when the program
    declares them (a TVMScript function's parameters), else the tensors stored and
    never read (CINN's convention); so a tensor whose readers are all inlined away
    does not become an output. A dead producer (a block whose tensor no block
    reads and that is not an output: a ``T.alloc_buffer`` never read) is removed
    (its :func:`compute_inline` report says so).
    """
    if outputs is None:
        stored = {s.tensor for c in walk_blocks(program) for s in _own_stores(c)}
        read = {ld.tensor for c in walk_blocks(program) for st in _own_stores(c) for ld in _value_loads(st.value)}
        params = set(program_params(program))
        unread = stored - read  # (an init block's pseudo-tensor X__reduce_init is never read: kept as is)
        outputs = ((stored & params) | {t for t in unread if t.endswith('__reduce_init')}) if params else unread
    outs = set(outputs)
    reports: list[InlineReport] = []
    tried: dict[str, Stmt] = {}
    current = program
    while True:
        progressed = False
        for name in inline_candidates(current) + _dead_blocks(current, outs):
            if tried.get(name) is current:
                continue
            rep = compute_inline(current, name, outputs=outs, timeout=timeout)
            reports.append(rep)
            tried[name] = current
            if rep.status == "inlined" and rep.program is not None:
                current = rep.program
                progressed = True
                break
        if not progressed:
            return current, reports


def _dead_blocks(program: Stmt, outputs: set[str]) -> list[str]:
    """Blocks storing only tensors that no other block reads and that are not ``outputs``, in order."""
    blocks = [b for b in walk_blocks(program) if b.loops or b.block.name != "root"]
    out = []
    for b in blocks:
        tensors = {s.tensor for s in _own_stores(b)}
        if tensors and not tensors & outputs and not any(t.endswith("__reduce_init") for t in tensors) and not any(
                _loads_of(o, t) for o in blocks if o is not b for t in tensors):
            out.append(b.block.name)
    return out
