"""``while`` loops with an affine induction variable (issue 25 item 3).

A loop whose state holds a counter ``i`` that starts at a constant ``c0``, grows
by a constant ``step > 0`` in the body (``add(get-tuple-element(state), constant)``)
and is compared with a constant bound in the condition (``i < N`` or ``i <= N``,
either operand order) runs exactly ``T`` iterations, the t-th with ``i = c0 +
step * t``. An element ``k`` of the state that the body computes from

* itself, element for element (an accumulator: the identity map),
* loop-invariant elements (passed through by the body), read at offsets that are
  the counter (a ``dynamic-slice`` at ``i``: the runtime variable's value is the
  counter, clamped to its bounds),
* the counter itself (a scalar read),

reads, after the loop, its initial value (when it accumulates) and, over every
iteration, the invariant elements at the counter's values: the counter becomes a
range variable ``t`` in ``[0, T - 1]`` (only ``t = T - 1``, the last iteration,
when the element does not read itself). These maps are exact where the body's
are. Any other loop returns None: the caller's whole-loop over-approximation
(marked) applies.

After XLA's passes the loop is the one instruction of a computation the caller
calls with the init tuple (:func:`while_of_call` reads that call as the ``while``
in the caller, where the counter's first value is), the counter is copied before
the body reads it, and its ``add`` and the condition's ``compare`` are one-op
fusions: the values are read through copies, bitcasts, fusions and calls
(:func:`_value`), and the first value may be a constant, a copy of one or an
element of a constant tuple (:func:`_init_value`). A counter that would wrap
around its integer type before the condition fails is not modelled.

A stacked output (an element written by a ``dynamic-update-slice`` of itself at
offsets linear in the counters, windows disjoint and never clamped:
:func:`_stacked_write`) reads the update of the one iteration whose window holds
each element, and its initial value only where no window lands: exact.
"""

from __future__ import annotations

import itertools
import re
from typing import Any

from verified_indexing.expr import AffineExpr, Const, Sym, emax, emin
from verified_indexing.hlo.ir import Computation, Instruction
from verified_indexing.indexing_map import IndexingMap, Variable
from verified_indexing.interval import Interval

__all__ = ["Induction", "induction_of", "while_induction_steps", "while_of_call"]

Step = tuple[str, int, IndexingMap, str, tuple[str, ...]]


class Induction:
    """The counter of a loop: its element of the state, first value, step, and the
    number of iterations the loop runs."""

    def __init__(self, element: int, first: int | None, step: int, trips: int | None, last: int) -> None:
        #: ``first`` and ``trips`` are None where the initial state is not visible (the loop analyzed one op
        #: deep, its state a parameter): then the counter takes any value up to ``last``
        self.element, self.first, self.step, self.trips, self.last = element, first, step, trips, last

    def __repr__(self) -> str:
        return f"Induction(element={self.element}, first={self.first}, step={self.step}, trips={self.trips})"


def _gte_of_param(comp: Computation, name: str) -> int | None:
    """The tuple index when ``name`` is ``get-tuple-element(parameter), index=j`` (or a ``copy`` of one: XLA's
    passes copy the counter before the body reads it)."""
    inst = comp.by_name.get(name)
    for _ in range(8):
        if inst is None or inst.opcode != "copy" or len(inst.operands) != 1:
            break
        inst = comp.by_name.get(inst.operands[0])
    if inst is None or inst.opcode != "get-tuple-element" or len(inst.operands) != 1:
        return None
    src = comp.by_name.get(inst.operands[0])
    return inst.tuple_index if src is not None and src.opcode == "parameter" else None


Value = tuple[Any, ...]
"""A scalar integer value of the loop's computations, as :func:`_value` reads it: ``("elem", j)`` (element
``j`` of the loop state, as the body or condition receives it), ``("const", c)``, ``("add", a, b)``,
``("sub", a, b)``, ``("mul", a, b)``, ``("cmp", direction, a, b)``."""

_PASS = frozenset({"copy", "bitcast", "reshape"})
"""Ops that pass a scalar through unchanged (XLA's passes put a copy or bitcast between a counter and its uses)."""


