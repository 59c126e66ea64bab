"""The walk composing a computation (``analyze --computation ENTRY``) computes each distinct (map so far,
op map) composition once and polishes each distinct final map once; its maps still read exactly what the
tagged numpy interpreter says each output element reads, and every map is proven.

A model's layers repeat: the same pairs come back on every path (a 1 MB llama-style entry: 16,151 steps,
146 distinct pairs, 1,203 final maps of 20 distinct ones)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from test_hlo_fusion import _reads_from_maps, _run_computation

from verified_indexing.hlo import fusion
from verified_indexing.hlo.fusion import input_to_output_maps, output_to_input_maps
from verified_indexing.hlo.parser import parse_hlo_snippet


def _layers(n: int) -> str:
    """``n`` identical layers, each a transpose and its inverse, then x * broadcast(reduce(x)) (a norm's
    pattern: two paths that meet)."""
    lines = ["  p0 = f32[4,6] parameter(0)", "  zero = f32[] constant(0)"]
    cur = "p0"
    for k in range(n):
        lines += [
            f"  t{k} = f32[6,4] transpose({cur}), dimensions={{1,0}}",
            f"  u{k} = f32[4,6] transpose(t{k}), dimensions={{1,0}}",
            f"  m{k} = f32[4] reduce(u{k}, zero), dimensions={{1}}, to_apply=add_f",
            f"  b{k} = f32[4,6] broadcast(m{k}), dimensions={{0}}",
            f"  a{k} = f32[4,6] multiply(u{k}, b{k})",
        ]
        cur = f"a{k}"
    lines.append(f"  ROOT out = f32[4,6] negate({cur})")
    return ("add_f { a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b) }\n"
            "ENTRY f {\n" + "\n".join(lines) + "\n}\n")


def _counting(monkeypatch: pytest.MonkeyPatch, name: str) -> list[int]:
    calls = [0]
    original = getattr(fusion, name)

    def counted(*args: Any) -> Any:
        calls[0] += 1
        return original(*args)

    monkeypatch.setattr(fusion, name, counted)
    return calls


def _walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the computations ``fusion.output_to_input_maps`` walks from now on, in order."""
    walks: list[str] = []
    original = fusion.output_to_input_maps

    def counted(comp: Any, **kwargs: Any) -> Any:
        walks.append(comp.name)
        return original(comp, **kwargs)

    monkeypatch.setattr(fusion, "output_to_input_maps", counted)
    return walks


def test_repeated_layers_compose_each_pair_once_and_read_what_the_oracle_reads(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    comp = parse_hlo_snippet(_layers(4))
    composed = _counting(monkeypatch, "_compose")
    polished = _counting(monkeypatch, "_polish")
    step_calls = [0]
    original_step = fusion._Walker.step

    def step(self: Any, *args: Any, **kwargs: Any) -> Any:
        step_calls[0] += 1
        return original_step(self, *args, **kwargs)

    monkeypatch.setattr(fusion._Walker, "step", step)
    result = output_to_input_maps(comp)
    assert not result.unsupported
    assert all(v.proved for v in result.verdicts())
    finals = [a.map for t in result.targets for a in t.maps]
    assert composed[0] < step_calls[0] / 2, (composed[0], step_calls[0])  # the walk's pairs repeat
    assert polished[0] <= len(set(finals))
    reads = _reads_from_maps(result)
    values = _run_computation(comp)[comp.root.name]
    for idx in np.ndindex(*comp.root.shape.dims):
        got = {r for r in reads.get(tuple(idx), set()) if r[0] == 0}
        assert got == set(values[idx]), idx
    # input to output, memoized the same way, is the inverse relation
    pairs = {(d, a.map.evaluate(d, s, r)) for a in result.targets[0].maps for d, s, r in a.map.domain_points()}
    back = input_to_output_maps(comp, 0)
    assert not back.unsupported and all(v.proved for v in back.verdicts())
    inverse = {(a.map.evaluate(d, s, r), d) for a in back.targets[0].maps for d, s, r in a.map.domain_points()}
    assert inverse == pairs


def test_a_loop_body_met_from_two_whiles_is_composed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # two whiles with one body (a counter, an accumulator, an invariant array read at the counter): the
    # induction model composes the body's element once for both (hlo/loops.py through the memo of called
    # computations); the maps are those of each while analysed in a module of its own
    from test_hlo_while import _module

    from verified_indexing.hlo.fusion import analyze_module
    from verified_indexing.hlo.parser import parse_module

    one = _module(0, 6, "LT", 1)
    two = one.replace(
        "  l = (s32[], f32[4,3], f32[6,3]) while(init), condition=cond, body=body\n"
        "  ROOT h = f32[4,3] get-tuple-element(l), index=1\n",
        "  l = (s32[], f32[4,3], f32[6,3]) while(init), condition=cond, body=body\n"
        "  m = (s32[], f32[4,3], f32[6,3]) while(init), condition=cond, body=body\n"
        "  h = f32[4,3] get-tuple-element(l), index=1\n"
        "  g = f32[4,3] get-tuple-element(m), index=1\n"
        "  ROOT r = f32[4,3] add(h, g)\n")
    assert two != one
    walks = _walks(monkeypatch)
    both = analyze_module(parse_module(two), computation="main")
    assert walks.count("body") == 1, walks
    alone = analyze_module(parse_module(one), computation="main")
    want = {(t.name, str(a.map), a.over_approximation) for r in alone for t in r.targets for a in t.maps}
    got = {(t.name, str(a.map), a.over_approximation) for r in both for t in r.targets for a in t.maps}
    assert got == want and all(v.proved for r in both for v in r.verdicts())


def test_an_element_fed_by_another_changing_element_is_not_composed(monkeypatch: pytest.MonkeyPatch) -> None:
    # the accumulator reads x at the counter, and x changes in the body: the whole-loop model (marked), decided
    # from the graph before any composition of the body; the same maps as when the body is composed first
    from test_hlo_while import _module

    from verified_indexing.hlo import loops
    from verified_indexing.hlo.fusion import analyze_module
    from verified_indexing.hlo.parser import parse_module

    text = _module(0, 6, "LT", 1).replace("tuple(n, acc2, x)", "tuple(n, acc2, xn)").replace(
        "  n = s32[] add(", "  xn = f32[6,3] negate(x)\n  n = s32[] add(")
    walks = _walks(monkeypatch)
    quick = analyze_module(parse_module(text), computation="main")
    assert "body" not in walks, walks
    monkeypatch.setattr(loops, "_elements_reached", lambda body, name: None)  # compose the body first
    full = analyze_module(parse_module(text), computation="main")
    assert "body" in walks
    maps = [[(str(a.map), a.over_approximation) for t in r.targets for a in t.maps] for r in quick]
    assert maps == [[(str(a.map), a.over_approximation) for t in r.targets for a in t.maps] for r in full]
    assert any(a.over_approximation for r in quick for t in r.targets for a in t.maps)
