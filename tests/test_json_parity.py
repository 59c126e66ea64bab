"""Python and the command line write the same JSON bytes, for every command with --json (issue 28 item 3):
``verified_indexing.to_json_text(result)`` of the library's result (or the result's own ``to_json_text()``)
equals ``verified-indexing COMMAND ... --json --no-timing`` on the same input (the command line prints
every JSON object through the same serializer, serialize.json_text). A test below checks the list of
commands here is every command that has --json, so a new command cannot be left out."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from verified_indexing import parse_indexing_map, parse_map, parse_program, to_json_text
from verified_indexing.cli import build_parser, main

ROOT = Path(__file__).resolve().parent.parent
EX = ROOT / "examples"
SOFTMAX = EX / "jax_hlo" / "softmax.post.hlo"
TRANSPOSE = EX / "jax_hlo" / "transpose_021.post.hlo"
GATHER = EX / "jax_hlo" / "gather.post.hlo"
AUDIT = ROOT / "tests" / "hlo_corpus" / "audit"
MAP = "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 600], d1 in [0, 14]"
RULE = "(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)"
INVERTIBLE = "(d0, d1) -> (d0 + d1, d0), domain: d0 in [0, 3], d1 in [0, 3]"
COLLIDING = "(d0, d1) -> (d0 + d1), domain: d0 in [0, 3], d1 in [0, 3]"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A private proof cache (the same one for both sides: 'cached' is a timing field, left out anyway)."""
    monkeypatch.setenv("VERIFIED_INDEXING_CACHE", str(tmp_path / "proofs.sqlite"))
    monkeypatch.chdir(ROOT)


