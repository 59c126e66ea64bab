"""The fusion graph of an analyzed HLO module, in Graphviz DOT (``analyze --dot``).

One node per instruction of every drawn computation: the computations holding
the analyzed fusions (usually the entry) and every computation analyzed as a
whole; each analyzed fusion's computation is a cluster (``cluster_<fusion>``)
holding one node per fused instruction. Edges:

* data flow, operand to user (gray, unlabelled), and from a fused computation's
  root to its fusion node (dashed, ``class="calls"``), except
* the edge from operand ``k`` of an analyzed fusion to the fusion, drawn once per
  map of the fusion's parameter ``k``: labelled with that map (XLA's one-line
  form, readable by :func:`verified_indexing.parse_indexing_map`), the map the
  analysis reports, with the direction of the analysis (output to input: from
  the fusion's output indices to the operand's);
* for a computation analyzed as a whole (an unfused module), one labelled edge
  per map from the parameter to the root (``constraint=false``).

Marks (shape, colour, and the ``class`` attribute, which SVG output keeps):
``unsupported`` (red octagon: an op without an indexing model; its edges are red,
dashed, labelled ``unknown``), ``over-approximation`` (orange hexagon for the op,
orange dashed edge for a map that may claim reads that do not happen),
``proved`` (blue), ``not-verified`` (dotted) and other verdicts (red). A legend
is the graph's label. Nothing here computes a map: every label is the text of a
map in the results.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence

from verified_indexing.errors import VerifiedIndexingError
from verified_indexing.hlo.fusion import AccessMap, ComputationIndexing
from verified_indexing.hlo.ir import Computation, Instruction, Module

__all__ = ["to_dot", "dot_to_svg", "LEGEND"]

LEGEND = (
    "edges: operand -> user; a labelled edge is a map of the analysis (by default from the fusion's output "
    "indices to the operand's; with --direction input-to-output the reverse)",
    "blue solid: proven map; orange dashed: over-approximation; dotted: not verified",
    "red dashed 'unknown': no map (an op without indexing model); gray: data flow",
    "nodes: red octagon: unsupported op; orange hexagon: over-approximating op; box: fusion",
)


def _q(text: str) -> str:
    """A DOT double-quoted string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attrs(**attrs: str) -> str:
    return "[" + ", ".join(f"{k.rstrip('_')}={_q(v)}" for k, v in attrs.items()) + "]"


def _node_id(comp: str, inst: str) -> str:
    """The id of an instruction of a drawn computation."""
    return f"{comp}::{inst}"


def _fused_id(fusion: str, inst: str) -> str:
    """The id of an instruction inside the cluster of fusion instruction ``fusion``: ``/`` is in no HLO
    name, so it never equals a computation's :func:`_node_id` (a computation may share a fusion's name)."""
    return f"{fusion}/{inst}"


def _map_edge(a: AccessMap, tooltip: str) -> dict[str, str]:
    attrs = {"label": a.map.format(one_line=True)}
    paths = f"{a.paths} path" + ("" if a.paths == 1 else "s")
    if a.verdict is None:
        attrs.update(style="dotted", color="gray30", class_="not-verified", tooltip=f"{tooltip}; {paths}; not verified")
    elif a.verdict.proved:
        attrs.update(color="#1f5fbf", fontcolor="#1f5fbf", class_="proved",
                     tooltip=f"{tooltip}; {paths}; proved by {a.verdict.engine}")
    else:
        attrs.update(color="red", fontcolor="red", class_=a.verdict.status,
                     tooltip=f"{tooltip}; {paths}; {a.verdict.status}: {a.verdict.reason}")
    if a.over_approximation:
        attrs.update(color="orange", fontcolor="darkorange3", style="dashed",
                     class_=attrs["class_"] + " over-approximation",
                     tooltip=attrs["tooltip"] + "; over-approximation: " + "; ".join(a.over_approximation))
    return attrs


def _unknown_edge(names: Sequence[str], tooltip: str) -> dict[str, str]:
    return {"label": "unknown", "color": "red", "fontcolor": "red", "style": "dashed", "class_": "unsupported",
            "tooltip": f"{tooltip}; no map: unknown indexing through {', '.join(names)}"}


