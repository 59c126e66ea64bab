"""TVMScript read with ``ast`` as the CINN IR: TVM test-style functions inlined,
reverse-inlined and epilogue-fused, checked against the plain interpreter
(tests/cinn_interpreter.py); unsupported constructs give positioned errors."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest
from cinn_interpreter import run

from verified_indexing.cli import main
from verified_indexing.errors import ParseError
from verified_indexing.legality.cinn_ir import For, If, ScheduleBlock, format_program, parse_program, walk_blocks
from verified_indexing.legality.epilogue import fuse_reduction_epilogue
from verified_indexing.legality.inline import compute_inline
from verified_indexing.legality.reverse_inline import reverse_compute_inline
from verified_indexing.legality.tvmscript import is_tvmscript, parse_tvmscript

EX = Path(__file__).resolve().parent.parent / "examples" / "tvm"
INPUTS = {"A", "B", "bias"}


def _tvm(name: str):  # type: ignore[no-untyped-def]
    return parse_tvmscript((EX / name).read_text())


def test_detection() -> None:
    assert is_tvmscript((EX / "elementwise.py").read_text())
    assert is_tvmscript("import tvm\n")
    assert not is_tvmscript("ScheduleBlock(root)\n{\n}\n")


def test_elementwise_inline_and_reverse_inline() -> None:
    p = _tvm("elementwise.py")
    assert parse_program(format_program(p)) == p
    rep = compute_inline(p, "B")
    assert rep.status == "inlined" and rep.program is not None
    assert "C[vi, vj] = ((A[vi, vj] * 2.0f) + 1.0f)" in format_program(rep.program)
    rev = reverse_compute_inline(p, "C")
    assert rev.status == "inlined" and rev.program is not None and rev.consumers == ("B",)
    assert "ScheduleBlock(C)" not in format_program(rev.program)
    small = parse_tvmscript((EX / "elementwise.py").read_text().replace("128", "6"))
    for prog in (compute_inline(small, "B").program, reverse_compute_inline(small, "C").program):
        assert prog is not None
        assert run(small, {"A"})["C"] == run(prog, {"A"})["C"]


def test_init_becomes_a_reduce_init_block_before_the_reduction_loop() -> None:
    p = _tvm("matmul_bias_relu.py")
    blocks = {c.block.name: c for c in walk_blocks(p)}
    assert [f.var for f in blocks["C__reduce_init"].loops] == ["i", "j"]
    assert [f.var for f in blocks["C"].loops] == ["i", "j", "k"]
    assert blocks["C__reduce_init"].order < blocks["C"].order


def test_matmul_bias_relu_fused_step_by_step() -> None:
    p = _tvm("matmul_bias_relu.py")
    bias = fuse_reduction_epilogue(p, "D")
    assert bias.status == "fused" and bias.form == "fold" and bias.program is not None
    relu = fuse_reduction_epilogue(bias.program, "E")
    assert relu.status == "fused" and relu.form == "last" and relu.program is not None
    text = format_program(relu.program)
    assert "E__reduce_init[vi, vj] = bias[vj]" in text and "select((k == 15), max(" in text
    small_text = (EX / "matmul_bias_relu.py").read_text().replace("16", "3")
    small = parse_tvmscript(small_text)
    b2 = fuse_reduction_epilogue(small, "D")
    assert b2.program is not None
    r2 = fuse_reduction_epilogue(b2.program, "E")
    assert r2.program is not None
    a, b = run(small, INPUTS)["E"], run(r2.program, INPUTS)["E"]
    assert a.keys() == b.keys() and all(abs(a[k] - b[k]) < 1e-9 for k in a)


SPLIT = '''import tvm
from tvm.script import tir as T


@T.prim_func
def split(a: T.handle, c: T.handle) -> None:
    A = T.match_buffer(a, (10,))
    B = T.alloc_buffer((10,))
    C = T.match_buffer(c, (10,))
    for io in T.serial(0, 3):
        for ii in range(4):
            with T.block("B"):
                vi = T.axis.spatial(10, io * 4 + ii)
                T.where(io * 4 + ii < 10)
                B[vi] = A[vi] * 2.0
    for i in T.serial(10):
        with T.block("C"):
            vi = T.axis.S(10, i)
            C[vi] = T.if_then_else(B[vi] > 0.5, B[9 - vi], T.min_value("float32"))
'''


def test_where_is_a_predicate_and_inline_honours_it() -> None:
    p = parse_tvmscript(SPLIT)
    blocks = {c.block.name: c for c in walk_blocks(p)}
    assert isinstance(blocks["B"].block.body[1], If)
    rep = compute_inline(p, "B")
    assert rep.status == "inlined", rep.reason
    assert rep.program is not None
    assert run(p, {"A"})["C"] == run(rep.program, {"A"})["C"]
    # Without the predicate the split writes B[10] and B[11]: the store is still injective, C reads inside.
    q = parse_tvmscript(SPLIT.replace("                T.where(io * 4 + ii < 10)\n", "")
                        .replace("C[vi] = T.if_then_else(B[vi] > 0.5, B[9 - vi], T.min_value(\"float32\"))",
                                 "C[vi] = B[vi + 2]"))
    assert compute_inline(q, "B").status == "inlined"
    r = parse_tvmscript(SPLIT.replace("C[vi] = T.if_then_else(B[vi] > 0.5, B[9 - vi], T.min_value(\"float32\"))",
                                      "C[vi] = B[vi + 2]"))
    rep = compute_inline(r, "B")  # with the predicate, B[10] and B[11] are never written
    assert rep.status == "refused" and rep.checks[-1].witness is not None
    assert rep.checks[-1].witness["consumer_iteration"] == {"i": 8}


NESTED = '''@T.prim_func
def reduce_rows(A: T.Buffer((4, 6), "float32"), D: T.Buffer((4,), "float32")):
    C = T.alloc_buffer((4,))
    for i in T.serial(4):
        for k in T.serial(6):
            with T.block("C"):
                vi = T.axis.spatial(4, i)
                vk = T.axis.reduce(6, k)
                with T.init():
                    C[vi] = T.float32("-inf")
                C[vi] = T.max(C[vi], A[vi, vk])
    for i in T.serial(4):
        with T.block("D"):
            vi = T.axis.remap("S", [i])
            D[vi] = T.max(C[vi], T.float32(0))
'''


def test_nested_for_statements_with_init_and_a_max_reduction() -> None:
    p = parse_tvmscript(NESTED)
    rep = fuse_reduction_epilogue(p, "D")
    assert rep.status == "fused" and rep.form == "fold", rep.reason
    assert rep.laws == ("max is associative", "max is commutative", "-3.40282347e+38f is the identity of max")
    assert rep.program is not None
    assert "D__reduce_init[vi] = 0" in format_program(rep.program)
    assert run(p, {"A"})["D"] == run(rep.program, {"A"})["D"]


@pytest.mark.parametrize(("snippet", "replacement", "message", "at"), [
    ("for i in T.serial(4):\n        for k", "N = T.int32()\n    for i in T.serial(N * N):\n        for k",
     "quasi-affine", "N"),
    ("C[vi] = T.max(C[vi], A[vi, vk])", "C[vi] = T.max(C[vi], A[vi * vk, vk])", "quasi-affine", "v"),
    ("D[vi] = T.max(C[vi], T.float32(0))", "if vi > 0:\n                D[vi] = C[vi]", "unsupported statement", "i"),
    ("C[vi] = T.float32(\"-inf\")", "T.evaluate(0)", "may only hold buffer stores", "T"),
    ("vi = T.axis.remap(\"S\", [i])", "vi = T.axis.remap(\"S\", [i])\n            T.where(i * i < 3)",
     "quasi-affine", "i"),
    ("vi = T.axis.remap(\"S\", [i])", "vi = T.axis.remap(\"S\", [i])\n            T.where(vi < 3)",
     "an iteration variable of this block", "v"),
    ("vk = T.axis.reduce(6, k)", "vk = T.axis.opaque(6, k)", "unsupported axis kind", "T"),
    ("def reduce_rows(", "def reduce_rows(:", "Python syntax error", ":"),
])
def test_unsupported_constructs_are_positioned_errors(snippet: str, replacement: str, message: str, at: str) -> None:
    assert snippet in NESTED
    text = NESTED.replace(snippet, replacement, 1)
    with pytest.raises(ParseError) as info:
        parse_tvmscript(text)
    assert message in info.value.message, info.value.message
    assert text[info.value.offset] == at, str(info.value)


def test_reduce_loop_not_innermost_gets_a_predicated_init() -> None:
    from tvmscript_interpreter import run_tvmscript

    text = NESTED.replace("for i in T.serial(4):\n        for k in T.serial(6):",
                          "for k in T.serial(6):\n        for i in T.serial(4):", 1)
    p = parse_tvmscript(text)  # was refused: "innermost loops"
    blocks = {c.block.name: c for c in walk_blocks(p)}
    assert [f.var for f in blocks["C__reduce_init"].loops] == ["k", "i"]
    assert run(p, {"A"}) == run_tvmscript(text)  # the init runs where vk == 0 only


def test_cli_reads_tvmscript_exit_2_when_not_modelled_3_on_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text(NESTED.replace("A[vi, vk]", "A[vi * vk, vk]"))  # well-formed TIR, not quasi-affine
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["fuse-epilogue", str(bad), "--block", "D"])
    assert code == 2 and "quasi-affine" in err.getvalue() and "Traceback" not in err.getvalue()
    assert err.getvalue().startswith("unknown: ")
    bad.write_text(NESTED.replace("A[vi, vk]", "A[vi, zz]"))  # an undefined name: bad input
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        code = main(["fuse-epilogue", str(bad), "--block", "D"])
    assert code == 3 and "unknown variable 'zz'" in err.getvalue()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["reverse-inline", str(EX / "elementwise.py"), "--block", "C"])
    assert code == 0 and out.getvalue().startswith("reverse-inline C into B: inlined")


def test_structure_of_the_converted_program() -> None:
    p = _tvm("matmul_bias_relu.py")
    assert isinstance(p, ScheduleBlock) and p.name == "root"
    assert all(isinstance(s, For) for s in p.body)


def test_symbolic_sizes_are_size_parameters() -> None:
    from verified_indexing.legality.cinn_ir import at_sizes, program_sizes

    p = _tvm("symbolic.py")
    assert program_sizes(p) == ("N",)
    rep = compute_inline(p, "B")
    assert rep.status == "inlined" and rep.reason == "all checks proved for every size (N)"
    assert rep.program is not None
    for n in (0, 1, 2, 7):
        assert run(at_sizes(p, {"N": n}), {"A"}).get("C") == run(at_sizes(rep.program, {"N": n}), {"A"}).get("C")
    bad = compute_inline(_tvm("symbolic_off_by_one.py"), "B")
    assert bad.status == "refused"
    w = bad.checks[-1].witness
    assert w is not None and w["sizes"] == {"N": 1}
    with pytest.raises(KeyError):  # at N = 1, C reads B[1], never written
        run(at_sizes(_tvm("symbolic_off_by_one.py"), {"N": 1}), {"A"})


CAST = '''@T.prim_func
def f(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,), "float16")
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = T.Cast("float16", A[vi] * T.float32(1.1))
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = T.float32(B[vi]) * T.float32(3.0)
'''


def test_a_cast_is_never_dropped_by_a_rewrite() -> None:
    from tvmscript_interpreter import run_tvmscript

    from verified_indexing.legality.tvmscript import format_tvmscript

    p = parse_tvmscript(CAST)
    rep = compute_inline(p, "B")
    assert rep.status == "inlined" and rep.program is not None
    text = format_program(rep.program)
    assert "float16(" in text and "float32(" in text, text  # the rounding to half precision is kept
    expected = run_tvmscript(CAST)["C"]
    assert run(rep.program, {"A"})["C"] == expected
    assert run_tvmscript(format_tvmscript(rep.program, CAST))["C"] == expected
