"""The enumeration engine: plain evaluation over every point of a small box.

The independent oracle of the other engines. Expressions are evaluated with
numpy on ``int64`` arrays, chunk by chunk, in lexicographic order of the box
(so the first point found is the lexicographically smallest); numpy's ``//`` and
``%`` on integers round toward negative infinity, which is the project's
semantics. When a value could leave the ``int64`` range (checked with interval
evaluation first), or numpy is missing, the pure-Python evaluator is used.

Functions return candidate points; the caller re-checks them with the plain
evaluator before reporting them. Each raises :class:`TooLarge` when the box has
more points than the limit.
"""

from __future__ import annotations

import importlib.util
import itertools
import time
from collections.abc import Iterator, Sequence
from typing import Any

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
    VarKind,
)
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.interval import Interval

# numpy is a test dependency; enumeration falls back to Python without it. It is
# loaded on the first enumeration, not when the engines are imported (start-up).
HAVE_NUMPY = importlib.util.find_spec("numpy") is not None


class _LazyNumpy:
    def __getattr__(self, name: str) -> Any:
        import numpy

        globals()["np"] = numpy
        return getattr(numpy, name)


np: Any = _LazyNumpy()

__all__ = [
    "TooLarge",
    "POINTWISE_LIMIT",
    "RELATION_LIMIT",
    "Point",
    "find_pointwise_difference",
    "find_point",
    "find_violation",
    "relation_difference",
    "find_injectivity_violation",
    "find_bijectivity_violation",
]

POINTWISE_LIMIT = 10_000_000
"""Default largest box for streaming checks (equality, emptiness, implication)."""

RELATION_LIMIT = 1_000_000
"""Default largest box for checks that collect points (relations, injectivity)."""

CHUNK = 1 << 18
INT64_SAFE = 1 << 62

Point = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
"""``(dims, range vars, rt vars)``."""


class TooLarge(Exception):
    """The box has more points than the enumeration limit."""


# ---------------------------------------------------------------------------
# A box of variables shared by one or two maps
# ---------------------------------------------------------------------------


class _Box:
    def __init__(self, kinds: Sequence[tuple[VarKind, int]], bounds: Sequence[Interval], limit: int) -> None:
        self.kinds = list(kinds)
        self.bounds = list(bounds)
        self.size = 1
        for b in bounds:
            self.size *= b.size()
        if self.size > limit:
            raise TooLarge(f"the box has {self.size} points, more than the enumeration limit {limit}")

    def chunks(self, use_numpy: bool, deadline: float | None = None) -> Iterator[dict[tuple[VarKind, int], Any]]:
        """Column dicts for consecutive chunks of the box (numpy arrays or 1-element
        lists); raises :class:`TooLarge` once ``deadline`` (``time.monotonic()``) passes."""
        if self.size == 0:
            return
        if not use_numpy:
            for n, pt in enumerate(itertools.product(*[range(b.lo, b.hi + 1) for b in self.bounds])):
                if deadline is not None and n % 4096 == 0 and time.monotonic() > deadline:
                    raise TooLarge("enumeration ran out of time")
                yield {k: [v] for k, v in zip(self.kinds, pt)}
            return
        sizes = [b.size() for b in self.bounds]
        for start in range(0, self.size, CHUNK):
            if deadline is not None and time.monotonic() > deadline:
                raise TooLarge("enumeration ran out of time")
            flat = np.arange(start, min(start + CHUNK, self.size), dtype=np.int64)
            cols: dict[tuple[VarKind, int], Any] = {}
            for k, b, n in reversed(list(zip(self.kinds, self.bounds, sizes))):
                cols[k] = flat % n + b.lo
                flat = flat // n
            yield cols

    def point(self, cols: dict[tuple[VarKind, int], Any], i: int, m: IndexingMap) -> Point:
        d = tuple(int(cols[("d", j)][i]) for j in range(m.num_dims))
        s = tuple(int(cols[("s", j)][i]) for j in range(m.num_range_vars))
        r = tuple(int(cols[("rt", j)][i]) for j in range(m.num_rt_vars))
        return d, s, r


def _box_for(maps: Sequence[IndexingMap], limit: int) -> _Box:
    """The hull of the variable bounds of maps that share variable lists."""
    first = maps[0]
    kinds: list[tuple[VarKind, int]] = []
    bounds: list[Interval] = []
    for kind, i, v in first.variables():
        b = v.bounds
        for other in maps[1:]:
            ov = {"d": other.dims, "s": other.range_vars, "rt": other.rt_vars}[kind][i]
            b = b.union(ov.bounds)
        kinds.append((kind, i))
        bounds.append(b)
    return _Box(kinds, bounds, limit)


