"""One serializer for JSON: what ``verified-indexing COMMAND --json`` prints, from Python's results.

:func:`to_json_text` gives, for a result of the library, the bytes the command line prints for it (the
command line prints every JSON object through :func:`json_text`); the ``*_json`` functions build the
objects the command line builds from a result and its options. Also: JSON descriptions of maps, and the
conversion of an indexing map to an MLIR affine map. The types of these objects, and the JSON Schema
generated from them, are in :mod:`verified_indexing.schema`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from verified_indexing.affine_map import AffineMap
from verified_indexing.errors import MapError, VerifiedIndexingError
from verified_indexing.expr import Sym
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.syntax.printer import format_affine_map, format_expr

__all__ = [
    "map_to_json",
    "affine_map_to_json",
    "indexing_map_to_affine_map",
    "to_json_text",
    "to_json_data",
    "json_value",
    "json_text",
    "command_of",
    "analyze_json",
    "tile_json",
    "coalescing_json",
    "verify_cache_json",
    "inline_all_json",
    "invert_json",
    "invert_mlir",
    "verdict_json",
]


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
    """A JSON-ready description of an MLIR affine map (text, dims, symbols, results)."""
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


# ---------------------------------------------------------------------------------------------------------------
# One serializer: the JSON the command line prints, from Python's results


_COMMAND_OF_TYPE = {
    "IndexingMap": "show",
    "AffineMap": "show",
    "SimplifyReport": "simplify",
    "ComputationIndexing": "analyze",
    "AuditResult": "audit",
    "KernelResult": "audit-kernels",
    "CacheCheck": "verify-cache",
    "FusionReport": "fuse",
    "InlineReport": "inline",
    "EpilogueReport": "fuse-epilogue",
    "InverseResult": "invert",
    "OperandUtilization": "utilization",
    "TileRead": "tile",
    "CoalescingResult": "coalescing",
    "MlirValidation": "validate-mlir",
    "StepValidation": "validate-tvm",
}
"""The command whose JSON a result type is (a Verdict is check-rule's or prove-equal's: give the command;
reverse-inline's report is an InlineReport: give ``"reverse-inline"``)."""

_LISTED = {"audit": "results", "audit-kernels": "kernels", "utilization": "operands"}
"""Commands whose result is a list, printed under one key."""


_WRAPPERS = {"Analysis": "analyze", "Fusions": "fuse", "AuditReport": "audit"}
"""The library's result sequences (``analyze()``, ``fuse()``, ``audit()``): their own ``to_json()`` is the JSON."""


def command_of(result: Any) -> str:
    """The command whose ``--json`` output ``result`` (an object, or a list of them) is, from its type."""
    first = result[0] if isinstance(result, (list, tuple)) and result else result
    if isinstance(result, (list, tuple)) and not result:
        raise ValueError("an empty list: give the command (to_json_text(result, 'analyze'))")
    name = type(first).__name__
    if not isinstance(result, (list, tuple)) and name in _WRAPPERS:
        return _WRAPPERS[name]
    if name == "Verdict":
        raise ValueError("a Verdict is the JSON of check-rule and of prove-equal: give the command")
    command = _COMMAND_OF_TYPE.get(name)
    if command is None:
        raise ValueError(f"no command prints a {name} as JSON")
    return command


def analyze_json(results: Sequence[Any], seconds: float = 0.0, not_reached: Sequence[str] = ()) -> dict[str, Any]:
    """``analyze --json``: every computation's indexing and the summary (``not_reached``: what the budget left
    unfinished, only when there is some)."""
    from verified_indexing.hlo.report import results_to_json

    data = results_to_json(list(results), seconds)
    if not_reached:
        data["not_reached"] = list(not_reached)
    return data


def tile_json(reads: Sequence[Any], offsets: Sequence[int], sizes: Sequence[int],
              strides: Sequence[int] | None = None) -> dict[str, Any]:
    """``tile --json``: the tile asked for and each operand's read box."""
    return {"tile": {"offsets": _plain(offsets), "sizes": _plain(sizes), "strides": _plain(strides)},
            "operands": [r.to_json() for r in reads]}


def coalescing_json(results: Sequence[Any], vector_size: int = 1, warp_size: int = 32) -> dict[str, Any]:
    """``coalescing --json``: the parameters and each operand's verdict."""
    return {"vector_size": vector_size, "warp_size": warp_size, "operands": [r.to_json() for r in results]}


def verify_cache_json(cache_path: Any, checks: Sequence[Any]) -> dict[str, Any]:
    """``verify-cache --json``: the cache, the tally of outcomes and each row re-checked."""
    from collections import Counter

    return {"cache": str(cache_path), "tally": dict(Counter(c.outcome for c in checks)),
            "rows": [c.to_json() for c in checks]}


def inline_all_json(final: Any, reports: Sequence[Any]) -> dict[str, Any]:
    """``inline --all --json``: the blocks inlined, the condition, each step and the final program."""
    from verified_indexing.legality.cinn_ir import format_program

    inlined = [r.block for r in reports if r.status == "inlined"]
    when = list(dict.fromkeys(r.when for r in reports if r.status == "inlined" and r.when))
    return {"inlined": inlined, "legal_when": " and ".join(when) or None, "steps": [r.to_json() for r in reports],
            "program": format_program(final)}


def invert_mlir(m: IndexingMap | AffineMap) -> dict[str, Any] | None:
    """MLIR's view of a map's inverse (``isPermutation``, ``inversePermutation``), None when MLIR has none
    (symbols, runtime variables, a map that is not ok)."""
    from verified_indexing.legality.permutation import inverse_permutation, is_permutation

    am: AffineMap | None
    if isinstance(m, AffineMap):
        am = m
    else:
        try:
            am = indexing_map_to_affine_map(m) if m.state == "ok" and not m.num_rt_vars else None
        except VerifiedIndexingError:  # not expressible as an affine map
            am = None
    if am is None or am.num_symbols:
        return None
    inv = inverse_permutation(am)
    return {"is_permutation": is_permutation(am), "inverse_permutation": str(inv) if inv else None}


def invert_json(m: IndexingMap | AffineMap, result: Any = None) -> dict[str, Any]:
    """``invert --json``: the inverse ``result`` of ``m`` (:func:`verified_indexing.legality.inverse`) and
    MLIR's view; an MLIR affine map has only MLIR's view (``result`` None)."""
    if result is None:
        return {"map": str(m), "mlir": invert_mlir(m)}
    return {**result.to_json(), "mlir": invert_mlir(m)}


def verdict_json(verdict: Any, runtime_variables: Sequence[tuple[str, Any]] = ()) -> dict[str, Any]:
    """``check-rule --json`` / ``prove-equal --json``: the verdict (with prove-equal's verdicts on the
    runtime variables' bindings, when there are some)."""
    data: dict[str, Any] = verdict.to_json()
    if runtime_variables:
        data["runtime_variables"] = [{"binding": t, "verdict": v.to_json()} for t, v in runtime_variables]
    return data


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


def json_value(result: Any, command: str | None = None, **context: Any) -> dict[str, Any]:
    """The fields ``verified-indexing COMMAND --json`` prints for ``result`` (after ``schema`` and
    ``command``). ``result``: a result object or a list of them (see :func:`command_of`), or a dict already
    built (by ``analyze_json``, ``tile_json``...). ``context``: what the command line adds from its options:
    ``seconds`` and ``not_reached`` (analyze), ``offsets``/``sizes``/``strides`` (tile), ``vector_size``/
    ``warp_size`` (coalescing), ``cache_path`` (verify-cache), ``runtime_variables`` (prove-equal), ``note``
    (fuse with no pair), ``map`` (invert: the map inverted)."""
    if isinstance(result, dict):
        return result
    if type(result).__name__ in _WRAPPERS:
        wrapped: dict[str, Any] = result.to_json()
        return wrapped
    command = command or command_of(result)
    items = list(result) if isinstance(result, (list, tuple)) else None
    if command == "show":
        return affine_map_to_json(result) if isinstance(result, AffineMap) else map_to_json(result)
    if command == "analyze":
        return analyze_json(items if items is not None else [result], context.get("seconds", 0.0),
                            context.get("not_reached", ()))
    if command in _LISTED:
        return {_LISTED[command]: [r.to_json() for r in (items if items is not None else [result])]}
    if command == "tile":
        return tile_json(items if items is not None else [result], context["offsets"], context["sizes"],
                         context.get("strides"))
    if command == "coalescing":
        return coalescing_json(items if items is not None else [result], context.get("vector_size", 1),
                               context.get("warp_size", 32))
    if command == "verify-cache":
        return verify_cache_json(context["cache_path"], items if items is not None else [result])
    if command in ("check-rule", "prove-equal"):
        return verdict_json(result, context.get("runtime_variables", ()))
    if command == "invert":
        m = context.get("map")
        return result.to_json() if m is None else invert_json(m, result)
    if command == "fuse" and items is not None:
        if not items:
            return {"results": [], "note": context.get("note", "")}
        return items[0].to_json() if len(items) == 1 else {"results": [r.to_json() for r in items]}
    if command == "inline" and isinstance(result, tuple) and len(result) == 2:
        return inline_all_json(*result)  # inline_all's (final program, reports)
    data: dict[str, Any] = result.to_json()
    return data


def json_text(value: Any, command: str | None, *, no_timing: bool | None = None) -> str:
    """The bytes printed for a command's JSON object ``value``: the envelope (``"schema"`` and ``"command"``
    first, ``""`` written as ``null``, non-finite numbers as text; with ``no_timing`` the run-dependent fields
    left out) indented by 2, and a final newline. The command line prints every JSON object through this."""
    import json

    from verified_indexing.cli._common import envelope

    return json.dumps(envelope(value, command=command, no_timing=no_timing), indent=2) + "\n"


def to_json_data(result: Any, command: str | None = None, *, no_timing: bool = False, **context: Any) -> dict[str, Any]:
    """What ``verified-indexing COMMAND --json`` prints for ``result``, as Python values (``json.loads`` of
    :func:`to_json_text` without ``schema`` and ``command``): an absent value is None (the command's
    ``null``; a result's own ``to_json()`` may hold ``""``), a non-finite number its text."""
    from verified_indexing.cli._common import envelope

    command = command or command_of(result)
    data = envelope(json_value(result, command, **context), command=command, no_timing=no_timing)
    del data["schema"], data["command"]
    return data


def to_json_text(result: Any, command: str | None = None, *, no_timing: bool = False, **context: Any) -> str:
    """The JSON text ``verified-indexing COMMAND --json`` prints for ``result`` (see :func:`json_value`;
    the command is found from the result's type when not given), byte for byte: with ``no_timing`` as under
    ``--no-timing``. For example ``to_json_text(simplify_with_report(m), no_timing=True)`` is what
    ``verified-indexing simplify -e TEXT --json --no-timing`` prints."""
    command = command or command_of(result)
    return json_text(json_value(result, command, **context), command, no_timing=no_timing)
