"""Truncated division (issue 28 item 7): ``truncdiv``/``truncmod`` with C's semantics (round toward
zero; the remainder's sign follows the dividend). One definition each, pinned against each other on
random inputs: the evaluator (expr.trunc_div/trunc_mod, on magnitudes), an exact-rational reference,
z3's own encoding (Z3Encoder.truncdiv/truncmod, not through floor division), isl's own truncating
division (PwAff.tdiv_q/tdiv_r), and the map language's floor form (expr.truncdiv_expr), which is also
proven equal to z3's truncation for every positive divisor and to isl's on a domain. Rules with
truncdiv: one proved, one refuted with a confirmed counterexample; check-rule --smt2."""

from __future__ import annotations

import contextlib
import io
import math
from fractions import Fraction
from pathlib import Path

import islpy as isl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing.cli import main
from verified_indexing.engines.isl import to_isl_map
from verified_indexing.engines.smtlib import check_smt2
from verified_indexing.engines.z3 import Z3Encoder
from verified_indexing.errors import ZeroDivisorError
from verified_indexing.expr import Dim, floor_div, trunc_div, trunc_mod, truncdiv_expr, truncmod_expr
from verified_indexing.proofs.user_rule import check_user_rule
from verified_indexing.syntax import parse_indexing_map

ints = st.integers(-10**6, 10**6)
divisors = st.integers(-1000, 1000).filter(lambda b: b != 0)


def _reference(a: int, b: int) -> tuple[int, int]:
    q = math.trunc(Fraction(a, b))
    return q, a - b * q


@given(ints, divisors)
def test_evaluator_is_c_division(a: int, b: int) -> None:
    q, r = trunc_div(a, b), trunc_mod(a, b)
    assert (q, r) == _reference(a, b)
    assert a == b * q + r and abs(r) < abs(b) and (r == 0 or (r > 0) == (a > 0))


def test_c_examples() -> None:  # C99 6.5.5: (a/b)*b + a%b == a, truncation toward zero
    assert [trunc_div(a, b) for a, b in ((7, 3), (-7, 3), (7, -3), (-7, -3))] == [2, -2, -2, 2]
    assert [trunc_mod(a, b) for a, b in ((7, 3), (-7, 3), (7, -3), (-7, -3))] == [1, -1, 1, -1]
    with pytest.raises(ZeroDivisorError):
        trunc_div(1, 0)


@settings(max_examples=40)
@given(ints, divisors)
def test_z3_encoding_has_the_one_solution_the_evaluator_gives(a: int, b: int) -> None:
    enc = Z3Encoder()
    z3 = enc.z3
    x, y = enc.int_var("a"), enc.int_var("b")
    q, r = enc.truncdiv(x, y), enc.truncmod(x, y)
    s = z3.Solver(ctx=enc.ctx)
    s.add(*enc.side_conditions, x == a, y == b)
    assert s.check() == z3.sat
    m = s.model()
    assert (m.eval(q).as_long(), m.eval(r).as_long()) == (trunc_div(a, b), trunc_mod(a, b))
    s.add(z3.Or(q != trunc_div(a, b), r != trunc_mod(a, b)))
    assert s.check() == z3.unsat  # the only solution


@settings(max_examples=60)
@given(ints, divisors)
def test_isl_truncation_agrees(a: int, b: int) -> None:
    ctx = isl.Context()
    pa = isl.PwAff.read_from_str(ctx, "{ [x] -> [(x)] }")
    pb = isl.PwAff.read_from_str(ctx, f"{{ [x] -> [({b})] }}")
    point = isl.Set.read_from_str(ctx, f"{{ [{a}] }}")
    for got, want in ((pa.tdiv_q(pb), trunc_div(a, b)), (pa.tdiv_r(pb), trunc_mod(a, b))):
        image = got.as_map().intersect_domain(point).range()
        assert image == isl.Set.read_from_str(ctx, f"{{ [{want}] }}"), (a, b)


@given(ints, divisors)
def test_map_floor_form_is_the_evaluator(a: int, b: int) -> None:
    assert truncdiv_expr(Dim(0), b).evaluate([a]) == trunc_div(a, b)
    assert truncmod_expr(Dim(0), b).evaluate([a]) == trunc_mod(a, b)


@pytest.mark.parametrize("c", [1, 3, -3, 8, -7])
def test_map_floor_form_equals_isl_truncation_on_a_domain(c: int) -> None:
    """isl proves the parsed map (floor form) equal to the relation of isl's own tdiv_q/tdiv_r."""
    m = parse_indexing_map(f"(d0) -> (d0 truncdiv {c}, d0 truncmod {c}), domain: d0 in [-50, 50]")
    ours = to_isl_map(m)
    ctx = ours.get_ctx()
    x = isl.PwAff.read_from_str(ctx, "{ [d0] -> [(d0)] : -50 <= d0 <= 50 }")
    k = isl.PwAff.read_from_str(ctx, f"{{ [d0] -> [({c})] : -50 <= d0 <= 50 }}")
    theirs = x.tdiv_q(k).as_map().flat_range_product(x.tdiv_r(k).as_map())
    assert ours.is_equal(theirs), (ours, theirs)
    assert all(m.evaluate([d]) == (trunc_div(d, c), trunc_mod(d, c)) for d in range(-50, 51))


