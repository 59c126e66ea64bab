"""Issue 27 item 1: a module without fusions answers one op deep by default, composition is bounded,
and under a budget what finished is reported with what was not reached."""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from verified_indexing.cli import main
from verified_indexing.hlo import fusion
from verified_indexing.hlo.fusion import analyze_module
from verified_indexing.hlo.ir import Module
from verified_indexing.hlo.ops import output_to_input
from verified_indexing.hlo.relation import relation, relations_equal
from verified_indexing.hlo.report import load_hlo
from verified_indexing.indexing_map import IndexingMap

# Two layers of the same shapes (the second's instructions share the first's signatures), a
# dynamic-slice (a runtime variable: never shared), an op read twice (multiply(x, x)), reduces
# calling two computations of the same structure under different names (shared).
MODULE = """HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

add2 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}

ENTRY main {
  p0 = f32[8,16] parameter(0)
  i = s32[] parameter(1)
  t1 = f32[16,8] transpose(p0), dimensions={1,0}
  r1 = f32[8,16] reshape(t1)
  m1 = f32[8,16] multiply(r1, r1)
  a1 = f32[8,16] add(m1, p0)
  t2 = f32[16,8] transpose(a1), dimensions={1,0}
  r2 = f32[8,16] reshape(t2)
  m2 = f32[8,16] multiply(r2, r2)
  a2 = f32[8,16] add(m2, a1)
  z = s32[] constant(0)
  ds = f32[8,4] dynamic-slice(a2, z, i), dynamic_slice_sizes={8,4}
  c = f32[] constant(0)
  red = f32[8] reduce(ds, c), dimensions={1}, to_apply=add
  ds2 = f32[8,4] slice(a2), slice={[0:8], [0:4]}
  red1 = f32[8] reduce(ds2, c), dimensions={1}, to_apply=add
  red2 = f32[8] reduce(ds2, c), dimensions={1}, to_apply=add2
  both = f32[8] add(red1, red2)
  sum = f32[8] add(both, red)
  ROOT out = f32[8,8] broadcast(sum), dimensions={0}
}
"""


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _module() -> Module:
    return load_hlo(MODULE, "<test>")


def test_default_is_each_instruction_one_op_deep_equal_to_its_own_analysis_and_to_the_per_op_model() -> None:
    module = _module()
    entry = module.computations[module.entry_name]
    results = analyze_module(module)
    with_operands = [inst for inst in entry.instructions if inst.operands]
    assert [r.computation for r in results] == [f"main/{inst.name}" for inst in with_operands]
    for r, inst in zip(results, with_operands):
        # the shared (renamed) analysis equals the instruction's own --instruction analysis ...
        (alone,) = analyze_module(module, instruction=inst.name)
        assert [(t.index, t.name, str(t.shape)) for t in r.targets] == [
            (t.index, t.name, str(t.shape)) for t in alone.targets
        ]
        for t, u in zip(r.targets, alone.targets):
            assert [str(a.map) for a in t.maps] == [str(a.map) for a in u.maps]
            assert [a.verdict.question for a in t.maps if a.verdict] == [a.verdict.question for a in u.maps if a.verdict]
            assert [a.over_approximation for a in t.maps] == [a.over_approximation for a in u.maps]
            assert all(a.verdict is not None and a.verdict.proved for a in t.maps)
        # ... and, an independent oracle, isl: the maps of each operand are the per-op model's
        models = output_to_input(inst, entry, 0)
        params = list(dict.fromkeys(inst.operands))
        for k, name in enumerate(inst.operands):
            (target,) = [t for t in r.targets if t.name == name]
            assert params.index(name) == target.index
            if not any(a.map.num_rt_vars for a in target.maps) and not models[k].num_rt_vars:
                assert any(relations_equal(relation(a.map), relation(models[k])) for a in target.maps)
    # the second layer's instructions were answered from the first's (the memo), the dynamic-slice was not
    assert any(r.computation == "main/m2" and r.seconds == 0.0 for r in results)
    assert next(r for r in results if r.computation == "main/ds").seconds > 0.0
    assert next(r for r in results if r.computation == "main/red2").seconds == 0.0