def _value(comp: Computation, name: str, module: Any, env: dict[int, Value | None] | None = None,
           depth: int = 0) -> Value | None:
    """The scalar integer instruction ``name`` of ``comp`` as a :data:`Value`, or None when it is not one of
    these: an element of the state (``get-tuple-element`` of the computation's parameter, when ``env`` is None:
    ``comp`` is the loop's body or condition), an integer constant (also an element of a constant tuple or of a
    ``tuple``), add, subtract, multiply, compare, an op that passes it through (copy, bitcast, reshape of a
    scalar), and a ``fusion`` or ``call`` (its computation's root, each parameter the call's operand: XLA's
    passes wrap the counter's add and compare in one-op fusions). ``env``: inside a called computation, each
    parameter's value."""
    from verified_indexing.hlo.ops import constant_scalar

    inst = comp.by_name.get(name)
    if inst is None or depth > 32 or (not inst.shape.is_tuple and inst.shape.dims):
        return None
    if inst.opcode == "parameter":
        return env.get(inst.parameter_number or 0) if env is not None and inst.parameter_number is not None \
            else None
    value = constant_scalar(inst)
    if value is not None:
        return ("const", value)
    if inst.shape.is_tuple:
        return None
    if inst.opcode in _PASS and len(inst.operands) == 1:
        return _value(comp, inst.operands[0], module, env, depth + 1)
    if inst.opcode == "get-tuple-element" and len(inst.operands) == 1 and inst.tuple_index is not None:
        src = comp.by_name.get(inst.operands[0])
        if src is None:
            return None
        if src.opcode == "parameter":
            return ("elem", inst.tuple_index) if env is None else None
        return _element(comp, src.name, inst.tuple_index, module, env, depth + 1)
    if inst.opcode in ("fusion", "call"):
        callee = module.computations.get(inst.called_computation() or "")
        if callee is None or len(callee.parameters()) != len(inst.operands):
            return None
        inner = {k: _value(comp, o, module, env, depth + 1) for k, o in enumerate(inst.operands)}
        return _value(callee, callee.root.name, module, inner, depth + 1)
    if inst.opcode in ("add", "subtract", "multiply") and len(inst.operands) == 2:
        a, b = (_value(comp, o, module, env, depth + 1) for o in inst.operands)
        kind = {"add": "add", "subtract": "sub", "multiply": "mul"}[inst.opcode]
        return (kind, a, b) if a is not None and b is not None else None
    if inst.opcode == "compare" and len(inst.operands) == 2 and (inst.attr("type") or "").strip() in ("", "SIGNED") \
            and inst.shape.element_type == "pred":
        a, b = (_value(comp, o, module, env, depth + 1) for o in inst.operands)
        direction = (inst.attr("direction") or "").strip()
        return ("cmp", direction, a, b) if a is not None and b is not None else None
    return None


def _element(comp: Computation, name: str, j: int, module: Any, env: dict[int, Value | None] | None = None,
             depth: int = 0) -> Value | None:
    """Element ``j`` of the tuple instruction ``name`` of ``comp`` as a :data:`Value`: of a ``tuple`` (its
    operand), of a tuple ``constant`` (its literal's element), of a ``fusion`` or ``call`` whose computation's
    root is a ``tuple``, or of a ``copy`` or ``get-tuple-element`` of such a tuple."""
    inst = comp.by_name.get(name)
    if inst is None or depth > 32 or not inst.shape.is_tuple or j >= len(inst.shape.tuple_shapes):
        return None
    if inst.opcode == "tuple" and j < len(inst.operands):
        return _value(comp, inst.operands[j], module, env, depth + 1)
    if inst.opcode == "constant" and inst.literal is not None:
        return _tuple_literal_element(inst.literal, j, inst.shape.tuple_shapes[j])
    if inst.opcode == "copy" and len(inst.operands) == 1:
        return _element(comp, inst.operands[0], j, module, env, depth + 1)
    if inst.opcode == "get-tuple-element" and len(inst.operands) == 1 and inst.tuple_index is not None:
        src = comp.by_name.get(inst.operands[0])
        if src is None or src.opcode == "parameter":
            return None
        inner = _nested(comp, src.name, inst.tuple_index, module, depth + 1)
        return _element(*inner, j, module, env, depth + 1) if inner is not None else None
    if inst.opcode in ("fusion", "call"):
        callee = module.computations.get(inst.called_computation() or "")
        if callee is None or len(callee.parameters()) != len(inst.operands) or callee.root.opcode != "tuple":
            return None
        inner_env = {k: _value(comp, o, module, env, depth + 1) for k, o in enumerate(inst.operands)}
        return _element(callee, callee.root.name, j, module, inner_env, depth + 1)
    return None


