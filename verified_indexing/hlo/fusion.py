"""Indexing maps of a whole computation (a fusion's body, or any computation).

Output to input (XLA's approach): start from the identity on the root's output,
walk the instructions in reverse topological order and compose, for every
operand of every instruction, the maps that reach the instruction with the
per-op ``output_to_input`` maps of :mod:`verified_indexing.hlo.ops`. Every path
from the root to a parameter contributes one composed map; each composed map is
simplified, and two maps that reach the same instruction are merged when isl
proves their exact compositions equal (structural equality without proofs).
Input to output is the mirror walk from one parameter towards the root with the
per-op ``input_to_output`` maps.

Promises:

* a map reported for a parameter is the exact composition of the per-op maps
  along the paths it stands for; with ``verify=True`` each reported map is
  proven equal (isl) to the exact relational composition of the per-op maps
  and carries that verdict, and two paths are merged only when their exact
  compositions are proven equal;
* an instruction without a model stops its paths: it is named in
  ``unsupported`` (with every parameter it hides), never guessed;
* runtime variables keep their ``origin`` through composition: its map is
  re-expressed from the root's index space (see docs/hlo.md).
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import functools
import threading
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

from verified_indexing.engines.deadline import BudgetExpired as _BudgetExpired
from verified_indexing.engines.verdict import Verdict
from verified_indexing.errors import ParseError, UnsupportedError, VerifiedIndexingError
from verified_indexing.expr import AffineExpr, Const, Dim, RtSym, Sym
from verified_indexing.hlo import relation as rel_mod
from verified_indexing.hlo.ir import Computation, Instruction, Module, Shape
from verified_indexing.indexing_map import IndexingMap, Variable, compose
from verified_indexing.interval import Interval

__all__ = [
    "Direction",
    "UnsupportedOp",
    "AccessMap",
    "TargetIndexing",
    "ComputationIndexing",
    "OpMapsFn",
    "output_to_input_maps",
    "input_to_output_maps",
    "analyze_module",
    "topological_order",
]

Direction = Literal["output-to-input", "input-to-output"]
OpMapsFn = Callable[[Instruction, Computation, int], list[IndexingMap]]
"""``fn(inst, comp, output_index) -> one map per operand`` (output to input)."""


@dataclass(frozen=True)
class UnsupportedOp:
    """An instruction whose indexing is unknown; ``hides`` names the parameters
    (or outputs) whose maps through it are therefore missing."""

    instruction: str
    opcode: str
    reason: str
    hides: tuple[str, ...] = ()

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        return {
            "instruction": self.instruction,
            "opcode": self.opcode,
            "reason": self.reason,
            "hides": list(self.hides),
        }


@dataclass
class AccessMap:
    """One composed map; ``paths`` counts the paths merged into it; ``verdict`` is
    the proof that it equals the exact composition (None when not verified);
    ``merges`` are the verdicts of the proofs that merged other paths into it."""

    map: IndexingMap
    paths: int = 1
    verdict: Verdict | None = None
    merges: list[Verdict] = field(default_factory=list)
    #: Empty when the map is exact (its image is exactly the elements read); else why it may
    #: claim reads that do not happen ("instruction: reason", one per over-approximating op).
    over_approximation: tuple[str, ...] = ()

    def __repr__(self) -> str:
        from verified_indexing._repr import clip, short

        status = self.verdict.status if self.verdict is not None else "not verified"
        over = ", over-approximation" if self.over_approximation else ""
        return short("AccessMap", f"{clip(self.map.format(one_line=True), 220)} [{status}{over}]")

    def to_json(self) -> dict[str, Any]:
        from verified_indexing.serialize import map_to_json

        return {
            "map": str(self.map),
            "json": map_to_json(self.map),
            "paths": self.paths,
            "verdict": self.verdict.to_json() if self.verdict is not None else None,
            "merge_proofs": [v.to_json() for v in self.merges],
            "rt_origins": [_origin_json(v.origin) for v in self.map.rt_vars],
            "exact": not self.over_approximation,
            "over_approximation": list(self.over_approximation),
        }


@dataclass
class TargetIndexing:
    """The maps to one target: a parameter (output to input) or an output of the
    computation (input to output). ``index`` is the parameter number or output index."""

    index: int
    name: str
    shape: Shape
    maps: list[AccessMap] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)  # names of the ops hiding some of its maps
    element: int | None = None  # the element of a tuple-shaped parameter or output

    def __repr__(self) -> str:
        from verified_indexing._repr import short

        return short("TargetIndexing", f"{self.name} {self.shape}: {len(self.maps)} maps"
                     + (f", hidden by {', '.join(self.unsupported)}" if self.unsupported else ""))

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "name": self.name,
            "shape": str(self.shape),
            "maps": [m.to_json() for m in self.maps],
            "unsupported": list(self.unsupported),
            "element": self.element,
        }


@dataclass
class ComputationIndexing:
    """The result for one computation, one direction, one source (the root's
    ``output_index`` or the ``parameter`` we map from)."""

    computation: str
    direction: Direction
    source: int
    targets: list[TargetIndexing]
    unsupported: list[UnsupportedOp]
    verified: bool
    seconds: float = 0.0
    fusion: str | None = None  # the fusion instruction calling the computation, if any
    merge_proofs: list[Verdict] = field(default_factory=list)  # every merge of two paths, anywhere
    module: str | None = None  # which module of several (a dump directory, a split file), for the counts
    module_name: str | None = None  # the HloModule's name, when the input names its modules (a dump directory)
    file: str | None = None  # the file the module was read from, likewise

    @property
    def num_maps(self) -> int:
        return sum(len(t.maps) for t in self.targets)

    def __str__(self) -> str:
        """The command line's text block of this analysis (``verified-indexing analyze``)."""
        from verified_indexing.hlo.report import format_result

        return format_result(self)

    def __repr__(self) -> str:
        from verified_indexing._repr import short

        verdicts = [m.verdict for t in self.targets for m in t.maps if m.verdict is not None]
        proved = sum(1 for v in verdicts if v.proved)
        what = f"fusion {self.fusion} ({self.computation})" if self.fusion else self.computation
        return short("ComputationIndexing", f"{what}, {self.direction} from {self.source}: {self.num_maps} maps "
                     f"to {len(self.targets)} targets, {proved} proved, {len(self.unsupported)} unsupported")

    def verdicts(self) -> list[Verdict]:
        """Every proof: one per reported map, one per merge of two paths."""
        out = [m.verdict for t in self.targets for m in t.maps if m.verdict is not None]
        return out + list(self.merge_proofs)

    def to_json(self) -> dict[str, Any]:
        return {
            "computation": self.computation,
            "fusion": self.fusion,
            "direction": self.direction,
            "source": self.source,
            "verified": self.verified,
            "targets": [t.to_json() for t in self.targets],
            "unsupported": [u.to_json() for u in self.unsupported],
            "merge_proofs": len(self.merge_proofs),
            "seconds": self.seconds,
            **({"module": self.module_name, "file": self.file} if self.file is not None else {}),
        }


# -- the per-op models, the simplifier and the equality prover (imported lazily) ------------------


def _default_output_to_input(inst: Instruction, comp: Computation, output_index: int) -> list[IndexingMap]:
    from verified_indexing.hlo.ops import output_to_input

    return output_to_input(inst, comp, output_index)


def _default_input_to_output(inst: Instruction, comp: Computation, operand_index: int) -> list[IndexingMap]:
    """One map per output of ``inst`` (a single one unless ``inst`` has a tuple shape)."""
    from verified_indexing.hlo import ops

    fn = getattr(ops, "input_to_output", None)
    if fn is None:
        raise UnsupportedError(f"{inst.opcode}: no input-to-output model")
    result = fn(inst, comp, operand_index)
    return list(result) if isinstance(result, (list, tuple)) else [result]


def _simplifier() -> Callable[[IndexingMap], IndexingMap]:
    """The project's simplifier, unverified here: the walk proves every final map
    against the exact composition itself."""
    from verified_indexing.simplify import simplify

    def run(m: IndexingMap) -> IndexingMap:
        return simplify(m, verify=False)

    return run


# -- runtime-variable origins ----------------------------------------------------------------------
#
# A runtime variable's origin (``hlo.ops.RuntimeOrigin``) holds a map from the
# variables of the map that owns the runtime variable to the element of the
# operand holding its value. Here every origin map is kept *aligned*: it has
# exactly the owning map's dims, range variables and runtime variables (same
# order), so composition and renumbering apply to it the same substitution.


def _origin_map(origin: object) -> IndexingMap | None:
    m = getattr(origin, "map", None)
    return m if isinstance(m, IndexingMap) else None


def _with_origin_map(origin: object, results: Sequence[AffineExpr], owner: IndexingMap) -> object:
    """``origin`` with its map replaced by ``owner``'s variables -> ``results``."""
    if not dataclasses.is_dataclass(origin) or isinstance(origin, type):
        return origin
    plain = IndexingMap(
        [Variable(v.bounds, v.name) for v in owner.dims],
        results,
        [Variable(v.bounds, v.name) for v in owner.range_vars],
        [Variable(v.bounds, v.name) for v in owner.rt_vars],
    )
    return dataclasses.replace(origin, map=plain)


def _origin_json(origin: object) -> Any:
    if origin is None:
        return None
    out: dict[str, Any] = {}
    for key in ("operand_index", "operand_name"):
        value = getattr(origin, key, None)
        if isinstance(value, (str, int)):
            out[key] = value
    via = getattr(origin, "via", None)
    if isinstance(via, tuple) and via:
        out["via"] = list(via)
    om = _origin_map(origin)
    if om is not None:
        out["map"] = om.format(one_line=True)
    return out or str(origin)


def _origins(m: IndexingMap) -> tuple[object, ...]:
    return tuple(v.origin for v in m.rt_vars)


def _compose(first: IndexingMap, second: IndexingMap) -> IndexingMap:
    """``compose(first, second)`` with every runtime-variable origin re-expressed
    over the composed map's variables."""
    out = compose(first, second)
    if out.state != "ok" or not out.num_rt_vars:
        return out
    ns2, nrt2 = second.num_range_vars, second.num_rt_vars
    lifted = [
        r.substitute(
            syms=[Sym(ns2 + i) for i in range(first.num_range_vars)],
            rts=[RtSym(nrt2 + k) for k in range(first.num_rt_vars)],
        )
        for r in first.results
    ]
    rts = list(out.rt_vars)
    for k, v in enumerate(second.rt_vars):  # over second's dims (and a prefix of its range vars)
        om = _origin_map(v.origin)
        if om is not None:
            res = [r.substitute(dims=lifted) for r in om.results]
            rts[k] = dataclasses.replace(rts[k], origin=_with_origin_map(v.origin, res, out))
    for k, v in enumerate(first.rt_vars):  # over first's variables: shift its symbols
        om = _origin_map(v.origin)
        if om is not None:
            res = [
                r.substitute(
                    syms=[Sym(ns2 + i) for i in range(om.num_range_vars)],
                    rts=[RtSym(nrt2 + j) for j in range(om.num_rt_vars)],
                )
                for r in om.results
            ]
            rts[nrt2 + k] = dataclasses.replace(rts[nrt2 + k], origin=_with_origin_map(v.origin, res, out))
    return out.replace(rt_vars=rts)


