"""Exact answers on a small domain by enumerating every point once.

A :class:`DomainPoints` evaluates a map's variables, constraints and domain mask
on every point of its box (numpy ``int64`` columns, the enumeration engine's own
evaluator), then answers the simplifier's exact questions from that table:

* :meth:`DomainPoints.range`: the exact ``[min, max]`` of an expression over the
  domain (or over the domain less some of its constraints);
* :meth:`DomainPoints.is_empty`: emptiness of the domain;
* :func:`find_pointwise_difference`: two maps' domains and results compared at
  every point of the hull of their boxes.

Every answer is exact (every point of a finite domain is looked at), so a
"proved" from here is a proof, named ``enum`` like the enumeration engine's. The
table is built only when the box has at most :data:`SMALL_BOX` points, numpy is
available (see :func:`enabled`) and no value, coefficient or divisor can leave
``int64`` (the enumeration engine's bound over the expression tree); otherwise
:func:`table_for` returns ``None`` and the caller asks isl.
"""

from __future__ import annotations

import importlib.util
import threading
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # importing this module stays cheap: the command line sets the switch at start-up
    from verified_indexing.expr import AffineExpr
    from verified_indexing.indexing_map import IndexingMap
    from verified_indexing.interval import Interval

__all__ = ["SMALL_BOX", "DomainPoints", "enabled", "set_enabled", "table_for", "find_pointwise_difference"]

SMALL_BOX = 1 << 14
"""The largest box (points) answered by enumeration: at this size a table costs
tens of microseconds, less than one isl question."""

_HAVE_NUMPY = importlib.util.find_spec("numpy") is not None
_ENABLED = True


def enabled() -> bool:
    """Whether small domains are answered by enumeration in this process (numpy
    installed and not switched off with :func:`set_enabled`)."""
    return _HAVE_NUMPY and _ENABLED


def set_enabled(on: bool) -> bool:
    """Switch enumeration of small domains on or off; returns the previous
    setting. The command line switches it off for one-shot commands, which would
    pay numpy's import (about 0.2 s) for a few microseconds of isl work saved."""
    global _ENABLED
    prev = _ENABLED
    _ENABLED = bool(on)
    return prev


_EN: Any = None


def _enumeration() -> Any:
    """The enumeration engine's module, imported on first use (an import statement per call costs
    about a microsecond through the import machinery; the tables ask several times per map)."""
    global _EN
    if _EN is None:
        from verified_indexing.engines import enumerate as en

        _EN = en
    return _EN


