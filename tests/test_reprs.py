"""Objects for people (issue 28 item 3): the public result types have a one-line ``repr`` under 300
characters that still says what the object is (a notebook cell, a log line), while ``str()`` stays the
command line's text. Inputs are real: the layer norm XLA compiled (examples/jax_hlo), a long map, a
refuted rule."""

from __future__ import annotations

import ast
import contextlib
import io
from pathlib import Path
from typing import Any

import pytest

from verified_indexing import parse_indexing_map
from verified_indexing.cli import main
from verified_indexing.hlo import analyze_module
from verified_indexing.hlo.report import load_hlo
from verified_indexing.proofs.user_rule import check_user_rule
from verified_indexing.simplify import simplify_with_report

ROOT = Path(__file__).resolve().parent.parent
LAYERNORM = ROOT / "examples" / "jax_hlo" / "layernorm.post.hlo"
TRANSPOSE = ROOT / "examples" / "jax_hlo" / "transpose_021.post.hlo"
GATHER = ROOT / "examples" / "jax_hlo" / "gather.post.hlo"
AUDIT = ROOT / "tests" / "hlo_corpus" / "audit"
INVERTIBLE = "(d0, d1) -> (d0 + d1, d0), domain: d0 in [0, 3], d1 in [0, 3]"
UNSUPPORTED = """HloModule m
ENTRY e {
  p = f32[8] parameter(0)
  ROOT r = f32[8] custom-call(p), custom_call_target="foo"
}
"""
LONG = ("(d0, d1, d2, d3) -> ((d0 * 1024 + d1 * 256 + d2 * 16 + d3) floordiv 512, "
        "((d0 * 1024 + d1 * 256 + d2 * 16 + d3) mod 512) floordiv 16, (d0 * 1024 + d1 * 256 + d2 * 16 + d3) mod 16), "
        "domain: d0 in [0, 7], d1 in [0, 3], d2 in [0, 15], d3 in [0, 15]")


def _program(name: str) -> Any:
    from verified_indexing import parse_program

    path = ROOT / "examples" / "cinn" / name
    return parse_program(path.read_text(encoding="utf-8"), str(path))