def _needed_vars(m: IndexingMap) -> frozenset[tuple[str, int]]:
    """The variables of ``m`` used by a result, a constraint, or the origin of a
    needed runtime variable."""
    needed = set(m.used_vars())
    todo = [k for kind, k in needed if kind == "rt"]
    while todo:
        om = _origin_map(m.rt_vars[todo.pop()].origin)
        if om is None:
            continue
        for r in om.results:
            for var in r.variables():
                if var not in needed:
                    needed.add(var)
                    if var[0] == "rt":
                        todo.append(var[1])
    return frozenset(needed)


def _drop_unneeded(m: IndexingMap, keep_range_vars: bool = False) -> tuple[IndexingMap, list[int]]:
    """``m`` without the range and runtime variables nothing needs (origins
    renumbered alike; every range variable kept with ``keep_range_vars``); also
    returns the indices of the dropped runtime variables."""
    if m.state != "ok":
        return m, []
    needed = _needed_vars(m)
    keep_s = [i for i in range(m.num_range_vars) if keep_range_vars or ("s", i) in needed]
    keep_rt = [k for k in range(m.num_rt_vars) if ("rt", k) in needed]
    dropped = [k for k in range(m.num_rt_vars) if ("rt", k) not in needed]
    if len(keep_s) == m.num_range_vars and not dropped:
        return m, []
    s_map: list[AffineExpr] = [Const(0)] * m.num_range_vars
    for new, old in enumerate(keep_s):
        s_map[old] = Sym(new)
    rt_map: list[AffineExpr] = [Const(0)] * m.num_rt_vars
    for new, old in enumerate(keep_rt):
        rt_map[old] = RtSym(new)
    out = IndexingMap(
        m.dims,
        [r.substitute(syms=s_map, rts=rt_map) for r in m.results],
        [m.range_vars[i] for i in keep_s],
        [m.rt_vars[k] for k in keep_rt],
        [(e.substitute(syms=s_map, rts=rt_map), iv) for e, iv in m.constraints],
    )
    rts = list(out.rt_vars)
    for k, v in enumerate(rts):
        om = _origin_map(v.origin)
        if om is not None:
            res = [r.substitute(syms=s_map, rts=rt_map) for r in om.results]
            rts[k] = dataclasses.replace(v, origin=_with_origin_map(v.origin, res, out))
    return out.replace(rt_vars=rts), dropped


def _refresh_origins(m: IndexingMap) -> IndexingMap:
    """Origins re-aligned with ``m``'s (possibly tightened) variable bounds."""
    if m.state != "ok" or not m.num_rt_vars:
        return m
    rts = list(m.rt_vars)
    for k, v in enumerate(rts):
        om = _origin_map(v.origin)
        if om is not None:
            rts[k] = dataclasses.replace(v, origin=_with_origin_map(v.origin, om.results, m))
    return m.replace(rt_vars=rts)


#: Ops that copy one element of their single operand to each output element without
#: changing its value (same element type): a runtime variable held by their output
#: is the element of their operand their output-to-input map gives.
_VALUE_PRESERVING = frozenset({"bitcast", "broadcast", "copy", "reshape", "reverse", "slice", "transpose"})


def _trace_step(comp: Computation, name: str) -> tuple[str, IndexingMap] | None:
    """(operand name, map) when instruction ``name`` of ``comp`` passes values of its
    operand through unchanged, each output element reading exactly one element
    (a map without range variables, runtime variables or constraints)."""
    from verified_indexing.hlo.ops import output_to_input

    inst = comp.by_name.get(name)
    if inst is None or inst.opcode not in _VALUE_PRESERVING or len(inst.operands) != 1 or inst.shape.is_tuple:
        return None
    operand = comp.by_name.get(inst.operands[0])
    if operand is None or operand.shape.is_tuple or operand.shape.element_type != inst.shape.element_type:
        return None
    try:
        (m,) = output_to_input(inst, comp, 0)
    except (UnsupportedError, VerifiedIndexingError, ValueError):
        return None
    if m.state != "ok" or m.num_range_vars or m.num_rt_vars or m.constraints:
        return None
    return operand.name, m


def trace_origins(m: IndexingMap, comp: Computation) -> IndexingMap:
    """``m`` with each runtime-variable origin traced back, through instructions
    that move values unchanged (bitcast, reshape, slice, transpose, ...), to the
    instruction that produces the value -- a parameter of ``comp`` when the chain
    reaches one. The traced origin names that instruction and its map gives the
    element of it that holds the value; ``via`` lists the instructions traced
    through. Origins that are not :class:`~verified_indexing.hlo.ops.RuntimeOrigin`
    are kept as they are."""
    if m.state != "ok" or not m.num_rt_vars:
        return m
    rts = list(m.rt_vars)
    changed = False
    for k, v in enumerate(rts):
        origin = v.origin
        om = _origin_map(origin)
        name = getattr(origin, "operand_name", None)
        if om is None or not isinstance(name, str) or not hasattr(origin, "via"):
            continue
        results = list(om.results)
        via: list[str] = []
        while len(via) < len(comp.instructions):
            step = _trace_step(comp, name)
            if step is None:
                break
            via.append(name)
            name, op_map = step
            results = [r.substitute(dims=results) for r in op_map.results]
        if via:
            traced = _with_origin_map(origin, results, m)
            rts[k] = dataclasses.replace(
                v, origin=dataclasses.replace(traced, operand_name=name, via=(*origin.via, *via))  # type: ignore[type-var]
            )
            changed = True
    return m.replace(rt_vars=rts) if changed else m


def lift_origins(m: IndexingMap, inst: Instruction, called: Computation) -> IndexingMap:
    """``m``, a map of ``called`` (the computation of the fusion or call ``inst``),
    with its runtime-variable origins renamed for the caller: an origin naming a
    parameter of ``called`` names the operand of ``inst`` passed to it (same index
    space; ``via`` records ``called/parameter``), so the caller's tracing continues
    from there; any other instruction of ``called`` is named ``called/instruction``."""
    from verified_indexing.hlo.ops import RuntimeOrigin

    if m.state != "ok" or not m.num_rt_vars:
        return m
    rts = list(m.rt_vars)
    changed = False
    for k, v in enumerate(rts):
        origin = v.origin
        if not isinstance(origin, RuntimeOrigin):
            continue
        name = origin.operand_name
        inner = called.by_name.get(name)
        qualified = f"{called.name}/{name}"
        if (
            inner is not None
            and inner.opcode == "parameter"
            and not inner.shape.is_tuple
            and inner.parameter_number is not None
            and inner.parameter_number < len(inst.operands)
        ):
            new = dataclasses.replace(
                origin, operand_name=inst.operands[inner.parameter_number], via=(*origin.via, qualified)
            )
        else:
            new = dataclasses.replace(origin, operand_name=qualified)
        rts[k] = dataclasses.replace(v, origin=new)
        changed = True
    return m.replace(rt_vars=rts) if changed else m


# -- the walk ---------------------------------------------------------------------------------------------


@dataclass
class _Entry:
    map: IndexingMap
    rel: Any  # the exact relation (isl) when verifying
    paths: int = 1
    merges: list[Verdict] = field(default_factory=list)
    approx: tuple[str, ...] = ()  # the over-approximating steps on the way (empty: exact)


def _union(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys((*a, *b)))


class _Walker:
    def __init__(self, comp: Computation, verify: bool, simplify: bool, keep_loops: bool = False) -> None:
        self.box: list[Variable] = []  # the dims of the walk's source (the identity it starts from)
        self.keep_loops = keep_loops
        self.comp = comp
        self.merge_proofs: list[Verdict] = []
        self.verify = verify
        self.simplify = _simplifier() if simplify else None
        # (map so far, op map) -> the composition's outcome (:meth:`_composed`): the paths of a large
        # computation meet the same pair again and again (a 1 MB llama-style entry: 16,151 steps,
        # 146 distinct pairs); maps with runtime variables are not memoized (their origins take no
        # part in a map's equality)
        self._memo: dict[tuple[IndexingMap, IndexingMap], tuple[IndexingMap, bool, list[int]] | None] = {}
        self._polished: dict[IndexingMap, IndexingMap] = {}

    def polish(self, m: IndexingMap) -> IndexingMap:
        """:func:`_polish` of ``m``, once per distinct map of the walk (1,203 final maps of a 1 MB
        llama-style entry are 20 distinct ones); the caller proves each final map all the same."""
        if m.num_rt_vars:
            return _polish(m, self.verify)
        if m not in self._polished:
            self._polished[m] = _polish(m, self.verify)
        return self._polished[m]

    def step(self, entry: _Entry, op_map: IndexingMap, approx: tuple[str, ...] = (), to: str = "") -> _Entry | None:
        """``entry`` followed by ``op_map`` (over-approximating for the reasons
        ``approx``), simplified; None when the result is KNOWN EMPTY (the path reads
        nothing). A result larger than :data:`SIZE_LIMIT` (:func:`map_size`) is
        replaced by the map reading every element of ``to`` (the operand reached),
        a marked over-approximation (:func:`_cut`)."""
        new = self._step(entry, op_map)
        if new is not None:
            new.approx = _union(entry.approx, approx)
            if to and new.map.state == "ok" and map_size(new.map) > SIZE_LIMIT:
                why = f"the composed map grew past the size limit ({SIZE_LIMIT})"
                # over the walk's whole source box: the map's own dims were tightened by the (unverified)
                # simplifier, and once cut no proof ties the map to this path's exact relation any more
                source = new.map.replace(dims=self.box) if self.box else new.map
                new = _cut(_Entry(source, None, new.paths, new.merges, new.approx), self.verify, to, why)
        return new

    def _step(self, entry: _Entry, op_map: IndexingMap) -> _Entry | None:
        if entry.map.state == "ok" and _is_box_identity(op_map) and _results_within(entry.map, op_map):
            # An identity on a box that holds every result (elementwise ops, copy, ...):
            # the composition is ``entry.map`` itself. The exact relation is kept as it is:
            # the final proof shows the map equal to it, and then the relation's images
            # lie in the box too, so composing it with the identity would not change it.
            return _Entry(entry.map, entry.rel, entry.paths)
        key = (entry.map, op_map)
        memo = not entry.map.num_rt_vars and not op_map.num_rt_vars
        if memo and key in self._memo:
            outcome = self._memo[key]
        else:
            outcome = self._composed(entry.map, op_map)
            if memo:
                self._memo[key] = outcome
        if outcome is None:  # the composition is KNOWN EMPTY
            return None
        m, said_empty, dropped = outcome
        rel = rel_mod.chain(entry.rel, entry.map.num_dims, op_map) if self.verify else None
        if said_empty and (rel is None or rel.is_empty()):
            return None
        if dropped and rel is not None:
            rel = rel_mod.drop_rt_inputs(rel, m.num_dims, dropped)
        return _Entry(m, rel, entry.paths)

    def _composed(self, first: IndexingMap, op_map: IndexingMap) -> tuple[IndexingMap, bool, list[int]] | None:
        """``first`` then ``op_map``, simplified (unverified: the walk proves its final maps) with the
        variables no longer needed dropped: None when the composition is KNOWN EMPTY, else the map, whether
        the simplifier found it empty (the walk trusts that only when isl agrees on the exact relation; the
        map is then the unsimplified one) and the runtime variables dropped. A function of the two maps
        alone (names included, runtime-variable origins apart)."""
        m = _compose(first, op_map)
        if m.is_known_empty:
            return None
        if m.is_undefined:
            raise UnsupportedError("undefined indexing")
        said_empty = False
        if self.simplify is not None:
            s = _simplify_keeping_vars(self.simplify, m)
            if s is None:  # the (unverified) simplifier says empty: trusted only when isl agrees
                said_empty = True
            else:
                m = s
        m, dropped = _drop_unneeded(m, self.keep_loops)
        return m, said_empty, dropped

    def add(self, entries: list[_Entry], new: _Entry, to: str = "") -> None:
        """Append ``new`` unless an entry is equal to it: then merge the paths. A list
        holding more than :data:`PATHS_LIMIT` distinct maps (of one shape and origins)
        is replaced by one map reading every element of ``to``, a marked
        over-approximation standing for all their paths (:func:`_cut`).

        Verifying, "equal" is decided by isl on the exact relations of the two
        compositions (not on the simplified maps, which are proven equal to
        their relations only at the end); otherwise it is structural equality.
        Runtime-variable origins must match in both cases.
        """
        for e in entries:
            if _shape_of(e.map) != _shape_of(new.map) or _origins(e.map) != _origins(new.map):
                continue
            if not self.verify:
                if e.map == new.map:
                    e.paths += new.paths
                    e.approx = _union(e.approx, new.approx) if e.approx and new.approx else ()
                    return
                continue
            start = time.perf_counter()
            if rel_mod.relations_equal(e.rel, new.rel):
                question = f"{e.map.format(one_line=True)} == {new.map.format(one_line=True)} (exact compositions)"
                verdict = Verdict("proved", "isl", time.perf_counter() - start, question)
                e.merges.append(verdict)
                self.merge_proofs.append(verdict)
                e.paths += new.paths
                # One exact path with this relation makes the merged map exact.
                e.approx = _union(e.approx, new.approx) if e.approx and new.approx else ()
                return
        entries.append(new)
        if to and len(entries) > PATHS_LIMIT and new.map.state == "ok":
            alike = [e for e in entries if _shape_of(e.map) == _shape_of(new.map) and not e.map.num_rt_vars]
            if len(alike) > PATHS_LIMIT:
                why = f"more than {PATHS_LIMIT} distinct composed maps reach it"
                # the domain: the walk's whole source box (a simplified map may have tightened its
                # own dims to where its path reads), else the hull of the entries' bounds
                hull = self.box or [
                    Variable(Interval(min(e.map.dims[i].bounds.lo for e in alike),
                                      max(e.map.dims[i].bounds.hi for e in alike)), alike[0].map.dims[i].name)
                    for i in range(alike[0].map.num_dims)
                ]
                cut = _cut(_Entry(alike[0].map.replace(dims=hull), None, alike[0].paths, [], alike[0].approx),
                           self.verify, to, why)
                cut.paths = sum(e.paths for e in alike)
                cut.approx = _union(cut.approx, tuple(a for e in alike for a in e.approx))
                entries[:] = [e for e in entries if not any(e is a for a in alike)] + [cut]