def test_the_floor_forms_are_proved_for_every_positive_divisor() -> None:
    """z3's truncation (its own encoding) against the floor forms the map language reads: the quotient's
    for every c0 > 0 and the sign rule for a negative divisor; the remainder's follows from those and
    ``truncmod = x - c0 * truncdiv`` (proved too), since x = max(x, 0) - max(-x, 0) (z3 alone gives up on
    the symbolic remainder form: nonlinear; it is proved for constant divisors, with a 2^17 one)."""
    div = check_user_rule("x truncdiv c0 -> max(x, 0) floordiv c0 - max(-x, 0) floordiv c0", where="c0 > 0")
    neg = check_user_rule("x truncdiv c0 -> -(x truncdiv (-c0))", where="c0 != 0")
    rem = check_user_rule("x truncmod c0 -> x - c0 * (x truncdiv c0)", where="c0 != 0")
    assert div.proved and neg.proved and rem.proved, (div, neg, rem)
    for c in (1, 2, 7, 64, 131072):
        mod = check_user_rule(f"x truncmod {c} -> max(x, 0) mod {c} - max(-x, 0) mod {c}")
        assert mod.proved, mod


# -- rules ----------------------------------------------------------------------------------------


def test_a_truncdiv_rule_proved() -> None:
    v = check_user_rule("(x truncdiv c0) truncdiv c1 -> x truncdiv (c0 * c1)", where="c0 != 0, c1 != 0")
    assert v.proved and not v.vacuous, v
    # and the plain evaluator agrees on a grid (an independent look at the same claim)
    for x in range(-30, 31):
        for c0 in (-4, -3, -1, 1, 2, 5):
            for c1 in (-3, -2, 1, 3):
                assert trunc_div(trunc_div(x, c0), c1) == trunc_div(x, c0 * c1)


def test_a_truncdiv_rule_refuted_with_a_confirmed_counterexample() -> None:
    v = check_user_rule("x truncdiv c0 -> x floordiv c0", where="c0 > 0")
    assert v.refuted and v.counterexample is not None
    values = dict(v.counterexample.values)
    x, c0 = values["x"], values["c0"]
    assert c0 > 0 and trunc_div(x, c0) != floor_div(x, c0)  # re-checked here with plain integers
    assert x < 0 and x % c0 != 0
    # the non-negative half is proved
    assert check_user_rule("x truncdiv c0 -> x floordiv c0", where="c0 > 0, x >= 0").proved


def test_truncmod_rule_refuted_for_negative_dividends() -> None:
    v = check_user_rule("x truncmod c0 -> x mod c0", where="c0 > 0")
    assert v.refuted
    values = dict(v.counterexample.values)  # type: ignore[union-attr]
    assert trunc_mod(values["x"], values["c0"]) != values["x"] % values["c0"]


def test_truncdiv_by_a_possibly_zero_constant_is_an_error_not_a_proof() -> None:
    v = check_user_rule("x truncdiv c0 -> x truncdiv c0")
    assert v.status == "error" and "zero divisor" in v.reason


# -- check-rule --smt2 ------------------------------------------------------------------------------


@pytest.mark.parametrize(("rule", "where", "code", "answer"), [
    ("(x truncdiv c0) truncdiv c1 -> x truncdiv (c0 * c1)", "c0 != 0, c1 != 0", 0, "unsat"),
    ("x truncdiv c0 -> x floordiv c0", "c0 > 0", 1, "sat"),
    ("(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)", "c0 > 0, c1 > 0", 0, "unsat"),
])
def test_check_rule_writes_the_smt2_query(tmp_path: Path, rule: str, where: str, code: int, answer: str) -> None:
    path = tmp_path / "q.smt2"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["check-rule", rule, "--where", where, "--smt2", str(path)]) == code
    text = path.read_text(encoding="utf-8")
    assert text.startswith("; verified_indexing check-rule query") and "(check-sat)" in text
    assert f"; rule {rule} where {where}" in text
    assert check_smt2(text) == answer  # re-read by z3's SMT-LIB parser in a fresh context


def test_smt2_to_a_path_that_cannot_be_written_is_bad_input(tmp_path: Path) -> None:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(["check-rule", "x -> x", "--smt2", str(tmp_path / "no" / "such" / "dir" / "q.smt2")])
    assert code == 3 and "--smt2" in err.getvalue() and "cannot write" in err.getvalue()


def test_smt2_is_refused_with_batch(tmp_path: Path) -> None:
    batch = tmp_path / "q.jsonl"
    batch.write_text('{"rule": "x -> x"}\n', encoding="utf-8")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["check-rule", "--batch", str(batch), "--smt2", str(tmp_path / "q.smt2")])
    assert code == 3 and "--smt2 writes the query of one question" in out.getvalue()
    assert not (tmp_path / "q.smt2").exists()
