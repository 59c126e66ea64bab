"""Text and JSON reports of the HLO analysis, and the demo over bundled dumps.

The text layout (one block per analyzed computation, one per target, each map in
the spec's text format followed by the origins of its runtime variables and its
proof) is what ``verified-indexing analyze`` prints; see docs/hlo.md.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verified_indexing._timing import show_timing
from verified_indexing.hlo.fusion import ComputationIndexing, analyze_module
from verified_indexing.hlo.ir import Computation, Module
from verified_indexing.hlo.loader import UNOPTIMIZED_NOTE, is_stablehlo, split_modules, stablehlo_to_hlo
from verified_indexing.hlo.parser import parse_hlo_snippet, parse_module, parse_modules
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.syntax import format_expr

__all__ = [
    "load_hlo",
    "load_hlo_modules",
    "format_result",
    "format_results",
    "summary",
    "summary_line",
    "results_to_json",
    "demo_hlo",
]

_MODULE_START = re.compile(r"\s*(//[^\n]*\n\s*)*(HloModule\b|(ENTRY\s+)?%?[A-Za-z_][\w.\-]*\s*[({])")


def load_hlo_modules(text: str, source: str = "<input>", notes: list[str] | None = None) -> list[Module]:
    """Like :func:`load_hlo`, for every module of the text (lit-test files split
    by ``// -----`` hold several). StableHLO/MHLO text is converted to HLO by
    jaxlib when jax is installed (:func:`~verified_indexing.hlo.loader.stablehlo_to_hlo`);
    the module is then the unoptimized one, and a note saying so is appended to
    ``notes``."""
    if is_stablehlo(text):
        text = stablehlo_to_hlo(text, source)
        if notes is not None:
            notes.append(f"{source}: {UNOPTIMIZED_NOTE}")
        source = f"{source} (converted from StableHLO)"
        return [parse_module(text, source)]
    if _MODULE_START.match(text) and len(split_modules(text)) > 1:
        return parse_modules(text, source)
    return [load_hlo(text, source)]


def load_hlo(text: str, source: str = "<input>") -> Module:
    """A module from HLO text: a whole module, computations (``f { ... }``), or
    bare instruction lines (then one computation named ``snippet``)."""
    if _MODULE_START.match(text):
        return parse_module(text, source)
    comp: Computation = parse_hlo_snippet(text, source)
    return Module("snippet", {comp.name: comp}, comp.name, {}, text)


def _origin_lines(m: IndexingMap) -> list[str]:
    lines = []
    for k, v in enumerate(m.rt_vars):
        origin = v.origin
        om = getattr(origin, "map", None)
        name = getattr(origin, "operand_name", None)
        if isinstance(om, IndexingMap) and isinstance(name, str):
            index = ", ".join(format_expr(r, m.var_name) for r in om.results)
            via = getattr(origin, "via", ())
            note = f" (via {', '.join(via)})" if via else ""
            lines.append(f"{m.var_name('rt', k)} = {name}[{index}]{note}")
        elif origin is not None:
            lines.append(f"{m.var_name('rt', k)} = {origin}")
    return lines


def format_result(result: ComputationIndexing) -> str:
    """The text block of one analysis."""
    if result.direction == "output-to-input":
        what = "output to input" + (f", output {result.source}" if result.source else "")
    else:
        what = f"input to output, from parameter {result.source}"
    head = f"fusion {result.fusion} ({result.computation})" if result.fusion else f"computation {result.computation}"
    lines = [f"{head}: {what}"]
    for t in result.targets:
        label = "parameter" if result.direction == "output-to-input" else "output"
        count = f"{len(t.maps)} map" + ("" if len(t.maps) == 1 else "s")
        lines.append(f"  {label} {t.index}: {t.name} {t.shape}: {count}")
        for a in t.maps:
            for text in str(a.map).splitlines():
                lines.append(f"    {text}")
            for text in _origin_lines(a.map):
                lines.append(f"    {text}")
            paths = f"{a.paths} path" + ("" if a.paths == 1 else "s")
            if a.verdict is None:
                lines.append(f"    ({paths}; not verified)")
            else:
                status = a.verdict.status if a.verdict.proved else f"{a.verdict.status.upper()}: {a.verdict.reason}"
                lines.append(f"    ({paths}; {status} by {a.verdict.engine})")
            for reason in a.over_approximation:
                lines.append(f"    over-approximation: {reason}")
        if t.unsupported:
            lines.append(f"    unknown indexing through: {', '.join(t.unsupported)}")
    for u in result.unsupported:
        lines.append(f"  unsupported: {u.instruction} ({u.opcode}): {u.reason}")
    return "\n".join(lines)


def format_results(results: Sequence[ComputationIndexing]) -> str:
    return "\n\n".join(format_result(r) for r in results)


def summary(results: Sequence[ComputationIndexing], seconds: float) -> dict[str, Any]:
    """Counts over ``results``: fusions, computations, maps, proofs by status, unsupported ops."""
    verdicts = [v for r in results for v in r.verdicts()]
    statuses: dict[str, int] = {}
    for v in verdicts:
        statuses[v.status] = statuses.get(v.status, 0) + 1
    unsupported = sorted({(r.computation, u.instruction, u.opcode) for r in results for u in r.unsupported})
    return {
        "fusions": len({(r.module, r.fusion) for r in results if r.fusion}),
        "computations": len({(r.module, r.computation) for r in results}),
        "maps": sum(r.num_maps for r in results),
        "proofs": len(verdicts),
        "proof_status": statuses,
        "unsupported_ops": [{"computation": c, "instruction": i, "opcode": o} for c, i, o in unsupported],
        "over_approximations": sum(1 for r in results for t in r.targets for a in t.maps if a.over_approximation),
        "seconds": seconds,
    }


def summary_line(results: Sequence[ComputationIndexing], seconds: float) -> str:
    s = summary(results, seconds)
    status = ", ".join(f"{n} {k}" for k, n in sorted(s["proof_status"].items()))
    proofs = f"{s['proofs']} proofs ({status})" if s["proofs"] else "0 proofs (not verified)"
    ops = s["unsupported_ops"]
    unsupported = f"{len(ops)} unsupported ops" + (
        ": " + ", ".join(f"{u['instruction']} ({u['opcode']})" for u in ops) if ops else ""
    )
    over = s["over_approximations"]
    maps = f"{s['maps']} maps" + (f" ({over} over-approximations)" if over else "")
    return (
        f"summary: {s['fusions']} fusions, {s['computations']} computations, {maps}, {proofs}, "
        f"{unsupported}" + (f", {seconds * 1000:.1f} ms" if show_timing() else "")
    )


def results_to_json(results: Sequence[ComputationIndexing], seconds: float) -> dict[str, Any]:
    return {"results": [r.to_json() for r in results], "summary": summary(results, seconds)}


def exit_code(results: Sequence[ComputationIndexing]) -> int:
    """0 when every map is there (and proven when verified), 2 when an op is
    unsupported or a proof is unknown, 4 when a proof failed (engines disagree)."""
    verdicts = [v for r in results for v in r.verdicts()]
    if any(v.error or v.refuted for v in verdicts):
        return 4
    if any(v.unknown for v in verdicts) or any(r.unsupported for r in results):
        return 2
    return 0


def demo_hlo(paths: Sequence[str | Path], *, verify: bool = True) -> int:
    """Analyze every fusion of each HLO file in ``paths`` (the bundled
    ``examples/jax_hlo/*.post.hlo``), print the maps and one summary line per
    file and a total; returns the exit code (see :func:`exit_code`)."""
    code = 0
    totals = {"fusions": 0, "maps": 0, "proofs": 0, "proved": 0, "unsupported": 0}
    elapsed = 0.0
    for path in paths:
        p = Path(path)
        text = p.read_text(encoding="utf-8")
        start = time.perf_counter()
        module = load_hlo(text, str(p))
        results = analyze_module(module, verify=verify)
        seconds = time.perf_counter() - start
        elapsed += seconds
        print(f"== {p.name}")
        if results:
            print(format_results(results))
        print(summary_line(results, seconds))
        print()
        s = summary(results, seconds)
        totals["fusions"] += s["fusions"]
        totals["maps"] += s["maps"]
        totals["proofs"] += s["proofs"]
        totals["proved"] += s["proof_status"].get("proved", 0)
        totals["unsupported"] += len(s["unsupported_ops"])
        code = max(code, exit_code(results))
    print(
        f"total: {len(paths)} modules, {totals['fusions']} fusions, {totals['maps']} maps, "
        f"{totals['proofs']} proofs ({totals['proved']} proved), {totals['unsupported']} unsupported ops"
        + (f", {elapsed * 1000:.1f} ms" if show_timing() else "")
    )
    return code
