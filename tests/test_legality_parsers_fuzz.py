"""Mutated inputs never crash the linalg and CINN parsers: they parse, or raise
a positioned ParseError (a VerifiedIndexingError)."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing.errors import ParseError, VerifiedIndexingError
from verified_indexing.legality.cinn_ir import format_program, parse_program
from verified_indexing.legality.linalg import check_fusion, fusion_pairs, parse_linalg

ROOT = Path(__file__).resolve().parent.parent
MLIR_TEXTS = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples" / "mlir").glob("*.mlir"))]
CINN_TEXTS = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "examples" / "cinn").glob("*.txt"))]
ALPHABET = "{}()[]<>,:=%#^+-*/ \n0123456789dxabfi\"?"


@st.composite
def mutated(draw: st.DrawFn, texts: list[str]) -> str:
    text = draw(st.sampled_from(texts))
    for _ in range(draw(st.integers(1, 3))):
        pos = draw(st.integers(0, len(text)))
        op = draw(st.sampled_from(["delete", "insert", "replace"]))
        ch = draw(st.sampled_from(ALPHABET))
        if op == "delete":
            text = text[:pos] + text[pos + 1 :]
        elif op == "insert":
            text = text[:pos] + ch + text[pos:]
        else:
            text = text[:pos] + ch + text[pos + 1 :]
    return text


@settings(max_examples=150)
@given(mutated(CINN_TEXTS))
def test_cinn_parser_never_crashes(text: str) -> None:
    try:
        p = parse_program(text)
    except ParseError as exc:
        assert exc.line >= 1 and exc.column >= 1
        return
    assert parse_program(format_program(p)) == p


@settings(max_examples=150)
@given(mutated(MLIR_TEXTS))
def test_linalg_parser_never_crashes(text: str) -> None:
    try:
        ops = parse_linalg(text)
    except ParseError as exc:
        assert exc.line >= 1 and exc.column >= 1
        return
    for p, c in fusion_pairs(ops)[:1]:
        try:
            rep = check_fusion(p, c)
        except VerifiedIndexingError:
            continue
        assert rep.status in ("legal", "illegal", "unknown")