SIZE_LIMIT = 400
"""A composed map with more than this many parts (:func:`map_size`) is kept as a marked
over-approximation (every element of the instruction reached) instead of growing further."""

PATHS_LIMIT = 32
"""More distinct composed maps than this reaching one instruction are kept as one marked
over-approximation (every element of the instruction)."""


def map_size(m: IndexingMap) -> int:
    """The parts of ``m``: its variables, its constraints and the nodes of its results and
    constraints' expressions."""
    nodes = sum(1 for r in m.results for _ in r.walk()) + sum(1 for e, _ in m.constraints for _ in e.walk())
    return m.num_dims + m.num_range_vars + m.num_rt_vars + len(m.constraints) + nodes


def _cut(entry: _Entry, verify: bool, to: str, why: str) -> _Entry:
    """``entry`` replaced by the map from its dims to every element of ``to``'s shape (one range
    variable per dim, over its whole extent), marked as an over-approximation with ``why``. Its
    exact relation becomes that map's own: the map's proof then holds of the composition in which
    this step reads everything (like the models that over-approximate), and it contains every read
    of the exact composition (which reads elements of ``to`` only)."""
    name, _, dims_text = to.partition("|")
    dims = [int(x) for x in dims_text.split(",") if x]
    m = entry.map
    whole = IndexingMap(
        [Variable(v.bounds, v.name) for v in m.dims],
        [Sym(i) for i in range(len(dims))],
        [Variable(Interval(0, n - 1)) for n in dims],
        [],
        [],
    )
    rel = rel_mod.relation(whole) if verify else None
    reason = f"{name}: {why}: every element of {name} taken as read"
    return _Entry(whole, rel, entry.paths, list(entry.merges), _union(entry.approx, (reason,)))


def _target(comp: Computation, name: str, element: int) -> str:
    """``name|d0,d1,...``: the instruction (element ``element`` of a tuple) and its dims, for :func:`_cut`
    (empty when the shape is a tuple or dynamic: no cut there)."""
    inst = comp.by_name.get(name)
    if inst is None:
        return ""
    shape = inst.shape.tuple_shapes[element] if inst.shape.is_tuple and element < len(inst.shape.tuple_shapes) \
        else inst.shape
    if shape.is_tuple or shape.is_dynamic or 0 in shape.dims:
        return ""
    label = f"{name}[{element}]" if inst.shape.is_tuple else name
    return f"{label}|{','.join(str(n) for n in shape.dims)}"


def _is_box_identity(m: IndexingMap) -> bool:
    """``(d0, ..., dn-1) -> (d0, ..., dn-1)`` on a box: no other variable, no constraint."""
    return (
        m.state == "ok"
        and not m.num_range_vars
        and not m.num_rt_vars
        and not m.constraints
        and list(m.results) == [Dim(i) for i in range(m.num_dims)]
    )


def _results_within(m: IndexingMap, box: IndexingMap) -> bool:
    """Every result of ``m`` stays (by interval bounds) inside the domain box of ``box``."""
    if m.num_results != box.num_dims:
        return False
    return all(v.bounds.contains_interval(m.range_of(r)) for r, v in zip(m.results, box.dims))


def _polish(m: IndexingMap, verify: bool) -> IndexingMap:
    """The final map of a walk, simplified once more without pinning its range
    variables (so that redundant ones can go); only maps without runtime
    variables, whose origins refer to the variables. Verifying, the verified
    simplifier (dropping a range variable needs its isl proof), and the caller
    then proves the result equal to the exact composition too; with proofs off,
    the unverified one. A map found empty is kept as it is."""
    if m.state != "ok" or m.num_rt_vars:
        return m
    from verified_indexing.simplify import simplify

    s = simplify(m, verify=verify)
    if s.state != "ok" or (s.num_dims, s.num_results) != (m.num_dims, m.num_results):
        return m
    return s


def _simplify_keeping_vars(
    simplify: Callable[[IndexingMap], IndexingMap], m: IndexingMap
) -> IndexingMap | None:
    """``m`` simplified with every variable kept in place (the origins refer to
    them): the variables are pinned as extra results while simplifying. None when
    the simplifier finds the domain empty; ``m`` itself when it changes the
    variables' roles."""
    pins = [Sym(i) for i in range(m.num_range_vars)] + [RtSym(k) for k in range(m.num_rt_vars)]
    pinned = m.replace(results=[*m.results, *pins]) if pins else m
    s = simplify(pinned)
    if s.is_known_empty:
        return None
    if s.state != "ok" or (s.num_dims, s.num_range_vars, s.num_rt_vars, s.num_results) != (
        m.num_dims,
        m.num_range_vars,
        m.num_rt_vars,
        pinned.num_results,
    ):
        return m
    rts = [Variable(v.bounds, v.name, old.origin) for v, old in zip(s.rt_vars, m.rt_vars)]
    out = IndexingMap(s.dims, s.results[: m.num_results], s.range_vars, rts, s.constraints)
    return _refresh_origins(out) if out.num_rt_vars else out


def _shape_of(m: IndexingMap) -> tuple[int, int, int]:
    return (m.num_dims, m.num_results, m.num_rt_vars)


def topological_order(comp: Computation, roots: Sequence[Instruction] | None = None) -> list[Instruction]:
    """The instructions reachable from ``roots`` (default: the root), operands
    before users (text order among independent ones)."""
    order: list[Instruction] = []
    state: dict[str, int] = {}
    position = {inst.name: k for k, inst in enumerate(comp.instructions)}
    for start in roots if roots is not None else [comp.root]:
        stack: list[tuple[Instruction, int]] = [(start, 0)]
        while stack:
            inst, k = stack.pop()
            if k == 0:
                if state.get(inst.name) == 2:
                    continue
                state[inst.name] = 1
            ops = sorted(set(inst.operands), key=lambda n: position[n])
            if k < len(ops):
                stack.append((inst, k + 1))
                child = comp.by_name[ops[k]]
                if state.get(child.name) == 1:
                    raise UnsupportedError(f"{comp.name}: cycle through {child.name}")
                if state.get(child.name) is None:
                    stack.append((child, 0))
            else:
                state[inst.name] = 2
                order.append(inst)
    return order


def _output_shape(inst: Instruction, index: int) -> Shape:
    if inst.shape.is_tuple:
        if not 0 <= index < len(inst.shape.tuple_shapes):
            raise UnsupportedError(f"{inst.name} has no output {index}")
        return inst.shape.tuple_shapes[index]
    if index != 0:
        raise UnsupportedError(f"{inst.name} has one output, not output {index}")
    return inst.shape


def _reachable_parameters(comp: Computation, inst: Instruction) -> tuple[str, ...]:
    return tuple(i.name for i in topological_order(comp, [inst]) if i.opcode == "parameter")


