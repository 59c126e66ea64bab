"""The command line's front door: inputs (paths, -e, -, dump directories, the old
spelling), JSON that tools can rely on (schema key, nulls, --no-timing, JSON
errors, the shipped JSON Schema), -o, --batch (JSONL, process pool, Ray) and
--split-input-file."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from verified_indexing.cli import main
from verified_indexing.syntax import parse_indexing_map

ROOT = Path(__file__).resolve().parent.parent
DUMP = ROOT / "tests" / "hlo_corpus" / "dump"
AUDIT = ROOT / "tests" / "hlo_corpus" / "audit"
M = "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]"
IDENTITY = "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test (and every worker process it starts) uses its own proof cache."""
    monkeypatch.setenv("VERIFIED_INDEXING_CACHE", str(tmp_path / "proofs.sqlite"))
    monkeypatch.chdir(ROOT)


def run(*argv: str, stdin: str | None = None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(argv))
    finally:
        sys.stdin = saved
    return code, out.getvalue(), err.getvalue()


def schema() -> dict[str, Any]:
    text = resources.files("verified_indexing").joinpath("schema/verified-indexing-1.json").read_text("utf-8")
    data: dict[str, Any] = json.loads(text)
    return data


VALIDATOR = jsonschema.Draft202012Validator(schema())


def assert_valid(obj: Any) -> None:
    errors = sorted(VALIDATOR.iter_errors(obj), key=lambda e: list(e.path))
    assert not errors, f"{obj.get('command')}: {errors[0].message} at {list(errors[0].path)}"
    from verified_indexing.schema import types  # the types the schema is generated from (strict msgspec check)

    types.check(obj)


# -- inputs ---------------------------------------------------------------------------------------


def test_missing_file_is_bad_input_with_its_name() -> None:
    code, out, err = run("analyze", "nonexistent.hlo")
    assert code == 3 and out == ""
    assert err.strip() == "nonexistent.hlo: no such file (give inline text with -e/--expr TEXT)"
    for argv in (["show", "no/such/map.txt"], ["simplify", "nope.txt"], ["prove-equal", "a.txt", "b.txt"],
                 ["utilization", "x.hlo"], ["fuse", "x.mlir"], ["inline", "x.txt"], ["invert", "m.txt"]):
        code, _, err = run(*argv)
        assert code == 3 and "no such file" in err, argv


def test_missing_file_under_json_is_a_json_error_on_stdout() -> None:
    code, out, err = run("analyze", "nonexistent.hlo", "--json")
    assert code == 3 and err == ""
    data = json.loads(out)
    assert data["schema"] == "verified-indexing/1" and data["command"] == "analyze"
    assert data["error"] == {"kind": "bad-input", "message": "nonexistent.hlo: no such file (give inline text with "
                             "-e/--expr TEXT)", "position": None}
    assert_valid(data)


def test_parse_error_under_json_has_the_position() -> None:
    code, out, _ = run("show", "--json", "-e", "(d0) -> (d0 mod 0), domain: d0 in [0, 3]")
    assert code == 3
    data = json.loads(out)
    assert data["error"]["kind"] == "bad-input"
    assert data["error"]["position"] == {"source": "<argument>", "line": 1, "column": 13,
                                         "text": "(d0) -> (d0 mod 0), domain: d0 in [0, 3]"}
    assert_valid(data)
    code, out, _ = run("show", "--json", "--no-such-option", "3")  # argparse's own error: an unknown option
    assert code == 3 and json.loads(out)["error"]["kind"] == "bad-input"
    assert_valid(json.loads(out))


def test_a_dump_directory_is_its_after_optimization_modules() -> None:
    code, out, err = run("analyze", str(DUMP), "--json", "--no-timing")
    assert code == 0, err
    assert "2 after-optimization modules" in err
    whole = json.loads(out)["results"]
    # oracle: the picked files analyzed one by one, nothing else in the directory
    picked = sorted(DUMP.glob("*after_optimizations.txt"))
    assert len(picked) == 2
    one_by_one = []
    for f in picked:
        code, out, _ = run("analyze", str(f), "--json", "--no-timing")
        assert code == 0
        one_by_one += json.loads(out)["results"]
    # each result of the directory also names its module and file (issue 25 item 5); the rest is the file's own
    assert {r.pop("file") for r in whole} == {str(f) for f in picked} and all(r.pop("module") for r in whole)
    assert whole == one_by_one and whole


