"""``python -m proofs`` and ``check-rule``: verdicts against independent checks."""

from __future__ import annotations

import contextlib
import io
import subprocess
import sys
from pathlib import Path

from proofs.user_rule import check_user_rule
from verified_indexing.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run_cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_python_m_proofs_proves_the_catalogue() -> None:
    proc = subprocess.run([sys.executable, "-m", "proofs"], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "0 refuted or error" in proc.stdout
    assert "refuted" not in proc.stdout.split("\n\n")[0].replace("refuted or error", "")


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
    assert v.refuted and dict(v.counterexample.values)["x"] == 9  # c0 = 9, x = 9


def test_check_rule_cli_exit_codes() -> None:
    code, out, _ = run_cli("check-rule", "x mod 4 -> x - (x floordiv 4) * 4")
    assert code == 0 and "Proved" in out
    code, out, _ = run_cli("check-rule", "(x mod c0) mod c1 -> x mod c1", "--where", "c0 != 0, c1 != 0")
    assert code == 1 and "Example:" in out
    code, _, err = run_cli("check-rule", "x floordiv y -> x")
    assert code == 3 and "divisor" in err and "^" in err
    code, _, err = run_cli("check-rule", "x mod c0 -> x")
    assert code == 3  # the conditions allow a zero divisor: an ill-formed question