class DomainPoints:
    """Every point of ``m``'s box with its domain mask (see the module docstring). Only ``m``'s
    domain matters: its results are not read.

    Raises :class:`~verified_indexing.engines.enumerate.TooLarge` when the box has
    more than ``limit`` points and :class:`ValueError` when a value could leave
    ``int64``; callers use :func:`table_for`, which turns both into ``None``.
    """

    def __init__(self, m: IndexingMap, limit: int = SMALL_BOX) -> None:
        en = _enumeration()

        if m.state != "ok":
            raise ValueError("only a map with a domain has points")
        self.map = m
        self._box = en._box_for([m], limit)
        if not en._safe_for_numpy(self._box, []):  # the box's own bounds
            raise ValueError("a bound does not fit int64")
        self._var_bound = en._var_bounds(self._box)
        self._magnitudes: dict[AffineExpr, int] = {}
        self._check([e for e, _ in m.constraints])  # (each expression asked about is checked when asked)
        if self._box.size == 0:
            raise ValueError("an empty box")  # pragma: no cover (bounds are never empty in an ok map)
        self._kinds = frozenset(self._box.kinds)
        self._memo: dict[AffineExpr, Any] = {}
        # The columns and the masks are built when first read (:attr:`cols`, :attr:`mask`): a question
        # decided without them (the corner test of :meth:`affine_fit`) builds no array.
        self._cols: dict[Any, Any] | None = None
        self._masks: tuple[list[Any], Any] | None = None
        self._corners: tuple[dict[str, list[int]], dict[str, list[int]]] | None = None  # (:meth:`_corners_fit`)
        if not LAZY_TABLES:
            self._mask_parts()  # (and the columns)

    @property
    def cols(self) -> dict[Any, Any]:
        """Each variable's value at every box point (numpy ``int64`` columns, the last variable
        fastest: the enumeration engine's order), built on first use."""
        if self._cols is None:
            self._cols = _columns(self._box) if FAST_COLUMNS else next(self._box.chunks(True))
        return self._cols

    def _mask_parts(self) -> tuple[list[Any], Any]:
        if self._masks is None:
            masks = [self._in(e, iv) for e, iv in self.map.constraints]
            mask: Any = None
            for cm in masks:
                mask = cm if mask is None else mask & cm
            self._masks = (masks, mask)
        return self._masks

    @property
    def constraint_masks(self) -> list[Any]:
        """Per constraint, whether each box point satisfies it (built on first use)."""
        return self._mask_parts()[0]

    @property
    def mask(self) -> Any:
        """Whether each box point is in the domain; ``None`` when every one is (no constraint)."""
        return None if not self.map.constraints else self._mask_parts()[1]

    def _check(self, exprs: list[AffineExpr]) -> None:
        """Every value and constant of ``exprs`` fits int64 (the enumeration engine's bound, memoised
        per table)."""
        en = _enumeration()

        if len(self._magnitudes) > MEMO_LIMIT:
            self._magnitudes.clear()
        if any(en._magnitude(e, self._var_bound, self._magnitudes) >= en.INT64_SAFE for e in exprs):
            raise ValueError("a value could leave int64")

    def _check_expr(self, e: AffineExpr) -> None:
        """``e`` uses only the map's variables and every constant and value of it fits int64 (an
        OverflowError cannot follow), else :class:`ValueError`."""
        if any(k not in self._kinds for k in e.variables()):
            raise ValueError("the expression uses a variable the map lacks")
        self._check([e])

    def _checked_values(self, e: AffineExpr) -> Any:
        """The value of ``e`` at every box point as a full-length array, after checking that ``e``
        uses only the map's variables and stays in ``int64`` (else :class:`ValueError`)."""
        import numpy as np

        self._check_expr(e)
        v = self.values(e)
        if getattr(v, "shape", None) == (self._box.size,):
            return v
        return np.broadcast_to(v, (self._box.size,))  # a constant: one value, read at every point

    def values(self, e: AffineExpr) -> Any:
        """The value of ``e`` at every box point (numpy array or scalar)."""
        en = _enumeration()

        if len(self._memo) > MEMO_LIMIT:
            self._memo.clear()
        return en._eval_np(e, self.cols, self._memo)

    def _in(self, e: AffineExpr, iv: Interval) -> Any:
        v = self.values(e)
        return (v >= iv.lo) & (v <= iv.hi)

    def is_empty(self) -> bool:
        """Whether no box point satisfies every constraint."""
        return self.mask is not None and not bool(self.mask.any())

    def range(self, e: AffineExpr, *, without: Collection[int] = ()) -> Interval | None:
        """The exact range of ``e`` over the domain (less the constraints whose
        numbers are in ``without``); ``None`` when that domain is empty. Raises
        :class:`ValueError` when ``e`` could leave ``int64`` or uses a variable
        the map lacks."""
        from verified_indexing.interval import Interval

        v = self._checked_values(e)
        mask: Any = self.mask
        if without:
            mask = None
            for k, cm in enumerate(self.constraint_masks):
                if k not in without:
                    mask = cm if mask is None else mask & cm
        if mask is not None:
            v = v[mask]
        if v.size == 0:
            return None
        return Interval(int(v.min()), int(v.max()))

    def first_difference(self, xs: Sequence[AffineExpr], ys: Sequence[AffineExpr]) -> Any:
        """The first domain point (in the box's order) where some ``xs[i]`` and ``ys[i]`` differ,
        as ``(dims, range vars, rt vars)``, or ``None``. Raises :class:`ValueError` when a value
        could leave ``int64`` or an expression uses a variable the map lacks."""
        import numpy as np

        bad: Any = None
        for x, y in zip(xs, ys):
            if x != y:
                diff = self._checked_values(x) != self._checked_values(y)
                bad = diff if bad is None else bad | diff
        if bad is None:
            return None
        if self.mask is not None:
            bad = bad & self.mask
        hits = np.flatnonzero(bad)
        if hits.size == 0:
            return None
        return self._box.point(self.cols, int(hits[0]), self.map)

    def first_difference_from(self, xs: Sequence[AffineExpr], other: IndexingMap) -> Any:
        """The first point of the box (in its order) that is in this table's domain and not in
        ``other``'s, or the reverse, or in both where some ``xs[i]`` and ``other.results[i]``
        differ; ``None`` if there is none. ``other`` has the map's variables, with bounds inside the
        box (its domain: its bounds and its constraints, evaluated here). Raises
        :class:`ValueError` when a value could leave ``int64`` or an expression uses a variable the
        map lacks."""
        import numpy as np

        size = self._box.size
        theirs: Any = None
        for (kind, i, v), key, b in zip(other.variables(), self._box.kinds, self._box.bounds):
            if (kind, i) != key:  # pragma: no cover (the box lists the map's variables in this order)
                raise ValueError("the variables differ")
            if v.bounds != b:
                col = self.cols[key]
                inside = (col >= v.bounds.lo) & (col <= v.bounds.hi)
                theirs = inside if theirs is None else theirs & inside
        for e, iv in other.constraints:
            v = self._checked_values(e)
            inside = (v >= iv.lo) & (v <= iv.hi)
            theirs = inside if theirs is None else theirs & inside
        mine: Any = self.mask
        full = np.ones(size, dtype=bool)
        mine_b = full if mine is None else mine
        theirs_b = full if theirs is None else theirs
        bad = mine_b != theirs_b
        both = mine_b & theirs_b
        for x, y in zip(xs, other.results):
            if x != y:
                bad |= both & (self._checked_values(x) != self._checked_values(y))
        hits = np.flatnonzero(bad)
        if hits.size == 0:
            return None
        return self._box.point(self.cols, int(hits[0]), self.map)

    def _corners_fit(self, e: AffineExpr, names: Sequence[tuple[str, int]]) -> bool:
        """A quick test in Python integers on a plain box (every box point in the domain): whether
        the affine form read off the low corner and its neighbours also holds at the high corner.
        ``False`` proves that no affine fit exists (the fit would be that form); ``True`` decides
        nothing."""
        corners = self._corners
        if corners is None:
            m = self.map
            corners = self._corners = (
                {"d": [v.bounds.lo for v in m.dims], "s": [v.bounds.lo for v in m.range_vars],
                 "rt": [v.bounds.lo for v in m.rt_vars]},
                {"d": [v.bounds.hi for v in m.dims], "s": [v.bounds.hi for v in m.range_vars],
                 "rt": [v.bounds.hi for v in m.rt_vars]})
        lows, highs = corners
        if any(k not in lows or i >= len(lows[k]) or lows[k][i] == highs[k][i] for k, i in names):
            return True  # (decided by the full test)
        d, s, r = lows["d"], lows["s"], lows["rt"]
        base = e.evaluate(d, s, r)
        predicted = base
        for k, i in names:
            col = lows[k]  # (the low corner's neighbour along (k, i): one coordinate moved, then restored)
            col[i] += 1
            try:
                value = e.evaluate(d, s, r)
            finally:
                col[i] -= 1
            predicted += (value - base) * (highs[k][i] - col[i])
        return e.evaluate(highs["d"], highs["s"], highs["rt"]) == predicted

    def affine_fit(self, e: AffineExpr) -> AffineExpr | None:
        """An affine expression over ``e``'s variables with integer coefficients that equals
        ``e`` at every point of the domain, or ``None`` (no such expression, an empty domain, or
        one these differences do not find: each coefficient is read off a neighbouring point of the
        domain's first point, so a domain with no neighbour along some variable gives ``None``).
        Exact: the fit is checked at every point. Raises :class:`ValueError` when ``e`` could leave
        ``int64`` or uses a variable the map lacks."""
        names = sorted(e.variables())
        if not self.map.constraints and not self._corners_fit(e, names):  # (no constraint: no mask)
            self._check_expr(e)  # (the promise: ValueError for a value beyond int64, fit or not)
            return None
        import numpy as np

        from verified_indexing.expr import Dim, RtSym, Sym, linear_sum

        size = self._box.size
        v = self._checked_values(e)
        if self.mask is None:
            first = 0
        else:
            hits = np.flatnonzero(self.mask)
            if hits.size == 0:
                return None
            first = int(hits[0])
        stride = 1
        strides: dict[tuple[str, int], tuple[int, int]] = {}
        for k, b in zip(reversed(self._box.kinds), reversed(self._box.bounds)):
            strides[k] = (stride, b.hi)
            stride *= b.size()
        base = int(v[first])
        coefs: list[int] = []
        for k in names:
            step, hi = strides[k]
            if int(self.cols[k][first]) == hi:
                return None  # no neighbour along k
            nxt = first + step
            if self.mask is not None and not self.mask[nxt]:
                return None
            coefs.append(int(v[nxt]) - base)
        const = base - sum(c * int(self.cols[k][first]) for k, c in zip(names, coefs))
        # the fit's values stay inside int64 (the box bounds fit it; checked in Python ints)
        if sum(abs(c) * self._var_bound[k] for k, c in zip(names, coefs)) + abs(const) >= 2**62:
            return None
        fitted: Any = np.full(size, const, dtype=np.int64)
        for k, c in zip(names, coefs):
            if c:
                fitted += c * self.cols[k]
        same = fitted == v
        ok = bool(same.all()) if self.mask is None else bool(same[self.mask].all())
        if not ok:
            return None
        ctor = {"d": Dim, "s": Sym, "rt": RtSym}
        return linear_sum([(ctor[k](i), c) for (k, i), c in zip(names, coefs) if c], const)


