"""Names are scoped as TVM's parser scopes them (issue 26 item 1, a false proof).

A block opens a new frame: its ``T.axis`` bindings shadow the loop variables of the
same name in the block body, and their right-hand sides are read in the enclosing
scope. Every verdict is re-checked against the plain TVMScript interpreter
(tests/tvmscript_interpreter.py: Python runs the program with frames as TVM's), which
shares nothing with the reader.
"""

from __future__ import annotations

import contextlib
import io
import re

import pytest
from cinn_interpreter import run
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st
from tvmscript_interpreter import run_tvmscript

from verified_indexing.cli import main
from verified_indexing.legality.cinn_ir import format_program, parse_program
from verified_indexing.legality.inline import compute_inline
from verified_indexing.legality.tvmscript import parse_tvmscript

SHADOW = '''from tvm.script import tir as T


@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    B = T.alloc_buffer((4,))
    for i in T.serial(4):
        with T.block("B"):
            i = T.axis.spatial(2, i // 2)
            B[i] = A[i] + 1.0
    for i in T.serial(4):
        with T.block("C"):
            vi = T.axis.spatial(4, i)
            C[vi] = B[vi] * 2.0
'''

SHADOW_CINN = '''ScheduleBlock(root)
{
  serial for (i, 0, 4)
  {
    ScheduleBlock(B)
    {
      i = axis.bind((i / 2))
      B[i] = (A[i] + 1.0f)
    }
  }
  serial for (i, 0, 4)
  {
    ScheduleBlock(C)
    {
      vi = axis.bind(i)
      C[vi] = (B[vi] * 2.0f)
    }
  }
}
'''


def test_block_axis_shadowing_a_loop_variable_is_not_a_false_proof() -> None:
    # The oracle: B's block writes B[0] and B[1] only; C reads B[2], which nothing writes.
    with pytest.raises(KeyError, match=r"B\[2\]"):
        run_tvmscript(SHADOW)
    p = parse_tvmscript(SHADOW)
    assert "i_1 = axis.bind(i floordiv 2)" in format_program(p)  # renamed apart, as TVM's printer does
    rep = compute_inline(p, "B")
    assert rep.status != "inlined"
    assert rep.status == "refused" and "both write B[0]" in rep.reason, rep.reason
    # where the consumer reads only what is written, the answer is right and re-checked
    ok = SHADOW.replace("C[vi] = B[vi] * 2.0", "C[vi] = B[vi // 2] * 2.0")
    q = parse_tvmscript(ok)
    assert run(q, {"A"}) == run_tvmscript(ok)
    assert compute_inline(q, "B").status == "refused"  # i = 0, 1 both write B[0]: not injective


def test_block_axis_shadowing_in_cinn_ir_is_decided() -> None:
    p = parse_program(SHADOW_CINN)  # was refused as "already defined"
    assert parse_program(format_program(p)) == p
    with pytest.raises(KeyError):  # C reads B[2], never written
        run(p, {"A"})
    rep = compute_inline(p, "B")
    assert rep.status == "refused" and "both write B[0]" in rep.reason
    identity = SHADOW_CINN.replace("(i / 2)", "(3 - i)")
    q = parse_program(identity)
    rep = compute_inline(q, "B")
    assert rep.status == "inlined" and rep.program is not None
    assert run(q, {"A"})["C"] == run(rep.program, {"A"})["C"]


def test_cli_reproducer_is_not_inlined(tmp_path: object) -> None:
    from pathlib import Path

    f = Path(str(tmp_path)) / "shadow.py"
    f.write_text(SHADOW)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["inline", str(f), "--block", "B"])
    assert code == 1 and out.getvalue().startswith("inline B: refused"), out.getvalue()