def test_utilization_of_a_dump_directory_is_the_modules_one_by_one() -> None:
    code, out, _ = run("utilization", str(DUMP), "--json", "--no-timing")
    assert code == 0
    expected = []
    for f in sorted(DUMP.glob("*after_optimizations.txt")):
        c, one, _ = run("utilization", str(f), "--json", "--no-timing")
        assert c == 0
        expected += json.loads(one)["operands"]
    assert json.loads(out)["operands"] == expected and expected


def test_internal_errors_under_json_are_json(monkeypatch: pytest.MonkeyPatch) -> None:
    import verified_indexing.cli.show as show

    def broken(args: Any) -> int:
        raise RuntimeError("boom")

    monkeypatch.setattr(show, "run", broken)
    code, out, err = run("show", "-e", M, "--json")
    assert code == 4 and err == ""
    data = json.loads(out)
    assert data["error"]["kind"] == "internal" and "RuntimeError: boom" in data["error"]["message"]
    assert_valid(data)


def test_a_directory_for_a_one_file_command_is_bad_input() -> None:
    code, _, err = run("show", "tests")
    assert code == 3 and err.strip() == "tests: is a directory (this command reads one file)"
    code, _, err = run("tile", str(DUMP), "--offsets", "0", "--sizes", "1")
    assert code == 3 and "holds 2 modules" in err
    code, _, err = run("audit", str(DUMP), str(AUDIT / "claims.txt"))
    assert code == 3 and "holds 2 modules and audit reads one" in err


def test_stdin_dash() -> None:
    code, out, err = run("show", "-", stdin="(d0) -> (d0 floordiv 8, d0 mod 8), domain: d0 in [0, 31]")
    assert (code, err) == (0, "")
    assert out.startswith("(d0) -> (d0 floordiv 8, d0 mod 8),")
    code, _, err = run("prove-equal", "-", "-", stdin="x")
    assert code == 3 and "only once" in err


def test_expr_and_the_old_spelling() -> None:
    code, new, err = run("show", "-e", M)
    assert (code, err) == (0, "")
    code, old, err = run("show", M)
    assert code == 0 and old == new
    assert err.count("\n") == 1 and "as text, not as a file" in err and "-e/--expr" in err
    # two inputs: paths first, then -e texts, in order
    code, out, _ = run("prove-equal", "-e", M, "-e", IDENTITY, "--json", "--no-cache")
    assert code == 0 and json.loads(out)["status"] == "proved"
    # an expression (prove-equal --domain) is text when it parses as one
    code, out, err = run("prove-equal", "d0", "d0 floordiv 1", "--domain", "d0 in [0, 9]", "--no-cache")
    assert code == 0 and "Proved" in out and err.count("note: reading") == 2


def test_wrong_number_of_inputs_prints_the_usage() -> None:
    code, _, err = run("prove-equal", "-e", M)
    assert code == 3 and err.startswith("usage: verified-indexing prove-equal") and "got 1" in err


