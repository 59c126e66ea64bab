"""CINN ComputeInline on more of the document's IR: C's truncating '/' and '%'
(accepted only when proven equal to floor semantics), reduction blocks with
init, several consumers, several reads per consumer, shared loops; random
programs checked against a plain interpreter."""

from __future__ import annotations

import re

import pytest
from cinn_interpreter import run
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing.errors import ParseError
from verified_indexing.legality.cinn_ir import (
    Store,
    format_program,
    parse_program,
)
from verified_indexing.legality.inline import compute_inline, inline_candidates


def _is_input(name: str) -> bool:
    return name.startswith("A")  # the programs of this file read inputs named A*

# The independent oracle: a plain interpreter of the IR (tests/cinn_interpreter.py).


# ---------------------------------------------------------------------------
# C's '/' and '%' in indices, against a C evaluator of the raw text
# ---------------------------------------------------------------------------


class CInt:
    """An int with C's truncating division and remainder (the oracle)."""

    def __init__(self, v: int) -> None:
        self.v = v

    def _o(self, o: CInt | int) -> int:
        return o.v if isinstance(o, CInt) else o

    def __add__(self, o: CInt | int) -> CInt:
        return CInt(self.v + self._o(o))

    __radd__ = __add__

    def __sub__(self, o: CInt | int) -> CInt:
        return CInt(self.v - self._o(o))

    def __rsub__(self, o: int) -> CInt:
        return CInt(o - self.v)

    def __mul__(self, o: CInt | int) -> CInt:
        return CInt(self.v * self._o(o))

    __rmul__ = __mul__

    def __neg__(self) -> CInt:
        return CInt(-self.v)

    def __truediv__(self, o: CInt | int) -> CInt:
        b = self._o(o)
        q = abs(self.v) // abs(b)
        return CInt(q if (self.v >= 0) == (b > 0) else -q)

    def __mod__(self, o: CInt | int) -> CInt:
        return CInt(self.v - self._o(o) * (self / o).v)


def c_eval(text: str, env: dict[str, int]) -> int:
    py = re.sub(r"(?<!\w)(\d+)", r"CInt(\1)", text)
    out = eval(py, {"CInt": CInt}, {k: CInt(v) for k, v in env.items()})
    return out.v if isinstance(out, CInt) else int(out)


def _one_store(index: str, extent: int = 8, start: int = 0) -> str:
    return (f"ScheduleBlock(root)\n{{\n  serial for (i, {start}, {extent})\n  {{\n    ScheduleBlock(B)\n    {{\n"
            f"      i0 = axis.bind(i)\n      B[{index}] = A[i0]\n    }}\n  }}\n}}")


@pytest.mark.parametrize("index", ["i0 / 2, i0 % 2", "(i0 + 3) / 4", "(i0 * 3 + 1) % 5", "(i0 / 2) % 3, i0 % 2",
                                   "(i - 1) / 2"])
def test_truncating_division_accepted_when_it_equals_floor(index: str) -> None:
    start = 1 if "i - 1" in index else 0
    p = parse_program(_one_store(index, 8, start))
    store = p.body[0].body[0].body[1]  # type: ignore[union-attr]
    assert isinstance(store, Store)
    for i in range(start, start + 8):
        for k, part in enumerate(index.split(", ")):
            assert store.indices[k].evaluate([i, i]) == c_eval(part.replace("i0", "i"), {"i": i})
    assert "floordiv" in format_program(p) or "mod" in format_program(p)