def test_remap_swapping_names_and_nested_shadowing_loops() -> None:
    text = '''@T.prim_func
def f(A: T.Buffer((3, 4), "float32"), C: T.Buffer((4, 3), "float32")):
    B = T.alloc_buffer((4, 3))
    for i, j in T.grid(3, 4):
        with T.block("B"):
            j, i = T.axis.remap("SS", [i, j])
            B[i, j] = A[j, i] * 2.0
    for i in T.serial(4):
        for i in T.serial(3):
            with T.block("C"):
                vi = T.axis.spatial(3, i)
                C[0, vi] = B[0, vi] + 1.0
'''
    p = parse_tvmscript(text)
    assert run(p, {"A"}) == run_tvmscript(text)
    rep = compute_inline(p, "B")
    assert rep.status == "inlined", rep.reason
    assert rep.program is not None
    assert run(rep.program, {"A"})["C"] == run_tvmscript(text)["C"]


# ---------------------------------------------------------------------------
# Property: random programs with shadowed and remapped names, every verdict
# re-checked by the TVMScript interpreter.
# ---------------------------------------------------------------------------

_NAMES = ("i", "j", "vi")
_EXPRS_1 = ("{a}", "{a} // 2", "3 - {a}", "{a} + 1", "{a} * 2")
_EXPRS_2 = ("{a} * 4 + {b}", "{a} + {b}", "{b} * 3 + {a}", "{a}", "{b} // 2")
_READS = ("{w}", "{w} // 2", "{w} + 1", "3 - {w}", "{w} * 2", "{w} % 4")


@st.composite
def _programs(draw: st.DrawFn) -> str:
    two = draw(st.booleans())
    l1 = draw(st.sampled_from(_NAMES))
    l2 = draw(st.sampled_from(_NAMES))  # may equal l1: the inner loop shadows the outer
    e1 = draw(st.integers(1, 4))
    e2 = draw(st.integers(1, 3))
    v = draw(st.sampled_from(_NAMES))
    loops = f"    for {l1} in T.serial({e1}):\n"
    ind = "        "
    if two:
        loops += f"{ind}for {l2} in T.serial({e2}):\n"
        ind += "    "
        expr = draw(st.sampled_from(_EXPRS_2)).format(a=l1, b=l2)
    else:
        expr = draw(st.sampled_from(_EXPRS_1)).format(a=l1)
    if two and draw(st.booleans()):  # a remap that may swap names
        w1, w2 = draw(st.permutations(_NAMES[:2]))
        bind = f'{w1}, {w2} = T.axis.remap("SS", [{l1}, {l2}])'
        store = f"{w1} * 3 + {w2}"
        value = f"A[{w1} * 3 + {w2}]" if draw(st.booleans()) else f"A[{w2}] + A[{w1}]"
        outer = f"{l1} * 3 + {l2}"  # what the store index is, in the enclosing scope
    else:
        bind = f"{v} = T.axis.spatial(16, {expr})"
        store = v
        value = f"A[{v}]"
        outer = expr
    where = ""
    bound_names = set(bind.split(" = ")[0].replace(" ", "").split(","))
    visible = not any(n in bound_names for n in re.findall(r"[a-z_]+", outer))
    if visible and draw(st.booleans()):  # read outside the block, as TVM reads it: over the loop variables
        where = f"{ind}    T.where({outer} < {draw(st.integers(1, 8))})\n"
    cl = draw(st.sampled_from(_NAMES))
    cw = draw(st.sampled_from(_NAMES))
    ce = draw(st.integers(1, 6))
    read = draw(st.sampled_from(_READS)).format(w=cw)
    return (
        "@T.prim_func\n"
        'def f(A: T.Buffer((16,), "float32"), C: T.Buffer((8,), "float32")):\n'
        "    B = T.alloc_buffer((16,))\n"
        f"{loops}"
        f'{ind}with T.block("B"):\n'
        f"{ind}    {bind}\n"
        f"{where}"
        f"{ind}    B[{store}] = {value} + 1.0\n"
        f"    for {cl} in T.serial({ce}):\n"
        '        with T.block("C"):\n'
        f"            {cw} = T.axis.spatial(8, {cl})\n"
        f"            C[{cw}] = B[{read}] * 2.0\n"
    )


