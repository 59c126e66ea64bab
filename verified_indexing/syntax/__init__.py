"""Text syntax: XLA indexing maps, MLIR affine maps, expressions (parse and print)."""

from verified_indexing.syntax.parser import (
    parse_affine_map,
    parse_domain,
    parse_expr,
    parse_indexing_map,
    parse_map,
)
from verified_indexing.syntax.printer import format_affine_map, format_expr, format_indexing_map

__all__ = [
    "format_affine_map",
    "format_expr",
    "format_indexing_map",
    "parse_affine_map",
    "parse_domain",
    "parse_expr",
    "parse_indexing_map",
    "parse_map",
]