def test_output_file(tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    code, out, _ = run("show", "-e", M, "--json", "-o", str(target))
    assert code == 0 and out == ""
    assert json.loads(target.read_text())["text"] == "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in " \
        "[0, 6], d1 in [0, 14]"
    # tile's --output is the tuple output's index; -o / --output-file is the file
    code, out, _ = run("tile", "examples/jax_hlo/transpose_021.post.hlo", "--offsets", "0,0,0", "--sizes", "1,8,4",
                       "--output", "0", "--output-file", str(target))
    assert code == 0 and out == "" and "[containment proved; exact]" in target.read_text()
    code, _, err = run("show", "-e", M, "-o", str(tmp_path / "no" / "dir" / "x"))
    assert code == 3 and "cannot write" in err


# -- JSON -----------------------------------------------------------------------------------------

JSON_COMMANDS = [
    ["show", "-e", M],
    ["show", "-e", "affine_map<(d0, d1) -> (d1, d0)>"],
    ["simplify", "-e", M],
    ["simplify", "--no-verify", "-e", "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [1, 3]"],
    ["check-rule", "(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)", "--where", "c0 > 0, c1 != 0"],
    ["check-rule", "x -> x + 1", "--domain", "x in [5, 1]"],
    ["prove-equal", "-e", M, "-e", IDENTITY],
    ["prove-equal", "-e", "d0 floordiv 4", "-e", "d0 ceildiv 4", "--domain", "d0 in [-8, 8]", "--engine", "all"],
    ["analyze", "examples/jax_hlo/transpose_021.post.hlo"],
    ["analyze", "examples/jax_hlo/gather.post.hlo"],
    ["audit", str(AUDIT / "module.hlo"), str(AUDIT / "claims.txt")],
    ["audit-kernels", str(AUDIT / "kernels")],
    ["invert", "-e", "(d0, d1) -> (d0 + d1, d0), domain: d0 in [0, 3], d1 in [0, 3]"],
    ["invert", "-e", "(d0, d1) -> (d0 + d1), domain: d0 in [0, 3], d1 in [0, 3]"],
    ["invert", "-e", "affine_map<(d0, d1) -> (d1, 0, d0)>"],
    ["fuse", "examples/mlir/transpose.mlir"],
    ["fuse", "examples/mlir/real_module.mlir"],
    ["inline", "examples/cinn/collision.txt"],
    ["inline", "examples/cinn/reduction.txt", "--all"],
    ["fuse-epilogue", "examples/cinn/matmul_sub.txt", "--block", "D", "--fused",
     "examples/cinn/matmul_sub_fused_wrong.txt"],
    ["reverse-inline", "examples/cinn/reverse_inline.txt", "--block", "D"],
    ["utilization", "examples/jax_hlo/gather.post.hlo"],
    ["tile", "examples/jax_hlo/transpose_021.post.hlo", "--offsets", "0,0,0", "--sizes", "1,8,4"],
    ["coalescing", "examples/jax_hlo/transpose_021.post.hlo"],
    ["verify-cache", "--dry-run"],
    ["validate-mlir", "examples/mlir/validate_mlir_chain.mlir"],  # proved (0); needs IREE's iree-opt
    ["validate-mlir", "examples/mlir/validate_mlir_outs_reduction.mlir"],  # MLIR's pass refuted (1)
    ["validate-tvm", "examples/tvm/tvm_chain.py", "--primitive", "compute_inline(B)"],  # proved (0); needs TVM
    ["validate-tvm", "examples/tvm/tvm_reverse_inline_second_reader.py", "--primitive", "reverse_compute_inline(C)"],
]


@pytest.mark.parametrize("argv", JSON_COMMANDS, ids=lambda a: " ".join(a)[:50])
def test_every_json_output_carries_the_schema_and_validates(argv: list[str]) -> None:
    from verified_indexing.mlir_driver import find_iree_opt

    if argv[0] == "validate-mlir" and find_iree_opt() is None:
        pytest.skip("IREE (iree-base-compiler, the mlir extra) is not installed")
    if argv[0] == "validate-tvm":
        pytest.importorskip("tvm")
    code, out, err = run(*argv, "--json")
    assert code in (0, 1), err
    data = json.loads(out)
    assert list(data)[:2] == ["schema", "command"]
    assert data["schema"] == "verified-indexing/1" and data["command"] == argv[0]
    assert_valid(data)

    def no_empty_strings(v: Any) -> None:
        if isinstance(v, dict):
            for x in v.values():
                assert x != "", f"an absent value printed as '' in {argv[0]}"
                no_empty_strings(x)
        elif isinstance(v, list):
            for x in v:
                no_empty_strings(x)

    no_empty_strings(data)


def test_the_schema_is_valid_and_rejects_wrong_objects() -> None:
    jsonschema.Draft202012Validator.check_schema(schema())
    code, out, _ = run("check-rule", "x -> x", "--json")
    assert code == 0
    good = json.loads(out)
    assert_valid(good)
    for bad in ({**good, "status": "maybe"}, {k: v for k, v in good.items() if k != "question"},
                {**good, "schema": "verified-indexing/0"}, {**good, "counterexample": 3},
                {"schema": "verified-indexing/1", "command": "show", "error": {"kind": "oops", "message": "m"}}):
        assert list(VALIDATOR.iter_errors(bad)), bad


@pytest.mark.parametrize(
    "argv",
    [["prove-equal", "-e", M, "-e", IDENTITY], ["analyze", "examples/jax_hlo/softmax.post.hlo"],
     ["simplify", "-e", M]],
    ids=lambda a: a[0],
)
def test_no_timing_makes_two_runs_byte_identical(argv: list[str]) -> None:
    first = run(*argv, "--json", "--no-timing")
    second = run(*argv, "--json", "--no-timing")  # prove-equal: the second answer comes from the cache
    assert first == second and first[0] == 0
    assert '"seconds' not in first[1] and '"cached"' not in first[1]
    assert '"seconds' in run(*argv, "--json")[1]


# -- batch ----------------------------------------------------------------------------------------

SIMPLIFY_LINES = [
    json.dumps({"map": M}),
    "not json",
    json.dumps({"map": "(d0) -> (d0 mod 0), domain: d0 in [0, 3]"}),
    "",
    json.dumps({"mapp": M}),
    json.dumps({"map": "(d0)[s0] -> (d0 * 4 + s0 floordiv 2), domain: d0 in [0, 3], s0 in [0, 7]"}),
    json.dumps({"map": "(d0) -> ((d0 floordiv 4) * 4 + d0 mod 4), domain: d0 in [-5, 9]"}),
]


def _records(out: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.splitlines()]


def test_simplify_batch_in_order_with_per_line_errors(tmp_path: Path) -> None:
    batch = tmp_path / "maps.jsonl"
    batch.write_text("\n".join(SIMPLIFY_LINES) + "\n")
    code, out, _ = run("simplify", "--batch", str(batch), "--jobs", "1", "--no-timing")
    assert code == 3  # the worst of the lines: three are bad input
    recs = _records(out)
    assert [r["line"] for r in recs] == [1, 2, 3, 5, 6, 7]  # blank line 4 skipped, order kept
    assert [r["exit_code"] for r in recs] == [0, 3, 3, 3, 0, 0]
    for r in recs:
        assert_valid(r)
    assert recs[1]["error"]["position"]["line"] == 2 and "not JSON" in recs[1]["error"]["message"]
    assert recs[2]["error"]["position"]["column"] == 13 and "mod by zero" in recs[2]["error"]["message"]
    assert recs[2]["error"]["position"]["source"] == f"map (line 3 of {batch})"
    assert "unknown field 'mapp'" in recs[3]["error"]["message"] and f"{batch}:5:" in recs[3]["error"]["message"]
    # oracle: each simplified map evaluates like its input at every point (plain evaluator)
    for r in (recs[0], recs[4], recs[5]):
        before = parse_indexing_map(r["result"]["input"]["text"])
        after = parse_indexing_map(r["result"]["map"]["text"])
        points = list(before.domain_points())
        assert points and all(before.evaluate(d, s, rt) == after.evaluate(d, s, rt) for d, s, rt in points)
    assert recs[0]["result"]["map"]["text"] == IDENTITY
    # jobs=2 (a spawn process pool) prints the same bytes as jobs=1 (this process)
    code2, out2, _ = run("simplify", "--batch", str(batch), "--jobs", "2", "--no-timing")
    assert (code2, out2) == (code, out)


def test_prove_equal_and_check_rule_batches_agree_with_single_runs(tmp_path: Path) -> None:
    pe = tmp_path / "pairs.jsonl"
    pairs = [{"a": M, "b": IDENTITY}, {"a": "d0 floordiv 4", "b": "d0 ceildiv 4", "domain": "d0 in [-8, 8]"},
             {"a": M}]
    pe.write_text("".join(json.dumps(p) + "\n" for p in pairs))
    code, out, _ = run("prove-equal", "--batch", str(pe), "--no-timing", "--jobs", "2")
    recs = _records(out)
    assert code == 3 and [r["exit_code"] for r in recs] == [0, 1, 3]
    assert "missing field 'b'" in recs[2]["error"]["message"]
    for r, p in zip(recs[:2], pairs[:2], strict=True):
        assert_valid(r)
        extra = ["--domain", p["domain"]] if "domain" in p else []
        c, single, _ = run("prove-equal", "-e", p["a"], "-e", p["b"], *extra, "--json", "--no-timing")
        assert c == r["exit_code"]
        assert {k: v for k, v in json.loads(single).items() if k not in ("schema", "command")} == r["result"]
    # the refutation's counterexample, checked with plain integers
    values = recs[1]["result"]["counterexample"]["values"]
    d0 = values["d0"]
    assert d0 // 4 != -((-d0) // 4)

    cr = tmp_path / "rules.jsonl"
    cr.write_text(
        json.dumps({"rule": "x mod c0 -> x", "where": "c0 > 9", "domain": "x in [0, 9]"}) + "\n"
        + json.dumps({"rule": "(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)", "where": "c0 > 0, c1 != 0"})
        + "\n" + json.dumps({"rule": "x -> x", "lemmas": "not a list"}) + "\n"
    )
    code, out, _ = run("check-rule", "--batch", str(cr), "--no-timing", "--jobs", "1")
    recs = _records(out)
    assert code == 3 and [r["exit_code"] for r in recs] == [0, 1, 3]
    assert recs[0]["result"]["status"] == "proved" and recs[1]["result"]["status"] == "refuted"
    v = recs[1]["result"]["counterexample"]["values"]
    x, c0, c1 = v["x"], v["c0"], v["c1"]
    assert c0 > 0 and c1 != 0 and (x // c0) // c1 != x // (c0 * c1)
    for r in recs:
        assert_valid(r)


def test_audit_batch_reads_texts(tmp_path: Path) -> None:
    module = (AUDIT / "module.hlo").read_text()
    claims = (AUDIT / "claims.txt").read_text()
    batch = tmp_path / "audit.jsonl"
    batch.write_text(json.dumps({"module": module, "claims": claims}) + "\n"
                     + json.dumps({"module": "HloModule m\nbroken", "claims": claims}) + "\n")
    code, out, _ = run("audit", "--batch", str(batch), "--no-timing", "--jobs", "1")
    recs = _records(out)
    single_code, single, _ = run("audit", str(AUDIT / "module.hlo"), str(AUDIT / "claims.txt"), "--json",
                                 "--no-timing")
    assert recs[0]["exit_code"] == single_code
    assert recs[0]["result"] == {k: v for k, v in json.loads(single).items() if k not in ("schema", "command")}
    assert recs[1]["exit_code"] == 3 and recs[1]["error"]["kind"] == "bad-input"
    assert code == 3
    for r in recs:
        assert_valid(r)


def test_a_worker_with_other_versions_refuses_to_answer() -> None:
    from verified_indexing.cli._batch import answer_argv, versions

    code, out = answer_argv((["check-rule", "--json", "--", "x -> x"], versions()))
    assert code == 0 and json.loads(out)["status"] == "proved"
    code, out = answer_argv((["check-rule", "--json", "--", "x -> x"], "verified-indexing 0.0.0; z3 0; isl 0"))
    assert code == 4 and json.loads(out)["error"]["kind"] == "internal"
    assert_valid(json.loads(out))


def test_batch_refuses_other_inputs_and_missing_files() -> None:
    code, out, _ = run("simplify", "--batch", "nope.jsonl")
    assert code == 3 and json.loads(out)["error"]["message"] == "--batch nope.jsonl: no such file"
    code, out, _ = run("check-rule", "x -> x", "--batch", "-", stdin="")
    assert code == 3 and "give no other input" in json.loads(out)["error"]["message"]


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed (extra 'distributed')")
def test_ray_backend_equals_the_process_pool(tmp_path: Path) -> None:
    import ray

    batch = tmp_path / "maps.jsonl"
    batch.write_text("\n".join(SIMPLIFY_LINES) + "\n")
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        with_ray = run("simplify", "--batch", str(batch), "--backend", "ray", "--no-timing")
    finally:
        ray.shutdown()
    pool = run("simplify", "--batch", str(batch), "--jobs", "2", "--no-timing")
    assert with_ray[:2] == pool[:2] and len(_records(pool[1])) == 6


# -- --split-input-file ---------------------------------------------------------------------------

CHUNKS = f"""{M}
// -----
(d0) -> (d0 mod 0),
domain: d0 in [0, 3]
// -----
(d0) -> ((d0 floordiv 4) * 4 + d0 mod 4), domain: d0 in [0, 9]
"""


def test_split_input_file_text_and_json(tmp_path: Path) -> None:
    f = tmp_path / "maps.txt"
    f.write_text(CHUNKS)
    code, out, err = run("simplify", str(f), "--split-input-file")
    assert code == 3
    assert out == (
        "(d0, d1) -> (d0, d1),\ndomain:\nd0 in [0, 6],\nd1 in [0, 14]\n// -----\n// -----\n"
        "(d0) -> (d0),\ndomain:\nd0 in [0, 9]\n"
    )
    assert err.startswith(f"{f}:3:13: error: mod by zero")  # the line in the whole file, not in the chunk
    code, out, _ = run("simplify", str(f), "--split-input-file", "--json", "--no-timing")
    recs = _records(out)
    assert code == 3 and [(r["chunk"], r["line"], r["exit_code"]) for r in recs] == [(1, 1, 0), (2, 3, 3), (3, 6, 0)]
    assert recs[1]["error"]["position"] == {"source": str(f), "line": 3, "column": 13, "text": "(d0) -> (d0 mod 0),"}
    for r in recs:
        assert_valid(r)


def test_split_input_file_names_the_chunk_of_an_error_without_a_position(tmp_path: Path) -> None:
    f = tmp_path / "pairs.txt"
    f.write_text("(d0) -> (d0), domain: d0 in [0, 3]\n// -----\naffine_map<(d0) -> (d0)>\n")
    code, out, _ = run("invert", str(f), "--split-input-file")
    assert code == 0 and out.count("// -----") == 1 and "MLIR isPermutation: true" in out
    f.write_text("(d0) -> (d0), domain: d0 in [0, 3]\n// -----\n\n(d0)[s0] -> (d0), domain: d0 in [0, 3], s0 in [0, 2]\n")
    code, out, _ = run("fuse", str(f), "--split-input-file", "--json")  # no linalg op: an error without a position
    recs = _records(out)
    assert code == 3 and [r["exit_code"] for r in recs] == [3, 3]
    assert recs[0]["error"]["message"].startswith(f"{f}: chunk 1 (line 1): no modelled linalg op")
    assert recs[1]["error"]["message"].startswith(f"{f}: chunk 2 (line 3): no modelled linalg op")
    code, _, err = run("fuse", str(f), "--split-input-file")
    assert code == 3 and f"{f}: chunk 2 (line 3): no modelled linalg op" in err


def test_split_input_file_on_hlo_lit_tests() -> None:
    lit = "tests/hlo_corpus/handwritten/split_input_file.hlo"
    code, out, _ = run("analyze", lit, "--split-input-file", "--json", "--no-timing")
    whole_code, whole, _ = run("analyze", lit, "--json", "--no-timing")
    recs = _records(out)
    assert len(recs) > 1 and code == whole_code
    # (the whole file's results also name their module and file: it holds several modules)
    named = [{k: v for k, v in x.items() if k not in ("module", "file")} for x in json.loads(whole)["results"]]
    assert [x for r in recs for x in r["result"]["results"]] == named


# -- the installed command ------------------------------------------------------------------------


def test_python_dash_m_and_the_console_script() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "verified_indexing", "analyze", "nonexistent.hlo", "--json"],
                          capture_output=True, text=True, env=env, cwd=ROOT)
    assert proc.returncode == 3 and json.loads(proc.stdout)["error"]["message"].startswith("nonexistent.hlo: no such")
    exe = Path(sys.executable).with_name("verified-indexing")
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "verified_indexing"]
    proc = subprocess.run([*cmd, "show", "-", "--json", "--no-timing"], input=M, capture_output=True, text=True,
                          env=env, cwd=ROOT)
    assert proc.returncode == 0 and json.loads(proc.stdout)["results"] == ["d0 + d1 floordiv 16", "d1 mod 16"]


