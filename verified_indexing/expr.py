"""Quasi-affine expressions: frozen, hashable values with one integer semantics.

An :class:`AffineExpr` is built from integer constants, dimension variables
(``d0``), range variables (``s0``), runtime variables (``rt0``), ``+``, ``-``,
multiplication by a constant, ``floordiv``, ``ceildiv`` and ``mod`` by a nonzero
constant, ``min`` and ``max``.

Promises:

* values are immutable and hashable; two expressions that are structurally equal
  after construction compare equal and hash equally;
* construction folds only identities that hold for every integer value of the
  variables (constant arithmetic, ``x + 0``, ``x * 1``, ``x * 0``, ``x floordiv 1``,
  ``x mod 1``, merging like terms, distributing a constant multiplier over a sum,
  ``min(x, x)``); everything that needs bounds is the simplifier's job;
* sums are kept in one canonical form (a :class:`Sum` of terms with nonzero integer
  coefficients in a fixed order, plus a constant), so equal sums print equally;
* :meth:`AffineExpr.evaluate` implements the project's semantics: ``floordiv``
  rounds toward negative infinity for divisors of either sign, ``a mod b`` is
  ``a - b * (a floordiv b)``, ``a ceildiv b`` is ``-((-a) floordiv b)``;
* semi-affine input (a product of two non-constant expressions, a division by a
  non-constant) raises :class:`SemiAffineError`; a zero divisor raises
  :class:`ZeroDivisorError`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Literal, TypeAlias, Union

from verified_indexing.errors import SemiAffineError, ZeroDivisorError

__all__ = [
    "AffineExpr",
    "CeilDiv",
    "Const",
    "Dim",
    "FloorDiv",
    "Max",
    "Min",
    "Mod",
    "RtSym",
    "Sum",
    "Sym",
    "VarKind",
    "ExprLike",
    "as_expr",
    "const",
    "dim",
    "sym",
    "rt",
    "emin",
    "emax",
    "floor_div",
    "ceil_div",
    "floor_mod",
    "trunc_div",
    "trunc_mod",
    "truncdiv_expr",
    "truncmod_expr",
    "linear_sum",
]

VarKind = Literal["d", "s", "rt"]
_KIND_RANK = {"d": 0, "s": 1, "rt": 2}

ExprLike: TypeAlias = Union["AffineExpr", int]

# Rank of each node kind in the canonical term order: variables first, then
# floordiv/ceildiv, then mod, then min/max; constants always print last.
_RANK_CONST = -1
_RANK_VAR = 0
_RANK_FLOORDIV = 1
_RANK_CEILDIV = 2
_RANK_MOD = 3
_RANK_MIN = 4
_RANK_MAX = 5
_RANK_SUM = 6


def floor_div(a: int, b: int) -> int:
    """``a floordiv b``: the quotient rounded toward negative infinity (b != 0)."""
    if b == 0:
        raise ZeroDivisorError("division by zero")
    return a // b


def floor_mod(a: int, b: int) -> int:
    """``a mod b`` = ``a - b * (a floordiv b)``: the sign follows the divisor."""
    if b == 0:
        raise ZeroDivisorError("modulo by zero")
    return a - b * (a // b)


def ceil_div(a: int, b: int) -> int:
    """``a ceildiv b`` = ``-((-a) floordiv b)``."""
    if b == 0:
        raise ZeroDivisorError("division by zero")
    return -((-a) // b)


def trunc_div(a: int, b: int) -> int:
    """``a truncdiv b``: the quotient rounded toward zero, as C's, LLVM's ``sdiv`` and TVM's ``truncdiv``
    (b != 0). Defined on magnitudes, not through floor division: ``|q| = |a| // |b|``, negative when the
    signs of ``a`` and ``b`` differ."""
    if b == 0:
        raise ZeroDivisorError("division by zero")
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def trunc_mod(a: int, b: int) -> int:
    """``a truncmod b`` = ``a - b * (a truncdiv b)``: C's ``%``, the sign follows the dividend (b != 0)."""
    if b == 0:
        raise ZeroDivisorError("modulo by zero")
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def truncdiv_expr(e: AffineExpr, divisor: int) -> AffineExpr:
    """``e truncdiv divisor`` in the map language, which has no truncating node: the exact floor form
    ``max(e, 0) floordiv c - max(-e, 0) floordiv c`` (``c = |divisor|``; negated for a negative
    divisor). Equal to :func:`trunc_div` at every point (tests/test_truncation.py pins it against the
    evaluator, z3's and isl's own truncating division; ``check-rule`` proves it for every ``c > 0``)."""
    if divisor == 0:
        raise ZeroDivisorError("truncdiv by zero")
    c = abs(divisor)
    q = emax(e, 0).floordiv(c) - emax(-e, 0).floordiv(c)
    return q if divisor > 0 else -q


