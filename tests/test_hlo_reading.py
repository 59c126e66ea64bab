"""Reading what XLA writes (issue 15): the corpus under tests/hlo_corpus (JAX
dumps before and after optimization, an --xla_dump_to directory, hand-written
modules in every layout XLA's parser accepts) parses with 0 errors and every
fusion is analyzed or its unsupported op named; non-HLO files get a pointed
message; the whitespace XLA allows is allowed."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from verified_indexing.cli import main
from verified_indexing.errors import ParseError
from verified_indexing.hlo.fusion import analyze_module
from verified_indexing.hlo.loader import dump_modules, split_modules
from verified_indexing.hlo.parser import parse_hlo_snippet, parse_module, parse_modules, parse_shape

CORPUS = Path(__file__).resolve().parent / "hlo_corpus"
NOT_HLO = {"stablehlo.mlir"}
HLO_FILES = sorted(
    [p for p in (CORPUS / "jax").iterdir()]
    + [p for p in (CORPUS / "handwritten").iterdir() if p.name not in NOT_HLO]
    + [p for p in (CORPUS / "dump").iterdir() if p.name.endswith("optimizations.txt")]
)


def test_corpus_size() -> None:
    assert len(HLO_FILES) >= 35


@pytest.mark.parametrize("path", HLO_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_parses_and_every_fusion_is_analyzed_or_named(path: Path) -> None:
    for module in parse_modules(path.read_text(), str(path)):
        computation = None if module.fusions() else module.entry_name
        results = analyze_module(module, computation=computation, verify=False)
        assert results
        for r in results:
            comp = module.computations[r.computation]
            named = {u.instruction for u in r.unsupported}
            assert all(u.reason for u in r.unsupported)
            for t in r.targets:
                assert t.maps or t.unsupported, (r.fusion, t.name)
                assert set(t.unsupported) <= named
            assert named <= set(comp.by_name) | {i.name for c in module.computations.values() for i in c.instructions}


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_stablehlo_gets_a_pointed_message() -> None:
    path = CORPUS / "handwritten" / "stablehlo.mlir"
    with pytest.raises(ParseError) as info:
        parse_module(path.read_text(), str(path))
    assert "StableHLO" in str(info.value) and "as_text(dialect='hlo')" in str(info.value)
    assert "pip install 'verified-indexing[jax]'" in str(info.value)
    # analyze converts it with jaxlib (tests/test_jax_front_door.py); the module is the unoptimized one.
    code, out, err = _cli("analyze", str(path))
    assert code in (0, 2) and "unoptimized HLO" in err and "computation main" in out


@pytest.mark.parametrize("path", sorted((CORPUS.parent.parent / "examples" / "mlir").glob("*.mlir")),
                         ids=lambda p: p.name)
def test_linalg_mlir_given_to_analyze_points_at_fuse(path: Path) -> None:
    code, _, err = _cli("analyze", str(path))
    assert code == 3 and "MLIR with Linalg ops" in err and "verified-indexing fuse" in err
    assert f"{path}:" in err  # the position
    code, _, _ = _cli("fuse", str(path))
    assert code != 3  # and the command it names reads it


def test_dump_side_files_get_a_pointed_message() -> None:
    for path in (CORPUS / "dump").iterdir():
        if path.name.endswith("buffer-assignment.txt"):
            with pytest.raises(ParseError, match="buffer-assignment file"):
                parse_module(path.read_text(), str(path))
    with pytest.raises(ParseError, match="debug_options"):
        parse_module("xla_dump_to: \"/tmp\"\nxla_dump_hlo_as_text: true\n")
    with pytest.raises(ParseError, match="LLVM IR"):
        parse_module("; ModuleID = 'x'\nsource_filename = \"x\"\n")


def test_dump_directory_reads_the_optimized_modules() -> None:
    selection = dump_modules(str(CORPUS / "dump"))
    assert len(selection.files) == 2 and all(f.endswith("cpu_after_optimizations.txt") for f in selection.files)
    assert "2 after-optimization modules" in selection.note and "2 before-optimization modules not read" in selection.note
    code, out, err = _cli("analyze", str(CORPUS / "dump"), "--no-verify")
    assert "2 after-optimization modules" in err
    # module_0006 has no fusion: each instruction of its entry, one op deep (a sort, read along the sorted
    # row); module_0010: its fusion.
    assert "computation main.3/sort.0: output to input" in out and "(d0, d1)[s0] -> (d0, s0)" in out
    assert "fusion wrapped_iota" in out
    assert code in (0, 2)


def test_split_input_file_keeps_positions() -> None:
    text = (CORPUS / "handwritten" / "split_input_file.hlo").read_text()
    pieces = split_modules(text)
    assert len(pieces) == 2 and all(len(p) == len(text) for p in pieces)
    assert [m.name for m in parse_modules(text)] == ["first", "second"]
    broken = text.replace("reverse(p0), dimensions={0}", "reverse(p0) junk")
    with pytest.raises(ParseError) as info:
        parse_modules(broken, "s.hlo")
    assert info.value.line == text[: text.index("reverse(p0)")].count("\n") + 1
    code, out, _ = _cli("analyze", str(CORPUS / "handwritten" / "split_input_file.hlo"))
    assert code == 0 and out.count("fusion f") == 2


@pytest.mark.parametrize(
    "text",
    [
        "a = f32[2,4] {1,0} parameter(0)\nROOT n = f32[2,4] negate(a)",
        "a = f32[2,4]\n  {1,0} parameter(0)\nROOT n = f32[2,4]\n  negate(a)",
        "a = f32[ 2 ,\n 4 ] parameter(0)\nROOT n = f32[2,4] negate(\n  a\n)",
        "a = f32[2,4] parameter(0)\nROOT n = f32[2,4] negate(a), metadata=\n  {op_name=\"x\"}\n  , sharding={replicated}",
        "a = f32[2,4] parameter(0)\nROOT n = negate(a)",
        "ROOT n = f32[2,4] negate(f32[2,4] parameter(0))",
        "ROOT n = f32[2,4] negate(b(f32[2,4]) parameter(0))",
        "a = b(f32[2,4]{1,0}) parameter(0)\nROOT n = f32[2,4] negate(a)",
    ],
)
def test_whitespace_and_forms_xla_allows(text: str) -> None:
    comp = parse_hlo_snippet(text)
    assert comp.root.opcode == "negate" and comp.root.shape.dims == (2, 4)
    params = [i for i in comp.instructions if i.opcode == "parameter"]
    assert len(params) == 1 and params[0].shape.dims == (2, 4)


def test_nested_operands_with_attributes() -> None:
    comp = parse_hlo_snippet(
        "p = f32[4,6] parameter(0)\n"
        "ROOT m = f32[4,6] multiply(f32[4,6] broadcast(f32[] constant(2)), dimensions={}, p), metadata={a=1}"
    )
    m = comp.root
    assert m.attributes == {"metadata": "{a=1}"}
    b = comp.by_name[m.operands[0]]
    assert b.opcode == "broadcast" and b.attributes == {"dimensions": "{}"} and m.operands[1] == "p"
    assert comp.by_name[b.operands[0]].literal == "2"


def test_inferred_shapes() -> None:
    comp = parse_hlo_snippet(
        "a = f32[3] parameter(0)\nb = s32[2,2] parameter(1)\nt = tuple(a, b)\n"
        "g = get-tuple-element(t), index=1\nc = compare(a, a), direction=LT\nROOT r = tuple(g, c)"
    )
    assert str(comp.by_name["t"].shape) == "(f32[3], s32[2,2])"
    assert str(comp.by_name["g"].shape) == "s32[2,2]" and str(comp.by_name["c"].shape) == "pred[3]"
    with pytest.raises(ParseError, match="cannot infer the shape"):
        parse_hlo_snippet("a = f32[3,4] parameter(0)\nROOT t = transpose(a), dimensions={1,0}")


def test_header_forms() -> None:
    legacy = parse_module("HloModule legacy:\n\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    assert legacy.name == "legacy"
    continued = parse_module(
        "HloModule m,\n  entry_computation_layout={(\n    f32[]{:T(128)}\n  )->f32[]},\n  is_scheduled=true\n"
        "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n"
    )
    assert continued.attributes["is_scheduled"] == "true"
    assert "T(128)" in continued.attributes["entry_computation_layout"]
    # A computation signature's result shape is followed by the body, not a layout.
    sig = parse_module("HloModule s\nENTRY e (p: f32[]) -> f32[] {\n  ROOT p = f32[] parameter(0)\n}\n")
    assert sig.entry.root.name == "p"
    assert parse_shape("(f32[2] {0},\n s32[])").tuple_shapes[0].layout == (0,)


def test_dump_directory_fallbacks(tmp_path: Path) -> None:
    import shutil

    for p in (CORPUS / "dump").glob("*before_optimizations.txt"):
        shutil.copy(p, tmp_path / p.name)
    selection = dump_modules(str(tmp_path))
    assert len(selection.files) == 2 and "no optimized ones" in selection.note
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = _cli("analyze", str(empty))
    assert code == 3 and "no HLO module in the directory" in err


def test_over_approximations_in_the_json_report() -> None:
    import json

    code, out, _ = _cli("analyze", str(CORPUS / "jax" / "scatter_set.post.hlo"), "--json", "--no-verify")
    data = json.loads(out)
    assert code == 0 and data["summary"]["over_approximations"] >= 2
    maps = [a for r in data["results"] for t in r["targets"] for a in t["maps"]]
    assert any(not a["exact"] and a["over_approximation"][0].startswith("scatter.1 (scatter): ") for a in maps)
    assert any(a["exact"] and a["over_approximation"] == [] for a in maps)


def test_summary_counts_the_fusions_of_every_module(tmp_path: Path) -> None:
    # Two modules with the same fusion names (a dump directory often holds such): counted per module.
    one = (CORPUS / "jax" / "attention.post.hlo").read_text()
    module = parse_module(one)
    n = len(module.fusions())
    code, out, _ = _cli("analyze", str(CORPUS / "jax" / "attention.post.hlo"))
    assert code == 0 and f"summary: {n} fusions" in out
    both = tmp_path / "both.hlo"
    both.write_text(one + "\n// -----\n" + one)
    code, out, _ = _cli("analyze", str(both))
    assert code == 0 and f"summary: {2 * n} fusions, {2 * n} computations" in out


def test_analyze_modules_on_a_process_pool_gives_the_same_output(tmp_path: Path) -> None:
    # A dump-like directory of several modules: --jobs 2 (spawned workers) prints what --jobs 1 prints.
    for name in ("attention", "sort", "topk", "cumsum", "scatter_add"):
        (tmp_path / f"{name}.hlo").write_text((CORPUS / "jax" / f"{name}.post.hlo").read_text())
    one = _cli("analyze", str(tmp_path), "--jobs", "1", "--json", "--no-timing")
    two = _cli("analyze", str(tmp_path), "--jobs", "2", "--json", "--no-timing")
    assert one[0] == two[0] == 0 and one[1] == two[1] and '"maps"' in one[1]
    code, _, err = _cli("analyze", str(tmp_path), "--jobs", "0")
    assert code == 3 and "--jobs" in err
