"""Every text XLA's HLO parser accepts is read (issue 25 item 4), and every exit 3 names a position.

The inputs under tests/hlo_corpus/xla_syntax exercise the syntax of XLA's ``HloParser``: composite calls
(``is_composite=true``, ``composite.*`` frontend attributes holding ``=`` and ``:``), lit tests whose
``// CHECK:`` lines quote MLIR (``%0 = mhlo.add``), layouts with tiles, element sizes and memory spaces
(``{1,0:T(8,128)(2,1)L(1024)S(2)}``, ``E(4)``), tuples of tuples, nested and iota-tile shardings, ``origin=``,
escaped strings in metadata, JSON backend configs with braces in strings, ``control-predecessors``, async
computations on other execution threads, ``entry_computation_layout``, ``input_output_alias``,
``buffer_donor``, ``is_scheduled``, ``/*index=N*/`` comments, every narrow and fp8 type, ``token[]``, dynamic
dimensions ``f32[<=4,?]``, constants of every shape (``{...}``, tuples, complex, empty).

The oracle is XLA's own parser (``jaxlib._hlo.hlo_module_from_text``, skipped without jax): each input is
accepted by it, and the project reads the same computations, instructions, opcodes and operands as it reads
from XLA's re-print of the module.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from test_cli_io import run as _cli  # the CLI in-process: (exit code, stdout, stderr)

from verified_indexing.errors import ParseError
from verified_indexing.hlo.loader import is_stablehlo, not_hlo_reason, split_modules
from verified_indexing.hlo.parser import parse_modules

SYNTAX = Path(__file__).resolve().parent / "hlo_corpus" / "xla_syntax"
FILES = sorted(SYNTAX.glob("*.hlo"))
N_MUTATIONS = 12
POSITION = re.compile(r":\d+:\d+: (error|not modelled): ")


def _xla_parser() -> Any:
    hlo = pytest.importorskip("jaxlib._hlo")
    return hlo.hlo_module_from_text


def _pieces(path: Path) -> list[str]:
    return split_modules(path.read_text())


_ASYNC_SUGAR = re.compile(r"[a-z][a-z0-9\-]*-(start|update|done)")
_OWN_ASYNC = {"all-reduce-start", "all-reduce-done", "all-gather-start", "all-gather-done", "copy-start",
              "copy-done", "collective-permute-start", "collective-permute-done", "send-done", "recv-done"}


def _structure(text: str, source: str) -> list[tuple[str, int, tuple[str, ...], tuple[int, ...]]]:
    """(opcode, number of operands, operands' opcodes, dimensions) of every instruction the project reads,
    names aside (XLA's re-print makes names unique across computations). XLA prints an async pair that wraps
    one op as ``negate-start``/``negate-done`` without the wrapped computation: both spellings are read as
    ``async-*`` and the wrapped computations are left out."""
    out = []
    for module in parse_modules(text, source):
        wrapped = {i.attributes.get("calls", "").lstrip("%") for c in module.computations.values()
                   for i in c.instructions if i.opcode == "async-start"}
        for comp in module.computations.values():
            if comp.name in wrapped:
                continue
            for inst in comp.instructions:
                kinds = tuple(_unsugared(comp.by_name[o].opcode) for o in inst.operands)
                out.append((_unsugared(inst.opcode), len(inst.operands), kinds, inst.shape.dims))
    return sorted(out)


def _unsugared(opcode: str) -> str:
    m = _ASYNC_SUGAR.fullmatch(opcode)
    return f"async-{m.group(1)}" if m and opcode not in _OWN_ASYNC else opcode


def test_the_corpus_is_there() -> None:
    assert len(FILES) >= 8


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_xla_accepts_it_and_the_project_reads_what_xla_reads(path: Path) -> None:
    from_text = _xla_parser()
    for k, piece in enumerate(_pieces(path)):
        xla = from_text(piece)  # raises when XLA's parser rejects the text: the input would be wrong
        printed = xla.to_string()
        assert _structure(piece, f"{path.name}#{k}") == _structure(printed, "xla re-print")


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_analyze_reads_every_file(path: Path) -> None:
    code, out, err = _cli("analyze", "--no-verify", str(path))
    assert code in (0, 2), err
    assert "summary:" in out


def test_lit_check_lines_quoting_mlir_are_comments() -> None:
    # Before: '// CHECK: %0 = mhlo.constant ...' made the whole HLO file "StableHLO/MLIR, not HLO text".
    text = (SYNTAX / "composite_lit.hlo").read_text()
    assert not_hlo_reason(text) is None and not is_stablehlo(text)
    code, out, err = _cli("analyze", "--no-verify", str(SYNTAX / "composite_lit.hlo"))
    assert code == 0 and "call.5" in out, err
    # Real MLIR is still recognized, comments or not.
    mlir = "// a comment\nmodule {\n  func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n" \
        "    %0 = stablehlo.negate %a : tensor<4xf32>\n    return %0 : tensor<4xf32>\n  }\n}\n"
    assert is_stablehlo(mlir)
    assert not_hlo_reason("// x\n%0 = stablehlo.add %a, %b : tensor<f32>\n") is not None


def test_get_tuple_element_of_a_tuple_of_tuples_is_unsupported_not_a_crash() -> None:
    # Before: exit 3 "cannot compose: the first map has 1 results, the second 0 dims" (no position).
    code, out, err = _cli("analyze", "--no-verify", "--instruction", "gte", str(SYNTAX / "layouts.hlo"))
    assert code == 2 and "gte (get-tuple-element)" in out and "tuple of tuples" in out, (out, err)


def _mutations(text: str, rng: random.Random, n: int) -> list[str]:
    out = []
    for _ in range(n):
        at = rng.randrange(len(text))
        kind = rng.randrange(4)
        if kind == 0:
            out.append(text[:at])  # truncated
        elif kind == 1:
            out.append(text[:at] + text[at + 1:])  # a character lost
        elif kind == 2:
            out.append(text[:at] + rng.choice("@{}()[],=%\"") + text[at:])  # a character too many
        else:
            words = list(re.finditer(r"[A-Za-z_][\w.\-]*", text))
            w = rng.choice(words)
            out.append(text[: w.start()] + w.group(0)[::-1] + "x" + text[w.end():])  # a name changed
    return out


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_exit_3_names_a_position(path: Path) -> None:
    rng = random.Random(path.name)
    text = path.read_text()
    codes = []
    for bad in _mutations(text, rng, N_MUTATIONS):
        code, _, err = _cli("analyze", "--no-verify", "-e", bad)
        codes.append(code)
        assert code in (0, 2, 3), (code, err)
        if code == 3:
            assert POSITION.search(err), f"exit 3 without a position: {err!r}\ninput:\n{bad}"
    assert 3 in codes  # the mutations do reach the errors


def test_parse_errors_of_the_corpus_mutations_are_positioned() -> None:
    # The parser alone: every error it raises is a ParseError (line, column, text).
    rng = random.Random(1)
    for path in FILES:
        for bad in _mutations(path.read_text(), rng, 20):
            try:
                parse_modules(bad, path.name)
            except ParseError as exc:
                assert exc.line >= 1 and exc.column >= 1


def _maps(text: str) -> list[tuple[str, int, list[str]]]:
    code, out, err = _cli("analyze", "-e", text, "--computation", "ENTRY", "--json", "--no-timing")
    assert code == 0, err
    return [(t["name"], r["source"], [a["map"] for a in t["maps"]])
            for r in json.loads(out)["results"] for t in r["targets"]]


def test_async_ops_as_xla_prints_them_are_read_as_xla_reads_them() -> None:
    # XLA prints an async pair wrapping one op as 'negate-start'/'negate-done' (no wrapped computation);
    # its parser reads that as async-start calling a computation of that op. The oracle: XLA's re-print of
    # the explicit form (tests/hlo_corpus/xla_syntax/async.hlo) has the maps of the explicit form.
    from_text = _xla_parser()
    text = (SYNTAX / "async.hlo").read_text()
    printed = from_text(text).to_string()
    assert "negate-start(" in printed and "async_wrapped" not in printed
    assert _maps(printed) == _maps(text) and any(maps for _, _, maps in _maps(text))
    # Before: 'negate-start' was an op without a model (exit 2, no map).
    code, out, err = _cli("analyze", str(SYNTAX / "async_sugar.hlo"), "--computation", "ENTRY")
    assert code == 0 and "(d0, d1) -> (d1, d0)" in out, err


def _printers() -> list[tuple[str, Any]]:
    """XLA's printer options (``HloPrintOptions``): the texts its own parser reads back."""
    hlo = pytest.importorskip("jaxlib._hlo")
    o = hlo.HloPrintOptions
    out: list[tuple[str, Any]] = [("default", o()), ("short_parsable", o.short_parsable()),
                                  ("canonical", o.canonical()), ("fingerprint", o.fingerprint())]
    for attribute, value in (("print_operand_shape", True), ("print_percent", False),
                             ("include_layout_in_shapes", False), ("print_large_constants", True),
                             ("print_metadata", False), ("print_program_shape", False),
                             ("print_result_shape", False), ("print_ids", False),
                             ("canonicalize_instruction_names", True), ("indent_amount", 4)):
        opt = o()
        setattr(opt, attribute, value)
        out.append((f"{attribute}={value}", opt))
    return out


PRINTED = [*FILES, *(SYNTAX.parent / "jax" / n for n in ("scan_cumprod.pre.hlo", "pool_pad.post.hlo",
                                                         "gather_2d.post.hlo", "scatter_add.post.hlo"))]


def _map_texts(text: str) -> list[str]:
    code, out, err = _cli("analyze", "--no-verify", "--json", "--no-timing", "-e", text)
    assert code in (0, 2), err
    return sorted(a["map"] for r in json.loads(out)["results"] for t in r["targets"] for a in t["maps"])


@pytest.mark.parametrize("path", PRINTED, ids=lambda p: p.name)
def test_every_printing_of_xla_that_xla_reads_back_is_read(path: Path) -> None:
    # XLA's canonical printer writes called computations inline (to_apply=\n{ tmp_0 = ... }, calls=,
    # condition=, body=, branch_computations={{...}, {...}}): before, exit 3 "calls an unknown computation".
    from_text = _xla_parser()
    read_back = 0
    for piece in _pieces(path):
        module = from_text(piece)
        original = _map_texts(module.to_string())
        for name, options in _printers():
            text = module.to_string(options)
            try:
                from_text(text)
            except Exception:
                continue  # not a text XLA accepts
            read_back += 1
            maps = _map_texts(text)
            if name in ("canonical", "default", "print_operand_shape=True", "print_percent=False"):
                assert maps == original, name  # the same module, printed otherwise: the same maps
    assert read_back >= 2
