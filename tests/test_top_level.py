"""The package's top level gives the functions users call (issue 28 item 3): ``from verified_indexing
import simplify`` is callable as the simplifier (it is the subpackage at run time, the function to the
type checker), and the subpackage's names are still reached through it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from verified_indexing import parse_indexing_map
from verified_indexing.testing import assert_maps_equal

ROOT = Path(__file__).resolve().parent.parent
TEXT = "(d0, d1) -> (d0 + d1 floordiv 16, (d0 * 4) floordiv 8), domain: d0 in [0, 6], d1 in [0, 14]"


def test_simplify_from_the_top_is_the_simplifier() -> None:
    from verified_indexing import simplify
    from verified_indexing.simplify.api import simplify as the_function

    m = parse_indexing_map(TEXT)
    out = simplify(m)
    assert out == the_function(m) and out != m
    assert_maps_equal(out, m)  # proven equal to the input (isl), not trusted
    assert simplify(m, verify=False, timeout=5.0) == the_function(m, verify=False, timeout=5.0)


def test_the_subpackage_is_still_the_subpackage() -> None:
    import verified_indexing
    import verified_indexing.simplify as package
    from verified_indexing import simplify

    the_function: object = simplify  # the type checker sees the function, the run time the subpackage
    assert package is the_function is verified_indexing.simplify
    assert package.simplify_with_report(parse_indexing_map(TEXT)).verified
    assert "simplify" in verified_indexing.__all__ and "simplify" in dir(verified_indexing)


def test_a_fresh_interpreter_gives_the_same_object_either_order() -> None:
    code = ("import verified_indexing as v\nfrom verified_indexing import simplify as a\n"
            "import verified_indexing.simplify.api\nfrom verified_indexing import simplify as b\n"
            "print(a is b is v.simplify, callable(a))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.stdout.strip() == "True True", proc.stderr


def test_a_users_type_checker_sees_the_function(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is in the dev extra")
    user = tmp_path / "user.py"
    user.write_text("from verified_indexing import IndexingMap, parse_indexing_map, simplify\n\n"
                    "m = parse_indexing_map('(d0) -> (d0), domain: d0 in [0, 3]')\n"
                    "out: IndexingMap = simplify(m)\nbad: str = simplify(m)\n", encoding="utf-8")
    env = {**os.environ, "MYPYPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent",
                           str(user)], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    errors = [line for line in proc.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1 and "user.py:5:" in errors[0] and 'expression has type "IndexingMap"' in errors[0], errors


def test_the_commands_functions_are_at_the_top() -> None:
    """analyze, fuse, audit, check_rule and to_json_text are the package's functions (verified_indexing.api,
    verified_indexing.serialize), listed in __all__, and give what the command gives (check_rule's verdict is
    the command line's: its text is check-rule's output)."""
    import contextlib
    import io

    import verified_indexing
    from verified_indexing import analyze, audit, check_rule, fuse, to_json_text
    from verified_indexing._timing import set_show_timing
    from verified_indexing.api import analyze as api_analyze
    from verified_indexing.cli import main

    assert analyze is api_analyze and fuse.__module__ == audit.__module__ == "verified_indexing.api"
    assert to_json_text.__module__ == "verified_indexing.serialize"
    for name in ("analyze", "fuse", "audit", "check_rule", "to_json_text", "simplify"):
        assert name in verified_indexing.__all__
    rule = "(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)"
    v = check_rule(rule, where="c0 > 0, c1 > 0")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["check-rule", rule, "--where", "c0 > 0, c1 > 0", "--no-timing"])
    before = set_show_timing(False)
    try:
        assert v.proved and (code, str(v) + "\n") == (0, out.getvalue())
    finally:
        set_show_timing(before)


def test_importing_the_package_loads_none_of_the_functions_modules() -> None:
    code = ("import sys, verified_indexing\nprint(sorted(m for m in ('verified_indexing.api', "
            "'verified_indexing.serialize', 'z3', 'islpy', 'numpy', 'msgspec') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert proc.stdout.strip() == "[]", proc.stdout + proc.stderr
