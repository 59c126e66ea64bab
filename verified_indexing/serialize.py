"""JSON descriptions of expressions and maps, and conversions between map kinds."""

from __future__ import annotations

from typing import Any

from verified_indexing.affine_map import AffineMap
from verified_indexing.errors import MapError
from verified_indexing.expr import Sym
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.syntax.printer import format_affine_map, format_expr

__all__ = ["map_to_json", "affine_map_to_json", "indexing_map_to_affine_map", "to_json_text"]


def map_to_json(m: IndexingMap) -> dict[str, Any]:
    """A JSON-ready description of an indexing map (text, variables, results, constraints)."""
    names = m.var_name
    return {
        "kind": "indexing_map",
        "state": m.state,
        "text": m.format(one_line=True),
        "dims": [{"name": names("d", i), "lo": v.bounds.lo, "hi": v.bounds.hi} for i, v in enumerate(m.dims)],
        "range_vars": [
            {"name": names("s", i), "lo": v.bounds.lo, "hi": v.bounds.hi} for i, v in enumerate(m.range_vars)
        ],
        "rt_vars": [{"name": names("rt", i), "lo": v.bounds.lo, "hi": v.bounds.hi} for i, v in enumerate(m.rt_vars)],
        "results": [format_expr(r, names) for r in m.results],
        "constraints": [{"expr": format_expr(e, names), "lo": iv.lo, "hi": iv.hi} for e, iv in m.constraints],
    }


def affine_map_to_json(m: AffineMap) -> dict[str, Any]:
    return {
        "kind": "affine_map",
        "text": format_affine_map(m.num_dims, m.num_symbols, m.results),
        "num_dims": m.num_dims,
        "num_symbols": m.num_symbols,
        "results": [format_expr(r) for r in m.results],
    }


def indexing_map_to_affine_map(m: IndexingMap) -> AffineMap:
    """The map's function as MLIR sees it: symbols are the range variables then
    the runtime variables (XLA's convention); bounds and constraints are dropped."""
    if m.state != "ok":
        raise MapError(f"a {m.state.replace('_', ' ')} map has no affine map")
    shift = [Sym(m.num_range_vars + i) for i in range(m.num_rt_vars)]
    return AffineMap(m.num_dims, m.num_range_vars + m.num_rt_vars, [r.substitute(rts=shift) for r in m.results])


def to_json_text(result: Any, command: str, *, no_timing: bool = False) -> str:
    """The JSON text the command line prints for ``result`` under ``verified-indexing COMMAND --json``: the
    same envelope (``"schema"`` and ``"command"`` first, ``""`` written as ``null``, non-finite numbers as
    text), the same indentation, and with ``no_timing`` the run-dependent fields left out, so Python and
    the command line write the same bytes. ``result``: an object with ``to_json()`` (a Verdict, a
    SimplifyReport...) or a JSON-ready value (``map_to_json(m)``, ``results_to_json(...)``)."""
    import json

    from verified_indexing.cli._common import envelope

    data = result.to_json() if hasattr(result, "to_json") else result
    return json.dumps(envelope(data, command=command, no_timing=no_timing), indent=2) + "\n"
