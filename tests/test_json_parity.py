"""Python and the command line write the same JSON bytes (issue 28 item 3): serialize.to_json_text of
the library's result equals ``verified-indexing COMMAND --json --no-timing`` (one envelope: ``null``
for absent values, where a result's own ``to_json()`` holds ``""``)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

from verified_indexing import parse_indexing_map
from verified_indexing.cli import main
from verified_indexing.serialize import map_to_json, to_json_text

ROOT = Path(__file__).resolve().parent.parent
SOFTMAX = ROOT / "examples" / "jax_hlo" / "softmax.post.hlo"


def _cli(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main([*argv, "--json", "--no-timing"])
    return out.getvalue()


def test_check_rule() -> None:
    from verified_indexing.proofs.user_rule import check_user_rule

    for rule, where in (("(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)", "c0 > 0, c1 > 0"),
                        ("x truncdiv c0 -> x floordiv c0", "c0 > 0")):
        v = check_user_rule(rule, where=where)
        assert '"reason": ""' in json.dumps(v.to_json()) or v.reason  # the raw object holds "" ...
        python = to_json_text(v, "check-rule", no_timing=True)
        assert python == _cli("check-rule", rule, "--where", where)
        assert '"reason": null' in python  # ... the envelope writes null, as the command line does


def test_show() -> None:
    text = "(d0, d1) -> (4 * (d1 mod 2) + d0), domain: d0 in [0, 9], d1 in [0, 3]"
    assert to_json_text(map_to_json(parse_indexing_map(text)), "show") == _cli("show", "-e", text)


def test_analyze() -> None:
    from verified_indexing.hlo import analyze_module
    from verified_indexing.hlo.report import load_hlo, results_to_json

    module = load_hlo(SOFTMAX.read_text(encoding="utf-8"), str(SOFTMAX))
    results = analyze_module(module)
    python = to_json_text(results_to_json(results, 0.0), "analyze", no_timing=True)
    assert python == _cli("analyze", str(SOFTMAX))


def test_simplify_with_the_engines_the_command_line_uses() -> None:
    """The command line proves small domains with isl, the library by enumeration with numpy when it is
    installed (docs/simplifier.md): the same report once the library is asked the command line's way."""
    from verified_indexing.engines import points
    from verified_indexing.simplify import simplify_with_report

    text = "(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 600], d1 in [0, 14]"
    before = points.set_enabled(False)
    try:
        rep = simplify_with_report(parse_indexing_map(text))
    finally:
        points.set_enabled(before)
    assert to_json_text(rep, "simplify", no_timing=True) == _cli("simplify", "-e", text)
