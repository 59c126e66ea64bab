"""Nested fusions are analysed once per computation (issue: N nested fusions cost O(N^2)); the maps are
the same as without the memo."""

from __future__ import annotations

import pytest

import verified_indexing.hlo.fusion as fusion
from verified_indexing.hlo.report import load_hlo


def nested(n: int, layout: str = "") -> str:
    """c_n calls c_(n-1) ... calls c0, each reversing one dimension (alternately 0 and 1) first."""
    t = f"f32[4,6]{layout}"
    comps = [f"c0 {{\n  p = {t} parameter(0)\n  ROOT e = {t} exponential(p)\n}}\n"]
    for i in range(1, n + 1):
        comps.append(
            f"c{i} {{\n  p = {t} parameter(0)\n  r = {t} reverse(p), dimensions={{{i % 2}}}\n"
            f"  ROOT f = {t} fusion(r), kind=kLoop, calls=c{i - 1}\n}}\n"
        )
    comps.append(f"ENTRY main {{\n  p = {t} parameter(0)\n  ROOT f = {t} fusion(p), kind=kLoop, calls=c{n}\n}}\n")
    return "HloModule m\n" + "".join(comps)


def count_analyses(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Output-to-input analyses per computation from now on (the dict fills as they run)."""
    calls: dict[str, int] = {}
    real = fusion.output_to_input_maps

    def counting(comp, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls[comp.name] = calls.get(comp.name, 0) + 1
        return real(comp, *args, **kwargs)

    monkeypatch.setattr(fusion, "output_to_input_maps", counting)
    return calls


def test_each_nested_computation_is_analysed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = count_analyses(monkeypatch)
    module = load_hlo(nested(12))
    results = fusion.analyze_module(module)
    assert len(results) == 13
    # once, whether reached as a fusion of its own or as the callee of its caller: linear, not quadratic
    assert calls == {f"c{i}": 1 for i in range(13)}, calls


def test_memo_does_not_change_the_maps() -> None:
    module = load_hlo(nested(5))
    with_memo = fusion.analyze_module(module)
    token = fusion._CALLED.set(None)  # no memo: every nested computation analysed from scratch
    try:
        plain = [r for comp, name in [(c, i.name) for i, c in module.fusions()]
                 for r in fusion._analyze(module, comp, "output-to-input", None, True, True)]
    finally:
        fusion._CALLED.reset(token)
    assert [[a.map for t in r.targets for a in t.maps] for r in with_memo] == [
        [a.map for t in r.targets for a in t.maps] for r in plain
    ]
    # c5 reverses dims 1, 0, 1, 0, 1: dim 1 three times, dim 0 twice, proven
    top = next(r for r in with_memo if r.computation == "c5")
    (access,) = top.targets[0].maps
    assert access.verdict is not None and access.verdict.proved
    assert [access.map.evaluate([i, j]) for i, j in ((0, 0), (3, 5))] == [(0, 5), (3, 0)]


def test_edits_of_one_result_never_reach_the_memo() -> None:
    """Physical indices rename each result in place; a computation's result is also the memoised
    callee of the next one, which must still compose the logical maps. Each computation analysed
    alone (a fresh memo) is the oracle."""
    module = load_hlo(nested(4, "{0,1}"))
    together = fusion.analyze_module(module, physical=True)
    for r in together:
        (alone,) = fusion.analyze_module(module, computation=r.computation, physical=True)
        assert [a.map for t in r.targets for a in t.maps] == [a.map for t in alone.targets for a in t.maps]
    # physical indices do differ here (the layout swaps the dimensions), so a leak would show
    logical = fusion.analyze_module(module, computation="c4")[0]
    assert [a.map for t in logical.targets for a in t.maps] != [a.map for t in c4(together).targets for a in t.maps]


def c4(results: list[fusion.ComputationIndexing]) -> fusion.ComputationIndexing:
    return next(r for r in results if r.computation == "c4")


RECURSIVE = """HloModule rec2
rec_a {
  p = f32[4]{0} parameter(0)
  ROOT c = f32[4]{0} call(p), to_apply=rec_b
}
rec_b {
  p = f32[4]{0} parameter(0)
  ROOT c = f32[4]{0} fusion(p), kind=kLoop, calls=rec_a
}
zwrap {
  p = f32[4]{0} parameter(0)
  ROOT z = f32[4]{0} fusion(p), kind=kLoop, calls=rec_a
}
ok {
  p = f32[4]{0} parameter(0)
  ROOT e = f32[4]{0} exponential(p)
}
ENTRY main {
  a = f32[4]{0} parameter(0)
  f = f32[4]{0} fusion(a), kind=kLoop, calls=rec_a
  w = f32[4]{0} fusion(a), kind=kLoop, calls=zwrap
  o = f32[4]{0} fusion(a), kind=kLoop, calls=ok
  ROOT t = (f32[4]{0}, f32[4]{0}, f32[4]{0}) tuple(f, w, o)
}
"""


def _said(r: fusion.ComputationIndexing) -> tuple[object, ...]:
    return ([str(a.map) for t in r.targets for a in t.maps], [(u.instruction, u.reason) for u in r.unsupported])


MEMO_LEAK = """HloModule memo_leak
A {
  p = f32[4]{0} parameter(0)
  x = (f32[4]{0}, f32[4]{0}) fusion(p), kind=kLoop, calls=X
  g0 = f32[4]{0} get-tuple-element(x), index=0
  g1 = f32[4]{0} get-tuple-element(x), index=1
  ROOT a = f32[4]{0} add(g0, g1)
}
X {
  p = f32[4]{0} parameter(0)
  e = f32[4]{0} call(p), to_apply=E
  n = f32[4]{0} reverse(e), dimensions={0}
  ROOT t = (f32[4]{0}, f32[4]{0}) tuple(e, n)
}
E {
  p = f32[4]{0} parameter(0)
  r = f32[4]{0} reverse(p), dimensions={0}
  ROOT c = f32[4]{0} fusion(r), kind=kLoop, calls=A
}
ENTRY main {
  a = f32[4]{0} parameter(0)
  f = f32[4]{0} fusion(a), kind=kLoop, calls=A
  y = (f32[4]{0}, f32[4]{0}) fusion(a), kind=kLoop, calls=X
  ROOT o = f32[4]{0} get-tuple-element(y), index=1
}
"""

SELF_TOP = """HloModule self_top
c2 {
  p0 = f32[4]{0} parameter(0)
  k1 = (f32[4]{0}, f32[4]{0}) call(p0), to_apply=c2
  g = f32[4]{0} get-tuple-element(k1), index=0
  r = f32[4]{0} reverse(g), dimensions={0}
  ROOT t = (f32[4]{0}, f32[4]{0}) tuple(p0, r)
}
c1 {
  p0 = f32[4]{0} parameter(0)
  k = (f32[4]{0}, f32[4]{0}) call(p0), to_apply=c2
  ROOT g = f32[4]{0} get-tuple-element(k), index=1
}
ENTRY main {
  e = f32[4]{0} parameter(0)
  f1 = (f32[4]{0}, f32[4]{0}) fusion(e), kind=kLoop, calls=c2
  f2 = f32[4]{0} fusion(e), kind=kLoop, calls=c1
  ROOT o = (f32[4]{0}, f32[4]{0}) tuple(f1, f2)
}
"""


def dag(n: int, back: bool) -> str:
    """c_i calls c_(i+1) and fuses c_(i+2); with ``back``, the last one calls c0 (a cycle through all)."""
    t = "f32[4]{0}"
    comps = []
    for i in range(n):
        kids = [j for j in (i + 1, i + 2) if j < n] if not (back and i == n - 1) else [0]
        lines = [f"  p = {t} parameter(0)"]
        for k, j in enumerate(kids):
            lines.append(f"  k{k} = {t} call(p), to_apply=c{j}" if k == 0 else
                         f"  k{k} = {t} fusion(p), kind=kLoop, calls=c{j}")
        lines.append(f"  ROOT a = {t} add(k0, k1)" if len(kids) == 2 else
                     f"  ROOT a = {t} reverse(k0), dimensions={{0}}" if kids else f"  ROOT a = {t} negate(p)")
        comps.append(f"c{i} {{\n" + "\n".join(lines) + "\n}\n")
    return "HloModule dag\n" + "".join(comps) + f"ENTRY main {{\n  e = {t} parameter(0)\n" \
        f"  ROOT f = {t} fusion(e), kind=kLoop, calls=c0\n}}\n"


@pytest.mark.parametrize("text", [RECURSIVE, MEMO_LEAK, SELF_TOP, dag(6, True)])
@pytest.mark.parametrize("direction", ["output-to-input", "input-to-output"])
def test_recursion_is_reported_as_a_fresh_analysis_would(text: str, direction: str) -> None:
    """A computation on a cycle of the call graph is refused wherever it is called from, so each
    analysis is the same from every call path (and can be memoised). The oracle: each computation
    analysed alone, in a fresh call, with every option."""
    module = load_hlo(text)
    for operand, physical in ((None, False), (0, True)):
        for r in fusion.analyze_module(module, direction=direction, operand=operand,  # type: ignore[arg-type]
                                       physical=physical):
            alone = [x for x in fusion.analyze_module(module, computation=r.computation,
                                                      direction=direction,  # type: ignore[arg-type]
                                                      operand=operand, physical=physical)
                     if x.source == r.source]
            assert [_said(x) for x in alone] == [_said(r)], r.computation


def test_a_cycle_is_named_by_its_computations() -> None:
    w = next(r for r in fusion.analyze_module(load_hlo(RECURSIVE)) if r.computation == "zwrap")
    assert [u.reason for u in w.unsupported] == ["rec_a calls itself (recursion through rec_a, rec_b; at z)"]


def test_a_cycle_below_a_dag_costs_one_analysis_per_computation(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = count_analyses(monkeypatch)
    # every computation is on the cycle (2^25 call paths): each is analysed once, as a fusion of its own
    # (the entry's and the 23 inner fusions), and each of its calls is refused without descending
    results = fusion.analyze_module(load_hlo(dag(25, True)))
    assert len(results) == 24 and all(r.unsupported for r in results)
    assert max(calls.values()) == 1, calls


def test_input_to_output_through_a_dag_analyses_each_computation_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: dict[tuple[str, int], int] = {}
    real = fusion.input_to_output_maps

    def counting(comp, parameter, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls[(comp.name, parameter)] = calls.get((comp.name, parameter), 0) + 1
        return real(comp, parameter, *args, **kwargs)

    monkeypatch.setattr(fusion, "input_to_output_maps", counting)
    module = load_hlo(dag(25, False))  # 2^25 call paths, no cycle
    results = fusion.analyze_module(module, direction="input-to-output")
    assert len(results) == 24 and max(calls.values()) <= 2, calls  # its own job, and once as a callee
    monkeypatch.undo()
    # the oracle: each computation analysed alone, in a fresh call
    for r in results[:6]:
        (alone,) = fusion.analyze_module(module, computation=r.computation, direction="input-to-output")
        assert _said(alone) == _said(r)
