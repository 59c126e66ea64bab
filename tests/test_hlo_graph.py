"""``analyze --dot``: the fusion graph read back by an independent DOT parser (pydot).

One node per instruction of the drawn computations (the entry and each fused
computation as a cluster); every labelled edge parses back with
``parse_indexing_map`` into a map the analysis reports for that fusion operand,
and each reported map is on exactly one edge; unsupported and over-approximating
ops are marked; ``--svg`` without Graphviz is exit 3 with a message.
"""

from __future__ import annotations

import contextlib
import io
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from verified_indexing import parse_indexing_map
from verified_indexing.cli import main
from verified_indexing.hlo import graph as graph_mod
from verified_indexing.hlo.fusion import ComputationIndexing, analyze_module
from verified_indexing.hlo.ir import Module
from verified_indexing.hlo.parser import parse_module

pydot = pytest.importorskip("pydot")  # the `test` extra installs it
pytestmark = pytest.mark.filterwarnings("ignore:.*[pP]arse[aA]ction.*")  # pydot's use of older pyparsing names

ROOT = Path(__file__).resolve().parent.parent
SOFTMAX = ROOT / "examples" / "jax_hlo" / "softmax.post.hlo"
LAYERNORM = ROOT / "examples" / "jax_hlo" / "layernorm.post.hlo"
PRE = ROOT / "examples" / "jax_hlo" / "transpose_021.pre.hlo"

MARKED = """HloModule marked

padded {
  p0 = f32[4] parameter(0)
  z = f32[] parameter(1)
  ROOT pd = f32[8] pad(p0, z), padding=2_2
}

kernel {
  q0 = f32[8] parameter(0)
  q1 = f32[8] parameter(1)
  s = f32[8] custom-call(q1), custom_call_target="my_kernel"
  ROOT a = f32[8] add(q0, s)
}

ENTRY e {
  a = f32[4] parameter(0)
  z = f32[] constant(0)
  b = f32[8] parameter(1)
  x = f32[8] fusion(a, z), kind=kLoop, calls=padded
  ROOT y = f32[8] fusion(x, b), kind=kLoop, calls=kernel
}
"""


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _unquote(v: str | None) -> str:
    assert v is not None
    if v.startswith('"') and v.endswith('"'):
        v = v[1:-1]
    return v.replace('\\"', '"').replace("\\\\", "\\")


def _walk(g: Any) -> tuple[list[Any], list[Any]]:
    nodes = [n for n in g.get_nodes() if n.get_name() not in ("node", "edge", "graph")]
    edges = list(g.get_edges())
    for sub in g.get_subgraphs():
        n, e = _walk(sub)
        nodes += n
        edges += e
    return nodes, edges


def _read(dot_text: str) -> tuple[dict[str, Any], list[Any]]:
    (g,) = pydot.graph_from_dot_data(dot_text)
    nodes, edges = _walk(g)
    by_name = {_unquote(n.get_name()): n for n in nodes}
    assert len(by_name) == len(nodes)  # no node drawn twice
    return by_name, edges


def _drawn_instruction_count(module: Module, results: list[ComputationIndexing]) -> int:
    fusions = {r.fusion for r in results if r.fusion}
    hosts = {c.name for c in module.computations.values() for i in c.instructions if i.name in fusions}
    hosts |= {r.computation for r in results if r.fusion is None}
    fused = {r.fusion: r.computation for r in results if r.fusion}
    return sum(len(module.computations[c].instructions) for c in hosts) + sum(
        len(module.computations[c].instructions) for c in fused.values()
    )


def _param(r: ComputationIndexing, target: int) -> int:
    """The parameter a map is about: its target (output to input) or its source (input to output)."""
    return target if r.direction == "output-to-input" else r.source


def _check_graph(module: Module, results: list[ComputationIndexing], dot_text: str) -> Counter[str]:
    """Every check the file promises; returns the classes of the nodes."""
    nodes, edges = _read(dot_text)
    assert len(nodes) == _drawn_instruction_count(module, results)
    for e in edges:  # every edge joins two drawn nodes
        assert _unquote(e.get_source()) in nodes and _unquote(e.get_destination()) in nodes
    # The maps the analysis reports, per (fusion or computation, parameter number).
    expected: Counter[tuple[str, int, str]] = Counter()
    for r in results:
        owner = r.fusion or r.computation
        for t in r.targets:
            for a in t.maps:
                expected[(owner, _param(r, t.index), a.map.format(one_line=True))] += 1
    drawn: Counter[tuple[str, int, str]] = Counter()
    for e in edges:
        label = e.get("label")
        if label is None or _unquote(label) == "unknown":
            continue
        text = _unquote(label)
        parsed = parse_indexing_map(text)
        comp_name, dst = _unquote(e.get_destination()).split("::")
        src = _unquote(e.get_source()).split("::")[1]
        comp = module.computations[comp_name]
        inst = comp.by_name[dst]
        if inst.opcode == "fusion":
            owner, params = inst.name, [k for k, o in enumerate(inst.operands) if o == src]
        else:  # a computation analysed as a whole: parameter -> root
            assert inst.is_root
            owner, params = comp_name, [comp.by_name[src].parameter_number or 0]
        maps = [
            a.map
            for r in results
            if (r.fusion or r.computation) == owner
            for t in r.targets
            if _param(r, t.index) in params
            for a in t.maps
        ]
        assert parsed in maps, (text, owner, params)  # the label is the analysis' map, read back
        drawn[(owner, params[0], text)] += 1
    assert drawn == expected
    return Counter(_unquote(n.get("class")) for n in nodes.values())