LAZY_TABLES = True
"""Build a table's columns and constraint masks when first read; ``False``: when the table is made
(the benchmark's "before")."""

FAST_COLUMNS = True
"""Build a table's columns by repeating and tiling each variable's range (about 50 times faster on a
16K-point box than the division of a flat index the enumeration engine's chunks use; the same values
in the same order). ``False`` restores the chunk's columns (the benchmark's "before")."""


def _columns(box: Any) -> dict[Any, Any]:
    """The box's points as columns, in the order of ``box.chunks(True)``'s single chunk: row-major,
    the last variable fastest."""
    import numpy as np

    cols: dict[Any, Any] = {}
    inner = box.size
    outer = 1
    for k, b in zip(box.kinds, box.bounds):
        n = b.size()
        inner //= n
        col = np.arange(b.lo, b.hi + 1, dtype=np.int64)
        if inner > 1:
            col = np.repeat(col, inner)
        if outer > 1:
            col = np.tile(col, outer)
        cols[k] = col
        outer *= n
    return cols


_LOCAL = threading.local()
"""Per thread: ``tables``, the last tables built (a map's rewriters and its domain steps share one)."""

MEMO_LIMIT = 512
"""Evaluated subexpressions a table keeps (each array up to 128 KiB); beyond it the memo restarts."""