@pytest.mark.parametrize(("index", "message"), [
    ("(i0 - 3) / 2", "at (i = "),
    ("(i0 - 5) % 3", "at (i = "),
    ("i0 / -2", "divisor -2 is not positive"),
    ("i0 / 2 + (0 - i0) % 4", "at (i = "),
])
def test_truncating_division_refused_where_it_differs(index: str, message: str) -> None:
    text = _one_store(index)
    with pytest.raises(ParseError) as info:
        parse_program(text)
    err = info.value
    assert "truncates toward zero" in err.message and message in err.message
    assert text[err.offset] in "/%"
    m = re.search(r"at \(i = (-?\d+)\)", err.message)
    if message.startswith("at"):  # the reported point really is one where C and floor semantics differ
        assert m is not None
        i = int(m.group(1))
        c_value = c_eval(index.replace("i0", "i"), {"i": i})
        floor_value = eval(index.replace("i0", "i").replace("/", "//"), {}, {"i": i})
        assert c_value != floor_value


def test_truncation_of_exact_multiples_is_accepted() -> None:
    # (2 * i0 - 4) / 2 has a negative dividend at i0 = 0, 1 but it is always even: C and floor agree.
    p = parse_program(_one_store("(2 * i0 - 4) / 2 + 2"))
    store = p.body[0].body[0].body[1]  # type: ignore[union-attr]
    assert isinstance(store, Store)
    assert [store.indices[0].evaluate([i, i]) for i in range(8)] == [c_eval("(2 * i - 4) / 2 + 2", {"i": i})
                                                                      for i in range(8)]


# ---------------------------------------------------------------------------
# Reductions with init, several consumers, several reads, shared loops
# ---------------------------------------------------------------------------

REDUCTION = """ScheduleBlock(root)
{
  {
    serial for (i, 0, 8)
    {
      serial for (j, 0, 4)
      {
        ScheduleBlock(B)
        {
          i0, i1 = axis.bind(i, j)
          read_buffers(_A[i0(0:8), i1(0:4)])
          write_buffers(_B[i0(0:8), i1(0:4)])
          B[i0, i1] = exp(A[i0, i1])
        }
      }
    }
    serial for (i, 0, 8)
    {
      ScheduleBlock(C__reduce_init)
      {
        i0 = axis.bind(i)
        C__reduce_init[i0] = 0.00000000f
      }
      serial for (k, 0, 4)
      {
        ScheduleBlock(C)
        {
          i0_1, k0 = axis.bind(i, k)
          C[i0_1] = (C[i0_1] + B[i0_1, k0])
        }
      }
    }
    serial for (i, 0, 16)
    {
      ScheduleBlock(D)
      {
        i0 = axis.bind(i)
        D[i0] = select((B[i0 / 2, i0 % 4] > 0.5f), B[i0 / 2, 0], -3.40282347e+38f)
      }
    }
    serial for (i, 0, 8)
    {
      ScheduleBlock(E)
      {
        i0 = axis.bind(i)
        E[i0] = (C[i0] * 2)
      }
    }
  }
}"""


def test_reduction_program_several_consumers_and_reads() -> None:
    p = parse_program(REDUCTION)
    assert inline_candidates(p) == ["B", "C"]
    rep = compute_inline(p, "B")
    assert rep.status == "inlined", rep.reason
    assert rep.consumers == ("C", "D")
    assert rep.program is not None
    text = format_program(rep.program)
    assert "C[i0_1] = (C[i0_1] + exp(A[i0_1, k0]))" in text
    assert "exp(A[i0 floordiv 2, i0 mod 4])" in text and "exp(A[i0 floordiv 2, 0])" in text
    assert "ScheduleBlock(B)" not in text
    # Proofs: one value-equality proof per consumer store, every check proved.
    assert all(c.status == "proved" for c in rep.checks)
    assert sum("stores the same values" in c.name for c in rep.checks) == 2
    assert sum("lies in the stored region" in c.name for c in rep.checks) == 3  # one per load
    t0, t1 = run(p, _is_input), run(rep.program, _is_input)
    for name in ("C", "D", "E"):
        assert t0[name] == t1[name]
    # The reduction and its init are refused, each with the reason.
    rep = compute_inline(p, "C")
    assert rep.status == "refused" and "reads C itself" in rep.reason
    rep = compute_inline(p, "C__reduce_init")
    assert rep.status == "refused" and "init block of the reduction C" in rep.reason


