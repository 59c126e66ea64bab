"""Indexing maps: quasi-affine functions with a domain, as XLA defines them.

An :class:`IndexingMap` maps dimension variables ``d_i`` (an index of the tensor
we map from), range variables ``s_j`` (the one-to-many part: reduction windows,
contracting dimensions) and runtime variables ``rt_k`` (values known only when the
program runs) to a tuple of result expressions (an index of the target tensor).
Its domain is the box of variable bounds intersected with constraints
``expr in [lo, hi]``.

A map is in one of three states: ordinary, KNOWN EMPTY (the domain has no point;
such a map keeps no variables) or UNDEFINED (the indexing is unknown).

Promises: maps are immutable and hashable; equality is structural (variables
with their bounds and names, results, constraints). :func:`compose` substitutes,
with XLA's variable order, and never simplifies.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from verified_indexing.errors import MapError
from verified_indexing.expr import (
    AffineExpr,
    Const,
    Dim,
    ExprLike,
    RtSym,
    Sym,
    VarKind,
    _Var,
    as_expr,
)
from verified_indexing.interval import Interval, range_of

__all__ = ["Constraint", "IndexingMap", "MapState", "Point", "Variable", "compose"]

MapState = Literal["ok", "known_empty", "undefined"]
_PREFIX: dict[VarKind, str] = {"d": "d", "s": "s", "rt": "rt"}


@dataclass(frozen=True)
class Variable:
    """A variable of an indexing map: its inclusive bounds and an optional name.

    ``name=None`` means the positional default (``d3``, ``s0``, ``rt1``).
    ``origin`` is an opaque annotation carried through :func:`compose` unchanged
    (the HLO layer records which operand defines a runtime variable there); it
    takes no part in equality or hashing.
    """

    bounds: Interval
    name: str | None = None
    origin: object | None = field(default=None, compare=False, hash=False)

    def with_bounds(self, bounds: Interval) -> Variable:
        return Variable(bounds, self.name, self.origin)


VariableLike: TypeAlias = Variable | Interval | tuple[int, int]
Constraint: TypeAlias = tuple[AffineExpr, Interval]
Point: TypeAlias = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def _as_var(v: VariableLike) -> Variable:
    if isinstance(v, Variable):
        return v
    if isinstance(v, Interval):
        return Variable(v)
    lo, hi = v
    return Variable(Interval(lo, hi))


def _as_interval(v: Interval | tuple[int, int]) -> Interval:
    return v if isinstance(v, Interval) else Interval(v[0], v[1])


def _merge_constraints(items: Iterable[tuple[AffineExpr, Interval]]) -> tuple[Constraint, ...]:
    merged: dict[AffineExpr, Interval] = {}
    for e, iv in items:
        merged[e] = merged[e].intersect(iv) if e in merged else iv
    return tuple(sorted(merged.items(), key=lambda kv: kv[0].sort_key))


class IndexingMap:
    """An indexing map ``(dims)[range vars]{rt vars} -> (results)`` with a domain.

    Build one with the constructor (variables given as :class:`Variable`,
    :class:`Interval` or ``(lo, hi)``), parse one with
    :func:`verified_indexing.parse_indexing_map`, or take one from the HLO
    analysis. Constraints with the same expression are merged by intersecting
    their intervals; a variable with empty bounds, an empty constraint interval
    or a violated constant constraint makes the map KNOWN EMPTY.
    """

    __slots__ = ("constraints", "dims", "range_vars", "results", "rt_vars", "state", "_hash")

    dims: tuple[Variable, ...]
    range_vars: tuple[Variable, ...]
    rt_vars: tuple[Variable, ...]
    results: tuple[AffineExpr, ...]
    constraints: tuple[Constraint, ...]
    state: MapState
    _hash: int

    def __init__(
        self,
        dims: Sequence[VariableLike],
        results: Sequence[ExprLike],
        range_vars: Sequence[VariableLike] = (),
        rt_vars: Sequence[VariableLike] = (),
        constraints: Iterable[tuple[AffineExpr, Interval | tuple[int, int]]] = (),
        *,
        state: MapState = "ok",
    ) -> None:
        dv = tuple([_as_var(v) for v in dims])
        sv = tuple([_as_var(v) for v in range_vars])
        rv = tuple([_as_var(v) for v in rt_vars])
        res = tuple([as_expr(r) for r in results])
        cons = _merge_constraints([(as_expr(e), _as_interval(iv)) for e, iv in constraints])
        if state == "ok":
            _check_names(dv, sv, rv)
            _check_uses(itertools.chain(res, (c for c, _ in cons)), len(dv), len(sv), len(rv))
        self._set(dv, sv, rv, res, cons, state)

    def _set(self, dv: tuple[Variable, ...], sv: tuple[Variable, ...], rv: tuple[Variable, ...],
             res: tuple[AffineExpr, ...], cons: tuple[Constraint, ...], state: MapState) -> None:
        """Fill the slots from checked parts (names valid, every variable used exists, constraints merged):
        a map whose domain is trivially empty becomes KNOWN EMPTY, constant constraints (which hold) go."""
        if state == "ok" and _trivially_empty(dv, sv, rv, cons):
            state = "known_empty"
        if state != "ok":
            dv = sv = rv = ()
            res = ()
            cons = ()
        elif any(isinstance(e, Const) for e, _ in cons):
            # Constant constraints that hold carry no information.
            cons = tuple((e, iv) for e, iv in cons if not isinstance(e, Const))
        setattr_ = object.__setattr__
        setattr_(self, "dims", dv)
        setattr_(self, "range_vars", sv)
        setattr_(self, "rt_vars", rv)
        setattr_(self, "results", res)
        setattr_(self, "constraints", cons)
        setattr_(self, "state", state)
        setattr_(self, "_hash", hash((dv, sv, rv, res, cons, state)))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("IndexingMap is immutable")

    def __reduce__(self) -> tuple[object, ...]:
        return (_rebuild_map, (self.dims, self.results, self.range_vars, self.rt_vars, self.constraints, self.state))

    # -- special states ----------------------------------------------------
    @staticmethod
    def known_empty() -> IndexingMap:
        """The map whose domain is known to be empty."""
        return IndexingMap((), (), state="known_empty")

    @staticmethod
    def undefined() -> IndexingMap:
        """The map of an unknown indexing."""
        return IndexingMap((), (), state="undefined")

    @staticmethod
    def identity(shape: Sequence[int]) -> IndexingMap:
        """``(d0, ..., dn-1) -> (d0, ..., dn-1)`` on the box of ``shape``."""
        return IndexingMap([(0, n - 1) for n in shape], [Dim(i) for i in range(len(shape))])

    @property
    def is_known_empty(self) -> bool:
        return self.state == "known_empty"

    @property
    def is_undefined(self) -> bool:
        return self.state == "undefined"

    # -- shape ------------------------------------------------------------
    @property
    def num_dims(self) -> int:
        return len(self.dims)

    @property
    def num_range_vars(self) -> int:
        return len(self.range_vars)

    @property
    def num_rt_vars(self) -> int:
        return len(self.rt_vars)

    @property
    def num_results(self) -> int:
        return len(self.results)

    def variables(self) -> Iterator[tuple[VarKind, int, Variable]]:
        """Every variable as ``(kind, index, variable)``: dims, range vars, rt vars."""
        for kind, vs in (("d", self.dims), ("s", self.range_vars), ("rt", self.rt_vars)):
            for i, v in enumerate(vs):
                yield kind, i, v  # type: ignore[misc]

    def var_name(self, kind: VarKind, index: int) -> str:
        """The printed name of a variable (its own name or the positional default)."""
        v = {"d": self.dims, "s": self.range_vars, "rt": self.rt_vars}[kind][index]
        return v.name if v.name is not None else f"{_PREFIX[kind]}{index}"

    def var_expr(self, kind: VarKind, index: int) -> AffineExpr:
        return {"d": Dim, "s": Sym, "rt": RtSym}[kind](index)

    # -- semantics ----------------------------------------------------------
    def evaluate(self, dims: Sequence[int], syms: Sequence[int] = (), rts: Sequence[int] = ()) -> tuple[int, ...]:
        """The results at a point (domain membership is not checked)."""
        self._check_point(dims, syms, rts)
        return tuple(r.evaluate(dims, syms, rts) for r in self.results)

    def contains(self, dims: Sequence[int], syms: Sequence[int] = (), rts: Sequence[int] = ()) -> bool:
        """True when the point satisfies every variable bound and constraint."""
        if self.state != "ok":
            return False
        self._check_point(dims, syms, rts)
        for vals, vs in ((dims, self.dims), (syms, self.range_vars), (rts, self.rt_vars)):
            for x, v in zip(vals, vs):
                if x not in v.bounds:
                    return False
        return all(e.evaluate(dims, syms, rts) in iv for e, iv in self.constraints)

    def _check_point(self, dims: Sequence[int], syms: Sequence[int], rts: Sequence[int]) -> None:
        if (len(dims), len(syms), len(rts)) != (self.num_dims, self.num_range_vars, self.num_rt_vars):
            raise MapError(
                f"point has {len(dims)} dims, {len(syms)} range vars, {len(rts)} rt vars; the map "
                f"has {self.num_dims}, {self.num_range_vars}, {self.num_rt_vars}"
            )

    def box_size(self) -> int:
        """The number of points in the box of variable bounds (before constraints)."""
        n = 1
        for _, _, v in self.variables():
            n *= v.bounds.size()
        return n if self.state == "ok" else 0

    def domain_points(self, limit: int = 1_000_000) -> Iterator[Point]:
        """Every point ``(dims, syms, rts)`` of the domain, in lexicographic order.

        The enumeration oracle: raises :class:`MapError` when the box of
        variable bounds has more than ``limit`` points.
        """
        if self.state != "ok":
            return
        if self.box_size() > limit:
            raise MapError(f"domain box has {self.box_size()} points, more than the limit {limit}")
        nd, ns = self.num_dims, self.num_range_vars
        ranges = [range(v.bounds.lo, v.bounds.hi + 1) for _, _, v in self.variables()]
        for point in itertools.product(*ranges):
            d, s, r = point[:nd], point[nd : nd + ns], point[nd + ns :]
            if all(e.evaluate(d, s, r) in iv for e, iv in self.constraints):
                yield d, s, r

    def range_of(self, expr: AffineExpr) -> Interval:
        """A sound interval for ``expr`` over the box of variable bounds."""
        return range_of(
            expr,
            [v.bounds for v in self.dims],
            [v.bounds for v in self.range_vars],
            [v.bounds for v in self.rt_vars],
        )

    # -- transformations -------------------------------------------------------
    def replace(
        self,
        *,
        dims: Sequence[VariableLike] | None = None,
        results: Sequence[ExprLike] | None = None,
        range_vars: Sequence[VariableLike] | None = None,
        rt_vars: Sequence[VariableLike] | None = None,
        constraints: Iterable[tuple[AffineExpr, Interval | tuple[int, int]]] | None = None,
    ) -> IndexingMap:
        """A copy with some parts replaced (KNOWN EMPTY and UNDEFINED maps are returned as they are)."""
        if self.state != "ok":
            return self
        if dims is None and range_vars is None and rt_vars is None:
            if results is None and (constraints is None or (not self.constraints and constraints == [])):
                return self  # nothing new
            # the variables stay (their names are valid): check only what is new
            res = self.results if results is None else tuple([as_expr(r) for r in results])
            if constraints is None:
                cons = self.constraints
                new_exprs: Iterable[AffineExpr] = res if results is not None else ()
            else:
                cons = _merge_constraints([(as_expr(e), _as_interval(iv)) for e, iv in constraints])
                new_exprs = itertools.chain(res if results is not None else (), (c for c, _ in cons))
            _check_uses(new_exprs, len(self.dims), len(self.range_vars), len(self.rt_vars))
            out = object.__new__(IndexingMap)
            out._set(self.dims, self.range_vars, self.rt_vars, res, cons, "ok")
            return out
        return IndexingMap(
            self.dims if dims is None else dims,
            self.results if results is None else results,
            self.range_vars if range_vars is None else range_vars,
            self.rt_vars if rt_vars is None else rt_vars,
            self.constraints if constraints is None else constraints,
        )

    def rename(
        self,
        dims: Sequence[str | None] | None = None,
        range_vars: Sequence[str | None] | None = None,
        rt_vars: Sequence[str | None] | None = None,
    ) -> IndexingMap:
        """A copy with new variable names (``None`` for the positional default)."""

        def ren(vs: tuple[Variable, ...], names: Sequence[str | None] | None) -> tuple[Variable, ...]:
            if names is None:
                return vs
            if len(names) != len(vs):
                raise MapError(f"rename: {len(names)} names for {len(vs)} variables")
            return tuple(Variable(v.bounds, n, v.origin) for v, n in zip(vs, names))

        if self.state != "ok":
            return self
        return self.replace(
            dims=ren(self.dims, dims), range_vars=ren(self.range_vars, range_vars), rt_vars=ren(self.rt_vars, rt_vars)
        )

    def used_vars(self) -> frozenset[tuple[VarKind, int]]:
        """The variables that appear in a result or a constraint."""
        used: set[tuple[VarKind, int]] = set()
        for e in itertools.chain(self.results, (c for c, _ in self.constraints)):
            used |= e.variables()
        return frozenset(used)

    def remove_unused_symbols(self) -> IndexingMap:
        """Drop range and runtime variables that appear in no result and no
        constraint (exact: such a variable has nonempty bounds and constrains
        nothing), renumbering the rest in order."""
        if self.state != "ok":
            return self
        used = self.used_vars()
        keep_s = [i for i in range(self.num_range_vars) if ("s", i) in used]
        keep_rt = [i for i in range(self.num_rt_vars) if ("rt", i) in used]
        if len(keep_s) == self.num_range_vars and len(keep_rt) == self.num_rt_vars:
            return self
        s_map: list[AffineExpr] = [Const(0)] * self.num_range_vars
        for new, old in enumerate(keep_s):
            s_map[old] = Sym(new)
        rt_map: list[AffineExpr] = [Const(0)] * self.num_rt_vars
        for new, old in enumerate(keep_rt):
            rt_map[old] = RtSym(new)
        return IndexingMap(
            self.dims,
            [r.substitute(syms=s_map, rts=rt_map) for r in self.results],
            [self.range_vars[i] for i in keep_s],
            [self.rt_vars[i] for i in keep_rt],
            [(e.substitute(syms=s_map, rts=rt_map), iv) for e, iv in self.constraints],
        )

    def with_constraint(self, expr: ExprLike, interval: Interval | tuple[int, int]) -> IndexingMap:
        """The map with ``expr in interval`` added, as XLA's ``AddConstraint`` does:
        a constraint on a bare variable intersects its bounds, a constraint on a
        constant either holds (no change) or empties the map."""
        if self.state != "ok":
            return self
        e = as_expr(expr)
        iv = _as_interval(interval)
        if isinstance(e, _Var):
            vars_ = {"d": list(self.dims), "s": list(self.range_vars), "rt": list(self.rt_vars)}
            vs = vars_[e.kind]
            vs[e.index] = vs[e.index].with_bounds(vs[e.index].bounds.intersect(iv))
            return self.replace(dims=vars_["d"], range_vars=vars_["s"], rt_vars=vars_["rt"])
        return self.replace(constraints=[*self.constraints, (e, iv)])

    # -- identity and text -----------------------------------------------------
    def _parts(self) -> tuple[object, ...]:
        return (self.dims, self.range_vars, self.rt_vars, self.results, self.constraints, self.state)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, IndexingMap):
            return NotImplemented
        return self._hash == other._hash and self._parts() == other._parts()

    def __hash__(self) -> int:
        return self._hash

    def __str__(self) -> str:
        from verified_indexing.syntax.printer import format_indexing_map

        return format_indexing_map(self)

    def __repr__(self) -> str:
        from verified_indexing.syntax.printer import format_indexing_map

        return f"IndexingMap({format_indexing_map(self, one_line=True)!r})"

    def format(self, one_line: bool = False) -> str:
        """The XLA text of the map (the spec's layout, or XLA's one-line form)."""
        from verified_indexing.syntax.printer import format_indexing_map

        return format_indexing_map(self, one_line=one_line)


_KIND_WORD = {"d": "dimension", "s": "range", "rt": "runtime"}


def _rebuild_map(
    dims: tuple[Variable, ...],
    results: tuple[AffineExpr, ...],
    range_vars: tuple[Variable, ...],
    rt_vars: tuple[Variable, ...],
    constraints: tuple[Constraint, ...],
    state: MapState,
) -> IndexingMap:
    return IndexingMap(dims, results, range_vars, rt_vars, constraints, state=state)


def _check_uses(exprs: Iterable[AffineExpr], n_dims: int, n_syms: int, n_rts: int) -> None:
    """Every variable the expressions use exists in a map with these variable counts."""
    counts = {"d": n_dims, "s": n_syms, "rt": n_rts}
    for e in exprs:
        for kind, index in e.variables():
            if index >= counts[kind]:
                raise MapError(
                    f"expression {e} uses {_PREFIX[kind]}{index}, but the map has "
                    f"{counts[kind]} {_KIND_WORD[kind]} variable(s)"
                )


def _check_names(*groups: tuple[Variable, ...]) -> None:
    seen: dict[str, str] = {}
    for kind, vs in zip(("d", "s", "rt"), groups):
        for i, v in enumerate(vs):
            name = v.name if v.name is not None else f"{_PREFIX[kind]}{i}"  # type: ignore[index]
            if not name.isidentifier():
                raise MapError(f"variable name {name!r} is not an identifier")
            if name in seen:
                raise MapError(f"two variables are named {name!r}")
            seen[name] = kind


def _trivially_empty(
    dv: tuple[Variable, ...], sv: tuple[Variable, ...], rv: tuple[Variable, ...], cons: tuple[Constraint, ...]
) -> bool:
    if any(v.bounds.is_empty() for v in itertools.chain(dv, sv, rv)):
        return True
    for e, iv in cons:
        if iv.is_empty():
            return True
        if isinstance(e, Const) and e.value not in iv:
            return True
    return False


def _dedupe_names(vs: list[Variable], taken: set[str], kind: VarKind) -> list[Variable]:
    out = []
    for i, v in enumerate(vs):
        name = v.name if v.name is not None else f"{_PREFIX[kind]}{i}"
        if name in taken:
            v = Variable(v.bounds, None, v.origin)
            name = f"{_PREFIX[kind]}{i}"
        taken.add(name)
        out.append(v)
    return out


def compose(first: IndexingMap, second: IndexingMap) -> IndexingMap:
    """``second ∘ first``: first maps A to B, second maps B to C; the result maps A to C.

    With XLA's variable order: the dims of ``first``; range variables of
    ``second`` then of ``first``; runtime variables of ``second`` then of
    ``first``. ``second``'s dims are replaced by ``first``'s results, and each
    ``first.results[i] in second.dims[i].bounds`` is added as a constraint (a
    bound on a bare variable is intersected into its bounds, as XLA does). No
    simplification. KNOWN EMPTY and UNDEFINED propagate (UNDEFINED wins).
    """
    if first.is_undefined or second.is_undefined:
        return IndexingMap.undefined()
    if first.is_known_empty or second.is_known_empty:
        return IndexingMap.known_empty()
    if first.num_results != second.num_dims:
        raise MapError(
            f"cannot compose: the first map has {first.num_results} results, the second {second.num_dims} dims"
        )
    ns2, nrt2 = second.num_range_vars, second.num_rt_vars
    # Renumber first's symbols after second's.
    first_syms = [Sym(ns2 + i) for i in range(first.num_range_vars)]
    first_rts = [RtSym(nrt2 + i) for i in range(first.num_rt_vars)]

    def lift(e: AffineExpr) -> AffineExpr:
        return e.substitute(syms=first_syms, rts=first_rts)

    first_results = [lift(r) for r in first.results]

    def sub(e: AffineExpr) -> AffineExpr:
        return e.substitute(dims=first_results)

    range_vars = list(second.range_vars) + list(first.range_vars)
    rt_vars = list(second.rt_vars) + list(first.rt_vars)
    taken = {first.var_name("d", i) for i in range(first.num_dims)}
    range_vars = _dedupe_names(range_vars, taken, "s")
    rt_vars = _dedupe_names(rt_vars, taken, "rt")
    constraints: list[tuple[AffineExpr, Interval]] = [(sub(e), iv) for e, iv in second.constraints]
    constraints += [(lift(e), iv) for e, iv in first.constraints]
    composed = IndexingMap(
        first.dims,
        [sub(r) for r in second.results],
        range_vars,
        rt_vars,
        constraints,
    )
    for r, v in zip(first_results, second.dims):
        composed = composed.with_constraint(r, v.bounds)
    return composed
