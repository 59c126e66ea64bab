"""Symbolic sizes (``for (i, 0, N)``): ComputeInline decided for every size at once
(size parameters as leading dims, engines.sizes); verdicts checked by the plain
interpreter (tests/cinn_interpreter.py) at several concrete sizes."""

from __future__ import annotations

from pathlib import Path

import pytest
from cinn_interpreter import run
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing.errors import ParseError
from verified_indexing.legality.cinn_ir import If, at_sizes, cond_holds, format_program, parse_program, program_sizes
from verified_indexing.legality.inline import compute_inline

EX = Path(__file__).resolve().parent.parent / "examples" / "cinn"
SIZES = (0, 1, 2, 3, 5, 8)

PROGRAM = """ScheduleBlock(root)
{{
  {{
    serial for (i, 0, {pext})
    {{
      ScheduleBlock(B)
      {{
        i0 = axis.bind(i)
        B[{store}] = exp(A[i0])
      }}
    }}
    serial for (i, 0, {cext})
    {{
      ScheduleBlock(C)
      {{
        i0 = axis.bind(i)
        C[i0] = (B[{read}] * 2)
      }}
    }}
  }}
}}"""


def _outcome(p, n: int):  # type: ignore[no-untyped-def]
    """C at size N = n, or 'unwritten' when C reads an element B never writes."""
    try:
        return run(at_sizes(p, {"N": n}), {"A"}).get("C", {})
    except KeyError:
        return "unwritten"


def _condition_holds(p, n: int) -> bool:  # type: ignore[no-untyped-def]
    """Whether the size guard a conditional inline put around the program holds at N = n."""
    guard = p.body[0]
    assert isinstance(guard, If)
    return cond_holds(guard.conds, [n])


def test_symbolic_example_is_inlined_for_every_size() -> None:
    text = (EX / "symbolic.txt").read_text()
    p = parse_program(text)
    assert program_sizes(p) == ("N",) and format_program(p) == text.rstrip("\n")
    rep = compute_inline(p, "B")
    assert rep.status == "inlined" and rep.reason == "all checks proved for every size (N)"
    assert rep.program is not None
    assert "C[i0] = (exp(A[i0 + 1]) - exp(A[i0]))" in format_program(rep.program)
    for n in SIZES:
        assert run(at_sizes(p, {"N": n}), {"A"}).get("C") == run(at_sizes(rep.program, {"N": n}), {"A"}).get("C")


def test_collision_for_some_sizes_names_the_condition() -> None:
    # Injective only when N <= 1, but C reads B[1]: under N <= 1 that is never written, so refused.
    p = parse_program(PROGRAM.format(pext="N", store="i0 floordiv 2", cext="2", read="i0"))
    rep = compute_inline(p, "B")
    assert rep.status == "refused" and "(this check holds exactly when N <= 1)" in rep.reason
    assert rep.when == "N <= 1"
    w = rep.checks[-1].witness
    assert w is not None and w["sizes"] == {"N": 2}
    (a,), (b,) = ([it["i"]] for it in w["iterations"])
    assert a != b and a // 2 == b // 2 < 2


def test_read_past_the_end_is_refused_at_a_concrete_size_that_reproduces() -> None:
    p = parse_program(PROGRAM.format(pext="N", store="i0", cext="N", read="i0 + 1"))
    rep = compute_inline(p, "B")
    assert rep.status == "refused"
    w = rep.checks[-1].witness
    assert w is not None
    assert _outcome(p, w["sizes"]["N"]) == "unwritten"


def test_reversed_read_through_the_size() -> None:
    p = parse_program(PROGRAM.format(pext="N", store="i0", cext="N", read="N - 1 - i0"))
    rep = compute_inline(p, "B")
    assert rep.status == "inlined", rep.reason
    assert rep.program is not None
    assert "C[i0] = (exp(A[N - i0 - 1]) * 2)" in format_program(rep.program) or \
        "exp(A[-i0 + N - 1])" in format_program(rep.program)
    for n in SIZES:
        assert _outcome(p, n) == _outcome(rep.program, n)


@pytest.mark.parametrize("text", ["for (i, 0, N * N)", "for (i, 0, A[0])"])
def test_non_affine_extents_are_positioned_errors(text: str) -> None:
    program = PROGRAM.format(pext="N", store="i0", cext="N", read="i0").replace("for (i, 0, N)", text, 1)
    with pytest.raises(ParseError) as info:
        parse_program(program)
    assert program[info.value.offset] in "NA*["


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(["N", "N + 1", "N + 2", "2 * N", "3"]),
       st.sampled_from(["i0", "i0 + 1", "i0 floordiv 2", "2 * i0"]),
       st.sampled_from(["N", "N + 1", "N - 1", "1", "2"]),
       st.sampled_from(["i0", "i0 + 1", "N - 1 - i0", "2 * i0", "i0 floordiv 2"]))
def test_random_symbolic_inlines_agree_with_the_interpreter_at_every_size(
    pext: str, store: str, cext: str, read: str
) -> None:
    text = PROGRAM.format(pext=pext, store=store, cext=cext, read=read)
    if "N" not in pext + cext and "N" in store + read:  # N is a size only when an extent uses it
        with pytest.raises(ParseError, match="unknown variable 'N'"):
            parse_program(text)
        return
    p = parse_program(text)
    rep = compute_inline(p, "B")
    assert rep.status in ("inlined", "refused"), rep.reason
    if rep.status == "inlined":
        assert rep.program is not None
        for n in SIZES:  # legal for every size (or under the condition): every size tried agrees
            if rep.when and not _condition_holds(rep.program, n):
                continue
            before = _outcome(p, n)
            assert before != "unwritten", (n, pext, store, cext, read)
            assert before == _outcome(rep.program, n)
        return
    w = rep.checks[-1].witness
    assert w is not None
    n = (w.get("sizes") or {"N": 0})["N"]
    if "both write" in w["note"]:  # two iterations of B at that size write one element
        its = [it["i"] for it in w["iterations"]]
        assert its[0] != its[1]
        ext = eval(pext.replace("N", str(n)))
        assert 0 <= its[0] < ext and 0 <= its[1] < ext
        values = [eval(store.replace("floordiv", "//").replace("i0", str(i))) for i in its]
        assert values[0] == values[1]
    else:
        assert _outcome(p, n) == "unwritten", (n, pext, store, cext, read, w)


def test_legal_when_a_condition_on_the_sizes_holds() -> None:
    p = parse_program((EX / "symbolic_collision.txt").read_text())
    rep = compute_inline(p, "B")
    # B[i floordiv 2] over N iterations is injective only when N <= 1; C reads B[0], written only when N >= 1.
    assert rep.status == "inlined" and rep.when == "N <= 1 and N >= 1"
    assert rep.program is not None
    assert format_program(rep.program).startswith("if ((N <= 1) && (N >= 1))")
    assert _outcome(p, 1) == _outcome(rep.program, 1) != "unwritten"
    assert _outcome(p, 0) == "unwritten"  # outside the condition the original itself fails
    # At N = 2 two iterations of B write B[0]: the last one wins in the original.
    assert rep.to_json()["legal_when"] == "N <= 1 and N >= 1"


def test_refusal_for_every_nonempty_size_has_no_condition() -> None:
    p = parse_program(PROGRAM.format(pext="N", store="i0", cext="N", read="i0 + 1"))
    rep = compute_inline(p, "B")
    assert rep.status == "refused" and rep.when == ""