def _safe_for_numpy(box: _Box, exprs: Sequence[AffineExpr]) -> bool:
    if not HAVE_NUMPY:
        return False
    # The chunk arithmetic itself (index -> coordinates) needs every bound in range,
    # including variables no expression uses.
    if any(max(abs(b.lo), abs(b.hi)) >= INT64_SAFE for b in box.bounds):
        return False
    var_bound = _var_bounds(box)
    memo: dict[AffineExpr, int] = {}
    return all(_magnitude(e, var_bound, memo) < INT64_SAFE for e in exprs)


def _var_bounds(box: _Box) -> dict[tuple[VarKind, int], int]:
    """Each variable's largest absolute value on the box (what :func:`_magnitude` starts from)."""
    return {k: max(abs(b.lo), abs(b.hi)) for k, b in zip(box.kinds, box.bounds)}


def _magnitude(x: AffineExpr, var_bound: dict[tuple[VarKind, int], int], memo: dict[AffineExpr, int]) -> int:
    """A bound on ``|value|`` of ``x``, of every partial sum inside it and of every constant numpy
    gets (coefficients, divisors): ``|q| <= |a|`` for ``q = a floordiv c`` or ``a ceildiv c``
    (``|c| >= 1``), ``|a mod c| < |c|``."""
    hit = memo.get(x)
    if hit is not None:
        return hit
    out: int
    if isinstance(x, Const):
        out = abs(x.value)
    elif isinstance(x, (Dim, Sym, RtSym)):
        out = var_bound.get((x.kind, x.index), INT64_SAFE)
    elif isinstance(x, Sum):
        # every coefficient becomes an int64 too, even one whose term is always 0
        out = abs(x.constant) + sum(max(abs(c) * _magnitude(t, var_bound, memo), abs(c)) for t, c in x.terms)
    elif isinstance(x, (FloorDiv, CeilDiv, Mod)):
        out = max(_magnitude(x.lhs, var_bound, memo), abs(x.divisor))  # the divisor is an int64 too
    elif isinstance(x, (Min, Max)):
        out = max(_magnitude(x.lhs, var_bound, memo), _magnitude(x.rhs, var_bound, memo))
    else:
        raise TypeError(f"unknown expression node {type(x).__name__}")
    memo[x] = out
    return out


def _eval(e: AffineExpr, cols: dict[tuple[VarKind, int], Any], use_numpy: bool) -> Any:
    """The values of ``e`` on a chunk (numpy array, or a 1-element list)."""
    if not use_numpy:
        point = {k: v[0] for k, v in cols.items()}
        nd = sum(1 for k in point if k[0] == "d")
        ns = sum(1 for k in point if k[0] == "s")
        nr = sum(1 for k in point if k[0] == "rt")
        d = [point[("d", i)] for i in range(nd)]
        s = [point[("s", i)] for i in range(ns)]
        r = [point[("rt", i)] for i in range(nr)]
        return [e.evaluate(d, s, r)]
    # One memo per chunk, passed down explicitly: a recursive closure would be a reference cycle that keeps
    # every chunk's intermediate arrays alive until the cyclic garbage collector happens to run.
    return _eval_np(e, cols, {})


