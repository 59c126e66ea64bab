"""A graph drawn as SVG in pure Python, without Graphviz (a notebook's ``_repr_svg_``).

:func:`dot_to_svg_text` reads the DOT our graphs are written in (:func:`verified_indexing.hlo.graph.to_dot`:
one statement per line, ``"id" [attrs];`` for a node and ``"a" -> "b" [attrs];`` for an edge, clusters as
``subgraph`` blocks) and lays it out in layers: a node's layer is the length of the longest path reaching it
(edges point down), nodes of a layer side by side in the order the DOT gives them; edges are straight lines
with an arrow head, a map edge's label (the map) at its middle, cut to :data:`LABEL_WIDTH` characters, with
the whole label and the DOT tooltip as the edge's tooltip (``<title>``). Colours, dashes and the ``class``
attribute are kept, so the marks of ``analyze --svg`` (unsupported, over-approximation, proved...) read the
same. Graphviz places nodes better; this needs nothing installed.
"""

from __future__ import annotations

import re
from html import escape

__all__ = ["dot_to_svg_text", "parse_dot", "LABEL_WIDTH"]

LABEL_WIDTH = 48
"""The longest edge label drawn (characters); the whole label is the edge's tooltip."""

_ID = r'"((?:[^"\\]|\\.)*)"'
_NODE = re.compile(rf"^\s*{_ID}\s*\[(.*)\];\s*$")
_EDGE = re.compile(rf"^\s*{_ID}\s*->\s*{_ID}\s*\[(.*)\];\s*$")
_ATTR = re.compile(rf"(\w+)={_ID}")
_CHAR_W, _LINE_H, _PAD, _GAP_X, _GAP_Y = 7.0, 15.0, 8.0, 24.0, 60.0


def _unq(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: "\n" if m.group(1) in "nl" else m.group(1), text)


def _attrs(text: str) -> dict[str, str]:
    return {k: _unq(v) for k, v in _ATTR.findall(text)}


def parse_dot(dot: str) -> tuple[dict[str, dict[str, str]], list[tuple[str, str, dict[str, str]]]]:
    """The nodes (``{id: attrs}``, in order) and edges (``(from, to, attrs)``) of a DOT text written one
    statement per line (graph attributes and cluster headers are skipped)."""
    nodes: dict[str, dict[str, str]] = {}
    edges: list[tuple[str, str, dict[str, str]]] = []
    for line in dot.splitlines():
        e = _EDGE.match(line)
        if e is not None:
            edges.append((_unq(e.group(1)), _unq(e.group(2)), _attrs(e.group(3))))
            continue
        n = _NODE.match(line)
        if n is not None and not line.strip().startswith(("graph ", "node ", "edge ")):
            nodes[_unq(n.group(1))] = _attrs(n.group(2))
    for a, b, _ in edges:
        for end in (a, b):
            nodes.setdefault(end, {"label": end})
    return nodes, edges


def _layers(nodes: dict[str, dict[str, str]], edges: list[tuple[str, str, dict[str, str]]]) -> dict[str, int]:
    preds: dict[str, list[str]] = {n: [] for n in nodes}
    for a, b, _ in edges:
        if a != b:
            preds[b].append(a)
    layer: dict[str, int] = {}
    for start in nodes:
        stack = [(start, False)]
        on_path: set[str] = set()
        while stack:  # iterative longest-path depth (a cycle's back edge is ignored)
            node, done = stack.pop()
            if done:
                on_path.discard(node)
                layer[node] = max((layer[p] + 1 for p in preds[node] if p in layer), default=0)
                continue
            if node in layer or node in on_path:
                continue
            on_path.add(node)
            stack.append((node, True))
            stack.extend((p, False) for p in preds[node] if p not in layer and p not in on_path)
    return layer


def dot_to_svg_text(dot: str) -> str:
    """An SVG drawing of the DOT text ``dot`` (see the module docstring)."""
    nodes, edges = parse_dot(dot)
    layer = _layers(nodes, edges)
    rows: dict[int, list[str]] = {}
    for n in nodes:
        rows.setdefault(layer[n], []).append(n)
    size: dict[str, tuple[float, float]] = {}
    for n, na in nodes.items():
        lines = na.get("label", n).split("\n")
        size[n] = (max(len(s) for s in lines) * _CHAR_W + 2 * _PAD, len(lines) * _LINE_H + 2 * _PAD)
    pos: dict[str, tuple[float, float]] = {}
    width, y = 0.0, _GAP_Y / 2
    for k in sorted(rows):
        x = _GAP_X
        height = max(size[n][1] for n in rows[k])
        for n in rows[k]:
            w, h = size[n]
            pos[n] = (x + w / 2, y + height / 2)
            x += w + _GAP_X
        width, y = max(width, x), y + height + _GAP_Y
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{y:.0f}" '
           f'viewBox="0 0 {width:.0f} {y:.0f}" font-family="Helvetica, Arial, sans-serif" font-size="12">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="context-stroke"/></marker></defs>']
    for a, b, attrs in edges:
        (x1, y1), (x2, y2) = pos[a], pos[b]
        y1 += size[a][1] / 2 * (1 if y2 >= y1 else -1)
        y2 -= size[b][1] / 2 * (1 if y2 >= y1 else -1)
        color = attrs.get("color", "gray")
        dash = ' stroke-dasharray="5,3"' if "dashed" in attrs.get("style", "") else (
            ' stroke-dasharray="2,2"' if "dotted" in attrs.get("style", "") else "")
        head = "" if attrs.get("arrowhead") == "none" else ' marker-end="url(#arrow)"'
        label = attrs.get("label", "")
        title = escape("\n".join(t for t in (label, attrs.get("tooltip", "")) if t) or f"{a} -> {b}")
        out.append(f'<g class="edge {escape(attrs.get("class", ""))}"><title>{title}</title>'
                   f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{escape(color)}"'
                   f'{dash}{head}/>')
        if label:
            shown = label if len(label) <= LABEL_WIDTH else label[: LABEL_WIDTH - 3] + "..."
            out.append(f'<text x="{(x1 + x2) / 2:.1f}" y="{(y1 + y2) / 2:.1f}" font-size="9" fill="{escape(color)}" '
                       f'text-anchor="middle">{escape(shown)}</text>')
        out.append("</g>")
    for n, attrs in nodes.items():
        (cx, cy), (w, h) = pos[n], size[n]
        fill = attrs.get("fillcolor", "white") if "filled" in attrs.get("style", "") else "white"
        stroke = attrs.get("color", "black")
        rx = 4 if attrs.get("shape") == "box" else h / 2
        lines = attrs.get("label", n).split("\n")
        out.append(f'<g class="node {escape(attrs.get("class", ""))}"><title>{escape(n)}</title>'
                   f'<rect x="{cx - w / 2:.1f}" y="{cy - h / 2:.1f}" width="{w:.1f}" height="{h:.1f}" rx="{rx:.1f}" '
                   f'fill="{escape(fill)}" stroke="{escape(stroke)}"/>')
        for i, text in enumerate(lines):
            ty = cy - (len(lines) - 1) * _LINE_H / 2 + i * _LINE_H + 4
            out.append(f'<text x="{cx:.1f}" y="{ty:.1f}" text-anchor="middle">{escape(text)}</text>')
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out) + "\n"
