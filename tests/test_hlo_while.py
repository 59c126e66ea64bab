"""``while`` with an affine counter (verified_indexing.hlo.loops) against the numpy interpreter of HLO
(tests/hlo_oracle.py): the loop is run iteration by iteration on tagged values (every element of the
initial state tagged with its parameter and index, the counter and the offsets concrete), and the final
state's elements must be computed from exactly the elements the composed maps give (counter starting at
a constant), or from a subset of them, marked, when the initial state is a parameter (one op deep)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pytest
from hlo_oracle import compose_tags, run, tagged

from verified_indexing.hlo.fusion import output_to_input_maps
from verified_indexing.hlo.ir import Computation
from verified_indexing.hlo.parser import parse_module

LOOP = """HloModule loop
cond {
  s = (s32[], f32[4,3], f32[6,3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(COMPARE), direction=DIRECTION
}
body {
  s = (s32[], f32[4,3], f32[6,3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[4,3] get-tuple-element(s), index=1
  x = f32[6,3] get-tuple-element(s), index=2
  z = s32[] constant(0)
  row = f32[1,3] dynamic-slice(x, i, z), dynamic_slice_sizes={1,3}
  rb = f32[3] reshape(row)
  b = f32[4,3] broadcast(rb), dimensions={1}
  acc2 = f32[4,3] NEXT
  n = s32[] add(i, s32[] constant(STEP))
  ROOT t = (s32[], f32[4,3], f32[6,3]) tuple(n, acc2, x)
}
ENTRY main {
  a = f32[4,3] parameter(0)
  xx = f32[6,3] parameter(1)
  first = s32[] constant(FIRST)
  init = (s32[], f32[4,3], f32[6,3]) tuple(first, a, xx)
  l = (s32[], f32[4,3], f32[6,3]) while(init), condition=cond, body=body
  ROOT h = f32[4,3] get-tuple-element(l), index=1
}
"""


def _module(first: int, bound: int, direction: str, step: int, accumulate: bool = True) -> str:
    compare = f"i, s32[] constant({bound})" if direction in ("LT", "LE") else f"s32[] constant({bound}), i"
    return (LOOP.replace("COMPARE", compare).replace("DIRECTION", direction).replace("STEP", str(step))
            .replace("FIRST", str(first)).replace("NEXT", "add(acc, b)" if accumulate else "negate(b)"))


def _body_step(body: Computation, state: list[np.ndarray], i: int) -> list[np.ndarray]:
    """One iteration on tagged values: every instruction run by the oracle, its operands' tags mapped back to the
    initial state's tags; the counter concrete."""
    values: dict[str, np.ndarray] = {}
    scalars: dict[str, int] = {}
    for inst in body.instructions:
        if inst.opcode == "parameter":
            continue
        if inst.opcode == "get-tuple-element":
            values[inst.name] = state[inst.tuple_index or 0]
            if inst.tuple_index == 0:
                scalars[inst.name] = i
            continue
        if inst.opcode == "constant":
            values[inst.name] = np.full((), frozenset(), dtype=object)
            scalars[inst.name] = int(inst.literal or 0)
            continue
        if inst.opcode == "tuple":
            return [values[o] for o in inst.operands]
        concrete = {k: np.array(scalars[o]) for k, o in enumerate(inst.operands) if o in scalars and k}
        (res, *_) = run(inst, body, concrete)
        values[inst.name] = compose_tags(res, [values[o] for o in inst.operands])
    raise AssertionError("the body has no root tuple")


def _oracle(text: str, first: int, keep_going: object) -> dict[tuple[int, ...], set[tuple[int, tuple[int, ...]]]]:
    """Final element 1 of the loop state: output element -> {(parameter, element)} (a: 0, xx: 1)."""
    module = parse_module(text)
    body = module.computations["body"]
    state = [np.full((), frozenset({(9, ())}), dtype=object), tagged((4, 3), 0), tagged((6, 3), 1)]
    i = first
    while keep_going(i):  # type: ignore[operator]
        state = _body_step(body, state, i)
        i += _step(text)
    return {tuple(int(v) for v in idx): set(state[1][idx]) - {(9, ())} for idx in np.ndindex(4, 3)}


def _step(text: str) -> int:
    line = next(ln for ln in text.splitlines() if "n = s32[] add(i" in ln)
    return int(line.split("constant(")[1].split(")")[0])


def _maps(text: str) -> tuple[dict[tuple[int, ...], set[tuple[int, tuple[int, ...]]]], list[str]]:
    module = parse_module(text)
    result = output_to_input_maps(module.entry, module=module)
    assert not result.unsupported
    reads: dict[tuple[int, ...], set[tuple[int, tuple[int, ...]]]] = defaultdict(set)
    marks: list[str] = []
    for target in result.targets:
        for access in target.maps:
            marks += access.over_approximation
            for d, s, r in access.map.domain_points():
                reads[d].add((target.index, access.map.evaluate(d, s, r)))
    return reads, marks


@pytest.mark.parametrize(("first", "bound", "direction", "step"), [
    (1, 4, "LT", 1),  # i = 1, 2, 3
    (0, 6, "LE", 2),  # i = 0, 2, 4, 6: the last offset clamped to 5 by dynamic-slice
    (2, 5, "GT", 1),  # 5 > i: i = 2, 3, 4
    (3, 2, "LT", 1),  # never runs
    (-2, 1, "LT", 1),  # negative offsets clamped to 0
])
@pytest.mark.parametrize("accumulate", [True, False])
def test_a_counted_loop_reads_what_the_interpreter_says(first: int, bound: int, direction: str, step: int,
                                                        accumulate: bool) -> None:
    text = _module(first, bound, direction, step, accumulate)
    tests = {"LT": lambda i: i < bound, "LE": lambda i: i <= bound, "GT": lambda i: bound > i}
    want = _oracle(text, first, tests[direction])
    got, marks = _maps(text)
    assert not marks  # exact
    assert {o: got.get(o, set()) for o in want} == want


def test_a_loop_whose_state_is_a_parameter_is_a_marked_superset() -> None:
    # one op deep: the counter's first value is not visible; every value up to the bound, and the initial value
    text = _module(1, 4, "LT", 1).replace(
        "first = s32[] constant(1)\n  init = (s32[], f32[4,3], f32[6,3]) tuple(first, a, xx)",
        "init = (s32[], f32[4,3], f32[6,3]) parameter(2)")
    module = parse_module(text)
    result = output_to_input_maps(module.entry, module=module)
    (target,) = [t for t in result.targets if t.index == 2 and t.element == 2]
    (access,) = target.maps
    assert any("first value is not known" in r for r in access.over_approximation)
    want = _oracle(_module(1, 4, "LT", 1), 1, lambda i: i < 4)  # one first value among all
    reads = {(o, access.map.evaluate(o, s, r)) for o, s, r in access.map.domain_points()}
    assert {(o, x) for o, xs in want.items() for k, x in xs if k == 1} <= reads


def test_a_counter_that_is_not_affine_keeps_the_whole_loop_mark() -> None:
    text = _module(1, 4, "LT", 1).replace("n = s32[] add(i, s32[] constant(1))",
                                          "n = s32[] multiply(i, s32[] constant(2))")
    _, marks = _maps(text)
    assert any("changes in the body" in r for r in marks)


# -- call in every form -----------------------------------------------------------------------------------

CALLS = """HloModule m
f {
  p = f32[4,3] parameter(0)
  q = f32[3] parameter(1)
  b = f32[4,3] broadcast(q), dimensions={1}
  ROOT r = f32[4,3] add(p, b)
}
g {
  p = f32[4,3] parameter(0)
  ROOT t = f32[4,3] reverse(p), dimensions={0}
}
ENTRY main {
  a = f32[4,3] parameter(0)
  v = f32[3] parameter(1)
  c1 = f32[4,3] call(a, v), to_apply=f
  c2 = f32[4,3] call(c1), to_apply=g, is_composite=true, frontend_attributes={composite.attributes={},composite.name="foo.bar",composite.version="1"}
  s = ((f32[4,3]), f32[4,3], s32[]) call-start(c2), async_execution_thread="thread", to_apply=g
  u = ((f32[4,3]), f32[4,3], s32[]) call-update(s)
  d = f32[4,3] call-done(u)
  s2 = ((f32[4,3], f32[3]), f32[4,3], s32[]) async-start(d, v), calls=f
  ROOT d2 = f32[4,3] async-done(s2), calls=f
}
"""


def test_call_in_every_form_reads_what_the_interpreter_says() -> None:
    # call (to_apply), a composite call, the asynchronous call (call-start / call-update / call-done) and an
    # async-start wrapping a call: the whole chain, run op by op in the numpy interpreter through the called
    # computations, against the composed maps (exact)
    module = parse_module(CALLS)

    def run_comp(name: str, args: list[np.ndarray]) -> np.ndarray:
        comp = module.computations[name]
        values: dict[str, np.ndarray] = {}
        for inst in comp.instructions:
            if inst.opcode == "parameter":
                values[inst.name] = args[inst.parameter_number or 0]
                continue
            if inst.opcode in ("call", "call-start", "async-start"):
                callee = (inst.attributes.get("to_apply") or inst.attributes.get("calls") or "").lstrip("%")
                values[inst.name] = run_comp(callee, [values[o] for o in inst.operands])
                continue
            if inst.opcode in ("call-update", "call-done", "async-done"):
                values[inst.name] = values[inst.operands[0]]  # the call's result, element 1 of the start's tuple
                continue
            (res, *_) = run(inst, comp)
            values[inst.name] = compose_tags(res, [values[o] for o in inst.operands])
        return values[comp.root.name]

    final = run_comp("main", [tagged((4, 3), 0), tagged((3,), 1)])
    want = {tuple(int(i) for i in idx): set(final[idx]) for idx in np.ndindex(4, 3)}
    got, marks = _maps(CALLS)
    assert not marks
    assert {o: got.get(o, set()) for o in want} == want


# -- JAX's fori_loop: two counters (the trip count and i, advanced inside a call), a wrapped offset --------------


@pytest.mark.parametrize(("lower", "upper", "scale"), [(0, 4, 1), (1, 5, 1), (0, 3, 2), (-3, 0, 1), (2, 2, 1)])
def test_jax_fori_loop_reads_what_the_jacobian_says(lower: int, upper: int, scale: int) -> None:
    # acc + x[scale * i] for i in [lower, upper): an independent oracle is jax's own Jacobian (the loop is linear in x:
    # output element o depends on x[r, c] exactly where d out[o] / d x[r, c] is not 0)
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    from jax import lax

    def f(x: Any) -> Any:
        return lax.fori_loop(lower, upper, lambda i, acc: acc + lax.dynamic_slice(x, (scale * i, 0), (1, 3))[0],
                             jnp.zeros(3, np.float32))

    x = np.arange(18, dtype=np.float32).reshape(6, 3)
    jac = np.asarray(jax.jacfwd(f)(x))  # [3, 6, 3]
    want = {(o,): {(0, (r, c)) for r in range(6) for c in range(3) if jac[o, r, c] != 0} for o in range(3)}
    text = jax.jit(f).lower(x).compiler_ir("hlo").as_hlo_text()
    got, marks = _maps(text)
    assert not marks, marks  # exact: the counters are followed, not the whole loop
    assert {o: got.get(o, set()) for o in want} == want