def _nested(comp: Computation, name: str, j: int, module: Any, depth: int) -> tuple[Computation, str] | None:
    """Where element ``j`` (itself a tuple) of the tuple instruction ``name`` is computed: a ``tuple``'s
    operand (only that form)."""
    inst = comp.by_name.get(name)
    if inst is not None and inst.opcode == "tuple" and j < len(inst.operands):
        return comp, inst.operands[j]
    return None


def _tuple_literal_element(literal: str, j: int, shape: Any) -> Value | None:
    """Element ``j`` of a tuple constant's literal ``(0, {1, 2}, ...)`` when it is a scalar integer."""
    from verified_indexing.hlo.ops import _INT_TYPES

    if shape.is_tuple or shape.dims or shape.element_type not in _INT_TYPES:
        return None
    text = literal.strip()
    if not (text.startswith("(") and text.endswith(")")):
        return None
    parts, depth, start = [], 0, 1
    for i, ch in enumerate(text[1:-1], 1):
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:-1])
    if j >= len(parts):
        return None
    piece = parts[j].strip()
    return ("const", int(piece)) if re.fullmatch(r"-?\d+", piece) else None


def _grows(value: Value | None, j: int) -> int | None:
    """``step`` when ``value`` is element ``j`` plus a constant ``step > 0`` (either order)."""
    if value is None or value[0] != "add":
        return None
    for x, y in ((value[1], value[2]), (value[2], value[1])):
        if x == ("elem", j) and y[0] == "const" and y[1] > 0:
            return int(y[1])
    return None


def _init_value(comp: Computation, init: str, j: int, module: Any) -> int | None:
    """The first value of element ``j`` of the loop state ``init`` (an instruction of ``comp``, the computation
    holding the ``while``) when it is a constant: a ``tuple`` whose element is a constant (through copies), a
    constant tuple, a ``get-tuple-element`` of one..."""
    value = _element(comp, init, j, module)
    return int(value[1]) if value is not None and value[0] == "const" else None


_TYPE_MAX = {"s8": 2**7 - 1, "s16": 2**15 - 1, "s32": 2**31 - 1, "s64": 2**63 - 1,
             "u8": 2**8 - 1, "u16": 2**16 - 1, "u32": 2**32 - 1, "u64": 2**64 - 1}
"""The largest value of each integer type: a counter that would pass it wraps around (not modelled)."""


def _elements_reached(body: Computation, name: str) -> set[int] | None:
    """The elements of the body's state (``get-tuple-element`` of its parameter) that instruction ``name``
    depends on in the graph (a superset of those its composed maps read: a path may read nothing); None
    when the whole state is used otherwise (elements not told apart here)."""
    from verified_indexing.hlo.fusion import topological_order

    inst = body.by_name.get(name)
    if inst is None or inst.opcode == "parameter":
        return None
    out: set[int] = set()
    for i in topological_order(body, [inst]):
        if i.opcode == "parameter":
            continue
        if i.opcode != "get-tuple-element" and any(
            (src := body.by_name.get(o)) is not None and src.opcode == "parameter" for o in i.operands
        ):
            return None
        j = _gte_of_param(body, i.name)
        if j is not None:
            out.add(j)
    return out


def _step_of(body: Computation, module: Any, j: int) -> int | None:
    """The constant ``step > 0`` when the body's element ``j`` is element ``j`` plus a constant: an ``add``,
    through copies, one-op fusions and calls (JAX's ``fori_loop`` advances its ``i`` inside a ``call``; XLA's
    passes wrap the add in a fusion) -- see :func:`_value`."""
    if j >= len(body.root.operands):
        return None
    return _grows(_value(body, body.root.operands[j], module), j)


