"""verified_indexing: indexing maps for tensor compilers, computed, simplified and proven.

The public API. Everything else is private to the package.
"""

from verified_indexing.affine_map import AffineMap
from verified_indexing.errors import (
    MapError,
    ParseError,
    SemiAffineError,
    UnsupportedError,
    VerifiedIndexingError,
    ZeroDivisorError,
)
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
    ceil_div,
    const,
    dim,
    emax,
    emin,
    floor_div,
    floor_mod,
    rt,
    sym,
)
from verified_indexing.indexing_map import IndexingMap, Variable, compose
from verified_indexing.interval import Interval, range_of
from verified_indexing.syntax import (
    format_affine_map,
    format_expr,
    format_indexing_map,
    parse_affine_map,
    parse_domain,
    parse_expr,
    parse_indexing_map,
    parse_map,
)

__version__ = "0.1.0"

__all__ = [
    "AffineExpr",
    "AffineMap",
    "CeilDiv",
    "Const",
    "Dim",
    "FloorDiv",
    "IndexingMap",
    "Interval",
    "MapError",
    "Max",
    "Min",
    "Mod",
    "ParseError",
    "RtSym",
    "SemiAffineError",
    "Sum",
    "Sym",
    "UnsupportedError",
    "Variable",
    "VerifiedIndexingError",
    "ZeroDivisorError",
    "ceil_div",
    "compose",
    "const",
    "dim",
    "emax",
    "emin",
    "floor_div",
    "floor_mod",
    "format_affine_map",
    "format_expr",
    "format_indexing_map",
    "parse_affine_map",
    "parse_domain",
    "parse_expr",
    "parse_indexing_map",
    "parse_map",
    "range_of",
    "rt",
    "sym",
]