def _cli(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main([*argv, "--json", "--no-timing"])
    return out.getvalue()


@contextlib.contextmanager
def _library_engines() -> Iterator[None]:
    """The command line proves small domains with isl, the library by enumeration with numpy when it is
    installed (docs/simplifier.md): the library asked the command line's way."""
    from verified_indexing.engines import points

    before = points.set_enabled(False)
    try:
        yield
    finally:
        points.set_enabled(before)


def _show() -> tuple[str, str]:
    return to_json_text(parse_map(MAP), no_timing=True), _cli("show", "-e", MAP)


def _show_affine() -> tuple[str, str]:
    text = "affine_map<(d0, d1) -> (d1, d0)>"
    return to_json_text(parse_map(text), no_timing=True), _cli("show", "-e", text)


def _simplify() -> tuple[str, str]:
    from verified_indexing import simplify_with_report

    with _library_engines():
        rep = simplify_with_report(parse_indexing_map(MAP))
    return to_json_text(rep, no_timing=True), _cli("simplify", "-e", MAP)


def _check_rule() -> tuple[str, str]:
    from verified_indexing import check_rule

    v = check_rule(RULE, where="c0 > 0, c1 > 0")
    return to_json_text(v, "check-rule", no_timing=True), _cli("check-rule", RULE, "--where", "c0 > 0, c1 > 0")


def _check_rule_refuted() -> tuple[str, str]:
    from verified_indexing import check_rule

    rule, where = "x floordiv c0 -> x truncdiv c0", "c0 > 0"
    v = check_rule(rule, where=where)
    assert v.refuted
    return to_json_text(v, "check-rule", no_timing=True), _cli("check-rule", rule, "--where", where)


def _prove_equal() -> tuple[str, str]:
    from verified_indexing import prove_equal

    a, b = MAP, "(d0, d1) -> (d0 + d1 floordiv 16, d1), domain: d0 in [0, 600], d1 in [0, 14]"
    v = prove_equal(parse_indexing_map(a), parse_indexing_map(b))
    assert v.proved
    return to_json_text(v, "prove-equal", no_timing=True), _cli("prove-equal", "-e", a, "-e", b)


def _analyze() -> tuple[str, str]:
    from verified_indexing import analyze

    return analyze(SOFTMAX).to_json_text(no_timing=True), _cli("analyze", str(SOFTMAX))


def _analyze_results() -> tuple[str, str]:
    from verified_indexing import analyze_module, parse_module

    results = analyze_module(parse_module(GATHER.read_text(encoding="utf-8"), str(GATHER)))
    return to_json_text(results, no_timing=True), _cli("analyze", str(GATHER))


def _audit() -> tuple[str, str]:
    from verified_indexing import audit

    report = audit(AUDIT / "module.hlo", AUDIT / "claims.txt")
    assert to_json_text(report.results, no_timing=True) == report.to_json_text(no_timing=True)
    return report.to_json_text(no_timing=True), _cli("audit", str(AUDIT / "module.hlo"), str(AUDIT / "claims.txt"))


def _audit_kernels() -> tuple[str, str]:
    from verified_indexing.hlo.kernels import audit_dump

    return to_json_text(audit_dump(str(AUDIT / "kernels")), no_timing=True), _cli("audit-kernels",
                                                                                  str(AUDIT / "kernels"))


def _verify_cache() -> tuple[str, str]:
    from verified_indexing import default_cache
    from verified_indexing.engines.verify_cache import verify_cache

    main(["prove-equal", "-e", MAP, "-e", MAP, "--no-timing"])  # a row in the cache (proved)
    cache = default_cache()
    checks = verify_cache(cache, remove=False, timeout=10.0)
    assert checks, "the cache holds a proved row"
    python = to_json_text(checks, "verify-cache", no_timing=True, cache_path=cache.path)
    return python, _cli("verify-cache", "--dry-run")


def _fuse() -> tuple[str, str]:
    from verified_indexing import fuse

    path = EX / "mlir" / "real_module.mlir"
    result = fuse(path)
    assert len(result) > 1
    return result.to_json_text(no_timing=True), _cli("fuse", str(path))


def _fuse_one() -> tuple[str, str]:
    from verified_indexing import fuse

    path = EX / "mlir" / "transpose.mlir"
    return to_json_text(list(fuse(path)), no_timing=True), _cli("fuse", str(path))


def _fuse_reshape() -> tuple[str, str]:
    # pairs through a tensor.expand_shape / collapse_shape: the library finds and decides them as the command
    # line does (it did not: it had its own copy of the pair search, without them)
    from verified_indexing import fuse

    path = EX / "mlir" / "validate_mlir_reshape.mlir"
    result = fuse(path)
    assert any(r.through_reshape for r in result)
    return result.to_json_text(no_timing=True), _cli("fuse", str(path))


def _inline() -> tuple[str, str]:
    from verified_indexing import compute_inline

    path = EX / "cinn" / "collision.txt"
    rep = compute_inline(parse_program(path.read_text(encoding="utf-8"), str(path)), None)
    return to_json_text(rep, no_timing=True), _cli("inline", str(path))


def _inline_all() -> tuple[str, str]:
    from verified_indexing import inline_all

    path = EX / "cinn" / "reduction.txt"
    done = inline_all(parse_program(path.read_text(encoding="utf-8"), str(path)))
    return to_json_text(done, "inline", no_timing=True), _cli("inline", str(path), "--all")


def _fuse_epilogue() -> tuple[str, str]:
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue

    path, wrong = EX / "cinn" / "matmul_sub.txt", EX / "cinn" / "matmul_sub_fused_wrong.txt"
    rep = fuse_reduction_epilogue(parse_program(path.read_text(encoding="utf-8"), str(path)), "D",
                                  fused=parse_program(wrong.read_text(encoding="utf-8"), str(wrong)))
    return to_json_text(rep, no_timing=True), _cli("fuse-epilogue", str(path), "--block", "D", "--fused", str(wrong))


def _reverse_inline() -> tuple[str, str]:
    from verified_indexing.legality.reverse_inline import reverse_compute_inline

    path = EX / "cinn" / "reverse_inline.txt"
    rep = reverse_compute_inline(parse_program(path.read_text(encoding="utf-8"), str(path)), "D")
    return to_json_text(rep, "reverse-inline", no_timing=True), _cli("reverse-inline", str(path), "--block", "D")


def _invert(text: str) -> Callable[[], tuple[str, str]]:
    def run() -> tuple[str, str]:
        from verified_indexing import inverse

        m = parse_indexing_map(text)
        return to_json_text(inverse(m), no_timing=True, map=m), _cli("invert", "-e", text)

    return run


def _invert_affine() -> tuple[str, str]:
    from verified_indexing.serialize import invert_json

    text = "affine_map<(d0, d1) -> (d1, 0, d0)>"
    return to_json_text(invert_json(parse_map(text)), "invert", no_timing=True), _cli("invert", "-e", text)


def _utilization() -> tuple[str, str]:
    from verified_indexing import parse_module
    from verified_indexing.hlo.utilization import operand_utilization

    entries = operand_utilization(parse_module(GATHER.read_text(encoding="utf-8"), str(GATHER)))
    return to_json_text(entries, no_timing=True), _cli("utilization", str(GATHER))


def _tile() -> tuple[str, str]:
    from verified_indexing import parse_module
    from verified_indexing.hlo.utilization import tile_reads

    reads = tile_reads(parse_module(TRANSPOSE.read_text(encoding="utf-8"), str(TRANSPOSE)), [0, 0, 0], [1, 8, 4])
    python = to_json_text(reads, no_timing=True, offsets=[0, 0, 0], sizes=[1, 8, 4])
    return python, _cli("tile", str(TRANSPOSE), "--offsets", "0,0,0", "--sizes", "1,8,4")


def _coalescing() -> tuple[str, str]:
    from verified_indexing import parse_module
    from verified_indexing.hlo.coalescing import coalescing

    results = coalescing(parse_module(TRANSPOSE.read_text(encoding="utf-8"), str(TRANSPOSE)))
    return to_json_text(results, no_timing=True), _cli("coalescing", str(TRANSPOSE))


def _validate_mlir() -> tuple[str, str]:
    from verified_indexing.cli.validate_mlir import ENGINE_CAP_S
    from verified_indexing.mlir_driver import find_iree_opt, validate_mlir

    if find_iree_opt() is None:
        pytest.skip("IREE (iree-base-compiler, the mlir extra) is not installed")
    path = EX / "mlir" / "validate_mlir_outs_reduction.mlir"
    r = validate_mlir(path.read_text(encoding="utf-8"), str(path), timeout=ENGINE_CAP_S)
    assert math.isfinite(ENGINE_CAP_S) and r.fused
    return to_json_text(r, no_timing=True), _cli("validate-mlir", str(path))


def _validate_tvm() -> tuple[str, str]:
    pytest.importorskip("tvm")
    from verified_indexing.cli.validate_mlir import ENGINE_CAP_S
    from verified_indexing.tvm import validate_primitive

    path = EX / "tvm" / "tvm_chain.py"
    r = validate_primitive(path.read_text(encoding="utf-8"), "compute_inline", "B", timeout=ENGINE_CAP_S)
    return to_json_text(r, no_timing=True), _cli("validate-tvm", str(path), "--primitive", "compute_inline(B)")


CASES: dict[str, Callable[[], tuple[str, str]]] = {
    "show": _show, "show affine_map": _show_affine, "simplify": _simplify, "check-rule": _check_rule,
    "check-rule refuted": _check_rule_refuted, "prove-equal": _prove_equal, "analyze": _analyze,
    "analyze results": _analyze_results, "audit": _audit, "audit-kernels": _audit_kernels,
    "verify-cache": _verify_cache, "fuse": _fuse, "fuse one pair": _fuse_one,
    "fuse through a reshape": _fuse_reshape, "inline": _inline,
    "inline --all": _inline_all, "fuse-epilogue": _fuse_epilogue, "reverse-inline": _reverse_inline,
    "invert": _invert(INVERTIBLE), "invert refuted": _invert(COLLIDING), "invert affine_map": _invert_affine,
    "utilization": _utilization, "tile": _tile, "coalescing": _coalescing, "validate-mlir": _validate_mlir,
    "validate-tvm": _validate_tvm,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_python_writes_the_command_lines_bytes(name: str) -> None:
    python, cli = CASES[name]()
    data = json.loads(cli)
    assert data["command"] == name.split()[0] and "error" not in data, cli[:500]
    assert python == cli
    from test_cli_io import assert_valid  # the generated schema (jsonschema) and its types (msgspec, strict)

    assert_valid(data)


def test_every_command_with_json_is_here() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    with_json = {name for name, p in sub.choices.items() if "--json" in p._option_string_actions}
    assert with_json == {name.split()[0] for name in CASES}


def test_absent_values_are_null_in_both() -> None:
    from verified_indexing import check_rule

    v = check_rule(RULE, where="c0 > 0, c1 > 0")
    assert v.to_json()["reason"] == ""  # the object holds "" ...
    assert '"reason": null' in to_json_text(v, "check-rule")  # ... the one serializer writes null, as the CLI


def test_the_command_is_found_from_the_type_or_asked_for() -> None:
    from verified_indexing import check_rule

    with pytest.raises(ValueError, match="give the command"):
        to_json_text(check_rule("x -> x"))
    with pytest.raises(ValueError, match="give the command"):
        to_json_text([])
    with pytest.raises(ValueError, match="no command prints a int"):
        to_json_text(3)


def test_python_values_are_the_command_lines_json_read_back() -> None:
    """to_json_data (and an analysis's to_json()) is json.loads of the command's output: null, never ""."""
    from verified_indexing import analyze, check_rule, to_json_data

    def no_empty(v: object) -> bool:
        if isinstance(v, dict):
            return all(no_empty(x) for x in v.values())
        if isinstance(v, list):
            return all(no_empty(x) for x in v)
        return v != ""

    v = check_rule(RULE, where="c0 > 0, c1 > 0")
    cli = json.loads(_cli("check-rule", RULE, "--where", "c0 > 0, c1 > 0"))
    data = to_json_data(v, "check-rule", no_timing=True)
    assert data == {k: x for k, x in cli.items() if k not in ("schema", "command")} and data["reason"] is None
    a = analyze(SOFTMAX)
    cli = json.loads(_cli("analyze", str(SOFTMAX)))
    assert to_json_data(list(a), "analyze", no_timing=True) == {k: x for k, x in cli.items()
                                                                 if k not in ("schema", "command")}
    assert no_empty(a.to_json())


# -- analyze on what the command takes: a dump directory, --module, --epilogue, a .hlo.pb, --jobs ----------------
# The dump directories of tests/test_hlo_dumps.py (real jax dumps, written once a session): the library's
# analyze() goes through the command's own code (cli.analyze.analyze_inputs), so its JSON is the command's.


@pytest.fixture(scope="module")
def dumps(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    pytest.importorskip("jax")
    from test_hlo_dumps import make_dumps

    return make_dumps(tmp_path_factory)


def _hero(directory: Path) -> str:
    """A reduce inside a fusion of the softmax module (the name XLA gave it in this jax version)."""
    from verified_indexing.hlo.report import load_hlo

    path = next(p for p in sorted(directory.iterdir()) if "softmax" in p.name and p.name.endswith("after_optimizations.txt"))
    module = load_hlo(path.read_text(encoding="utf-8"), str(path))
    fused = {c.name for _, c in module.fusions()}
    return next(i.name for c in module.computations.values() if c.name in fused for i in c.instructions
                if i.opcode == "reduce")


DUMP_CASES: dict[str, tuple[Callable[[Path, Path], tuple[str, dict[str, object]]], list[str]]] = {
    # name: ((text dir, proto dir) -> (path, keyword arguments of analyze()), the command's extra arguments)
    "a dump directory": (lambda t, p: (str(t), {}), []),
    "a dump directory, --jobs 2": (lambda t, p: (str(t), {"jobs": 2}), ["--jobs", "2"]),
    "a module glob": (lambda t, p: (str(t), {"module": "*softmax*"}), ["--module", "*softmax*"]),
    "a glob on before-optimization files": (lambda t, p: (str(t), {"module": "*scale_shift.before_optimizations*"}),
                                            ["--module", "*scale_shift.before_optimizations*"]),
    "an epilogue": (lambda t, p: (str(t), {"epilogue": _hero(t)}), ["--epilogue", "HERO"]),
    "an epilogue, one module": (lambda t, p: (str(t), {"epilogue": _hero(t), "module": "jit_softmax"}),
                                ["--epilogue", "HERO", "--module", "jit_softmax"]),
    "a proto directory": (lambda t, p: (str(p), {}), []),
    "a .hlo.pb file": (lambda t, p: (str(sorted(p.glob("*softmax*after_optimizations.hlo.pb"))[0]), {}), []),
    "a .hlo.pb file, --computation ENTRY": (
        lambda t, p: (str(sorted(p.glob("*softmax*after_optimizations.hlo.pb"))[0]), {"computation": "ENTRY"}),
        ["--computation", "ENTRY"]),
}


@pytest.mark.parametrize("name", sorted(DUMP_CASES))
def test_analyze_of_what_the_command_takes_writes_its_bytes(name: str, dumps: tuple[Path, Path]) -> None:
    from verified_indexing import analyze

    make, extra = DUMP_CASES[name]
    path, kwargs = make(*dumps)
    argv = [a if a != "HERO" else str(kwargs["epilogue"]) for a in extra]
    python = analyze(path, **kwargs).to_json_text(no_timing=True)  # type: ignore[arg-type]
    cli = _cli("analyze", path, *argv)
    data = json.loads(cli)
    assert "error" not in data and data["results"], cli[:500]
    assert python == cli
    if "epilogue" in kwargs:
        assert data["epilogue"] and all(e["hero"] == kwargs["epilogue"] for e in data["epilogue"])
    if "module" in kwargs:
        assert len({r.get("file") for r in data["results"]}) == 1
    from test_cli_io import assert_valid

    assert_valid(data)


def test_analyze_of_a_dump_directory_names_modules_as_the_command(dumps: tuple[Path, Path]) -> None:
    # str() is the command's text, the notes its standard error lines, the exit code its exit code
    from test_cli_io import run

    from verified_indexing import analyze
    from verified_indexing._timing import set_show_timing

    text_dir, _ = dumps
    before = set_show_timing(False)
    try:
        a = analyze(text_dir, module="jit_*")
        code, out, err = run("analyze", str(text_dir), "--module", "jit_*", "--no-timing")
        assert (a.exit_code, str(a) + "\n") == (code, out)
    finally:
        set_show_timing(before)
    assert a.notes and all(n in err for n in a.notes)
    assert len(a.modules) == 3 and repr(a).startswith("<Analysis 3 modules: ")
    assert {r.module_name for r in a} == {"jit_scale_shift", "jit_matvec_sum", "jit_softmax"}


@pytest.mark.parametrize(("kwargs", "argv"), [
    ({"module": "jit_sofmax"}, ["--module", "jit_sofmax"]),
    ({"epilogue": "no_such_hero"}, ["--epilogue", "no_such_hero"]),
    ({"epilogue": "x", "direction": "input-to-output"}, ["--epilogue", "x", "--direction", "input-to-output"]),
    ({"computation": "nowhere", "module": "jit_softmax"}, ["--computation", "nowhere", "--module", "jit_softmax"]),
    ({"jobs": 0}, ["--jobs", "0"]),
    ({"operand": -1}, ["--operand", "-1"]),
    ({"direction": "sideways"}, ["--direction", "sideways"]),
])
def test_bad_arguments_are_the_command_s_messages(kwargs: dict[str, object], argv: list[str],
                                                  dumps: tuple[Path, Path]) -> None:
    from test_cli_io import run

    from verified_indexing import analyze
    from verified_indexing.errors import VerifiedIndexingError

    text_dir, _ = dumps
    with pytest.raises(VerifiedIndexingError) as caught:
        analyze(text_dir, **kwargs)  # type: ignore[arg-type]
    code, out, err = run("analyze", str(text_dir), *argv)
    message = str(caught.value)
    assert code in (2, 3) and out == "" and "Traceback" not in err
    assert err.rstrip("\n").endswith(message), (message, err)


def test_a_missing_path_is_bad_input() -> None:
    from verified_indexing import analyze
    from verified_indexing.errors import VerifiedIndexingError

    with pytest.raises(VerifiedIndexingError, match="no/such/dump: no such file or directory"):
        analyze("no/such/dump")


@pytest.mark.parametrize(("path", "kwargs", "argv"), [
    ("tests/hlo_corpus/audit/kernels", {"epilogue": "reduce_sum.0"}, ["--epilogue", "reduce_sum.0"]),
    ("tests/hlo_corpus/audit/kernels", {"module": "module_0028.*", "epilogue": "reduce_sum.0"},
     ["--module", "module_0028.*", "--epilogue", "reduce_sum.0"]),
    ("tests/hlo_corpus/audit/kernels", {"module": "module_00[13]*", "jobs": 1}, ["--module", "module_00[13]*",
                                                                                "--jobs", "1"]),
    ("examples/jax_hlo/softmax.post.hlo", {"computation": "ENTRY"}, ["--computation", "ENTRY"]),
])
def test_analyze_s_text_and_exit_code_are_the_command_s(path: str, kwargs: dict[str, object],
                                                        argv: list[str]) -> None:
    from test_cli_io import run

    from verified_indexing import analyze
    from verified_indexing._timing import set_show_timing

    before = set_show_timing(False)
    try:
        a = analyze(path, **kwargs)  # type: ignore[arg-type]
        code, out, _ = run("analyze", path, *argv, "--no-timing")
        assert (a.exit_code, str(a) + "\n") == (code, out)
    finally:
        set_show_timing(before)
    assert a.to_json_text(no_timing=True) == _cli("analyze", path, *argv)