# ---------------------------------------------------------------------------
# Random programs vs the interpreter
# ---------------------------------------------------------------------------


@st.composite
def program(draw: st.DrawFn) -> dict[str, object]:
    a, b = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    kind = draw(st.sampled_from(["perm", "shift", "flatten", "split", "split-c", "skew"]))
    c = draw(st.integers(2, 3))
    store = {
        "perm": ["i1", "i0"],
        "shift": [f"i0 + {draw(st.integers(0, 2))}", "i1"],
        "flatten": [f"i0 * {b} + i1"],
        "split": [f"(i0 * {b} + i1) floordiv {c}", f"(i0 * {b} + i1) mod {c}"],
        "split-c": [f"(i0 * {b} + i1) / {c}", f"(i0 * {b} + i1) % {c}"],
        "skew": ["i0 + i1", "i0"],
    }[kind]
    consumers = []
    for k in range(draw(st.integers(1, 3))):
        shared = draw(st.booleans())
        reads = draw(st.integers(1, 2))
        consumers.append({"shared": shared, "reads": reads, "flip": draw(st.booleans()), "name": f"C{k}"})
    return {"a": a, "b": b, "store": store, "consumers": consumers}


def _render(case: dict[str, object]) -> tuple[str, list[tuple[int, ...]]]:
    a, b = int(case["a"]), int(case["b"])  # type: ignore[call-overload]
    store: list[str] = case["store"]  # type: ignore[assignment]
    consumers: list[dict[str, object]] = case["consumers"]  # type: ignore[assignment]
    env_pts = [(i, j) for i in range(a) for j in range(b)]
    written = sorted({tuple(c_eval(s.replace("floordiv", "/").replace("mod", "%"), {"i0": i, "i1": j})
                            for s in store) for i, j in env_pts})
    box = [max(w[k] for w in written) + 1 for k in range(len(store))]
    inner: list[str] = [f"ScheduleBlock(B)\n{{\n  i0, i1 = axis.bind(i, j)\n  B[{', '.join(store)}] = (A[i0, i1] + i1)\n}}"]
    outer: list[str] = []
    for con in consumers:
        name = str(con["name"])
        if con["shared"]:
            idx = list(store)
            if con["flip"]:  # read what a later (or earlier) iteration writes
                idx = [s.replace("i0", f"({a - 1} - i0)") for s in store]
            loads = [f"B[{', '.join(idx)}]"] + ([f"B[{', '.join(store)}]"] if con["reads"] == 2 else [])
            inner.append(f"ScheduleBlock({name})\n{{\n  i0, i1 = axis.bind(i, j)\n"
                         f"  {name}[i0, i1] = ({' * '.join(loads)} - 1)\n}}")
        else:
            vars_ = [f"x{k}" for k in range(len(box))]
            loads = [f"B[{', '.join(vars_)}]"]
            if con["reads"] == 2:
                loads.append(f"B[{', '.join(reversed(vars_)) if con['flip'] and len(set(box)) == 1 else ', '.join(vars_)}]")
            body = f"ScheduleBlock({name})\n{{\n  {', '.join(vars_)} = axis.bind({', '.join(f'l{k}' for k in range(len(box)))})\n"
            body += f"  {name}[{', '.join(vars_)}] = exp(({' + '.join(loads)}))\n}}"
            for k in reversed(range(len(box))):
                body = f"serial for (l{k}, 0, {box[k]})\n{{\n{body}\n}}"
            outer.append(body)
    nest = "\n".join(inner)
    nest = f"serial for (i, 0, {a})\n{{\nserial for (j, 0, {b})\n{{\n{nest}\n}}\n}}"
    return "ScheduleBlock(root)\n{\n{\n" + "\n".join([nest, *outer]) + "\n}\n}", written