def output_to_input_maps(
    comp: Computation,
    *,
    output_index: int = 0,
    verify: bool = True,
    simplify: bool = True,
    op_maps: OpMapsFn | None = None,
    module: Module | None = None,
    keep_loops: bool = False,
) -> ComputationIndexing:
    """The maps from output ``output_index`` of ``comp``'s root to each parameter.

    With ``keep_loops`` every range variable of the composition is kept, used in
    the results or not (XLA keeps them as loop variables; ``audit`` compares
    against them), and the final simplification that may drop them is skipped.

    ``op_maps`` replaces the per-op model (default: ``hlo.ops.output_to_input``).
    With ``verify`` each map is proven equal to the exact composition (isl) and
    maps are merged only when proven equal; without it, only structurally
    equal maps are merged. With ``module``, a ``fusion`` or ``call`` inside
    ``comp`` is analyzed through its called computation (its maps, composed).
    """
    start = time.perf_counter()
    per_op = op_maps or _default_output_to_input
    walker = _Walker(comp, verify, simplify, keep_loops)
    root = comp.root
    order = topological_order(comp)
    maps: dict[tuple[str, int], list[_Entry]] = {}
    root_shape = _output_shape(root, output_index)
    if root_shape.is_dynamic:
        from verified_indexing.hlo.ops import UNSUPPORTED_OPCODES

        also = f"; {root.opcode} is {UNSUPPORTED_OPCODES[root.opcode]}" if root.opcode in UNSUPPORTED_OPCODES else ""
        raise UnsupportedError(f"{root.name}: output of dynamic shape {root_shape}{also}")
    init = IndexingMap.identity(root_shape.dims)
    walker.box = list(init.dims)
    maps[(root.name, output_index)] = [_Entry(init, rel_mod.relation(init) if verify else None)]
    outputs_reached: dict[str, set[int]] = {root.name: {output_index}}  # the keys of maps, by instruction
    unsupported: list[UnsupportedOp] = []
    for inst in _walk_bar(list(reversed(order))):
        if inst.opcode == "parameter":
            continue
        _check_budget()
        keys = [(inst.name, k) for k in sorted(outputs_reached.pop(inst.name, ()))]
        for key in keys:
            entries = maps.pop(key)
            try:
                steps = _operand_steps(inst, comp, key[1], per_op, module, verify, simplify)
            except UnsupportedError as exc:
                unsupported.append(
                    UnsupportedOp(inst.name, inst.opcode, str(exc), _reachable_parameters(comp, inst))
                )
                continue
            for operand_name, operand_output, op_map, why, approx in steps:
                if op_map.is_undefined:
                    hides = _reachable_parameters(comp, comp.by_name[operand_name])
                    reason = why or f"no indexing for operand {operand_name}"
                    unsupported.append(UnsupportedOp(inst.name, inst.opcode, reason, hides))
                    continue
                bucket = maps.setdefault((operand_name, operand_output), [])
                outputs_reached.setdefault(operand_name, set()).add(operand_output)
                to = _target(comp, operand_name, operand_output)
                for entry in entries:
                    new = walker.step(entry, op_map, approx, to)
                    if new is not None:
                        walker.add(bucket, new, to)
    unsupported = _merge_unsupported(unsupported)
    targets = []
    hidden: dict[str, list[str]] = {}
    for u in unsupported:
        for p in u.hides:
            hidden.setdefault(p, []).append(u.instruction)
    for param in comp.parameters():
        # A tuple-shaped parameter has one target per element (reached through get-tuple-element).
        parts: list[tuple[int | None, str, Shape]] = (
            [(k, f"{param.name}[{k}]", shape) for k, shape in enumerate(param.shape.tuple_shapes)]
            if param.shape.is_tuple
            else [(None, param.name, param.shape)]
        )
        for element, label, shape in parts:
            target = TargetIndexing(param.parameter_number or 0, label, shape, element=element)
            for entry in maps.get((param.name, element or 0), []):
                final = walker.polish(entry.map) if simplify and not keep_loops else entry.map
                verdict = None
                if verify:
                    verdict = rel_mod.check_equal(
                        final, entry.rel, f"{comp.name}: composed map to {label} == exact composition"
                    )
                target.maps.append(
                    AccessMap(trace_origins(final, comp), entry.paths, verdict, entry.merges, entry.approx)
                )
            target.maps.sort(key=lambda a: str(a.map))
            target.unsupported = sorted(set(hidden.get(param.name, [])))
            targets.append(target)
    return ComputationIndexing(
        comp.name,
        "output-to-input",
        output_index,
        targets,
        unsupported,
        verify,
        time.perf_counter() - start,
        merge_proofs=walker.merge_proofs,
    )


def _merge_unsupported(items: list[UnsupportedOp]) -> list[UnsupportedOp]:
    """One entry per (instruction, reason), the hidden parameters united."""
    merged: dict[tuple[str, str, str], list[str]] = {}
    for u in items:
        hides = merged.setdefault((u.instruction, u.opcode, u.reason), [])
        hides.extend(h for h in u.hides if h not in hides)
    return [UnsupportedOp(i, o, r, tuple(h)) for (i, o, r), h in merged.items()]


_ACTIVE = threading.local()
"""Per thread: ``names``, the computations being analysed on the current call path (a call back
into one of them is recursion: a guard behind :func:`_refuse_recursion`)."""


def _recursion(called: str, through: str) -> UnsupportedError:
    return UnsupportedError(f"{called} calls itself (recursion through {through})")


def _callees(module: Module, comp: Computation) -> list[str]:
    """The computations the analysis descends into from ``comp``: called by ``call`` and ``fusion``,
    and the branches of ``conditional``."""
    out: list[str] = []
    for inst in comp.instructions:
        if inst.opcode in ("call", "fusion"):
            name = inst.called_computation()
            if name in module.computations:
                out.append(name)
        elif inst.opcode == "conditional":
            try:
                out += [b for b in conditional_branches(inst) if b in module.computations]
            except Exception:  # (a malformed conditional is reported where it is analysed)
                pass
    return out


def _cycles(module: Module) -> dict[str, tuple[str, ...]]:
    """Each computation on a cycle of the module's call graph (:func:`_callees`), with the
    computations of its cycle (its strongly connected component, in order of name): Tarjan's
    algorithm, iterative."""
    graph = {name: _callees(module, comp) for name, comp in module.computations.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: dict[str, tuple[str, ...]] = {}
    counter = 0
    for root in graph:
        if root in index:
            continue
        work: list[tuple[str, int]] = [(root, 0)]
        while work:
            v, k = work.pop()
            if k == 0:
                index[v] = low[v] = counter
                counter += 1
                stack.append(v)
                on_stack.add(v)
            if k < len(graph[v]):
                work.append((v, k + 1))
                w = graph[v][k]
                if w not in index:
                    work.append((w, 0))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            if low[v] == index[v]:
                scc = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    scc.append(w)
                    if w == v:
                        break
                if len(scc) > 1 or v in graph[v]:
                    names = tuple(sorted(scc))
                    for w in scc:
                        out[w] = names
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[v])
    return out


_CYCLES: dict[int, tuple[Module, int, dict[str, tuple[str, ...]]]] = {}
"""``id(module) -> (module, its number of computations, _cycles(module))`` for the last modules."""


def _refuse_recursion(module: Module, called: str, through: str) -> None:
    """Raise :class:`UnsupportedError` when ``called`` is on a cycle of the call graph (the same
    answer from every call path, so analyses can be memoised per computation)."""
    hit = _CYCLES.get(id(module))
    if hit is None or hit[0] is not module or hit[1] != len(module.computations):
        if len(_CYCLES) >= 8:
            _CYCLES.clear()
        hit = _CYCLES[id(module)] = (module, len(module.computations), _cycles(module))
    cycle = hit[2].get(called)
    if cycle is not None:
        raise _recursion(called, f"{', '.join(cycle)}; at {through}")


def _bad(inst: Instruction, message: str) -> ParseError:
    return inst.error(message)


@contextlib.contextmanager
def _entering(inst: Instruction, comp: Computation, called: Computation) -> Iterator[None]:
    """Checks that ``inst`` (a fusion or call) fits ``called`` -- one operand per
    parameter with the parameter's shape, the root's shape as its own -- and that
    ``called`` is not already being analyzed (a recursive call is unsupported)."""
    params = called.parameters()
    if len(params) != len(inst.operands) or [p.parameter_number for p in params] != list(range(len(params))):
        raise _bad(inst, f"{len(inst.operands)} operand(s) for {called.name}, which has {len(params)} parameter(s)")
    for p, name in zip(params, inst.operands):
        shape = comp.by_name[name].shape
        if _strip_layout(shape) != _strip_layout(p.shape):
            raise _bad(inst, f"operand {name} has shape {shape}, parameter {p.name} of {called.name} {p.shape}")
    result = inst.shape
    if inst.opcode in ("async-start", "call-start") and inst.shape.is_tuple and len(inst.shape.tuple_shapes) >= 2:
        result = inst.shape.tuple_shapes[1]  # ((operands), result, context...)
    if _strip_layout(called.root.shape) != _strip_layout(result):
        raise _bad(inst, f"has shape {inst.shape}, the root of {called.name} {called.root.shape}")
    active: set[str] = getattr(_ACTIVE, "names", set())
    if called.name in active:
        raise _recursion(called.name, inst.name)
    _ACTIVE.names = active | {called.name}
    try:
        yield
    finally:
        _ACTIVE.names = active


def _strip_layout(shape: Shape) -> Shape:
    if shape.is_tuple:
        return Shape("tuple", (), None, tuple(_strip_layout(s) for s in shape.tuple_shapes))
    return Shape(shape.element_type, shape.dims, None, (), shape.dynamic)


def _check_tuple(inst: Instruction, comp: Computation) -> None:
    shapes = inst.shape.tuple_shapes if inst.shape.is_tuple else ()
    if len(shapes) != len(inst.operands) or any(
        _strip_layout(comp.by_name[n].shape) != _strip_layout(s) for n, s in zip(inst.operands, shapes)
    ):
        raise _bad(inst, f"shape {inst.shape} is not the tuple of its operands' shapes")


def _check_get_tuple_element(inst: Instruction, comp: Computation) -> None:
    if inst.tuple_index is None or len(inst.operands) != 1:
        raise _bad(inst, "expected one operand and index=N")
    src = comp.by_name[inst.operands[0]].shape
    if not src.is_tuple or not 0 <= inst.tuple_index < len(src.tuple_shapes):
        raise _bad(inst, f"index={inst.tuple_index} does not select an element of {src}")
    if _strip_layout(src.tuple_shapes[inst.tuple_index]) != _strip_layout(inst.shape):
        raise _bad(inst, f"shape {inst.shape} is not element {inst.tuple_index} of {src}")


def _details(sub: ComputationIndexing, target: TargetIndexing) -> str:
    """The reasons of the unsupported ops of ``sub`` that hide ``target``."""
    reasons = list(dict.fromkeys(u.reason for u in sub.unsupported if u.instruction in target.unsupported))
    return f" ({'; '.join(reasons)})" if reasons else ""


_CALLED: contextvars.ContextVar[dict[Hashable, ComputationIndexing] | None] = (
    contextvars.ContextVar("called_computation_maps", default=None)
)
"""Within one :func:`analyze_module`: the maps of each called computation, by
(computation, output, verify, simplify). A computation's maps do not depend on
its caller (runtime-variable origins are lifted into the caller afterwards), so
a computation called from N places, or nested N deep, is analysed once."""


def _memoised(key: Hashable, analyse: Callable[[], ComputationIndexing]) -> ComputationIndexing:
    """``analyse()``, kept under ``key`` for the rest of the :func:`analyze_module` call. An analysis
    of a called computation is the same from every call path: a computation on a cycle of the call
    graph is refused before it is entered (:func:`_refuse_recursion`), so no analysis depends on where
    a cycle was entered."""
    memo = _CALLED.get()
    if memo is not None and key in memo:
        return memo[key]
    sub = analyse()
    if memo is not None:
        memo[key] = sub
    return sub


def _called_maps(module: Module, called: str, output_index: int, verify: bool, simplify: bool) -> ComputationIndexing:
    """The output-to-input maps of computation ``called`` (memoised: :func:`_memoised`)."""
    return _memoised((called, output_index, verify, simplify), lambda: output_to_input_maps(
        module.computations[called], output_index=output_index, verify=verify, simplify=simplify, module=module))


