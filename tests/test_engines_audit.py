"""Soundness audit of the engines: one test per bug found (written before the
fix), large values and negative divisors through every engine, the cache key,
the z3 context pool, and the prove-equal command line's error paths.

Oracles: Python's own ``//`` / ``%`` on exact integers, ``domain_points``
enumeration, and agreement between isl, z3 and enumeration (never an engine's
own output pasted back)."""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import pytest
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing import IndexingMap, Interval
from verified_indexing.cli import main
from verified_indexing.engines import (
    ProofCache,
    Verdict,
    exact_range,
    is_empty,
    prove_equal,
    prove_expr_equal,
    prove_implies,
)
from verified_indexing.engines import enumerate as en
from verified_indexing.engines import z3 as z3mod
from verified_indexing.engines.api import answer, equality_question
from verified_indexing.engines.smtlib import check_smt2
from verified_indexing.errors import VerifiedIndexingError
from verified_indexing.expr import AffineExpr, Const, Dim, emax, emin

ENGINES = ("isl", "z3", "enum")


def _split(m: IndexingMap, values: tuple[tuple[str, int], ...]) -> tuple[tuple[int, ...], ...]:
    vals = [v for _, v in values]
    nd, ns = m.num_dims, m.num_range_vars
    return tuple(vals[:nd]), tuple(vals[nd : nd + ns]), tuple(vals[nd + ns :])


# -- bug: enumeration crashed on bounds beyond int64 -----------------------------


def test_enum_handles_unused_variables_beyond_int64() -> None:
    # d0 is used by no expression, so the numpy range check never saw its bounds
    # and the chunk arithmetic overflowed (OverflowError, a traceback).
    big = 10**19
    a = IndexingMap([Interval(big, big + 2), Interval(0, 3)], [Dim(1)])
    b = IndexingMap([Interval(big, big + 2), Interval(0, 3)], [Dim(1)], constraints=[(Dim(1), Interval(0, 2))])
    verdicts = [prove_equal(a, b, engine=e) for e in ENGINES]
    for v in verdicts:
        assert v.refuted, str(v)
        assert v.counterexample is not None
        pt = _split(a, v.counterexample.values)
        assert a.contains(*pt) and not b.contains(*pt)
    assert prove_equal(a, a, engine="enum").proved
    assert is_empty(b, engine="enum").refuted


# -- bug: a non-finite timeout was an internal error ------------------------------


def test_non_finite_timeouts() -> None:
    a = IndexingMap([Interval(0, 3)], [Dim(0).floordiv(2) * 2 + Dim(0).mod(2)])
    b = IndexingMap([Interval(0, 3)], [Dim(0)])
    # an infinite timeout means no wall-clock limit (the rlimit still applies)
    assert prove_equal(a, b, engine="z3", timeout=math.inf).proved
    assert prove_equal(a, b, engine="all", timeout=math.inf).proved
    for bad in (math.nan, 0.0, -1.0):
        with pytest.raises(VerifiedIndexingError, match="timeout"):
            prove_equal(a, b, engine="z3", timeout=bad)


# -- bug: a dead context-pool thread made every z3 query wait 5 seconds -------------