def test_computation_entry_composes_as_before() -> None:
    module = _module()
    (named,) = analyze_module(module, computation="main")
    (entry,) = analyze_module(module, computation="ENTRY")
    assert [str(a.map) for t in named.targets for a in t.maps] == [str(a.map) for t in entry.targets for a in t.maps]
    assert entry.computation == "main" and entry.num_maps >= 2
    code, out, _ = _cli("analyze", "-e", MODULE, "--computation", "ENTRY")
    code2, out2, _ = _cli("analyze", "-e", MODULE, "--computation", "main")
    assert code == code2 == 0 and out.splitlines()[:-1] == out2.splitlines()[:-1]
    assert "computation main: output to input" in out
    code, out, _ = _cli("analyze", "-e", MODULE)
    assert code == 0 and "computation main/ds: output to input" in out


def _chain(n: int) -> str:
    lines = ["p = f32[64] parameter(0)"]
    prev = "p"
    for k in range(n):
        lines.append(f"r{k} = f32[8,8] reshape({prev})")
        lines.append(f"t{k} = f32[8,8] transpose(r{k}), dimensions={{1,0}}")
        lines.append(f"f{k} = f32[64] reshape(t{k})")
        lines.append(f"s{k} = f32[64] slice(f{k}), slice={{[0:64]}}")
        prev = f"s{k}"
    lines.append(f"ROOT out = f32[32] slice({prev}), slice={{[1:64:2]}}")
    return "\n".join(lines) + "\n"


def _reads(m: IndexingMap) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
    """Every (output index, element read) of ``m``: the enumeration oracle."""
    out = set()
    dims = [range(v.bounds.lo, v.bounds.hi + 1) for v in m.dims]
    syms = [range(v.bounds.lo, v.bounds.hi + 1) for v in m.range_vars]
    for d in itertools.product(*dims):
        for s in itertools.product(*syms):
            if all(iv.lo <= e.evaluate(d, s) <= iv.hi for e, iv in m.constraints):
                out.add((d, tuple(r.evaluate(d, s) for r in m.results)))
    return out


def test_a_map_past_the_size_limit_is_a_marked_over_approximation(monkeypatch: pytest.MonkeyPatch) -> None:
    module = load_hlo(_chain(3), "<chain>")
    (exact,) = analyze_module(module, computation="ENTRY")
    (m_exact,) = exact.targets[0].maps
    assert not m_exact.over_approximation
    code, out, _ = _cli("analyze", "-e", _chain(3), "--computation", "ENTRY")
    assert code == 0 and "over-approximation" not in out
    monkeypatch.setattr(fusion, "SIZE_LIMIT", 8)
    (cut,) = analyze_module(module, computation="ENTRY")
    (m_cut,) = cut.targets[0].maps
    assert m_cut.over_approximation and "size limit (8)" in m_cut.over_approximation[0]
    assert m_cut.verdict is not None and m_cut.verdict.proved
    # sound: every read of the exact composition is among the cut map's (enumerated), and it claims more
    assert _reads(m_exact.map) < _reads(m_cut.map)
    code, out, _ = _cli("analyze", "-e", _chain(3), "--computation", "ENTRY", "--json")
    (amap,) = json.loads(out)["results"][0]["targets"][0]["maps"]
    assert code == 0 and not amap["exact"] and "size limit" in amap["over_approximation"][0]


def test_more_distinct_paths_than_the_limit_are_one_marked_over_approximation(monkeypatch: pytest.MonkeyPatch) -> None:
    text = """p = f32[16] parameter(0)
a = f32[8] slice(p), slice={[0:8]}
b = f32[8] slice(p), slice={[8:16]}
c = f32[8] slice(p), slice={[4:12]}
s = f32[8] add(a, b)
ROOT t = f32[8] add(s, c)
"""
    module = load_hlo(text, "<paths>")
    (exact,) = analyze_module(module, computation="ENTRY")
    assert len(exact.targets[0].maps) == 3 and not any(a.over_approximation for a in exact.targets[0].maps)
    monkeypatch.setattr(fusion, "PATHS_LIMIT", 2)
    (cut,) = analyze_module(module, computation="ENTRY")
    (m_cut,) = cut.targets[0].maps
    assert m_cut.paths == 3 and "more than 2 distinct composed maps" in m_cut.over_approximation[0]
    assert m_cut.verdict is not None and m_cut.verdict.proved
    union = set().union(*(_reads(a.map) for a in exact.targets[0].maps))
    assert union <= _reads(m_cut.map)