# -- progress -------------------------------------------------------------------------------------


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from verified_indexing.parallel import progress

    tty = _Terminal()
    monkeypatch.setattr(sys, "stderr", tty)
    assert list(progress(iter(range(3)), 3, "rules", delay=0)) == [0, 1, 2]
    assert "rules:" in tty.getvalue() and "/3 [" in tty.getvalue()
    pipe = io.StringIO()
    monkeypatch.setattr(sys, "stderr", pipe)
    assert list(progress(iter(range(3)), 3, "rules", delay=0)) == [0, 1, 2]
    assert pipe.getvalue() == ""


def test_cli_json_reads_back_as_a_verdict() -> None:
    from verified_indexing.engines.verdict import Verdict

    code, out, _ = run("prove-equal", "-e", "d0 floordiv 4", "-e", "d0 ceildiv 4", "--domain", "d0 in [-8, 8]",
                       "--json")
    data = json.loads(out)
    assert code == 1 and data["reason"] is None
    v = Verdict.from_json(data)
    assert v.refuted and v.reason == "" and v.counterexample is not None


def test_every_json_command_has_a_schema_and_a_validated_example() -> None:
    import argparse

    from verified_indexing.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    with_json = {name for name, p in sub.choices.items() if "--json" in p._option_string_actions}
    assert with_json == set(schema()["$defs"]["command"])
    assert with_json == {argv[0] for argv in JSON_COMMANDS}


