"""``analyze --epilogue HERO`` (issue 25 item 3): XLA's epilogue indexing, from a hero's output to the fusion
root's, proven like the other maps, against the numpy interpreter of HLO (tests/hlo_oracle.py).

The oracle: each hero element is tagged with its index; every instruction after the hero is run by the
interpreter (which says which operand elements each output element is computed from), the tags carried
along; the root element's tags are the hero elements it reads. The relation {(hero index, root index)} must
be exactly the union of the maps' graphs, enumerated point by point.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import numpy as np
import pytest
from hlo_oracle import run
from test_cli_io import run as _cli  # the CLI in-process: (exit code, stdout, stderr)

from verified_indexing.hlo.epilogue import epilogue_indexing
from verified_indexing.hlo.ir import Computation
from verified_indexing.hlo.report import load_hlo
from verified_indexing.indexing_map import IndexingMap

ADD = """
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
"""

MODULES = {
    # a reduction hero, then transpose, elementwise with another parameter, broadcast
    "reduce_transpose_broadcast": ADD + """
%fused (p0: f32[4,6,8], p1: f32[6,4]) -> f32[6,4,3] {
  %p0 = f32[4,6,8]{2,1,0} parameter(0)
  %p1 = f32[6,4]{1,0} parameter(1)
  %z = f32[] constant(0)
  %red = f32[4,6]{1,0} reduce(%p0, %z), dimensions={2}, to_apply=%add
  %t = f32[6,4]{1,0} transpose(%red), dimensions={1,0}
  %e = f32[6,4]{1,0} exponential(%t)
  %m = f32[6,4]{1,0} multiply(%e, %p1)
  ROOT %b = f32[6,4,3]{2,1,0} broadcast(%m), dimensions={0,1}
}
ENTRY %main (x: f32[4,6,8], y: f32[6,4]) -> f32[6,4,3] {
  %x = f32[4,6,8]{2,1,0} parameter(0)
  %y = f32[6,4]{1,0} parameter(1)
  ROOT %f = f32[6,4,3]{2,1,0} fusion(%x, %y), kind=kInput, calls=%fused
}
""",
    # a transpose hero, then reshape, reverse and a slice (not every hero element reaches the root)
    "transpose_reshape_slice": """
%fused (p0: f32[4,6]) -> f32[2,3,3] {
  %p0 = f32[4,6]{1,0} parameter(0)
  %t = f32[6,4]{1,0} transpose(%p0), dimensions={1,0}
  %r = f32[3,2,4]{2,1,0} reshape(%t)
  %v = f32[3,2,4]{2,1,0} reverse(%r), dimensions={0,2}
  %n = f32[3,2,4]{2,1,0} negate(%v)
  %s = f32[3,2,3]{2,1,0} slice(%n), slice={[0:3], [0:2], [1:4]}
  ROOT %q = f32[2,3,3]{2,1,0} transpose(%s), dimensions={1,0,2}
}
ENTRY %main (x: f32[4,6]) -> f32[2,3,3] {
  %x = f32[4,6]{1,0} parameter(0)
  ROOT %f = f32[2,3,3]{2,1,0} fusion(%x), kind=kInput, calls=%fused
}
""",
    # a multi-output fusion: the hero reaches two roots, one through a pad and one through a concatenate
    "multi_output_pad_concat": ADD + """
%fused (p0: f32[3,5], p1: f32[2]) -> (f32[5,4], f32[5]) {
  %p0 = f32[3,5]{1,0} parameter(0)
  %p1 = f32[2]{0} parameter(1)
  %z = f32[] constant(0)
  %red = f32[3]{0} reduce(%p0, %z), dimensions={1}, to_apply=%add
  %b = f32[3,4]{1,0} broadcast(%red), dimensions={0}
  %pd = f32[5,4]{1,0} pad(%b, %z), padding=1_1x0_0
  %c = f32[5]{0} concatenate(%p1, %red), dimensions={0}
  ROOT %tup = (f32[5,4]{1,0}, f32[5]{0}) tuple(%pd, %c)
}
ENTRY %main (x: f32[3,5], y: f32[2]) -> (f32[5,4], f32[5]) {
  %x = f32[3,5]{1,0} parameter(0)
  %y = f32[2]{0} parameter(1)
  ROOT %f = (f32[5,4]{1,0}, f32[5]{0}) fusion(%x, %y), kind=kInput, calls=%fused
}
""",
}
HEROES = [("reduce_transpose_broadcast", "red"), ("reduce_transpose_broadcast", "t"),
          ("reduce_transpose_broadcast", "b"), ("transpose_reshape_slice", "t"), ("transpose_reshape_slice", "r"),
          ("multi_output_pad_concat", "red"), ("multi_output_pad_concat", "b")]


def _module_text(name: str) -> str:
    return "HloModule " + name + "\n" + MODULES[name]


def _oracle(comp: Computation, hero: str) -> list[set[tuple[tuple[int, ...], tuple[int, ...]]]]:
    """Per output of the root: {(hero index, root index)}, from the interpreter's per-op reads."""
    tags: dict[str, np.ndarray] = {}
    start = comp.by_name[hero]
    t = np.empty(start.shape.dims, dtype=object)
    for idx in np.ndindex(*start.shape.dims):
        t[idx] = frozenset({tuple(int(i) for i in idx)})
    tags[hero] = t
    order = [i.name for i in comp.instructions]
    for inst in comp.instructions[order.index(hero) + 1:]:
        if not any(o in tags for o in inst.operands) or inst.opcode == "tuple":
            continue
        outs = run(inst, comp)
        assert len(outs) == 1
        res = np.empty(outs[0].shape, dtype=object)
        for idx in np.ndindex(*outs[0].shape):
            acc: set[tuple[int, ...]] = set()
            for k, x in outs[0][idx]:
                name = inst.operands[k]
                if name in tags:
                    acc |= tags[name][x]
            res[idx] = frozenset(acc)
        tags[inst.name] = res
    root = comp.root
    parts = [comp.by_name[o] for o in root.operands] if root.opcode == "tuple" else [root]
    out = []
    for part in parts:
        pairs: set[tuple[tuple[int, ...], tuple[int, ...]]] = set()
        if part.name in tags:
            a = tags[part.name]
            for idx in np.ndindex(*a.shape):
                pairs |= {(h, tuple(int(i) for i in idx)) for h in a[idx]}
        out.append(pairs)
    return out