def test_when_the_budget_runs_out_what_finished_is_returned_and_the_rest_named(monkeypatch: pytest.MonkeyPatch) -> None:
    import verified_indexing.engines.deadline as deadline

    module = _module()
    full = analyze_module(module)
    calls = itertools.count()
    monkeypatch.setattr(deadline, "remaining", lambda timeout=float("inf"): 1.0 if next(calls) < 4 else 0.0)
    missed: list[str] = []
    part = analyze_module(module, not_reached=missed)
    assert 0 < len(part) < len(full)
    assert [r.computation for r in part] + missed == [r.computation for r in full]
    assert [str(a.map) for r in part for t in r.targets for a in t.maps] == [
        str(a.map) for r in full[: len(part)] for t in r.targets for a in t.maps
    ]
    # without not_reached, the budget's exception goes to the caller (the command line reports it)
    calls = itertools.count()
    with pytest.raises(deadline.BudgetExpired):
        analyze_module(module)
    # a composition stopped half-way is not reached as a whole
    calls = itertools.count()
    missed = []
    assert analyze_module(module, computation="ENTRY", not_reached=missed) == [] and missed == ["main"]


def test_timeout_prints_the_summary_names_what_was_not_reached_and_exits_2(tmp_path: Path) -> None:
    # 12,000 instructions of distinct shapes (nothing shared): seconds of proofs (a fresh proof cache)
    n = 6000
    text = f"p = f32[{6 * n + 6}] parameter(0)\n" + "".join(
        f"s{k} = f32[{6 * (k + 1)}] slice(p), slice={{[0:{6 * (k + 1)}]}}\nr{k} = f32[{k + 1},2,3] reshape(s{k})\n"
        for k in range(n)
    )
    every = [f"snippet/{x}{k}" for k in range(n) for x in "sr"]
    for k, form in enumerate(([], ["--json"])):
        env = dict(os.environ, VERIFIED_INDEXING_CACHE=str(tmp_path / f"cache{k}.sqlite"))
        proc = subprocess.run([sys.executable, "-m", "verified_indexing", "analyze", "-", "--timeout", "2", *form],
                              input=text, capture_output=True, text=True, timeout=60, env=env)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        if not proc.stdout:  # (a loaded machine: the budget ran out while the command line was being imported)
            assert "ran out before analyze finished" in proc.stderr
            continue
        assert "not reached (" in proc.stderr
        if form:  # the results finished and, under not_reached, every one not finished
            report = json.loads(proc.stdout)
            names = [r["computation"] for r in report["results"]] + report["not_reached"]
            assert names == every or report["not_reached"] == ["reading the input"]
        else:
            assert proc.stdout.strip().splitlines()[-1].startswith("summary: 0 fusions")
            done = proc.stdout.count("output to input")
            missed = int(proc.stderr.split("not reached (")[1].split(")")[0])
            assert done + missed == len(every) or "reading the input" in proc.stderr


FUSED = """HloModule f

fused_a {
  pa0 = f32[8,16] parameter(0)
  pa1 = f32[16] parameter(1)
  ta = f32[16,8] transpose(pa0), dimensions={1,0}
  ba = f32[16,8] broadcast(pa1), dimensions={0}
  ROOT ma = f32[16,8] multiply(ta, ba)
}

fused_b {
  qb0 = f32[8,16] parameter(0)
  qb1 = f32[16] parameter(1)
  tb = f32[16,8] transpose(qb0), dimensions={1,0}
  bb = f32[16,8] broadcast(qb1), dimensions={0}
  ROOT mb = f32[16,8] multiply(tb, bb)
}

ENTRY main {
  x = f32[8,16] parameter(0)
  w = f32[16] parameter(1)
  f1 = f32[16,8] fusion(x, w), kind=kLoop, calls=fused_a
  t = f32[8,16] transpose(f1), dimensions={1,0}
  ROOT f2 = f32[16,8] fusion(t, w), kind=kLoop, calls=fused_b
}
"""