def test_batch_lines_end_at_newlines_only(tmp_path: Path) -> None:
    """A JSON string may hold U+2028/U+2029/U+0085 (str.splitlines() would cut the line there): one record
    per physical line, CRLF accepted."""
    batch = tmp_path / "odd.jsonl"
    lines = [json.dumps({"map": "(d0) -> (d0),\u2028 domain: d0 in [0, 3]"}, ensure_ascii=False),
             json.dumps({"map": M, "note\u2029": 1}, ensure_ascii=False), json.dumps({"map": M})]
    batch.write_text("\r\n".join(lines) + "\r\n", encoding="utf-8")
    code, out, _ = run("simplify", "--batch", str(batch), "--jobs", "1", "--no-timing")
    recs = _records(out)
    assert [r["line"] for r in recs] == [1, 2, 3]
    assert [r["exit_code"] for r in recs] == [0, 3, 0] and code == 3  # U+2028 is white space in a map
    assert recs[0]["result"]["map"]["text"] == "(d0) -> (d0), domain: d0 in [0, 3]"
    assert "unknown field" in recs[1]["error"]["message"]
    assert recs[2]["result"]["map"]["text"] == IDENTITY


def test_batch_values_that_start_with_a_dash_stay_values(tmp_path: Path) -> None:
    """Each field is passed as ``--flag=VALUE``: an expression or a domain starting with '-' is not an option.
    Oracle: the refuted pair's counterexample, evaluated with plain integers."""
    batch = tmp_path / "neg.jsonl"
    batch.write_text(json.dumps({"a": "-d0 + d0 * 2", "b": "d0", "domain": "d0 in [-4, 4]"}) + "\n"
                     + json.dumps({"a": "-d0", "b": "d0", "domain": "d0 in [-4, 4]"}) + "\n")
    code, out, _ = run("prove-equal", "--batch", str(batch), "--jobs", "1", "--no-timing", "--timeout", "5")
    recs = _records(out)
    assert [r["exit_code"] for r in recs] == [0, 1] and code == 1, out
    d0 = recs[1]["result"]["counterexample"]["values"]["d0"]
    assert -d0 != d0