def truncmod_expr(e: AffineExpr, divisor: int) -> AffineExpr:
    """``e truncmod divisor``: ``max(e, 0) mod c - max(-e, 0) mod c`` (``c = |divisor|``: the sign of
    C's remainder follows the dividend only); see :func:`truncdiv_expr`."""
    if divisor == 0:
        raise ZeroDivisorError("truncmod by zero")
    c = abs(divisor)
    return emax(e, 0).mod(c) - emax(-e, 0).mod(c)


class AffineExpr:
    """Base class of all expression nodes. Use the module functions or Python
    operators to build expressions; never mutate one."""

    __slots__ = ("_hash", "_key", "_vars")

    _key: tuple[object, ...]
    _hash: int
    _vars: frozenset[tuple[VarKind, int]]

    def _init_key(self, key: tuple[object, ...]) -> None:
        object.__setattr__(self, "_key", key)
        object.__setattr__(self, "_hash", hash(key))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    # -- identity -------------------------------------------------------
    @property
    def sort_key(self) -> tuple[object, ...]:
        """The canonical-order key: terms of a sum are printed in this order."""
        return self._key

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, AffineExpr):
            return NotImplemented
        return self._hash == other._hash and self._key == other._key

    def __hash__(self) -> int:
        return self._hash

    def __lt__(self, other: AffineExpr) -> bool:
        return self._key < other._key

    def __repr__(self) -> str:
        return f"AffineExpr({self})"

    def __str__(self) -> str:
        from verified_indexing.syntax.printer import format_expr

        return format_expr(self)

    # -- structure ------------------------------------------------------
    def children(self) -> tuple[AffineExpr, ...]:
        """The direct subexpressions."""
        return ()

    def walk(self) -> Iterator[AffineExpr]:
        """Every subexpression, this one first (pre-order)."""
        stack: list[AffineExpr] = [self]
        while stack:  # no recursion (and no generator per node)
            node = stack.pop()
            yield node
            kids = node.children()
            if kids:
                stack.extend(reversed(kids))

    def rebuild(self, children: Sequence[AffineExpr]) -> AffineExpr:
        """The same node kind with new children (re-canonicalized)."""
        assert not children
        return self

    def map_children(self, fn: Callable[[AffineExpr], AffineExpr]) -> AffineExpr:
        """The node rebuilt from ``fn`` applied to every direct child."""
        kids = self.children()
        if not kids:
            return self
        new = tuple([fn(k) for k in kids])
        for a, b in zip(new, kids):
            if a is not b:
                return self.rebuild(new)
        return self

    def is_constant(self) -> bool:
        return isinstance(self, Const)

    def is_pure_affine(self) -> bool:
        """True when the expression has no floordiv, ceildiv, mod, min or max."""
        return all(isinstance(e, (Const, Dim, Sym, RtSym, Sum)) for e in self.walk())

    def variables(self) -> frozenset[tuple[VarKind, int]]:
        """The (kind, index) of every variable the expression uses."""
        try:
            return self._vars
        except AttributeError:  # not asked yet: computed once per node (nodes are immutable)
            pass
        found: set[tuple[VarKind, int]] = set()
        stack: list[AffineExpr] = [self]
        while stack:  # no recursion: as deep a tree as the rest of the library takes
            node = stack.pop()
            known = getattr(node, "_vars", None)
            if known is not None:
                found |= known
            elif isinstance(node, _Var):
                found.add((node.kind, node.index))
            else:
                stack.extend(node.children())
        out = frozenset(found)
        object.__setattr__(self, "_vars", out)
        return out

    def uses(self, kind: VarKind, index: int) -> bool:
        return (kind, index) in self.variables()

    # -- semantics --------------------------------------------------------
    def evaluate(
        self,
        dims: Sequence[int] = (),
        syms: Sequence[int] = (),
        rts: Sequence[int] = (),
    ) -> int:
        """The value at the given variable values (Python ints, exact)."""
        raise NotImplementedError

    def substitute(
        self,
        dims: Sequence[AffineExpr] | None = None,
        syms: Sequence[AffineExpr] | None = None,
        rts: Sequence[AffineExpr] | None = None,
    ) -> AffineExpr:
        """Replace every variable by an expression (``None`` keeps a kind as is)."""

        def go(e: AffineExpr) -> AffineExpr:
            if isinstance(e, _Var):
                table = {"d": dims, "s": syms, "rt": rts}[e.kind]
                if table is None:
                    return e
                if e.index >= len(table):
                    raise IndexError(f"no replacement for {e}")
                return table[e.index]
            return e.map_children(go)

        return go(self)

    def replace(self, mapping: Mapping[AffineExpr, AffineExpr]) -> AffineExpr:
        """Replace whole subexpressions (outermost match first)."""

        def go(e: AffineExpr) -> AffineExpr:
            hit = mapping.get(e)
            if hit is not None:
                return hit
            return e.map_children(go)

        return go(self)

    # -- operators ----------------------------------------------------------
    def __add__(self, other: ExprLike) -> AffineExpr:
        if type(other) is int:
            return _shifted(self, other)
        return _make_sum([(self, 1), (as_expr(other), 1)])

    def __radd__(self, other: ExprLike) -> AffineExpr:
        if type(other) is int:
            return _shifted(self, other)
        return _make_sum([(as_expr(other), 1), (self, 1)])

    def __sub__(self, other: ExprLike) -> AffineExpr:
        if type(other) is int:
            return _shifted(self, -other)
        return _make_sum([(self, 1), (as_expr(other), -1)])

    def __rsub__(self, other: ExprLike) -> AffineExpr:
        if type(other) is int:
            return _make_sum([(self, -1)], other)
        return _make_sum([(as_expr(other), 1), (self, -1)])

    def __neg__(self) -> AffineExpr:
        return _scaled(self, -1)

    def __pos__(self) -> AffineExpr:
        return self

    def __mul__(self, other: ExprLike) -> AffineExpr:
        if type(other) is int:
            return _scaled(self, other)
        return _mul(self, as_expr(other))

    def __rmul__(self, other: ExprLike) -> AffineExpr:
        if type(other) is int:
            return _scaled(self, other)
        return _mul(as_expr(other), self)

    def __floordiv__(self, other: ExprLike) -> AffineExpr:
        return self.floordiv(other)

    def __mod__(self, other: ExprLike) -> AffineExpr:
        return self.mod(other)

    def floordiv(self, divisor: ExprLike) -> AffineExpr:
        """``self floordiv divisor`` (divisor a nonzero constant)."""
        return _make_div(FloorDiv, self, divisor)

    def ceildiv(self, divisor: ExprLike) -> AffineExpr:
        """``self ceildiv divisor`` (divisor a nonzero constant)."""
        return _make_div(CeilDiv, self, divisor)

    def mod(self, divisor: ExprLike) -> AffineExpr:
        """``self mod divisor`` (divisor a nonzero constant)."""
        return _make_div(Mod, self, divisor)