def _called_i2o(module: Module, called: str, parameter: int, verify: bool, simplify: bool) -> ComputationIndexing:
    """The input-to-output maps of computation ``called`` from its parameter ``parameter`` (memoised:
    :func:`_memoised`)."""
    return _memoised(("input-to-output", called, parameter, verify, simplify), lambda: input_to_output_maps(
        module.computations[called], parameter, verify=verify, simplify=simplify, module=module))


def _copy_indexing(r: ComputationIndexing) -> ComputationIndexing:
    """``r`` with fresh lists and records down to each access map (maps and verdicts are immutable
    and shared), so that a caller may edit the copy (``--operand``, physical indices) without
    altering the memoised ``r``."""
    targets = [
        dataclasses.replace(t, maps=[dataclasses.replace(a, merges=list(a.merges)) for a in t.maps],
                            unsupported=list(t.unsupported))
        for t in r.targets
    ]
    return dataclasses.replace(r, targets=targets, unsupported=list(r.unsupported),
                               merge_proofs=list(r.merge_proofs))


def _operand_steps(
    inst: Instruction,
    comp: Computation,
    output_index: int,
    per_op: OpMapsFn,
    module: Module | None = None,
    verify: bool = True,
    simplify: bool = True,
) -> list[tuple[str, int, IndexingMap, str, tuple[str, ...]]]:
    """``(operand name, operand output index, map, reason, over-approximations)``
    for each map by which output ``output_index`` of ``inst`` reads an operand
    (an UNDEFINED map, with the reason, for an operand whose indexing is
    unknown; the over-approximations are empty for an exact map)."""
    if inst.opcode == "tuple":
        _check_tuple(inst, comp)
        operand = inst.operands[output_index]
        shape = _output_shape(inst, output_index)
        if comp.by_name[operand].shape.is_tuple:
            raise UnsupportedError("a tuple of tuples")
        return [(operand, 0, IndexingMap.identity(shape.dims), "", ())]
    if inst.opcode == "get-tuple-element":
        _check_get_tuple_element(inst, comp)
        assert inst.tuple_index is not None
        if inst.shape.is_tuple:  # an element of a tuple of tuples: not one array of the operand's elements
            raise UnsupportedError("a tuple of tuples")
        return [(inst.operands[0], inst.tuple_index, IndexingMap.identity(inst.shape.dims), "", ())]
    if inst.opcode == "opt-barrier" and inst.shape.is_tuple:
        # An optimization barrier passes its tuple operand through unchanged, element by element.
        shape = _output_shape(inst, output_index) if inst.shape.is_tuple else inst.shape
        if len(inst.operands) != 1 or _strip_layout(comp.by_name[inst.operands[0]].shape) != _strip_layout(inst.shape):
            raise _bad(inst, "expected one operand of the barrier's shape")
        return [(inst.operands[0], output_index, IndexingMap.identity(shape.dims), "", ())]
    if inst.opcode == "conditional" and module is not None:
        return _conditional_steps(inst, comp, output_index, module, verify, simplify)
    if inst.opcode == "while" and module is not None:
        return _while_steps(inst, comp, output_index, module)
    if inst.opcode == "call" and module is not None:
        from verified_indexing.hlo.loops import while_of_call

        loop = while_of_call(inst, module)  # a call of a computation that is one while: the while, here
        if loop is not None:
            return _while_steps(loop, comp, output_index, module)
    called = inst.called_computation()
    called_output = output_index
    if inst.opcode in ("async-start", "call-start") and module is not None and called in module.computations:
        # ((operands), the wrapped computation's output, context...): element 1 is the call's result
        if output_index != 1 or _output_shape(inst, 1).is_tuple:
            raise UnsupportedError(f"element {output_index} of async-start {inst.name} (only element 1, the "
                                   "wrapped computation's array result, is modeled)")
        called_output = 0
    if inst.opcode in ("call", "fusion", "async-start", "call-start") and module is not None and \
            called in module.computations:
        _refuse_recursion(module, called, inst.name)
        with _entering(inst, comp, module.computations[called]):
            sub = _called_maps(module, called, called_output, verify, simplify)
        steps: list[tuple[str, int, IndexingMap, str, tuple[str, ...]]] = []
        for target in sub.targets:
            if not 0 <= target.index < len(inst.operands):
                raise UnsupportedError(f"{called} has parameter {target.index}, {inst.name} has no such operand")
            operand = inst.operands[target.index]
            if target.unsupported:
                why = f"unknown indexing through {', '.join(target.unsupported)} in {called}" + _details(sub, target)
                steps.append((operand, target.element or 0, IndexingMap.undefined(), why, ()))
            for access in target.maps:
                if access.verdict is not None and not access.verdict.proved:
                    raise UnsupportedError(f"the maps of {called} are not proven: {access.verdict.reason}")
                lifted = lift_origins(access.map, inst, module.computations[called])
                approx = tuple(f"{called}/{a}" for a in access.over_approximation)
                steps.append((operand, target.element or 0, lifted, "", approx))
        return steps
    if len(inst.operands) == 1 and inst.operands[0] in comp.by_name and comp.by_name[inst.operands[0]].shape.is_tuple:
        from verified_indexing.hlo.ops import ASYNC_DONE_ELEMENT, _done_dims

        if inst.opcode in ASYNC_DONE_ELEMENT:  # the result is an element of the -start's tuple
            dims, element = _done_dims(inst, comp)
            return [(inst.operands[0], element or 0, IndexingMap.identity(dims), "", ())]
        if inst.opcode in ("async-update", "call-update"):  # passes its async-start's tuple through
            shape = _output_shape(inst, output_index)
            if _strip_layout(comp.by_name[inst.operands[0]].shape) != _strip_layout(inst.shape):
                raise _bad(inst, "the output is not its async-start's tuple")
            if shape.is_tuple:
                raise UnsupportedError(f"element {output_index} of async-update {inst.name} is a tuple")
            return [(inst.operands[0], output_index, IndexingMap.identity(shape.dims), "", ())]
        if inst.opcode == "all-reduce-done" and inst.shape.is_tuple:  # a variadic all-reduce, element by element
            shape = _output_shape(inst, output_index)
            start = comp.by_name[inst.operands[0]].shape
            if _strip_layout(start) != _strip_layout(inst.shape):
                raise _bad(inst, f"the output {inst.shape} is not its all-reduce-start's {start}")
            return [(inst.operands[0], output_index, IndexingMap.identity(shape.dims), "", ())]
    op_maps = per_op(inst, comp, output_index)
    if len(op_maps) != len(inst.operands):
        raise UnsupportedError(f"the model gave {len(op_maps)} maps for {len(inst.operands)} operands")
    return [(name, 0, m, "", _approx(inst, comp, k, module)) for k, (name, m) in enumerate(zip(inst.operands, op_maps))]


def conditional_branches(inst: Instruction) -> list[str]:
    """The branch computations of a ``conditional``, in operand order (branch ``k``
    takes operand ``k + 1``): ``branch_computations={...}``, or
    ``true_computation=`` then ``false_computation=``."""
    raw = inst.attributes.get("branch_computations")
    if raw is not None:
        return [b.strip().lstrip("%") for b in raw.strip().strip("{}").split(",") if b.strip()]
    t, f = inst.attributes.get("true_computation"), inst.attributes.get("false_computation")
    if t is None or f is None:
        raise _bad(inst, "expected branch_computations= or true_computation= and false_computation=")
    return [t.strip().lstrip("%"), f.strip().lstrip("%")]


_ONE_BRANCH = "only one branch runs, chosen when the program runs: each branch's reads are taken as reads"


def _conditional_steps(
    inst: Instruction, comp: Computation, output_index: int, module: Module, verify: bool, simplify: bool
) -> list[tuple[str, int, IndexingMap, str, tuple[str, ...]]]:
    """Output ``output_index`` of a conditional reads the selector (every element
    reads it: exact) and, through each branch computation, that branch's operand;
    the union over branches is an over-approximation (marked)."""
    branches = conditional_branches(inst)
    if len(inst.operands) != len(branches) + 1:
        raise _bad(inst, f"{len(inst.operands)} operands for {len(branches)} branches")
    out_shape = _output_shape(inst, output_index)
    selector = comp.by_name[inst.operands[0]].shape
    if selector.is_tuple or selector.rank:
        raise _bad(inst, "the branch selector must be a scalar")
    scalar = IndexingMap(
        [Variable(Interval(0, n - 1)) for n in out_shape.dims], [], [], [], []
    ) if 0 not in out_shape.dims else IndexingMap.known_empty()
    steps: list[tuple[str, int, IndexingMap, str, tuple[str, ...]]] = [(inst.operands[0], 0, scalar, "", ())]
    approx = (f"{inst.name} (conditional): {_ONE_BRANCH}",) if len(branches) > 1 else ()
    for k, name in enumerate(branches):
        if name not in module.computations:
            raise _bad(inst, f"unknown branch computation {name!r}")
        branch = module.computations[name]
        params = branch.parameters()
        if len(params) != 1:
            raise _bad(inst, f"branch {name} has {len(params)} parameters, expected 1")
        if _strip_layout(params[0].shape) != _strip_layout(comp.by_name[inst.operands[k + 1]].shape):
            raise _bad(inst, f"operand {k + 1} does not have the shape of {name}'s parameter")
        _refuse_recursion(module, name, inst.name)
        active: set[str] = getattr(_ACTIVE, "names", set())
        if name in active:
            raise _recursion(name, inst.name)
        _ACTIVE.names = active | {name}
        try:
            sub = _called_maps(module, name, output_index, verify, simplify)
        finally:
            _ACTIVE.names = active
        operand = inst.operands[k + 1]
        for target in sub.targets:
            if target.unsupported:
                why = f"unknown indexing through {', '.join(target.unsupported)} in {name}" + _details(sub, target)
                steps.append((operand, target.element or 0, IndexingMap.undefined(), why, ()))
            for access in target.maps:
                if access.verdict is not None and not access.verdict.proved:
                    raise UnsupportedError(f"the maps of {name} are not proven: {access.verdict.reason}")
                inner = tuple(f"{name}/{a}" for a in access.over_approximation)
                as_call = dataclasses.replace(inst, operands=[operand])  # the branch's parameter 0 is operand k+1
                steps.append((operand, target.element or 0, lift_origins(access.map, as_call, branch), "",
                              approx + inner))
    return steps