def _eval_np(x: AffineExpr, cols: dict[tuple[VarKind, int], Any], memo: dict[AffineExpr, Any]) -> Any:
    hit = memo.get(x)
    if hit is not None:
        return hit
    out: Any
    if isinstance(x, Const):
        out = np.int64(x.value)
    elif isinstance(x, (Dim, Sym, RtSym)):
        out = cols[(x.kind, x.index)]
    elif isinstance(x, Sum):
        out = np.int64(x.constant)
        for t, c in x.terms:
            out = out + np.int64(c) * _eval_np(t, cols, memo)
    elif isinstance(x, FloorDiv):
        out = _eval_np(x.lhs, cols, memo) // np.int64(x.divisor)
    elif isinstance(x, CeilDiv):
        out = -((-_eval_np(x.lhs, cols, memo)) // np.int64(x.divisor))
    elif isinstance(x, Mod):
        out = _eval_np(x.lhs, cols, memo) % np.int64(x.divisor)
    elif isinstance(x, Min):
        out = np.minimum(_eval_np(x.lhs, cols, memo), _eval_np(x.rhs, cols, memo))
    elif isinstance(x, Max):
        out = np.maximum(_eval_np(x.lhs, cols, memo), _eval_np(x.rhs, cols, memo))
    else:
        raise TypeError(f"unknown expression node {type(x).__name__}")
    memo[x] = out
    return out


def _mask(m: IndexingMap, cols: dict[tuple[VarKind, int], Any], n: int, use_numpy: bool) -> Any:
    """Domain membership of every point of the chunk."""
    if use_numpy:
        ok = np.ones(n, dtype=bool)
        for kind, i, v in m.variables():
            c = cols[(kind, i)]
            ok &= (c >= v.bounds.lo) & (c <= v.bounds.hi)
        for e, iv in m.constraints:
            val = _eval(e, cols, True)
            ok &= (val >= iv.lo) & (val <= iv.hi)
        return ok
    point = {k: v[0] for k, v in cols.items()}
    d = [point[("d", i)] for i in range(m.num_dims)]
    s = [point[("s", i)] for i in range(m.num_range_vars)]
    r = [point[("rt", i)] for i in range(m.num_rt_vars)]
    return [m.contains(d, s, r)]


def _deadline(timeout: float | None) -> float | None:
    return None if timeout is None else time.monotonic() + timeout


def _chunk_len(cols: dict[tuple[VarKind, int], Any]) -> int:
    for v in cols.values():
        return len(v)
    return 1


def _all_exprs(m: IndexingMap) -> list[AffineExpr]:
    return list(m.results) + [e for e, _ in m.constraints]


def find_pointwise_difference(
    a: IndexingMap,
    b: IndexingMap,
    limit: int = POINTWISE_LIMIT,
    timeout: float | None = None,
    *,
    numpy_only: bool = False,
) -> Point | None:
    """The first point (lexicographic) of the hull of both boxes that is in one
    domain and not the other, or in both with different results; ``None`` if
    the maps agree pointwise. ``a`` and ``b`` must have the same variable counts.
    ``numpy_only``: raise :class:`TooLarge` instead of evaluating point by point
    in Python (numpy missing, or a value could leave ``int64``)."""
    if a.num_dims == 0 and a.num_range_vars == 0 and a.num_rt_vars == 0:
        box = _Box([], [], limit)
        in_a, in_b = a.contains((), (), ()), b.contains((), (), ())
        if in_a != in_b or (in_a and a.evaluate(()) != b.evaluate(())):
            return (), (), ()
        return None
    box = _box_for([a, b], limit)
    use_np = _safe_for_numpy(box, _all_exprs(a) + _all_exprs(b))
    if numpy_only and not use_np:
        raise TooLarge("numpy evaluation is not safe here (a value could leave int64, or numpy is missing)")
    for cols in box.chunks(use_np, _deadline(timeout)):
        n = _chunk_len(cols)
        ma, mb = _mask(a, cols, n, use_np), _mask(b, cols, n, use_np)
        if use_np:
            bad = ma != mb
            both = ma & mb
            for ra, rb in zip(a.results, b.results):
                bad |= both & (_eval(ra, cols, True) != _eval(rb, cols, True))
            idx = np.flatnonzero(bad)
            if idx.size:
                return box.point(cols, int(idx[0]), a)
        else:
            if ma[0] != mb[0] or (
                ma[0] and any(_eval(x, cols, False) != _eval(y, cols, False) for x, y in zip(a.results, b.results))
            ):
                return box.point(cols, 0, a)
    return None


def find_point(m: IndexingMap, limit: int = POINTWISE_LIMIT, timeout: float | None = None) -> Point | None:
    """The lexicographically first domain point, or ``None`` if the domain is empty."""
    return find_violation(m, None, Interval(0, 0), limit, timeout)


def find_violation(
    m: IndexingMap,
    expr: AffineExpr | None,
    interval: Interval,
    limit: int = POINTWISE_LIMIT,
    timeout: float | None = None,
) -> Point | None:
    """The first domain point where ``expr`` is outside ``interval`` (with
    ``expr=None``: the first domain point), or ``None``."""
    if m.is_known_empty:
        return None
    if m.num_dims == 0 and m.num_range_vars == 0 and m.num_rt_vars == 0:
        if m.contains(()) and (expr is None or expr.evaluate(()) not in interval):
            return (), (), ()
        return None
    box = _box_for([m], limit)
    use_np = _safe_for_numpy(box, _all_exprs(m) + ([expr] if expr is not None else []))
    for cols in box.chunks(use_np, _deadline(timeout)):
        n = _chunk_len(cols)
        mask = _mask(m, cols, n, use_np)
        if use_np:
            if expr is not None:
                v = _eval(expr, cols, True)
                mask = mask & ((v < interval.lo) | (v > interval.hi))
            idx = np.flatnonzero(mask)
            if idx.size:
                return box.point(cols, int(idx[0]), m)
        elif mask[0] and (expr is None or _eval(expr, cols, False)[0] not in interval):
            return box.point(cols, 0, m)
    return None


Relation = dict[tuple[tuple[int, ...], tuple[int, ...]], dict[tuple[int, ...], Point]]


def _relation(m: IndexingMap, limit: int, deadline: float | None = None) -> Relation:
    """``{(dims, rts): {results: a witness point}}`` over the whole domain; raises
    :class:`TooLarge` once ``deadline`` (``time.monotonic()``) passes."""
    if m.box_size() > limit:
        raise TooLarge(f"the box has {m.box_size()} points, more than the enumeration limit {limit}")
    rel: dict[tuple[tuple[int, ...], tuple[int, ...]], dict[tuple[int, ...], Point]] = {}
    for n, (d, s, r) in enumerate(m.domain_points(limit)):
        if deadline is not None and n % 1024 == 0 and time.monotonic() > deadline:
            raise TooLarge("enumeration ran out of time")
        res = m.evaluate(d, s, r)
        rel.setdefault((d, r), {}).setdefault(res, (d, s, r))
    return rel


def relation_difference(
    a: IndexingMap, b: IndexingMap, limit: int = RELATION_LIMIT, timeout: float | None = None
) -> tuple[str, Point, tuple[int, ...]] | None:
    """A pair ``(dims, rts) -> results`` related by one map and not the other, as
    ``(side, witness point of that side, results)``; ``None`` if the relations are equal."""
    deadline = _deadline(timeout)
    ra, rb = _relation(a, limit, deadline), _relation(b, limit, deadline)
    for side, x, y in (("source", ra, rb), ("target", rb, ra)):
        for key in sorted(x):
            other = y.get(key, {})
            for res in sorted(x[key]):
                if res not in other:
                    return side, x[key][res], res
    return None


def find_injectivity_violation(
    m: IndexingMap, limit: int = RELATION_LIMIT, timeout: float | None = None
) -> tuple[Point, Point] | None:
    """Two domain points with different ``(dims, rts)`` and the same results, or ``None``."""
    seen: dict[tuple[int, ...], Point] = {}
    for key, outs in sorted(_relation(m, limit, _deadline(timeout)).items()):
        for res, witness in sorted(outs.items()):
            prev = seen.get(res)
            if prev is not None and (prev[0], prev[2]) != key:
                return prev, witness
            seen.setdefault(res, witness)
    return None


def find_bijectivity_violation(
    m: IndexingMap, box: Sequence[Interval], limit: int = RELATION_LIMIT
) -> tuple[str, Point | None, Point | None, tuple[int, ...] | None] | None:
    """Why ``m`` is not a bijection from its domain onto ``box``, or ``None``.

    Returns ``(reason, point, other point, box point)``: ``"not single-valued"``
    (two points, same inputs, different results), ``"not injective"`` (two
    points, same results), ``"outside the box"`` (a point whose results leave the
    box), ``"not surjective"`` (a box point with no preimage).
    """
    rel = _relation(m, limit)
    for _key, outs in sorted(rel.items()):
        if len(outs) > 1:
            (_, p1), (_, p2) = sorted(outs.items())[:2]
            return "not single-valued", p1, p2, None
    bad = find_injectivity_violation(m, limit)
    if bad is not None:
        return "not injective", bad[0], bad[1], None
    images: set[tuple[int, ...]] = set()
    for _key, outs in sorted(rel.items()):
        for res, witness in outs.items():
            if len(res) != len(box) or any(x not in iv for x, iv in zip(res, box)):
                return "outside the box", witness, None, res
            images.add(res)
    total = 1
    for iv in box:
        total *= iv.size()
    if total > limit:
        raise TooLarge(f"the target box has {total} points, more than the enumeration limit {limit}")
    if len(images) == total:
        return None
    for y in itertools.product(*[range(iv.lo, iv.hi + 1) for iv in box]):
        if y not in images:
            return "not surjective", None, None, tuple(y)
    return None  # pragma: no cover


def subset_element(m: IndexingMap, pt: Point, of: str) -> tuple[Any, ...]:
    """The element of ``m``'s domain (``(dims, rts)``), image (results) or
    relation (``((dims, rts), results)``) that the domain point ``pt`` gives."""
    d, _, r = pt
    if of == "domain":
        return (d, r)
    res = m.evaluate(*pt)
    if of == "image":
        return res
    return ((d, r), res)


def find_subset_violation(a: IndexingMap, b: IndexingMap, of: str, limit: int = RELATION_LIMIT) -> Point | None:
    """The first domain point of ``a`` (lexicographic) whose element (see
    :func:`subset_element`) ``b`` lacks, or ``None`` when ``a``'s domain, image or
    relation is a subset of ``b``'s."""
    for m in (a, b):
        if m.box_size() > limit:
            raise TooLarge(f"the box has {m.box_size()} points, more than the enumeration limit {limit}")
    have = {subset_element(b, pt, of) for pt in b.domain_points(limit)}
    for pt in a.domain_points(limit):
        if subset_element(a, pt, of) not in have:
            return pt
    return None