@pytest.mark.parametrize("direction", ["output-to-input", "input-to-output"])
def test_fusions_of_the_same_structure_share_one_analysis_equal_to_each_ones_own(direction: str) -> None:
    module = load_hlo(FUSED, "<fused>")
    results = analyze_module(module, direction=direction)  # type: ignore[arg-type]
    assert [r.fusion for r in results] == (["f1", "f2"] if direction == "output-to-input" else ["f1"] * 2 + ["f2"] * 2)
    for r in results:
        (alone,) = [a for a in analyze_module(module, computation=r.computation, direction=direction)  # type: ignore[arg-type]
                    if a.source == r.source]
        assert r.computation == alone.computation
        assert [(t.index, t.name) for t in r.targets] == [(t.index, t.name) for t in alone.targets]
        assert [[str(a.map) for a in t.maps] for t in r.targets] == [[str(a.map) for a in t.maps] for t in alone.targets]
        assert [[a.verdict.question for a in t.maps if a.verdict] for t in r.targets] == [
            [a.verdict.question for a in t.maps if a.verdict] for t in alone.targets]
        assert all(a.verdict is not None and a.verdict.proved for t in r.targets for a in t.maps)
    assert any(r.fusion == "f2" and r.seconds == 0.0 for r in results)  # shared, renamed


def test_the_one_op_deep_maps_composed_along_a_chain_equal_the_composed_entry() -> None:
    """Where both apply (a chain: one path), composing the default's per-instruction maps from the root
    down gives the map of ``--computation ENTRY`` (isl: equal relations)."""
    from verified_indexing.indexing_map import compose

    module = load_hlo(_chain(2), "<chain>")
    by_name = {r.computation.split("/", 1)[1]: r for r in analyze_module(module)}
    entry = module.computations[module.entry_name]
    name = entry.root.name
    composed: IndexingMap | None = None
    while entry.by_name[name].opcode != "parameter":
        (target,) = by_name[name].targets
        (access,) = target.maps
        composed = access.map if composed is None else compose(composed, access.map)
        name = target.name
    ((whole,),) = [[a.map for a in t.maps] for t in analyze_module(module, computation="ENTRY")[0].targets]
    assert composed is not None and relations_equal(relation(composed), relation(whole))


def test_input_to_output_obeys_the_size_limit_too(monkeypatch: pytest.MonkeyPatch) -> None:
    module = load_hlo(_chain(3), "<chain>")
    (exact,) = analyze_module(module, computation="ENTRY", direction="input-to-output")
    (m_exact,) = exact.targets[0].maps
    assert not m_exact.over_approximation
    monkeypatch.setattr(fusion, "SIZE_LIMIT", 8)
    (cut,) = analyze_module(module, computation="ENTRY", direction="input-to-output")
    (m_cut,) = cut.targets[0].maps
    assert "size limit (8)" in m_cut.over_approximation[0]
    assert m_cut.verdict is not None and m_cut.verdict.proved
    assert _reads(m_exact.map) < _reads(m_cut.map)


def test_the_path_limit_cut_covers_every_path_s_domain(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths through pads read the operand at different output indices (their maps' domains differ):
    the one map standing for them reads, at every output index, what any of them reads there."""
    text = """p = f32[16] parameter(0)
c = f32[] constant(0)
a = f32[20] pad(p, c), padding=4_0
b = f32[20] pad(p, c), padding=0_4
d = f32[20] pad(p, c), padding=2_2
s = f32[20] add(a, b)
ROOT t = f32[20] add(s, d)
"""
    module = load_hlo(text, "<pads>")
    (exact,) = analyze_module(module, computation="ENTRY")
    maps = exact.targets[0].maps
    assert len(maps) == 3 and not any(a.over_approximation for a in maps)
    monkeypatch.setattr(fusion, "PATHS_LIMIT", 2)
    (cut,) = analyze_module(module, computation="ENTRY")
    (m_cut,) = cut.targets[0].maps
    assert m_cut.over_approximation and m_cut.verdict is not None and m_cut.verdict.proved
    assert set().union(*(_reads(a.map) for a in maps)) <= _reads(m_cut.map)
