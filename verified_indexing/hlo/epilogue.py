"""XLA's epilogue indexing: the maps from a hero instruction's output to the output of its computation's root
(XLA's ``ComputeEpilogueInputToOutputIndexing``: a reduction or transpose hero, then the elementwise ops,
broadcasts, bitcasts... that follow it up to the fusion's root). ``verified-indexing analyze --epilogue HERO``.

How: the hero is replaced by a new parameter of its computation (same name, shape and layout; its operands
stay, unread), and the computation is analyzed input to output from that parameter, with the same per-op
maps, composition along every path, simplification and isl proof as every other analysis. The hero itself is
not looked into: the maps say which root elements each hero element reaches, whatever the hero computes.

Promises:

* a hero that is the root gives the identity (XLA: ``epilogue_root == hero``);
* a hero of tuple shape (a variadic reduce) is ``unsupported`` (the input-to-output analysis does not start
  from a tuple), never a guessed map;
* a HERO no computation has, or several have without ``--computation`` (and not exactly one of them a
  fusion's), is bad input naming them.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from verified_indexing.errors import VerifiedIndexingError

if TYPE_CHECKING:
    from verified_indexing.hlo.fusion import ComputationIndexing
    from verified_indexing.hlo.ir import Computation, Module

__all__ = ["EpilogueQuestion", "epilogue_question", "epilogue_indexing", "epilogue_heading"]


@dataclasses.dataclass(frozen=True)
class EpilogueQuestion:
    """The module with the hero made a parameter, and where: the computation, the hero, the parameter."""

    module: Module
    computation: str
    hero: str
    opcode: str
    parameter: int


def _holder(module: Module, hero: str, computation: str | None) -> Computation:
    if computation is not None:
        name = module.entry_name if computation == "ENTRY" and "ENTRY" not in module.computations else computation
        comp = module.computations.get(name.lstrip("%"))
        if comp is None:
            raise VerifiedIndexingError(f"--computation {computation}: no such computation in {module.name}")
        if hero not in comp.by_name:
            raise VerifiedIndexingError(f"--epilogue {hero}: no instruction {hero!r} in computation {comp.name!r}")
        return comp
    holders = [c for c in module.computations.values() if hero in c.by_name]
    if not holders:
        from verified_indexing.syntax.suggest import did_you_mean

        names = [i.name for c in module.computations.values() for i in c.instructions]
        raise VerifiedIndexingError(f"--epilogue {hero}: no instruction {hero!r} in {module.name}"
                                    f"{did_you_mean(hero, names)}")
    fused = {called.name for _, called in module.fusions()}
    if len(holders) > 1 and sum(1 for c in holders if c.name in fused) == 1:
        return next(c for c in holders if c.name in fused)  # a fusion's computation: where heroes are
    if len(holders) > 1:
        raise VerifiedIndexingError(
            f"--epilogue {hero}: {hero!r} is in {len(holders)} computations "
            f"({', '.join(c.name for c in holders)}): give --computation"
        )
    return holders[0]


def epilogue_question(module: Module, hero: str, computation: str | None = None) -> EpilogueQuestion:
    """The module whose computation (``computation``, or the one holding ``hero``) reads the hero's output
    as a new parameter (numbered after the others), for the input-to-output analysis from it."""
    from verified_indexing.hlo.ir import Computation, Module

    comp = _holder(module, hero, computation)
    inst = comp.by_name[hero]
    if inst.opcode == "parameter" and inst.parameter_number is not None:
        return EpilogueQuestion(module, comp.name, hero, inst.opcode, inst.parameter_number)
    numbers = [i.parameter_number for i in comp.instructions if i.opcode == "parameter"]
    number = max((n for n in numbers if n is not None), default=-1) + 1
    param = dataclasses.replace(inst, opcode="parameter", operands=[], attributes={}, parameter_number=number)
    replaced = Computation(comp.name, [param if i.name == hero else i for i in comp.instructions],
                          is_entry=comp.is_entry, offset=comp.offset)
    computations = {**module.computations, comp.name: replaced}
    return EpilogueQuestion(Module(module.name, computations, module.entry_name, module.attributes, module.text),
                            comp.name, hero, inst.opcode, number)


def epilogue_indexing(
    module: Module, hero: str, computation: str | None = None, *, verify: bool = True, physical: bool = False
) -> tuple[EpilogueQuestion, list[ComputationIndexing]]:
    """The epilogue maps of ``hero``: from its output indices to the root's output indices (one result,
    a target per output of the root), composed, simplified and (``verify``) proven like every map."""
    from verified_indexing.hlo.fusion import analyze_module

    q = epilogue_question(module, hero, computation)
    results = analyze_module(q.module, computation=q.computation, direction="input-to-output",
                             operand=q.parameter, verify=verify, physical=physical)
    return q, results


def epilogue_heading(q: EpilogueQuestion) -> str:
    """The first line of an epilogue's text block."""
    return f"epilogue of {q.hero} ({q.opcode}) in {q.computation}: from the hero's output to the root's"