class Const(AffineExpr):
    """An integer constant."""

    __slots__ = ("value",)
    value: int

    def __init__(self, value: int) -> None:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"constant must be an int, got {value!r}")
        object.__setattr__(self, "value", value)
        self._init_key((_RANK_CONST, value))

    def __reduce__(self) -> tuple[object, ...]:
        return (Const, (self.value,))

    def evaluate(self, dims: Sequence[int] = (), syms: Sequence[int] = (), rts: Sequence[int] = ()) -> int:
        return self.value


class _Var(AffineExpr):
    __slots__ = ("index",)
    kind: VarKind
    index: int

    def __init__(self, index: int) -> None:
        if isinstance(index, bool) or not isinstance(index, int) or index < 0:
            raise TypeError(f"variable index must be a nonnegative int, got {index!r}")
        object.__setattr__(self, "index", index)
        self._init_key((_RANK_VAR, _KIND_RANK[self.kind], index))

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.index,))


class Dim(_Var):
    """Dimension variable ``d<index>``."""

    __slots__ = ()
    kind: VarKind = "d"

    def evaluate(self, dims: Sequence[int] = (), syms: Sequence[int] = (), rts: Sequence[int] = ()) -> int:
        return dims[self.index]


class Sym(_Var):
    """Range variable ``s<index>``."""

    __slots__ = ()
    kind: VarKind = "s"

    def evaluate(self, dims: Sequence[int] = (), syms: Sequence[int] = (), rts: Sequence[int] = ()) -> int:
        return syms[self.index]


