"""The front door for JAX users: ``verified_indexing.jax.analyze`` and ``analyze --jax``
on small real JAX programs (examples/jax/layer_norm.py), StableHLO text converted by
jaxlib, and ``--xla_dump_to`` directories.

The maps of every compiled fusion are checked against the numpy oracle of
tests/hlo_oracle.py run through the fused computation (the elements each output
element is computed from), not only "it ran". JAX compilations are few: one
module-scoped fixture per program.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from test_hlo_fusion import _reads_from_maps, _run_computation

import verified_indexing.jax as vi_jax
from verified_indexing.cli import main
from verified_indexing.errors import ParseError, VerifiedIndexingError
from verified_indexing.hlo.fusion import analyze_module
from verified_indexing.hlo.loader import is_stablehlo, stablehlo_to_hlo
from verified_indexing.hlo.parser import parse_hlo_snippet, parse_module
from verified_indexing.hlo.report import load_hlo_modules

jax = pytest.importorskip("jax")  # the `test` extra installs it; see pyproject.toml
jnp = jax.numpy

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "jax" / "layer_norm.py"
LAYER_NORM_ARGS = ("f32[8,128]", "f32[128]")
ATTENTION_ARGS = ("f32[8,16]", "f32[8,16]")


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def programs() -> dict[str, vi_jax.JaxAnalysis]:
    fn_ln = vi_jax.load_function(f"{EXAMPLE}:layer_norm")
    fn_att = vi_jax.load_function(f"{EXAMPLE}:attention_scores")
    return {
        "layer_norm": vi_jax.analyze(fn_ln, *(vi_jax.shape_spec(a) for a in LAYER_NORM_ARGS)),
        # real arrays work as example arguments too
        "attention_scores": vi_jax.analyze(fn_att, np.ones((8, 16), np.float32), np.ones((8, 16), np.float32)),
    }


def _map_texts(results: object) -> list[tuple[str, str, int, str]]:
    return sorted(
        (r.fusion or "", r.computation, t.index, a.map.format(one_line=True))
        for r in results  # type: ignore[attr-defined]
        for t in r.targets
        for a in t.maps
    )


@pytest.mark.parametrize("name", ["layer_norm", "attention_scores"])
def test_every_fusion_of_the_compiled_program_matches_the_numpy_oracle(
    programs: dict[str, vi_jax.JaxAnalysis], name: str
) -> None:
    analysis = programs[name]
    module = analysis.module
    fusions = module.fusions()
    assert len(fusions) >= 3, analysis.hlo  # XLA fused the program: several fusions to check
    assert {r.fusion for r in analysis.results} == {inst.name for inst, _ in fusions}
    checked = 0
    for r in analysis.results:
        comp = module.computations[r.computation]
        assert not r.unsupported, r.unsupported
        assert [t.name for t in r.targets] == [p.name for p in comp.parameters()]
        for t in r.targets:
            assert t.maps and all(a.verdict is not None and a.verdict.proved for a in t.maps), (r.fusion, t.name)
        reads = _reads_from_maps(r)
        values = _run_computation(comp)[comp.root.name]
        for idx in np.ndindex(*comp.root.shape.dims):
            assert reads.get(tuple(idx), set()) == set(values[idx]), (r.fusion, idx)
        checked += 1
    assert checked == len(fusions)


def test_known_maps_of_the_layer_norm(programs: dict[str, vi_jax.JaxAnalysis]) -> None:
    # Independent of the oracle: the scale (f32[128]) is read at the column, the row statistics at the row.
    texts = {m for *_, m in _map_texts(programs["layer_norm"].results)}
    assert "(d0, d1) -> (d1), domain: d0 in [0, 7], d1 in [0, 127]" in texts
    assert "(d0, d1) -> (d0), domain: d0 in [0, 7], d1 in [0, 127]" in texts


def test_cli_jax_prints_the_same_maps_as_the_api(programs: dict[str, vi_jax.JaxAnalysis]) -> None:
    argv = ["analyze", "--jax", f"{EXAMPLE}:layer_norm"]
    for a in LAYER_NORM_ARGS:
        argv += ["--args", a]
    code, out, err = _cli(*argv)
    assert code == 0, err
    analysis = programs["layer_norm"]
    for r in analysis.results:
        assert f"fusion {r.fusion} ({r.computation}): output to input" in out
        for t in r.targets:
            for a in t.maps:
                assert "\n".join("    " + line for line in str(a.map).splitlines()) in out
    assert f"summary: {len(analysis.results)} fusions" in out


def test_cli_jax_imports_module_function_from_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "vi_jax_probe_mod.py").write_text(
        "import jax.numpy as jnp\n\ndef flip(x):\n    return jnp.flip(x, axis=0) * 2\n"
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p not in ("", str(tmp_path))])
    code, out, err = _cli("analyze", "--jax", "vi_jax_probe_mod:flip", "--args", "f32[6]")
    assert code == 0, err
    assert "(d0) -> (-d0 + 5),\n    domain:\n    d0 in [0, 5]" in out


def test_cli_jax_loads_a_file_with_dataclasses_and_reports_import_errors(tmp_path: Path) -> None:
    good = tmp_path / "model.py"
    good.write_text(
        "import dataclasses\nimport jax.numpy as jnp\n\n@dataclasses.dataclass\nclass Cfg:\n    axis: int = 1\n\n"
        "def rev(x):\n    return jnp.flip(x, axis=Cfg().axis)\n"
    )
    code, out, err = _cli("analyze", "--jax", f"{good}:rev", "--args", "f32[2,3]")
    assert code == 0, err
    assert "(d0, d1) -> (d0, -d1 + 2)" in out
    bad = tmp_path / "broken.py"
    bad.write_text("raise RuntimeError('boom at import')\n")
    code, _, err = _cli("analyze", "--jax", f"{bad}:f", "--args", "f32[2]")
    assert code == 3 and "raised RuntimeError: boom at import" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--jax", "no_such_module_xyz:f", "--args", "f32[4]"], "no module named 'no_such_module_xyz'"),
        (["--jax", "nocolon"], "expected MODULE:FUNCTION"),
        (["--jax", f"{EXAMPLE}:nope", "--args", "f32[4]"], "has no attribute 'nope'"),
        (["--jax", f"{EXAMPLE}:jnp", "--args", "f32[4]"], "not a function"),
        (["--jax", "missing/file.py:f"], "no such file: missing/file.py"),
        (["--jax", f"{EXAMPLE}:layer_norm", "--args", "f32[8,128", "--args", "f32[128]"], "--args f32[8,128:1:"),
        (["--jax", f"{EXAMPLE}:layer_norm", "--args", "q7[8]", "--args", "f32[128]"], "unknown element type 'q7'"),
        (["--jax", f"{EXAMPLE}:layer_norm", "--args", "(f32[8], f32[8])"], "not a tuple shape"),
        (["--jax", f"{EXAMPLE}:layer_norm", "--args", "f32[8,128]", "--args", "f32[64]"], "JAX could not trace"),
        (["--jax", f"{EXAMPLE}:layer_norm", "--args", "f32[8,128]"], "JAX could not trace"),
        (["--args", "f32[8]", str(ROOT / "examples/jax_hlo/softmax.post.hlo")], "--args gives the argument shapes"),
        ([], "give one FILE or --jax"),
    ],
)
def test_cli_jax_bad_specs_exit_3_with_a_message(argv: list[str], message: str) -> None:
    code, out, err = _cli("analyze", *argv)
    assert code == 3, (out, err)
    assert message in err and "Traceback" not in err


@contextlib.contextmanager
def _without_jax(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("jax", "jaxlib", "jaxlib.xla_client"):
        monkeypatch.setitem(sys.modules, name, None)  # `import jax` raises ImportError
    yield


def test_without_jax_the_messages_say_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    with _without_jax(monkeypatch):
        code, _, err = _cli("analyze", "--jax", f"{EXAMPLE}:layer_norm", "--args", "f32[8,128]")
        assert code == 3 and "pip install 'verified-indexing[jax]'" in err
        code, _, err = _cli("analyze", str(ROOT / "tests/hlo_corpus/handwritten/stablehlo.mlir"))
        assert code == 3 and "pip install 'verified-indexing[jax]'" in err and "stablehlo.mlir:1:1:" in err


# -- StableHLO text -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def softmax_stablehlo() -> str:
    def f(x: jax.Array, w: jax.Array) -> jax.Array:
        return jax.nn.softmax(x @ w, axis=-1)

    spec = jax.ShapeDtypeStruct
    text: str = jax.jit(f).lower(spec((4, 8), jnp.float32), spec((8, 6), jnp.float32)).as_text()
    return text


def test_stablehlo_is_converted_and_its_entry_maps_match_the_oracle(softmax_stablehlo: str) -> None:
    assert is_stablehlo(softmax_stablehlo) and "stablehlo.dot_general" in softmax_stablehlo
    notes: list[str] = []
    (module,) = load_hlo_modules(softmax_stablehlo, "softmax.mlir", notes)
    assert notes and "unoptimized" in notes[0]
    assert not module.fusions()  # before XLA's passes: one graph, analysed as the entry computation
    (result,) = analyze_module(module, computation=module.entry_name)
    assert not result.unsupported
    comp = module.entry
    reads = _reads_from_maps(result)
    values = _run_computation(comp)[comp.root.name]
    assert comp.root.shape.dims == (4, 6)
    for idx in np.ndindex(4, 6):
        assert reads.get(tuple(idx), set()) == set(values[idx]), idx
    # x is read along the row (the dot's contraction), w along every column (the softmax's sums).
    x_reads = {i for k, i in reads[(1, 2)] if k == 0}
    assert x_reads == {(1, j) for j in range(8)}


def test_cli_reads_stablehlo_files_and_says_the_module_is_unoptimized(tmp_path: Path, softmax_stablehlo: str) -> None:
    path = tmp_path / "softmax.mlir"
    path.write_text(softmax_stablehlo)
    code, out, err = _cli("analyze", str(path), "--computation", "ENTRY")
    assert code == 0, err
    assert "unoptimized HLO (before XLA's fusion passes)" in err
    assert out.startswith("computation main") and "summary: 0 fusions, 1 computations, 3 maps" in out
    code, out, err = _cli("analyze", str(path))  # the default: each instruction one op deep
    assert code == 0, err
    assert "unoptimized HLO (before XLA's fusion passes), analyzed one instruction at a time" in err
    assert out.startswith("computation main") and "/" in out.splitlines()[0]


def test_bad_stablehlo_is_an_error_at_the_mlir_position(tmp_path: Path) -> None:
    text = (
        "module {\n  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
        "    %0 = stablehlo.sine %a : tensor<5xf32>\n    return %0 : tensor<4xf32>\n  }\n}\n"
    )
    with pytest.raises(ParseError) as info:
        stablehlo_to_hlo(text, "bad.mlir")
    assert (info.value.line, info.value.column) == (3, 25) and "tensor<5xf32>" in info.value.message
    path = tmp_path / "bad.mlir"
    path.write_text(text)
    code, _, err = _cli("analyze", str(path))
    assert code == 3 and f"{path}:3:25: error: jaxlib could not convert" in err


def test_only_stablehlo_modules_are_sent_to_the_converter() -> None:
    assert not is_stablehlo((ROOT / "examples" / "mlir" / "transpose.mlir").read_text())  # linalg
    # HLO whose attributes mention mhlo. stays HLO
    hlo = 'p = f32[4] parameter(0), frontend_attributes={mhlo.sharding="{replicated}"}\nROOT n = f32[4] negate(p)'
    assert not is_stablehlo(hlo) and not is_stablehlo("HloModule m\n" + hlo)
    assert parse_hlo_snippet(hlo).root.opcode == "negate"  # and is read as HLO (it used to be refused)
    with pytest.raises(ParseError, match="StableHLO"):  # a bare MLIR op line still gets the pointed message
        parse_hlo_snippet("%0 = stablehlo.sine %arg0 : tensor<4xf32>")
    assert is_stablehlo("#loc1 = loc(unknown)\nmodule @m {\n func.func @main() {\n stablehlo.return\n }\n}")


def test_shape_spec_builds_shape_dtype_structs() -> None:
    s = vi_jax.shape_spec("bf16[4,2]{1,0}")
    assert s.shape == (4, 2) and s.dtype == jnp.bfloat16
    assert vi_jax.shape_spec("s32[]").shape == ()
    with pytest.raises(ParseError):
        vi_jax.shape_spec("f32[<=4]")
    with pytest.raises(VerifiedIndexingError):
        vi_jax.load_function("os:sep")


# -- the dump directory flow of docs/for-xla-users.md ------------------------------------------


def test_dump_directory_of_the_example_program(tmp_path: Path, programs: dict[str, vi_jax.JaxAnalysis]) -> None:
    dump = tmp_path / "dump"
    env = {**os.environ, "XLA_FLAGS": f"--xla_dump_to={dump}", "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, str(EXAMPLE)], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    code, out, err = _cli("analyze", str(dump))
    assert code == 0, err
    assert "after-optimization modules" in err
    assert "fusion broadcast_multiply_fusion" in out and "0 unsupported ops" in out
    (post,) = dump.glob("*jit_layer_norm*after_optimizations.txt")
    module = parse_module(post.read_text(), str(post))
    # The dumped module is the one the API compiles: the same fusions and the same proven maps.
    assert _map_texts(analyze_module(module)) == _map_texts(programs["layer_norm"].results)
