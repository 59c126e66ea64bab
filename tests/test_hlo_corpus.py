"""The real JAX dumps of ../shared/corpus/jax_hlo: every fusion of every optimized
module gets maps for all its parameters (or a named unsupported op), every map
proven; the maps agree with the numpy oracle run through the fused computation;
the `analyze` command on each file."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
from test_hlo_fusion import _ELEMENTWISE, _reads_from_maps, _run_computation

from verified_indexing.cli import main
from verified_indexing.hlo.fusion import analyze_module, output_to_input_maps
from verified_indexing.hlo.parser import parse_module

ROOT = Path(__file__).resolve().parent.parent
_SHARED = ROOT.parent / "shared" / "corpus" / "jax_hlo"
CORPUS_DIR = _SHARED if _SHARED.is_dir() else ROOT / "examples" / "jax_hlo"
POST = sorted(CORPUS_DIR.glob("*.post.hlo"))
PRE = sorted(CORPUS_DIR.glob("*.pre.hlo"))


def test_corpus_has_both_kinds() -> None:
    assert len(POST) >= 10 and len(PRE) == len(POST)


@pytest.mark.parametrize("path", POST, ids=lambda p: p.name)
def test_every_fusion_gets_maps_for_every_parameter(path: Path) -> None:
    module = parse_module(path.read_text(), str(path))
    fusions = module.fusions()
    results = analyze_module(module)
    assert {r.fusion for r in results} == {inst.name for inst, _ in fusions}
    for r in results:
        comp = module.computations[r.computation]
        assert [t.name for t in r.targets] == [p.name for p in comp.parameters()]
        named = {u.instruction for u in r.unsupported}
        for t in r.targets:
            assert t.maps or t.unsupported, f"{r.fusion}: no map and no reason for {t.name}"
            assert set(t.unsupported) <= named
            for a in t.maps:
                # Every map reads indices inside the parameter's shape (isl-free check by interval bounds).
                assert a.map.num_results == len(t.shape.dims)
                assert a.verdict is not None and a.verdict.proved, a.verdict
            for v in (m for a in t.maps for m in a.merges):
                assert v.proved


@pytest.mark.parametrize("path", PRE, ids=lambda p: p.name)
def test_pre_optimization_entry_is_analyzed_or_named(path: Path) -> None:
    module = parse_module(path.read_text(), str(path))
    (result,) = analyze_module(module, computation=module.entry_name)
    for t in result.targets:
        assert t.maps or t.unsupported
        assert all(a.verdict is not None and a.verdict.proved for a in t.maps)
    for u in result.unsupported:
        assert u.instruction in module.entry.by_name and u.reason


def _oracle_fusions() -> list[tuple[str, str]]:
    out = []
    for path in POST:
        module = parse_module(path.read_text(), str(path))
        for inst, comp in module.fusions():
            ops = {i.opcode for i in comp.instructions}
            movement = {"parameter", "constant", "broadcast", "transpose", "reverse", "slice", "reshape", "bitcast",
                        "concatenate", "pad", "reduce", "reduce-window", "dot"}
            if ops <= movement | _ELEMENTWISE and comp.root.shape.num_elements() <= 1024:
                out.append((path.name, inst.name))
    return out


@pytest.mark.parametrize(("file", "fusion"), _oracle_fusions())
def test_corpus_fusion_maps_match_the_numpy_oracle(file: str, fusion: str) -> None:
    module = parse_module((CORPUS_DIR / file).read_text())
    comp = next(c for inst, c in module.fusions() if inst.name == fusion)
    result = output_to_input_maps(comp, module=module)
    reads = _reads_from_maps(result)
    values = _run_computation(comp)[comp.root.name]
    has_pad = any(i.opcode == "pad" for i in comp.instructions)
    for idx in np.ndindex(*comp.root.shape.dims):
        got, want = reads.get(tuple(idx), set()), set(values[idx])
        if has_pad:
            # The spec's pad map reads the padding value everywhere (an over-approximation).
            assert want <= got
            assert {x for x in got if x[1]} == {x for x in want if x[1]}
        else:
            assert got == want, (fusion, idx)


def test_oracle_covers_several_corpus_fusions() -> None:
    assert len(_oracle_fusions()) >= 10


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("path", POST, ids=lambda p: p.name)
def test_analyze_cli_on_corpus(path: Path) -> None:
    code, out, err = _cli("analyze", str(path))
    assert code == 0, err
    module = parse_module(path.read_text())
    assert out.count("\nfusion ") + out.startswith("fusion ") == len(module.fusions())
    last = out.strip().splitlines()[-1]
    assert last.startswith(f"summary: {len(module.fusions())} fusions, ")
    assert "0 unsupported ops" in last
    code, out, _ = _cli("analyze", str(path), "--json", "--no-verify")
    data = json.loads(out)
    assert code == 0 and data["summary"]["proofs"] == 0
    assert len(data["results"]) == len(module.fusions())