@settings(max_examples=60, deadline=None)
@given(_programs())
def test_random_shadowed_programs_against_the_interpreter(text: str) -> None:
    try:
        expected: dict[str, dict[tuple[int, ...], float]] | None = run_tvmscript(text)
    except IndexError:  # an axis binding outside its domain: not a valid program
        assume(False)
        return
    except KeyError:  # the consumer reads an element nothing writes
        expected = None
    p = parse_tvmscript(text)
    if expected is not None:
        assert run(p, {"A"}) == expected  # the reader reads the program the interpreter runs
    else:
        with pytest.raises(KeyError):
            run(p, {"A"})
    rep = compute_inline(p, "B")
    event(f"{rep.status}, {'defined' if expected is not None else 'reads unwritten'}")
    if rep.status == "inlined":
        assert expected is not None, "inlined a program that reads an element nothing writes"
        assert rep.program is not None
        assert run(rep.program, {"A"})["C"] == expected["C"]


@st.composite
def _reductions(draw: st.DrawFn) -> str:
    """A reduction whose axes are named like (and may swap) the loop variables, its loops in
    either order (the init hoisted or predicated), and an epilogue block."""
    l1, l2 = draw(st.permutations(_NAMES))[:2]
    a, r = draw(st.permutations(_NAMES))[:2]
    e1, e2 = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    outer_first = draw(st.booleans())
    loops = f"{l1}, {l2}" if outer_first else f"{l2}, {l1}"
    grid = f"{e1}, {e2}" if outer_first else f"{e2}, {e1}"
    op, init = draw(st.sampled_from([("+", "T.float32(0)"), ("max", 'T.float32("-inf")')]))
    update = f"B[{a}] + A[{a} * 3 + {r}]" if op == "+" else f"T.max(B[{a}], A[{a} * 3 + {r}])"
    epi = draw(st.sampled_from(["B[{w}] + bias[{w}]", "T.max(B[{w}], T.float32(0))", "B[{w}] * T.float32(2)"]))
    w = draw(st.sampled_from(_NAMES))
    return (
        "@T.prim_func\n"
        'def f(A: T.Buffer((12,), "float32"), bias: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):\n'
        "    B = T.alloc_buffer((4,))\n"
        f"    for {loops} in T.grid({grid}):\n"
        '        with T.block("B"):\n'
        f'            {a}, {r} = T.axis.remap("SR", [{l1}, {l2}])\n'
        "            with T.init():\n"
        f"                B[{a}] = {init}\n"
        f"            B[{a}] = {update}\n"
        f"    for {w} in T.serial({e1}):\n"
        '        with T.block("C"):\n'
        f"            {w} = T.axis.spatial(4, {w})\n"
        f"            C[{w}] = {epi.format(w=w)}\n"
    )


@settings(max_examples=40, deadline=None)
@given(_reductions())
def test_random_shadowed_reductions_against_the_interpreter(text: str) -> None:
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue
    from verified_indexing.legality.reverse_inline import reverse_compute_inline

    expected = run_tvmscript(text)
    p = parse_tvmscript(text)
    inputs = {"A", "bias"}
    assert run(p, inputs) == expected
    for name, rep in (("fuse", fuse_reduction_epilogue(p, "C")), ("reverse", reverse_compute_inline(p, "C")),
                      ("inline", compute_inline(p, "B"))):
        event(f"{name}: {rep.status}")
        if rep.status in ("fused", "inlined"):
            assert rep.program is not None
            got = run(rep.program, inputs)["C"]
            assert got.keys() == expected["C"].keys()
            assert all(abs(got[k] - expected["C"][k]) < 1e-9 for k in got), (name, text)


