"""The known-bugs corpus: each wrong rewrite refuted with a counterexample that an
independent evaluator (Python's own ``//`` and ``%`` on the rule text) confirms, each
correct variant proved and consistent with a brute-force check."""

from __future__ import annotations

import contextlib
import io
import itertools
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing.cli import main
from verified_indexing.proofs.known_bugs import KNOWN_BUGS, KnownBug, check_known_bugs, format_known_bugs
from verified_indexing.proofs.user_rule import check_user_rule


class I(int):  # noqa: E742 - a one-letter wrapper is the point: `a @ b` is ceildiv
    """An int whose ``@`` is ceildiv (so rule texts evaluate as Python)."""

    def __matmul__(self, other: int) -> int:
        return -((-int(self)) // int(other))

    def __rmatmul__(self, other: int) -> int:
        return -((-int(other)) // int(self))

    def __neg__(self) -> I:
        return I(-int(self))


def to_python(text: str) -> str:
    """The rule language as a Python expression: floordiv -> //, mod -> %,
    ceildiv -> @ (same precedence as *, left associative, like the rule language)."""
    text = re.sub(r"\bfloordiv\b", "//", text)
    text = re.sub(r"\bceildiv\b", "@", text)
    text = re.sub(r"\bmod\b", "%", text)
    return re.sub(r"\b(\d+)\b", r"I(\1)", text)  # literals too, so `(e) @ 2` has an I operand


def py_eval(text: str, env: dict[str, int]) -> Any:
    return eval(to_python(text), {"min": min, "max": max, "I": I}, {n: I(v) for n, v in env.items()})


def conditions(where: str, domain: str) -> list[str]:
    """Python conditions for ``where`` (comma-separated comparisons) and ``domain``
    (``name in [lo, hi]`` entries)."""
    out = [c.strip() for c in where.split(",") if c.strip()]
    for name, lo, hi in re.findall(r"(\w+) in \[([^,\]]+), ([^\]]+)\]", domain):
        out += [f"{name} >= {lo}", f"{name} <= {hi}"]
    return out


def holds(conds: list[str], env: dict[str, int]) -> bool:
    try:
        return all(py_eval(c, env) for c in conds)
    except ZeroDivisionError:
        return False


def names_of(*texts: str) -> list[str]:
    return sorted({n for t in texts for n in re.findall(r"\b[a-z]\w*\b", t)} - {"floordiv", "ceildiv", "mod", "min",
                                                                               "max", "in"})


@pytest.fixture(scope="module")
def checks() -> dict[str, Any]:
    return {c.bug.name: c for c in check_known_bugs()}


def test_corpus_size_and_names() -> None:
    names = [b.name for b in KNOWN_BUGS]
    assert len(names) == len(set(names)) >= 20
    with open(Path(__file__).resolve().parent.parent / "docs" / "known-bugs.md", encoding="utf-8") as f:
        doc = f.read()
    for n in names:
        assert n in doc


@pytest.mark.parametrize("bug", KNOWN_BUGS, ids=[b.name for b in KNOWN_BUGS])
def test_wrong_rewrite_refuted_with_confirmed_counterexample(bug: KnownBug, checks: dict[str, Any]) -> None:
    v = checks[bug.name].wrong
    assert v.refuted and v.counterexample is not None, (bug.name, v)
    env = dict(v.counterexample.values)
    lhs_text, rhs_text = bug.wrong.split("->")
    # The independent evaluator: the conditions hold and the two sides differ.
    assert holds(conditions(bug.wrong_where, bug.wrong_domain), env), (bug.name, env)
    lv, rv = py_eval(lhs_text, env), py_eval(rhs_text, env)
    assert lv != rv, (bug.name, env)
    assert v.counterexample.source == (lv,) and v.counterexample.target == (rv,)


@pytest.mark.parametrize("bug", KNOWN_BUGS, ids=[b.name for b in KNOWN_BUGS])
def test_fixed_rewrite_proved_and_brute_force_consistent(bug: KnownBug, checks: dict[str, Any]) -> None:
    v = checks[bug.name].fixed
    assert v.proved, (bug.name, v)
    # Consistency with an independent brute-force check on small values.
    lhs_text, rhs_text = bug.fixed.split("->")
    conds = conditions(bug.fixed_where, bug.fixed_domain)
    names = names_of(bug.fixed, bug.fixed_where, bug.fixed_domain)
    bound = {1: 12, 2: 12, 3: 6, 4: 4}.get(len(names), 3)
    hits = 0
    for point in itertools.product(range(-bound, bound + 1), repeat=len(names)):
        env = dict(zip(names, point))
        if not holds(conds, env):
            continue
        hits += 1
        assert py_eval(lhs_text, env) == py_eval(rhs_text, env), (bug.name, env)
    assert hits > 0, bug.name


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_cli_known_bugs_and_lemmas(checks: dict[str, Any]) -> None:
    # (docs/known-bugs.md runs `verified-indexing known-bugs` end to end.)
    out = format_known_bugs(list(checks.values()))
    assert f"{len(KNOWN_BUGS)} known bugs: {len(KNOWN_BUGS)} refuted" in out
    # A false lemma is never assumed: the false rule stays refuted (confirmed).
    v = check_user_rule("(x floordiv c0) * c0 -> x", where="c0 != 0", lemmas=["(x floordiv c0) * c0 == x"])
    assert v.refuted and v.counterexample is not None
    env = dict(v.counterexample.values)
    assert (env["x"] // env["c0"]) * env["c0"] != env["x"]
    # Without hints the nonlinear div-of-mod identity is unknown, never proved nor refuted.
    v = check_user_rule("(x mod (c1 * c2)) floordiv c1 -> (x floordiv c1) mod c2", where="c1 > 0, c2 > 0",
                        timeout=2.0)
    assert v.unknown or v.proved
    assert not v.refuted
    # A lemma with a bad token gives a positioned error (exit 3).
    code, _, err = run_cli("check-rule", "x -> x", "--lemma", "x == (")
    assert code == 3 and "<lemma>" in err


def test_divisor_that_is_a_constant_expression() -> None:
    # `c0 floordiv c1` as a divisor: nonzero when c0 >= c1 > 0 (its own definition is
    # used for the definedness check), so the question is well-formed and refuted.
    v = check_user_rule("(x mod c0) floordiv c1 -> (x floordiv c1) mod (c0 floordiv c1)", where="c1 > 0, c0 > c1")
    assert v.refuted
    # ... and a condition that allows it to be zero is still reported.
    v = check_user_rule("x mod (c0 floordiv c1) -> x", where="c1 > 0, c0 >= 0")
    assert v.error and "zero divisor" in v.reason


# -- check-rule against brute force on random rewrites -----------------------------
@st.composite
def _rule_terms(draw: st.DrawFn, depth: int = 2) -> str:
    if depth == 0 or draw(st.integers(0, 2)) == 0:
        return draw(st.sampled_from(["x", "y", "x + 1", "-x", "x + y", "2 * x"]))
    a = draw(_rule_terms(depth - 1))
    op = draw(st.sampled_from(["floordiv", "mod", "ceildiv", "+", "*"]))
    if op == "+":
        return f"({a}) + ({draw(_rule_terms(depth - 1))})"
    if op == "*":
        return f"({a}) * {draw(st.sampled_from(['c0', '2', '-3']))}"
    return f"({a}) {op} {draw(st.sampled_from(['c0', '2', '-3', 'c1']))}"


# True identities (and, with a wrong constant, near misses) over a random subterm A.
_TEMPLATES = [
    ("(A) floordiv c0", "-((-(A)) ceildiv c0)"),
    ("(A) mod c0", "(A) - ((A) floordiv c0) * c0"),
    ("((A) floordiv 2) floordiv 3", "(A) floordiv 6"),
    ("((A) mod 6) mod 3", "(A) mod 3"),
    ("((A) * 4) mod 12", "((A) mod 3) * 4"),
    ("((A) + 7) mod 7", "(A) mod 7"),
]


@st.composite
def _rule_pairs(draw: st.DrawFn) -> tuple[str, str]:
    if draw(st.booleans()):
        return draw(_rule_terms()), draw(_rule_terms())
    a = draw(_rule_terms(1))
    lhs, rhs = (t.replace("A", a) for t in draw(st.sampled_from(_TEMPLATES)))
    if draw(st.booleans()):  # a near miss: one constant off
        rhs = rhs.replace("3", "4", 1) if "3" in rhs else rhs + " + 1"
    return lhs, rhs


@settings(max_examples=60, deadline=None)
@given(_rule_pairs(), st.sampled_from(["c0 > 0, c1 > 0", "c0 != 0, c1 < 0", "c0 < 0, c1 != 0"]))
def test_check_rule_agrees_with_brute_force(pair: tuple[str, str], where: str) -> None:
    lhs, rhs = pair
    v = check_user_rule(f"{lhs} -> {rhs}", where=where, timeout=5.0)
    conds = conditions(where, "")
    names = names_of(lhs, rhs, where)
    if v.refuted:
        assert v.counterexample is not None
        env = dict(v.counterexample.values)
        assert holds(conds, env) and py_eval(lhs, env) != py_eval(rhs, env)
        return
    if v.proved:  # brute force over small values finds no counterexample
        bound = 5 if len(names) <= 3 else 3
        for point in itertools.product(range(-bound, bound + 1), repeat=len(names)):
            env = dict(zip(names, point))
            if holds(conds, env):
                assert py_eval(lhs, env) == py_eval(rhs, env), (lhs, rhs, env)
        return
    assert v.unknown  # never an error for these well-formed questions
