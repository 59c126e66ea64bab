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
"""

from __future__ import annotations

import itertools
from typing import Any

from verified_indexing.expr import AffineExpr, Const, Sym, emax, emin
from verified_indexing.hlo.ir import Computation, Instruction
from verified_indexing.indexing_map import IndexingMap, Variable
from verified_indexing.interval import Interval

__all__ = ["Induction", "induction_of", "while_induction_steps"]

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
    """The tuple index when ``name`` is ``get-tuple-element(parameter), index=j``."""
    inst = comp.by_name.get(name)
    if inst is None or inst.opcode != "get-tuple-element" or len(inst.operands) != 1:
        return None
    src = comp.by_name.get(inst.operands[0])
    return inst.tuple_index if src is not None and src.opcode == "parameter" else None


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
    """The constant ``step > 0`` when the body's element ``j`` is ``add(element j,
    constant step)``, directly or as an element of a ``call`` whose computation
    returns that add of the parameter the call passes element ``j`` to (JAX's
    ``fori_loop`` keeps its ``i`` so)."""
    from verified_indexing.hlo.ops import constant_scalar

    if j >= len(body.root.operands):
        return None
    grow = body.by_name.get(body.root.operands[j])
    where = body
    element_j = {i.name for i in body.instructions if _gte_of_param(body, i.name) == j}  # the names of element j
    if grow is not None and grow.opcode == "get-tuple-element" and len(grow.operands) == 1:
        call = body.by_name.get(grow.operands[0])
        callee = module.computations.get(call.called_computation() or "") if call is not None else None
        if call is None or call.opcode != "call" or callee is None or callee.root.opcode != "tuple" or \
                grow.tuple_index is None or grow.tuple_index >= len(callee.root.operands):
            return None
        element_j = {p.name for p in callee.parameters() if p.parameter_number is not None and p.parameter_number <
                     len(call.operands) and _gte_of_param(body, call.operands[p.parameter_number]) == j}
        grow, where = callee.by_name.get(callee.root.operands[grow.tuple_index]), callee
    if grow is None or grow.opcode != "add" or len(grow.operands) != 2:
        return None
    for x, y in (grow.operands, grow.operands[::-1]):
        step = constant_scalar(where.by_name.get(y))
        if x in element_j and step is not None and step > 0:
            return step
    return None


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
    if "/" not in name:
        return None
    callee_name, inner = name.split("/", 1)
    calls = [i for i in body.instructions if i.opcode == "call" and i.called_computation() == callee_name]
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
    from verified_indexing.hlo.ops import constant_scalar

    body = module.computations.get((inst.attributes.get("body") or "").strip().lstrip("%"))
    cond = module.computations.get((inst.attributes.get("condition") or "").strip().lstrip("%"))
    init = comp.by_name.get(inst.operands[0]) if len(inst.operands) == 1 else None
    if body is None or cond is None or init is None or body.root.opcode != "tuple":
        return None
    test = cond.root
    if test.opcode != "compare" or len(test.operands) != 2:
        return None
    direction = (test.attr("direction") or "").strip()
    a, b = test.operands
    ja, jb = _gte_of_param(cond, a), _gte_of_param(cond, b)
    na, nb = constant_scalar(cond.by_name.get(a)), constant_scalar(cond.by_name.get(b))
    if ja is not None and nb is not None and direction in ("LT", "LE"):
        j, bound, inclusive = ja, nb, direction == "LE"
    elif jb is not None and na is not None and direction in ("GT", "GE"):  # N > i
        j, bound, inclusive = jb, na, direction == "GE"
    else:
        return None
    if j >= len(body.root.operands):
        return None
    grow = body.by_name.get(body.root.operands[j])
    if grow is None or grow.opcode != "add" or len(grow.operands) != 2:
        return None
    step = None
    for x, y in (grow.operands, grow.operands[::-1]):
        if _gte_of_param(body, x) == j and constant_scalar(body.by_name.get(y)) is not None:
            step = constant_scalar(body.by_name.get(y))
    if step is None or step <= 0:
        return None
    last = bound if inclusive else bound - 1
    first = constant_scalar(comp.by_name.get(init.operands[j])) if init.opcode == "tuple" and \
        j < len(init.operands) else None
    if first is None:
        return Induction(j, None, step, None, last)
    return Induction(j, first, step, max(0, (last - first) // step + 1), last)


def while_induction_steps(inst: Instruction, comp: Computation, output_index: int, module: Any) -> list[Step] | None:
    """The steps (operand, tuple element, map, reason, over-approximations) from
    element ``output_index`` of the ``while`` ``inst`` to its initial state, or None
    when the loop is not one this model states exactly."""
    from verified_indexing.hlo.fusion import _called_maps
    from verified_indexing.hlo.ops import RuntimeOrigin, constant_scalar

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
    init = comp.by_name.get(operand)
    counters: dict[int, tuple[int, int]] = {}  # element -> (first value, step): every counter advances each iteration
    if ind.first is not None:
        counters[ind.element] = (ind.first, ind.step)
        for j in range(len(body.root.operands)):
            step = _step_of(body, module, j) if j != ind.element else None
            first = constant_scalar(comp.by_name.get(init.operands[j])) if init is not None and \
                init.opcode == "tuple" and j < len(init.operands) else None
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
            elif j == ind.element or j in invariant or j in counters:
                reads.append((j, m, access.over_approximation))
            else:
                return None  # another element that changes in the body
    unknown = ind.first is None or ind.trips is None
    why = (f"{inst.name} (while): the counter's first value is not known here (the loop state is a parameter): "
           f"every value up to {ind.last} taken, and the initial value kept",) if unknown else ()
    steps: list[Step] = [(operand, output_index, identity, "", why)] if accumulates or unknown else []
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
