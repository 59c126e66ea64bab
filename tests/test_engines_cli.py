"""The prove-equal command line, the SMT-LIB export, and the soundness guards
(evaluator disagreement, engine disagreement)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verified_indexing import parse_indexing_map
from verified_indexing.cli import main
from verified_indexing.engines import Verdict
from verified_indexing.engines.api import Question, answer, equality_question
from verified_indexing.engines.smtlib import check_smt2, to_smt2
from verified_indexing.engines.verdict import Counterexample

A = "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]"
B = "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]"
WRONG = "(d0, d1) -> (d0, d1 + 1), domain: d0 in [0, 6], d1 in [0, 14]"
REL_A = "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 1]"
REL_B = "(d0)[s0] -> (d0 + 1 - s0), domain: d0 in [0, 5], s0 in [0, 1]"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["prove-equal", *argv, "--no-cache"])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("engine", ["isl", "z3", "enum", "all"])
def test_proved_exit_0(capsys: pytest.CaptureFixture[str], engine: str) -> None:
    code, out, _ = _run(capsys, A, B, "--engine", engine)
    assert code == 0
    assert "Proved" in out


def test_refuted_exit_1_prints_alive2_style(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, A, WRONG, "--engine", "z3")
    assert code == 1
    lines = out.splitlines()
    # values, then source and target, then the differing subexpressions
    i_ex, i_src, i_tgt, i_sub = (
        lines.index(x)
        for x in ("Example:", *[ln for ln in lines if ln.startswith(("Source:", "Target:"))], "Subexpressions:")
    )
    assert i_ex < i_src < i_tgt < i_sub
    assert any(ln.strip().startswith("d0 = ") for ln in lines) and any(ln.strip().startswith("d1 = ") for ln in lines)


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, A, WRONG, "--json")
    data = json.loads(out)
    assert code == 1 and data["status"] == "refuted"
    ce = data["counterexample"]
    a, w = parse_indexing_map(A), parse_indexing_map(WRONG)
    point = [ce["values"]["d0"], ce["values"]["d1"]]
    assert a.evaluate(point) != w.evaluate(point)
    assert ce["source"] == list(a.evaluate(point)) and ce["target"] == list(w.evaluate(point))


def test_unknown_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, REL_A, REL_B, "--engine", "z3", "--relation")
    assert code == 2 and "Unknown" in out and "isl" in out
    code, _, _ = _run(capsys, REL_A, REL_B, "--engine", "isl", "--relation")
    assert code == 0
    # Without --relation, maps declaring the same variables are compared pointwise (the reason printed);
    # the note says the relations are equal all the same.
    code, out, err = _run(capsys, REL_A, REL_B)
    assert code == 1 and "pointwise-equal:" in out and "s0 = 0" in out
    assert "comparing pointwise: both maps declare the same variables (1 dim, 1 range variable)" in err
    assert "the relations are equal (--relation proves it)" in err


def test_unused_range_variable_with_another_range_is_refuted(capsys: pytest.CaptureFixture[str]) -> None:
    a = "(d0)[s0] -> (d0), domain: d0 in [0, 5], s0 in [0, 3]"
    b = "(d0)[s0] -> (d0), domain: d0 in [0, 5], s0 in [0, 7]"
    code, out, err = _run(capsys, a, b)
    assert code == 1 and "s0 = 4" in out and "target domain only" in out
    assert _run(capsys, a, b, "--relation")[0] == 0
    # Different numbers of range variables: the relations are compared (no note).
    code, _, err = _run(capsys, a, "(d0) -> (d0), domain: d0 in [0, 5]")
    assert code == 0 and "pointwise" not in err


def test_expressions_with_domain(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, _ = _run(capsys, "(d0 floordiv -4) * -4 + d0 mod -4", "d0", "--domain", "d0 in [-20, 20]")
    assert code == 0
    code, out, _ = _run(capsys, "d0 floordiv 4", "d0 ceildiv 4", "--domain", "d0 in [-20, 20], d0 mod 4 in [0, 0]")
    assert code == 0
    code, out, _ = _run(capsys, "d0 floordiv 4", "d0 ceildiv 4", "--domain", "d0 in [-20, 20]")
    assert code == 1 and "d0 floordiv 4" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["(d0) -> (d0 floordiv 0), domain: d0 in [0, 3]", B], "floordiv by zero"),
        (["(d0) -> (d0, domain: d0 in [0, 3]", B], "error"),
        (["d0", "d1", "--domain", "d0 in [0, 3]"], "d1 has no bounds"),
        (["d0", "d0", "--domain", "d0 in [0,"], "--domain"),
        (["affine_map<(d0) -> (d0)>", B], "no domain"),
        (["(d0) -> (d0), domain: d0 in [0, 3]", B], "different numbers of dimension variables"),
        ([A, B, "--timeout", "0"], "--timeout"),
    ],
)
def test_bad_input_exit_3(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    code, out, err = _run(capsys, *argv)
    assert code == 3
    assert message in out + err
    assert "Traceback" not in out + err


def test_map_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a.txt").write_text(A + "\n")
    (tmp_path / "b.txt").write_text(B + "\n")
    code, _, _ = _run(capsys, str(tmp_path / "a.txt"), str(tmp_path / "b.txt"))
    assert code == 0


def test_cache_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "cli.sqlite"
    assert main(["prove-equal", A, B, "--json", "--cache", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["cached"] is False
    assert main(["prove-equal", A, B, "--json", "--cache", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["cached"] is True


def test_smt2_export_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for other, expected, code in ((B, "unsat", 0), (WRONG, "sat", 1)):
        out_dir = tmp_path / expected
        assert _run(capsys, A, other, "--smt2", str(out_dir))[0] == code
        (path,) = out_dir.glob("*.smt2")
        text = path.read_text()
        assert text.startswith("; verified_indexing query")
        assert "; source: (d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16)" in text
        assert check_smt2(text) == expected


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (A, B),
        (A, WRONG),
        (
            "(d0) -> (d0 mod -3, d0 floordiv -3), domain: d0 in [-9, 9]",
            "(d0) -> (d0 - (d0 floordiv -3) * -3, d0 floordiv -3), domain: d0 in [-9, 9]",
        ),
        ("(d0) -> (d0 ceildiv -2), domain: d0 in [-9, 9]", "(d0) -> (-(d0 floordiv 2)), domain: d0 in [-9, 9]"),
        ("(d0) -> (d0 ceildiv -2), domain: d0 in [-9, 9]", "(d0) -> ((-d0) floordiv 2), domain: d0 in [-9, 9]"),
    ],
)
def test_smt2_same_verdict_as_z3(a: str, b: str) -> None:
    q = equality_question(parse_indexing_map(a), parse_indexing_map(b))
    assert isinstance(q, Question) and q.z3_query is not None
    verdict = answer(q, "z3")
    assert verdict.status in ("proved", "refuted")
    assert check_smt2(to_smt2(q.z3_query())) == ("unsat" if verdict.proved else "sat")


def _fake_question(results: dict[str, tuple[str, dict[str, object] | None, str]]) -> Question:
    def confirm(ev: dict[str, object]) -> Counterexample | None:
        return Counterexample("nonempty", (("d0", 1),)) if ev.get("ok") else None

    engines = {name: (lambda timeout, r=r: r) for name, r in results.items()}
    return Question("fake", "fake question", engines, confirm)  # type: ignore[arg-type]


def test_unconfirmed_counterexample_is_an_error() -> None:
    q = _fake_question({"isl": ("refuted", {"ok": False}, "")})
    v = answer(q, "isl")
    assert v.error and "encoding disagrees with evaluator" in v.reason
    assert v.counterexample is None


def test_engine_disagreement_is_an_error() -> None:
    q = _fake_question({"isl": ("proved", None, ""), "z3": ("refuted", {"ok": True}, ""), "enum": ("proved", None, "")})
    v = answer(q, "all")
    assert v.error and "ENGINES DISAGREE" in v.reason


def test_all_reports_unknown_only_when_every_engine_gives_up() -> None:
    q = _fake_question({"isl": ("unknown", None, "a"), "z3": ("proved", None, ""), "enum": ("unknown", None, "b")})
    assert answer(q, "all").proved
    q2 = _fake_question({"isl": ("unknown", None, "a"), "z3": ("unknown", None, "b")})
    v = answer(q2, "all")
    assert v.unknown and "a" in v.reason and "b" in v.reason


def test_undefined_and_known_empty() -> None:
    from verified_indexing import IndexingMap
    from verified_indexing.engines import prove_equal

    und, empty = IndexingMap.undefined(), IndexingMap.known_empty()
    assert prove_equal(und, parse_indexing_map(B)).error
    assert prove_equal(empty, empty).proved
    empty_domain = parse_indexing_map("(d0) -> (d0), domain: d0 in [0, 5], d0 mod 7 in [6, 6]")
    for engine in ("isl", "z3", "enum"):
        assert prove_equal(empty, empty_domain, engine=engine).proved
        v = prove_equal(parse_indexing_map(B), empty, engine=engine)
        assert v.refuted and v.counterexample is not None and v.counterexample.in_domain == "source"
        pt = [x for _, x in v.counterexample.values]
        assert parse_indexing_map(B).contains(pt)


def test_verdict_json_round_trip() -> None:
    from verified_indexing.engines import prove_equal

    v = prove_equal(parse_indexing_map(A), parse_indexing_map(WRONG))
    assert Verdict.from_json(json.loads(json.dumps(v.to_json()))) == v


def test_resource_limits_give_unknown() -> None:
    from verified_indexing.engines import prove_equal
    from verified_indexing.engines import z3_queries as zq

    a, b = parse_indexing_map(A), parse_indexing_map(B)
    status, values, reason = zq.solve(zq.pointwise_query(a, b, "q"), timeout=10.0, rlimit=1)
    assert status == "unknown" and values == [] and reason
    big_a = parse_indexing_map(
        "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 9999999], d1 in [0, 14]"
    )
    big_b = parse_indexing_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 9999999], d1 in [0, 14]")
    v = prove_equal(big_a, big_b, engine="enum")
    assert v.unknown and "enumeration limit" in v.reason
    # the other engines do not care about the box size
    assert prove_equal(big_a, big_b, engine="isl").proved and prove_equal(big_a, big_b, engine="z3").proved
    assert prove_equal(big_a, big_b, engine="all").proved


def test_enumeration_deadline() -> None:
    from verified_indexing.engines import enumerate as en

    a = parse_indexing_map("(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 600000], d1 in [0, 14]")
    b = parse_indexing_map("(d0, d1) -> (d0, d1), domain: d0 in [0, 600000], d1 in [0, 14]")
    with pytest.raises(en.TooLarge, match="out of time"):
        en.find_pointwise_difference(a, b, timeout=0.0)


def test_smt2_into_an_unwritable_directory_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    m = "(d0) -> (d0), domain: d0 in [0, 3]"
    code = main(["prove-equal", m, m, "--engine", "z3", "--no-cache", "--smt2", str(blocker / "sub")])
    err = capsys.readouterr().err
    assert code == 3 and "cannot write the query" in err and "Traceback" not in err


XLA_FULL = """(d0){rt0} -> (d0 + rt0),
domain:
d0 in [0, 3],
rt0 in [0, 5]
runtime variables:
rt0: %p = s32[2] parameter(1)
  (d0) -> (0),
  domain:
  d0 in [0, 3]
"""


def test_xla_full_printed_form_with_runtime_variables(capsys: pytest.CaptureFixture[str]) -> None:
    # XLA's printer adds a 'runtime variables:' section: read, and the bindings compared too.
    code, out, _ = _run(capsys, XLA_FULL, XLA_FULL)
    assert code == 0 and "runtime variable rt0 (A: p, B: p):" in out
    code, out, _ = _run(capsys, XLA_FULL, XLA_FULL.replace("(d0) -> (0)", "(d0) -> (1)"))
    assert code == 1 and "pointwise-equal: (d0) -> (0)" in out and "Refuted" in out
    code, out, _ = _run(capsys, XLA_FULL, XLA_FULL.replace("rt0: %p = s32[2]", "rt0: %q = s32[2]"))
    assert code == 1 and "bound to p in A and to q in B" in out
    plain = XLA_FULL.split("runtime variables")[0]
    code, out, _ = _run(capsys, XLA_FULL, plain)
    assert code == 3 and "rt0 is bound in A only" in out