@settings(max_examples=80, deadline=None)
@given(program())
def test_random_inline_programs_agree_with_the_interpreter(case: dict[str, object]) -> None:
    text, written = _render(case)
    p = parse_program(text)
    rep = compute_inline(p, "B")
    assert rep.status != "unknown", (rep.reason, text)
    names = [str(c["name"]) for c in case["consumers"]]  # type: ignore[attr-defined]
    if rep.status == "inlined":
        assert rep.program is not None and "ScheduleBlock(B)" not in format_program(rep.program)
        t0, t1 = run(p, _is_input), run(rep.program, _is_input)
        for n in names:
            assert t0[n] == t1[n]
        return
    # Refused: the witness is confirmed independently.
    w = rep.checks[-1].witness
    assert w is not None, rep.reason
    if "producer_iteration" in w:  # read before write in shared loops
        assert tuple(w["producer_iteration"][:2]) > tuple(w["consumer_iteration"][:2])
    elif "iterations" in w:  # two iterations write one element
        assert len(w["iterations"]) == 2
    else:  # an element never written
        assert tuple(w["element"]) not in set(written)
    with pytest.raises(KeyError):  # and the original program really does read an unwritten element
        run(p, _is_input)


def test_function_wrapper_and_dynamic_loops() -> None:
    doc = parse_program(REDUCTION)
    wrapped = parse_program("function fn_reduce (_A, _C, _D, _E)\n{\n" + REDUCTION + "\n}\n")
    assert wrapped == doc
    # A dynamic extent: S0 is a size parameter (C's '/' on a size is floor division: sizes are >= 0).
    text = "ScheduleBlock(root)\n{\n  serial for (i, 0, (S0 / 2))\n  {\n  }\n}"
    p = parse_program(text)
    assert format_program(p) == text.replace("(S0 / 2)", "S0 floordiv 2")
    text = "ScheduleBlock(root)\n{\n  serial for (i, 0, (S0 / 2 + A[0]))\n  {\n  }\n}"
    with pytest.raises(ParseError) as info:
        parse_program(text)
    assert "unexpected character '['" in info.value.message and text[info.value.offset] == "["


CHAIN = """ScheduleBlock(root)
{
  serial for (i, 0, 4)
  {
    serial for (j, 0, 6)
    {
      ScheduleBlock(B)
      {
        i0, i1 = axis.bind(i, j)
        B[i0 * 6 + i1] = (A[i0, i1] + 1)
      }
    }
  }
  serial for (k, 0, 24)
  {
    ScheduleBlock(C)
    {
      k0 = axis.bind(k)
      C[k0 / 6, k0 % 6] = exp(B[k0])
    }
  }
  serial for (i, 0, 6)
  {
    serial for (j, 0, 4)
    {
      ScheduleBlock(D)
      {
        i0, i1 = axis.bind(i, j)
        D[i0, i1] = (C[i1, i0] * C[i1, 5 - i0])
      }
    }
  }
}"""


def test_inline_all_collapses_a_chain_through_proven_inverses() -> None:
    from verified_indexing.legality.inline import inline_all

    p = parse_program(CHAIN)
    final, reports = inline_all(p)
    assert [(r.block, r.status) for r in reports] == [("B", "inlined"), ("C", "inlined")]
    text = format_program(final)
    assert "ScheduleBlock(B)" not in text and "ScheduleBlock(C)" not in text
    # B's flattened store and C's split store cancel through the inverses: D reads A directly.
    # (the composed indices (i0 + i1 * 6) floordiv 6 ... are tidied by the verified simplifier)
    assert "D[i0, i1] = (exp((A[i1, i0] + 1)) * exp((A[i1, -i0 + 5] + 1)))" in text
    assert run(p, _is_input)["D"] == run(final, _is_input)["D"]


def test_int64_suffixes_are_read_as_integers() -> None:
    plain = parse_program(_one_store("(i0 * 2) / 4", 8))
    suffixed = parse_program(_one_store("(i0 * 2ll) / 4ll", 8).replace("for (i, 0, 8)", "for (i, 0ll, 8ll)"))
    assert suffixed == plain
