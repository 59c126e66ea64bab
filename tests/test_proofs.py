"""``python -m verified_indexing.proofs`` and ``check-rule``: verdicts against independent checks."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

from verified_indexing.cli import main
from verified_indexing.proofs.user_rule import check_user_rule

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_python_m_proofs_proves_the_catalogue() -> None:
    proc = subprocess.run([sys.executable, "-m", "verified_indexing.proofs"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 refuted or error" in proc.stdout
    assert "refuted" not in proc.stdout.split("\n\n")[0].replace("refuted or error", "")
    assert ", 0 unknown" in proc.stdout  # div_of_mod is proved (with its lemmas), not unknown
    from verified_indexing.simplify.domain_rules import DOMAIN_RULES

    n = len(DOMAIN_RULES)
    assert f"{n} domain rules: {n} proved" in proc.stdout  # the domain steps' theorems (proofs/domain.py)


def test_check_rule_proved_refuted_unknown_and_bad_input() -> None:
    v = check_user_rule("(x floordiv c0) * c0 + x mod c0 -> x", where="c0 != 0")
    assert v.proved
    v = check_user_rule("(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)", where="c0 > 0, c1 != 0")
    assert v.refuted and v.counterexample is not None
    vals = dict(v.counterexample.values)
    x, c0, c1 = vals["x"], vals["c0"], vals["c1"]
    assert c0 > 0 and c1 != 0 and (x // c0) // c1 != x // (c0 * c1)  # plain Python confirms
    v = check_user_rule("x mod c0 -> x", where="c0 > 9", domain="x in [0, 9]")
    assert v.proved
    v = check_user_rule("x mod c0 -> x", where="c0 > 8", domain="x in [0, 9]")
    assert v.refuted and v.counterexample is not None
    assert dict(v.counterexample.values)["x"] == 9  # c0 = 9, x = 9


def test_check_rule_cli_exit_codes() -> None:
    code, out, _ = run_cli("check-rule", "x mod 4 -> x - (x floordiv 4) * 4")
    assert code == 0 and "Proved" in out
    code, out, _ = run_cli("check-rule", "(x mod c0) mod c1 -> x mod c1", "--where", "c0 != 0, c1 != 0")
    assert code == 1 and "Example:" in out
    code, _, err = run_cli("check-rule", "x floordiv y -> x")
    assert code == 3 and "divisor" in err and "^" in err
    code, _, err = run_cli("check-rule", "x mod c0 -> x")
    assert code == 3  # the conditions allow a zero divisor: an ill-formed question


# -- lemma hints and structured evidence ------------------------------------------
def test_div_of_mod_proved_in_general_with_lemmas() -> None:
    from dataclasses import replace

    from verified_indexing.proofs import prove_all
    from verified_indexing.proofs.theorems import prove_rule_detailed
    from verified_indexing.simplify import rule_by_name

    rule = rule_by_name("div_of_mod")
    p = prove_rule_detailed(rule, timeout=10.0)
    assert p.verdict.proved and p.lemma_proof
    assert [lm.verdict.status for lm in p.lemmas] == ["proved"] * len(rule.lemmas) and len(p.lemmas) == 4
    # Without the hints z3 does not prove it (the lemmas are what makes it proved).
    bare = prove_rule_detailed(replace(rule, lemmas=()), timeout=2.0, evidence=False)
    assert not bare.verdict.proved and not bare.verdict.refuted
    # The table's row carries the lemmas; no unknown is left in the catalogue.
    results = prove_all([rule])
    assert results[0].ok and results[0].evidence is None and len(results[0].lemmas) == 4


def test_false_lemma_is_never_assumed() -> None:
    from dataclasses import replace

    from verified_indexing.proofs.theorems import prove_rule_detailed
    from verified_indexing.simplify import rule_by_name
    from verified_indexing.simplify.rules import Lemma

    # A false "lemma" (x floordiv b == x) would make anything provable if assumed.
    bad_lemma = Lemma("false", "x floordiv b == x", lambda A, v, k: A.fdiv(v.x, k.b) == v.x)
    wrong = replace(rule_by_name("div_div"), name="div_div_bad", lemmas=(bad_lemma,),
                    condition=lambda A, k, lo, hi: A.all(k.a > 0, k.b != 0))
    p = prove_rule_detailed(wrong, timeout=10.0)
    assert p.lemmas[0].verdict.refuted and p.lemmas[0].verdict.counterexample is not None
    lv = dict(p.lemmas[0].verdict.counterexample.values)
    assert lv["x"] // lv["b"] != lv["x"]  # the lemma's counterexample, by plain Python
    assert p.verdict.refuted and p.verdict.counterexample is not None
    vals = dict(p.verdict.counterexample.values)
    assert (vals["x"] // vals["a"]) // vals["b"] != vals["x"] // (vals["a"] * vals["b"])


def test_unknown_rule_needs_structured_evidence() -> None:
    from dataclasses import replace

    from verified_indexing.engines import Verdict
    from verified_indexing.proofs import RuleResult, table_ok
    from verified_indexing.proofs.theorems import Evidence, exhaustive_evidence
    from verified_indexing.simplify import rule_by_name

    rule = rule_by_name("div_of_mod")
    unknown = Verdict("unknown", "z3", 0.1, "q", reason="z3: canceled; evidence: checked all 5 instances")
    # The reason text alone is not evidence any more: the field is.
    assert not RuleResult(rule, unknown).ok
    ev = exhaustive_evidence(replace(rule, lemmas=()), budget=20_000)
    assert ev.passed and ev.instances > 100 and ev.counterexample is None
    assert RuleResult(rule, unknown, ev).ok and table_ok([RuleResult(rule, unknown, ev)])
    failed = Evidence(False, 3, 2, 2)
    assert not RuleResult(rule, unknown, failed).ok
    # A wrong rule's evidence fails with a counterexample plain integers confirm.
    bad = replace(rule_by_name("div_div"), condition=lambda A, k, lo, hi: A.all(k.a > 0, k.b != 0))
    ev_bad = exhaustive_evidence(bad, budget=20_000)
    assert not ev_bad.passed and ev_bad.counterexample is not None
    vals = dict(ev_bad.counterexample.values)
    assert (vals["x"] // vals["a"]) // vals["b"] != vals["x"] // (vals["a"] * vals["b"])


def _plain(text: str, env: dict[str, int]) -> int:
    """An independent evaluator of the rule language: Python integers on the text."""
    py = text.replace("floordiv", "//").replace("mod", "%")
    return int(eval(py, {}, dict(env)))


def test_a_refuted_rule_gives_the_smallest_counterexample_whatever_ran_before() -> None:
    rule, where = "(x * c0) mod c1 -> (x mod c1) * c0", "c0 > 1, c1 > 1"
    first = check_user_rule(rule, where=where)
    for other in ("(x floordiv c0) * c0 -> x", "x mod c0 -> x", "(x + c0) floordiv c0 -> x floordiv c0 + 1"):
        check_user_rule(other, where="c0 > 0")  # other queries change z3's internal state
    again = check_user_rule(rule, where=where)
    assert first.refuted and again.refuted
    assert first.counterexample is not None and again.counterexample is not None
    assert first.counterexample.values == again.counterexample.values
    point = dict(first.counterexample.values)
    lhs, rhs = rule.split(" -> ")
    assert point["c0"] > 1 and point["c1"] > 1 and _plain(lhs, point) != _plain(rhs, point)
    # No counterexample has a smaller max-norm (brute force with the plain evaluator).
    norm = max(abs(v) for v in point.values())
    rng = range(-norm + 1, norm)
    for c0 in rng:
        for c1 in rng:
            for x in rng:
                env = {"c0": c0, "c1": c1, "x": x}
                assert not (c0 > 1 and c1 > 1 and _plain(lhs, env) != _plain(rhs, env)), env