def _conditional_user_steps(
    user: Instruction, comp: Computation, operand_index: int, module: Module, verify: bool, simplify: bool
) -> list[tuple[int, IndexingMap, str, tuple[str, ...]]]:
    """Input to output through a conditional: the selector reaches every output
    element (exact); operand ``k + 1`` reaches, through branch ``k``, the output
    elements that branch reads it for (marked: only one branch runs)."""
    branches = conditional_branches(user)
    if len(user.operands) != len(branches) + 1:
        raise _bad(user, f"{len(user.operands)} operands for {len(branches)} branches")
    outputs = list(user.shape.tuple_shapes) if user.shape.is_tuple else [user.shape]
    steps: list[tuple[int, IndexingMap, str, tuple[str, ...]]] = []
    if operand_index == 0:
        for j, shape in enumerate(outputs):
            if shape.is_tuple:
                raise UnsupportedError("a tuple of tuples")
            m = (
                IndexingMap([], [Sym(i) for i in range(shape.rank)], [Variable(Interval(0, n - 1)) for n in shape.dims])
                if 0 not in shape.dims else IndexingMap.known_empty()
            )
            steps.append((j, m, "", ()))
        return steps
    approx = (f"{user.name} (conditional): {_ONE_BRANCH}",) if len(branches) > 1 else ()
    # (An operand feeding several branches is walked once per operand position.)
    for k, name in enumerate(branches):
        if k + 1 != operand_index:
            continue
        if name not in module.computations:
            raise _bad(user, f"unknown branch computation {name!r}")
        branch = module.computations[name]
        _refuse_recursion(module, name, user.name)
        active: set[str] = getattr(_ACTIVE, "names", set())
        if name in active:
            raise _recursion(name, user.name)
        _ACTIVE.names = active | {name}
        try:
            sub = _called_i2o(module, name, 0, verify, simplify)
        finally:
            _ACTIVE.names = active
        as_call = dataclasses.replace(user, operands=[user.operands[k + 1]])
        for target in sub.targets:
            if target.unsupported:
                why = f"unknown indexing through {', '.join(target.unsupported)} in {name}" + _details(sub, target)
                steps.append((target.index, IndexingMap.undefined(), why, ()))
            for access in target.maps:
                if access.verdict is not None and not access.verdict.proved:
                    raise UnsupportedError(f"the maps of {name} are not proven: {access.verdict.reason}")
                inner = tuple(f"{name}/{a}" for a in access.over_approximation)
                steps.append((target.index, lift_origins(access.map, as_call, branch), "", approx + inner))
    return steps


def _while_steps(
    inst: Instruction, comp: Computation, output_index: int, module: Module
) -> list[tuple[str, int, IndexingMap, str, tuple[str, ...]]]:
    """Output element ``output_index`` of a ``while`` is its initial value when the
    body passes that element of its state through unchanged (a loop-invariant
    element: the body's root tuple holds ``get-tuple-element(state), index=k``);
    any other element is the result of a data-dependent number of iterations:
    unsupported, named."""
    body_name = (inst.attributes.get("body") or "").strip().lstrip("%")
    if len(inst.operands) != 1 or body_name not in module.computations:
        raise _bad(inst, "expected one operand and body= naming a computation of the module")
    body = module.computations[body_name]
    params = body.parameters()
    root = body.root
    state = comp.by_name[inst.operands[0]].shape
    if len(params) != 1 or _strip_layout(params[0].shape) != _strip_layout(state):
        raise _bad(inst, f"the body {body_name} does not take the loop state {state}")
    element = root.operands[output_index] if root.opcode == "tuple" and output_index < len(root.operands) else None
    source = body.by_name.get(element) if element is not None else None
    if (
        not inst.shape.is_tuple
        or source is None
        or source.opcode != "get-tuple-element"
        or source.tuple_index != output_index
        or source.operands != [params[0].name]
    ):
        from verified_indexing.hlo.loops import while_induction_steps

        counted = while_induction_steps(inst, comp, output_index, module)  # an affine counter: per iteration
        return counted if counted is not None else _whole_loop(inst, state, output_index, body_name)
    shape = _output_shape(inst, output_index)
    return [(inst.operands[0], output_index, IndexingMap.identity(shape.dims), "", ())]


def _whole_loop(
    inst: Instruction, state: Shape, output_index: int, body_name: str
) -> list[tuple[str, int, IndexingMap, str, tuple[str, ...]]]:
    """A sound whole-loop over-approximation (marked): an element of the state
    the body changes is computed from the initial state only, so each of its
    elements is taken to read every element of every element of the initial
    state. A state holding a nested tuple stays unsupported."""
    from verified_indexing.hlo.ops import _whole

    parts = list(state.tuple_shapes) if state.is_tuple else [state]
    if any(p.is_tuple for p in parts):
        raise UnsupportedError(f"unknown indexing for while ({inst.name}): element {output_index} of the loop state "
                               f"changes in the body {body_name} and the state holds a nested tuple")
    out = _output_shape(inst, output_index)
    why = (f"{inst.name} (while): element {output_index} of the loop state changes in the body {body_name} (a "
           "data-dependent number of iterations): every element of the initial state is taken as read")
    return [(inst.operands[0], j if state.is_tuple else 0, _whole(out.dims, p.dims), "", (why,))
            for j, p in enumerate(parts)]


def _approx(inst: Instruction, comp: Computation, operand_index: int, module: Module | None) -> tuple[str, ...]:
    """``("instruction: reason",)`` when the per-op maps of ``inst`` for operand
    ``operand_index`` over-approximate (empty when exact); the ``to_apply``
    computation, when the module has it, makes sort and scatter maps exact where
    it can."""
    from verified_indexing.hlo.ops import over_approximation

    name = inst.called_computation()
    called = module.computations.get(name) if module is not None and name else None
    reason = over_approximation(inst, comp, operand_index, called)
    return (f"{inst.name} ({inst.opcode}): {reason}",) if reason else ()


def input_to_output_maps(
    comp: Computation,
    parameter: int,
    *,
    verify: bool = True,
    simplify: bool = True,
    op_maps: Callable[[Instruction, Computation, int], list[IndexingMap]] | None = None,
    module: Module | None = None,
) -> ComputationIndexing:
    """The maps from parameter number ``parameter`` of ``comp`` to each output of
    its root (one target per output), composed forward along every path with
    the per-op ``input_to_output`` maps (``op_maps(inst, comp, operand_index)``
    gives one map per output of ``inst``). With ``module``, a ``fusion`` or
    ``call`` inside ``comp`` is followed through its called computation."""
    start = time.perf_counter()
    per_op = op_maps or _default_input_to_output
    walker = _Walker(comp, verify, simplify)
    params = [p for p in comp.parameters() if p.parameter_number == parameter]
    if not params:
        raise VerifiedIndexingError(f"computation {comp.name!r} has no parameter {parameter}")
    param = params[0]
    if param.shape.is_tuple:
        raise UnsupportedError(f"{param.name}: input-to-output from a tuple-shaped parameter")
    if param.shape.is_dynamic:
        raise UnsupportedError(f"{param.name}: input-to-output from a parameter of dynamic shape {param.shape}")
    order = topological_order(comp)
    users: dict[str, list[Instruction]] = {}
    for inst in order:
        for name in dict.fromkeys(inst.operands):
            users.setdefault(name, []).append(inst)
    maps: dict[tuple[str, int], list[_Entry]] = {}
    init = IndexingMap.identity(param.shape.dims)
    walker.box = list(init.dims)
    maps[(param.name, 0)] = [_Entry(init, rel_mod.relation(init) if verify else None)]
    outputs_reached: dict[str, set[int]] = {param.name: {0}}  # the keys of maps, by instruction
    unsupported: list[UnsupportedOp] = []
    root = comp.root
    for inst in _walk_bar(order):
        _check_budget()
        keys = [(inst.name, k) for k in sorted(outputs_reached.get(inst.name, ()))]
        if inst is root:
            break
        for key in keys:
            entries = maps.pop(key)
            for user in users.get(inst.name, []):
                for j, operand in enumerate(user.operands):
                    if operand != inst.name:
                        continue
                    try:
                        steps = _user_steps(user, comp, j, key[1], per_op, module, verify, simplify)
                    except UnsupportedError as exc:
                        unsupported.append(UnsupportedOp(user.name, user.opcode, str(exc), (root.name,)))
                        continue
                    for out_index, op_map, why, approx in steps:
                        if op_map.is_undefined:
                            reason = why or f"no indexing from operand {j}"
                            unsupported.append(UnsupportedOp(user.name, user.opcode, reason, (root.name,)))
                            continue
                        bucket = maps.setdefault((user.name, out_index), [])
                        outputs_reached.setdefault(user.name, set()).add(out_index)
                        to = _target(comp, user.name, out_index)
                        for entry in entries:
                            new = walker.step(entry, op_map, approx, to)
                            if new is not None:
                                walker.add(bucket, new, to)
    unsupported = _merge_unsupported(unsupported)
    outputs = range(len(root.shape.tuple_shapes)) if root.shape.is_tuple else range(1)
    targets = []
    for k in outputs:
        label = f"{root.name}[{k}]" if root.shape.is_tuple else root.name
        target = TargetIndexing(k, label, _output_shape(root, k), element=k if root.shape.is_tuple else None)
        for entry in maps.get((root.name, k), []):
            final = walker.polish(entry.map) if simplify else entry.map
            verdict = None
            if verify:
                verdict = rel_mod.check_equal(
                    final, entry.rel, f"{comp.name}: composed map from {param.name} == exact composition"
                )
            target.maps.append(AccessMap(trace_origins(final, comp), entry.paths, verdict, entry.merges, entry.approx))
        target.maps.sort(key=lambda a: str(a.map))
        target.unsupported = sorted({u.instruction for u in unsupported})
        targets.append(target)
    return ComputationIndexing(
        comp.name,
        "input-to-output",
        parameter,
        targets,
        unsupported,
        verify,
        time.perf_counter() - start,
        merge_proofs=walker.merge_proofs,
    )


def _user_steps(
    user: Instruction,
    comp: Computation,
    operand_index: int,
    operand_output: int,
    per_op: Callable[..., Any],
    module: Module | None = None,
    verify: bool = True,
    simplify: bool = True,
) -> list[tuple[int, IndexingMap, str, tuple[str, ...]]]:
    """``(output index of user, map, reason, over-approximations)`` from output
    ``operand_output`` of operand ``operand_index`` of ``user`` (an UNDEFINED map,
    with the reason, for an output whose indexing is unknown)."""
    operand = comp.by_name[user.operands[operand_index]]
    if user.opcode == "tuple":
        _check_tuple(user, comp)
        if operand.shape.is_tuple:
            raise UnsupportedError("a tuple of tuples")
        return [(operand_index, IndexingMap.identity(operand.shape.dims), "", ())]
    if user.opcode == "get-tuple-element":
        _check_get_tuple_element(user, comp)
        if user.tuple_index != operand_output:
            return []
        return [(0, IndexingMap.identity(user.shape.dims), "", ())]
    if user.opcode == "conditional" and module is not None and not operand.shape.is_tuple:
        return _conditional_user_steps(user, comp, operand_index, module, verify, simplify)
    if operand.shape.is_tuple:
        raise UnsupportedError(f"{user.opcode} of a tuple-shaped operand")
    called = user.called_computation()
    if user.opcode in ("call", "fusion") and module is not None and called in module.computations:
        _refuse_recursion(module, called, user.name)
        with _entering(user, comp, module.computations[called]):
            sub = _called_i2o(module, called, operand_index, verify, simplify)
        steps: list[tuple[int, IndexingMap, str, tuple[str, ...]]] = []
        for target in sub.targets:
            if target.unsupported:
                why = f"unknown indexing through {', '.join(target.unsupported)} in {called}" + _details(sub, target)
                steps.append((target.index, IndexingMap.undefined(), why, ()))
            for access in target.maps:
                if access.verdict is not None and not access.verdict.proved:
                    raise UnsupportedError(f"the maps of {called} are not proven: {access.verdict.reason}")
                approx = tuple(f"{called}/{a}" for a in access.over_approximation)
                steps.append((target.index, lift_origins(access.map, user, module.computations[called]), "", approx))
        return steps
    maps: list[IndexingMap] = per_op(user, comp, operand_index)
    approx = _approx(user, comp, operand_index, module)
    return [(k, m, "", approx) for k, m in enumerate(maps)]


