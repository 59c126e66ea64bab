"""TVM's ReverseComputeInline on CINN's loop-nest IR, legality checked, the rewrite proven.

:func:`reverse_compute_inline` moves a consumer block ``D[w(t)] = g(B[r(t)], ...)``
into the producer ``B[p(s)] = f(s)`` of the tensor it reads: the producer then
stores ``D[w(t(s))] = g(f(s), ...)`` with ``t(s) = r^-1(p(s))`` -- the consumer
iteration that reads the element the producer iteration ``s`` writes, through
the **proven inverse** of the consumer's read map (not a syntactic
substitution) -- and the consumer block, ``B`` and the loops left empty are
removed.

Checks (each reported, in order, with a witness when it fails): the consumer is
one store (after an optional ``axis.bind``, under optional predicates -- TVM's
``T.where`` --, which are part of its domain) and the only writer of its tensor;
the producer (the block writing the last-computed tensor the consumer reads) is
one store likewise; a producer that is a reduction hands the consumer to
:func:`~verified_indexing.legality.epilogue.fuse_reduction_epilogue` (applied on
the last reduction iteration); the consumer is the only reader of ``B``, which
is not an output; it reads ``B`` at one index tuple; its other inputs and its own
tensor are not touched between the two blocks; the producer's store and the
consumer's read are injective (two iterations otherwise); the consumer reads
only elements the producer writes (an unwritten read otherwise); the read has a
proven inverse. When the producer writes elements the consumer never reads, the
moved store runs under a predicate built from that inverse (``t(s)`` is a
consumer iteration reading ``p(s)``), redundant comparisons dropped, proven exact
by z3 (every kept write read, every dropped write unread). Producer and consumer
may share loops when z3 proves every element is read in the shared iteration
that writes it (``unknown`` otherwise). A block that never runs (a loop of
extent 0) is decided: both never run -> removed; one runs -> refused with its
first iteration. Shapes outside the model are ``unknown`` naming what is
missing, never a refusal. Then z3 proves, for every producer iteration ``s``
and the consumer iteration ``t`` reading its element, that the rewritten store
writes the consumer's element with the consumer's value (reads, constants and
operations uninterpreted), and the two programs are compared by exact
evaluation (at sizes 0..3 for size parameters) as a cross-check.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import Any

from verified_indexing.engines import Verdict, Z3Encoder
from verified_indexing.engines.sizes import with_sizes_in_results
from verified_indexing.engines.z3 import Env
from verified_indexing.errors import VerifiedIndexingError
from verified_indexing.expr import AffineExpr, Const, Dim
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.legality._proofs import now, reads_inside
from verified_indexing.legality.cinn_eval import tensor_of
from verified_indexing.legality.cinn_ir import (
    Bind,
    BlockContext,
    Cond,
    If,
    Load,
    ScheduleBlock,
    Stmt,
    Store,
    find_block,
    format_conds,
    walk_blocks,
)
from verified_indexing.legality.epilogue import (
    Reduction,
    _compare_at_sizes,
    _materialized,
    _one_side_runs,
    _outside_witness,
    find_reduction,
)
from verified_indexing.legality.inline import (
    InlineCheck,
    InlineReport,
    _assign,
    _empty_domain,
    _encode_conds,
    _Frame,
    _frame,
    _iteration,
    _loop_bounds,
    _map_value,
    _only_store,
    _own_stores,
    _replace_block,
    _same_element,
    _shared_loops,
    _strip_guard,
    _subst_value,
    _tidy_index,
    _value_loads,
    _ValueEncoder,
    access_conflicts,
    int64_guard,
)
from verified_indexing.legality.inverse import collision, inverse, is_injective

__all__ = ["reverse_compute_inline"]


def reverse_compute_inline(
    program: Stmt, block: str, *, outputs: Iterable[str] | None = None, timeout: float = 10.0
) -> InlineReport:
    """Inline the consumer block ``block`` into the producer of the tensor it
    reads (see the module docstring). ``InlineReport.consumers`` holds the
    producer's name. Raises :class:`VerifiedIndexingError` when there is no such block."""
    original = program
    program, fits = int64_guard(program)
    rep = replace(_reverse_compute_inline(program, block, outputs, timeout), kind="reverse-inline")
    if rep.program is None or not fits:
        return rep
    return replace(rep, program=_strip_guard(rep, fits).program) if original is not program else rep


