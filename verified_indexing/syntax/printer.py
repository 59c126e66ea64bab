"""Printing expressions and maps in XLA's and MLIR's text syntax.

Promises: the output parses back (with :mod:`verified_indexing.syntax.parser`)
to an equal value; equal values print identically; the layout of indexing maps
is the spec document's (``(d0, d1)[s0]{rt0} -> (...)``, ``domain:``, one
``name in [lo, hi]`` per line, variables then constraints in canonical order).
"""

from __future__ import annotations

from collections.abc import Callable

from verified_indexing.expr import AffineExpr, Const, Sum, VarKind, _BinaryDiv, _MinMax, _Var

__all__ = ["Namer", "default_name", "format_affine_map", "format_expr", "format_indexing_map", "positive_divisors"]

Namer = Callable[[VarKind, int], str]


def default_name(kind: VarKind, index: int) -> str:
    """The positional name: ``d3``, ``s0``, ``rt1``."""
    return f"{kind}{index}"


def format_expr(expr: AffineExpr, names: Namer = default_name) -> str:
    """The expression in MLIR/XLA syntax, parenthesized only where needed."""
    return _fmt(expr, names, strong=False)


def _is_atomic(e: AffineExpr) -> bool:
    return isinstance(e, (Const, _Var, _MinMax))


def _fmt(e: AffineExpr, names: Namer, strong: bool) -> str:
    if isinstance(e, Const):
        return str(e.value)
    if isinstance(e, _Var):
        return names(e.kind, e.index)
    if isinstance(e, _MinMax):
        return f"{e.op_name}({_fmt(e.lhs, names, False)}, {_fmt(e.rhs, names, False)})"
    if isinstance(e, _BinaryDiv):
        text = f"{_fmt(e.lhs, names, True)} {e.op_name} {e.divisor}"
        return f"({text})" if strong else text
    if isinstance(e, Sum):
        text = _fmt_sum(e, names)
        return f"({text})" if strong else text
    raise TypeError(f"unknown expression node {type(e).__name__}")


def _fmt_term(t: AffineExpr, c: int, names: Namer, first: bool) -> str:
    """One term ``c * t`` of a sum; the sign is handled by the caller for
    non-first terms (``c`` is then positive)."""
    if c == 1:
        return _fmt(t, names, strong=False)
    if c == -1:
        return "-" + _fmt(t, names, strong=not _is_atomic(t))
    return f"{_fmt(t, names, strong=not _is_atomic(t))} * {c}"


def _fmt_sum(e: Sum, names: Namer) -> str:
    parts: list[str] = []
    for i, (t, c) in enumerate(e.terms):
        if i == 0:
            parts.append(_fmt_term(t, c, names, first=True))
        elif c > 0:
            parts.append(" + " + _fmt_term(t, c, names, first=False))
        else:
            parts.append(" - " + _fmt_term(t, -c, names, first=False))
    k = e.constant
    if k > 0:
        parts.append(f" + {k}")
    elif k < 0:
        parts.append(f" - {-k}")
    # A lone single term with a coefficient, e.g. "d0 * 2", prints as is.
    return "".join(parts)


def format_indexing_map(m: object, one_line: bool = False) -> str:
    """An :class:`~verified_indexing.IndexingMap` in the spec's layout.

    ``one_line=True`` gives XLA's dump form ``(d0) -> (d0), domain: d0 in [0, 9]``.
    """
    from verified_indexing.indexing_map import IndexingMap

    assert isinstance(m, IndexingMap)
    if m.is_known_empty:
        return "KNOWN EMPTY"
    if m.is_undefined:
        return "UNDEFINED"
    names: Namer = m.var_name
    header = "(" + ", ".join(names("d", i) for i in range(m.num_dims)) + ")"
    if m.num_range_vars:
        header += "[" + ", ".join(names("s", i) for i in range(m.num_range_vars)) + "]"
    if m.num_rt_vars:
        header += "{" + ", ".join(names("rt", i) for i in range(m.num_rt_vars)) + "}"
    header += " -> (" + ", ".join(format_expr(r, names) for r in m.results) + ")"
    lines = [f"{names(kind, i)} in {v.bounds}" for kind, i, v in m.variables()]
    # Constraints sorted by their text, as XLA's printer does.
    lines += sorted(f"{format_expr(e, names)} in {iv}" for e, iv in m.constraints)
    if not lines:
        return header
    if one_line:
        return header + ", domain: " + ", ".join(lines)
    return header + ",\ndomain:\n" + ",\n".join(lines)


def positive_divisors(expr: AffineExpr) -> AffineExpr:
    """The same function with every divisor positive, as MLIR requires of
    ``floordiv``/``ceildiv``/``mod``: ``x floordiv -c = (-x) floordiv c``,
    ``x ceildiv -c = (-x) ceildiv c``, ``x mod -c = -((-x) mod c)`` (floor semantics)."""

    def go(e: AffineExpr) -> AffineExpr:
        e = e.map_children(go)
        if isinstance(e, _BinaryDiv) and e.divisor < 0:
            c = -e.divisor
            if e.op_name == "floordiv":
                return (-e.lhs).floordiv(c)
            if e.op_name == "ceildiv":
                return (-e.lhs).ceildiv(c)
            return -((-e.lhs).mod(c))
        return e

    return go(expr)


def format_affine_map(num_dims: int, num_symbols: int, results: tuple[AffineExpr, ...], wrap: bool = True) -> str:
    """An MLIR affine map: ``affine_map<(d0, d1)[s0] -> (d0 + s0)>`` (divisors made
    positive, as MLIR requires; see :func:`positive_divisors`)."""
    text = "(" + ", ".join(f"d{i}" for i in range(num_dims)) + ")"
    if num_symbols:
        text += "[" + ", ".join(f"s{i}" for i in range(num_symbols)) + "]"
    text += " -> (" + ", ".join(format_expr(positive_divisors(r)) for r in results) + ")"
    return f"affine_map<{text}>" if wrap else text