@pytest.mark.parametrize("path", [SOFTMAX, LAYERNORM], ids=lambda p: p.name)
def test_fusion_graph_of_a_real_dump_reads_back(path: Path, tmp_path: Path) -> None:
    out_file = tmp_path / "g.dot"
    code, _, err = _cli("analyze", str(path), "--dot", str(out_file))
    assert code == 0, err
    module = parse_module(path.read_text(), str(path))
    results = analyze_module(module)
    classes = _check_graph(module, results, out_file.read_text())
    assert classes["fusion"] == len(module.fusions())
    assert "unsupported" not in classes


def test_input_to_output_maps_label_the_same_edges() -> None:
    code, out, err = _cli("analyze", str(SOFTMAX), "--direction", "input-to-output", "--dot", "-")
    assert code == 0, err
    module = parse_module(SOFTMAX.read_text(), str(SOFTMAX))
    results = analyze_module(module, direction="input-to-output")
    assert sum(len(t.maps) for r in results for t in r.targets) >= 5
    _check_graph(module, results, out)


def test_unfused_module_draws_parameter_to_root_maps() -> None:
    code, out, err = _cli("analyze", str(PRE), "--dot", "-")
    assert code == 0, err
    assert out.startswith("digraph ") and "summary:" in err
    module = parse_module(PRE.read_text(), str(PRE))
    results = analyze_module(module, computation=module.entry_name)
    _check_graph(module, results, out)


def test_unsupported_and_over_approximated_ops_are_marked(tmp_path: Path) -> None:
    module = parse_module(MARKED, "marked.hlo")
    results = analyze_module(module)
    text = graph_mod.to_dot(module, results)
    classes = _check_graph(module, results, text)
    nodes, edges = _read(text)
    assert _unquote(nodes["y/s"].get("class")) == "unsupported" and _unquote(nodes["y/s"].get("shape")) == "octagon"
    assert _unquote(nodes["x/pd"].get("class")) == "over-approximation"
    assert classes["unsupported"] == 1 and classes["over-approximation"] == 1
    # The parameter hidden by the custom-call gets a red 'unknown' edge, the padding value an orange dashed map.
    unknown = [e for e in edges if e.get("label") and _unquote(e.get("label")) == "unknown"]
    assert [(_unquote(e.get_source()), _unquote(e.get_destination())) for e in unknown] == [("e::b", "e::y")]
    over = [e for e in edges if "over-approximation" in _unquote(e.get("class") or '""')]
    assert [(_unquote(e.get_source()), _unquote(e.get("style"))) for e in over] == [("e::z", "dashed")]
    assert "legend" not in nodes and "unsupported op" in text  # the legend is the graph's label
    path = tmp_path / "marked.hlo"
    path.write_text(MARKED)
    code, out, _ = _cli("analyze", str(path), "--dot", "-")
    assert code == 2 and out == text  # the CLI writes the same graph; exit 2: an op has no model


def test_two_fusions_calling_one_computation_get_separate_clusters() -> None:
    text = """HloModule twice
f { p = f32[4,2] parameter(0)
  ROOT t = f32[2,4] transpose(p), dimensions={1,0} }
ENTRY e { a = f32[4,2] parameter(0)
  x = f32[2,4] fusion(a), kind=kLoop, calls=f
  b = f32[4,2] reshape(x)
  ROOT y = f32[2,4] fusion(b), kind=kLoop, calls=f }
"""
    module = parse_module(text)
    results = analyze_module(module)
    _check_graph(module, results, graph_mod.to_dot(module, results))


def test_svg_without_graphviz_is_exit_3(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(graph_mod.shutil, "which", lambda name: None)
    code, _, err = _cli("analyze", str(SOFTMAX), "--svg", str(tmp_path / "g.svg"), "--dot", str(tmp_path / "g.dot"))
    assert code == 3 and "Graphviz" in err and "--dot" in err
    assert not (tmp_path / "g.svg").exists()
    assert (tmp_path / "g.dot").read_text().startswith("digraph ")  # the DOT is still written


@pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's dot program is not installed")
def test_svg_with_graphviz(tmp_path: Path) -> None:
    code, _, err = _cli("analyze", str(SOFTMAX), "--svg", str(tmp_path / "g.svg"))
    assert code == 0, err
    assert "<svg" in (tmp_path / "g.svg").read_text()


def test_dot_refuses_single_instruction_views() -> None:
    code, _, err = _cli("analyze", str(SOFTMAX), "--dot", "-", "--instruction", "x")
    assert code == 3 and "--dot/--svg draw fusions" in err


COLLIDING = """HloModule colliding

fused {
  p = f32[4,8] parameter(0)
  ROOT t = f32[8,4] transpose(p), dimensions={1,0}
}

ENTRY f {
  p = f32[4,8] parameter(0)
  ROOT f = f32[8,4] fusion(p), kind=kLoop, calls=fused
}
"""


def test_names_shared_by_a_computation_and_a_fusion_give_distinct_nodes() -> None:
    """HLO computations and instructions have separate name spaces: the entry computation ``f`` holds the
    fusion instruction ``f``, and both it and the fused computation have a ``p``; every instruction still
    gets its own node."""
    module = parse_module(COLLIDING, "colliding.hlo")
    results = analyze_module(module)
    text = graph_mod.to_dot(module, results)
    _check_graph(module, results, text)
    nodes, _ = _read(text)
    assert {"f::p", "f::f", "f/p", "f/t"} <= set(nodes)