def _reverse_compute_inline(
    program: Stmt, block: str, outputs: Iterable[str] | None, timeout: float
) -> InlineReport:
    contexts = list(walk_blocks(program))
    cctx = find_block(contexts, block)
    checks: list[InlineCheck] = []

    def refuse(name: str, detail: str, witness: dict[str, Any] | None = None, engine: str = "syntax") -> InlineReport:
        checks.append(InlineCheck(name, "refuted", detail, engine, witness))
        return InlineReport(block, "refused", detail, tuple(checks))

    def give_up(name: str, detail: str, engine: str = "syntax") -> InlineReport:
        checks.append(InlineCheck(name, "unknown", detail, engine))
        return InlineReport(block, "unknown", detail, tuple(checks))

    def ok(name: str, detail: str = "", engine: str = "syntax") -> None:
        checks.append(InlineCheck(name, "proved", detail, engine))

    cstore = _the_store(cctx)
    if cstore is None or not cctx.loops:
        what = (f"block {block} is not inside a loop nest" if cstore is not None else
                f"block {block} holds {len(_own_stores(cctx))} store(s) in {len(cctx.block.body)} statement(s)")
        return give_up("the consumer block is modelled", f"not modelled: {what}; only one store (after an "
                       "optional axis.bind, under optional predicates) inside loops is")
    dname = tensor_of(cstore.tensor)
    writers = [c.block.name for c in contexts if c is not cctx and any(tensor_of(s.tensor) == dname
                                                                      for s in _own_stores(c))]
    if writers:
        return refuse("a single store in the consumer block", f"{dname} is also written by {', '.join(writers)}")
    if any(ld.tensor == dname for ld in _value_loads(cstore.value)):
        return refuse("a single store in the consumer block", f"the store reads {dname} itself (a reduction)")
    ok("a single store in the consumer block", f"{dname}[...] = ... is the only write of {dname}")
    # The producer: the block writing the last-computed tensor the consumer reads.
    read_tensors = {ld.tensor for ld in _value_loads(cstore.value)}
    producers = [c for c in contexts if c is not cctx and c.order < cctx.order
                 and any(tensor_of(s.tensor) in read_tensors for s in _own_stores(c))]
    if not producers:
        return refuse("the producer is one store, not a reduction",
                      f"block {block} reads no tensor that an earlier block computes")
    pctx = max(producers, key=lambda c: c.order)
    pname = pctx.block.name
    red_tensor = next((tensor_of(st.tensor) for st in _own_stores(pctx)), "")
    red = find_reduction(program, red_tensor, predicated=True)
    if isinstance(red, Reduction) and pctx in (red.init, red.update):
        # A reduction producer: the consumer moves onto the reduction's last iteration (epilogue fusion).
        return _into_reduction(program, block, red, outputs, checks, timeout)
    pstore = _the_store(pctx)
    if pstore is None:
        return give_up("the producer is one store, not a reduction",
                       f"not modelled: the producer {pname} holds {len(_own_stores(pctx))} store(s) in "
                       f"{len(pctx.block.body)} statement(s); only one store (after an optional axis.bind, under "
                       "optional predicates) is")
    btensor = pstore.tensor
    reduction = btensor.endswith("__reduce_init") or any(ld.tensor == btensor for ld in _value_loads(pstore.value)) \
        or any(s.tensor == f"{btensor}__reduce_init" for c in contexts for s in _own_stores(c))
    if reduction:
        return give_up("the producer is one store, not a reduction",
                       f"not modelled: {tensor_of(btensor)} is a reduction without a recognized init and update "
                       f"({red if isinstance(red, str) else 'another shape'})")
    several = [c.block.name for c in contexts if any(tensor_of(s.tensor) == btensor for s in _own_stores(c))]
    if len(several) > 1:
        return give_up("the producer is one store, not a reduction",
                       f"not modelled: {btensor} is written by several blocks ({', '.join(several)}); the producer "
                       f"of what {block} reads must be its only writer")
    if not pctx.loops:
        return give_up("the producer is one store, not a reduction",
                       f"not modelled: the producer {pname} is not inside a loop nest")
    ok("the producer is one store, not a reduction", f"{pname}: {btensor}[...] = ...")
    kept = _materialized(program, contexts, btensor, outputs, lambda c: c is cctx)
    if kept is not None:
        return refuse(f"{block} is the only reader of {btensor}, which is not an output", kept)
    ok(f"{block} is the only reader of {btensor}, which is not an output")
    if any(ld.tensor == dname for ld in _value_loads(pstore.value)):
        # moved into the producer, the consumer's writes interleave with the producer's reads of them
        # (A[N - 1 - i] = (A[i] + 1) * 2: iteration i overwrites what a later iteration reads)
        return give_up(f"{pname} does not read {dname}, which {block} writes",
                       f"not modelled: the producer {pname} reads {dname}, which {block} writes (an update in "
                       f"place): moved into {pname}, {block}'s writes would interleave with {pname}'s reads")
    cf, pf = _frame(cctx, cstore), _frame(pctx, pstore)
    bloads = [ld for ld in _value_loads(cstore.value) if ld.tensor == btensor]
    tuples = {tuple(cf.resolve(i) for i in ld.indices) for ld in bloads}
    if len(tuples) != 1:
        return refuse(f"{block} reads {btensor} at one index tuple",
                      f"{block} reads {btensor} at {len(tuples)} different index tuples; a producer iteration "
                      "computes only the element it writes")
    ok(f"{block} reads {btensor} at one index tuple")
    # Moving D to B's place runs it before the blocks in between: none may write an element D reads, nor
    # read an element D writes (z3, the two iterations re-checked by evaluation).
    middle = [c for c in contexts if pctx.order < c.order < cctx.order and c is not cctx]
    uname = f"{block}'s other inputs and {dname} are untouched between {pname} and {block}"
    ks = sum(1 for f in cctx.loops if f.kind == "size")
    for loads_of in (None, dname):
        status, note, wit = access_conflicts(cctx, cstore, loads_of, middle, ks, timeout)
        if status == "refuted":
            return refuse(uname, note, wit, "z3")
        if status != "proved":
            return give_up(uname, note, "z3")
    ok(uname, "", "z3" if middle else "syntax")
    write = pf.domain(pf.resolve(i) for i in pstore.indices)
    read = cf.domain(cf.resolve(i) for i in bloads[0].indices)
    if read.is_known_empty or write.is_known_empty:  # a loop of extent 0: a block that never runs
        return _never_runs(program, block, pname, btensor, dname, read, write, cctx, pctx, checks, timeout)
    if len(read.results) != len(write.results):
        raise VerifiedIndexingError(f"{block} reads {btensor} with {len(read.results)} indices; {pname} writes it "
                                    f"with {len(write.results)}")
    k = pf.sizes  # size parameters: every obligation for every size at once (engines.sizes)
    for m, who, ctx, what in ((write, pname, pctx, "writes"), (read, block, cctx, "read")):
        name = f"{who}'s {'store' if what == 'writes' else 'read of ' + btensor} is injective"
        v = is_injective(m, timeout=timeout, sizes=k)
        names = [f.var for f in ctx.loops]
        if v.refuted:
            pair = collision(with_sizes_in_results(m, k), v)
            assert pair is not None
            w: dict[str, Any] = {"iterations": [dict(zip(names, pair[0])), dict(zip(names, pair[1]))],
                                 "element": list(pair[2][k:]),
                                 "note": f"{who}'s iterations ({_assign(names, pair[0])}) and "
                                         f"({_assign(names, pair[1])}) both {'write' if what == 'writes' else 'read'}"
                                         f" {btensor}{list(pair[2][k:])}"}
            return refuse(name, str(w["note"]), w, v.engine)
        if not v.proved:
            return give_up(name, v.reason, v.engine)
        ok(name, "", v.engine)
    partial = False  # the producer writes elements the consumer never reads: the moved store is guarded
    for sub, sup, name, ctx, kind in (
        (read, write, f"{block} reads only elements {pname} writes", cctx, "unwritten"),
        (write, read, f"{block} reads every element {pname} writes", pctx, "unread"),
    ):
        v, rw = reads_inside(sub, sup, timeout, sizes=k)
        if v.refuted and rw is not None and kind == "unread":
            loops = [f.var for f in ctx.loops]
            it = tuple(rw["consumer_iteration"])
            checks.append(InlineCheck(f"{name}, or the moved store is guarded", "proved",
                                      f"{pname}'s iteration ({_assign(loops, it)}) writes "
                                      f"{btensor}{list(rw['element'][k:])}, which {block} never reads: the moved "
                                      f"store is guarded by a predicate (T.where)", v.engine))
            partial = True
            continue
        if v.refuted and rw is not None:
            loops = [f.var for f in ctx.loops]
            cw, it = _outside_witness(rw, loops, k)
            if kind == "unwritten":
                cw["note"] = (f"{block}'s iteration ({_assign(loops, it)}) reads {btensor}{list(cw['element'])}, "
                              f"which {pname} never writes")
            else:
                cw["note"] = (f"{pname}'s iteration ({_assign(loops, it)}) writes {btensor}{list(cw['element'])}, "
                              f"which {block} never reads: the moved store would write an extra element of {dname}")
            return refuse(name, cw["note"], cw, v.engine)
        if not v.proved:
            return give_up(name, v.reason, v.engine)
        ok(name, "", v.engine)
    inv = inverse(read, timeout=timeout, sizes=k)
    if not inv.proved or inv.inverse is None:
        checks.append(InlineCheck(f"{block}'s read of {btensor} has a proven inverse", inv.status, inv.reason))
        return InlineReport(block, "unknown", f"inverse of the read map: {inv.reason}", tuple(checks),
                            store_inverse=inv)
    ok(f"{block}'s read of {btensor} has a proven inverse", inv.inverse.format(one_line=True), "isl")
    g_inv = inv.inverse
    # The consumer's scope at producer iteration s (over the producer's scope).
    t_loops = [r.substitute(dims=[Dim(i) for i in range(k)] + list(pstore.indices)) for r in g_inv.results]
    t_scope = t_loops + [b.substitute(dims=t_loops) for b in cf.bind_values]
    new_idx = tuple(_tidy_index(e.substitute(dims=t_scope), pf) for e in cstore.indices)
    value = _subst_value(cstore.value, t_scope)
    value = _map_value(value, lambda x: pstore.value if x.tensor == btensor else
                       Load(x.tensor, tuple(_tidy_index(e, pf) for e in x.indices)), lambda e: e)
    new_store = Store(cstore.tensor, new_idx, value, pstore.scope)
    shared = _shared_loops(pctx, cctx)
    if shared > k:
        sv = _same_shared_iteration(write, read, k, shared, timeout)
        sname = f"{block} reads each element in the iteration of the shared loops that {pname} writes it"
        if not sv.proved:
            return give_up(sname, f"not modelled: {sv.reason or sv.status}", sv.engine)
        ok(sname, "", sv.engine)
    guard: tuple[Cond, ...] = ()
    if partial:
        gv, guard = _guard(pf, pstore, cf, bloads[0], t_loops, timeout)
        gname = (f"the predicate on the moved store holds exactly where {block} reads the element {pname} writes "
                 "(every kept write read, every dropped write unread)")
        if not gv.proved:
            return give_up(gname, gv.reason or gv.status, gv.engine)
        ok(gname, format_conds(guard, pstore.scope), gv.engine)
    moved: Stmt = If(guard, (new_store,), pstore.scope) if guard else new_store

    def rewrite(sb: ScheduleBlock) -> Stmt:
        def go(x: Stmt) -> Stmt:
            if x is pstore:
                return moved
            if isinstance(x, If):
                return If(x.conds, tuple(go(c) for c in x.body), x.scope)
            return x

        return ScheduleBlock(sb.name, tuple(go(x) for x in sb.body))

    new_program = _replace_block(program, block, lambda sb: None)
    assert new_program is not None
    new_program = _replace_block(new_program, pname, rewrite)
    assert new_program is not None
    vp = _prove_moved(pf, pstore, cf, cstore, new_store, btensor, timeout)
    checks.append(InlineCheck(vp.question, vp.status, vp.reason, vp.engine))
    if not vp.proved:
        return InlineReport(block, "unknown", f"{vp.question}: {vp.status}", tuple(checks), None, inv)
    small, diff = _compare_at_sizes(program, new_program, dname)
    if diff is not None:
        checks.append(InlineCheck("the rewritten program computes the same values", "error",
                                  f"internal error: evaluation differs at {dname}{diff['element']}", "evaluation",
                                  diff))
        return InlineReport(block, "unknown", "internal error: evaluation disagrees with the proof", tuple(checks))
    if small:
        ok("the rewritten program computes the same values", "no difference on 3 input sets", "evaluation")
    return InlineReport(block, "inlined", "all checks proved", tuple(checks), new_program, inv, (pname,))