class RtSym(_Var):
    """Runtime variable ``rt<index>``."""

    __slots__ = ()
    kind: VarKind = "rt"

    def evaluate(self, dims: Sequence[int] = (), syms: Sequence[int] = (), rts: Sequence[int] = ()) -> int:
        return rts[self.index]


class Sum(AffineExpr):
    """A canonical linear combination ``c1*t1 + ... + cn*tn + constant``.

    ``terms`` are non-constant, non-sum expressions with nonzero coefficients,
    sorted by :attr:`AffineExpr.sort_key`, each term at most once. A sum is never
    a single term with coefficient 1 and constant 0 (that is the term itself).
    """

    __slots__ = ("constant", "terms")
    terms: tuple[tuple[AffineExpr, int], ...]
    constant: int

    def __init__(self, terms: tuple[tuple[AffineExpr, int], ...], constant: int) -> None:
        object.__setattr__(self, "terms", terms)
        object.__setattr__(self, "constant", constant)
        self._init_key((_RANK_SUM, tuple([(t._key, c) for t, c in terms]), constant))

    def children(self) -> tuple[AffineExpr, ...]:
        return tuple([t for t, _ in self.terms])

    def rebuild(self, children: Sequence[AffineExpr]) -> AffineExpr:
        return _make_sum([(k, c) for k, (_, c) in zip(children, self.terms)], self.constant)

    def evaluate(self, dims: Sequence[int] = (), syms: Sequence[int] = (), rts: Sequence[int] = ()) -> int:
        total = self.constant
        for t, c in self.terms:
            total += c * t.evaluate(dims, syms, rts)
        return total

    def __reduce__(self) -> tuple[object, ...]:
        return (Sum, (self.terms, self.constant))


class _BinaryDiv(AffineExpr):
    __slots__ = ("divisor", "lhs")
    lhs: AffineExpr
    divisor: int
    _rank: int = 0
    op_name: str = ""

    def __init__(self, lhs: AffineExpr, divisor: int) -> None:
        object.__setattr__(self, "lhs", lhs)
        object.__setattr__(self, "divisor", divisor)
        self._init_key((self._rank, lhs._key, divisor))

    def children(self) -> tuple[AffineExpr, ...]:
        return (self.lhs,)

    def rebuild(self, children: Sequence[AffineExpr]) -> AffineExpr:
        (lhs,) = children
        return _make_div(type(self), lhs, self.divisor)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.lhs, self.divisor))


class FloorDiv(_BinaryDiv):
    """``lhs floordiv divisor``: rounds toward negative infinity."""

    __slots__ = ()
    _rank = _RANK_FLOORDIV
    op_name = "floordiv"

    def evaluate(self, dims: Sequence[int] = (), syms: Sequence[int] = (), rts: Sequence[int] = ()) -> int:
        return floor_div(self.lhs.evaluate(dims, syms, rts), self.divisor)


class CeilDiv(_BinaryDiv):
    """``lhs ceildiv divisor`` = ``-((-lhs) floordiv divisor)``."""

    __slots__ = ()
    _rank = _RANK_CEILDIV
    op_name = "ceildiv"

    def evaluate(self, dims: Sequence[int] = (), syms: Sequence[int] = (), rts: Sequence[int] = ()) -> int:
        return ceil_div(self.lhs.evaluate(dims, syms, rts), self.divisor)


class Mod(_BinaryDiv):
    """``lhs mod divisor`` = ``lhs - divisor * (lhs floordiv divisor)``."""

    __slots__ = ()
    _rank = _RANK_MOD
    op_name = "mod"

    def evaluate(self, dims: Sequence[int] = (), syms: Sequence[int] = (), rts: Sequence[int] = ()) -> int:
        return floor_mod(self.lhs.evaluate(dims, syms, rts), self.divisor)