def _objects() -> dict[str, object]:
    from verified_indexing import analyze, audit, compute_inline, fuse, inverse, parse_module
    from verified_indexing.engines.verify_cache import CacheCheck
    from verified_indexing.hlo.coalescing import coalescing
    from verified_indexing.hlo.kernels import audit_dump
    from verified_indexing.hlo.utilization import operand_utilization, tile_reads
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue
    from verified_indexing.legality.reverse_inline import reverse_compute_inline
    from verified_indexing.tvm.driver import StepValidation
    from verified_indexing.tvm.equivalence import check_equivalence

    module = load_hlo(LAYERNORM.read_text(encoding="utf-8"), str(LAYERNORM))
    results = analyze_module(module)
    big = max(results, key=lambda r: r.num_maps)
    refuted = check_user_rule("x floordiv c0 -> x truncdiv c0", where="c0 > 0")
    proved = check_user_rule("(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)", where="c0 > 0, c1 > 0")
    report = simplify_with_report(parse_indexing_map(LONG))
    fusions = fuse(ROOT / "examples" / "mlir" / "real_module.mlir")
    audited = audit(AUDIT / "module.hlo", AUDIT / "claims.txt")
    transpose = parse_module(TRANSPOSE.read_text(encoding="utf-8"), str(TRANSPOSE))
    gather = parse_module(GATHER.read_text(encoding="utf-8"), str(GATHER))
    inlined = compute_inline(_program("collision.txt"), None)
    reverse = reverse_compute_inline(_program("reverse_inline.txt"), "D")
    equivalence = check_equivalence(_program("reverse_inline.txt"), _program("reverse_inline.txt"))
    with_unsupported = next(r for r in analyze_module(load_hlo(UNSUPPORTED, "<u>")) if r.unsupported)
    objects: dict[str, object] = {
        "Module": module,
        "Computation": module.entry,
        "ComputationIndexing": big,
        "TargetIndexing": big.targets[0],
        "AccessMap": big.targets[0].maps[0],
        "UnsupportedOp": with_unsupported.unsupported[0],
        "Verdict (refuted)": refuted,
        "Verdict (proved)": proved,
        "Counterexample": refuted.counterexample,
        "SimplifyReport": report,
        "Step": report.steps[0],
        "Analysis": analyze(LAYERNORM),
        "Fusions": fusions,
        "FusionReport": fusions[0],
        "FusionReport (illegal)": next(r for r in fusions if r.status == "illegal"),
        "Obligation": next(o for r in fusions for o in r.obligations),
        "PassDecision": next(r.pass_decision for r in fusions if r.pass_decision is not None),
        "AuditReport": audited,
        "AuditResult": audited[0],
        "KernelResult": audit_dump(str(AUDIT / "kernels"))[0],
        "OperandUtilization": operand_utilization(gather)[0],
        "TileRead": tile_reads(transpose, [0, 0, 0], [1, 8, 4])[0],
        "CoalescingResult": coalescing(transpose)[0],
        "InlineReport (refused)": inlined,
        "InlineCheck": inlined.checks[0],
        "InlineReport (reverse-inline)": reverse,
        "EpilogueReport": fuse_reduction_epilogue(_program("matmul_sub.txt"), "D"),
        "InverseResult": inverse(parse_indexing_map(INVERTIBLE)),
        "InverseResult (refuted)": inverse(parse_indexing_map(LONG.replace("d3) mod 16)", "d3) mod 8)"))),
        "CacheCheck": CacheCheck("k" * 64, LONG * 3, "confirmed", "re-proved by isl"),
        "EquivalenceReport": equivalence,
        "StepValidation": StepValidation("compute_inline", ("B",), "applied", "", "x" * 5000, "y" * 5000,
                                         equivalence, {}, None, ()),
    }
    from verified_indexing.mlir_driver import find_iree_opt, validate_mlir

    if find_iree_opt() is not None:
        path = ROOT / "examples" / "mlir" / "validate_mlir_outs_reduction.mlir"
        v = validate_mlir(path.read_text(encoding="utf-8"), str(path))
        objects.update({"MlirValidation": v, "FusedCheck": v.fused[0], "Decision": v.decisions[0]})
        path = ROOT / "examples" / "mlir" / "validate_mlir_chain.mlir"
        chain = validate_mlir(path.read_text(encoding="utf-8"), str(path))
        if chain.refusals:
            objects["Refusal"] = chain.refusals[0]
    return objects


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


def _types_with_to_json() -> set[str]:
    """Every class of the package with a ``to_json`` method (a result or a part of one), read from the source."""
    names: set[str] = set()
    for path in (ROOT / "verified_indexing").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and any(
                isinstance(f, ast.FunctionDef) and f.name == "to_json" for f in node.body
            ):
                names.add(node.name)
    return names


def test_every_result_type_is_enumerated() -> None:
    """A result type added later (a class with to_json) must get a short repr and an entry here."""
    from verified_indexing.mlir_driver import find_iree_opt

    covered = {type(o).__name__ for o in OBJECTS.values()}
    missing = _types_with_to_json() - covered
    if find_iree_opt() is None:
        missing -= {"MlirValidation", "FusedCheck", "Decision", "Refusal"}
    assert not missing, missing