def _the_store(ctx: BlockContext) -> Store | None:
    """The block's one store, after an optional ``axis.bind`` and under optional predicates inside the
    block (a TVM ``T.where``); ``None`` for any other shape."""
    own = _own_stores(ctx)
    body = ctx.block.body
    shape = [x for x in body if not isinstance(x, Bind)]
    if len(own) != 1 or len(shape) != 1 or len(body) - len(shape) > 1 or not _only_store(shape[0]):
        return None
    return own[0]


def _into_reduction(
    program: Stmt, block: str, red: Reduction, outputs: Iterable[str] | None, checks: list[InlineCheck],
    timeout: float,
) -> InlineReport:
    """ReverseComputeInline into a reduction: the consumer becomes an epilogue applied when the reduction's
    last iteration has run (:func:`~verified_indexing.legality.epilogue.fuse_reduction_epilogue`, whose
    checks and proofs are reported)."""
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue

    rep = fuse_reduction_epilogue(program, block, outputs=outputs, timeout=timeout)
    status = {"fused": "inlined", "illegal": "refused", "unknown": "unknown"}[rep.status]
    all_checks = (*checks, InlineCheck("the producer is a reduction: the consumer is fused as its epilogue",
                                       "proved", f"init {red.init.block.name}, update {red.update.block.name}"),
                  *rep.checks)
    return InlineReport(block, status, rep.reason, all_checks, rep.program if status == "inlined" else None,  # type: ignore[arg-type]
                        None, (red.update.block.name,))