class _MinMax(AffineExpr):
    __slots__ = ("lhs", "rhs")
    lhs: AffineExpr
    rhs: AffineExpr
    _rank: int = 0
    op_name: str = ""

    def __init__(self, lhs: AffineExpr, rhs: AffineExpr) -> None:
        object.__setattr__(self, "lhs", lhs)
        object.__setattr__(self, "rhs", rhs)
        self._init_key((self._rank, lhs._key, rhs._key))

    def children(self) -> tuple[AffineExpr, ...]:
        return (self.lhs, self.rhs)

    def rebuild(self, children: Sequence[AffineExpr]) -> AffineExpr:
        a, b = children
        return _make_minmax(type(self), a, b)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.lhs, self.rhs))


class Min(_MinMax):
    """``min(lhs, rhs)``."""

    __slots__ = ()
    _rank = _RANK_MIN
    op_name = "min"

    def evaluate(self, dims: Sequence[int] = (), syms: Sequence[int] = (), rts: Sequence[int] = ()) -> int:
        return min(self.lhs.evaluate(dims, syms, rts), self.rhs.evaluate(dims, syms, rts))


class Max(_MinMax):
    """``max(lhs, rhs)``."""

    __slots__ = ()
    _rank = _RANK_MAX
    op_name = "max"

    def evaluate(self, dims: Sequence[int] = (), syms: Sequence[int] = (), rts: Sequence[int] = ()) -> int:
        return max(self.lhs.evaluate(dims, syms, rts), self.rhs.evaluate(dims, syms, rts))


# ---------------------------------------------------------------------------
# Construction with always-true folding
# ---------------------------------------------------------------------------


def as_expr(value: ExprLike) -> AffineExpr:
    """An expression from an expression or a Python int."""
    if isinstance(value, AffineExpr):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"expected an AffineExpr or int, got {value!r}")
    return Const(value)


def const(value: int) -> AffineExpr:
    """The constant ``value``."""
    return Const(value)


def dim(index: int) -> AffineExpr:
    """Dimension variable ``d<index>``."""
    return Dim(index)


def sym(index: int) -> AffineExpr:
    """Range variable ``s<index>``."""
    return Sym(index)


def rt(index: int) -> AffineExpr:
    """Runtime variable ``rt<index>``."""
    return RtSym(index)


def linear_sum(pairs: Iterable[tuple[ExprLike, int]], constant: int = 0) -> AffineExpr:
    """``sum(c * e for e, c in pairs) + constant``, built in one step (the same value as
    adding the scaled terms one by one, without the intermediate sums)."""
    return _make_sum([(as_expr(e), c) for e, c in pairs], constant)


def _term_key(tc: tuple[AffineExpr, int]) -> tuple[object, ...]:
    return tc[0]._key


def _make_sum(pairs: Sequence[tuple[AffineExpr, int]], constant: int = 0) -> AffineExpr:
    """The canonical form of ``sum(c * e for e, c in pairs) + constant``: nested sums flattened,
    like terms merged, zero terms dropped, terms sorted; a single unscaled term is itself."""
    coeffs: dict[AffineExpr, int] = {}
    get = coeffs.get
    for e, c in pairs:
        if c == 0:
            continue
        t = type(e)
        if t is Const:
            constant += c * e.value  # type: ignore[attr-defined]
        elif t is Sum:
            constant += c * e.constant  # type: ignore[attr-defined]
            for u, uc in e.terms:  # type: ignore[attr-defined]
                coeffs[u] = get(u, 0) + c * uc
        else:
            coeffs[e] = get(e, 0) + c
    # (sorted by the terms' keys, which differ for distinct terms: the tuples never compare the terms)
    keyed = sorted([(t._key, t, c) for t, c in coeffs.items() if c != 0])
    if not keyed:
        return Const(constant)
    if len(keyed) == 1 and keyed[0][2] == 1 and constant == 0:
        return keyed[0][1]
    return _new_sum(tuple([(t, c) for _, t, c in keyed]), constant, tuple([(k, c) for k, _, c in keyed]))


_new = object.__new__
_set = object.__setattr__


