"""Reduction epilogue fusion: the correct fusions proven (and agreeing with the
plain interpreter of tests/cinn_interpreter.py), the classic wrong ones refuted
with values that the interpreter reproduces; random epilogues."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from cinn_interpreter import run
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing.legality.cinn_ir import format_program, parse_program
from verified_indexing.legality.epilogue import fuse_reduction_epilogue

EX = Path(__file__).resolve().parent.parent / "examples" / "cinn"
INPUTS = ("A", "B", "X", "bias")


def _load(name: str):  # type: ignore[no-untyped-def]
    return parse_program((EX / name).read_text())


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def _same(original, fused, tensor: str) -> bool:  # type: ignore[no-untyped-def]
    a, b = run(original, INPUTS)[tensor], run(fused, INPUTS)[tensor]
    return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)


@pytest.mark.parametrize(("name", "form", "laws"), [
    ("matmul_bias.txt", "fold", ("+ is associative", "+ is commutative", "0 is the identity of +")),
    ("matmul_relu.txt", "last", ()),
    ("matmul_sub.txt", "last", ()),
    ("matmul_transposed.txt", "fold", ("+ is associative", "+ is commutative", "0 is the identity of +")),
    ("max_bias.txt", "last", ()),
])
def test_correct_fusions_are_proven(name: str, form: str, laws: tuple[str, ...]) -> None:
    p = _load(name)
    rep = fuse_reduction_epilogue(p, "D")
    assert rep.status == "fused", rep.reason
    assert rep.form == form and rep.laws == laws
    assert all(c.status == "proved" for c in rep.checks)
    assert rep.program is not None
    text = format_program(rep.program)
    assert "ScheduleBlock(C" not in text and parse_program(text) == rep.program
    assert _same(p, rep.program, "D")


def test_bias_is_folded_into_the_init_and_relu_applied_once() -> None:
    bias = fuse_reduction_epilogue(_load("matmul_bias.txt"), "D")
    assert bias.program is not None
    text = format_program(bias.program)
    assert "D__reduce_init[i0, i1] = bias[i1]" in text
    assert "D[i0_1, i1_1] = (D[i0_1, i1_1] + (A[i0_1, k0] * B[k0, i1_1]))" in text
    relu = fuse_reduction_epilogue(_load("matmul_relu.txt"), "D")
    assert relu.program is not None
    assert "select((k == 3), max((D[i0_1, i1_1] + " in format_program(relu.program)


def test_transposed_epilogue_is_fused_transposed() -> None:
    rep = fuse_reduction_epilogue(_load("matmul_transposed.txt"), "D")
    assert rep.program is not None
    text = format_program(rep.program)
    assert "D__reduce_init[i1, i0] = bias[i0]" in text and "D[i1_1, i0_1] = (D[i1_1, i0_1] + " in text


@pytest.mark.parametrize(("name", "wrong"), [
    ("matmul_sub.txt", "matmul_sub_fused_wrong.txt"),  # (a) subtraction at every step
    ("matmul_transposed.txt", "matmul_transposed_fused_wrong.txt"),  # (b) C[j, i] fused as C[i, j]
    ("max_bias.txt", "max_bias_fused_wrong.txt"),  # (c) max reduction with the additive init
    ("matmul_relu.txt", "matmul_relu_every_step_wrong.txt"),  # ReLU at every step
])
def test_wrong_fusions_are_refuted_with_values(name: str, wrong: str) -> None:
    p, f = _load(name), _load(wrong)
    rep = fuse_reduction_epilogue(p, "D", fused=f)
    assert rep.status == "illegal" and rep.exit_code == 1
    check = rep.checks[-1]
    assert check.status == "refuted" and check.witness is not None
    w = check.witness
    assert w["original"] != w["fused"] and len(w["element"]) == 2
    assert w["sizes"] == {"i": 4, "j": 4, "k": 4}
    # The independent interpreter (other inputs, floats) sees the two programs differ there too.
    a, b = run(p, INPUTS)["D"], run(f, INPUTS)["D"]
    assert any(not _close(a[k], b[k]) for k in a)


def test_our_fused_form_checked_as_a_given_program_is_proven() -> None:
    p = _load("matmul_bias.txt")
    ours = fuse_reduction_epilogue(p, "D")
    assert ours.program is not None
    again = fuse_reduction_epilogue(p, "D", fused=ours.program)
    assert again.status == "fused"


_NEST = """ScheduleBlock(root)
{{
  {{
    serial for (i, 0, {n})
    {{
      serial for (j, 0, {m})
      {{
        ScheduleBlock(C__reduce_init)
        {{
          i0, i1 = axis.bind(i, j)
          C__reduce_init[i0, i1] = {init}
        }}
        serial for (k, 0, {kk})
        {{
          ScheduleBlock(C)
          {{
            i0_1, i1_1, k0 = axis.bind(i, j, k)
            C[i0_1, i1_1] = {update}
          }}
        }}
      }}
    }}
    {extra}serial for (i, 0, {en})
    {{
      serial for (j, 0, {em})
      {{
        ScheduleBlock(D)
        {{
          i0, i1 = axis.bind(i, j)
          D[i0, i1] = {epilogue}
        }}
      }}
    }}
  }}
}}"""


def _program(epilogue: str, n: int = 3, m: int = 3, en: int | None = None, em: int | None = None,
             update: str = "(C[i0_1, i1_1] + (A[i0_1, k0] * B[k0, i1_1]))", init: str = "0.00000000f",
             extra: str = "", kk: int = 3) -> str:
    return _NEST.format(n=n, m=m, en=n if en is None else en, em=m if em is None else em, epilogue=epilogue,
                        update=update, init=init, extra=extra, kk=kk)


def test_refusals_carry_witnesses() -> None:
    # The epilogue reads C at i0 for every j: two iterations read one element.
    rep = fuse_reduction_epilogue(parse_program(_program("(C[i0, 0] + bias[i1])")), "D")
    assert rep.status == "illegal" and "both read C[" in rep.reason
    w = rep.checks[-1].witness
    assert w is not None and len(w["iterations"]) == 2
    # The epilogue reads only part of C: the fused stores run under a predicate (the interpreter agrees).
    part = parse_program(_program("(C[i0, i1] + bias[i1])", en=2))
    rep = fuse_reduction_epilogue(part, "D")
    assert rep.status == "fused" and rep.program is not None and _same(part, rep.program, "D")
    # The epilogue reads past C's end.
    rep = fuse_reduction_epilogue(parse_program(_program("(C[i0 + 1, i1] + bias[i1])")), "D")
    assert rep.status == "illegal" and "never writes" in rep.reason
    # C is also read elsewhere.
    extra = ("serial for (i, 0, 3)\n    {\n      ScheduleBlock(E)\n      {\n        i0 = axis.bind(i)\n"
             "        E[i0] = C[i0, 0]\n      }\n    }\n    ")
    rep = fuse_reduction_epilogue(parse_program(_program("(C[i0, i1] + bias[i1])", extra=extra)), "D")
    assert rep.status == "illegal" and "also read by E" in rep.reason
    # C is a declared output.
    rep = fuse_reduction_epilogue(parse_program(_program("(C[i0, i1] + bias[i1])")), "D", outputs=["C", "D"])
    assert rep.status == "illegal" and "program output" in rep.reason
    # Two different reads of C.
    rep = fuse_reduction_epilogue(parse_program(_program("(C[i0, i1] + C[i1, i0])")), "D")
    assert rep.status == "illegal" and "2 different index tuples" in rep.reason


def test_not_a_modelled_reduction_is_unknown() -> None:
    p = parse_program(_program("(C[i0, i1] + bias[i1])", update="(C[i0_1, i1_1] + C[i0_1, k0])"))
    rep = fuse_reduction_epilogue(p, "D")
    assert rep.status == "unknown" and "another element" in rep.reason


_EPILOGUES = [
    "(C[{r}] + bias[i1])", "(bias[i0] + C[{r}])", "max(C[{r}], 0.00000000f)", "max((C[{r}] + bias[i1]), 0.00000000f)",
    "(C[{r}] * 2)", "(C[{r}] - X[i0, i1])", "exp(C[{r}])", "select((C[{r}] > 0.5f), C[{r}], X[i1, i0])",
    "min(C[{r}], bias[i0])", "max(C[{r}], bias[i0])",
]
_UPDATES = [
    ("(C[i0_1, i1_1] + (A[i0_1, k0] * B[k0, i1_1]))", "0.00000000f"),
    ("(A[i0_1, k0] + C[i0_1, i1_1])", "0.00000000f"),
    ("max(C[i0_1, i1_1], A[i0_1, k0])", "-3.40282347e+38f"),
    ("min(C[i0_1, i1_1], B[k0, i1_1])", "3.40282347e+38f"),
    ("(C[i0_1, i1_1] * A[i0_1, k0])", "1"),
]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(_EPILOGUES), st.sampled_from(_UPDATES), st.booleans(), st.integers(1, 3), st.integers(1, 3),
       st.integers(1, 3))
def test_random_epilogues_fuse_and_agree_with_the_interpreter(
    epilogue: str, update: tuple[str, str], transposed: bool, n: int, kk: int, seed: int
) -> None:
    m = n if transposed else n + seed - 1
    r = "i1, i0" if transposed else "i0, i1"
    text = _program(epilogue.format(r=r), n=n, m=m, update=update[0], init=update[1], kk=kk)
    p = parse_program(text)
    rep = fuse_reduction_epilogue(p, "D")
    assert rep.status == "fused", (rep.reason, text)
    assert rep.program is not None
    assert _same(p, rep.program, "D")