def _same_shared_iteration(write: IndexingMap, read: IndexingMap, sizes: int, shared: int, timeout: float) -> Verdict:
    """z3: every consumer iteration reads an element written in the same iteration of the shared loops (the
    moved store then runs in that iteration, before it)."""
    question = "the consumer reads each element in the shared iteration that writes it"
    t0 = now()
    enc, sol, penv, cenv = _same_element(write, read, sizes, timeout, ("p_", "c_"))
    z3 = enc.z3
    sol.add(z3.Or(*[penv[("d", i)] != cenv[("d", i)] for i in range(sizes, shared)]))
    sol.add(*enc.side_conditions)
    r = sol.check()
    if r == z3.unsat:
        return Verdict("proved", "z3", now() - t0, question)
    if r == z3.sat:
        m = sol.model()
        pv, cv = list(_iteration(m, penv, write)), list(_iteration(m, cenv, read))
        return Verdict("unknown", "z3", now() - t0, question,
                       f"the producer's iteration {pv} writes what the consumer's iteration {cv} reads, in another "
                       "iteration of the shared loops")
    return Verdict("unknown", "z3", now() - t0, question, str(sol.reason_unknown()))


def _guard(
    pf: _Frame, pstore: Store, cf: _Frame, bload: Load, t_loops: list[AffineExpr], timeout: float,
    given: Sequence[Cond] | None = None,
) -> tuple[Verdict, tuple[Cond, ...]]:
    """The predicate, over the producer's scope, under which producer iteration ``s`` writes an element
    the consumer reads: ``t(s)`` (the read's inverse at the written element) is a consumer iteration
    (its loop ranges and predicates) and reads that element. Comparisons every producer iteration
    satisfies are dropped. z3 proves it exact: under it ``t(s)`` is a consumer iteration reading
    ``p(s)`` (every kept write read), and any consumer iteration reading ``p(s)`` implies it (every
    dropped write unread)."""
    question = "the moved store's predicate is exact"
    t0 = now()
    n = len(pf.loops)
    t_scope = t_loops + [b.substitute(dims=t_loops) for b in cf.bind_values]
    full: list[Cond] = []
    for f, tl in zip(cf.loops, t_loops):
        if f.kind == "size":
            continue
        full.append((tl, ">=", Const(f.start)))
        hi = f.bound.substitute(dims=t_loops) + (f.start - 1) if f.bound is not None else Const(f.start + f.extent - 1)
        full.append((tl, "<=", hi))
    full += [(a.substitute(dims=t_loops), op, b.substitute(dims=t_loops)) for a, op, b in cf.conds()]
    full += [(r.substitute(dims=t_scope), "==", w) for r, w in zip(bload.indices, pstore.indices)]
    # over the producer's loop variables only: TVM evaluates a block's T.where outside the block
    full = [(_tidy_index(pf.resolve(a), pf), op, _tidy_index(pf.resolve(b), pf)) for a, op, b in full]
    enc = Z3Encoder()
    z3 = enc.z3
    xs = [enc.int_var(f"s_{f.var}") for f in pf.loops]
    lenv: Env = {("d", i): x for i, x in enumerate(xs)}
    senv: Env = {("d", i): x for i, x in enumerate(xs + [enc.expr(b, lenv) for b in pf.bind_values])}
    dom = [*_loop_bounds(enc, pf, xs), *_encode_conds(enc, pf, lenv)]

    def holds(c: Cond, env: Env) -> Any:
        a, b = enc.expr(c[0], env), enc.expr(c[2], env)
        return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b}[c[1]]

    kept: list[Cond] = []
    for c in full if given is None else ():
        sol = enc.solver(timeout=timeout)
        sol.add(*dom, z3.Not(holds(c, senv)), *enc.side_conditions)
        r = sol.check()
        if r == z3.unsat:
            continue
        if r != z3.sat:
            return Verdict("unknown", "z3", now() - t0, question, str(sol.reason_unknown())), ()
        if c not in kept:
            kept.append(c)
    if given is not None:  # check a predicate from elsewhere (a fused program given by the user) instead
        kept = list(given)
    # (a) every kept write is read: the kept comparisons imply all of them on the producer's domain
    sol = enc.solver(timeout=timeout)
    sol.add(*dom, *[holds(c, senv) for c in kept],
            z3.Not(z3.And(*[holds(c, senv) for c in full])) if full else z3.BoolVal(False, enc.ctx),
            *enc.side_conditions)
    ra = sol.check()
    # (b) every dropped write is unread: a consumer iteration reading p(s) satisfies the predicate
    ys = [(xs[i] if i < pf.sizes else enc.int_var(f"t_{f.var}")) for i, f in enumerate(cf.loops)]
    tenv_l: Env = {("d", i): y for i, y in enumerate(ys)}
    tenv: Env = {("d", i): y for i, y in enumerate(ys + [enc.expr(b, tenv_l) for b in cf.bind_values])}
    sol2 = enc.solver(timeout=timeout)
    sol2.add(*dom, *_loop_bounds(enc, cf, ys), *_encode_conds(enc, cf, tenv_l))
    sol2.add(*[enc.expr(r, tenv) == enc.expr(w, senv) for r, w in zip(bload.indices, pstore.indices)])
    sol2.add(z3.Not(z3.And(*[holds(c, senv) for c in kept])) if kept else z3.BoolVal(False, enc.ctx),
             *enc.side_conditions)
    rb = sol2.check()
    if ra == z3.unsat and rb == z3.unsat:
        return Verdict("proved", "z3", now() - t0, question), tuple(kept)
    if z3.sat in (ra, rb) and given is not None:
        which = " (it keeps an unread one)" if ra == z3.sat else " (it drops a read one)"
        return Verdict("refuted", "z3", now() - t0, question,
                       "the predicate is not exactly the elements the consumer reads" + which), ()
    if z3.sat in (ra, rb):
        return Verdict("error", "z3", now() - t0, question, "the predicate built from the proven inverse is not "
                       "exact (internal inconsistency)"), ()
    del n
    return Verdict("unknown", "z3", now() - t0, question, "z3 could not decide the predicate's exactness"), ()