def _scaled(e: AffineExpr, k: int) -> AffineExpr:
    """``e * k`` for an int ``k``: the canonical sum :func:`_make_sum` gives for ``[(e, k)]`` (equal to it),
    built without merging or sorting (scaling keeps a sum's terms and their order)."""
    t = type(e)
    if t is Const:
        return Const(k * e.value)  # type: ignore[attr-defined]
    if k == 0:
        return Const(0)
    if t is Sum:
        if k == 1:
            return e
        terms = e.terms  # type: ignore[attr-defined]
        constant = e.constant * k  # type: ignore[attr-defined]
        if len(terms) == 1 and terms[0][1] * k == 1 and constant == 0:
            return terms[0][0]  # type: ignore[no-any-return]
        return _new_sum(tuple([(u, c * k) for u, c in terms]), constant,
                        tuple([(uk, c * k) for uk, c in e._key[1]]))  # type: ignore[attr-defined]
    if k == 1:
        return e
    return _new_sum(((e, k),), 0, ((e._key, k),))


def _shifted(e: AffineExpr, k: int) -> AffineExpr:
    """``e + k`` for an int ``k``: the canonical sum :func:`_make_sum` gives for ``[(e, 1)], k``."""
    t = type(e)
    if t is Const:
        return Const(e.value + k)  # type: ignore[attr-defined]
    if k == 0:
        return e
    if t is Sum:
        terms = e.terms  # type: ignore[attr-defined]
        constant = e.constant + k  # type: ignore[attr-defined]
        if len(terms) == 1 and terms[0][1] == 1 and constant == 0:
            return terms[0][0]  # type: ignore[no-any-return]
        return _new_sum(terms, constant, e._key[1])  # type: ignore[arg-type]
    return _new_sum(((e, 1),), k, ((e._key, 1),))


def _new_sum(terms: tuple[tuple[AffineExpr, int], ...], constant: int,
             keyed: tuple[tuple[tuple[object, ...], int], ...]) -> Sum:
    """``Sum(terms, constant)`` with the terms' keys given (``keyed``: each term's key with its
    coefficient, in order): the same node, its key not rebuilt."""
    out = _new(Sum)
    _set(out, "terms", terms)
    _set(out, "constant", constant)
    key = (_RANK_SUM, keyed, constant)
    _set(out, "_key", key)
    _set(out, "_hash", hash(key))
    return out


def _mul(a: AffineExpr, b: AffineExpr) -> AffineExpr:
    if isinstance(b, Const):
        return _make_sum([(a, b.value)])
    if isinstance(a, Const):
        return _make_sum([(b, a.value)])
    raise SemiAffineError(f"semi-affine product: ({a}) * ({b}); one side must be a constant")


def _make_div(cls: type[_BinaryDiv], lhs: AffineExpr, divisor: ExprLike) -> AffineExpr:
    if type(divisor) is int:
        c = divisor
    else:
        d = as_expr(divisor)
        if not isinstance(d, Const):
            raise SemiAffineError(f"semi-affine {cls.op_name}: divisor {d} is not a constant")
        c = d.value
    if c == 0:
        raise ZeroDivisorError(f"{cls.op_name} by zero in ({lhs}) {cls.op_name} 0")
    if isinstance(lhs, Const):
        fn = {FloorDiv: floor_div, CeilDiv: ceil_div, Mod: floor_mod}[cls]
        return Const(fn(lhs.value, c))
    if cls is Mod:
        if c in (1, -1):
            return Const(0)
        return Mod(lhs, c)
    if c == 1:
        return lhs
    if c == -1:
        return -lhs
    return cls(lhs, c)


def _make_minmax(cls: type[_MinMax], a: AffineExpr, b: AffineExpr) -> AffineExpr:
    if isinstance(a, Const) and isinstance(b, Const):
        return Const(min(a.value, b.value) if cls is Min else max(a.value, b.value))
    if a == b:
        return a
    if b._key < a._key:
        a, b = b, a
    return cls(a, b)


def emin(a: ExprLike, b: ExprLike) -> AffineExpr:
    """``min(a, b)``."""
    return _make_minmax(Min, as_expr(a), as_expr(b))


def emax(a: ExprLike, b: ExprLike) -> AffineExpr:
    """``max(a, b)``."""
    return _make_minmax(Max, as_expr(a), as_expr(b))
