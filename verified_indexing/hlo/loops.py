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
    from verified_indexing.hlo.fusion import output_to_input_maps
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
    if output_index == ind.element:  # the counter: computed from its first value (and constants)
        return [(operand, output_index, identity, "", ())] if ind.first is not None else None
    body: Computation = module.computations[(inst.attributes.get("body") or "").strip().lstrip("%")]
    invariant = {j for j, name in enumerate(body.root.operands) if _gte_of_param(body, name) == j}
    res = output_to_input_maps(body, output_index=output_index, module=module)
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
            elif j == ind.element or j in invariant:
                reads.append((j, m, access.over_approximation))
            else:
                return None  # another element that changes in the body
    unknown = ind.first is None or ind.trips is None
    why = (f"{inst.name} (while): the counter's first value is not known here (the loop state is a parameter): "
           f"every value up to {ind.last} taken, and the initial value kept",) if unknown else ()
    steps: list[Step] = [(operand, output_index, identity, "", why)] if accumulates or unknown else []
    for j, m, approx in reads:
        values: list[AffineExpr] = []
        extra: list[Variable] = []
        for v in m.rt_vars:
            origin = v.origin
            if not isinstance(origin, RuntimeOrigin) or _gte_of_param(body, origin.operand_name) != ind.element:
                return None  # a runtime value that is not the counter
            if ind.first is None or ind.trips is None:  # any value up to the bound, clamped
                hi = min(v.bounds.hi, ind.last)
                if hi < v.bounds.lo:
                    values.append(Const(v.bounds.lo))
                    continue
                values.append(Sym(m.num_range_vars + len(extra)))
                extra.append(Variable(Interval(v.bounds.lo, hi)))
                continue
            if accumulates and not extra:
                extra.append(Variable(Interval(0, ind.trips - 1)))
            t: AffineExpr = Sym(m.num_range_vars) if accumulates else Const(ind.trips - 1)
            values.append(emin(emax(Const(ind.first) + t * ind.step, Const(v.bounds.lo)), Const(v.bounds.hi)))
        lifted = IndexingMap(m.dims, [r.substitute(rts=values) for r in m.results], [*m.range_vars, *extra], [],
                             [(e.substitute(rts=values), iv) for e, iv in m.constraints])
        steps.append((operand, j, lifted, "", tuple(f"{body.name}/{a}" for a in approx) + why))
    return steps