def _never_runs(
    program: Stmt, block: str, pname: str, btensor: str, dname: str, read: IndexingMap, write: IndexingMap,
    cctx: BlockContext, pctx: BlockContext, checks: list[InlineCheck], timeout: float,
) -> InlineReport:
    """The producer or the consumer never runs. Both: they execute nothing and are removed. Only the
    producer: the consumer reads an element nothing writes (refused with its first iteration); only the
    consumer: the moved store would write elements of ``dname`` the consumer never writes (refused with
    the producer's first iteration)."""
    r_empty, w_empty = _empty_domain(read, timeout), _empty_domain(write, timeout)
    if r_empty and w_empty:
        out: Stmt | None = _replace_block(program, block, lambda sb: None)
        assert out is not None
        out = _replace_block(out, pname, lambda sb: None)
        assert out is not None
        checks.append(InlineCheck(f"{pname} and {block} never run", "proved", "both execute nothing: removed"))
        return InlineReport(block, "inlined", f"all checks proved: {pname} and {block} never run; removed",
                            tuple(checks), out, None, (pname,))
    m, ctx, who = (read, cctx, block) if w_empty else (write, pctx, pname)
    found = _one_side_runs(m, [f.var for f in ctx.loops], timeout, w_empty, block, pname, btensor, dname,
                           "the moved store")
    name = (f"{block} reads only elements {pname} writes" if w_empty
            else f"{block} reads every element {pname} writes")
    if found is None:
        checks.append(InlineCheck(name, "unknown", f"whether {who} runs is not decided", "z3"))
        return InlineReport(block, "unknown", f"{name}: whether {who} runs is not decided", tuple(checks))
    note, witness = found
    checks.append(InlineCheck(name, "refuted", note, "z3", witness))
    return InlineReport(block, "refused", note, tuple(checks))