def analyze_module(
    module: Module,
    *,
    computation: str | None = None,
    instruction: str | None = None,
    direction: Direction = "output-to-input",
    operand: int | None = None,
    verify: bool = True,
    simplify: bool = True,
    from_instruction: str | None = None,
    physical: bool = False,
    progress: Callable[[list[tuple[Computation, str | None]]], Iterable[tuple[Computation, str | None]]] | None = None,
    not_reached: list[str] | None = None,
) -> list[ComputationIndexing]:
    """The analyses the ``analyze`` command prints.

    * default: every fusion of the module (its called computation); a module
      without fusions (an unoptimized one): each instruction of the entry
      computation that has operands, alone, with its per-op maps (one op deep:
      :data:`EACH_INSTRUCTION`), in time linear in the module's size;
    * ``computation``: that computation (fused or not), composed from its root
      to every parameter (``"ENTRY"`` names the entry computation unless a
      computation has that name);
    * ``instruction`` (in ``computation``, default the entry): that one
      instruction alone, with its per-op maps.

    ``direction`` and ``operand`` choose output-to-input (every output of the
    root; ``operand`` restricts the parameters shown) or input-to-output (from
    parameter ``operand``, default every parameter). An ``operand`` that no analysed computation has
    raises :class:`VerifiedIndexingError` naming the valid range.

    ``from_instruction``: the maps between that instruction's output (as if it
    were the root) and the parameters of its computation (``computation``, or
    the one computation holding it). ``physical``: every map between physical
    indices (each shape's dimensions in its layout's major-to-minor order; see
    :func:`to_physical`). ``progress``: wraps the list of computations to
    analyze (e.g. a progress bar), yielding them unchanged.

    The command's time budget (:func:`~verified_indexing.engines.deadline.command_budget`)
    is checked between analyses and between the instructions of a walk: when it
    runs out, the analyses finished so far are returned and the name of every
    one not finished (the computation, ``computation/instruction`` for one
    instruction, or the fusion) is appended to ``not_reached`` (required then:
    without it the budget's exception propagates).
    """
    if computation is not None:
        computation = _entry_alias(module, computation)
    jobs: list[tuple[Computation, str | None]] = []
    if from_instruction is not None:
        if instruction is not None:
            raise VerifiedIndexingError("give --from or --instruction, not both")
        if computation is not None:
            holders = [_computation(module, computation)]
        else:
            holders = [c for c in module.computations.values() if from_instruction in c.by_name]
        if not holders or from_instruction not in holders[0].by_name:
            where = f"computation {holders[0].name!r}" if holders else "the module"
            raise VerifiedIndexingError(f"no instruction {from_instruction!r} in {where}")
        if len(holders) > 1:
            raise VerifiedIndexingError(
                f"{from_instruction!r} is in {len(holders)} computations ({', '.join(c.name for c in holders)}): "
                "give --computation"
            )
        comp = holders[0]
        rerooted = [dataclasses.replace(i, is_root=i.name == from_instruction) for i in comp.instructions]
        jobs.append((Computation(comp.name, rerooted, is_entry=comp.is_entry, offset=comp.offset), None))
    elif instruction is not None:
        comp = _computation(module, computation or module.entry_name)
        if instruction not in comp.by_name:
            raise VerifiedIndexingError(f"no instruction {instruction!r} in computation {comp.name!r}")
        jobs.append((_single_instruction(comp, comp.by_name[instruction]), None))
    elif computation is not None:
        jobs.append((_computation(module, computation), None))
    else:
        jobs = [(called, inst.name) for inst, called in module.fusions()]
        if not jobs:  # a module without fusions: each instruction of the entry one op deep
            return _each_instruction(module, direction, operand, verify, simplify, physical, progress, not_reached)
    if operand is not None:
        _check_operand(operand, [comp for comp, _ in jobs])
    results: list[ComputationIndexing] = []
    token = _CALLED.set({})  # nested computations analysed once per call of analyze_module
    # one analysis: the progress bar follows the instructions of its walk (the outermost one)
    bar_token = _BAR.set(progress if progress is not None and len(jobs) == 1 else None)
    done = 0
    seen: dict[Hashable, tuple[Computation, list[ComputationIndexing]]] = {}
    prints: dict[str, Hashable] = {}
    try:
        for comp, fusion_name in jobs if progress is None else progress(jobs):
            try:
                _check_budget()
                # fusions of the same structure (a model's repeated layers) are analysed once (:func:`_as_fusion`)
                key = _fingerprint(module, comp.name, prints) if fusion_name is not None else None
                hit = seen.get(key) if key is not None else None
                if hit is not None:
                    found = [_as_fusion(r, hit[0], comp) for r in hit[1]]
                else:
                    found = _analyze(module, comp, direction, operand, verify, simplify)
                    if key is not None and all(_renamable(r) and not _over(r) for r in found):
                        seen[key] = (comp, [_copy_indexing(r) for r in found])
            except (_OutOfTime, _BudgetExpired) as exc:
                if not_reached is None:
                    if isinstance(exc, _OutOfTime):
                        raise _BudgetExpired("the time budget ran out") from None
                    raise
                not_reached.extend(name or c.name for c, name in jobs[done:])
                break
            for result in found:
                result = dataclasses.replace(result, fusion=fusion_name)  # never alter a memoised result
                results.append(to_physical(result, comp) if physical else result)
            done += 1
    finally:
        _CALLED.reset(token)
        _BAR.reset(bar_token)
    return results


def _each_instruction(
    module: Module,
    direction: Direction,
    operand: int | None,
    verify: bool,
    simplify: bool,
    physical: bool,
    progress: Callable[[list[Any]], Iterable[Any]] | None,
    not_reached: list[str] | None,
) -> list[ComputationIndexing]:
    """:func:`analyze_module`'s default for a module without fusions: each instruction of the entry
    computation that has operands, alone (:func:`_single_instruction`), in text order. An
    instruction whose signature (:func:`_signature`) was analysed already gets that analysis
    renamed (:func:`_renamed`); everything per instruction is done in the loop, under the budget."""
    entry = module.computations[module.entry_name]
    singles = [inst for inst in entry.instructions if inst.operands]
    if operand is not None:
        _check_operand(operand, [_single_instruction(entry, inst) for inst in singles])
    results: list[ComputationIndexing] = []
    token = _CALLED.set({})
    done = 0
    seen: dict[Hashable, tuple[Instruction, list[ComputationIndexing]]] = {}
    prints: dict[str, Hashable] = {}
    try:
        for inst in singles if progress is None else progress(singles):
            name = f"{entry.name}/{inst.name}"
            try:
                _check_budget()
                key = _signature(module, entry, inst, prints)
                hit = seen.get(key)
                comp = _single_instruction(entry, inst) if hit is None or physical else None
                if hit is not None:
                    found = [_renamed(r, hit[0], inst, name) for r in hit[1]]
                else:
                    assert comp is not None
                    found = _analyze(module, comp, direction, operand, verify, simplify)
                    if all(_renamable(r) for r in found):
                        seen[key] = (inst, [_copy_indexing(r) for r in found])
            except (_OutOfTime, _BudgetExpired) as exc:
                if not_reached is None:
                    if isinstance(exc, _OutOfTime):
                        raise _BudgetExpired("the time budget ran out") from None
                    raise
                not_reached.extend(f"{entry.name}/{i.name}" for i in singles[done:])
                break
            for result in found:
                if hit is None:
                    result = dataclasses.replace(result, fusion=None)
                results.append(to_physical(result, comp) if physical and comp is not None else result)
            done += 1
    finally:
        _CALLED.reset(token)
    return results


_BAR: contextvars.ContextVar[Callable[[list[Any]], Iterable[Any]] | None] = contextvars.ContextVar(
    "walk_progress_bar", default=None)
"""Within :func:`analyze_module` of one analysis: the progress bar to follow its walk with (taken by
the outermost walk; nested walks, of called computations, run without one)."""


def _walk_bar(order: list[Instruction]) -> Iterable[Instruction]:
    """``order``, followed by the progress bar of :data:`_BAR` when there is one (then taken: the
    walks nested in this one get none)."""
    bar = _BAR.get()
    if bar is None:
        return order
    _BAR.set(None)
    return bar(order)


_IGNORED_ATTRIBUTES = frozenset({"metadata", "frontend_attributes", "statistics_viz", "origin"})
"""Attributes no per-op model reads (names of the source program, notes for people)."""


def _signature(module: Module, comp: Computation, inst: Instruction, prints: dict[str, Hashable]) -> Hashable:
    """What one instruction's per-op maps depend on, names apart: the opcode, the shapes of the
    instruction and of its operands (layouts included), which operands are the same instruction, the
    attributes a model may read (a called computation by its structure: :func:`_fingerprint`) and
    the typed fields. Two instructions with the same signature have the same per-op maps, up to the
    names of their operands and called computations (reports with runtime variables, whose origins
    name operands, are not shared). ``prints``: the fingerprints computed so far."""
    first = {name: k for k, name in reversed(list(enumerate(inst.operands)))}
    return (
        inst.opcode,
        _shape_text(inst.shape),
        tuple(_shape_text(comp.by_name[name].shape) for name in inst.operands),
        tuple(first[name] for name in inst.operands),
        _attributes(module, inst, prints),
        inst.literal,
        inst.tuple_index,
        inst.iota_dimension,
        inst.parameter_number,
    )


@functools.lru_cache(maxsize=4096)
def _shape_text(shape: Shape) -> str:
    """``str(shape)``, remembered (a model repeats a few shapes tens of thousands of times)."""
    return str(shape)


def _called_names(module: Module, value: str) -> list[str]:
    """The computations of ``module`` an attribute's value names (``name``, ``%name``, ``{a, b}``)."""
    names = [v.strip().lstrip("%") for v in value.strip().strip("{}").split(",")]
    return names if names and all(n in module.computations for n in names) else []


def _attributes(module: Module, inst: Instruction, prints: dict[str, Hashable]) -> Hashable:
    """``inst``'s attributes but those no model reads, each called computation by its fingerprint."""
    out = []
    for k, v in sorted(inst.attributes.items()):
        if k in _IGNORED_ATTRIBUTES:
            continue
        called = _called_names(module, v)
        out.append((k, tuple(_fingerprint(module, n, prints) for n in called) if called else v))
    return tuple(out)


def _fingerprint(module: Module, name: str, prints: dict[str, Hashable]) -> Hashable:
    """Computation ``name`` up to the names of its instructions and of the computations it calls:
    each instruction's opcode, shape, operands by position, attributes (called computations by
    fingerprint) and typed fields. A computation met again while its fingerprint is being made (a
    cycle, refused by the analysis) is known by its name."""
    if name in prints:
        return prints[name]
    prints[name] = ("computation", name)  # (a cycle ends here)
    comp = module.computations[name]
    position = {inst.name: k for k, inst in enumerate(comp.instructions)}
    body = tuple(
        (inst.opcode, str(inst.shape), tuple(position.get(o, o) for o in inst.operands),
         _attributes(module, inst, prints), inst.literal, inst.tuple_index, inst.iota_dimension,
         inst.parameter_number, inst.is_root)
        for inst in comp.instructions
    )
    prints[name] = body
    return body


