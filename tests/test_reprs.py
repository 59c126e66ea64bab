"""Objects for people (issue 28 item 3): the public result types have a one-line ``repr`` under 300
characters that still says what the object is (a notebook cell, a log line), while ``str()`` stays the
command line's text. Inputs are real: the layer norm XLA compiled (examples/jax_hlo), a long map, a
refuted rule."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from verified_indexing import parse_indexing_map
from verified_indexing.cli import main
from verified_indexing.hlo import analyze_module
from verified_indexing.hlo.report import load_hlo
from verified_indexing.proofs.user_rule import check_user_rule
from verified_indexing.simplify import simplify_with_report

ROOT = Path(__file__).resolve().parent.parent
LAYERNORM = ROOT / "examples" / "jax_hlo" / "layernorm.post.hlo"
LONG = ("(d0, d1, d2, d3) -> ((d0 * 1024 + d1 * 256 + d2 * 16 + d3) floordiv 512, "
        "((d0 * 1024 + d1 * 256 + d2 * 16 + d3) mod 512) floordiv 16, (d0 * 1024 + d1 * 256 + d2 * 16 + d3) mod 16), "
        "domain: d0 in [0, 7], d1 in [0, 3], d2 in [0, 15], d3 in [0, 15]")


def _objects() -> dict[str, object]:
    module = load_hlo(LAYERNORM.read_text(encoding="utf-8"), str(LAYERNORM))
    results = analyze_module(module)
    big = max(results, key=lambda r: r.num_maps)
    refuted = check_user_rule("x floordiv c0 -> x truncdiv c0", where="c0 > 0")
    proved = check_user_rule("(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)", where="c0 > 0, c1 > 0")
    return {
        "Module": module,
        "Computation": module.entry,
        "ComputationIndexing": big,
        "TargetIndexing": big.targets[0],
        "AccessMap": big.targets[0].maps[0],
        "Verdict (refuted)": refuted,
        "Verdict (proved)": proved,
        "SimplifyReport": simplify_with_report(parse_indexing_map(LONG)),
    }


OBJECTS = _objects()


@pytest.mark.parametrize("name", sorted(OBJECTS))
def test_repr_is_one_short_line_that_names_the_object(name: str) -> None:
    obj = OBJECTS[name]
    text = repr(obj)
    assert len(text) < 300 and "\n" not in text, (len(text), text)
    assert text.startswith(f"<{type(obj).__name__} "), text


def test_reprs_say_what_matters() -> None:
    refuted = repr(OBJECTS["Verdict (refuted)"])
    assert "refuted by z3" in refuted and "counterexample c0 = " in refuted and "x = " in refuted
    report = OBJECTS["SimplifyReport"]
    assert f"{len(report.steps)} steps" in repr(report) and repr(report).endswith("proved>")  # type: ignore[attr-defined]
    big = OBJECTS["ComputationIndexing"]
    assert f"{big.num_maps} maps" in repr(big) and f"fusion {big.fusion}" in repr(big)  # type: ignore[attr-defined]
    module = OBJECTS["Module"]
    assert f"{len(module.fusions())} fusions" in repr(module)  # type: ignore[attr-defined]


def test_str_of_a_verdict_is_still_the_command_lines_text() -> None:
    v = OBJECTS["Verdict (proved)"]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["check-rule", "(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)", "--where", "c0 > 0, c1 > 0",
              "--no-timing"])
    from verified_indexing._timing import set_show_timing

    before = set_show_timing(False)
    try:
        assert str(v) + "\n" == out.getvalue()
    finally:
        set_show_timing(before)


def test_str_of_an_analysis_and_a_report_is_the_command_lines_text() -> None:
    from verified_indexing.engines import points

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["analyze", str(LAYERNORM), "--no-timing"]) == 0
    module = load_hlo(LAYERNORM.read_text(encoding="utf-8"), str(LAYERNORM))
    blocks = "\n\n".join(str(r) for r in analyze_module(module))
    assert out.getvalue().startswith(blocks + "\n\n")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["simplify", "-e", LONG]) == 0
    before = points.set_enabled(False)  # the command line's engines (it proves small domains with isl)
    try:
        report = simplify_with_report(parse_indexing_map(LONG))
    finally:
        points.set_enabled(before)
    assert str(report) + "\n" == out.getvalue()
