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


def test_each_nested_computation_is_analysed_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: dict[str, int] = {}
    real = fusion.output_to_input_maps

    def counting(comp, *args, **kwargs):  # type: ignore[no-untyped-def]
        calls[comp.name] = calls.get(comp.name, 0) + 1
        return real(comp, *args, **kwargs)

    monkeypatch.setattr(fusion, "output_to_input_maps", counting)
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


@pytest.mark.parametrize("direction", ["output-to-input", "input-to-output"])
def test_recursion_is_reported_as_a_fresh_analysis_would(direction: str) -> None:
    """Where a cycle is cut depends on the call path: an analysis that met a recursion is reused only
    on the same path. The oracle: each computation analysed alone, in a fresh call."""
    module = load_hlo(RECURSIVE)
    for r in fusion.analyze_module(module, direction=direction):  # type: ignore[arg-type]
        (alone,) = fusion.analyze_module(module, computation=r.computation, direction=direction)  # type: ignore[arg-type]
        assert _said(r) == _said(alone), r.computation
    w = next(r for r in fusion.analyze_module(module) if r.computation == "zwrap")
    assert w.unsupported and "rec_a calls itself" in w.unsupported[0].reason
