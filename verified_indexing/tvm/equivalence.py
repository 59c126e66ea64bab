"""Translation validation of a loop-nest program: does ``after`` compute every output ``before`` computes?

Both programs are the CINN loop-nest IR of :mod:`~verified_indexing.legality.cinn_ir`
(TVMScript is read into it by :mod:`~verified_indexing.legality.tvmscript`). The
question is the one a schedule primitive must answer: for every size, ``after``
writes exactly the output elements ``before`` writes, with the same values. The
answer is one of the four verdicts:

* **refuted** -- the plain interpreter (:func:`~verified_indexing.legality.cinn_eval.run_exact`,
  exact arithmetic) runs both programs on the same inputs
  (:data:`~verified_indexing.legality.cinn_eval.INPUT_RULE`, several seeds; at a few
  concrete sizes when there are size parameters) and an output element differs, is
  written by one program only, or ``after`` reads an element nothing wrote: the
  witness names the sizes, the element and both values; it is re-run once more
  before it is reported.
* **proved** -- for every size (z3 on uninterpreted values: tensor reads, constants
  and operators are uninterpreted functions, so no algebraic law is assumed):

  1. each program is *modelled*: every computed tensor is written by one store
     (a *plain* tensor) or is a reduction (an init store and an update store: in
     :func:`~verified_indexing.legality.epilogue.find_reduction`'s loop structure, or
     in any loop order, :class:`_General`); every store map is injective on its
     iteration domain (isl, cross-checked by z3), so every element has one writer;
     every read of a computed tensor lies in what its writer writes (isl image
     inclusion; a read in a branch of a select on an index condition, where the
     branch is taken) and comes after every writer of that tensor: in a loop nest
     it does not share with them, or, shared, every writer iteration of the element
     read runs first (:func:`_precedes`); ``after`` reads no tensor that ``before``
     computes and ``after`` does not (memory nothing writes);
  2. each output is written at the same elements by both (image equality, both
     inclusions);
  3. the value of an element is its writer's stored value, every read of a
     computed tensor replaced by that tensor's value at the read element
     (recursively): for plain outputs z3 proves both values equal for every
     element; a reduction present in both programs is proven equal by induction
     over its loop (the same number of steps, equal init values, equal updates of
     one accumulator), or in any loop order by :meth:`_Prover.general` (its updates
     matched by a key, run once per key and in key order after the element's init),
     and is then one shared uninterpreted function for the blocks that read it (a
     reduction of ``after`` only -- cache_write's cache, a buffer set_scope renamed
     -- proven equal to one of ``before`` stands for it).

* **unknown** -- anything outside this model (several stores into one tensor, a
  read sharing a vectorized loop with its writer or not proven to follow it,
  different reduction lengths, a value proof z3 cannot close...), with the reason.
  ``unknown`` is never a pass.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Literal

from verified_indexing.engines import Z3Encoder
from verified_indexing.engines.z3 import Env
from verified_indexing.errors import VerifiedIndexingError
from verified_indexing.expr import AffineExpr, const
from verified_indexing.legality._proofs import reads_inside
from verified_indexing.legality.cinn_eval import INPUT_RULE, Unwritten, run_exact, tensor_of
from verified_indexing.legality.cinn_ir import (
    BinOp,
    BlockContext,
    Call,
    Cond,
    IndexValue,
    Load,
    Neg,
    Num,
    Stmt,
    Store,
    Value,
    at_sizes,
    program_params,
    program_sizes,
    walk_blocks,
)
from verified_indexing.legality.epilogue import EVALUATION_LIMIT, Reduction, evaluation_size, find_reduction
from verified_indexing.legality.inline import (
    InlineCheck,
    _encode_conds,
    _Frame,
    _frame,
    _loop_bounds,
    _own_stores,
    _value_loads,
    _ValueEncoder,
)
from verified_indexing.legality.inverse import is_injective

__all__ = ["EquivalenceReport", "check_equivalence", "compare_by_evaluation", "size_assignments"]

Status = Literal["proved", "refuted", "unknown", "error"]


@dataclass(frozen=True)
class EquivalenceReport:
    """Whether ``after`` computes every output of ``before``: ``status`` is
    ``proved`` (for every size), ``refuted`` (``witness``: the sizes, the element,
    both values, the inputs), ``unknown`` (``reason`` says what is not modelled) or
    ``error``. ``checks`` lists every obligation in order."""

    status: Status
    reason: str
    checks: tuple[InlineCheck, ...] = ()
    witness: dict[str, Any] | None = None
    outputs: tuple[str, ...] = ()
    laws: tuple[str, ...] = field(default=())

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        """The report as JSON-ready data."""
        return {"status": self.status, "reason": self.reason, "outputs": list(self.outputs),
                "laws_assumed": list(self.laws), "witness": self.witness,
                "checks": [c.to_json() for c in self.checks]}


class _Unknown(Exception):
    """An obligation outside the model (the message says which)."""


# ---------------------------------------------------------------------------
# Evaluation: the refutation search (and the re-check of every refutation)
# ---------------------------------------------------------------------------


def size_assignments(sizes: Sequence[str], limit: int = 8) -> list[dict[str, int]]:
    """Concrete values for the size parameters the interpreter runs at: every size
    equal (1, 2, 3, 0, 5), then a few mixed tuples; ``[{}]`` without sizes."""
    if not sizes:
        return [{}]
    out: list[dict[str, int]] = [dict.fromkeys(sizes, v) for v in (1, 2, 3, 0, 5)]
    for combo in itertools.product((1, 2, 3, 4), repeat=len(sizes)):
        if len(out) >= limit:
            break
        d = dict(zip(sizes, combo))
        if d not in out:
            out.append(d)
    return out[:limit]


def _computed(p: Stmt) -> set[str]:
    return {tensor_of(s.tensor) for c in walk_blocks(p) for s in _own_stores(c)}


def _read(p: Stmt) -> set[str]:
    return {ld.tensor for c in walk_blocks(p) for s in _own_stores(c) for ld in _value_loads(s.value)}


#: Value functions the interpreter computes exactly (every other call is uninterpreted there).
_EXACT_CALLS = {"max", "min", "select", "!"}


def _uninterpreted(p: Stmt) -> set[str]:
    """The value operations of ``p`` the interpreter does not compute as the
    hardware does: uninterpreted calls (``exp``...) and division (exact, not
    rounded)."""
    out: set[str] = set()

    def go(v: Value) -> None:
        if isinstance(v, Call):
            if v.name not in _EXACT_CALLS:
                out.add(v.name)
            for a in v.args:
                go(a)
        elif isinstance(v, BinOp):
            if v.op in ("/", "%"):
                out.add(f"'{v.op}'")
            go(v.lhs)
            go(v.rhs)
        elif isinstance(v, Neg):
            go(v.operand)

    for c in walk_blocks(p):
        for s in _own_stores(c):
            go(s.value)
    return out


def _show(v: Fraction | None) -> str:
    if v is None:
        return "not written"
    return str(v.numerator) if v.denominator == 1 else str(v)


def compare_by_evaluation(
    before: Stmt, after: Stmt, outputs: Sequence[str], seeds: Iterable[int] | None = None,
    sizes: Sequence[dict[str, int]] | None = None,
) -> tuple[dict[str, Any] | None, str]:
    """Run both programs with the plain interpreter (exact arithmetic) on the
    same inputs, at each size assignment small enough to run; the first output
    element where they differ, as a witness ``{tensor, element, original, after,
    sizes, seed, inputs, note}`` (``None`` when they agree), and a note on what
    was run. Without ``seeds``, a small program runs on more input sets (3 to
    :data:`MAX_SEEDS`, within :data:`SEED_BUDGET` executed stores per size).
    Raises :class:`_Unknown` when ``before`` itself reads an element nothing
    wrote."""
    inputs = (_read(before) | set(program_params(before))) - _computed(before)
    names = program_sizes(before)
    ran = 0
    n_seeds: list[int] = []
    for assignment in (sizes if sizes is not None else size_assignments(names)):
        b0, a0 = at_sizes(before, assignment), at_sizes(after, assignment)
        cost = max(_run_size(b0), _run_size(a0))
        if cost > EVALUATION_LIMIT:
            continue
        ran += 1
        these = list(seeds) if seeds is not None else \
            list(range(max(3, min(MAX_SEEDS, SEED_BUDGET // max(1, 2 * cost)))))
        n_seeds.append(len(these))
        for seed in these:
            try:
                ta = run_exact(b0, inputs, seed)
            except Unwritten as exc:
                raise _Unknown(f"the original program reads an element nothing wrote ({exc})") from None
            base = {"sizes": dict(assignment), "seed": seed, "inputs": f"{INPUT_RULE}, seed {seed}"}
            try:
                tb = run_exact(a0, inputs, seed)
            except Unwritten as exc:
                return {**base, "tensor": "", "element": [], "original": "", "after": f"reads unwritten: {exc}",
                        "note": f"the transformed program {exc} (nothing writes it there)"}, ""
            for t in outputs:
                xa, xb = ta.get(t, {}), tb.get(t, {})
                for idx in sorted(set(xa) | set(xb)):
                    va, vb = xa.get(idx), xb.get(idx)
                    if va != vb:
                        at = ", ".join(f"{k} = {v}" for k, v in assignment.items())
                        note = (f"{t}{list(idx)}: original {_show(va)}, transformed {_show(vb)}"
                                + (f" (sizes {at})" if at else "") + f" ({INPUT_RULE}, seed {seed})")
                        return {**base, "tensor": t, "element": list(idx), "original": _show(va),
                                "after": _show(vb), "note": note}, ""
    what = f"{ran} size assignment{'s' if ran != 1 else ''}" if names else ("the program's sizes" if ran else "")
    sets = f"{min(n_seeds)}" if n_seeds and min(n_seeds) == max(n_seeds) else \
        f"{min(n_seeds, default=0)} to {max(n_seeds, default=0)}"
    return None, (f"no difference on {sets} input sets at {what}" if ran else "too large to run")


#: At most this many input sets per size assignment (seeds 0, 1, ...), and about this many
#: executed stores in all (both programs) per size assignment; never fewer than 3 sets.
MAX_SEEDS = 64
SEED_BUDGET = 60_000


def _run_size(p: Stmt) -> int:
    """An estimate of the stores the program executes at its (fixed) sizes: a
    symbolic extent is evaluated with every enclosing loop at its largest value."""
    if not program_sizes(p):
        return evaluation_size(p)
    total = 0
    for c in walk_blocks(p):
        n, hi = 1, []
        for f in c.loops:
            if f.kind == "size":
                ext = 1
                hi.append(f.start)
            elif f.bound is not None:
                try:
                    ext = max(0, f.bound.evaluate(hi[: len(f.scope)]))
                except Exception:  # a bound this estimate cannot evaluate: do not run
                    return EVALUATION_LIMIT + 1
                hi.append(f.start + max(ext, 1) - 1)
            else:
                ext = max(0, f.extent)
                hi.append(f.start + max(ext, 1) - 1)
            n *= ext
        total += n * len(_own_stores(c))
    return total


def _recheck(before: Stmt, after: Stmt, outputs: Sequence[str], w: dict[str, Any]) -> bool:
    """The witness again: both programs re-run at its sizes with its seed."""
    again, _ = compare_by_evaluation(before, after, outputs, seeds=(int(w["seed"]),), sizes=[dict(w["sizes"])])
    return again is not None and again.get("element") == w.get("element") and again.get("after") == w.get("after")


# ---------------------------------------------------------------------------
# The model of one program
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class _Writer:
    ctx: BlockContext
    store: Store
    frame: _Frame


@dataclass(frozen=True)
class _General:
    """A reduction into ``tensor`` whose loops :func:`find_reduction` does not model (the reduction loop
    outside other loops, tiled, an init in the update's loops under ``vk == 0``...): one init store and
    one update store ``t[e] = f(t[e], ...)``, each in its block, with any loop structure. Its value is
    decided by :meth:`_Prover.general`."""

    tensor: str
    init: BlockContext
    init_store: Store
    update: BlockContext
    update_store: Store


#: Loop kinds that run their iterations one after the other, in increasing order.
_SEQUENTIAL = {"serial", "unroll"}


def _general_reduction(p: Stmt, t: str, ws: list[tuple[BlockContext, Store]]) -> _General | str:
    """The two stores ``ws`` into ``t`` as a :class:`_General` reduction, or why not."""
    if len(ws) != 2:
        return f"{t} is written by {len(ws)} stores (an init and an update are modelled)"
    inits = [(c, s) for c, s in ws if not any(ld.tensor == t for ld in _value_loads(s.value))]
    if len(inits) != 1:
        return f"{t} is not written by one init store and one update store"
    (ic, ist), (uc, ust) = inits[0], next((c, s) for c, s in ws if s is not inits[0][1])
    if program_sizes(p):
        return "size parameters (modelled for constant sizes only)"
    fu = _frame(uc, ust)
    if not fu.bind_values:
        return f"the update block {uc.block.name} binds no iteration variables"
    e = [fu.resolve(i) for i in ust.indices]
    if any([fu.resolve(i) for i in ld.indices] != e for ld in _value_loads(ust.value) if ld.tensor == t):
        return f"the update block {uc.block.name} reads {t} at another element than it writes"
    return _General(t, ic, ist, uc, ust)


@dataclass
class _Model:
    program: Stmt
    sizes: tuple[str, ...]
    contexts: list[BlockContext]
    plain: dict[str, _Writer]
    reductions: dict[str, Reduction]
    general: dict[str, _General] = field(default_factory=dict)

    @property
    def computed(self) -> set[str]:
        return set(self.plain) | set(self.reductions) | set(self.general)

    def reduction_of(self, tensor: str) -> Reduction | _General | None:
        """The reduction into ``tensor`` (either kind), ``None`` for a plain or input tensor."""
        return self.reductions.get(tensor) or self.general.get(tensor)

    def write_map(self, tensor: str) -> Any:
        if tensor in self.plain:
            w = self.plain[tensor]
            return w.frame.domain(w.frame.resolve(i) for i in w.store.indices)
        red = self.reduction_of(tensor)
        assert red is not None
        f = _frame(red.init, red.init_store)
        return f.domain(f.resolve(i) for i in red.init_store.indices)

    def writers(self, tensor: str) -> list[tuple[BlockContext, Any]]:
        """Each block writing ``tensor`` with its store's map (its loops -> the element written)."""
        if tensor in self.plain:
            w = self.plain[tensor]
            return [(w.ctx, w.frame.domain(w.frame.resolve(i) for i in w.store.indices))]
        red = self.reduction_of(tensor)
        assert red is not None
        out = []
        for ctx, st in ((red.init, red.init_store), (red.update, red.update_store)):
            f = _frame(ctx, st)
            out.append((ctx, f.domain(f.resolve(i) for i in st.indices)))
        return out

    def writer_blocks(self, tensor: str) -> list[BlockContext]:
        if tensor in self.plain:
            return [self.plain[tensor].ctx]
        red = self.reduction_of(tensor)
        assert red is not None
        return [red.init, red.update]


def _model(p: Stmt, who: str) -> _Model:
    contexts = list(walk_blocks(p))
    stores: dict[str, list[tuple[BlockContext, Store]]] = {}
    for c in contexts:
        for s in _own_stores(c):
            stores.setdefault(tensor_of(s.tensor), []).append((c, s))
    plain: dict[str, _Writer] = {}
    reductions: dict[str, Reduction] = {}
    general: dict[str, _General] = {}
    for t, ws in stores.items():
        is_red = any(s.tensor.endswith("__reduce_init") or any(ld.tensor == t for ld in _value_loads(s.value))
                     for _, s in ws)
        if is_red:
            red = find_reduction(p, t, predicated=True)
            if isinstance(red, str):
                other = _general_reduction(p, t, ws)
                if isinstance(other, str):
                    raise _Unknown(f"{who}: {red} (and as a reduction in any loop order: {other})")
                general[t] = other
                continue
            if len(ws) != 2:
                raise _Unknown(f"{who}: {t} is written by {len(ws)} stores besides its reduction")
            reductions[t] = red
        elif len(ws) == 1:
            c, s = ws[0]
            plain[t] = _Writer(c, s, _frame(c, s))
        else:
            raise _Unknown(f"{who}: {t} is written by {len(ws)} stores (one writer per tensor is modelled)")
    return _Model(p, program_sizes(p), contexts, plain, reductions, general)


def _shares_loops(a: BlockContext, b: BlockContext) -> bool:
    return any(x is y for x in a.loops if x.kind != "size" for y in b.loops)


# ---------------------------------------------------------------------------
# The proof
# ---------------------------------------------------------------------------


class _Prover:
    def __init__(self, before: _Model, after: _Model, outputs: Sequence[str], timeout: float) -> None:
        self.before, self.after = before, after
        self.outputs = outputs
        self.timeout = timeout
        self.k = len(before.sizes)
        self.checks: list[InlineCheck] = []
        self.folds: set[str] = set()  # reductions proven equal in both programs
        # a reduction of the transformed program only (cache_write's cache) proven equal to the original's
        # reduction of the name it maps to, whose fold stands for it
        self.alias: dict[str, str] = {}

    def ok(self, name: str, detail: str = "", engine: str = "syntax") -> None:
        self.checks.append(InlineCheck(name, "proved", detail, engine))

    def fail(self, name: str, detail: str, engine: str = "syntax") -> _Unknown:
        self.checks.append(InlineCheck(name, "unknown", detail, engine))
        return _Unknown(f"{name}: {detail}")

    # -- structure ------------------------------------------------------------
    def structure(self, m: _Model, who: str) -> None:
        shared_reads: list[str] = []
        inputs = (_read(self.before.program) | set(program_params(self.before.program))) - self.before.computed
        rewritten: list[str] = []
        for t in m.computed:
            name = f"{who}: every element of {t} has one writer"
            wm = m.write_map(t)
            if wm.is_known_empty:  # a store that never runs writes nothing: one writer per element trivially
                continue
            v = is_injective(wm, timeout=self.timeout, sizes=self.k)
            if not v.proved:
                reason = f"the store map of {t} is not proven injective ({v.status}: {v.reason})"
                if t in m.reductions or self.k or not self.same_value(m, t):
                    raise self.fail(name, reason, v.engine)
                rewritten.append(t)
        self.ok(f"{who}: every computed tensor has one writer per element", ", ".join(sorted(m.computed)) + (
            f"; written more than once with one value per element: {', '.join(rewritten)}" if rewritten else ""),
            "isl")
        for c in m.contexts:
            for s in _own_stores(c):
                fr0 = _frame(c, s)
                for ld, guard in _guarded_loads(s.value):
                    fr = replace(fr0, inner=fr0.inner + guard) if guard else fr0
                    u = ld.tensor
                    if u not in m.computed:
                        if u not in inputs:
                            raise self.fail(f"{who}: every tensor read is an input or computed",
                                            f"block {c.block.name} reads {u}, which nothing in it writes and "
                                            "which is not an input of the original")
                        continue
                    red = m.reduction_of(u)
                    if red is not None and c.order == red.update.order and tensor_of(s.tensor) == u:
                        continue  # the reduction's own accumulator
                    read = fr.domain(fr.resolve(i) for i in ld.indices)
                    for wc, wmap in m.writers(u):
                        if wc.order >= c.order or _shares_loops(wc, c):
                            why = "size parameters" if self.k else _precedes(wc, wmap, c, read)
                            if why is not None:
                                raise self.fail(f"{who}: every read of a computed tensor follows its writers",
                                                f"block {c.block.name} reads {u} in a loop nest shared with, or "
                                                f"before, its writer {wc.block.name} ({why})")
                            shared_reads.append(f"{c.block.name} reads {u} after {wc.block.name} writes it")
                    if read.is_known_empty:  # a load that never runs reads nothing
                        continue
                    v, w = reads_inside(read, m.write_map(u), self.timeout, sizes=self.k)
                    if not v.proved:
                        note = w["note"] if w else v.reason
                        raise self.fail(f"{who}: every element read is written",
                                        f"block {c.block.name} reads {u}: {v.status} ({note})", v.engine)
        self.ok(f"{who}: every read of a computed tensor lies in what its writer writes, after it",
                "; ".join(f"in a shared loop nest, {r}" for r in shared_reads), "isl")

    def same_value(self, m: _Model, t: str) -> bool:
        """Whether every iteration that writes an element of the plain tensor ``t`` (or the init of the
        reduction ``t`` in any loop order, whose inits all run before its updates: :meth:`general_order`)
        stores the same value there (z3: two iterations writing one element store equal values): then the
        element has one value whichever write a read sees after them (a read follows every write of the
        element: :meth:`structure`). ``False`` when not proved (values read a reduction not yet compared,
        or differ); a reduction in find_reduction's loop structure is never asked (a repeated init would
        restart it)."""
        if t in m.plain:
            ctx, st = m.plain[t].ctx, m.plain[t].store
        else:
            g = m.general[t]
            ctx, st = g.init, g.init_store
        frame = _frame(ctx, st)
        enc = Z3Encoder()
        ve = _GuardedValues(enc)
        s = enc.solver(timeout=self.timeout)
        sizes: dict[str, Any] = {}
        counter = [0]
        try:
            _, e1 = self._vars(enc, s, frame, "x1", sizes)
            _, e2 = self._vars(enc, s, frame, "x2", sizes)
            for i in st.indices:
                s.add(enc.expr(i, e1) == enc.expr(i, e2))
            fn = self._value_fn(enc, ve, s, m, sizes, counter)
            goal = fn(st.value, e1, None) == fn(st.value, e2, None)
            s.add(*enc.side_conditions)
            s.add(enc.z3.Not(goal))
            return bool(s.check() == enc.z3.unsat)
        except _Unknown:
            return False

    # -- values ---------------------------------------------------------------
    def prove(self) -> None:
        self.structure(self.before, "original")
        self.structure(self.after, "transformed")
        reds = [t for t in self.before.computed if self.before.reduction_of(t) is not None]
        # in program order: a reduction whose update reads another reduction comes after it (read as folded)
        for t in sorted(reds, key=lambda t: self.before.writer_blocks(t)[-1].order):
            a, b = self.before.reduction_of(t), self.after.reduction_of(t)
            assert a is not None
            if t in self.before.reductions and t in self.after.reductions:
                self.reduction(t)
            elif b is not None:
                self.general(t, _as_general(t, a), _as_general(t, b))
            elif (u := self.cache_of(t)) is not None:  # cache_write: the reduction runs into u, t copies it
                red = self.after.reduction_of(u)
                assert red is not None
                self.general(t, _as_general(t, a), _as_general(u, red), u)
                self.copy_output(t, u)
            elif t not in self.after.computed and (u := self.renamed(t)) is not None:  # set_scope renames
                red = self.after.reduction_of(u)
                assert red is not None
                self.general(t, _as_general(t, a), _as_general(u, red), u)
        for t in self.outputs:
            self.output(t)

    def images_equal(self, t: str) -> None:
        a, b = self.before.write_map(t), self.after.write_map(t)
        for sub, sup, what in ((a, b, "original"), (b, a, "transformed")):
            v, w = reads_inside(sub, sup, self.timeout, sizes=self.k)
            if not v.proved:
                note = w["note"] if w else v.reason
                raise self.fail(f"{t} is written at the same elements",
                                f"an element of {t} the {what} program writes: {v.status} ({note})", v.engine)
        self.ok(f"{t} is written at the same elements", "", "isl")

    def output(self, t: str) -> None:
        bp, ap = t in self.before.plain, t in self.after.plain
        if t not in self.before.computed and t not in self.after.computed:
            return
        if t in self.before.computed and t not in self.after.computed:
            raise self.fail(f"{t} is computed", f"the transformed program no longer writes the output {t}")
        if t not in self.before.computed:
            raise self.fail(f"{t} is computed", f"the transformed program writes {t}, an input of the original")
        self.images_equal(t)
        if t in self.folds:
            return
        if not (bp and ap):
            raise self.fail(f"{t} holds the same values",
                            f"{t} is a reduction in one program and a plain store in the other (compared by "
                            "fuse-epilogue's induction, not here)")
        self.plain_output(t)

    def _scope(self, enc: Z3Encoder, frame: _Frame, xs: list[Any]) -> Env:
        lenv: Env = {("d", i): x for i, x in enumerate(xs)}
        sc = list(xs) + [enc.expr(b, lenv) for b in frame.bind_values]
        return {("d", i): x for i, x in enumerate(sc)}

    def _vars(self, enc: Z3Encoder, s: Any, frame: _Frame, prefix: str, sizes: dict[str, Any],
              fixed: Sequence[Any] = (), guard: Any = None) -> tuple[list[Any], Env]:
        xs: list[Any] = []
        for i, f in enumerate(frame.loops):
            if f.kind == "size":
                xs.append(sizes.setdefault(f.var, enc.int_var(f"size_{f.var}")))
            elif i < len(fixed) + frame.sizes:
                xs.append(fixed[i - frame.sizes])
            else:
                xs.append(enc.int_var(f"{prefix}_{f.var}_{i}"))
        cs = _loop_bounds(enc, frame, xs) + _encode_conds(enc, frame, {("d", i): x for i, x in enumerate(xs)})
        if guard is None:
            s.add(*cs)
        else:  # a read in a select's branch: its writer's iteration exists where the branch is taken
            s.add(enc.z3.Implies(guard, enc.z3.And(*cs)))
        return xs, self._scope(enc, frame, xs)

    def _value_fn(self, enc: Z3Encoder, ve: _GuardedValues, s: Any, m: _Model, sizes: dict[str, Any],
                  counter: list[int]) -> Callable[[Value, Env, Callable[[Load], Any] | None], Any]:
        ints = enc.z3.IntSort(enc.ctx)

        def tensor(u: str, idx: list[Any]) -> Any:
            if u in self.folds or (m is self.after and u in self.alias):
                sv = [sizes.setdefault(n, enc.int_var(f"size_{n}")) for n in m.sizes]
                u = self.alias.get(u, u) if m is self.after else u
                return ve.func(f"fold {u}", sv + idx, [ints] * (len(sv) + len(idx)))
            if u in m.reductions or u in m.general:
                raise _Unknown(f"the reduction {u} read by another block differs between the programs "
                               "(not proven equal)")
            w = m.plain[u]
            counter[0] += 1
            guard = enc.z3.And(*ve.guards) if ve.guards else None
            _, env = self._vars(enc, s, w.frame, f"w{counter[0]}", sizes, guard=guard)
            same = [enc.expr(si, env) == x for si, x in zip(w.store.indices, idx)]
            s.add(*same) if guard is None else s.add(enc.z3.Implies(guard, enc.z3.And(*same)))
            return value(w.store.value, env, None)

        def value(v: Value, env: Env, extra: Callable[[Load], Any] | None) -> Any:
            def load(ld: Load) -> Any:
                if extra is not None:
                    hit = extra(ld)
                    if hit is not None:
                        return hit
                if ld.tensor not in m.computed:
                    return None
                return tensor(ld.tensor, [enc.expr(i, env) for i in ld.indices])
            return ve.value(v, env, load)

        return value

    def _check(self, enc: Z3Encoder, s: Any, goal: Any, name: str) -> None:
        s.add(*enc.side_conditions)
        s.add(enc.z3.Not(goal))
        r = s.check()
        if r == enc.z3.unsat:
            self.ok(name, "", "z3")
            return
        why = ("z3 finds values of the uninterpreted reads and operators that tell them apart: not provable "
               "without an algebraic law") if r == enc.z3.sat else f"z3: {s.reason_unknown()}"
        raise self.fail(name, why, "z3")

    def plain_output(self, t: str) -> None:
        enc = Z3Encoder()
        ve = _GuardedValues(enc)
        s = enc.solver(timeout=self.timeout)
        sizes: dict[str, Any] = {}
        counter = [0]
        wa, wb = self.before.plain[t], self.after.plain[t]
        _, ea = self._vars(enc, s, wa.frame, "a", sizes)
        _, eb = self._vars(enc, s, wb.frame, "b", sizes)
        for x, y in zip(wa.store.indices, wb.store.indices):
            s.add(enc.expr(x, ea) == enc.expr(y, eb))
        va = self._value_fn(enc, ve, s, self.before, sizes, counter)(wa.store.value, ea, None)
        vb = self._value_fn(enc, ve, s, self.after, sizes, counter)(wb.store.value, eb, None)
        self._check(enc, s, va == vb, f"{t} holds the same value at every element")

    def reduction(self, t: str) -> None:
        ra, rb = self.before.reductions[t], self.after.reductions[t]
        name = f"the reduction {t} is the same (induction over its loop)"
        la, lb = ra.loop, rb.loop
        if la.extent != lb.extent or la.bound is not None or lb.bound is not None:
            raise self.fail(name, f"the reduction loops have different lengths ({la.extent} and {lb.extent})")
        self.images_equal(t)
        for step in ("base", "step"):
            enc = Z3Encoder()
            ve = _GuardedValues(enc)
            s = enc.solver(timeout=self.timeout)
            sizes: dict[str, Any] = {}
            counter = [0]
            fa, fb = _frame(ra.init, ra.init_store), _frame(rb.init, rb.init_store)
            xa, ea = self._vars(enc, s, fa, "a", sizes)
            xb, eb = self._vars(enc, s, fb, "b", sizes)
            for x, y in zip(ra.init_store.indices, rb.init_store.indices):
                s.add(enc.expr(x, ea) == enc.expr(y, eb))
            fn_a = self._value_fn(enc, ve, s, self.before, sizes, counter)
            fn_b = self._value_fn(enc, ve, s, self.after, sizes, counter)
            if step == "base":
                goal = fn_a(ra.init_store.value, ea, None) == fn_b(rb.init_store.value, eb, None)
            else:
                n = enc.int_var("n")
                s.add(n >= 0, n < la.extent)
                ua, ub = _frame(ra.update, ra.update_store), _frame(rb.update, rb.update_store)
                k = ua.sizes
                _, uea = self._vars(enc, s, ua, "ua", sizes, fixed=[*xa[k:], n + la.start])
                _, ueb = self._vars(enc, s, ub, "ub", sizes, fixed=[*xb[fb.sizes:], n + lb.start])
                acc = enc.z3.Const("acc", ve.sort)

                def own(ld: Load, acc: Any = acc) -> Any:
                    return acc if ld.tensor == t else None
                goal = fn_a(ra.update_store.value, uea, own) == fn_b(rb.update_store.value, ueb, own)
            self._check(enc, s, goal, f"{name}: {step}")
        self.folds.add(t)

    # -- a reduction in any loop order ------------------------------------------
    def cache_of(self, t: str) -> str | None:
        """The reduction ``u`` of the transformed program only whose copy the transformed program stores into
        ``t`` (``t[e] = u[e']``, as cache_write of a reduction prints it), else ``None``."""
        w = self.after.plain.get(t)
        if w is None or not isinstance(w.store.value, Load):
            return None
        u = w.store.value.tensor
        if u in self.before.computed or self.after.reduction_of(u) is None:
            return None
        return u

    def renamed(self, t: str) -> str | None:
        """The transformed program's reduction ``u`` (a tensor the original does not compute) that takes the
        place of the original's reduction ``t``: a block of the same name reads ``u`` in the transformed
        program where it reads ``t`` in the original (``set_scope`` renames a buffer so), else ``None``.
        Only a candidate: :meth:`general` proves the two reductions equal."""
        after = {c.block.name: c for c in self.after.contexts}
        for c in self.before.contexts:
            other = after.get(c.block.name)
            if other is None:
                continue
            loads = [ld.tensor for st in _own_stores(c) for ld in _value_loads(st.value)]
            others = [ld.tensor for st in _own_stores(other) for ld in _value_loads(st.value)]
            if len(loads) != len(others):
                continue
            for x, u in zip(loads, others):  # the block of the same name reads u where it read t
                if x == t and u not in self.before.computed and self.after.reduction_of(u) is not None:
                    return u
        return None

    def copy_output(self, t: str, u: str) -> None:
        """The transformed program's ``t`` (a copy of its reduction ``u``, proven equal to the original's
        reduction ``t``) holds the original's ``t`` at every element it writes: the same elements (isl),
        and z3: the copied value is the reduction's value at the element written."""
        self.images_equal(t)
        enc = Z3Encoder()
        ve = _GuardedValues(enc)
        s = enc.solver(timeout=self.timeout)
        sizes: dict[str, Any] = {}
        w = self.after.plain[t]
        _, eb = self._vars(enc, s, w.frame, "b", sizes)
        fn_b = self._value_fn(enc, ve, s, self.after, sizes, [0])
        ints = enc.z3.IntSort(enc.ctx)
        idx = [enc.expr(i, eb) for i in w.store.indices]
        goal = fn_b(w.store.value, eb, None) == ve.func(f"fold {t}", idx, [ints] * len(idx))
        self._check(enc, s, goal, f"{t} is a copy of the transformed program's reduction {u}, element by element")

    def general(self, t: str, ga: _General, gb: _General, tb: str | None = None) -> None:
        """:meth:`general_by` with the updates keyed by their block's iteration variables, else (a block
        nested by blockize binds only its inner axes) by the elements the update writes and reads."""
        mark = len(self.checks)
        try:
            self.general_by(t, ga, gb, tb, _bind_key)
        except _Unknown as first:
            failed = self.checks[mark:]
            del self.checks[mark:]
            try:
                self.general_by(t, ga, gb, tb, _read_key)
            except _Unknown:
                self.checks[mark:] = failed
                raise first from None

    def general_by(self, t: str, ga: _General, gb: _General, tb: str | None,
                   key: Callable[[_Frame, Store, str], tuple[AffineExpr, ...]]) -> None:
        """The reduction into ``t`` is the same in both programs, whatever their loop orders: in each
        program (:meth:`general_order`) the update runs once per value of its block's iteration variables
        ``v``, the updates of one element run in the lexicographic order of ``v``, and the element's init
        runs before all of them; across the programs, the update runs at the same ``v`` (isl, both
        inclusions), the init writes the same elements with the same values, and at the same ``v`` the
        update writes the same element with the same function of the accumulator (z3). Then every
        element's value is one fold of the same updates in the same order from the same init."""
        tb = tb or t
        name = f"the reduction {t} is the same (its updates matched by the block's iteration variables)" if \
            tb == t else f"the reduction {t} is the transformed program's reduction {tb}"
        if self.k:
            raise self.fail(name, "size parameters (modelled for constant sizes only)")
        self.general_order(ga, "original", key)
        self.general_order(gb, "transformed", key)
        fa, fb = _frame(ga.update, ga.update_store), _frame(gb.update, gb.update_store)
        ka, kb = key(fa, ga.update_store, t), key(fb, gb.update_store, tb)
        if len(ka) != len(kb):
            raise self.fail(name, f"the update blocks' keys have {len(ka)} and {len(kb)} values")
        va, vb = fa.domain(ka), fb.domain(kb)
        for sub, sup, what in ((va, vb, "original"), (vb, va, "transformed")):
            v, w = reads_inside(sub, sup, self.timeout)
            if not v.proved:
                note = w["note"] if w else v.reason
                raise self.fail(f"{name}: the update runs at the same iteration variables",
                                f"an iteration of the {what} program's update: {v.status} ({note})", v.engine)
        self.ok(f"{t}: the update runs at the same iteration variables in both programs", "", "isl")
        if tb == t:
            self.images_equal(t)
        else:
            ia, ib = self.before.write_map(t), self.after.write_map(tb)
            for sub, sup, what in ((ia, ib, "original"), (ib, ia, "transformed")):
                v, w = reads_inside(sub, sup, self.timeout)
                if not v.proved:
                    note = w["note"] if w else v.reason
                    raise self.fail(f"{name}: the same elements initialized",
                                    f"an element the {what} program initializes: {v.status} ({note})", v.engine)
        for step in ("init", "update"):
            enc = Z3Encoder()
            ve = _GuardedValues(enc)
            s = enc.solver(timeout=self.timeout)
            sizes: dict[str, Any] = {}
            counter = [0]
            fn_a = self._value_fn(enc, ve, s, self.before, sizes, counter)
            fn_b = self._value_fn(enc, ve, s, self.after, sizes, counter)
            if step == "init":
                ia, ib = _frame(ga.init, ga.init_store), _frame(gb.init, gb.init_store)
                _, ea = self._vars(enc, s, ia, "a", sizes)
                _, eb = self._vars(enc, s, ib, "b", sizes)
                for x, y in zip(ga.init_store.indices, gb.init_store.indices):
                    s.add(enc.expr(x, ea) == enc.expr(y, eb))
                goal = fn_a(ga.init_store.value, ea, None) == fn_b(gb.init_store.value, eb, None)
            else:
                _, ea = self._vars(enc, s, fa, "ua", sizes)
                _, eb = self._vars(enc, s, fb, "ub", sizes)
                for x, y in zip(ka, kb):
                    s.add(enc.expr(x, ea) == enc.expr(y, eb))
                acc = enc.z3.Const("acc", ve.sort)

                def own(ld: Load, acc: Any = acc) -> Any:
                    return acc if ld.tensor == t else None

                def own_b(ld: Load, acc: Any = acc) -> Any:
                    return acc if ld.tensor == tb else None
                same = [enc.expr(x, ea) == enc.expr(y, eb)
                        for x, y in zip(ga.update_store.indices, gb.update_store.indices)]
                goal = enc.z3.And(*same, fn_a(ga.update_store.value, ea, own) ==
                                  fn_b(gb.update_store.value, eb, own_b))
            self._check(enc, s, goal, f"{name}: {step}")
        self.folds.add(t)
        if tb != t:
            self.alias[tb] = t

    def general_order(self, g: _General, who: str,
                      key: Callable[[_Frame, Store, str], tuple[AffineExpr, ...]]) -> None:
        """In one program: the update of ``g`` runs once per value of its iteration variables ``v``
        (injective, isl and z3), the updates of one element run in the lexicographic order of ``v`` (isl:
        every pair of iterations writing one element, the earlier in loop order, has the smaller ``v``;
        a loop that does not run its iterations one after the other -- parallel, vectorized, bound to
        threads -- never differs between them), every element it updates is initialized, and the init
        of an element runs before every update of it (isl, on the loops the two blocks share)."""
        import islpy as isl

        from verified_indexing.engines.isl import to_isl_map

        name = f"{who}: the reduction {g.tensor} runs its updates in order"
        fu, fi = _frame(g.update, g.update_store), _frame(g.init, g.init_store)
        e_u = [fu.resolve(i) for i in g.update_store.indices]
        e_i = [fi.resolve(i) for i in g.init_store.indices]
        vmap = fu.domain(key(fu, g.update_store, g.tensor))
        v = is_injective(vmap, timeout=self.timeout)
        if not v.proved:
            raise self.fail(name, f"the update block {g.update.block.name} may run twice at one value of its "
                            f"iteration variables ({v.status}: {v.reason})", v.engine)
        v, w = reads_inside(fu.domain(e_u), fi.domain(e_i), self.timeout)
        if not v.proved:
            note = w["note"] if w else v.reason
            raise self.fail(name, f"an element the update writes is not initialized: {v.status} ({note})", v.engine)
        try:
            me, mv = to_isl_map(fu.domain(e_u)), to_isl_map(vmap)
            pairs = me.apply_range(me.reverse())
            pairs = pairs.intersect(isl.Map.lex_lt(pairs.get_space().domain()))
            deltas = pairs.deltas()
            for d, f in enumerate(fu.loops):
                if f.kind not in _SEQUENTIAL and not deltas.is_subset(
                        isl.Set.universe(deltas.get_space()).fix_dim_si(d, 0)):
                    raise self.fail(name, f"the updates of one element of {g.tensor} differ in the {f.kind} loop "
                                    f"{f.var} (their order is not sequential)", "isl")
            order = pairs.apply_domain(mv).apply_range(mv)
            if not order.is_subset(isl.Map.lex_lt(order.get_space().domain())):
                raise self.fail(name, f"the updates of one element of {g.tensor} do not run in the order of the "
                                f"block {g.update.block.name}'s iteration variables", "isl")
        except isl.Error as exc:  # an isl failure is unknown, named
            raise self.fail(name, f"isl: {str(exc).splitlines()[0] if str(exc) else 'error'}", "isl") from None
        why = _precedes(g.init, fi.domain(e_i), g.update, fu.domain(e_u))
        if why is not None:
            raise self.fail(name, f"the init of an element of {g.tensor} may run after an update of it ({why})",
                            "isl")
        self.ok(name, f"{g.update.block.name}: once per iteration variables, in their order, after the init",
                "isl")


def _precedes(first: BlockContext, first_map: Any, second: BlockContext, second_map: Any) -> str | None:
    """:func:`_precedes_isl`; an isl failure is a reason (not proved), never an exception."""
    import islpy as isl

    try:
        return _precedes_isl(first, first_map, second, second_map)
    except (isl.Error, VerifiedIndexingError) as exc:
        return f"isl: {str(exc).splitlines()[0] if str(exc) else 'error'}"


def _precedes_isl(first: BlockContext, first_map: Any, second: BlockContext, second_map: Any) -> str | None:
    """``None`` when every iteration of block ``first`` runs before every iteration of block ``second``
    that touches the same element (``first_map``, ``second_map``: each block's loops -> the element, over
    its iteration domain); else why that is not proved. Execution order (isl): on the loops the two blocks
    share, the earlier iteration is lexicographically smaller, or they are equal and ``first`` comes first
    in the program; the two iterations never differ in a shared loop that does not run one iteration after
    the other (parallel, vectorized, bound to threads). Constant sizes only (no size pseudo-loops)."""
    import islpy as isl

    from verified_indexing.engines.isl import to_isl_map

    shared = 0
    for a, b in zip(first.loops, second.loops):
        if a is not b:
            break
        shared += 1
    rel = to_isl_map(first_map).apply_range(to_isl_map(second_map).reverse())
    rel = rel.project_out(isl.dim_type.in_, shared, len(first.loops) - shared)
    rel = rel.project_out(isl.dim_type.out, shared, len(second.loops) - shared)
    space = rel.get_space().domain()
    before = isl.Map.lex_le(space) if first.order < second.order else isl.Map.lex_lt(space)
    if not rel.is_subset(before):
        return f"an iteration of {second.block.name} may run before the iteration of {first.block.name} " \
               "touching the same element"
    for f in first.loops[:shared]:
        if f.kind == "vectorize":  # TVM 0.27 lowers such a nest wrongly (benchmarks/tvm_schedules.py seed 445):
            # the buffer between the two blocks is compacted to one element, every lane reads the last one
            return f"they share the vectorized loop {f.var} (not modelled: TVM's lowering compacts the " \
                   "buffer between them to one vector lane)"
    deltas = rel.deltas()
    for d in range(shared):
        f = first.loops[d]
        if f.kind not in _SEQUENTIAL and not deltas.is_subset(isl.Set.universe(deltas.get_space()).fix_dim_si(d, 0)):
            return f"they touch one element in different iterations of the {f.kind} loop {f.var}"
    return None


_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<"}


def _index_of(v: Value) -> AffineExpr | None:
    """An index expression or an integer literal used as a value, as an index expression."""
    if isinstance(v, IndexValue):
        return v.expr
    if isinstance(v, Num):
        try:
            return const(int(v.text))
        except ValueError:
            return None
    return None


def _cond_of(v: Value) -> list[Cond] | None:
    """A select's condition as a conjunction of affine comparisons of indices (``None``: it is not one)."""
    if isinstance(v, BinOp):
        if v.op == "&&":
            a, b = _cond_of(v.lhs), _cond_of(v.rhs)
            return None if a is None or b is None else a + b
        if v.op in ("<", "<=", ">", ">=", "=="):
            x, y = _index_of(v.lhs), _index_of(v.rhs)
            if x is not None and y is not None:
                return [(x, v.op, y)]
    return None


def _guarded_loads(v: Value, guard: tuple[Cond, ...] = ()) -> list[tuple[Load, tuple[Cond, ...]]]:
    """Every load of ``v`` with the conditions under which its value is used: a load in a branch of a
    select on an index condition (``T.if_then_else(4 <= i, B[i - 4], A[i])``, as TVM's concatenate and pad
    print it) is used only where the branch is taken; the else branch of ``c1 and c2`` is listed once per
    negated comparison (their union is where it is taken)."""
    if isinstance(v, Load):
        return [(v, guard)]
    if isinstance(v, Call) and v.name == "select" and len(v.args) == 3:
        c = _cond_of(v.args[0])
        if c is not None:
            out = _guarded_loads(v.args[1], guard + tuple(c))
            for a, op, b in c:
                for neg in ([(a, "<", b), (a, ">", b)] if op == "==" else [(a, _NEGATED[op], b)]):
                    out += _guarded_loads(v.args[2], (*guard, neg))
            return out
    if isinstance(v, Call):
        return [x for a in v.args for x in _guarded_loads(a, guard)]
    if isinstance(v, BinOp):
        return _guarded_loads(v.lhs, guard) + _guarded_loads(v.rhs, guard)
    if isinstance(v, Neg):
        return _guarded_loads(v.operand, guard)
    return []


class _GuardedValues(_ValueEncoder):
    """Values as :class:`_ValueEncoder` encodes them, except a select on an index condition: z3's ``If``
    (exactly its meaning), each branch encoded under its condition (``guards``: the reads of a branch
    constrain their writer's iteration only where the branch is taken)."""

    def __init__(self, enc: Z3Encoder) -> None:
        super().__init__(enc)
        self.guards: list[Any] = []

    def value(self, v: Value, env: Env, load: Callable[[Load], Any] | None = None) -> Any:
        if isinstance(v, Call) and v.name == "select" and len(v.args) == 3:
            c = _cond_of(v.args[0])
            if c is not None:
                z3 = self.enc.z3
                parts = []
                for a, op, b in c:
                    x, y = self.enc.expr(a, env), self.enc.expr(b, env)
                    parts.append({"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y, "==": x == y}[op])
                cond = z3.And(*parts)
                self.guards.append(cond)
                then = self.value(v.args[1], env, load)
                self.guards[-1] = z3.Not(cond)
                other = self.value(v.args[2], env, load)
                self.guards.pop()
                return z3.If(cond, then, other)
        return super().value(v, env, load)


def _bind_key(f: _Frame, store: Store, t: str) -> tuple[AffineExpr, ...]:
    """An update's key: its block's iteration variables (their bound values over the loops)."""
    return tuple(f.bind_values)


def _read_key(f: _Frame, store: Store, t: str) -> tuple[AffineExpr, ...]:
    """An update's key: the element it writes, then the elements it reads (other than its accumulator), in
    the order of the stored value (over the loops)."""
    return tuple(f.resolve(i) for i in store.indices) + tuple(
        f.resolve(i) for ld in _value_loads(store.value) if ld.tensor != t for i in ld.indices)


def _as_general(t: str, red: Reduction | _General) -> _General:
    return red if isinstance(red, _General) else _General(t, red.init, red.init_store, red.update, red.update_store)


def check_equivalence(
    before: Stmt, after: Stmt, *, outputs: Sequence[str] | None = None, timeout: float = 10.0,
    evaluate: bool = True,
) -> EquivalenceReport:
    """Whether ``after`` computes every output of ``before`` (module docstring):
    the outputs are ``outputs``, else the parameter buffers ``before`` writes (else
    the tensors it writes and never reads)."""
    if outputs is None:
        params = program_params(before)
        written = _computed(before)
        outs = [t for t in params if t in written] if params else \
            sorted(written - _read(before))
    else:
        outs = list(outputs)
    checks: list[InlineCheck] = []
    if program_sizes(before) != program_sizes(after):
        return EquivalenceReport("unknown", f"the programs have different size parameters "
                                 f"({', '.join(program_sizes(before))} and {', '.join(program_sizes(after))})",
                                 outputs=tuple(outs))
    eval_note = ""
    if evaluate:
        try:
            w, eval_note = compare_by_evaluation(before, after, outs)
        except _Unknown as exc:
            return EquivalenceReport("unknown", str(exc), outputs=tuple(outs))
        if w is not None:
            if not _recheck(before, after, outs, w):
                checks.append(InlineCheck("the programs compute the same values", "error",
                                          "the interpreter does not reproduce its own difference", "evaluation"))
                return EquivalenceReport("error", "the interpreter does not reproduce its own difference",
                                         tuple(checks), w, tuple(outs))
            # the values rest on the interpreter's stand-ins only when both programs wrote the element (an
            # element one program writes and the other does not, or a read of unwritten memory, does not)
            both = w.get("tensor") and "not written" not in (w.get("original"), w.get("after"))
            loose = sorted(_uninterpreted(before) | _uninterpreted(after)) if both else []
            if loose:
                w["uninterpreted"] = loose
                w["note"] += (f" (the interpreter computes {', '.join(loose)} as a fixed uninterpreted function: "
                              "a difference for that function)")
            checks.append(InlineCheck("the programs compute the same values", "refuted", w["note"], "evaluation", w))
            return EquivalenceReport("refuted", w["note"], tuple(checks), w, tuple(outs))
        checks.append(InlineCheck("the programs compute the same values", "proved" if eval_note.startswith("no")
                                  else "unknown", eval_note, "evaluation"))
    try:
        pa = _model(before, "original")
        pb = _model(after, "transformed")
    except _Unknown as exc:
        checks.append(InlineCheck("both programs are modelled", "unknown", str(exc)))
        return EquivalenceReport("unknown", str(exc), tuple(checks), outputs=tuple(outs))
    # a parameter buffer only the transformed program writes (an input of the original) changes what the
    # caller sees: it is compared too (and is not modelled: unknown)
    extra = [t for t in program_params(after) if t in _computed(after) and t not in _computed(before)
             and t not in outs]
    prover = _Prover(pa, pb, outs + extra, timeout)
    try:
        prover.prove()
    except _Unknown as exc:
        return EquivalenceReport("unknown", str(exc), tuple(checks + prover.checks), outputs=tuple(outs))
    except VerifiedIndexingError as exc:
        return EquivalenceReport("unknown", f"not modelled: {exc}", tuple(checks + prover.checks),
                                 outputs=tuple(outs))
    return EquivalenceReport("proved", "every output element is written by both programs with the same value, "
                             "for every size", tuple(checks + prover.checks), outputs=tuple(outs))