_MISSING = object()


def _domain(m: IndexingMap) -> tuple[Any, ...]:
    """What a table depends on: the variables and the constraints (not the results)."""
    return (m.dims, m.range_vars, m.rt_vars, m.constraints)


def table_for(m: IndexingMap, limit: int = SMALL_BOX) -> DomainPoints | None:
    """The point table of ``m`` when its box is small and enumeration is
    :func:`enabled`, else ``None``."""
    if not (_HAVE_NUMPY and _ENABLED) or m.state != "ok":
        return None
    size = 1
    for group in (m.dims, m.range_vars, m.rt_vars):
        for v in group:
            size *= v.bounds.size()
    if size > limit:
        return None
    tables: dict[tuple[Any, ...], DomainPoints | None] | None = getattr(_LOCAL, "tables", None)
    if tables is None:
        tables = _LOCAL.tables = {}
    key = (m.dims, m.range_vars, m.rt_vars, m.constraints, limit)  # maps that differ only in their results share
    hit = tables.get(key, _MISSING)
    if hit is not _MISSING:
        return hit  # type: ignore[return-value]
    try:
        table: DomainPoints | None = DomainPoints(m, limit)
    except (_enumeration().TooLarge, ValueError, OverflowError):
        table = None
    if len(tables) >= 8:
        tables.pop(next(iter(tables)))
    tables[key] = table
    return table


def _inside(b: IndexingMap, a: IndexingMap) -> bool:
    """Whether ``b`` has ``a``'s variable counts and each of its variables' bounds lies in ``a``'s."""
    if (a.num_dims, a.num_range_vars, a.num_rt_vars) != (b.num_dims, b.num_range_vars, b.num_rt_vars):
        return False
    return all(vb.bounds.lo >= va.bounds.lo and vb.bounds.hi <= va.bounds.hi
               for (_, _, va), (_, _, vb) in zip(a.variables(), b.variables()))


def find_pointwise_difference(a: IndexingMap, b: IndexingMap, limit: int = SMALL_BOX) -> tuple[bool, Any]:
    """``(decided, point)``: whether the maps (same variable counts) were compared
    at every point of the hull of their boxes, and the first point where their
    domains or results differ (``None``: they agree everywhere). Not decided
    (``(False, None)``) when enumeration is off, the hull is larger than
    ``limit`` or a value could leave ``int64``. Two maps on the same domain (a rewrite of
    the results) are compared on that domain's table, with the values it already holds."""
    if not enabled() or a.state != "ok" or b.state != "ok":
        return False, None
    en = _enumeration()

    if max(a.box_size(), b.box_size()) > limit:
        return False, None
    if _domain(a) == _domain(b):
        table = table_for(a, limit)
        if table is not None:
            try:
                return True, table.first_difference(a.results, b.results)
            except ValueError:  # a result could leave int64: the enumeration engine decides
                pass
    elif _inside(b, a):
        # b's box lies in a's (a domain step tightened bounds or dropped constraints): the hull is a's
        # box, so a's table holds every point, in the same order
        table = table_for(a, limit)
        if table is not None:
            try:
                return True, table.first_difference_from(a.results, b)
            except ValueError:
                pass
    try:
        return True, en.find_pointwise_difference(a, b, limit=limit, numpy_only=True)
    except (en.TooLarge, OverflowError):
        return False, None