def _graph(maps: list[IndexingMap]) -> Iterator[tuple[tuple[int, ...], tuple[int, ...]]]:
    for m in maps:
        for d, s, r in m.domain_points():
            yield tuple(d), tuple(m.evaluate(d, s, r))


@pytest.mark.parametrize(("name", "hero"), HEROES, ids=[f"{n}-{h}" for n, h in HEROES])
def test_epilogue_maps_are_the_interpreter_s_reads(name: str, hero: str) -> None:
    module = load_hlo(_module_text(name), name)
    _, results = epilogue_indexing(module, hero)
    assert len(results) == 1
    r = results[0]
    expected = _oracle(module.computations["fused"], hero)
    got: list[set[tuple[tuple[int, ...], tuple[int, ...]]]] = [set() for _ in expected]
    for target in r.targets:
        assert not target.unsupported
        for a in target.maps:
            assert a.verdict is not None and a.verdict.proved and not a.over_approximation
        got[target.index] = set(_graph([a.map for a in target.maps]))
    assert got == expected
    assert any(expected)  # the hero reaches the root


def test_the_command_line_prints_the_epilogue() -> None:
    code, out, err = _cli("analyze", "-e", _module_text("reduce_transpose_broadcast"), "--epilogue", "red")
    assert code == 0, err
    assert out.startswith("epilogue of red (reduce) in fused: from the hero's output to the root's\n")
    assert "(d0, d1)[s0] -> (d1, d0, s0)" in out and "proved by isl" in out
    code, out, _ = _cli("analyze", "-e", _module_text("reduce_transpose_broadcast"), "--epilogue", "red", "--json",
                        "--no-timing")
    data = json.loads(out)
    from verified_indexing.schema import types

    types.check(data)
    assert code == 0 and data["epilogue"] == [{"hero": "red", "opcode": "reduce", "computation": "fused",
                                               "module": "reduce_transpose_broadcast"}]
    assert data["results"][0]["direction"] == "input-to-output"


def test_a_hero_that_is_the_root_is_the_identity() -> None:
    module = load_hlo(_module_text("transpose_reshape_slice"), "t")
    _, results = epilogue_indexing(module, "q")
    [target] = results[0].targets
    assert [str(a.map).split(",\n")[0] for a in target.maps] == ["(d0, d1, d2) -> (d0, d1, d2)"]


def test_bad_heroes() -> None:
    text = _module_text("reduce_transpose_broadcast")
    code, _, err = _cli("analyze", "-e", text, "--epilogue", "rde")
    assert code == 3 and "no instruction 'rde'" in err and "did you mean 'red'" in err
    code, _, err = _cli("analyze", "-e", text, "--epilogue", "s")  # in %add and nowhere else: fine
    assert code == 0, err
    code, _, err = _cli("analyze", "-e", text, "--epilogue", "red", "--direction", "input-to-output")
    assert code == 3 and "--epilogue" in err


def test_a_tuple_hero_is_unsupported_not_guessed() -> None:
    text = """HloModule v
%add2 (a: f32[], b: f32[], c: f32[], d: f32[]) -> (f32[], f32[]) {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  %c = f32[] parameter(2)
  %d = f32[] parameter(3)
  %x = f32[] add(%a, %c)
  %y = f32[] add(%b, %d)
  ROOT %t = (f32[], f32[]) tuple(%x, %y)
}
%fused (p0: f32[4,3], p1: f32[4,3]) -> f32[4] {
  %p0 = f32[4,3]{1,0} parameter(0)
  %p1 = f32[4,3]{1,0} parameter(1)
  %z = f32[] constant(0)
  %r = (f32[4]{0}, f32[4]{0}) reduce(%p0, %p1, %z, %z), dimensions={1}, to_apply=%add2
  %g = f32[4]{0} get-tuple-element(%r), index=0
  ROOT %n = f32[4]{0} negate(%g)
}
ENTRY %main (x: f32[4,3], y: f32[4,3]) -> f32[4] {
  %x = f32[4,3]{1,0} parameter(0)
  %y = f32[4,3]{1,0} parameter(1)
  ROOT %f = f32[4]{0} fusion(%x, %y), kind=kInput, calls=%fused
}
"""
    code, out, err = _cli("analyze", "-e", text, "--epilogue", "r")
    assert code == 2 and "tuple" in out + err, (out, err)