def test_context_pool_survives_a_failing_factory(monkeypatch: pytest.MonkeyPatch) -> None:
    real = z3.Context
    calls = {"n": 0}

    def flaky(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise z3.Z3Exception("simulated failure")
        return real(*args, **kwargs)

    monkeypatch.setattr(z3, "Context", flaky)
    pool = z3mod._ContextPool()
    t0 = time.perf_counter()
    ctxs = [pool.take() for _ in range(3)]
    elapsed = time.perf_counter() - t0
    assert all(isinstance(c, real) for c in ctxs)
    assert len({id(c) for c in ctxs}) == 3  # each context handed out once
    assert elapsed < 2.0, f"took {elapsed:.1f}s"


# -- large values (10^12) and negative divisors through every engine ---------------

BIG_DIVISORS = st.sampled_from([-(10**6) - 3, -7, -2, 3, 10**6 + 3, 10**12 + 39])
OFFSETS = st.sampled_from([-(10**12), -(10**12) + 17, 0, 10**12 - 5, 10**12])


def big_exprs() -> st.SearchStrategy[AffineExpr]:
    leaves = st.one_of(st.integers(-(10**12), 10**12).map(Const), st.sampled_from([Dim(0), Dim(1)]))

    def extend(kids: st.SearchStrategy[AffineExpr]) -> st.SearchStrategy[AffineExpr]:
        return st.one_of(
            st.tuples(kids, kids).map(lambda t: t[0] + t[1]),
            st.tuples(kids, st.sampled_from([-(10**7), -3, 2, 10**7])).map(lambda t: t[0] * t[1]),
            st.tuples(kids, BIG_DIVISORS).map(lambda t: t[0].floordiv(t[1])),
            st.tuples(kids, BIG_DIVISORS).map(lambda t: t[0].mod(t[1])),
            st.tuples(kids, BIG_DIVISORS).map(lambda t: t[0].ceildiv(t[1])),
            st.tuples(kids, kids).map(lambda t: emin(t[0], t[1])),
            st.tuples(kids, kids).map(lambda t: emax(t[0], t[1])),
        )

    return st.recursive(leaves, extend, max_leaves=4)


@st.composite
def big_domains(draw: st.DrawFn) -> IndexingMap:
    dims = []
    for _ in range(2):
        lo = draw(OFFSETS) + draw(st.integers(-3, 3))
        dims.append(Interval(lo, lo + draw(st.integers(0, 4))))
    return IndexingMap(dims, [])


@settings(max_examples=60)
@given(big_domains(), big_exprs(), st.sampled_from(["identity", "other"]), big_exprs(), BIG_DIVISORS)
def test_large_values_and_negative_divisors_agree(
    dom: IndexingMap, e1: AffineExpr, how: str, other: AffineExpr, c: int
) -> None:
    e2 = e1.floordiv(c) * c + e1.mod(c) if how == "identity" else other
    points = list(dom.domain_points())
    expected = all(e1.evaluate(*p) == e2.evaluate(*p) for p in points)
    verdicts = [prove_expr_equal(e1, e2, dom, engine=e) for e in ENGINES]
    for v in verdicts:
        assert v.status == ("proved" if expected else "refuted"), str(v)
        if v.refuted:
            assert v.counterexample is not None
            pt = _split(dom, v.counterexample.values)
            assert dom.contains(*pt) and e1.evaluate(*pt) != e2.evaluate(*pt)
    values = [e1.evaluate(*p) for p in points]
    assert exact_range(e1, dom) == Interval(min(values), max(values))
    iv = Interval(min(values), max(values) - 1)
    implied = [prove_implies(dom, e1, iv, engine=e) for e in ENGINES]
    for v in implied:
        assert v.refuted and v.counterexample is not None
        pt = _split(dom, v.counterexample.values)
        assert e1.evaluate(*pt) not in iv


def test_semantics_at_large_values_pinned_to_python() -> None:
    # x in [10^12 - 2, 10^12 + 2] and [-10^12 - 2, -10^12 + 2]; divisors of both signs.
    for lo in (10**12 - 2, -(10**12) - 2):
        dom = IndexingMap([Interval(lo, lo + 4)], [])
        for c in (-(10**6) - 3, -7, 7, 10**6 + 3):
            x = Dim(0)
            for e, py in (
                (x.floordiv(c), lambda v, c=c: v // c),
                (x.mod(c), lambda v, c=c: v % c),
                (x.ceildiv(c), lambda v, c=c: -((-v) // c)),
            ):
                values = [py(v) for v in range(lo, lo + 5)]
                assert exact_range(e, dom) == Interval(min(values), max(values))
                # pin each point: e == python value at x = v  (expr-equal on a one-point domain)
                for v in (lo, lo + 3):
                    point = IndexingMap([Interval(v, v)], [])
                    for engine in ENGINES:
                        assert prove_expr_equal(e, Const(py(v)), point, engine=engine).proved


# -- the cache key -------------------------------------------------------------


def test_cache_key_separates_question_kinds_and_positions(tmp_path: Path) -> None:
    from verified_indexing import parse_indexing_map as P
    from verified_indexing.engines import prove_pointwise_equal, prove_subset

    cache = ProofCache(tmp_path / "c.sqlite")
    a = P("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 1]")
    b = P("(d0)[s0] -> (d0 + 1 - s0), domain: d0 in [0, 5], s0 in [0, 1]")
    assert prove_equal(a, b, cache=cache).proved
    # same maps, a different question: must not hit the relation proof
    v = prove_pointwise_equal(a, b, cache=cache)
    assert v.refuted and not v.cached
    assert prove_pointwise_equal(a, b, cache=cache).cached
    # subset of domains vs relations
    c = P("(d0)[s0] -> (d0 * 2), domain: d0 in [0, 5], s0 in [0, 1]")
    assert prove_subset(c, a, of="domain", cache=cache).proved
    v = prove_subset(c, a, of="relation", cache=cache)
    assert v.refuted and not v.cached
    # swapping which variable is a dim and which a range variable changes the answer
    x = P("(d0)[s0] -> (d0), domain: d0 in [0, 1], s0 in [0, 3]")
    y = P("(s0)[d0] -> (s0), domain: s0 in [0, 1], d0 in [0, 3]")
    z = P("(d0)[s0] -> (s0), domain: d0 in [0, 1], s0 in [0, 3]")
    assert prove_equal(x, y, cache=cache).proved
    assert prove_equal(x, z, cache=cache).refuted
    # every engine has its own entry
    assert not prove_equal(x, y, engine="enum", cache=cache).cached
    assert prove_equal(x, y, engine="enum", cache=cache).cached


def test_unknown_from_operation_limit_is_not_cached(tmp_path: Path) -> None:
    from verified_indexing.engines import set_max_operations

    cache = ProofCache(tmp_path / "c.sqlite")
    a = IndexingMap([Interval(0, 10**6)], [(Dim(0) * 7).floordiv(5).mod(11) + (Dim(0) * 3).floordiv(4)])
    previous = set_max_operations(1)
    try:
        assert prove_equal(a, a, engine="isl", cache=cache).unknown
    finally:
        set_max_operations(previous)
    assert len(cache) == 0
    v = prove_equal(a, a, engine="isl", cache=cache)
    assert v.proved and not v.cached


# -- the prove-equal command line ---------------------------------------------

A = "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]"
B = "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["prove-equal", *argv, "--no-cache"])
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        # every message names the source and the position, and shows a caret
        (["d0", "d0 + d1", "--domain", "d0 in [0, 3]"], "<argument>:1:6: error: the variable d1 has no bounds"),
        (["d0 + s1", "d0", "--domain", "d0 in [0, 3]"], "<argument>:1:6: error: the variable s1 has no bounds"),
        (["d0", "d0", "--domain", "d0 in [0,"], "--domain:1:10: error: expected an integer"),
        (["d0", "d0", "--domain", "d0 * d0 in [0, 3]"], "--domain:1:4: error: semi-affine"),
        (["d0 floordiv 0", "d0", "--domain", "d0 in [0, 3]"], "<argument>:1:4: error: floordiv by zero"),
        (["d0 mod", "d0", "--domain", "d0 in [0, 3]"], "<argument>:1:7: error: expected"),
        (["(d0) -> (d0 mod 0), domain: d0 in [0, 3]", B], "<argument>:1:13: error: mod by zero"),
        (["(d0) -> (d0 * d0), domain: d0 in [0, 3]", B], "<argument>:1:13: error: semi-affine"),
        (["(d0)[s0] -> (d0), domain: d0 in [0, 3]", B], "<argument>:1:6: error: variable 's0' has no bounds"),
    ],
)
def test_bad_input_messages_are_positioned(capsys: pytest.CaptureFixture[str], argv: list[str], expected: str) -> None:
    code, out, err = _run(capsys, *argv)
    assert code == 3, out + err
    assert expected in err, err
    assert "^" in err and "Traceback" not in out + err


@pytest.mark.parametrize("value", ["nan", "inf", "0", "-2"])
def test_bad_timeout(capsys: pytest.CaptureFixture[str], value: str) -> None:
    code, _out, err = _run(capsys, A, B, "--timeout", value, "--engine", "z3")
    if value == "inf":
        assert code == 0  # no wall-clock limit
    else:
        assert code == 3 and "argument --timeout: expected a positive number of seconds" in err


def test_file_inputs_errors_name_the_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("(d0) -> (d0 floordiv 0),\ndomain: d0 in [0, 3]\n")
    code, _out, err = _run(capsys, str(bad), B)
    assert code == 3
    assert f"{bad}:1:" in err and "floordiv by zero" in err


def test_engine_all_reports_a_broken_engine_loudly(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    wrong = "(d0, d1) -> (d0, d1 + 1), domain: d0 in [0, 6], d1 in [0, 14]"
    # an enumeration engine that never finds a difference: it "proves" a false claim
    monkeypatch.setattr(en, "find_pointwise_difference", lambda *a, **k: None)
    code, out, _err = _run(capsys, A, wrong, "--engine", "all")
    assert code == 4
    assert "ENGINES DISAGREE" in out and "enum=proved" in out and "isl=refuted" in out
    # an engine whose counterexample the evaluator rejects
    monkeypatch.setattr(en, "find_pointwise_difference", lambda *a, **k: ((0, 0), (), ()))
    code, out, _err = _run(capsys, A, B, "--engine", "all", "--json")
    assert code == 4
    import json

    data = json.loads(out)
    assert data["status"] == "error" and "encoding disagrees with evaluator" in data["reason"]
    # alone, the broken engine is an error too (exit 4), never a refutation
    code, out, _err = _run(capsys, A, B, "--engine", "enum")
    assert code == 4 and "encoding disagrees with evaluator" in out


def test_smt2_files_are_read_by_z3s_parser(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for argv, expected in (
        (["d0 ceildiv -3", "-(d0 floordiv 3)", "--domain", "d0 in [-10, 9], d0 mod 2 in [0, 0]"], "unsat"),
        (["d0 mod -4", "d0 mod 4", "--domain", "d0 in [-1000000000000, 1000000000000]"], "sat"),
        (
            [
                "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 1]",
                "(d0)[s0] -> (s0 + d0 * 1), domain: d0 in [0, 5], s0 in [0, 1]",
            ],
            "unsat",
        ),
    ):
        out_dir = tmp_path / str(len(list(tmp_path.iterdir())))
        code, out, err = _run(capsys, *argv, "--smt2", str(out_dir), "--engine", "z3")
        assert code == (0 if expected == "unsat" else 1), out + err
        (path,) = out_dir.glob("*.smt2")
        assert f"wrote {path}" in err
        assert check_smt2(path.read_text()) == expected
        # and with z3's file parser directly, in a fresh context
        ctx = z3.Context()
        s = z3.Solver(ctx=ctx)
        s.add(z3.parse_smt2_file(str(path), ctx=ctx))
        assert str(s.check()) == expected


def test_answer_rejects_unknown_engine() -> None:
    q = equality_question(IndexingMap([Interval(0, 1)], [Dim(0)]), IndexingMap([Interval(0, 1)], [Dim(0)]))
    assert not isinstance(q, Verdict)
    with pytest.raises(VerifiedIndexingError, match="unknown engine"):
        answer(q, "cvc5")


# -- bug: variables the domain lacks gave IndexError / an isl parameter ----------------


def test_expression_over_a_variable_the_domain_lacks() -> None:
    from verified_indexing import parse_indexing_map as P
    from verified_indexing.errors import MapError
    from verified_indexing.expr import RtSym, Sym

    m = P("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 1]")
    for bad in (Dim(1), Sym(1), RtSym(0), Dim(0) + Dim(3)):
        for engine in (*ENGINES, "auto", "all"):
            v = prove_expr_equal(bad, Dim(0), m, engine=engine)
            assert v.error and "variable" in v.reason, str(v)
            v = prove_implies(m, bad, Interval(0, 9), engine=engine)
            assert v.error and "variable" in v.reason, str(v)
        with pytest.raises(MapError, match="variable"):
            exact_range(bad, m)


def test_undefined_domain_in_prove_implies_is_an_error_verdict() -> None:
    v = prove_implies(IndexingMap.undefined(), Dim(0), Interval(0, 1))
    assert v.error and "UNDEFINED" in v.reason


def test_pointwise_flag(capsys: pytest.CaptureFixture[str]) -> None:
    a = "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [0, 1]"
    b = "(d0)[s0] -> (d0 + 1 - s0), domain: d0 in [0, 5], s0 in [0, 1]"
    assert _run(capsys, a, b, "--relation")[0] == 0  # the relations are equal
    assert _run(capsys, a, b)[0] == 1  # the default when both declare the same variables: pointwise
    code, out, _ = _run(capsys, a, b, "--pointwise", "--engine", "all")
    assert code == 1 and "pointwise-equal:" in out and "s0 = 0" in out
    c = "(d0)[s0, s1] -> (d0 + s0 + s1), domain: d0 in [0, 5], s0 in [0, 1], s1 in [0, 0]"
    code, out, _ = _run(capsys, a, c, "--pointwise")
    assert code == 3 and "different numbers of range variables" in out