def _counter_value(body: Computation, module: Any, name: str, counters: dict[int, tuple[int, int]],
                   t: AffineExpr) -> list[tuple[list[tuple[AffineExpr, Interval]], AffineExpr]] | None:
    """The value of the runtime variable's origin ``name`` (an instruction of the body,
    or ``callee/instruction`` of a computation the body calls) at iteration ``t``, as
    pieces (conditions, value) over the counters (element j: ``first + step * t``);
    None where it is not computed from them by the ops the kernel audit evaluates."""
    from verified_indexing.hlo.kernels import _scalar_value

    j = _gte_of_param(body, name)
    if j is not None:
        return [([], Const(counters[j][0]) + t * counters[j][1])] if j in counters else None
    if "/" not in name:  # computed in the body: linear in the counters (add, subtract, multiply by a constant)
        line = _linear(_value(body, name, module), counters)
        return [([], Const(line[0]) + t * line[1])] if line is not None else None
    callee_name, inner = name.split("/", 1)
    calls = [i for i in body.instructions if i.opcode in ("call", "fusion") and i.called_computation() == callee_name]
    callee = module.computations.get(callee_name)
    if len(calls) != 1 or callee is None:
        return None
    raw_args, values = [], []
    for p in callee.parameters():
        k = p.parameter_number
        c = _gte_of_param(body, calls[0].operands[k]) if k is not None and k < len(calls[0].operands) else None
        if k is not None and c in counters:
            raw_args.append(k)
            values.append(Const(counters[c][0]) + t * counters[c][1])
    pieces = _scalar_value(callee, inner, raw_args, 0, [], None)
    if pieces is None:
        return None
    return [([(e.substitute(rts=values), iv) for e, iv in cons], v.substitute(rts=values)) for cons, v in pieces]