def _split_path(text: str, default_comp: str) -> tuple[str, str]:
    """``(computation, instruction)`` of an over-approximation entry ``[comp/]inst (opcode): reason``."""
    path = text.split(" (", 1)[0].split(":", 1)[0]
    parts = path.split("/")
    return (parts[-2] if len(parts) > 1 else default_comp), parts[-1]


def to_dot(module: Module, results: Sequence[ComputationIndexing], source: str | None = None) -> str:
    """The DOT text of the fusion graph of ``module`` with the maps of ``results``
    (what :func:`~verified_indexing.hlo.fusion.analyze_module` returned for it); ``source``, the file the
    module was read from, is named in the graph's label and comment (a dump directory's modules)."""
    fused: dict[str, list[ComputationIndexing]] = {}  # fusion instruction -> its analyses
    whole: dict[str, list[ComputationIndexing]] = {}  # computation analyzed as a whole -> its analyses
    for r in results:
        if r.fusion is not None:
            fused.setdefault(r.fusion, []).append(r)
        elif r.computation in module.computations:
            whole.setdefault(r.computation, []).append(r)
    hosts: list[Computation] = []
    fusion_insts: dict[str, tuple[Computation, Instruction]] = {}
    for comp in module.computations.values():
        for inst in comp.instructions:
            if inst.opcode == "fusion" and inst.name in fused:
                fusion_insts[inst.name] = (comp, inst)
                if comp not in hosts:
                    hosts.append(comp)
    for name in whole:
        comp = module.computations[name]
        if comp not in hosts:
            hosts.append(comp)
    clusters = {f: module.computations[fused[f][0].computation] for f in fusion_insts}
    host_names = {c.name for c in hosts}
    clusters = {f: c for f, c in clusters.items() if c.name not in host_names}

    marks: dict[tuple[str, str], tuple[str, str]] = {}  # (computation, instruction) -> (class, why)
    for r in results:
        for a in (a for t in r.targets for a in t.maps):
            for entry in a.over_approximation:
                marks.setdefault(_split_path(entry, r.computation), ("over-approximation", entry))
    for r in results:
        for u in r.unsupported:
            marks[(r.computation, u.instruction)] = ("unsupported", f"{u.instruction} ({u.opcode}): {u.reason}")

    lines = [f"digraph {_q(module.name)} {{"]
    named = (f"verified-indexing analyze: module {module.name}", f"file: {source}") if source is not None \
        else (f"verified-indexing analyze: {module.name}",)
    if source is not None:
        lines.append(f"  comment={_q(f'module {module.name} from {source}')};")
    legend = "\\l".join(_q(x)[1:-1] for x in (*named, *LEGEND)) + "\\l"
    lines.append(f'  graph [rankdir="TB", labelloc="b", labeljust="l", fontname="Helvetica", label="{legend}"];')

    def node(comp: Computation, inst: Instruction, indent: str, fusion_node: bool = False, fusion: str = "") -> None:
        attrs = {"label": f"{inst.name}\n{inst.opcode} {inst.shape}", "shape": "box" if fusion_node else "ellipse",
                 "fontname": "Helvetica", "class_": inst.opcode}
        mark = marks.get((comp.name, inst.name))
        if mark is not None and mark[0] == "unsupported":
            attrs.update(shape="octagon", style="filled", fillcolor="#f8c8c8", color="red",
                         class_="unsupported", tooltip=mark[1])
        elif mark is not None:
            attrs.update(shape="hexagon", style="filled", fillcolor="#fde3b8", color="orange",
                         class_="over-approximation", tooltip=mark[1])
        elif fusion_node:
            attrs.update(style="filled", fillcolor="#e8eef8")
        ident = _fused_id(fusion, inst.name) if fusion else _node_id(comp.name, inst.name)
        lines.append(f"{indent}{_q(ident)} {_attrs(**attrs)};")

    def edge(src: str, dst: str, attrs: dict[str, str], indent: str = "  ") -> None:
        lines.append(f"{indent}{_q(src)} -> {_q(dst)} {_attrs(**attrs)};")

    flow = {"color": "gray60", "arrowsize": "0.6", "class_": "data-flow"}
    for comp in hosts:
        for inst in comp.instructions:
            node(comp, inst, "  ", fusion_node=inst.name in fusion_insts)
    for fusion, comp in clusters.items():
        lines.append(f"  subgraph {_q('cluster_' + fusion)} {{")
        lines.append(f"    graph {_attrs(label=f'{fusion} ({comp.name})', style='rounded', color='gray50')};")
        for inst in comp.instructions:  # ids prefixed by the fusion: two fusions may call one computation
            node(comp, inst, "    ", fusion=fusion)
        for inst in comp.instructions:
            for operand in dict.fromkeys(inst.operands):
                edge(_fused_id(fusion, operand), _fused_id(fusion, inst.name), flow, "    ")
        lines.append("  }")
        host, _ = fusion_insts[fusion]
        calls = {"style": "dashed", "color": "gray50", "arrowhead": "none", "class_": "calls",
                 "tooltip": f"{fusion} calls {comp.name}"}
        edge(_fused_id(fusion, comp.root.name), _node_id(host.name, fusion), calls)
    for comp in hosts:
        for inst in comp.instructions:
            dst = _node_id(comp.name, inst.name)
            analyses = fused.get(inst.name) if inst.name in fusion_insts else None
            if analyses is None:
                for operand in dict.fromkeys(inst.operands):
                    edge(_node_id(comp.name, operand), dst, flow)
                continue
            for k, operand in enumerate(inst.operands):
                src = _node_id(comp.name, operand)
                drawn = False
                for r in analyses:
                    for t in r.targets:
                        if (r.direction == "output-to-input" and t.index != k) or (
                            r.direction == "input-to-output" and r.source != k
                        ):
                            continue
                        what = (f"{inst.name} output {r.source} -> parameter {t.index}"
                                if r.direction == "output-to-input"
                                else f"{inst.name} parameter {k} -> output {t.index}")
                        for a in t.maps:
                            edge(src, dst, _map_edge(a, what))
                            drawn = True
                        if t.unsupported:
                            edge(src, dst, _unknown_edge(t.unsupported, what))
                            drawn = True
                if not drawn:
                    edge(src, dst, flow)
    for name, analyses in whole.items():
        comp = module.computations[name]
        root = _node_id(comp.name, comp.root.name)
        params = {p.parameter_number: p for p in comp.parameters()}
        for r in analyses:
            for t in r.targets:
                p = params.get(t.index if r.direction == "output-to-input" else r.source)
                if p is None:
                    continue
                what = (f"{comp.name} output {r.source} -> parameter {t.index}" if r.direction == "output-to-input"
                        else f"{comp.name} parameter {r.source} -> output {t.index}")
                for a in t.maps:
                    edge(_node_id(comp.name, p.name), root, {**_map_edge(a, what), "constraint": "false"})
                if t.unsupported:
                    edge(_node_id(comp.name, p.name), root, {**_unknown_edge(t.unsupported, what),
                                                            "constraint": "false"})
    lines.append("}")
    return "\n".join(lines) + "\n"


def dot_to_svg(dot_text: str, path: str) -> None:
    """Render DOT text to an SVG file with Graphviz's ``dot`` program. Raises
    :class:`VerifiedIndexingError` when ``dot`` is not on ``PATH`` or fails."""
    exe = shutil.which("dot")
    if exe is None:
        raise VerifiedIndexingError(
            "--svg needs Graphviz's dot program, which is not on PATH (install Graphviz, e.g. apt-get install "
            "graphviz); --dot FILE writes the graph as DOT text without it"
        )
    try:
        done = subprocess.run([exe, "-Tsvg", "-o", path], input=dot_text, text=True, capture_output=True,
                              timeout=300, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VerifiedIndexingError(f"--svg: running {exe} failed: {exc}") from None
    if done.returncode != 0:
        raise VerifiedIndexingError(f"--svg: {exe} -Tsvg failed (exit {done.returncode}): {done.stderr.strip()}")