@pytest.mark.parametrize("value", ["0", "-3", "two", "1.5"])
def test_jobs_must_be_a_positive_count(value: str) -> None:
    for argv in (["analyze", "examples/jax_hlo/softmax.post.hlo"], ["simplify", "--batch", "examples/batch/simplify.jsonl"]):
        code, _, err = run(*argv, "--jobs", value)
        assert code == 3 and f"--jobs: expected a positive number of worker processes, got '{value}'" in err


@pytest.mark.parametrize("argv", [
    ["simplify", "--timeout=--", "-e", M], ["prove-equal", "--domain=--", "-e", "d0", "-e", "d0"],
    ["analyze", "--jobs=--", "examples/jax_hlo/softmax.post.hlo"], ["check-rule", "--where=--", "x -> x"],
    ["check-rule", "--lemma=--", "x -> x"]])
def test_an_option_whose_value_is_two_dashes_is_checked_like_any_value(argv: list[str]) -> None:
    """Python 3.11's argparse stores [] for `--opt=--` (found by the fuzz campaign: `simplify -o--` raised a
    TypeError); the value is the text '--', checked by the option's type: bad input, exit 3."""
    code, _, err = run(*argv)
    assert code == 3 and "Traceback" not in err and "--" in err


def test_output_file_named_two_dashes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = run("simplify", "-o--", "-e", M)
    assert code == 0 and out == ""
    assert (tmp_path / "--").read_text().startswith("(d0, d1) -> (d0, d1)")


def test_batch_file_with_a_byte_order_mark(tmp_path: Path) -> None:
    batch = tmp_path / "bom.jsonl"
    batch.write_text("\ufeff" + json.dumps({"map": M}) + "\n", encoding="utf-8")
    code, out, _ = run("simplify", "--batch", str(batch), "--jobs", "1", "--no-timing")
    (rec,) = _records(out)
    assert code == 0 and rec["result"]["map"]["text"] == IDENTITY