def induction_of(inst: Instruction, comp: Computation, module: Any) -> Induction | None:
    """The counter of the ``while`` ``inst`` (in ``comp``), or None when the loop has
    none the model states (see the module's docstring)."""
    body = module.computations.get((inst.attributes.get("body") or "").strip().lstrip("%"))
    cond = module.computations.get((inst.attributes.get("condition") or "").strip().lstrip("%"))
    init = comp.by_name.get(inst.operands[0]) if len(inst.operands) == 1 else None
    if body is None or cond is None or init is None or body.root.opcode != "tuple":
        return None
    test = _value(cond, cond.root.name, module)
    if test is None or test[0] != "cmp":
        return None
    direction, a, b = test[1:]
    if a[0] == "elem" and b[0] == "const" and direction in ("LT", "LE"):
        j, bound, inclusive = a[1], b[1], direction == "LE"
    elif b[0] == "elem" and a[0] == "const" and direction in ("GT", "GE"):  # N > i
        j, bound, inclusive = b[1], a[1], direction == "GE"
    else:
        return None
    if j >= len(body.root.operands) or not inst.shape.is_tuple or j >= len(inst.shape.tuple_shapes):
        return None
    step = _step_of(body, module, j)
    if step is None:
        return None
    last = bound if inclusive else bound - 1
    if last + step > _TYPE_MAX.get(inst.shape.tuple_shapes[j].element_type, -1):
        return None  # the counter would wrap around before the test fails (or is not an integer)
    first = _init_value(comp, init.name, j, module)
    if first is None:
        return Induction(j, None, step, None, last)
    return Induction(j, first, step, max(0, (last - first) // step + 1), last)


def while_of_call(inst: Instruction, module: Any) -> Instruction | None:
    """The ``while`` that the ``call`` ``inst`` runs, as if it stood in the caller: a call whose computation is
    one ``while`` of its one parameter (XLA's CPU passes wrap each loop so, the init tuple left in the
    caller), returned as that ``while`` taking the call's operand. None for any other instruction."""
    if inst.opcode != "call" or len(inst.operands) != 1:
        return None
    callee = module.computations.get(inst.called_computation() or "")
    if callee is None:
        return None
    params, root = callee.parameters(), callee.root
    if len(params) != 1 or root.opcode != "while" or root.operands != [params[0].name] or \
            len(callee.instructions) != 2:
        return None
    import dataclasses

    loop: Instruction = dataclasses.replace(root, name=f"{callee.name}/{root.name}", operands=list(inst.operands))
    return loop


def _linear(value: Value | None, counters: dict[int, tuple[int, int]]) -> tuple[int, int] | None:
    """``(a, b)`` when ``value`` is ``a + b * t`` at iteration ``t`` (constants, counters, their sums)."""
    if value is None:
        return None
    if value[0] == "const":
        return int(value[1]), 0
    if value[0] == "elem" and value[1] in counters:
        return counters[value[1]]
    if value[0] in ("add", "sub", "mul"):
        x, y = _linear(value[1], counters), _linear(value[2], counters)
        if x is None or y is None:
            return None
        if value[0] == "add":
            return x[0] + y[0], x[1] + y[1]
        if value[0] == "sub":
            return x[0] - y[0], x[1] - y[1]
        if x[1] == 0 or y[1] == 0:  # a constant times a linear value
            return x[0] * y[0], x[0] * y[1] + x[1] * y[0]
    return None


ENUMERATED = 4096
"""The most iterations over which an offset not linear in the counters by its form is evaluated one by one."""


def _enumerated(body: Computation, module: Any, name: str, counters: dict[int, tuple[int, int]],
                trips: int) -> tuple[int, int] | None:
    """``(a, b)`` when the runtime value ``name`` (an instruction of the body, or ``callee/instruction``) is
    ``a + b * t`` at every iteration ``t`` of the loop, evaluated iteration by iteration (JAX wraps a negative
    index: ``select(2 * i < 0, 2 * i + n, 2 * i)``); None when it is not computed from the counters or not
    linear over the iterations, or the loop runs more than :data:`ENUMERATED` iterations."""
    if trips > ENUMERATED:
        return None
    pieces = _counter_value(body, module, name, counters, Sym(0))  # over t, the first range variable
    if pieces is None:
        return None
    values = []
    for t in range(trips):
        try:
            held = [v.evaluate(syms=[t]) for cons, v in pieces
                    if all(iv.lo <= e.evaluate(syms=[t]) <= iv.hi for e, iv in cons)]
        except (IndexError, ValueError, NotImplementedError):
            return None  # a value not computed from t alone
        if len(held) != 1:
            return None
        values.append(held[0])
    a = values[0]
    b = values[1] - a if trips > 1 else 0
    return (a, b) if all(v == a + b * t for t, v in enumerate(values)) else None


def _stacked_write(body: Computation, module: Any, k: int, counters: dict[int, tuple[int, int]], ind: Induction,
                   out_dims: tuple[int, ...], kept: list[str]) -> tuple[list[IndexingMap], str] | None:
    """Element ``k`` written by a ``dynamic-update-slice`` of itself at offsets linear in the counters (a
    ``scan``'s stacked output: ``ys[t] = f(x[t])``), directly in the body or as the root of a fusion of it,
    whose update does not read element ``k``: when no offset is clamped over the iterations, one dimension
    moves by at least the window's size each iteration and the others stay (the windows are disjoint: the
    element at ``r`` is the update of the one iteration whose window holds ``r``), the maps of its initial
    value, read only where no window lands (one piece per side of the covered rows, and the gaps between
    windows), and the prefix of the ``dynamic-update-slice``'s marks, which the update's maps no longer need
    (they are constrained to the window). None in any other case (the marked maps stay)."""
    from verified_indexing.expr import Dim
    from verified_indexing.hlo.fusion import topological_order

    top = body.by_name.get(body.root.operands[k])
    trips = ind.trips or 0
    if top is None or trips < 1:
        return None
    callee: Computation | None = None
    if top.opcode == "dynamic-update-slice":
        dus, prefix = top, f"{top.name} (dynamic-update-slice): "
    elif top.opcode == "fusion":
        callee = module.computations.get(top.called_computation() or "")
        if callee is None or callee.root.opcode != "dynamic-update-slice" or \
                len(callee.parameters()) != len(top.operands):
            return None
        dus, prefix = callee.root, f"{callee.name}/{callee.root.name} (dynamic-update-slice): "
    else:
        return None
    if any(not a.startswith(prefix) for a in kept) or len(dus.operands) != 2 + len(out_dims):
        return None  # the initial value is read through something else too
    where = callee if callee is not None else body

    def outside(name: str) -> str | None:  # the body's instruction a parameter of the fusion is
        inst = where.by_name.get(name)
        if callee is None:
            return name
        if inst is None or inst.opcode != "parameter" or inst.parameter_number is None:
            return None
        return top.operands[inst.parameter_number]

    src = outside(dus.operands[0])
    if src is None or _gte_of_param(body, src) != k:
        return None
    update = where.by_name.get(dus.operands[1])
    if update is None or len(update.shape.dims) != len(out_dims):
        return None
    feeds = [update] if callee is None else \
        [where.by_name[i.name] for i in topological_order(where, [update]) if i.opcode == "parameter"]
    for inst in feeds:
        name = outside(inst.name) if callee is not None else inst.name
        if name is None:
            return None
        j = _gte_of_param(body, name)
        reached = {j} if j is not None else _elements_reached(body, name)
        if reached is None or k in reached:
            return None  # the update may read the element itself
    env = {i: _value(body, o, module) for i, o in enumerate(top.operands)} if callee is not None else None
    lines = [_linear(_value(where, o, module, env), counters) or
             _enumerated(body, module, f"{callee.name}/{o}" if callee is not None else o, counters, trips)
             for o in dus.operands[2:]]
    if any(line is None for line in lines):
        return None
    sizes = update.shape.dims
    moving = [i for i, line in enumerate(lines) if line is not None and line[1] != 0]
    if len(moving) > 1 or (not moving and trips > 1):
        return None  # windows that may overlap: the last write wins (not modelled)
    pieces: list[IndexingMap] = []
    base = IndexingMap.identity(out_dims)
    for i, line in enumerate(lines):
        assert line is not None
        a, b = line
        n, size = out_dims[i], sizes[i]
        end = a + b * (trips - 1)
        if min(a, end) < 0 or max(a, end) > n - size or (b != 0 and b < size):
            return None  # clamped, or overlapping
        sides = [(0, a - 1), (end + size, n - 1)]
        for lo, hi in sides:
            if lo <= hi:
                pieces.append(IndexingMap(base.dims, base.results, (), (), [(Dim(i), Interval(lo, hi))]))
        if b > size:  # the gaps between windows
            pieces.append(IndexingMap(base.dims, base.results, (), (), [((Dim(i) - a) % b, Interval(size, b - 1))]))
    return [p for p in pieces if not p.is_known_empty], prefix


def while_induction_steps(inst: Instruction, comp: Computation, output_index: int, module: Any) -> list[Step] | None:
    """The steps (operand, tuple element, map, reason, over-approximations) from
    element ``output_index`` of the ``while`` ``inst`` to its initial state, or None
    when the loop is not one this model states exactly."""
    from verified_indexing.hlo.fusion import _called_maps
    from verified_indexing.hlo.ops import RuntimeOrigin

    ind = induction_of(inst, comp, module)
    if ind is None or not inst.shape.is_tuple:
        return None
    parts = list(inst.shape.tuple_shapes)
    if output_index >= len(parts) or any(p.is_tuple for p in parts):
        return None
    out_dims = parts[output_index].dims
    operand = inst.operands[0]
    identity = IndexingMap.identity(out_dims)
    if ind.trips == 0:  # a loop that never runs: the initial value
        return [(operand, output_index, identity, "", ())]
    body: Computation = module.computations[(inst.attributes.get("body") or "").strip().lstrip("%")]
    counters: dict[int, tuple[int, int]] = {}  # element -> (first value, step): every counter advances each iteration
    if ind.first is not None:
        counters[ind.element] = (ind.first, ind.step)
        for j in range(len(body.root.operands)):
            step = _step_of(body, module, j) if j != ind.element else None
            first = _init_value(comp, operand, j, module)
            if step is not None and first is not None:
                counters[j] = (first, step)
    if output_index in counters or (output_index == ind.element and ind.first is not None):
        return [(operand, output_index, identity, "", ())]  # a counter: computed from its first value (and constants)
    if output_index == ind.element:
        return None
    invariant = {j for j, name in enumerate(body.root.operands) if _gte_of_param(body, name) == j}
    allowed = {output_index, ind.element} | invariant | set(counters)
    reached = _elements_reached(body, body.root.operands[output_index])
    if reached is not None and not reached <= allowed:
        return None  # another element that changes in the body feeds this one (seen in the graph, not composed)
    res = _called_maps(module, body.name, output_index, True, True)  # memoised: once per body and element
    if res.unsupported:
        return None
    accumulates = False
    kept: list[str] = []  # the marks of the element's read of itself (its initial value)
    reads: list[tuple[int, IndexingMap, tuple[str, ...]]] = []
    for target in res.targets:
        for access in target.maps:
            if access.verdict is not None and not access.verdict.proved:
                return None
            j = target.element if target.element is not None else 0
            m = access.map
            if j == output_index:
                if m != identity:
                    return None  # an element that moves across iterations: the whole-loop model
                accumulates = True
                kept += access.over_approximation  # (a scatter's or dynamic-update-slice's operand: overwritten)
            elif j == ind.element or j in invariant or j in counters:
                reads.append((j, m, access.over_approximation))
            else:
                return None  # another element that changes in the body
    unknown = ind.first is None or ind.trips is None
    why = (f"{inst.name} (while): the counter's first value is not known here (the loop state is a parameter): "
           f"every value up to {ind.last} taken, and the initial value kept",) if unknown else ()
    own = tuple(f"{body.name}/{a}" for a in dict.fromkeys(kept))
    steps: list[Step] = [(operand, output_index, identity, "", own + why)] if accumulates or unknown else []
    stacked = _stacked_write(body, module, output_index, counters, ind, out_dims, kept) \
        if accumulates and not unknown and ind.trips is not None else None
    if stacked is not None:  # written at the counter, window after window: the initial value where none lands
        uncovered, prefix = stacked
        steps = [(operand, output_index, piece, "", ()) for piece in uncovered]
        reads = [(j, m, tuple(a for a in approx if not a.startswith(prefix))) for j, m, approx in reads]
    for j, m, approx in reads:
        choices: list[list[tuple[list[tuple[AffineExpr, Interval]], AffineExpr]]] = []
        extra: list[Variable] = []
        for v in m.rt_vars:
            origin = v.origin
            if not isinstance(origin, RuntimeOrigin):
                return None
            if ind.first is None or ind.trips is None:  # any value up to the bound, clamped
                if _gte_of_param(body, origin.operand_name) != ind.element:
                    return None  # a runtime value that is not the counter
                hi = min(v.bounds.hi, ind.last)
                if hi < v.bounds.lo:
                    choices.append([([], Const(v.bounds.lo))])
                    continue
                choices.append([([], Sym(m.num_range_vars + len(extra)))])
                extra.append(Variable(Interval(v.bounds.lo, hi)))
                continue
            if accumulates and not extra:
                extra.append(Variable(Interval(0, ind.trips - 1)))
            t: AffineExpr = Sym(m.num_range_vars) if accumulates else Const(ind.trips - 1)
            pieces = _counter_value(body, module, origin.operand_name, counters, t)
            if pieces is None:
                return None  # a runtime value that is not computed from the counters
            choices.append([(cons, emin(emax(e, Const(v.bounds.lo)), Const(v.bounds.hi))) for cons, e in pieces])
        for combo in itertools.product(*choices):
            values = [e for _, e in combo]
            cons = [c for cs, _ in combo for c in cs]
            lifted = IndexingMap(m.dims, [r.substitute(rts=values) for r in m.results], [*m.range_vars, *extra], [],
                                 [(e.substitute(rts=values), iv) for e, iv in m.constraints] + cons)
            if not lifted.is_known_empty:
                steps.append((operand, j, lifted, "", tuple(f"{body.name}/{a}" for a in approx) + why))
    return steps