def _prove_moved(
    pf: _Frame, pstore: Store, cf: _Frame, cstore: Store, new: Store, btensor: str, timeout: float
) -> Verdict:
    """z3: for every producer iteration ``s`` and the consumer iteration ``t``
    whose read of ``btensor`` is the element ``s`` writes, the moved store
    writes ``t``'s element with ``t``'s value (its load of ``btensor`` standing
    for the producer's value)."""
    question = f"the moved store writes what {cf.ctx.block.name} wrote"
    t0 = now()
    enc = Z3Encoder()
    z3 = enc.z3
    ve = _ValueEncoder(enc)
    s = enc.solver(timeout=timeout)

    shared_sizes: list[Any] = []

    def scope(frame: _Frame, prefix: str) -> Env:
        xs = [enc.int_var(f"{prefix}_{f.var}") for f in frame.loops]
        if not shared_sizes:
            shared_sizes.extend(xs[:frame.sizes])
        xs[:frame.sizes] = shared_sizes  # one program, one size
        s.add(*_loop_bounds(enc, frame, xs), *_encode_conds(enc, frame, {("d", i): x for i, x in enumerate(xs)}))
        lenv: Env = {("d", i): x for i, x in enumerate(xs)}
        sc = xs + [enc.expr(b, lenv) for b in frame.bind_values]
        return {("d", i): x for i, x in enumerate(sc)}

    penv, cenv = scope(pf, "p"), scope(cf, "c")
    bl = next(ld for ld in _value_loads(cstore.value) if ld.tensor == btensor)
    for a, b in zip(pstore.indices, bl.indices):
        s.add(enc.expr(a, penv) == enc.expr(b, cenv))
    produced = ve.value(pstore.value, penv)
    before = ve.value(cstore.value, cenv, lambda ld: produced if ld.tensor == btensor else None)
    after = ve.value(new.value, penv)
    same: list[Any] = [enc.expr(a, penv) == enc.expr(b, cenv) for a, b in zip(new.indices, cstore.indices)]
    s.add(*enc.side_conditions)
    s.add(z3.Not(z3.And(before == after, *same)))
    r = s.check()
    if r == z3.unsat:
        return Verdict("proved", "z3", now() - t0, question)
    if r == z3.sat:
        return Verdict("error", "z3", now() - t0, question, "the moved store differs (internal inconsistency)")
    return Verdict("unknown", "z3", now() - t0, question, str(s.reason_unknown()))