def _renamable(r: ComputationIndexing) -> bool:
    """``r`` names no operand but in its targets and proofs' questions (no runtime variable, whose
    origin names one; nothing unsupported, whose reasons may)."""
    return not r.unsupported and not any(
        t.unsupported or any(a.map.num_rt_vars for a in t.maps) for t in r.targets
    )


def _over(r: ComputationIndexing) -> bool:
    """Some map of ``r`` over-approximates (its reasons name instructions of the computation)."""
    return any(a.over_approximation for t in r.targets for a in t.maps)


def _as_fusion(r: ComputationIndexing, was: Computation, comp: Computation) -> ComputationIndexing:
    """``r``, the analysis of fused computation ``was``, as that of ``comp``, of the same structure
    (:func:`_fingerprint`): its parameters, root and name renamed (:func:`_renamed`; ``r`` has no
    runtime variable, unsupported op or over-approximation, whose texts name other instructions)."""

    def stand_in(c: Computation) -> Instruction:
        params = sorted(c.parameters(), key=lambda p: p.parameter_number or 0)
        return Instruction(c.root.name, c.root.opcode, c.root.shape, [p.name for p in params])

    return _renamed(r, stand_in(was), stand_in(comp), comp.name)


def _renamed(r: ComputationIndexing, was: Instruction, inst: Instruction, comp_name: str) -> ComputationIndexing:
    """``r``, the one-instruction analysis of ``was``, as that of ``inst`` (the same signature:
    :func:`_signature`): the computation, the targets' names, the proofs' questions and the
    over-approximations' reasons renamed; maps and verdicts otherwise shared."""
    old_params, new_params = list(dict.fromkeys(was.operands)), list(dict.fromkeys(inst.operands))

    def label(name: str) -> str:
        if r.direction == "output-to-input":
            for old, new in zip(old_params, new_params):
                if name == old or name.startswith(old + "["):
                    return new + name[len(old):]
            return name
        return inst.name + name[len(was.name):] if name.startswith(was.name) else name

    def verdict(v: Verdict | None, old_label: str, new_label: str) -> Verdict | None:
        if v is None:
            return None
        q = v.question
        if q.startswith(r.computation + ": "):
            q = comp_name + q[len(r.computation):]
            if r.direction == "output-to-input":
                q = q.replace(f" {old_label} == exact", f" {new_label} == exact", 1)
            elif r.source < len(old_params):
                q = q.replace(f" from {old_params[r.source]} ==", f" from {new_params[r.source]} ==", 1)
        return dataclasses.replace(v, question=q) if q != v.question else v

    def parts(value: str) -> list[str]:
        return value.strip().strip("{}").split(",")

    called = [
        (old, new)
        for key, value in was.attributes.items()
        for old, new in zip(parts(value), parts(inst.attributes.get(key, "")))
        if old.strip() != new.strip()
    ]

    def reason(text: str) -> str:
        text = inst.name + text[len(was.name):] if text.startswith(was.name + " (") else text
        for old, new in called:
            text = text.replace(f"{old.strip().lstrip('%')}/", f"{new.strip().lstrip('%')}/")
        return text

    targets = []
    for t in r.targets:
        new_label = label(t.name)
        maps = [
            _with(a, verdict=verdict(a.verdict, t.name, new_label), merges=list(a.merges),
                  over_approximation=tuple(reason(x) for x in a.over_approximation) if a.over_approximation else ())
            for a in t.maps
        ]
        targets.append(_with(t, name=new_label, maps=maps, unsupported=list(t.unsupported)))
    return _with(r, computation=comp_name, targets=targets, unsupported=[], merge_proofs=list(r.merge_proofs),
                 seconds=0.0)


_T = TypeVar("_T")


def _with(obj: _T, **changes: Any) -> _T:
    """A shallow copy of ``obj``, a plain dataclass of this module (fields in ``__dict__``), with
    ``changes``: ``dataclasses.replace`` without re-running ``__init__``, a few times faster, which
    counts over the tens of thousands of instructions of a model."""
    new = object.__new__(type(obj))
    new.__dict__.update(obj.__dict__)
    new.__dict__.update(changes)
    return new


EACH_INSTRUCTION = "each instruction"
"""What :func:`analyze_module` analyzes by default in a module without fusions: each instruction of
the entry computation alone (its operands as parameters), its per-op maps proven like any map."""


def _entry_alias(module: Module, name: str) -> str:
    """``name``, or the entry computation's name for ``ENTRY`` (when no computation is named so)."""
    if name == "ENTRY" and "ENTRY" not in module.computations:
        return module.entry_name
    return name


class _OutOfTime(_BudgetExpired):
    """The command's time budget ran out between two steps of an analysis (checked, not the alarm); a
    :class:`~verified_indexing.engines.deadline.BudgetExpired`, so that a caller other than
    :func:`analyze_module` (audit, audit-kernels) ends as the alarm does: unknown, exit 2."""


def _check_budget() -> None:
    """Raise :class:`_OutOfTime` when the command's time budget has run out."""
    from verified_indexing.engines.deadline import remaining

    if remaining() <= 0:
        raise _OutOfTime("the time budget ran out")


def _check_operand(operand: int, comps: Sequence[Computation]) -> None:
    """``operand`` must name a parameter of at least one of ``comps``: else bad input with the range
    (an operand that only some fusions have selects those; the others show no map)."""
    counts = sorted({len(c.parameters()) for c in comps})
    if not comps or any(operand < n for n in counts):
        return
    if len(comps) == 1:
        what = f"{comps[0].name!r} has {counts[0]} operand{'s' if counts[0] != 1 else ''}"
    else:
        what = f"the {len(comps)} computations analysed have {counts[0]} to {counts[-1]} operands"
    valid = {0: "none", 1: "0"}.get(counts[-1], f"0 to {counts[-1] - 1}")
    raise VerifiedIndexingError(f"--operand {operand} is out of range (no parameter {operand}): {what} "
                                f"(valid: {valid})")


def _physical_order(shape: Shape, what: str) -> list[int]:
    """The logical dimension at each physical position (major to minor)."""
    if shape.is_tuple:
        raise UnsupportedError(f"{what}: a tuple shape has no physical index space")
    if shape.is_tiled:
        raise UnsupportedError(f"{what}: the tiled layout {shape} stores tiles one after the other (not modeled)")
    return list(reversed(shape.minor_to_major()))


def to_physical(result: ComputationIndexing, comp: Computation) -> ComputationIndexing:
    """``result`` with every map between physical indices: the source's dims and
    the target's results listed in their layouts' major-to-minor order (row-major
    without a layout). A renaming of variables and a permutation of results, so
    each map is exact exactly when the logical one is, and its proof carries over;
    origins are renamed alike. A tiled layout is reported unsupported."""
    root = comp.root
    if result.direction == "output-to-input":
        src_shape = root.shape.tuple_shapes[result.source] if root.shape.is_tuple else root.shape
        src_what = f"output {result.source} of {root.name}"
    else:
        param = next(p for p in comp.parameters() if p.parameter_number == result.source)
        src_shape, src_what = param.shape, f"parameter {param.name}"
    try:
        src_order = _physical_order(src_shape, src_what)
    except UnsupportedError as exc:
        result.unsupported.append(UnsupportedOp(src_what, "layout", str(exc), tuple(t.name for t in result.targets)))
        for t in result.targets:
            t.maps, t.unsupported = [], [*t.unsupported, src_what]
        return result
    pos = [0] * len(src_order)
    for i, d in enumerate(src_order):
        pos[d] = i
    rename = [Dim(pos[j]) for j in range(len(src_order))]
    for t in result.targets:
        try:
            order = _physical_order(t.shape, t.name)
        except UnsupportedError as exc:
            result.unsupported.append(UnsupportedOp(t.name, "layout", str(exc), (t.name,)))
            t.maps, t.unsupported = [], [*t.unsupported, t.name]
            continue
        for a in t.maps:
            m = a.map
            if m.state != "ok":
                continue
            new = IndexingMap(
                [m.dims[d] for d in src_order],
                [m.results[d].substitute(dims=rename) for d in order],
                m.range_vars,
                m.rt_vars,
                [(e.substitute(dims=rename), iv) for e, iv in m.constraints],
            )
            rts = list(new.rt_vars)
            for k, v in enumerate(rts):
                om = _origin_map(v.origin)
                if om is not None:
                    res = [r.substitute(dims=rename) for r in om.results]
                    rts[k] = dataclasses.replace(v, origin=_with_origin_map(v.origin, res, new))
            a.map = new.replace(rt_vars=rts) if rts else new
    return result


def _analyze(
    module: Module, comp: Computation, direction: Direction, operand: int | None, verify: bool, simplify: bool
) -> list[ComputationIndexing]:
    root = comp.root
    if direction == "output-to-input":
        outputs = range(len(root.shape.tuple_shapes)) if root.shape.is_tuple else range(1)
        results = []
        # a computation of the module is analysed once per analyze_module call: the same memo as for a
        # fusion's called computation (a nested fusion's computation is also a job of its own)
        memoised = module.computations.get(comp.name) is comp
        for k in outputs:
            try:
                if memoised:
                    r = _copy_indexing(_called_maps(module, comp.name, k, verify, simplify))
                else:
                    r = output_to_input_maps(comp, output_index=k, verify=verify, simplify=simplify, module=module)
            except UnsupportedError as exc:
                hides = tuple(p.name for p in comp.parameters())
                unsupported = [UnsupportedOp(root.name, root.opcode, str(exc), hides)]
                r = ComputationIndexing(comp.name, "output-to-input", k, [], unsupported, verify)
            if operand is not None:
                r.targets = [t for t in r.targets if t.index == operand]
            results.append(r)
        return results
    numbers = [p.parameter_number or 0 for p in comp.parameters()] if operand is None else [operand]
    results = []
    for n in numbers:
        try:
            results.append(input_to_output_maps(comp, n, verify=verify, simplify=simplify, module=module))
        except UnsupportedError as exc:
            param = next(p for p in comp.parameters() if p.parameter_number == n)
            unsupported = [UnsupportedOp(param.name, param.opcode, str(exc), (comp.root.name,))]
            results.append(ComputationIndexing(comp.name, "input-to-output", n, [], unsupported, verify))
    return results


def _computation(module: Module, name: str) -> Computation:
    key = name.lstrip("%")
    if key not in module.computations:
        raise VerifiedIndexingError(f"no computation {name!r} (the module has: {', '.join(module.computations)})")
    return module.computations[key]


def _single_instruction(comp: Computation, inst: Instruction) -> Computation:
    """A computation holding ``inst`` with its operands turned into parameters
    (so its per-op maps are what the analysis reports)."""
    params = []
    for k, name in enumerate(dict.fromkeys(inst.operands)):
        src = comp.by_name[name]
        params.append(
            Instruction(
                name,
                "parameter",
                src.shape,
                parameter_number=k,
                offset=src.offset,
                source_text=src.source_text,
                source_name=src.source_name,
            )
        )
    copy = dataclasses.replace(inst, is_root=True)
    return Computation(f"{comp.name}/{inst.name}", [*params, copy])