def _cinn_expr(e: str) -> str:
    return e.replace("//", "floordiv").replace("%", "mod")


@st.composite
def _paired(draw: st.DrawFn) -> tuple[str, str]:
    """The same random program as TVMScript and as CINN IR text, names shadowed at will."""
    l1 = draw(st.sampled_from(_NAMES))
    l2 = draw(st.sampled_from(_NAMES))
    two = draw(st.booleans())
    e1, e2 = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    v = draw(st.sampled_from(_NAMES))
    expr = (draw(st.sampled_from(_EXPRS_2)).format(a=l1, b=l2) if two
            else draw(st.sampled_from(_EXPRS_1)).format(a=l1))
    bound = draw(st.integers(1, 8)) if draw(st.booleans()) else None
    if v in re.findall(r"[a-z_]+", expr):
        bound = None  # T.where would name the block's own variable: TVM rejects it
    cl, cw = draw(st.sampled_from(_NAMES)), draw(st.sampled_from(_NAMES))
    ce = draw(st.integers(1, 6))
    read = draw(st.sampled_from(_READS)).format(w=cw)
    ind = "        " + ("    " if two else "")
    tvm = ("@T.prim_func\n"
           'def f(A: T.Buffer((16,), "float32"), C: T.Buffer((8,), "float32")):\n'
           "    B = T.alloc_buffer((16,))\n"
           f"    for {l1} in T.serial({e1}):\n"
           + (f"        for {l2} in T.serial({e2}):\n" if two else "")
           + f'{ind}with T.block("B"):\n'
           f"{ind}    {v} = T.axis.spatial(16, {expr})\n"
           + (f"{ind}    T.where({expr} < {bound})\n" if bound is not None else "")
           + f"{ind}    B[{v}] = A[{v}] + 1.0\n"
           f"    for {cl} in T.serial({ce}):\n"
           '        with T.block("C"):\n'
           f"            {cw} = T.axis.spatial(8, {cl})\n"
           f"            C[{cw}] = B[{read}] * 2.0\n")
    store = f"B[{v}] = (A[{v}] + 1.0f)"
    inner = f"ScheduleBlock(B)\n{{\n{v} = axis.bind({_cinn_expr(expr)})\n{store}\n}}"
    if bound is not None:  # around the block, over the loop variables (as TVM reads T.where)
        inner = f"if (({_cinn_expr(expr)} < {bound}))\n{{\n{inner}\n}}"
    if two:
        inner = f"serial for ({l2}, 0, {e2})\n{{\n{inner}\n}}"
    cinn = (f"ScheduleBlock(root)\n{{\nserial for ({l1}, 0, {e1})\n{{\n{inner}\n}}\n"
            f"serial for ({cl}, 0, {ce})\n{{\nScheduleBlock(C)\n{{\n{cw} = axis.bind({cl})\n"
            f"C[{cw}] = (B[{_cinn_expr(read)}] * 2.0f)\n}}\n}}\n}}\n")
    return tvm, cinn


@settings(max_examples=50, deadline=None)
@given(_paired())
def test_random_shadowed_cinn_ir_against_the_interpreter(pair: tuple[str, str]) -> None:
    """CINN IR scopes names like TVMScript: the CINN text reads to the program the
    TVMScript interpreter runs, and every inline verdict on it is re-checked."""
    tvm, cinn = pair
    try:
        expected: dict[str, dict[tuple[int, ...], float]] | None = run_tvmscript(tvm)
    except IndexError:
        assume(False)
        return
    except KeyError:
        expected = None
    p = parse_program(cinn)
    assert parse_program(format_program(p)) == p
    if expected is not None:
        assert run(p, {"A"}) == expected
    rep = compute_inline(p, "B")
    event(f"cinn {rep.status}")
    if rep.status == "inlined":
        assert expected is not None and rep.program is not None
        assert run(rep.program, {"A"})["C"] == expected["C"]


