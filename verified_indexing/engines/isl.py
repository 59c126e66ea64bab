"""The isl encoding: indexing maps as exact Presburger sets and relations.

Every expression is encoded exactly with isl's ``floor``: ``e floordiv c`` is
``floor(e / c)`` (for ``c < 0`` written ``floor((-e) / (-c))``, the same
rational), ``e mod c`` is ``e - c * floor(e / c)``, ``e ceildiv c`` is
``-floor((-e) / c)``, and ``min``/``max`` are isl's piecewise ``min``/``max``.

Variables keep the map's order. Internally they are named positionally
(``d0``, ``s0``, ``rt0``) so a user's variable names can never clash with isl's
keywords; the spaces carry no tuple names.

* :func:`to_isl_domain` -- the set ``{[d..., s..., rt...] : domain}`` (with
  ``symbols=False``: the range variables projected out, ``{[d..., rt...]}``);
* :func:`pointwise_map` -- ``{[d..., s..., rt...] -> [results] : domain}``;
* :func:`to_isl_map` -- the relation ``{[d..., rt...] -> [results] : exists s
  in the domain}`` (range variables existential, runtime variables inputs);
* :func:`image`, :func:`compose_relation`, :func:`indexing_map_from_isl`.

The public builders above create their objects in islpy's default context, so
callers can combine them with their own isl objects. The proof questions run in
a separate, per-thread *engine context* (:func:`engine_context`) with isl's
operation limit (``max_operations``, :func:`set_max_operations`) and
``on_error = continue``: a query that exceeds the limit raises ``isl.Error``,
which the questions turn into ``unknown`` with the reason (isl has no wall-clock
limit; the operation count is deterministic). Reading a query's text is not
counted: the budget starts after each read.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from fractions import Fraction
from typing import Any

import islpy as isl

from verified_indexing.errors import IslLimitExceeded, MapError
from verified_indexing.expr import (
    AffineExpr,
    CeilDiv,
    Const,
    Dim,
    FloorDiv,
    Max,
    Min,
    Mod,
    RtSym,
    Sum,
    Sym,
)
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.interval import Interval, range_of

__all__ = [
    "isl_expr",
    "to_isl_domain",
    "pointwise_map",
    "domain_and_pointwise_map",
    "pointwise_pair",
    "text_domain",
    "text_pointwise_map",
    "to_isl_map",
    "image",
    "compose_relation",
    "relation_then",
    "indexing_map_from_isl",
    "point_values",
    "isl_version",
    "DEFAULT_MAX_OPERATIONS",
    "engine_context",
    "limited_context",
    "set_max_operations",
    "first_point",
    "get_max_operations",
    "is_quota_error",
    "IslLimitExceeded",
]

DEFAULT_MAX_OPERATIONS = 20_000_000
"""isl operations allowed per engine query (isl's own count; deterministic).
The spec's examples use a few thousand; a query beyond the limit is ``unknown``."""

_max_operations = DEFAULT_MAX_OPERATIONS
_local = threading.local()


def engine_context() -> Any:
    """This thread's isl context for engine queries (``on_error = continue``).

    One context per thread (isl contexts are not thread-safe) and per process (a
    forked child makes its own). Objects made in it must not be mixed with objects
    of islpy's default context."""
    ctx = getattr(_local, "ctx", None)
    if ctx is None or getattr(_local, "pid", None) != os.getpid():
        ctx = isl.Context()
        ctx.set_on_error(isl.on_error.CONTINUE)
        _local.ctx, _local.pid = ctx, os.getpid()
    return ctx


def set_max_operations(n: int) -> int:
    """Set the isl operation limit of every engine query (``0``: no limit) and
    return the previous one."""
    global _max_operations
    if n < 0:
        raise ValueError(f"the isl operation limit must be >= 0, got {n}")
    previous, _max_operations = _max_operations, int(n)
    return previous


def get_max_operations() -> int:
    """The isl operation limit of engine queries (``0``: no limit)."""
    return _max_operations


@contextmanager
def limited_context() -> Iterator[Any]:
    """The engine context with a fresh operation budget of :func:`get_max_operations`."""
    ctx = engine_context()
    ctx.set_max_operations(_max_operations)
    ctx.reset_operations()
    try:
        yield ctx
    finally:
        ctx.reset_operations()


def is_quota_error(exc: BaseException) -> bool:
    """Whether an ``isl.Error`` says the operation limit was exceeded."""
    return "maximal number of operations" in str(exc)


def isl_version() -> str:
    """islpy's version string (part of the proof cache key)."""
    return str(isl.version.VERSION_TEXT) if hasattr(isl, "version") else "unknown"


def _name(e: Dim | Sym | RtSym) -> str:
    return f"{e.kind}{e.index}"


def isl_expr(e: AffineExpr) -> str:
    """The isl text of an expression over positional names (exact semantics)."""
    if isinstance(e, Const):
        return str(e.value)
    if isinstance(e, (Dim, Sym, RtSym)):
        return _name(e)
    if isinstance(e, Sum):
        parts = [f"{c}*{isl_expr(t)}" for t, c in e.terms]
        parts.append(str(e.constant))
        return "(" + " + ".join(parts) + ")"
    if isinstance(e, (FloorDiv, CeilDiv, Mod)):
        inner = isl_expr(e.lhs)
        c = e.divisor
        if isinstance(e, CeilDiv):
            # -((-x) floordiv c)
            return f"(-1*{_floor(f'(-1*{inner})', c)})"
        fl = _floor(inner, c)
        if isinstance(e, FloorDiv):
            return fl
        return f"({inner} - {c}*{fl})"
    if isinstance(e, Min):
        return f"min({isl_expr(e.lhs)}, {isl_expr(e.rhs)})"
    if isinstance(e, Max):
        return f"max({isl_expr(e.lhs)}, {isl_expr(e.rhs)})"
    raise TypeError(f"unknown expression node {type(e).__name__}")


def _floor(inner: str, c: int) -> str:
    if c > 0:
        return f"floor(({inner})/{c})"
    return f"floor((-1*{inner})/{-c})"


def _check(m: IndexingMap) -> None:
    if m.is_undefined:
        raise MapError("an UNDEFINED map has no isl encoding")


def _tuple(m: IndexingMap, symbols: bool = True) -> str:
    names = [f"d{i}" for i in range(m.num_dims)]
    if symbols:
        names += [f"s{i}" for i in range(m.num_range_vars)]
    names += [f"rt{i}" for i in range(m.num_rt_vars)]
    return "[" + ", ".join(names) + "]"


def _conditions(m: IndexingMap) -> str:
    if m.is_known_empty:
        return "1 = 0"
    conds = []
    for kind, i, v in m.variables():
        conds.append(f"{v.bounds.lo} <= {kind}{i} <= {v.bounds.hi}")
    for e, iv in m.constraints:
        conds.append(f"{iv.lo} <= {isl_expr(e)} <= {iv.hi}")
    return " and ".join(conds) if conds else "1 = 1"


def _read(kind: Any, text: str, ctx: Any) -> Any:
    """Parse isl text in ``ctx``. Reading is not counted against the operation
    limit (isl would report an exhausted budget as a syntax error): the limit is
    lifted while reading and the budget restarts afterwards."""
    if ctx is None:
        return kind(text)
    limit = ctx.get_max_operations()
    if not limit:
        return kind(text, context=ctx)
    ctx.set_max_operations(0)
    try:
        return kind(text, context=ctx)
    finally:
        ctx.set_max_operations(limit)
        ctx.reset_operations()


def to_isl_domain(m: IndexingMap, symbols: bool = True, *, ctx: Any = None) -> Any:
    """The domain as an ``isl.Set`` over ``[d..., s..., rt...]``; with
    ``symbols=False`` the range variables are projected out (``[d..., rt...]``).
    ``ctx``: the isl context (default: islpy's default context)."""
    _check(m)
    s = _unlimited(ctx, lambda: _builder(m, ctx).domain())
    if not symbols and m.num_range_vars:
        s = s.project_out(isl.dim_type.set, m.num_dims, m.num_range_vars)
    return s


def pointwise_map(m: IndexingMap, results: tuple[AffineExpr, ...] | None = None, *, ctx: Any = None) -> Any:
    """``{[d..., s..., rt...] -> [results] : domain}`` (every variable an input)."""
    _check(m)
    res = m.results if results is None else results
    return _unlimited(ctx, lambda: _builder(m, ctx).map(res))


def domain_and_pointwise_map(m: IndexingMap, *, ctx: Any = None) -> tuple[Any, Any]:
    """``(to_isl_domain(m), pointwise_map(m))`` built together (the domain once)."""
    _check(m)

    def build() -> tuple[Any, Any]:
        b = _builder(m, ctx)
        return b.domain(), b.map(m.results)

    result: tuple[Any, Any] = _unlimited(ctx, build)
    return result


def pointwise_pair(a: IndexingMap, b: IndexingMap, *, ctx: Any = None) -> tuple[Any, Any, Any, Any]:
    """``(domain a, pointwise map a, domain b, pointwise map b)``. When ``a`` and ``b`` have the same
    variables and constraints (a rewrite of the results only), both maps are built on one domain with one
    object per common subexpression, and the two domains are the same set."""
    _check(a)
    _check(b)
    same = (a.dims, a.range_vars, a.rt_vars, a.constraints, a.state) == (
        b.dims, b.range_vars, b.rt_vars, b.constraints, b.state)

    def build() -> tuple[Any, Any, Any, Any]:
        ba = _builder(a, ctx)
        bb = ba if same else _builder(b, ctx)
        return ba.domain(), ba.map(a.results), bb.domain(), bb.map(b.results)

    result: tuple[Any, Any, Any, Any] = _unlimited(ctx, build)
    return result


def text_domain(m: IndexingMap, *, ctx: Any = None) -> Any:
    """:func:`to_isl_domain` (``symbols=True``) read from isl's text syntax (:func:`isl_expr`): the
    independent encoding the tests compare the direct construction with."""
    _check(m)
    return _read(isl.Set, f"{{ {_tuple(m)} : {_conditions(m)} }}", ctx)


def text_pointwise_map(m: IndexingMap, *, ctx: Any = None) -> Any:
    """:func:`pointwise_map` read from isl's text syntax (see :func:`text_domain`)."""
    _check(m)
    out = "[" + ", ".join(isl_expr(r) for r in m.results) + "]"
    return _read(isl.Map, f"{{ {_tuple(m)} -> {out} : {_conditions(m)} }}", ctx)


def _unlimited(ctx: Any, build: Any) -> Any:
    """``build()`` with isl's operation limit lifted, the budget restarted afterwards (building the
    objects of a question is not counted, as reading its text was not)."""
    if ctx is None:
        return build()
    limit = ctx.get_max_operations()
    if not limit:
        return build()
    ctx.set_max_operations(0)
    try:
        return build()
    finally:
        ctx.set_max_operations(limit)
        ctx.reset_operations()


_BUILDERS = threading.local()


def _builder(m: IndexingMap, ctx: Any) -> _Builder:
    """The builder of ``m`` in ``ctx``, kept for the thread's last 64 maps of that context: the exact ranges of
    a rewriter's subexpressions, and both sides of its proofs, share one domain and one object per
    subexpression (isl objects are values; a new context, e.g. in a forked child, starts afresh)."""
    store = getattr(_BUILDERS, "store", None)
    if store is None or store[0] is not ctx:
        store = (ctx, {})
        _BUILDERS.store = store
    builders: dict[IndexingMap, _Builder] = store[1]
    b = builders.get(m)
    if b is None:
        if len(builders) >= 64:
            builders.clear()
        b = builders[m] = _Builder(m, ctx)
    return b


class _Builder:
    """The isl objects of a map built with isl's own operations (no text round trip), with the
    semantics of :func:`isl_expr`: ``floor(e / c)`` (``floor((-e) / (-c))`` for ``c < 0``),
    ``e - c * floor(e / c)``, ``-floor((-e) / c)``, piecewise ``min``/``max``. Each distinct
    subexpression is built once (the text form repeats the dividend of every ``mod``)."""

    def __init__(self, m: IndexingMap, ctx: Any) -> None:
        self.m = m
        self.ctx = ctx if ctx is not None else isl.DEFAULT_CONTEXT
        names = [f"d{i}" for i in range(m.num_dims)] + [f"s{i}" for i in range(m.num_range_vars)]
        names += [f"rt{i}" for i in range(m.num_rt_vars)]
        space = isl.Space.set_alloc(self.ctx, 0, len(names))
        for i, name in enumerate(names):
            space = space.set_dim_name(isl.dim_type.set, i, name)
        self.space = space
        self.ls = isl.LocalSpace.from_space(space)
        self.offset = {"d": 0, "s": m.num_dims, "rt": m.num_dims + m.num_range_vars}
        self.memo: dict[AffineExpr, Any] = {}
        self._domain: Any = None

    def val(self, v: int) -> Any:
        return isl.Val(str(v), context=self.ctx)

    def const(self, v: int) -> Any:
        return isl.PwAff.from_aff(isl.Aff.val_on_domain(self.ls, self.val(v)))

    def floor(self, a: Any, c: int) -> Any:
        if c > 0:
            return a.scale_down_val(self.val(c)).floor()
        return a.neg().scale_down_val(self.val(-c)).floor()

    def expr(self, e: AffineExpr) -> Any:
        out = self.memo.get(e)
        if out is not None:
            return out
        if isinstance(e, Const):
            out = self.const(e.value)
        elif isinstance(e, (Dim, Sym, RtSym)):
            aff = isl.Aff.var_on_domain(self.ls, isl.dim_type.set, self.offset[e.kind] + e.index)
            out = isl.PwAff.from_aff(aff)
        elif isinstance(e, Sum):
            out = self.const(e.constant) if e.constant or not e.terms else None
            for t, c in e.terms:
                x = self.expr(t)
                if c != 1:
                    x = x.scale_val(self.val(c))
                out = x if out is None else out.add(x)
        elif isinstance(e, FloorDiv):
            out = self.floor(self.expr(e.lhs), e.divisor)
        elif isinstance(e, CeilDiv):
            out = self.floor(self.expr(e.lhs).neg(), e.divisor).neg()
        elif isinstance(e, Mod):
            a = self.expr(e.lhs)
            out = a.sub(self.floor(a, e.divisor).scale_val(self.val(e.divisor)))
        elif isinstance(e, Min):
            out = self.expr(e.lhs).min(self.expr(e.rhs))
        elif isinstance(e, Max):
            out = self.expr(e.lhs).max(self.expr(e.rhs))
        else:
            raise TypeError(f"unknown expression node {type(e).__name__}")
        self.memo[e] = out
        return out

    def domain(self) -> Any:
        if self._domain is None:
            self._domain = self._build_domain()
        return self._domain

    def _build_domain(self) -> Any:
        m = self.m
        dom = isl.Set.universe(self.space)
        if m.is_known_empty:
            return isl.Set.empty(self.space)
        for kind, i, v in m.variables():
            aff = isl.Aff.var_on_domain(self.ls, isl.dim_type.set, self.offset[kind] + i)
            x = isl.PwAff.from_aff(aff)
            dom = dom.intersect(x.ge_set(self.const(v.bounds.lo))).intersect(x.le_set(self.const(v.bounds.hi)))
        for e, iv in m.constraints:
            x = self.expr(e)
            dom = dom.intersect(x.ge_set(self.const(iv.lo))).intersect(x.le_set(self.const(iv.hi)))
        return dom

    def map(self, results: tuple[AffineExpr, ...]) -> Any:
        dom = self.domain()
        out = isl.Map.from_domain(isl.Set.universe(self.space))
        for r in results:
            out = out.flat_range_product(isl.Map.from_pw_aff(self.expr(r)))
        return out.intersect_domain(dom)


def to_isl_map(m: IndexingMap, *, ctx: Any = None) -> Any:
    """The relation ``{[d..., rt...] -> [results] : exists s in the domain}``."""
    pm = pointwise_map(m, ctx=ctx)
    if m.num_range_vars:
        pm = pm.project_out(isl.dim_type.in_, m.num_dims, m.num_range_vars)
    return pm


def image(m: IndexingMap, *, sizes: int = 0) -> Any:
    """The set of all result tuples of ``m`` over its domain (an ``isl.Set``).
    ``sizes=k``: the first ``k`` dims are size parameters and lead each tuple
    (``{[sizes..., results...]}``: the image size by size)."""
    if sizes:
        from verified_indexing.engines.sizes import with_sizes_in_results

        m = with_sizes_in_results(m, sizes)
    return to_isl_map(m).range()


def compose_relation(first: IndexingMap, second: IndexingMap, *, ctx: Any = None) -> Any:
    """The exact relational composition ``first`` then ``second``.

    ``to_isl_map(first)`` is ``{[d, rt1] -> [y]}`` and ``to_isl_map(second)`` is
    ``{[y, rt2] -> [z]}``; the composite is ``{[d, rt2, rt1] -> [z] : exists y}``:
    the runtime variables of ``second`` become *extra input dimensions* placed
    right after the dims, before those of ``first`` -- the order in which
    :func:`verified_indexing.compose` lists the composite's runtime variables, so
    ``to_isl_map(compose(first, second))`` is comparable with it directly. Range
    variables of both maps stay existential. If either map is KNOWN EMPTY, the
    result is ``to_isl_map`` of KNOWN EMPTY (the empty relation ``{[] -> []}``),
    as :func:`~verified_indexing.compose` gives KNOWN EMPTY.
    """
    if first.is_known_empty or second.is_known_empty:
        return to_isl_map(IndexingMap.known_empty(), ctx=ctx)
    if not (first.is_known_empty or second.is_known_empty) and first.num_results != second.num_dims:
        raise MapError(
            f"cannot compose: the first map has {first.num_results} results, the second {second.num_dims} dims"
        )
    return relation_then(to_isl_map(first, ctx=ctx), first.num_dims, second, ctx=ctx)


def relation_then(first: Any, num_dims: int, second: IndexingMap, *, ctx: Any = None) -> Any:
    """The relation ``first`` (inputs ``[d (num_dims), rt_first...]``) followed by
    the map ``second``: ``{[d, rt2, rt_first] -> [z]}``, ``second``'s runtime
    variables inserted as inputs right after the dims (the order of
    :func:`verified_indexing.compose`). The one implementation behind
    :func:`compose_relation` and the HLO analysis's step-by-step relations."""
    n_rt2 = second.num_rt_vars
    if n_rt2:
        n_in = first.dim(isl.dim_type.in_) + n_rt2
        names = [f"i{k}" for k in range(n_in)]
        picked = names[num_dims : num_dims + n_rt2]
        # [d, rt2, rt1] -> [y]  then  [d, rt2, rt1] -> [y, rt2]
        lifted = first.insert_dims(isl.dim_type.in_, num_dims, n_rt2)
        keep = isl.Map(f"{{ [{', '.join(names)}] -> [{', '.join(picked)}] }}", context=first.get_ctx())
        first = lifted.flat_range_product(keep)
    return first.apply_range(to_isl_map(second, ctx=ctx if ctx is not None else first.get_ctx()))


def point_values(point: Any, n: int) -> tuple[int, ...]:
    """The coordinates of an ``isl.Point`` of an ``n``-dimensional set."""
    return tuple(int(point.get_coordinate_val(isl.dim_type.set, i).to_python()) for i in range(n))


# ---------------------------------------------------------------------------
# Back from isl
# ---------------------------------------------------------------------------


class _NotRepresentable(Exception):
    pass


def _frac(v: Any) -> Fraction | int:
    """An isl value (or its text) as an exact int or Fraction."""
    if not hasattr(v, "to_str"):
        return Fraction(str(v))
    if v.is_int():
        return int(v.to_python())
    if not v.is_rat():
        raise _NotRepresentable(f"not a rational value: {v.to_str()}")
    return Fraction(v.to_str())


def _aff_numerator(a: Any) -> tuple[AffineExpr, int]:
    """``(N, den)`` with ``a = N / den``, N with integer coefficients."""
    den = int(_frac(a.get_denominator_val()))
    pairs: list[tuple[AffineExpr, int]] = []
    total: AffineExpr = Const(0)
    if a.dim(isl.dim_type.param):
        raise _NotRepresentable("parameters")
    n_in = a.dim(isl.dim_type.in_)
    for i in range(n_in):
        c = _frac(a.get_coefficient_val(isl.dim_type.in_, i)) * den
        if c:
            pairs.append((Dim(i), int(c)))
    for j in range(a.dim(isl.dim_type.div)):
        c = _frac(a.get_coefficient_val(isl.dim_type.div, j)) * den
        if c:
            inner = a.get_div(j)
            if inner.is_nan():
                raise _NotRepresentable("unknown div")
            num, dden = _aff_numerator(inner)
            pairs.append((num.floordiv(dden), int(c)))
    const = int(_frac(a.get_constant_val()) * den)
    for t, k in pairs:
        total = total + t * k
    total = total + const
    return total, den


def _aff_to_expr(a: Any) -> AffineExpr:
    num, den = _aff_numerator(a)
    return num.floordiv(den)


def quasi_affine_results(isl_map: Any) -> list[AffineExpr] | None:
    """The results of a single-valued isl map (a function of its inputs, no parameters) in isl's
    own quasi-affine form, valid on the map's domain; ``None`` when isl writes it in several pieces
    or with a value that is not representable. The domain itself is not read back (the caller
    has it): this is the cheap part of :func:`indexing_map_from_isl`."""
    try:
        if isl_map.dim(isl.dim_type.param) or isl_map.is_empty():
            return None
        pieces: list[Any] = []
        isl.PwMultiAff.from_map(isl_map).foreach_piece(lambda s, ma: pieces.append(ma))
        if len(pieces) != 1:
            return None
        ma = pieces[0]
        return [_aff_to_expr(ma.get_aff(i)) for i in range(ma.dim(isl.dim_type.out))]
    except (_NotRepresentable, isl.Error):
        return None


def indexing_map_from_isl(isl_map: Any, *, single_valued: bool = False) -> IndexingMap | None:
    """The :class:`IndexingMap` of a single-valued, quasi-affine isl map whose
    domain is one bounded basic set (dims only, no range or runtime variables).

    Returns ``None`` when the map is not representable that way (multi-valued,
    several pieces, a union domain, unbounded, parameters). An empty map gives
    KNOWN EMPTY. Where isl's result has a rational denominator, the result is
    written as a ``floordiv``, exact because the value is integral on the domain.
    ``single_valued=True``: the caller knows the map is a function (built from
    expressions), so isl is not asked (a third of the cost on maps with ``mod``).
    """
    try:
        if isinstance(isl_map, isl.BasicMap):
            isl_map = isl.Map.from_basic_map(isl_map)
        if isl_map.dim(isl.dim_type.param):
            return None
        if isl_map.is_empty():
            return IndexingMap.known_empty()
        if not single_valued and not isl_map.is_single_valued():
            return None
        dom = isl_map.domain().coalesce()
        if not dom.is_bounded():
            return None
        pma = isl.PwMultiAff.from_map(isl_map)
        pieces: list[tuple[Any, Any]] = []
        pma.foreach_piece(lambda s, ma: pieces.append((s, ma)))
        if len(pieces) != 1:
            return None
        piece_dom, ma = pieces[0]
        piece_dom = piece_dom.coalesce()
        bsets = piece_dom.get_basic_sets()
        if len(bsets) != 1:
            return None
        n = dom.dim(isl.dim_type.set)
        bounds = []
        for i in range(n):
            lo = piece_dom.dim_min_val(i) if hasattr(piece_dom, "dim_min_val") else None
            hi = piece_dom.dim_max_val(i) if hasattr(piece_dom, "dim_max_val") else None
            if lo is None or hi is None:
                return None
            bounds.append(Interval(int(_frac(lo)), int(_frac(hi))))
        results = [_aff_to_expr(ma.get_aff(i)) for i in range(ma.dim(isl.dim_type.out))]
        constraints: list[tuple[AffineExpr, Interval]] = []
        for c in bsets[0].get_constraints():
            num, _ = _aff_numerator(c.get_aff())
            if isinstance(num, Const):
                continue
            span = range_of(num, bounds)
            if c.is_equality():
                if span != Interval(0, 0):
                    constraints.append((num, Interval(0, 0)))
            elif span.lo < 0:
                if span.hi < 0:
                    return IndexingMap.known_empty()
                constraints.append((num, Interval(0, span.hi)))
        m = IndexingMap(bounds, results)
        for e, iv in constraints:
            m = m.with_constraint(e, iv)
        return m
    except (_NotRepresentable, isl.Error):
        return None


def first_point(s: Any, n: int) -> tuple[int, ...]:
    """A point of a nonempty isl set, preferring small values: the lexicographic
    minimum of the set cut to the box ``|x_i| <= k`` for the first k in 0, 1, 2, 4,
    ... that leaves a point (values near zero; at worst the set's lexmin)."""
    if n == 0:
        return ()
    k = 0
    space = s.get_space()
    while k < (1 << 62):
        box = isl.Set.universe(space)
        for i in range(n):
            box = box.lower_bound_val(isl.dim_type.set, i, -k).upper_bound_val(isl.dim_type.set, i, k)
        cut = s.intersect(box)
        if not cut.is_empty():
            return point_values(cut.lexmin().sample_point(), n)
        k = 1 if k == 0 else 2 * k
    return point_values(s.lexmin().sample_point(), n)  # pragma: no cover