def test_the_report_types_said_what_they_are() -> None:
    fusion = OBJECTS["FusionReport (illegal)"]
    assert repr(fusion).startswith(f"<FusionReport {fusion.producer.name} -> {fusion.consumer.name} ")  # type: ignore[attr-defined]
    assert ": illegal" in repr(fusion)
    inlined = OBJECTS["InlineReport (refused)"]
    assert repr(inlined).startswith("<InlineReport B: refused; ") and "both write B[0]" in repr(inlined)
    assert repr(OBJECTS["InverseResult"]).startswith("<InverseResult proved: (d0, d1) -> (d0 + d1, d0)")
    assert "; inverse " in repr(OBJECTS["InverseResult"])
    assert repr(OBJECTS["InverseResult (refuted)"]).startswith("<InverseResult refuted: ")
    analysis: Any = OBJECTS["Analysis"]
    proofs = sum(len(r.verdicts()) for r in analysis)
    assert repr(analysis) == (f"<Analysis jit_layernorm: {len({r.fusion for r in analysis})} fusions, "
                              f"{sum(r.num_maps for r in analysis)} maps, {proofs} proofs ({proofs} proved)>")


def _cli_text(*argv: str) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        main([*argv, "--no-timing"])
    return out.getvalue()


def test_str_of_the_top_level_results_is_the_command_lines_text() -> None:
    from verified_indexing import analyze, audit, fuse
    from verified_indexing._timing import set_show_timing
    from verified_indexing.hlo.utilization import operand_utilization

    before = set_show_timing(False)  # as --no-timing (the summary line's time)
    try:
        assert str(analyze(LAYERNORM)) + "\n" == _cli_text("analyze", str(LAYERNORM))
        mlir = ROOT / "examples" / "mlir" / "real_module.mlir"
        assert str(fuse(mlir)) + "\n" == _cli_text("fuse", str(mlir))
        assert str(audit(AUDIT / "module.hlo", AUDIT / "claims.txt")) + "\n" == _cli_text(
            "audit", str(AUDIT / "module.hlo"), str(AUDIT / "claims.txt"))
        entries = operand_utilization(load_hlo(GATHER.read_text(encoding="utf-8"), str(GATHER)))
        assert "".join(f"{e}\n" for e in entries) == _cli_text("utilization", str(GATHER))
    finally:
        set_show_timing(before)


def test_str_of_an_inverse_an_epilogue_and_a_validation_is_the_command_lines_text() -> None:
    from verified_indexing import inverse
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue
    from verified_indexing.mlir_driver import find_iree_opt, validate_mlir

    for text in (INVERTIBLE, LONG, INVERTIBLE.replace("d0 + d1, d0", "d0 + d1")):
        assert str(inverse(parse_indexing_map(text))) + "\n" == _cli_text("invert", "-e", text)
    path = ROOT / "examples" / "cinn" / "matmul_sub.txt"
    assert str(fuse_reduction_epilogue(_program("matmul_sub.txt"), "D")) + "\n" == _cli_text(
        "fuse-epilogue", str(path), "--block", "D")
    if find_iree_opt() is not None:
        for name in ("validate_mlir_outs_reduction.mlir", "validate_mlir_chain.mlir"):
            mlir = ROOT / "examples" / "mlir" / name
            v = validate_mlir(mlir.read_text(encoding="utf-8"), str(mlir), timeout=30.0)
            assert str(v) + "\n" == _cli_text("validate-mlir", str(mlir))


def test_str_of_an_inline_report_is_inline_or_reverse_inlines_text() -> None:
    from verified_indexing import compute_inline
    from verified_indexing.legality.reverse_inline import reverse_compute_inline

    cinn = ROOT / "examples" / "cinn"
    for name in ("collision.txt", "reduction.txt"):
        blocks = [None] if name == "collision.txt" else ["B"]
        for block in blocks:
            argv = ["inline", str(cinn / name)] + ([] if block is None else ["--block", block])
            assert str(compute_inline(_program(name), block)) + "\n" == _cli_text(*argv)
    rep = reverse_compute_inline(_program("reverse_inline.txt"), "D")
    assert rep.kind == "reverse-inline" and str(rep).startswith("reverse-inline D into ")
    assert str(rep) + "\n" == _cli_text("reverse-inline", str(cinn / "reverse_inline.txt"), "--block", "D")
