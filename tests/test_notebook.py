"""A notebook shows an analysis as a short summary and its fusion graph (issue 28 item 3): ``repr`` is one
line, ``_repr_svg_`` an SVG drawn without Graphviz. The drawing is checked against the DOT text
``analyze --dot`` writes, read by an independent parser (pydot): every node and every edge is drawn, each
map of the analysis is on an edge, nodes do not overlap, and a data-flow edge points down (the layout is in
layers). The module docstring's example and docs/python-api.md's notebook cell run as doctests."""

from __future__ import annotations

import doctest
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import verified_indexing.api
from verified_indexing import analyze

ROOT = Path(__file__).resolve().parent.parent
SVG = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("name", ["softmax", "layernorm", "gather", "concatenate"])
def test_the_drawing_holds_every_node_edge_and_map_of_the_dot(name: str) -> None:
    pydot = pytest.importorskip("pydot")
    a = analyze(ROOT / "examples" / "jax_hlo" / f"{name}.post.hlo")
    svg = a._repr_svg_()
    root = ET.fromstring(svg)  # well-formed XML
    assert root.tag == f"{SVG}svg"
    (graph,) = pydot.graph_from_dot_data(a.to_dot())
    nodes = [n.get_name().strip('"') for g in [graph, *_subgraphs(graph)] for n in g.get_nodes()
             if n.get_name() not in ("graph", "node", "edge")]
    edges = [(e.get_source().strip('"'), e.get_destination().strip('"')) for g in [graph, *_subgraphs(graph)]
             for e in g.get_edges()]
    groups = root.findall(f"{SVG}g")
    drawn_nodes = {g.find(f"{SVG}title").text: g for g in groups if g.get("class", "").startswith("node")}  # type: ignore[union-attr]
    drawn_edges = [g for g in groups if g.get("class", "").startswith("edge")]
    assert set(drawn_nodes) == set(nodes) and len(drawn_nodes) == len(nodes)
    assert len(drawn_edges) == len(edges)
    titles = " ".join(g.find(f"{SVG}title").text or "" for g in drawn_edges)  # type: ignore[union-attr]
    for r in a:  # every map of the analysis is the tooltip of an edge
        for t in r.targets:
            for m in t.maps:
                assert m.map.format(one_line=True) in titles
    boxes = []
    for g in drawn_nodes.values():
        rect = g.find(f"{SVG}rect")
        assert rect is not None
        x, y, w, h = (float(rect.get(k, "0")) for k in ("x", "y", "width", "height"))
        boxes.append((x, y, x + w, y + h))
    for i, p in enumerate(boxes):  # no two nodes overlap
        for q in boxes[i + 1:]:
            assert p[2] <= q[0] or q[2] <= p[0] or p[3] <= q[1] or q[3] <= p[1], (p, q)
    for g in drawn_edges:
        line = g.find(f"{SVG}line")
        assert line is not None
        if "data-flow" in g.get("class", ""):
            assert float(line.get("y2", "0")) > float(line.get("y1", "0"))  # down, along the layers


def _subgraphs(graph: object) -> list[object]:
    out = []
    for s in graph.get_subgraphs():  # type: ignore[attr-defined]
        out += [s, *_subgraphs(s)]
    return out


def test_the_summary_a_notebook_shows_is_one_short_line() -> None:
    a = analyze(ROOT / "examples" / "jax_hlo" / "softmax.post.hlo")
    assert repr(a) == "<Analysis jit_softmax: 6 fusions, 11 maps, 11 proofs (11 proved)>"
    s = a.summary()  # the command line's JSON summary says the same
    assert (s["fusions"], s["maps"], s["proofs"], s["proof_status"]) == (6, 11, 11, {"proved": 11})


def test_the_module_docstring_runs() -> None:
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    import os

    here = os.getcwd()
    os.chdir(ROOT)
    try:
        for test in finder.find(verified_indexing.api):
            runner.run(test)
    finally:
        os.chdir(here)
    assert runner.tries >= 3 and runner.failures == 0
