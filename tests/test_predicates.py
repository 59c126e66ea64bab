"""Predicates (``if (affine) { ... }`` in CINN, ``T.where`` in TVM): parsed into the
iteration domain, refused with a position when not affine, and honoured by
ComputeInline; random guarded programs judged by enumeration and the plain
interpreter (tests/cinn_interpreter.py)."""

from __future__ import annotations

import pytest
from cinn_interpreter import run
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing.errors import ParseError
from verified_indexing.legality.cinn_ir import If, format_program, parse_program
from verified_indexing.legality.inline import compute_inline

PROGRAM = """ScheduleBlock(root)
{{
  {{
    serial for (i, 0, {n})
    {{
      if ({pguard})
      {{
        ScheduleBlock(B)
        {{
          i0 = axis.bind(i)
          B[{store}] = exp(A[i0])
        }}
      }}
    }}
    serial for (i, 0, {m})
    {{
      ScheduleBlock(C)
      {{
        i0 = axis.bind(i)
        if ({cguard})
        {{
          C[i0] = (B[{read}] * 2)
        }}
      }}
    }}
  }}
}}"""


def _text(pguard: str = "(i < 6)", cguard: str = "(i0 >= 1) && (i0 + 2 <= 7)", n: int = 8, m: int = 8,
          store: str = "i0", read: str = "i0") -> str:
    return PROGRAM.format(pguard=pguard, cguard=cguard, n=n, m=m, store=store, read=read)


def test_predicates_parse_print_and_round_trip() -> None:
    text = _text()
    p = parse_program(text)
    assert format_program(p) == text
    guard = p.body[0].body[0].body[0]  # type: ignore[union-attr]
    assert isinstance(guard, If) and [op for _, op, _ in guard.conds] == ["<"]


@pytest.mark.parametrize(("guard", "message", "at"), [
    ("(A[i] > 0)", "must compare affine expressions", "["),
    ("(i * i < 3)", "semi-affine", "*"),
    ("(i != 2)", "'!=' in a predicate", "!"),
    ("(i < 2) || (i > 4)", "'||'", "|"),
    ("(i)", "must be a comparison", "i"),
    ("(k < 2)", "unknown variable 'k'", "k"),
])
def test_non_affine_predicates_are_refused_with_a_position(guard: str, message: str, at: str) -> None:
    text = _text(pguard=guard)
    with pytest.raises(ParseError) as info:
        parse_program(text)
    assert message in info.value.message
    assert text[info.value.offset] == at


def test_else_is_refused() -> None:
    text = _text().replace("          B[i0] = exp(A[i0])\n        }\n      }\n",
                           "          B[i0] = exp(A[i0])\n        }\n      }\n      else\n      {\n      }\n", 1)
    with pytest.raises(ParseError, match="'else' branches are not modelled"):
        parse_program(text)


def test_inline_honours_both_predicates() -> None:
    p = parse_program(_text())
    rep = compute_inline(p, "B")
    assert rep.status == "inlined", rep.reason
    assert rep.program is not None
    text = format_program(rep.program)
    assert "if ((i0 + 2 <= 7) && (i0 >= 1))" in text or "if ((i0 >= 1) && (i0 + 2 <= 7))" in text
    assert run(p, {"A"})["C"] == run(rep.program, {"A"})["C"]


def test_a_read_outside_the_guarded_region_is_refused_and_reproduces() -> None:
    p = parse_program(_text(cguard="(i0 >= 1)"))
    rep = compute_inline(p, "B")
    assert rep.status == "refused"
    w = rep.checks[-1].witness
    assert w is not None and w["consumer_iteration"] == {"i": 6}
    with pytest.raises(KeyError):  # the interpreter: C reads B[6], never written
        run(p, {"A"})


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 7), st.integers(1, 7), st.integers(0, 7), st.integers(0, 7), st.integers(0, 2),
       st.integers(-1, 2), st.sampled_from(["<", "<=", ">=", "=="]))
def test_random_guarded_inlines_agree_with_enumeration_and_the_interpreter(
    n: int, m: int, a: int, b: int, shift: int, read_shift: int, op: str
) -> None:
    pguard = f"(i {op} {a})" if op != "==" else f"(i >= {a}) && (i <= {a + 2})"
    cguard = f"(i0 + {read_shift} >= 0) && (i0 < {b})"
    store = f"i0 + {shift}"
    read = f"i0 + {read_shift}"
    p = parse_program(_text(pguard, cguard, n, m, store, read))
    rep = compute_inline(p, "B")

    def holds(i: int) -> bool:
        return {"<": i < a, "<=": i <= a, ">=": i >= a, "==": a <= i <= a + 2}[op]

    written = {i + shift for i in range(n) if holds(i)}
    reads = {i + read_shift for i in range(m) if i + read_shift >= 0 and i < b}
    legal = reads <= written and bool(reads)
    if not reads:  # no guarded consumer iteration reads B: nothing to check either way
        return
    assert rep.status == ("inlined" if legal else "refused"), (rep.reason, pguard, cguard, n, m)
    if legal:
        assert rep.program is not None
        assert run(p, {"A"})["C"] == run(rep.program, {"A"})["C"]
    else:
        w = rep.checks[-1].witness
        assert w is not None
        (t,) = w["consumer_iteration"].values()
        assert t < b and t + read_shift >= 0 and t + read_shift not in written