def test_an_axis_value_naming_an_earlier_axis_of_the_block_is_bad_input() -> None:
    from verified_indexing.errors import NotModelledError, ParseError

    text = '''@T.prim_func
def main(A: T.Buffer((4,), "float32"), C: T.Buffer((4,), "float32")):
    for vi in range(4):
        with T.block("C"):
            vi = T.axis.spatial(4, 3 - vi)
            vj = T.axis.spatial(4, vi)
            C[vj] = A[vi]
'''
    with pytest.raises(ParseError, match="iteration variable of this block") as info:  # TVM: "undefined variable vi"
        parse_tvmscript(text)
    assert not isinstance(info.value, NotModelledError)


@settings(max_examples=25, deadline=None)
@given(_programs())
def test_random_shadowed_programs_scoped_as_tvms_own_parser(text: str) -> None:
    """TVM parses each random program and prints it back with every name resolved
    (shadowing names renamed apart): both texts read to programs storing the same."""
    tvm = pytest.importorskip("tvm")
    src = text.replace("T.block(", "T.sblock(").replace("T.alloc_buffer(", "T.sblock_alloc_buffer(")
    src = src.replace("@T.prim_func\n", "@T.prim_func(s_tir=True)\n")
    try:
        printed = str(tvm.script.from_source(src).script())
    except Exception:  # TVM rejects the program (an ill-formed binding...): nothing to compare
        event("TVM rejects")
        assume(False)
        return
    event("TVM parses")
    ours, theirs = parse_tvmscript(text), parse_tvmscript(printed)
    try:
        mine = run(ours, {"A"})
    except KeyError:
        with pytest.raises(KeyError):
            run(theirs, {"A"})
        return
    assert run(theirs, {"A"}) == mine


NESTED_SHADOW = '''@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(4):
        with T.block("B_o"):
            i = T.axis.spatial(4, 3 - i)
            for j in range(2):
                with T.block("B"):
                    j = T.axis.spatial(2, 1 - j)
                    B[i * 2 + j] = A[i * 2 + j] + T.float32(1.0)
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] * T.float32(2.0)
'''


def test_nested_blocks_scope_their_axes_as_tvm_does() -> None:
    """An outer block (blockize) opens a frame too: its axes shadow the loop variables in
    everything inside, inner blocks' axes shadow in turn; the outer block is flattened."""
    p = parse_tvmscript(NESTED_SHADOW)
    expected = run_tvmscript(NESTED_SHADOW)
    assert run(p, {"A"}) == expected
    rep = compute_inline(p, "B")
    assert rep.status == "inlined" and rep.program is not None
    assert run(rep.program, {"A"})["C"] == expected["C"]
    tvm = pytest.importorskip("tvm")
    src = NESTED_SHADOW.replace("T.block(", "T.sblock(").replace("T.alloc_buffer(", "T.sblock_alloc_buffer(")
    printed = str(tvm.script.from_source(src.replace("@T.prim_func\n", "@T.prim_func(s_tir=True)\n")).script())
    assert run(parse_tvmscript(printed), {"A"}) == expected


def test_a_loop_inside_a_cinn_block_keeps_the_blocks_names() -> None:
    text = """ScheduleBlock(root)
{
  serial for (i, 0, 4)
  {
    ScheduleBlock(B)
    {
      i = axis.bind((3 - i))
      serial for (k, 0, 2)
      {
        B[i, k] = (A[i] + 1.0f)
      }
    }
  }
}
"""
    p = parse_program(text)  # the scope inside the loop: i, k, then the block's i (renamed i_1)
    assert "B[i_1, k] = (A[i_1] + 1.0f)" in format_program(p)
    assert parse_program(format_program(p)) == p
    from cinn_interpreter import input_value

    assert run(p, {"A"})["B"] == {(3 - i, k): input_value("A", (3 - i,)) + 1.0 for i in range(4) for k in range(2)}
