"""Linalg elementwise fusion of a producer ``linalg.generic`` into a consumer.

:func:`check_fusion` answers two questions for a producer-consumer pair:

* **MLIR's verdict** -- the checks of ``areElementwiseOpsFusable``
  (``ElementwiseOpFusion.cpp``) in MLIR's order, naming the one that rejects,
  and, when MLIR fuses, the producer operands' maps MLIR builds:
  ``argMap ∘ inversePermutation(producerResultMap) ∘ consumerArgMap``.
* **Our verdict**, semantic, with three proof obligations on the static loop
  ranges (read from the operand shapes as MLIR infers them):

  1. the producer's write map is injective on its iteration domain (each
     element of the fused tensor is written by one iteration) -- isl;
  2. every element the consumer reads lies in the producer's written image --
     isl (image inclusion), a counterexample confirmed by z3 or enumeration;
  3. the producer's iterators are parallel, or the fusion is otherwise
     value-preserving: with reduction loops and an injective write map every
     element is computed once from its init value, which the fused op reads.

  When all hold, the producer's write map is inverted
  (:func:`verified_indexing.legality.inverse.inverse`, both identities proven)
  and each fused operand map ``argMap ∘ inverse ∘ consumerArgMap`` is proven
  equal (isl) to the relational composition
  ``consumerArg ; producerResult^-1 ; producerArg``.

Sizes: every ``?`` is a size parameter (:func:`size_model` ties them together),
the leading dims of every map (``engines.sizes``); every obligation holds for
every size, or under a condition on the sizes that is re-proven (``legal when``).

Then the fused op is printed (:func:`build_fused_text`), read back and proven
to compute every value the pair computes (the whole-op proof,
:mod:`verified_indexing.legality.linalg_semantics`). ``legal`` means every
obligation, every map proof and the whole-op proof are ``proved``;
``illegal`` means an obligation is refuted with an evaluator-confirmed
counterexample; anything else is ``unknown`` with a reason. Also modelled:
fusion into the consumer's ``outs``, kept results of multi-result producers,
``linalg.index`` in the producer (``affine.apply`` through the inverse),
non-injective producers whose value does not depend on the writing iteration,
and out-of-bounds accesses of the input (a warning with the sizes; the fusion
is decided only where the pair is defined, :func:`undefined_sizes`). Every
``legal`` fused op is also run by the Linalg interpreter at several sizes
(:func:`verified_indexing.legality.linalg_interpreter.cross_check`; a
disagreement raises). See ``docs/legality.md``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Literal

from verified_indexing.affine_map import AffineMap
from verified_indexing.engines import Verdict, Z3Encoder, prove_relation_equal, prove_subset
from verified_indexing.engines.sizes import (
    SIZE_MAX,
    SizeCondition,
    size_condition,
    violating_sizes_injective,
    violating_sizes_subset,
    with_sizes_in_results,
)
from verified_indexing.errors import MapError, VerifiedIndexingError
from verified_indexing.expr import AffineExpr, Const, Dim, Sym, VarKind
from verified_indexing.indexing_map import IndexingMap, compose
from verified_indexing.interval import Interval
from verified_indexing.legality._mlir_text import parse_type
from verified_indexing.legality._proofs import now as _now
from verified_indexing.legality._proofs import reads_inside as _reads_inside
from verified_indexing.legality.inverse import InverseResult, collision, inverse, is_injective
from verified_indexing.legality.linalg_ir import (
    _BLOCK_RE,
    GenericOp,
    Operand,
    captured_values,
    loop_bounds,
    parse_linalg,
)
from verified_indexing.legality.linalg_semantics import FusionSemantics, prove_fused_equivalent
from verified_indexing.legality.permutation import inverse_permutation, is_permutation
from verified_indexing.syntax import format_affine_map

if TYPE_CHECKING:
    from verified_indexing.legality.linalg_fold import FoldedPayload

__all__ = [
    "MlirCheck",
    "MlirVerdict",
    "Obligation",
    "FusedOperand",
    "FusionReport",
    "mlir_fusable",
    "PassDecision",
    "pass_decision",
    "producer_uses",
    "in_context",
    "unused_results",
    "simulate_fusions",
    "after_earlier_fusions",
    "reshape_candidates",
    "reshape_decision",
    "check_fusion",
    "fusion_pairs",
    "fusion_candidates",
    "fused_generic_text",
    "build_fused_text",
    "size_model",
    "SizeModel",
    "SIZE_MAX",
    "semantics",
    "parse_linalg",
    "pair_type_errors",
    "undefined_sizes",
    "GenericOp",
    "Operand",
    "loop_bounds",
]

FusionStatus = Literal["legal", "illegal", "unknown"]


@dataclass(frozen=True)
class MlirCheck:
    """One check of ``areElementwiseOpsFusable``: its description and outcome."""

    name: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class MlirVerdict:
    """MLIR's answer: the checks run (in order, stopping at the first failure)."""

    fusable: bool
    checks: tuple[MlirCheck, ...]
    fused_producer_maps: tuple[AffineMap, ...] | None = None

    @property
    def rejected_by(self) -> str | None:
        return next((c.name for c in self.checks if not c.ok), None)


PassStep = Literal["canonicalization", "FoldFillWithGenericOp", "areElementwiseOpsFusable", "control function",
                   "reshape propagation", "EraseIdentityLinalgOp", "folding", "RemoveOutsDependency",
                   "trivially dead"]


@dataclass(frozen=True)
class PassDecision:
    """What ``linalg-fuse-elementwise-ops`` does with one consumer operand, in the
    context of the function: whether it rewrites the pair, which part decided
    (``decided_by``: fill folding, ``areElementwiseOpsFusable``, the default control
    function, the generic canonicalization the pass runs, which drops an input
    the payload never reads, ``EraseIdentityLinalgOp``, or ``folding``: not modelled)
    and why; ``uses`` is how many uses the producer has. ``fuses`` is whether the
    consumer no longer reads the producer after the pass (fused, the read dropped,
    the producer an erased identity copy); ``None``: not modelled (unknown)."""

    fuses: bool | None
    decided_by: PassStep
    why: str
    uses: int | None = None

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        return {"fuses": self.fuses, "decided_by": self.decided_by, "why": self.why, "producer_uses": self.uses}


@dataclass(frozen=True)
class Obligation:
    """One proof obligation of our verdict; ``witness`` is a confirmed counterexample."""

    name: str
    verdict: Verdict
    witness: dict[str, Any] | None = None

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "verdict": self.verdict.to_json(), "witness": self.witness}


@dataclass(frozen=True)
class FusedOperand:
    """An operand of the fused op: its value, map and where it comes from; maps
    built through the inverse carry the proof of equality with the relation."""

    value: str
    type: str
    map: AffineMap
    origin: str
    is_input: bool
    proof: Verdict | None = None


@dataclass(frozen=True)
class FusionReport:
    """Both verdicts for one producer-consumer pair (see the module docstring)."""

    producer: GenericOp
    consumer: GenericOp
    operand_index: int
    mlir: MlirVerdict
    status: FusionStatus
    reason: str
    obligations: tuple[Obligation, ...] = ()
    write_inverse: InverseResult | None = None
    fused: tuple[FusedOperand, ...] | None = None
    iterator_types: tuple[str, ...] = field(default=())
    sizes: SizeModel | None = None
    producer_loops: tuple[AffineExpr, ...] | None = None
    whole_op: Obligation | None = None
    warnings: tuple[str, ...] = ()
    first_visit: str | None = None
    kept: tuple[tuple[int, AffineMap], ...] = ()
    write_map: IndexingMap | None = None
    read_map: IndexingMap | None = None
    condition: str | None = None
    otherwise: Obligation | None = None
    condition_constraints: tuple[tuple[AffineExpr, Interval], ...] = ()
    second_check: Obligation | None = None
    pass_decision: PassDecision | None = None
    through_reshape: str | None = None  # "tensor.expand_shape %e": the reshape the consumer reads the producer through

    def holds_at(self, sizes: Sequence[int]) -> bool:
        """Whether concrete sizes (in ``sizes.names`` order) satisfy the condition."""
        return all(e.evaluate(list(sizes)) in iv for e, iv in self.condition_constraints)

    @property
    def exit_code(self) -> int:
        return {"legal": 0, "illegal": 1, "unknown": 2}[self.status]

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        return {
            "producer": self.producer.name,
            "producer_op": self.producer.kind,
            "consumer": self.consumer.name,
            "consumer_op": self.consumer.kind,
            "scope": self.consumer.function or None,
            "through_reshape": self.through_reshape,
            "fused_operand": self.operand_index,
            "mlir": {
                "fusable": self.mlir.fusable,
                "rejected_by": self.mlir.rejected_by,
                "checks": [{"check": c.name, "ok": c.ok, "detail": c.detail} for c in self.mlir.checks],
                "fused_producer_maps": (
                    [str(m) for m in self.mlir.fused_producer_maps] if self.mlir.fused_producer_maps else None
                ),
                "pass": self.pass_decision.to_json() if self.pass_decision is not None else None,
            },
            "status": self.status,
            "reason": self.reason,
            "sizes": list(self.sizes.legend) if self.sizes is not None else [],
            "condition": self.condition,
            "illegal_otherwise": self.otherwise.to_json() if self.otherwise is not None else None,
            "warnings": list(self.warnings),
            "obligations": [o.to_json() for o in self.obligations],
            "whole_op_proof": self.whole_op.to_json() if self.whole_op is not None else None,
            "second_check": self.second_check.to_json() if self.second_check is not None else None,
            "write_map_inverse": self.write_inverse.to_json() if self.write_inverse else None,
            "fused": (
                {
                    "iterator_types": list(self.iterator_types),
                    "operands": [
                        {
                            "value": f.value,
                            "type": f.type,
                            "map": str(f.map),
                            "origin": f.origin,
                            "input": f.is_input,
                            "proof": f.proof.to_json() if f.proof else None,
                        }
                        for f in self.fused
                    ],
                    "mlir": fused_generic_text(self),
                }
                if self.fused is not None
                else None
            ),
        }


# ---------------------------------------------------------------------------
# MLIR's verdict
# ---------------------------------------------------------------------------


def _result_index(producer: GenericOp, value: str) -> int | None:
    return producer.results.index(value) if value in producer.results else None


def _fused_operand(producer: GenericOp, consumer: GenericOp) -> int | None:
    for k, o in enumerate(consumer.operands):
        if _result_index(producer, o.value) is not None:
            return k
    return None


def mlir_fusable(producer: GenericOp, consumer: GenericOp, operand_index: int) -> MlirVerdict:
    """``areElementwiseOpsFusable`` on consumer operand ``operand_index``.

    The checks, in MLIR's order: both ops are ``linalg.generic`` (a named op
    such as ``linalg.transpose`` is not, until generalized); the producer
    has pure tensor semantics and the operand is a ranked tensor; every producer
    loop is parallel; the operand is a consumer input; the consumer's map for
    it has as many results as the producer has loops; the map of the producer
    result the consumer reads (``getIndexingMapMatchingResult``) is a permutation;
    if the consumer has reduction loops, every consumer loop is still given a size
    by some operand after fusion. (Older MLIR checked the first init's map; the
    MLIR of IREE 3.x checks the used result's: a producer whose unused first
    result has a repeated-loop map is fused, observed with ``iree-opt``.)
    """
    operand = consumer.operands[operand_index]
    checks: list[MlirCheck] = []

    def run(name: str, ok: bool, detail: str = "") -> bool:
        checks.append(MlirCheck(name, ok, detail))
        return ok

    used = _result_index(producer, operand.value)
    result_map = producer.outputs[used].map if used is not None and used < len(producer.outputs) else None
    steps = [
        (
            "producer and consumer are linalg.generic ops",
            producer.kind == consumer.kind == "linalg.generic",
            "; ".join(
                f"{op.name} is a {op.kind} (MLIR fuses generics only: generalize named ops first)"
                for op in (producer, consumer)
                if op.kind != "linalg.generic"
            ),
        ),
        (
            "producer has pure tensor semantics and the operand is a ranked tensor",
            producer.has_pure_tensor_semantics and operand.type.kind == "tensor",
            "" if producer.has_pure_tensor_semantics else "the producer has memref operands",
        ),
        (
            "all producer loops are parallel",
            producer.num_parallel_loops == producer.num_loops,
            f"{producer.num_parallel_loops} of {producer.num_loops} loops are parallel "
            f"({', '.join(producer.iterator_types)})",
        ),
        (
            "the fused operand is a consumer input (not an output)",
            operand.is_input,
            "" if operand.is_input else f"{operand.value} is an outs() operand of the consumer",
        ),
        (
            "consumer map of the operand has as many results as producer loops",
            operand.map.num_results == producer.num_loops,
            f"{operand.map}: {operand.map.num_results} result(s), the producer has {producer.num_loops} loop(s)",
        ),
        (
            "producer result map is a permutation",
            result_map is not None and is_permutation(result_map),
            f"{result_map} is {'' if result_map is not None and is_permutation(result_map) else 'not '}a permutation",
        ),
    ]
    for name, ok, detail in steps:
        if not run(name, ok, detail):
            return MlirVerdict(False, tuple(checks))
    # fuseElementwiseOps then inverts the map of the result used (a permutation: always invertible)
    inv = inverse_permutation(result_map) if result_map is not None else None
    if inv is None:
        run("the used result's map is invertible (MLIR asserts otherwise)", False,
            f"{result_map} has no inversePermutation")
        return MlirVerdict(False, tuple(checks))
    producer_maps = tuple(inp.map.compose(inv).compose(operand.map) for inp in producer.inputs)
    if any(t == "reduction" for t in consumer.iterator_types):
        covered = [False] * consumer.num_loops
        for k, o in enumerate(consumer.operands):
            if k != operand_index:
                for r in o.map.results:
                    if isinstance(r, Dim):
                        covered[r.index] = True
        for m in producer_maps:
            for r in m.results:
                if isinstance(r, Dim):
                    covered[r.index] = True
        missing = [f"d{i}" for i, c in enumerate(covered) if not c]
        if not run(
            "every consumer loop keeps an operand giving its size (consumer has reductions)",
            not missing,
            f"loops without a size after fusion: {', '.join(missing)}" if missing else "",
        ):
            return MlirVerdict(False, tuple(checks))
    return MlirVerdict(True, tuple(checks), producer_maps)


def pass_decision(producer: GenericOp, consumer: GenericOp, operand_index: int, uses: int | None,
                  unused_results: Sequence[int] = (), *, upstream: Sequence[GenericOp] = (),
                  text: str | None = None) -> PassDecision:
    """Whether MLIR's ``linalg-fuse-elementwise-ops`` rewrites consumer operand
    ``operand_index`` read from ``producer`` (:func:`_pass_decision_as_written`), with
    what the greedy driver's folds do to the payloads first
    (:mod:`verified_indexing.legality.linalg_fold`):

    * an input the consumer's payload no longer reads once folded is dropped
      (``canonicalization``; the consumer no longer reads the producer);
    * a producer that is an identity copy (``EraseIdentityLinalgOp``: every map the
      same, the payload, folded, yields its inputs) is erased when the pass visits it,
      before its consumers: they read its input (``fuses``: the consumer no longer
      reads it, as after a fusion). When its input is a result of one of the
      ``upstream`` ops (the function's, read from ``text``) that the pass fuses into
      it as written (tried first), it is no identity copy any more and the pair is
      decided as written; without ``text``, ``fuses`` is ``None`` there. The scalar
      constants ``text`` defines are read where payloads use them;
    * a consumer that is an identity copy is erased when the pass does not fuse the
      pair as written (``FuseElementwiseOps`` is tried first): ``fuses`` is ``False``
      and ``decided_by`` ``EraseIdentityLinalgOp`` (its uses read the producer);
    * a consumer nothing uses (but other dead ops) is erased by the greedy driver
      before any pattern sees it (``trivially dead``, ``fuses`` ``False``; needs
      ``text`` and ``upstream``);
    * when the pass would leave the pair as written and a payload has an op whose
      folding is not modelled, the decision is ``None`` (``decided_by``
      ``folding``), never a guess.
    """
    from verified_indexing.legality.linalg_fold import fold_payload, is_identity_copy, scalar_constants

    operand = consumer.operands[operand_index]
    if text is not None and upstream and consumer.name in _dead_in(text, tuple(upstream)):
        return PassDecision(False, "trivially dead",
                            f"nothing uses {consumer.name}'s results (but ops as dead): the pass's greedy driver "
                            "erases it (a trivially dead op) before any pattern sees it", uses)
    if not operand.is_input and _outs_replaced(consumer, operand_index - len(consumer.inputs)):
        return PassDecision(True, "RemoveOutsDependency",
                            f"the consumer's payload does not read its init {operand.value}: the pass's "
                            "RemoveOutsDependency replaces it by a fresh tensor.empty (static shape), so the "
                            "consumer no longer reads the producer", uses)
    consts = scalar_constants(text) if text is not None else None
    fc = fold_payload(consumer, consts) if consumer.kind == "linalg.generic" else None
    fp = fold_payload(producer, consts) if producer.kind == "linalg.generic" else None
    if (not operand.is_input and fc is not None and not fc.uncertain and operand_index < len(consumer.block_args)
            and consumer.block_args[operand_index] not in fc.live and operand.type.kind == "tensor"
            and operand.type.is_static and consumer.kind == "linalg.generic"):
        return PassDecision(True, "RemoveOutsDependency",
                            f"the consumer's payload, folded, does not read its init {operand.value}: the pass's "
                            "RemoveOutsDependency replaces it by a fresh tensor.empty (static shape), so the "
                            "consumer no longer reads the producer", uses)
    p_ident = fp is not None and (is_identity_copy(producer, fp) or _identity_once_unused_dropped(producer, fp,
                                                                                                   unused_results))
    merged = _merged_duplicate_inputs(consumer)
    fcm = fc if merged is consumer else fold_payload(merged, consts)
    ident = fcm is not None and is_identity_copy(consumer, fcm)  # (duplicate inputs merged first: max(%a, %a))
    erased = (f"{consumer.name} is an identity copy once its payload is folded and its unread inputs dropped (every "
              "indexing map the same, its payload yields its input): EraseIdentityLinalgOp erases it")
    if (fc is not None and not fc.uncertain and operand.is_input and operand_index < len(consumer.block_args)
            and consumer.block_args[operand_index] not in fc.live and _droppable(consumer, operand_index)):
        fused_first = None  # another operand reading the producer through which the pass fuses it first
        for j, o in enumerate(consumer.operands):
            if ident and not p_ident and fused_first is None and j != operand_index and o.is_input \
                    and o.value in producer.results:
                dj = _pass_decision_as_written(producer, consumer, j, uses, unused_results)
                fused_first = j if dj.fuses and dj.decided_by != "canonicalization" else None
        if ident and fused_first is None:
            return PassDecision(False, "EraseIdentityLinalgOp", f"the consumer's payload, folded, never reads "
                                f"{operand.value}; {erased}, its uses read the value it yields", uses)
        if ident:  # FuseElementwiseOps is tried first, through the operand that is read
            return PassDecision(True, "control function",
                                f"the consumer's payload, folded, never reads {operand.value}, and the pass fuses "
                                f"{producer.name} through operand {fused_first} first (the consumer, an identity "
                                "copy, is not erased before): the fused op no longer reads the producer", uses)
        return PassDecision(True, "canonicalization",
                            f"the consumer's payload{', folded,' if _payload_reads(consumer, operand_index) else ''} "
                            f"never reads {operand.value}: linalg.generic's canonicalization "
                            "(DeduplicateAndRemoveDeadOperandsAndResults), which the pass runs, drops the input", uses)
    first = ""
    if p_ident:
        fed = [(q, k) for k, i in enumerate(producer.inputs) for q in upstream
               if q is not producer and i.value in q.results and producer.sees(q)]
        for q, k in fed:  # FuseElementwiseOps is tried first when the pass visits the identity copy
            dq = (_pass_decision_as_written(q, producer, k, producer_uses(text, q, upstream), _unused_of(text, q))
                  if text is not None else None)
            if dq is None or dq.decided_by == "canonicalization":
                return PassDecision(None, "EraseIdentityLinalgOp",
                                    f"{producer.name} is an identity copy (EraseIdentityLinalgOp erases it) unless "
                                    f"the pass first fuses {q.name} into it: not modelled", uses)
            if dq.fuses:
                first = f" (the pass first fuses {q.name} into {producer.name}, an identity copy erased otherwise)"
                break
    if p_ident and not first:
        dead = "" if is_identity_copy(producer, fp) else " once the results nothing uses are erased"
        if ident:  # the consumer, reading the producer's input instead, is an identity copy too: erased as well
            return PassDecision(False, "EraseIdentityLinalgOp",
                                f"{producer.name} is an identity copy{dead}, erased when the pass visits it; {erased}, "
                                "its uses read the value it yields", uses)
        return PassDecision(True, "EraseIdentityLinalgOp",
                            f"{producer.name} is an identity copy{dead} (every indexing map the same, its payload "
                            "yields its input): EraseIdentityLinalgOp erases it when the pass visits it, and the "
                            "consumer reads its input instead", uses)
    d = _pass_decision_as_written(producer, consumer, operand_index, uses, unused_results)
    if first:
        d = replace(d, why=d.why + first)
    if d.fuses and d.decided_by != "canonicalization":
        return d  # FuseElementwiseOps (or FoldFillWithGenericOp) fires when the pass first visits the consumer
    if ident:
        return PassDecision(False, "EraseIdentityLinalgOp", f"{d.why}; {erased}, its uses read the value it yields",
                            uses)
    unsure = next((f"{op.name}'s payload: {f.uncertain}" for op, f in ((consumer, fc), (producer, fp))
                   if f is not None and f.uncertain), None)
    if unsure is None and d.decided_by == "control function" and text is not None:
        # the uses the control function counts depend on what the other readers' payloads read once folded
        readers = [q for q in upstream if q is not consumer and q is not producer and q.kind == "linalg.generic"
                   and q.sees(producer) and any(o.value in producer.results for o in q.inputs)]
        unsure = next((f"{q.name}'s payload (a reader of {producer.name}): {f.uncertain}" for q in readers
                       if (f := fold_payload(q, consts)) is not None and f.uncertain), None)
    if unsure is not None:
        return PassDecision(None, "folding",
                            f"{d.why} as written, but the pass folds the payloads first and {unsure}: the folding "
                            "is not modelled (it may drop the read or make an op an identity copy, erased)", uses)
    return d


@functools.lru_cache(maxsize=4)
def _dead_in(text: str, ops: tuple[GenericOp, ...]) -> frozenset[str]:
    """:func:`_dead_generics`, once per module."""
    return frozenset(_dead_generics(text, ops))


def _droppable(op: GenericOp, k: int) -> bool:
    """Whether the canonicalization may drop input ``k``: every loop keeps an operand giving its size
    (``canOpOperandsBeDropped``)."""
    sized = {e.index for j, o in enumerate(op.operands) if j != k for e in o.map.results if isinstance(e, Dim)}
    return len(sized) == op.num_loops


def _pass_decision_as_written(producer: GenericOp, consumer: GenericOp, operand_index: int, uses: int | None,
                              unused_results: Sequence[int] = ()) -> PassDecision:
    """Whether MLIR's ``linalg-fuse-elementwise-ops`` rewrites consumer operand
    ``operand_index`` read from ``producer``, and which part of the pass decides
    (issue 24 item 3; MLIR's ``ElementwiseOpFusion.cpp``):

    * canonicalization: an input of a ``linalg.generic`` its payload never reads is
      dropped (the pair disappears whatever the producer is);
    * ``FoldFillWithGenericOp``: a ``linalg.fill`` read by an input of a
      ``linalg.generic`` with pure tensor semantics whose payload uses it is folded
      (the payload reads the fill's value, converted to the fill's element type);
      this pattern has no control function: a fill with other uses is folded too.
    * ``FuseElementwiseOps``: fuses when ``areElementwiseOpsFusable`` holds
      (:func:`mlir_fusable`) and the pass's default control function accepts:
      ``producer->hasOneUse()``, i.e. ``uses`` (every use of every result of the
      producer, the consumer's included, a second operand of the same consumer
      and returns counted) is exactly 1. ``uses=None`` is a pair out of context:
      the control function is not decided (the pair is assumed to be the only use).
      ``unused_results``: the producer's results nothing uses (:func:`unused_results`),
      which the generic's canonicalization erases before (their init unread, every
      loop still sized): ``areElementwiseOpsFusable`` is then checked without them.

    Not modelled here: reshape propagation (``tensor.expand_shape`` /
    ``collapse_shape``) and what an earlier rewrite changes in the function.
    """
    operand = consumer.operands[operand_index]
    if (consumer.kind == "linalg.generic" and operand.is_input and not _payload_reads(consumer, operand_index)
            and _droppable(consumer, operand_index)):
        return PassDecision(True, "canonicalization",
                            f"the consumer's payload never reads {operand.value}: linalg.generic's canonicalization "
                            "(DeduplicateAndRemoveDeadOperandsAndResults), which the pass runs, drops the input", uses)
    if (producer.kind == "linalg.fill" and consumer.kind == "linalg.generic" and operand.is_input
            and consumer.has_pure_tensor_semantics):
        return PassDecision(True, "FoldFillWithGenericOp",
                            "FoldFillWithGenericOp folds the fill into the consumer (its payload reads the fill's "
                            "value converted to the fill's element type; no control function: other uses of the "
                            "fill do not prevent it)", uses)
    mv = mlir_fusable(producer, consumer, operand_index)
    erased = ""
    if not mv.fusable and unused_results:
        # linalg.generic's canonicalization erases results nothing uses first (their init unread, the other
        # operands still giving every loop a size): areElementwiseOpsFusable then sees the op without them
        trimmed = _without_results(producer, unused_results)
        if trimmed is not None:
            mv2 = mlir_fusable(trimmed, consumer, operand_index)
            if mv2.fusable or mv2.rejected_by != mv.rejected_by:
                mv = mv2
                erased = (f" (after the canonicalization erased the unused result(s) "
                          f"{', '.join(producer.results[i] for i in sorted(unused_results))})")
    if mv.fusable:
        # the canonicalization also drops the producer's inputs its payload never reads (while every loop keeps
        # a size): the consumer-has-reductions check then no longer sees their maps
        dropped = _without_unread_inputs(producer)
        if dropped is not None:
            mv3 = mlir_fusable(dropped[0], consumer, operand_index)
            if not mv3.fusable:
                mv = mv3
                erased = (f" (after the canonicalization dropped the producer's unread input(s) "
                          f"{', '.join(dropped[1])})")
    if not mv.fusable:
        return PassDecision(False, "areElementwiseOpsFusable", f"areElementwiseOpsFusable: {mv.rejected_by}{erased}",
                            uses)
    if uses is not None and uses != 1:
        return PassDecision(False, "control function",
                            f"the pass's default control function fuses a producer with exactly one use "
                            f"(producer->hasOneUse()); {producer.name} has {uses} uses", uses)
    if uses is None:
        return PassDecision(True, "areElementwiseOpsFusable",
                            "areElementwiseOpsFusable holds (the producer's other uses, which the control function "
                            "counts, are not known out of context)", uses)
    return PassDecision(True, "control function", "areElementwiseOpsFusable holds and the producer has one use "
                        f"(the pass's default control function accepts){erased}", uses)


_PAYLOAD_DEF = re.compile(r"^((?:%[\w.$-]+(?::\d+)?\s*,\s*)*%[\w.$-]+(?::\d+)?)\s*=\s*((?:arith|math)\.\S+.*)$")
_SSA = re.compile(r"%[\w.$-]+")


def _payload_reads(op: GenericOp, operand_index: int) -> bool:
    """Whether the payload reads the block argument of that operand once the canonicalization the pass runs
    has erased the payload's dead ``arith``/``math`` ops (trivially dead: nothing live uses their results);
    ``op.payload_uses`` (the argument mentioned anywhere) when the payload is not a plain list of such ops
    ending in ``linalg.yield``."""
    if operand_index >= len(op.block_args):
        return True
    header = _BLOCK_RE.search(op.payload)
    body = op.payload[header.end():] if header is not None else op.payload
    lines = [ln.strip() for ln in body.splitlines() if ln.strip() and ln.strip() != "}"]
    if not lines or not lines[-1].startswith("linalg.yield") or any("{" in ln or "}" in ln for ln in lines):
        return op.payload_uses(operand_index)
    defs: list[tuple[set[str], str]] = []
    for ln in lines[:-1]:
        m = _PAYLOAD_DEF.match(ln)
        if m is None:  # another op (side effects not known): mentions count as reads
            return op.payload_uses(operand_index)
        defs.append(({n.split(":")[0] for n in _SSA.findall(m.group(1))}, m.group(2)))
    live = {n.split("#")[0] for n in _SSA.findall(lines[-1])}
    for names, rest in reversed(defs):
        if names & live:
            live |= {n.split("#")[0] for n in _SSA.findall(rest)}
    return op.block_args[operand_index] in live


def _without_unread_inputs(op: GenericOp) -> tuple[GenericOp, list[str]] | None:
    """``op`` without the inputs its payload never reads, dropped one by one as MLIR's
    canonicalization (``DeduplicateAndRemoveDeadOperandsAndResults``,
    ``canOpOperandsBeDropped``) drops them: only while the remaining operands still give
    every loop a size; ``None`` when none is dropped. Also the dropped values."""
    if op.kind != "linalg.generic":
        return None
    keep = list(range(len(op.inputs)))
    for i in range(len(op.inputs)):
        if _payload_reads(op, i):
            continue
        trial = [k for k in keep if k != i]
        sized = {e.index for o in (*(op.inputs[k] for k in trial), *op.outputs)
                 for e in o.map.results if isinstance(e, Dim)}
        if len(sized) == op.num_loops:
            keep = trial
    if len(keep) == len(op.inputs):
        return None
    dropped = [op.inputs[k].value for k in range(len(op.inputs)) if k not in keep]
    return replace(op, inputs=tuple(op.inputs[k] for k in keep), block_args=(), payload=""), dropped


def _merged_duplicate_inputs(op: GenericOp) -> GenericOp:
    """``op`` with the payload reading, for each input that repeats an earlier one (the same value through the
    same map), the earlier one's block argument: the canonicalization the pass runs
    (``DeduplicateAndRemoveDeadOperandsAndResults``) merges them, and the payload's folds then see one value
    (``max(%a, %b)`` of ``ins(%p, %p)`` is ``%a``). ``op`` itself when nothing repeats."""
    if op.kind != "linalg.generic":
        return op
    first: dict[tuple[str, str], str] = {}
    rename: dict[str, str] = {}
    for k, o in enumerate(op.inputs[: len(op.block_args)]):
        key = (o.value, str(o.map))
        if key in first:
            rename[op.block_args[k]] = first[key]
        else:
            first[key] = op.block_args[k]
    header = _BLOCK_RE.search(op.payload)
    if not rename or header is None:
        return op
    body = re.sub(r"%[\w.$-]+", lambda m: rename.get(m.group(0), m.group(0)), op.payload[header.end():])
    return replace(op, payload=op.payload[: header.end()] + body)


def _identity_once_unused_dropped(op: GenericOp, fp: FoldedPayload, unused: Sequence[int]) -> bool:
    """Whether ``op`` is an identity copy once the canonicalization has erased its results nothing uses (their
    init unread) and then the inputs only those results read (``DeduplicateAndRemoveDeadOperandsAndResults``):
    every kept result yields a block argument of its type, the operands left all have one map that sizes every
    loop. ``EraseIdentityLinalgOp`` then erases it (a producer ``%p:2`` yielding ``(x * x, x)`` whose first
    result nothing uses: its readers read ``x``)."""
    if op.kind != "linalg.generic" or not op.has_pure_tensor_semantics or fp.uncertain:
        return False
    drop = {i for i in unused if i < len(op.outputs) and not _payload_reads(op, len(op.inputs) + i)}
    if not drop or len(drop) >= len(op.outputs) or len(fp.yields) != len(op.results):
        return False
    kept = [i for i in range(len(op.outputs)) if i not in drop]
    ys = [fp.yields[i] for i in kept]
    if any(y is None or y not in op.block_args for y in ys):
        return False
    operands = [o for k, o in enumerate(op.operands)
                if (k < len(op.inputs) and op.block_args[k] in ys) or (k - len(op.inputs)) in kept]
    if len({str(o.map) for o in operands}) != 1:
        return False
    if len({e.index for o in operands for e in o.map.results if isinstance(e, Dim)}) != op.num_loops:
        return False
    return all(str(op.operands[op.block_args.index(y)].type) == str(op.result_types[i])
               for y, i in zip(ys, kept) if y is not None)


def _without_results(op: GenericOp, drop: Sequence[int]) -> GenericOp | None:
    """``op`` without the results ``drop`` (and their inits), as MLIR's canonicalization
    erases unused results whose init the payload does not read; ``None`` when that
    would leave a loop without a size (MLIR keeps such a result)."""
    drop = [i for i in drop if i < len(op.outputs) and not _payload_reads(op, len(op.inputs) + i)]
    if not drop or len(drop) >= len(op.outputs):
        return None
    outs = tuple(o for i, o in enumerate(op.outputs) if i not in drop)
    sized = {e.index for o in (*op.inputs, *outs) for e in o.map.results if isinstance(e, Dim)}
    if len(sized) < op.num_loops:
        return None
    results = tuple(r for i, r in enumerate(op.results) if i not in drop)
    rtypes = tuple(t for i, t in enumerate(op.result_types) if i not in drop)
    return replace(op, outputs=outs, results=results, result_types=rtypes, block_args=(), payload="")


def producer_uses(text: str, producer: GenericOp, ops: Sequence[GenericOp] = ()) -> int:
    """How many uses ``text`` (the module ``producer`` was read from) makes of the
    producer's results when the pass's control function counts them
    (``Operation::hasOneUse``): every operand naming one of its results
    (``tensor.dim``, returns and uses in nested regions count), within the
    producer's region (isolated-from-above regions, with their own names, excluded).

    ``ops`` (the module's linalg ops) applies the canonicalization the pass runs
    with its patterns (``linalg.generic``'s ``DeduplicateAndRemoveDeadOperandsAndResults``):
    a generic's inputs reading one result with the same map are one operand, and
    inputs its payload does not read are dropped; so a consumer reading the
    producer twice with one map is one use, and with two maps two."""
    n = sum(len(_use_offsets(text, producer, res)) for res in producer.results)
    dead = _dead_generics(text, ops)
    for op in ops:
        if op.kind != "linalg.generic" or op is producer:
            continue
        if op.name in dead:  # erased by the pass's greedy driver (trivially dead): its reads are no uses
            n -= sum(1 for o in op.operands if o.value in producer.results and op.sees(producer))
            continue
        groups: dict[tuple[str, str], list[bool]] = {}
        for i, o in enumerate(op.inputs):
            if o.value in producer.results and op.sees(producer):
                groups.setdefault((o.value, str(o.map)), []).append(_reads_folded(op, i, text))
        for used in groups.values():
            n -= len(used) - (1 if any(used) else 0)
        n -= sum(1 for j, o in enumerate(op.outputs)
                 if o.value in producer.results and op.sees(producer)
                 and (_outs_replaced(op, j) or _outs_replaced_folded(op, j, text)))
    return n


def _outs_replaced_folded(op: GenericOp, j: int, text: str) -> bool:
    """:func:`_outs_replaced` once the pass has folded the payload (the scalar constants of ``text`` read): an
    init read only by an op folded away (``%o * 0`` in an integer type) is unread, and replaced."""
    from verified_indexing.legality.linalg_fold import fold_payload, scalar_constants

    o, k = op.outputs[j], len(op.inputs) + j
    if op.kind != "linalg.generic" or o.type.kind != "tensor" or not o.type.is_static or k >= len(op.block_args):
        return False
    fp = fold_payload(op, scalar_constants(text))
    return fp is not None and not fp.uncertain and op.block_args[k] not in fp.live


def _outs_replaced(op: GenericOp, j: int) -> bool:
    """Whether the pass's ``RemoveOutsDependency`` replaces init ``j`` of ``op`` by a fresh
    ``tensor.empty`` (a ``linalg.generic`` whose payload does not read that init, a ranked
    tensor of static shape: with ``?`` sizes the pattern reads them with ``tensor.dim``, uses
    of the old value, and ``False`` is said), so that it is no use of the value it named."""
    o = op.outputs[j]
    return (op.kind == "linalg.generic" and o.type.kind == "tensor" and o.type.is_static
            and not _payload_reads(op, len(op.inputs) + j))


def _reads_folded(op: GenericOp, i: int, text: str) -> bool:
    """Whether input ``i`` of ``op`` stays a use once the pass has folded the payload (the scalar constants of
    ``text`` read) and dropped the unread inputs: ``True`` when it cannot be dropped (the only operand giving
    a loop its size), :func:`_payload_reads` when the folding is not modelled (uncertain)."""
    from verified_indexing.legality.linalg_fold import fold_payload, scalar_constants

    if not _droppable(op, i):  # the input stays (it gives a loop its size): a use, read or not
        return True
    fp = fold_payload(op, scalar_constants(text))
    if fp is None or fp.uncertain or i >= len(op.block_args):
        return _payload_reads(op, i)
    return op.block_args[i] in fp.live


def _dead_generics(text: str, ops: Sequence[GenericOp]) -> set[str]:
    """The ``linalg.generic`` ops of ``ops`` (pure tensor semantics) whose results nothing but such dead ops
    uses: the greedy driver the pass runs erases them (trivially dead), transitively."""
    cands = [op for op in ops if op.kind == "linalg.generic" and op.has_pure_tensor_semantics and op.results]
    uses = {op.name: sum(len(_use_offsets(text, op, r)) for r in op.results) for op in cands}
    dead: set[str] = set()
    changed = True
    while changed:
        changed = False
        for op in cands:
            if op.name in dead:
                continue
            by_dead = sum(1 for d in ops if d.name in dead and d.sees(op) for o in d.operands if o.value in op.results)
            if uses[op.name] - by_dead <= 0:
                dead.add(op.name)
                changed = True
    return dead


def unused_results(text: str, producer: GenericOp) -> tuple[int, ...]:
    """The indices of the producer's results ``text`` never uses (in its region)."""
    return tuple(i for i, r in enumerate(producer.results) if not _use_offsets(text, producer, r))


_unused_of = unused_results  # for pass_decision, whose parameter has that name


def _linalg_uses(p: GenericOp, ops: Sequence[GenericOp]) -> int:
    """How many operands of ``ops`` read a result of ``p`` (a generic's inputs reading
    one result with one map counted once: the canonicalization merges them)."""
    n = 0
    for op in ops:
        if op is p:
            continue
        seen: set[tuple[str, str]] = set()
        for k, o in enumerate(op.operands):
            if o.value not in p.results or (k >= len(op.inputs) and _outs_replaced(op, k - len(op.inputs))):
                continue
            if o.is_input and op.kind == "linalg.generic":
                if (o.value, str(o.map)) in seen:
                    continue
                seen.add((o.value, str(o.map)))
            n += 1
    return n


def simulate_fusions(text: str, ops: Sequence[GenericOp], limit: int = 200) -> list[tuple[str, str]]:
    """The fusions ``FuseElementwiseOps`` performs in the function, in order
    (producer, consumer names), simulated: each fused consumer reads the
    producer's inputs through MLIR's fused maps, duplicate inputs (one value, one
    map) merged as the canonicalization does, a producer left without uses
    erased; the control function counts the uses *then* (a producer read by two
    consumers may get one use when one of them is fused into the other). An
    approximation of the greedy driver: operands in order, first consumer first."""
    dead = _dead_generics(text, ops)
    cur = [op for op in ops if op.kind == "linalg.generic" and op.name not in dead]
    live = [op for op in ops if op.name not in dead]
    other = {p.name: producer_uses(text, p, ops) - _linalg_uses(p, live) for p in cur}
    unused = {p.name: unused_results(text, p) for p in cur}
    events: list[tuple[str, str]] = []
    for _ in range(limit):
        step = None
        for c in cur:
            for k, o in enumerate(c.inputs):
                p = next((q for q in cur if o.value in q.results and q is not c and c.sees(q)), None)
                if p is None:
                    continue
                uses = other.get(p.name, 0) + _linalg_uses(p, cur)
                d = pass_decision(p, c, k, uses, unused.get(p.name, ()), upstream=cur, text=text)
                if d.fuses and d.decided_by == "control function":
                    step = (p, c, k)
                    break
            if step is not None:
                break
        if step is None:
            break
        p, c, k = step
        mv = mlir_fusable(p, c, k)
        if mv.fused_producer_maps is None:
            break
        inputs = [*c.inputs[:k], *(replace(i, map=m) for i, m in zip(p.inputs, mv.fused_producer_maps)),
                  *c.inputs[k + 1:]]
        merged: list[Operand] = []
        for i in inputs:
            if all((i.value, str(i.map)) != (j.value, str(j.map)) for j in merged):
                merged.append(i)
        fused = replace(c, inputs=tuple(merged), block_args=(), payload="")
        cur = [fused if q is c else q for q in cur if q is not p]
        events.append((p.name, c.name))
    return events


@functools.lru_cache(maxsize=4)
def _simulated(text: str, ops: tuple[GenericOp, ...]) -> tuple[tuple[str, str], ...]:
    """:func:`simulate_fusions`, once per module (``fuse`` asks for each refused pair)."""
    return tuple(simulate_fusions(text, ops))


def in_context(rep: FusionReport, text: str, ops: Sequence[GenericOp] = ()) -> FusionReport:
    """``rep`` with the pass's whole decision (:func:`pass_decision`) in the context
    of ``text``, the module its ops (``ops``, see :func:`producer_uses`) were read
    from; a pair the control function refuses as written whose producer the pass
    fuses after an earlier fusion (:func:`simulate_fusions`) says so."""
    d = pass_decision(rep.producer, rep.consumer, rep.operand_index, producer_uses(text, rep.producer, ops),
                      unused_results(text, rep.producer), upstream=ops, text=text)
    if not d.fuses and d.decided_by == "control function" and ops:
        d = after_earlier_fusions(d, rep.producer, _simulated(text, tuple(ops)))
    return replace(rep, pass_decision=d)


def after_earlier_fusions(d: PassDecision, producer: GenericOp, events: Sequence[tuple[str, str]]) -> PassDecision:
    """``d`` (refused by the control function) when the simulated pass fuses the
    producer after earlier fusions left it one use."""
    at = next((i for i, (p, _) in enumerate(events) if p == producer.name), None)
    if at is None:
        return d
    before = ", ".join(f"{p} into {c}" for p, c in events[:at]) or "nothing"
    return PassDecision(True, "control function",
                        f"{d.why} as written; after the pass fused {before}, its reads merged, it has one use and "
                        f"is fused into {events[at][1]}", d.uses)


def reshape_candidates(text: str, ops: Sequence[GenericOp]) -> list[tuple[GenericOp, GenericOp, int, str]]:
    """The pairs through a static ``tensor.expand_shape`` or ``collapse_shape``
    (issue 24 item 2): a consumer operand reading ``%e = tensor.expand_shape %r``
    of a producer result ``%r``. Each is ``(producer, consumer', k, "tensor.expand_shape
    %e")`` where ``consumer'`` is the consumer reading ``%r`` itself through the
    collapsed map (``%e[y]`` is ``%r[lin(y)]``, ``lin`` the row-major linearization
    of each reassociation group; for a ``collapse_shape``, ``%r[delin(y)]`` with
    ``floordiv``/``mod``): an exact rewrite, so the pair is decided as any other."""
    from verified_indexing.legality._scanner import mask_mlir_noise
    from verified_indexing.legality.linalg_ir import regions, scope_of
    from verified_indexing.legality.linalg_reshape import (
        Collapse,
        Expansion,
        collapse_shapes,
        expand_shapes,
        read_through,
    )

    masked = mask_mlir_noise(text)
    facts: list[Expansion | Collapse] = sorted([*expand_shapes(masked), *collapse_shapes(masked)],
                                               key=lambda f: f.offset)
    if not facts:
        return []
    regs = regions(masked)
    scopes = [scope_of(regs, f.offset)[0] for f in facts]
    out = []
    for c in ops:
        for k, o in enumerate(c.operands):
            # the expand_shape c sees under that name: the last one before c in a region enclosing c
            seen = [f for f, sc in zip(facts, scopes) if f.value == o.value and f.offset < c.offset
                    and (sc[0] in c.scope if sc and c.scope else not c.scope)]
            f = seen[-1] if seen else None
            p = next((q for q in reversed(ops) if f is not None and f.source in q.results and q.offset < f.offset
                      and c.sees(q)), None)
            if f is None or p is None or p is c:
                continue
            ri = p.results.index(f.source)
            if ri >= len(p.result_types) or tuple(p.result_types[ri].shape) != f.source_shape:
                continue
            cp = read_through(c, k, f, p.result_types[ri])
            kind = "collapse_shape" if isinstance(f, Collapse) else "expand_shape"
            out.append((p, cp, k, f"tensor.{kind} {o.value}"))
    return out


def reshape_decision(producer: GenericOp, consumer: GenericOp, operand_index: int, uses: int | None,
                     via: str = "tensor.expand_shape", original: GenericOp | None = None,
                     text: str | None = None) -> PassDecision:
    """MLIR's decision on a pair through a ``tensor.expand_shape``
    (:func:`reshape_candidates`; ``consumer`` reads the producer's result through
    the collapsed map): ``FoldReshapeWithGenericOpByExpansion`` moves the reshape
    above the producer when the producer is a ``linalg.generic`` on tensors whose
    maps are all projected permutations, the reshaped result's map has results,
    all of them parallel loops, and the control function accepts (the producer
    has one use: the reshape); the expanded producer then fuses into the consumer
    when ``areElementwiseOpsFusable`` holds (checked here on the collapsed form,
    an approximation: the expanded op's maps are not built). Through a
    ``collapse_shape`` (``via``), ``FoldWithProducerReshapeOpByExpansion`` expands the
    consumer (``original``, as written) when its maps are projected permutations and
    the operand's loops parallel, then the producer fuses."""
    operand = consumer.operands[operand_index]
    r = producer.results.index(operand.value)
    rmap = producer.outputs[r].map if r < len(producer.outputs) else None
    if via.startswith("tensor.collapse_shape"):
        # FoldWithProducerReshapeOpByExpansion: the consumer is expanded to read the collapse's source (its
        # maps projected permutations, the operand's loops parallel; control function: the reshape's one use)
        ok_c = (original is not None and original.kind == "linalg.generic" and original.has_pure_tensor_semantics
                and all(_is_projected_permutation(o.map) for o in original.operands)
                and all(isinstance(e, Dim) and original.iterator_types[e.index] == "parallel"
                        for e in original.operands[operand_index].map.results))
        if not ok_c:
            return PassDecision(False, "reshape propagation",
                                "FoldWithProducerReshapeOpByExpansion does not apply (the consumer is not a generic on "
                                "tensors with projected-permutation maps reading the reshape by parallel loops)", uses)
        if uses is not None and uses != 1:
            return PassDecision(False, "control function", f"{producer.name} has {uses} uses", uses)
        d = pass_decision(producer, consumer, operand_index, 1, text=text)
        if not d.fuses:
            return replace(d, why=f"the consumer is expanded, then {d.why}", uses=uses)
        return PassDecision(True, "reshape propagation",
                            "FoldWithProducerReshapeOpByExpansion expands the consumer to read the collapse_shape's "
                            "source, and the producer then fuses into it", uses)
    ok = (producer.kind == "linalg.generic" and producer.has_pure_tensor_semantics and rmap is not None
          and rmap.num_results > 0
          and all(_is_projected_permutation(o.map) for o in producer.operands)
          and all(isinstance(e, Dim) and producer.iterator_types[e.index] == "parallel" for e in rmap.results))
    if not ok:
        return PassDecision(False, "reshape propagation",
                            "FoldReshapeWithGenericOpByExpansion does not apply (the producer is not a generic on "
                            "tensors with projected-permutation maps whose reshaped result is indexed by parallel "
                            "loops)", uses)
    if uses is not None and uses != 1:
        return PassDecision(False, "control function",
                            f"the pass's control function moves a reshape above a producer with one use; "
                            f"{producer.name} has {uses}", uses)
    d = pass_decision(producer, consumer, operand_index, 1, text=text)
    if not d.fuses:
        return replace(d, why=f"the reshape is propagated, then {d.why}", uses=uses)
    return PassDecision(True, "reshape propagation",
                        "FoldReshapeWithGenericOpByExpansion moves the tensor.expand_shape above the producer "
                        "(expanded iteration space), which then fuses into the consumer", uses)


def _is_projected_permutation(m: AffineMap) -> bool:
    """MLIR's ``AffineMap::isProjectedPermutation()`` (no zero results allowed): distinct dims only."""
    dims = [e.index for e in m.results if isinstance(e, Dim)]
    return len(dims) == len(m.results) and len(set(dims)) == len(dims)


# ---------------------------------------------------------------------------
# Our verdict
# ---------------------------------------------------------------------------


def _as_indexing_map(bounds: list[Interval], m: AffineMap) -> IndexingMap:
    return IndexingMap(bounds, m.results)


def _relation_proof(
    consumer_read: IndexingMap, producer_write: IndexingMap, producer_arg: IndexingMap, fused: IndexingMap
) -> Verdict:
    """The fused map against the relational composition, built without the
    inverse: consumer iteration ``c`` relates to ``producerArg(p)`` for every
    producer iteration ``p`` (a range variable) with ``write(p) = read(c)``.
    Proven by :func:`verified_indexing.engines.prove_relation_equal`."""
    question = "fused map equals consumerArg ; producerResult^-1 ; producerArg"
    t0 = _now()
    n = producer_write.num_dims
    as_syms = [Sym(i) for i in range(n)]
    constraints = [
        (w.substitute(dims=as_syms) - r, Interval(0, 0))
        for w, r in zip(producer_write.results, consumer_read.results)
    ]
    constraints += [(e.substitute(dims=as_syms), iv) for e, iv in producer_write.constraints]
    constraints += list(consumer_read.constraints)
    relation = IndexingMap(
        [v.bounds for v in consumer_read.dims],
        [a.substitute(dims=as_syms) for a in producer_arg.results],
        range_vars=[v.bounds for v in producer_write.dims],
        constraints=constraints,
    )
    v = prove_relation_equal(relation, fused)
    if v.proved:
        return Verdict("proved", v.engine, _now() - t0, question)
    if v.refuted:
        why = "the fused map differs from the relational composition"
        return Verdict("error", v.engine, _now() - t0, question, why)
    return Verdict(v.status, v.engine, _now() - t0, question, v.reason)


def _unknown(
    p: GenericOp, c: GenericOp, k: int, mv: MlirVerdict, reason: str, obligations: tuple[Obligation, ...] = ()
) -> FusionReport:
    return FusionReport(p, c, k, mv, "unknown", reason, obligations)


# -- sizes ---------------------------------------------------------------------



@dataclass(frozen=True)
class SizeModel:
    """The loop sizes of a producer-consumer pair: static, or named size parameters.

    ``names[i]`` is the parameter ``Ni`` (the i-th leading dim of every map of the
    pair's questions); ``legend[i]`` says which operand dims it is
    (``N0 = %arg0 dim 0 = %init dim 0``); ``producer_domain``/``consumer_domain``
    are the iteration domains over (sizes, loops) with no results."""

    names: tuple[str, ...]
    legend: tuple[str, ...]
    producer_domain: IndexingMap
    consumer_domain: IndexingMap
    extents: tuple[tuple[tuple[str, int], int | str], ...] = ()

    def extent(self, value: str, dim: int) -> int | str | None:
        """Dim ``dim`` of ``value``: a static size, a size parameter's name, or
        ``None`` (not tied to any loop of the pair and not static)."""
        return dict(self.extents).get((value, dim))

    @property
    def k(self) -> int:
        return len(self.names)


def size_model(producer: GenericOp, consumer: GenericOp) -> SizeModel:
    """Tie the sizes of the pair together (union-find over (value, dim) and loops):
    within an op, an operand dim whose map result is exactly ``d_k`` has loop ``k``'s
    size; a result has its init's shape (and its declared type's); the same SSA
    value has the same sizes. Static sizes stay concrete; every other class is a
    size parameter. Raises :class:`MapError` when a loop has no size from any
    operand or two static sizes of one class disagree."""
    parent: dict[tuple[Any, ...], tuple[Any, ...]] = {}
    static: dict[tuple[Any, ...], int] = {}
    order: list[tuple[Any, ...]] = []

    def find(x: tuple[Any, ...]) -> tuple[Any, ...]:
        if x not in parent:
            parent[x] = x
            order.append(x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    def union(a: tuple[Any, ...], b: tuple[Any, ...]) -> None:
        ra, rb = find(a), find(b)
        if ra != rb:
            parent[rb] = ra

    for tag, op in (("p", producer), ("c", consumer)):
        for k in range(op.num_loops):
            find((tag, k))
        for o in op.operands:
            for i, (r, s) in enumerate(zip(o.map.results, o.type.shape)):
                node = ("v", o.value, i)
                find(node)
                if s is not None:
                    static.setdefault(node, s)
                if isinstance(r, Dim):
                    union((tag, r.index), node)
        for ri, res in enumerate(op.results):
            if ri < len(op.outputs):
                for i in range(op.outputs[ri].type.rank):
                    union(("v", op.outputs[ri].value, i), ("v", res, i))
            if ri < len(op.result_types):
                for i, s in enumerate(op.result_types[ri].shape):
                    find(("v", res, i))
                    if s is not None:
                        static.setdefault(("v", res, i), s)
    classes: dict[tuple[Any, ...], list[tuple[Any, ...]]] = {}
    for x in order:
        classes.setdefault(find(x), []).append(x)
    value_of: dict[tuple[Any, ...], int | None] = {}
    for root, members in classes.items():
        vals = {static[m] for m in members if m in static}
        if len(vals) > 1:
            where = ", ".join(f"{m[1]} dim {m[2]} = {static[m]}" for m in members if m in static)
            raise MapError(f"the sizes of one dimension disagree: {where}")
        value_of[root] = vals.pop() if vals else None
    names: list[str] = []
    legend: list[str] = []
    index_of: dict[tuple[Any, ...], int] = {}
    bounds: dict[tuple[str, int], int | tuple[int]] = {}
    for tag, op in (("p", producer), ("c", consumer)):
        for k in range(op.num_loops):
            root = find((tag, k))
            members = [m for m in classes[root] if m[0] == "v"]
            if not members:
                raise MapError(f"{op.name}: the size of loop d{k} is not given by any operand (no operand dim is "
                               f"exactly d{k})")
            v = value_of[root]
            if v is not None:
                bounds[(tag, k)] = v
                continue
            if root not in index_of:
                index_of[root] = len(names)
                names.append(f"N{len(names)}")
                legend.append(f"N{index_of[root]} = " + " = ".join(f"{m[1]} dim {m[2]}" for m in members))
            bounds[(tag, k)] = (index_of[root],)
    nk = len(names)
    extents: list[tuple[tuple[str, int], int | str]] = []
    for root, members in classes.items():
        ext: int | str | None = value_of[root]
        if ext is None and root in index_of:
            ext = names[index_of[root]]
        if ext is not None:
            extents += [((m[1], m[2]), ext) for m in members if m[0] == "v"]

    def domain(tag: str, op: GenericOp) -> IndexingMap:
        dims = [Interval(0, SIZE_MAX)] * nk
        cons: list[tuple[AffineExpr, Interval]] = []
        for k in range(op.num_loops):
            b = bounds[(tag, k)]
            if isinstance(b, int):
                dims.append(Interval(0, b - 1))
            else:
                dims.append(Interval(0, SIZE_MAX - 1))
                cons.append((Dim(b[0]) - 1 - Dim(nk + k), Interval(0, SIZE_MAX)))
        return IndexingMap(dims, [], constraints=cons)

    return SizeModel(tuple(names), tuple(legend), domain("p", producer), domain("c", consumer), tuple(extents))


def _on(dom: IndexingMap, m: AffineMap, k: int) -> IndexingMap:
    """``m`` (over an op's loops) as a map over (sizes, loops) on ``dom``."""
    return dom.replace(results=[r.substitute(dims=[Dim(k + i) for i in range(m.num_dims)]) for r in m.results])


def _sizes_first(m: IndexingMap, k: int) -> IndexingMap:
    """The size dims in front of the results: injectivity and image questions then
    keep the sizes fixed on both sides (:func:`engines.sizes.with_sizes_in_results`)."""
    return with_sizes_in_results(m, k)


def _split_sizes(names: Sequence[str], values: Sequence[int]) -> tuple[str, tuple[int, ...]]:
    k = len(names)
    txt = ", ".join(f"{n} = {v}" for n, v in zip(names, values[:k]))
    return (f"at {txt}: " if txt else ""), tuple(values[k:])


def _independence(
    producer: GenericOp, r: int, sm: SizeModel, write: IndexingMap, timeout: float
) -> tuple[Verdict, dict[str, Any] | None]:
    """Every two producer iterations writing one element compute the same value
    for result ``r`` (the payload's terms, z3 over uninterpreted functions)."""
    from verified_indexing.legality.linalg_semantics import (
        PayloadModel,
        evaluate_payload,
        parse_payload,
        separating_inputs,
    )

    question = "every producer iteration writing an element computes the same value"
    t0 = _now()
    try:
        payload = parse_payload(producer)
    except VerifiedIndexingError as exc:
        return Verdict("unknown", "syntax", _now() - t0, question, str(exc)), None
    enc = Z3Encoder()
    model = PayloadModel(enc)
    z3 = enc.z3
    k = sm.k
    sizes = [enc.int_var(n) for n in sm.names]
    envs: list[dict[tuple[VarKind, int], Any]] = []
    for tag in ("p", "q"):
        env: dict[tuple[VarKind, int], Any] = {("d", i): sizes[i] for i in range(k)}
        env.update({("d", k + i): enc.int_var(f"{tag}{i}") for i in range(producer.num_loops)})
        envs.append(env)
    try:
        facts = enc.domain(sm.producer_domain, envs[0]) + enc.domain(sm.producer_domain, envs[1])
        ws = [[enc.expr(e, env) for e in write.results] for env in envs]
        facts += [a == b for a, b in zip(*ws)]
        vals = []
        for env in envs:
            args = [model.read(o.value, [enc.expr(e, env) for e in _on(sm.producer_domain, o.map, k).results])
                    for o in producer.operands]
            loops = [env[("d", k + i)] for i in range(producer.num_loops)]
            vals.append(model.run(payload, args, loops, producer.name)[r])
    except VerifiedIndexingError as exc:
        return Verdict("unknown", "z3", _now() - t0, question, str(exc)), None
    s = enc.solver(timeout=timeout)
    s.add(*facts, *enc.side_conditions, vals[0] != vals[1])
    res = s.check()
    if res == z3.unsat:
        return Verdict("proved", "z3", _now() - t0, question,
                       "the value written does not depend on which iteration writes it"), None
    if res != z3.sat:
        return Verdict("unknown", "z3", _now() - t0, question, f"z3: {s.reason_unknown()}"), None
    mdl = s.model()
    pts = [[int(mdl.eval(envs[j][("d", i)], model_completion=True).as_long())
            for i in range(k + producer.num_loops)] for j in range(2)]
    if not all(write.contains(pt) for pt in pts) or write.evaluate(pts[0]) != write.evaluate(pts[1]):
        return Verdict("error", "z3", _now() - t0, question, "encoding disagrees with evaluator"), None
    subst = [(envs[j][("d", i)], enc.int_val(pts[j][i])) for j in range(2) for i in range(k + producer.num_loops)]
    terms = [str(z3.simplify(z3.substitute(v, *subst))) for v in vals]
    at, p0 = _split_sizes(sm.names, pts[0])
    _, q0 = _split_sizes(sm.names, pts[1])
    element = write.evaluate(pts[0])
    # The terms differ for some interpretation of the operations; a refutation
    # needs concrete operand values for which the payload really computes two
    # values (IEEE arithmetic), found and evaluated without z3.
    reads = [[(o.value, _on(sm.producer_domain, o.map, k).evaluate(pt)) for o in producer.operands] for pt in pts]
    opaque = evaluate_payload(payload, [1.0] * len(producer.operands), p0) is None
    sep = None if opaque else separating_inputs(payload, reads, [p0, q0], r)
    if opaque:
        # An operation we do not evaluate: it stands for an arbitrary function, and
        # the two iterations pass it different operand elements.
        note = (f"{at}producer iterations {p0} and {q0} both write element {element}, with values {terms[0]} and "
                f"{terms[1]} (different operand elements through operations not evaluated here)")
        witness = {"sizes": dict(zip(sm.names, pts[0][:k])), "producer_iterations": [list(p0), list(q0)],
                   "element": list(element), "values": terms, "note": note}
        return Verdict("refuted", "z3", _now() - t0, question, note), witness
    if sep is None:
        return Verdict("unknown", "z3", _now() - t0, question,
                       f"{at}producer iterations {p0} and {q0} both write element {element}; their values "
                       f"{terms[0]} and {terms[1]} differ as terms, but no concrete operand values tried make them "
                       "differ (the payload may compute the same value)"), None
    inputs, concrete = sep
    note = (f"{at}producer iterations {p0} and {q0} both write element {element}, with values {terms[0]} and "
            f"{terms[1]} ({concrete[0]} and {concrete[1]} when {', '.join(f'{kk} = {v}' for kk, v in inputs.items())})")
    witness = {"sizes": dict(zip(sm.names, pts[0][:k])), "producer_iterations": [list(p0), list(q0)],
               "element": list(element), "values": terms, "inputs": inputs, "concrete_values": concrete,
               "note": note}
    return Verdict("refuted", "z3", _now() - t0, question, note), witness


def _in_bounds(read: IndexingMap, value: str, sm: SizeModel, timeout: float) -> tuple[IndexingMap, tuple[str, ...]]:
    """The consumer's read restricted to the iterations that read inside the
    tensor's bounds, and a warning when some iteration reads outside them.

    Such a read is undefined behaviour of the original program: the fusion is
    decided on the iterations where the program is defined (any behaviour of the
    fused op refines undefined behaviour), and the pre-existing read is reported,
    with an iteration doing it, instead of being blamed on the fusion."""
    cons: list[tuple[AffineExpr, Interval]] = []
    for i, e in enumerate(read.results):
        ext = sm.extent(value, i)
        if isinstance(ext, int):
            cons.append((e, Interval(0, ext - 1)))
        elif isinstance(ext, str):
            cons += [(e, Interval(0, SIZE_MAX)), (Dim(sm.names.index(ext)) - 1 - e, Interval(0, SIZE_MAX))]
    if not cons:
        return read, ()
    inside = read.replace(constraints=[*read.constraints, *cons])
    v = prove_subset(read, inside, of="domain", timeout=timeout)
    if v.proved:
        return read, ()
    if v.refuted and v.counterexample is not None:
        pt = [val for _, val in v.counterexample.values[: read.num_dims]]
        if read.contains(pt) and not inside.contains(pt):
            at, c = _split_sizes(sm.names, pt)
            el = read.evaluate(pt)
            return inside, (f"{at}consumer iteration {c} reads {value}{list(el)}, outside the tensor: the original "
                            "program reads out of bounds there (not caused by the fusion, which is decided on the "
                            "iterations that read inside)",)
    return inside, (f"whether every consumer iteration reads {value} inside its bounds is {v.status} "
                    f"({v.reason}); the fusion is decided on the iterations that do",)


def check_fusion(
    producer: GenericOp, consumer: GenericOp, *, operand_index: int | None = None, timeout: float = 10.0,
    keep: Sequence[str] = (),
) -> FusionReport:
    """Both verdicts for fusing ``producer`` into ``consumer`` (module docstring),
    through consumer operand ``operand_index`` (see :func:`_check_fusion`).
    ``keep``: producer results still used elsewhere, which the fused op returns too
    (:func:`results_used_elsewhere` finds them in a module's text)."""
    try:
        sm0: SizeModel | None = size_model(producer, consumer)
    except MapError:
        sm0 = None  # _check_fusion reports it
    undefined: Any = None
    defined: tuple[tuple[AffineExpr, Interval], ...] = ()
    defined_text = ""
    ub_warnings: tuple[str, ...] = ()
    if sm0 is not None:
        try:
            ub = undefined_sizes(producer, consumer, sm0)
        except Exception as exc:  # isl limits: nothing is decided on sizes that may be undefined
            return _unknown(producer, consumer, _operand_or_first(producer, consumer, operand_index),
                            mlir_fusable(producer, consumer, _operand_or_first(producer, consumer, operand_index)),
                            f"whether the input program stays inside its tensors was not decided: {exc}")
        if ub is not None:
            undefined, note = ub
            ub_warnings = (note,)
            k0 = _operand_or_first(producer, consumer, operand_index)
            mv0 = mlir_fusable(producer, consumer, k0)
            cond0 = _conjunctive_condition([undefined], sm0.k, sm0.names) if sm0.k else None
            if cond0 is None or cond0.status == "never":
                where = "at every size where no tensor is empty" if sm0.k else "at its static sizes"
                return replace(_unknown(producer, consumer, k0, mv0,
                                        f"the input program accesses a tensor out of bounds {where} (undefined "
                                        "behaviour): no size is left to decide the fusion on"),
                               sizes=sm0, warnings=ub_warnings)
            if cond0.constraints is None:
                return replace(_unknown(producer, consumer, k0, mv0,
                                        f"the input program is defined only when {cond0.text}, which is not one "
                                        "conjunction of affine constraints: the fusion is not decided"),
                               sizes=sm0, warnings=ub_warnings)
            defined, defined_text = tuple(cond0.constraints), cond0.text
    rep = _check_fusion(producer, consumer, operand_index=operand_index, timeout=timeout, keep=keep,
                        condition=defined)
    if ub_warnings:
        rep = replace(rep, warnings=(*ub_warnings, *rep.warnings))
    if rep.sizes is None or not rep.sizes.k:
        return rep
    if rep.status == "legal":
        if defined:
            return replace(rep, condition=defined_text, condition_constraints=defined)
        return replace(rep, condition="every size")
    if rep.status != "illegal" or rep.write_map is None or rep.read_map is None:
        return rep
    # Illegal for some sizes: where exactly (isl), and is it legal for the others?
    k, names = rep.sizes.k, rep.sizes.names
    violations = []
    for o in rep.obligations:
        if not o.verdict.refuted:
            continue
        if o.name.startswith("producer write map is injective") or o.name.startswith("producer iterators are"):
            violations.append(violating_sizes_injective(rep.write_map, k))
        elif o.name.startswith("every element the consumer reads"):
            violations.append(violating_sizes_subset(rep.read_map, rep.write_map, k))
        elif o.name.startswith("the consumer writes every element"):
            violations.append(violating_sizes_subset(rep.write_map, rep.read_map, k))
        else:
            return rep
    if undefined is not None:
        violations.append(undefined)  # the condition never rests on sizes where the program is undefined
    try:
        cond = _conjunctive_condition(violations, k, names)
    except Exception as exc:  # isl limits: keep the refutation, which stands on its own
        return replace(rep, warnings=(*rep.warnings, f"the sizes where the fusion is legal were not computed: {exc}"))
    if cond.status != "when" or cond.constraints is None:
        if cond.status == "when":
            return replace(rep, reason=f"{rep.reason} (legal at most when {cond.text}: not re-proven, the condition "
                           "is not one conjunction of affine constraints)")
        return rep
    again = _check_fusion(producer, consumer, operand_index=operand_index, timeout=timeout, keep=keep,
                          condition=cond.constraints)
    if again.status != "legal":
        return rep
    refuted = next(o for o in rep.obligations if o.verdict.refuted)
    return replace(again, condition=cond.text, otherwise=refuted, condition_constraints=tuple(cond.constraints),
                   warnings=(*ub_warnings, *again.warnings))


def _conjunctive_condition(violations: Sequence[Any], k: int, names: Sequence[str]) -> SizeCondition:
    """:func:`size_condition` of ``violations``; when that is a union (typically:
    "or some tensor is empty"), a single conjunction that suffices by also
    excluding empty sizes, one size at a time, then cumulatively, if one exists
    (sufficient: a caller re-proves under it)."""
    cond = size_condition(violations, k, names)
    if cond.status == "when" and cond.constraints is None:
        import islpy as isl

        from verified_indexing.engines.isl import engine_context

        vars_ = ", ".join(f"n{i}" for i in range(k))
        empties = [isl.Set(f"{{ [{vars_}] : n{i} = 0 }}", context=engine_context()) for i in range(k)]
        tries = [[e] for e in empties] + [empties[: i + 1] for i in range(1, k)]
        found = []
        for extra in tries:
            c2 = size_condition([*violations, *extra], k, names)
            if c2.status == "when" and c2.constraints is not None:
                found.append(c2)
        if found:  # the fewest constraints: the weakest of the candidates, usually
            cond = min(found, key=lambda c: len(c.constraints or ()))
    return cond


def _operand_or_first(producer: GenericOp, consumer: GenericOp, operand_index: int | None) -> int:
    k = _fused_operand(producer, consumer) if operand_index is None else operand_index
    if k is None:
        raise VerifiedIndexingError(f"{consumer.name} does not use a result of {producer.name}: nothing to fuse")
    return k


_OUT_OF_BOUNDS_MAX = 2**80


def undefined_sizes(producer: GenericOp, consumer: GenericOp, sm: SizeModel) -> tuple[Any, str] | None:
    """Where the pair itself is undefined: the exact set (an ``isl.Set`` over the
    ``sm.k`` sizes) of sizes at which some iteration of the producer or the
    consumer reads or writes one of its operands outside the tensor's bounds
    (every operand, inputs and inits, the fused one included; a dynamic dim tied to
    no loop is a free size, left only by a negative index), and a warning naming
    the smallest such sizes with the op, iteration and element; ``None`` when
    every access of the pair stays inside at every size.

    Any behaviour of a fused op refines undefined behaviour, so no verdict may rest
    on those sizes: :func:`check_fusion` decides the fusion on the others.
    """
    import islpy as isl

    from verified_indexing.engines.isl import engine_context, point_values, to_isl_map

    ctx = engine_context()
    nk = sm.k
    found: Any = None
    first: tuple[tuple[int, ...], str] | None = None
    for tag, op, dom in (("producer", producer, sm.producer_domain), ("consumer", consumer, sm.consumer_domain)):
        for o in op.operands:
            acc = _on(dom, o.map, nk)
            for i, e in enumerate(acc.results):
                ext = sm.extent(o.value, i)
                cons = [(Const(-1) - e, Interval(0, _OUT_OF_BOUNDS_MAX))]
                if ext is not None:  # a dim tied to no loop and not static: only a negative index leaves it
                    hi: AffineExpr = Const(ext) if isinstance(ext, int) else Dim(sm.names.index(ext))
                    cons.append((e - hi, Interval(0, _OUT_OF_BOUNDS_MAX)))
                for c in cons:
                    bad = dom.replace(results=[], constraints=[*dom.constraints, c])
                    pts = to_isl_map(bad, ctx=ctx).domain()
                    if pts.is_empty():
                        continue
                    n = pts.dim(isl.dim_type.set)
                    pt = point_values(pts.lexmin().sample_point(), n)  # sizes first: the smallest sizes
                    at, it = _split_sizes(sm.names, pt)
                    el = acc.evaluate(list(pt))
                    verb = "reads" if o.is_input else "writes"
                    what = (f"{at}{tag} {op.name} iteration {it} {verb} {o.value}{list(el)}, outside the tensor "
                            f"({o.type})")
                    sizes_only = pts.project_out(isl.dim_type.set, nk, n - nk)
                    found = sizes_only if found is None else found.union(sizes_only)
                    if first is None or pt[:nk] < first[0]:
                        first = (tuple(pt[:nk]), what)
    if found is None or first is None:
        return None
    note = (f"the input program accesses out of bounds ({first[1]}): undefined behaviour, not caused by the "
            "fusion; nothing is decided at such sizes")
    return found.coalesce(), note


@functools.lru_cache(maxsize=4)
def _masked_regions(text: str) -> tuple[str, list[Any], list[int]]:
    """``text`` with comments masked, its regions and their starts (once per text)."""
    from verified_indexing.legality._scanner import mask_mlir_noise
    from verified_indexing.legality.linalg_ir import regions

    masked = mask_mlir_noise(text)
    regs = regions(masked)
    return masked, regs, [r.start for r in regs]


def results_used_elsewhere(text: str, producer: GenericOp, consumer: GenericOp, operand_index: int) -> tuple[str, ...]:
    """The producer's results that ``text`` (the module the ops were read from)
    uses after the producer anywhere but in the consumer's operand
    ``operand_index``: another op's operand, a ``return``... (a textual scan of
    SSA names, so a use in a nested region counts too: conservative)."""
    out = []
    fused_value = consumer.operands[operand_index].value
    for res in producer.results:
        count = len(_use_offsets(text, producer, res)) - (1 if res == fused_value else 0)
        if count > 0:
            out.append(res)
    return tuple(out)


def _use_offsets(text: str, producer: GenericOp, res: str) -> list[int]:
    """Where ``text`` names the producer's result ``res`` after the producer."""
    import bisect

    # SSA names are scoped by regions: scan the producer's region (nested regions
    # included, isolated-from-above ones excluded: they have their own names).
    masked, regs, starts = _masked_regions(text)
    end = len(text)
    hidden: list[tuple[int, int]] = []
    if producer.scope:
        at = bisect.bisect_left(starts, producer.scope[0])
        if at < len(regs) and regs[at].start == producer.scope[0]:
            mine = regs[at]
            end = mine.stop
            for r in regs[at + 1 : bisect.bisect_left(starts, mine.stop)]:
                if r.isolated and (not hidden or r.start > hidden[-1][1]):
                    hidden.append((r.start, r.stop))
    pattern = re.compile(re.escape(res) + r"(?![\w.$#-])")
    return [m.start() for m in pattern.finditer(masked, producer.offset + 1, end)
            if not any(a < m.start() < b for a, b in hidden)]


def _check_fusion(
    producer: GenericOp, consumer: GenericOp, *, operand_index: int | None = None, timeout: float = 10.0,
    keep: Sequence[str] = (), condition: Sequence[tuple[AffineExpr, Interval]] = (),
) -> FusionReport:
    """Both verdicts for fusing ``producer`` into ``consumer`` (module docstring),
    through consumer operand ``operand_index`` (default: the first operand that is
    a result of the producer; MLIR fuses one operand at a time, the others keep
    reading the producer's result).

    Raises :class:`VerifiedIndexingError` when no operand of the consumer (or
    operand ``operand_index``) is a result of the producer.
    """
    k = _fused_operand(producer, consumer) if operand_index is None else operand_index
    if k is None:
        raise VerifiedIndexingError(f"{consumer.name} does not use a result of {producer.name}: nothing to fuse")
    if not 0 <= k < len(consumer.operands) or _result_index(producer, consumer.operands[k].value) is None:
        raise VerifiedIndexingError(f"operand #{k} of {consumer.name} is not a result of {producer.name}")
    operand = consumer.operands[k]
    mv = mlir_fusable(producer, consumer, k)
    into_outs = not operand.is_input
    r = _result_index(producer, operand.value)
    assert r is not None
    if r >= len(producer.outputs):
        raise VerifiedIndexingError(f"{producer.name} has no output operand for result {operand.value}")
    ill = pair_type_errors(producer, consumer, k)
    if ill:
        return _unknown(producer, consumer, k, mv, f"the pair is ill-typed: {ill[0]}")
    try:
        sm = size_model(producer, consumer)
    except MapError as exc:
        return _unknown(producer, consumer, k, mv, str(exc))
    if condition:
        sm = replace(sm, producer_domain=sm.producer_domain.replace(
            constraints=[*sm.producer_domain.constraints, *condition]),
            consumer_domain=sm.consumer_domain.replace(constraints=[*sm.consumer_domain.constraints, *condition]))
    nk = sm.k
    write = _on(sm.producer_domain, producer.outputs[r].map, nk)
    read = _on(sm.consumer_domain, operand.map, nk)
    if read.num_results != write.num_results:
        raise VerifiedIndexingError(
            f"{consumer.name} reads {operand.value} with {read.num_results} indices, {producer.name} writes it with "
            f"{write.num_results}"
        )
    read, warnings = _in_bounds(read, operand.value, sm, timeout)

    def done(rep: FusionReport) -> FusionReport:
        return replace(rep, sizes=sm, warnings=warnings, write_map=write, read_map=read)

    write_s, read_s = _sizes_first(write, nk), _sizes_first(read, nk)
    inj = is_injective(write_s, timeout=timeout)
    inj_w = None
    if inj.refuted:
        pair = collision(write_s, inj)
        assert pair is not None
        at, p0 = _split_sizes(sm.names, pair[0])
        _, q0 = _split_sizes(sm.names, pair[1])
        el = pair[2][nk:]
        inj_w = {
            "sizes": dict(zip(sm.names, pair[0][:nk])),
            "producer_iterations": [list(p0), list(q0)],
            "element": list(el),
            "note": f"{at}producer iterations {p0} and {q0} both write element {el}",
        }
    reads_out = producer.payload_uses(len(producer.inputs) + r)
    # The model reads every output block argument as the output's init. That holds
    # for an output whose write map is injective (each element written once); an
    # output written several times whose block argument the payload reads sees the
    # value another iteration wrote (any result may depend on it): not modelled.
    for j, out in enumerate(producer.outputs):
        if j == r or not producer.payload_uses(len(producer.inputs) + j):
            continue
        inj_j = is_injective(_sizes_first(_on(sm.producer_domain, out.map, nk), nk), timeout=timeout)
        if not inj_j.proved:
            return done(_unknown(
                producer, consumer, k, mv,
                f"the producer's payload reads the block argument of output #{j} ({out.value}), whose write map is "
                f"{'not injective' if inj_j.refuted else 'not proven injective'}: an iteration may read a value "
                "another iteration wrote there, which the fused op cannot see (not modelled)"))
    representative: IndexingMap | None = None
    o1 = Obligation("producer write map is injective on its iteration domain", inj, inj_w)
    if inj.refuted and not reads_out:
        # Several iterations write one element: legal when they all write the same value.
        vi, wi = _independence(producer, r, sm, write, timeout)
        if vi.proved:
            projected = [i for i in range(producer.num_loops)
                         if not any(e.uses("d", nk + i) for e in write.results)]
            representative = write.replace(constraints=[*write.constraints,
                                                        *((Dim(nk + i), Interval(0, 0)) for i in projected)])
            note = (f"the write map is not injective ({inj_w['note'] if inj_w else ''}), but the value does not "
                    f"depend on the writing iteration; the fused op uses the representative "
                    f"{', '.join(f'd{i} = 0' for i in projected) or '(none)'}")
            o1 = Obligation("each element the producer writes has one value (injective, or the same value from every "
                            "writing iteration)", replace(vi, reason=note))
        elif vi.refuted and wi is not None:
            o1 = Obligation("producer write map is injective on its iteration domain", inj, wi)
        else:  # not injective, but the values may be equal: never a counterexample
            o1 = Obligation("producer write map is injective on its iteration domain",
                            replace(inj, status="unknown", reason=f"not injective, and {vi.reason}"))
    v2, w2 = _reads_inside(read_s, write_s, timeout)
    if w2 is not None and nk:
        at, c0 = _split_sizes(sm.names, w2["consumer_iteration"])
        el = tuple(w2["element"][nk:])
        w2 = {"sizes": dict(zip(sm.names, w2["consumer_iteration"][:nk])), "consumer_iteration": list(c0),
              "element": list(el), "note": f"{at}consumer iteration {c0} reads element {el}, which no producer "
              "iteration writes"}
        v2 = replace(v2, reason=str(w2["note"]))
    o2 = Obligation("every element the consumer reads lies in the producer's written image", v2, w2)
    reductions = [f"d{i} ({t})" for i, t in enumerate(producer.iterator_types) if t != "parallel"]
    q3 = "producer iterators are parallel (or the fusion is otherwise value-preserving)"
    if not reductions:
        v3 = Verdict("proved", "syntax", 0.0, q3, "all producer iterators are parallel")
        w3 = None
    elif inj.proved:
        v3 = Verdict("proved", "isl", inj.seconds, q3,
                     f"non-parallel loops {', '.join(reductions)}, but the write map is injective: each element is "
                     "computed once from its init value, which the fused op reads")
        w3 = None
    elif inj.refuted and not reads_out and representative is not None:
        v3 = Verdict("proved", "z3", inj.seconds, q3,
                     f"non-parallel loops {', '.join(reductions)}, but the payload does not read its init and every "
                     "iteration writing an element writes the same value")
        w3 = None
    elif inj.refuted and not reads_out:  # decided by obligation 1 (the values written)
        v3 = replace(o1.verdict, question=q3)
        w3 = o1.witness
    elif inj.refuted:
        v3 = Verdict("refuted", "isl", inj.seconds, q3,
                     f"non-parallel loops {', '.join(reductions)} accumulate into one element over several iterations")
        w3 = inj_w
    else:
        v3 = Verdict("unknown", inj.engine, inj.seconds, q3, "injectivity of the write map is not decided")
        w3 = None
    o3 = Obligation(q3, v3, w3)
    obligations: tuple[Obligation, ...] = (o1, o2, o3)
    first_visit: str | None = None
    if into_outs:
        o4, o5, first_visit = _outs_obligations(consumer, k, write_s, read_s, nk, timeout)
        obligations += (o4, o5)
    refuted = [o for o in obligations if o.verdict.refuted and o.witness is not None]
    if refuted:
        why = str(refuted[0].witness["note"]) if refuted[0].witness else refuted[0].name
        return done(replace(FusionReport(producer, consumer, k, mv, "illegal", why, obligations), sizes=sm))
    if not all(o.verdict.proved for o in obligations):
        bad = next(o for o in obligations if not o.verdict.proved)
        why = f"{bad.name}: {bad.verdict.status} ({bad.verdict.reason})"
        return done(replace(_unknown(producer, consumer, k, mv, why, obligations), sizes=sm))
    base = representative if representative is not None else write
    inv = inverse(_sizes_first(base, nk), timeout=timeout)
    if not inv.proved or inv.inverse is None:
        return done(FusionReport(producer, consumer, k, mv, "unknown", f"inverse of the write map: {inv.reason}",
                            obligations, inv, sizes=sm))
    g = inv.inverse
    through = compose(read_s, g)  # (sizes, c) -> (sizes, p)
    ploops = through.results[nk:]
    fused: list[FusedOperand] = []
    producer_side: list[tuple[Operand, str, bool]] = [(o, "producer input", True) for o in producer.inputs]
    for j, o in enumerate(producer.outputs):
        if producer.payload_uses(len(producer.inputs) + j):
            what = "producer init (read by the producer's payload)" if j == r else \
                f"producer init of result #{j} (read by the producer's payload)"
            producer_side.append((o, what, True))
    for o in consumer.inputs[: min(k, len(consumer.inputs))]:
        fused.append(FusedOperand(o.value, str(o.type), o.map, "consumer input", True))
    for o, origin, is_in in producer_side:
        arg = _sizes_first(_on(sm.producer_domain, o.map, nk), nk)
        fm = compose(through, arg)
        res = fm.results[nk:]
        if any(e.uses("d", i) for e in res for i in range(nk)):
            return done(FusionReport(producer, consumer, k, mv, "unknown",
                                f"the fused map of {o.value} depends on the sizes: {fm.format(one_line=True)}",
                                obligations, inv, sizes=sm))
        am = AffineMap(consumer.num_loops, 0, [e.substitute(dims=[Dim(0)] * nk + [Dim(i) for i in range(
            consumer.num_loops)]) for e in res])
        proof = _relation_proof(read_s, _sizes_first(base, nk), arg, fm)
        fused.append(FusedOperand(o.value, str(o.type), am, origin, is_in, proof))
    for o in consumer.inputs[k + 1 :]:
        fused.append(FusedOperand(o.value, str(o.type), o.map, "consumer input", True))
    for j, o in enumerate(consumer.outputs):
        if into_outs and len(consumer.inputs) + j == k:
            init = producer.outputs[r]
            fused.append(FusedOperand(init.value, str(init.type), o.map,
                                      "producer init (the consumer's init is the producer's result)", False))
        else:
            fused.append(FusedOperand(o.value, str(o.type), o.map, "consumer output", False))
    kept: list[tuple[int, AffineMap]] = []

    def kept_map(rk: int) -> tuple[IndexingMap, IndexingMap, AffineMap] | None:
        """The fused op's map of producer result ``rk``'s init (``None``: it depends on the sizes)."""
        arg = _sizes_first(_on(sm.producer_domain, producer.outputs[rk].map, nk), nk)
        fm = compose(through, arg)
        if any(e.uses("d", i) for e in fm.results[nk:] for i in range(nk)):
            return None
        return arg, fm, AffineMap(consumer.num_loops, 0, [e.substitute(dims=[Dim(0)] * nk + [Dim(i) for i in range(
            consumer.num_loops)]) for e in fm.results[nk:]])

    # A loop no operand of the fused op gives a size (MLIR infers loop sizes from the operands): MLIR keeps
    # the producer result whose init gives it one (getPreservedProducerResults: its init "cannot be dropped",
    # the fusion_different_axes form), a second result of the fused op; so does the project.
    keep = list(keep)
    for_size: list[str] = []
    missing = set(range(consumer.num_loops)) - {e.index for f in fused for e in f.map.results if isinstance(e, Dim)}
    for kept_value in keep:
        rk0 = _result_index(producer, kept_value)
        km = kept_map(rk0) if rk0 is not None and rk0 < len(producer.outputs) else None
        if km is not None:
            missing -= {e.index for e in km[2].results if isinstance(e, Dim)}
    for ri, value in enumerate(producer.results):
        if not missing or ri >= len(producer.outputs) or value in keep:
            continue
        km = kept_map(ri)
        gives = {e.index for e in km[2].results if isinstance(e, Dim)} & missing if km is not None else set()
        if gives:
            keep.append(value)
            for_size.append(value)
            missing -= gives
    for kept_value in keep:
        rk = _result_index(producer, kept_value)
        if rk is None or rk >= len(producer.outputs):
            raise VerifiedIndexingError(f"{kept_value} is not a result of {producer.name}")
        o = producer.outputs[rk]
        km = kept_map(rk)
        if km is None:
            return done(FusionReport(producer, consumer, k, mv, "unknown",
                                     f"the fused map of kept result {kept_value} depends on the sizes",
                                     obligations, inv))
        arg, fm, am = km
        proof = _relation_proof(read_s, _sizes_first(base, nk), arg, fm)
        why_kept = ("a loop of the fused op needs its init for its size, as MLIR keeps it" if kept_value in for_size
                    else "used elsewhere")
        fused.append(FusedOperand(o.value, str(o.type), am, f"kept producer result {kept_value} ({why_kept})",
                                  False, proof))
        kept.append((rk, am))
    if kept:
        extra = _kept_obligations(producer, [rk for rk, _ in kept], sm, through, timeout)
        unproved = [o for o in extra if not o.verdict.proved]
        if unproved:
            # The fused op cannot return them: the producer stays for its other uses.
            u = unproved[0]
            why = str(u.witness["note"]) if u.witness else f"{u.name}: {u.verdict.status}"
            warnings = (*warnings, f"the fused op does not return {', '.join(keep)} ({why}); the producer stays "
                        "for its other uses")
            fused = [f for f in fused if not f.origin.startswith("kept producer result")]
            kept = []
        else:
            obligations += extra
    if any(e.uses("d", i) for e in ploops for i in range(nk)):
        loop_exprs: tuple[AffineExpr, ...] | None = None
    else:
        loop_exprs = tuple(e.substitute(dims=[Dim(0)] * nk + [Dim(i) for i in range(consumer.num_loops)])
                           for e in ploops)
    rep = FusionReport(producer, consumer, k, mv, "unknown", "", obligations, inv, tuple(fused),
                       consumer.iterator_types, sizes=sm, producer_loops=loop_exprs, first_visit=first_visit,
                       kept=tuple(kept))
    bad_proofs = [f for f in fused if f.proof is not None and not f.proof.proved]
    if bad_proofs:
        first = bad_proofs[0]
        why = f"fused map of {first.value}: {first.proof.reason if first.proof else ''}"
        return done(replace(rep, reason=why))
    # The whole-op proof: the fused op we print, read back, computes what the pair computed.
    text, why = build_fused_text(rep)
    if text is None:
        return done(replace(rep, reason=f"no whole-op proof: {why}"))
    try:
        # Strict: what MLIR's parser and verifier reject (ins( : ), an ill-typed op) never reads back.
        # The payloads' captured values (constants of the enclosing function) are defined around the fused op.
        (fop,) = parse_linalg(text, strict=True, context=captured_values(producer) | captured_values(consumer))
    except (VerifiedIndexingError, ValueError) as exc:
        return done(replace(rep, reason=f"the fused op we printed does not read back: {exc}"))
    mismatch = _loop_size_mismatch(fop, consumer, sm)
    if mismatch is not None:
        return done(replace(rep, reason=f"the fused op we printed has other loop sizes than the consumer: {mismatch}"))
    vw, ww = prove_fused_equivalent(semantics(rep), fop, timeout=timeout)
    whole = Obligation("the fused op, read back, computes every value the pair computes", vw, ww)
    rep = replace(rep, whole_op=whole)
    if not vw.proved:
        return done(replace(rep, reason=f"whole-op proof {vw.status}: {vw.reason}"))
    # The second, independent check: the pair and the fused op run by the Linalg
    # interpreter at several sizes (raises Disagreement, an internal error, when they differ).
    from verified_indexing.legality.linalg_interpreter import QUESTION, cross_check

    v2 = cross_check(replace(rep, sizes=sm, condition_constraints=tuple(condition)), text, timeout=timeout)
    rep = replace(rep, second_check=Obligation(QUESTION, v2))
    return done(replace(rep, status="legal", reason="all obligations proved"))


def pair_type_errors(producer: GenericOp, consumer: GenericOp, operand_index: int) -> list[str]:
    """Why the pair is ill-typed (:func:`verified_indexing.legality.linalg_types.type_errors`
    of each op, and the consumer's operand type against the producer's result type):
    an ill-typed pair is never fused."""
    from verified_indexing.legality.linalg_types import type_errors

    errs = [f"{producer.name}: {e}" for e in type_errors(producer)]
    errs += [f"{consumer.name}: {e}" for e in type_errors(consumer)]
    operand = consumer.operands[operand_index]
    r = _result_index(producer, operand.value)
    if r is not None and r < len(producer.outputs):
        made = producer.result_types[r] if r < len(producer.result_types) else producer.outputs[r].type
        if (made.kind, made.shape, made.element) != (operand.type.kind, operand.type.shape, operand.type.element):
            errs.append(f"{consumer.name} uses {operand.value} as {operand.type}, {producer.name} makes a {made}")
    return errs


def _loop_size_mismatch(fop: GenericOp, consumer: GenericOp, sm: SizeModel) -> str | None:
    """MLIR infers a generic's loop sizes from its operands' shapes (an operand dim
    whose map result is exactly ``d_k`` is loop ``k``'s size, and the verifier
    requires them to agree). The whole-op proof runs the fused op over the
    consumer's loops, so every such operand dim of the fused op must have the
    size of the consumer's loop: an operand of the producer read through a
    composed map (``(d0 + d1, d1)`` then ``(d0 + d1, d1)``^-1...) may tie a loop to
    another size. Returns the first disagreement, or ``None``."""
    loop: dict[int, int | str] = {}
    for o in consumer.operands:
        for j, e in enumerate(o.map.results):
            ext = sm.extent(o.value, j)
            if isinstance(e, Dim) and ext is not None:
                loop.setdefault(e.index, ext)
    covered: set[int] = set()
    for o in fop.operands:
        for j, e in enumerate(o.map.results):
            if not isinstance(e, Dim):
                continue
            covered.add(e.index)
            ext = sm.extent(o.value, j)
            want = loop.get(e.index)
            if ext is None or want is None or ext != want:
                return (f"{o.value} dim {j} is {ext if ext is not None else 'unknown'}, its map gives it to loop "
                        f"d{e.index}, whose size in the consumer is {want if want is not None else 'unknown'}")
    missing = [i for i in range(fop.num_loops) if i not in covered]
    if missing:
        return f"no operand gives loop d{missing[0]} its size"
    return None


def semantics(rep: FusionReport) -> FusionSemantics:
    """The pair of ``rep`` as the whole-op proof states it."""
    assert rep.sizes is not None
    r = _result_index(rep.producer, rep.consumer.operands[rep.operand_index].value)
    assert r is not None
    return FusionSemantics(rep.producer, rep.consumer, rep.operand_index, r, rep.sizes.producer_domain,
                           rep.sizes.consumer_domain, rep.sizes.k, rep.sizes.names, rep.first_visit, rep.kept)


def _kept_obligations(
    producer: GenericOp, kept: Sequence[int], sm: SizeModel, through: IndexingMap, timeout: float
) -> tuple[Obligation, Obligation]:
    """Kept producer results are written by the fused op exactly where the
    producer wrote them: every producer iteration is some fused iteration's
    (image inclusion), and each kept result's write map is injective (each
    element one value, which the fused op recomputes)."""
    nk = sm.k
    q1 = "every producer iteration is reached by the fused op (kept results are written everywhere)"
    ident = _sizes_first(sm.producer_domain.replace(results=[Dim(nk + i) for i in range(producer.num_loops)]), nk)
    v1 = prove_subset(ident, through, of="image", timeout=timeout)
    w1 = None
    if v1.refuted and v1.counterexample is not None:
        vals = [val for _, val in v1.counterexample.values[: ident.num_dims]]
        at, pit = _split_sizes(sm.names, vals)
        w1 = {"sizes": dict(zip(sm.names, vals[:nk])), "producer_iteration": list(pit),
              "note": f"{at}producer iteration {pit} is not reached by the fused op: a kept result would miss "
                      "its element"}
    o1 = Obligation(q1, replace(v1, question=q1), w1)
    q2 = "each kept result's write map is injective"
    verdicts = [is_injective(_sizes_first(_on(sm.producer_domain, producer.outputs[rk].map, nk), nk),
                             timeout=timeout) for rk in kept]
    v2 = next((v for v in verdicts if not v.proved), verdicts[0])
    return o1, Obligation(q2, replace(v2, question=q2))


def _outs_obligations(
    consumer: GenericOp, k: int, write_s: IndexingMap, read_s: IndexingMap, nk: int, timeout: float
) -> tuple[Obligation, Obligation, str | None]:
    """The two extra obligations of fusing into the consumer's ``outs``: the
    consumer writes every element the producer wrote (the fused op's init, the
    producer's init, keeps the rest), and the fused op can tell the first write
    of each element (where the producer's value replaces the init): every
    iteration when the consumer is parallel with an injective output map; the
    iterations whose reduction loops are all 0 when the output map is a
    permutation of the parallel loops."""
    q4 = "the consumer writes every element the producer writes"
    v4 = prove_subset(write_s, read_s, of="image", timeout=timeout)
    w4 = None
    if v4.refuted and v4.counterexample is not None:
        vals = [val for _, val in v4.counterexample.values[: write_s.num_dims]]
        if write_s.contains(vals):
            el = write_s.evaluate(vals)[nk:]
            at = ", ".join(f"N{i} = {v}" for i, v in enumerate(vals[:nk]))
            w4 = {"sizes": {f"N{i}": v for i, v in enumerate(vals[:nk])}, "producer_iteration": vals[nk:],
                  "element": list(el),
                  "note": f"{'at ' + at + ': ' if at else ''}producer iteration {tuple(vals[nk:])} writes element "
                          f"{el}, which the consumer never writes (the fused op would leave the producer's init "
                          "there)"}
        else:
            v4 = replace(v4, status="error", reason="encoding disagrees with evaluator")
    o4 = Obligation(q4, replace(v4, question=q4), w4)
    q5 = "the fused op recognizes the first write of each element (where the producer's value replaces the init)"
    out_map = consumer.operands[k].map
    par = [i for i, t in enumerate(consumer.iterator_types) if t == "parallel"]
    if len(par) == consumer.num_loops:
        inj = is_injective(read_s, timeout=timeout)
        v5 = replace(inj, question=q5, reason=inj.reason or "the consumer's output map is injective: every "
                     "iteration is the first write of its element")
        return o4, Obligation(q5, v5), ("always" if inj.proved else None)
    dims = [r.index for r in out_map.results if isinstance(r, Dim)]
    if len(dims) == len(out_map.results) and sorted(dims) == par:
        v5 = Verdict("proved", "syntax", 0.0, q5, "the output map is a permutation of the parallel loops: the first "
                     "write of an element is the iteration whose reduction loops are all 0")
        return o4, Obligation(q5, v5), "reduction-zero"
    v5 = Verdict("unknown", "syntax", 0.0, q5, f"the output map {out_map} is not a permutation of the parallel "
                 "loops: the first write of an element is not modelled")
    return o4, Obligation(q5, v5), None


def fusion_pairs(ops: list[GenericOp]) -> list[tuple[GenericOp, GenericOp]]:
    """Every (producer, consumer) pair where the consumer uses a producer result, in
    order: a real SSA use, the name resolved as MLIR resolves it (the producer's
    region encloses the consumer, within one isolated-from-above region such as a
    function or a ``flow.dispatch.workgroups`` body: :meth:`GenericOp.sees`)."""
    makers: dict[str, list[GenericOp]] = {}
    for p in ops:
        for res in p.results:
            makers.setdefault(res, []).append(p)
    out = []
    seen: set[tuple[int, int]] = set()
    for c in ops:
        for o in c.operands:
            for p in makers.get(o.value, ()):
                if p is not c and (id(p), id(c)) not in seen and c.sees(p):
                    seen.add((id(p), id(c)))
                    out.append((p, c))
    return sorted(out, key=lambda pc: (pc[1].offset, pc[0].offset))


def fusion_candidates(ops: list[GenericOp]) -> list[tuple[GenericOp, GenericOp, int]]:
    """Every (producer, consumer, consumer operand index) where that operand is a
    result of the producer, in program order (a consumer reading a producer
    through two operands gives two candidates, as MLIR fuses operand by operand)."""
    out = []
    for p, c in fusion_pairs(ops):
        for k, o in enumerate(c.operands):
            if _result_index(p, o.value) is not None:
                out.append((p, c, k))
    return out


def format_report(rep: FusionReport) -> str:
    """The human-readable report printed by ``verified-indexing fuse``."""
    op = rep.consumer.operands[rep.operand_index]
    where = f" in {rep.consumer.function}" if rep.consumer.function else ""
    through = f" through {rep.through_reshape}" if rep.through_reshape else ""
    lines = [f"fuse {rep.producer.name} into {rep.consumer.name}{where} (operand #{rep.operand_index}: {op.value}"
             f"{through})"]
    if rep.mlir.fusable:
        lines.append("MLIR: fusable")
    else:
        lines.append(f"MLIR: not fusable: {rep.mlir.rejected_by}")
    for c in rep.mlir.checks:
        lines.append(f"  [{'ok' if c.ok else 'FAIL'}] {c.name}" + (f": {c.detail}" if c.detail and not c.ok else ""))
    if rep.mlir.fused_producer_maps:
        for inp, m in zip(rep.producer.inputs, rep.mlir.fused_producer_maps):
            lines.append(f"  MLIR's fused map for {inp.value}: {m}")
    if rep.pass_decision is not None:
        d = rep.pass_decision
        what = ("unknown" if d.fuses is None else "rewrites the pair" if d.fuses
                else "erases the consumer" if d.decided_by in ("EraseIdentityLinalgOp", "trivially dead")
                else "leaves the pair")
        lines.append(f"MLIR's pass in this function: {what} (decided by {d.decided_by}): {d.why}")
    verdict: str = rep.status
    if rep.status == "legal" and rep.condition is not None:
        verdict = "legal for every size" if rep.condition == "every size" else f"legal when {rep.condition}"
        if rep.condition != "every size" and rep.otherwise is None:
            verdict += " (the input program is undefined at the other sizes: see the warning)"
    lines.append(f"ours: {verdict}" + ("" if rep.status == "legal" else f": {rep.reason}"))
    if rep.otherwise is not None and rep.otherwise.witness is not None:
        lines.append(f"  illegal otherwise: {rep.otherwise.witness['note']}")
    if rep.sizes is not None and rep.sizes.k:
        lines.append("  sizes: " + "; ".join(rep.sizes.legend))
    lines += [f"  warning: {w}" for w in rep.warnings]
    for o in rep.obligations:
        lines.append(f"  [{o.verdict.status}] {o.name} ({o.verdict.engine})")
        if o.witness is not None:
            lines.append(f"    counterexample: {o.witness['note']}")
    if rep.write_inverse is not None and rep.write_inverse.inverse is not None:
        sized = f" (d0..d{rep.sizes.k - 1} are {', '.join(rep.sizes.names)})" if rep.sizes and rep.sizes.k else ""
        lines.append(f"  inverse of the producer write map{sized}: {rep.write_inverse.inverse.format(one_line=True)}")
    if rep.fused is not None:
        lines.append("fused op:")
        lines.append(f"  iterator_types: [{', '.join(repr(t).replace(chr(39), chr(34)) for t in rep.iterator_types)}]")
        for f in rep.fused:
            kind = "ins" if f.is_input else "outs"
            proof = f"  [{f.proof.status}: {f.proof.question} ({f.proof.engine})]" if f.proof else ""
            why = f"  ({f.origin})" if f.origin.startswith("kept producer result") else ""
            lines.append(f"  {kind} {f.value} : {f.type}  {format_affine_map(f.map.num_dims, 0, f.map.results)}"
                         f"{proof}{why}")
        if rep.whole_op is not None:
            o = rep.whole_op
            lines.append(f"  [{o.verdict.status}] {o.name} ({o.verdict.engine})")
            if o.witness is not None:
                lines.append(f"    counterexample: {o.witness['note']}")
            elif not o.verdict.proved and o.verdict.reason:
                lines.append(f"    {o.verdict.reason}")
        if rep.second_check is not None:
            o = rep.second_check
            lines.append(f"  [{o.verdict.status}] {o.name} ({o.verdict.engine})")
            if o.verdict.reason:
                lines.append(f"    {o.verdict.reason}")
        text = fused_generic_text(rep)
        if text is not None:
            lines.append("fused op as MLIR (read back and proven equal to the pair):")
            lines += ["  " + ln for ln in text.splitlines()]
    return "\n".join(lines)


_SSA_RE = re.compile(r"%[\w.$-]+(?:#\d+)?")


def _element_type(t: str) -> str:
    """``f32`` from ``tensor<4x8xf32>``, ``memref<4xf32, strided<[1]>>`` or a scalar ``f32``."""
    if "<" not in t:
        return t
    return parse_type(t, 0, "<type>", t).element


def fused_generic_text(rep: FusionReport) -> str | None:
    """The fused ``linalg.generic`` as MLIR text, for a ``legal`` report (``None``
    otherwise); see :func:`build_fused_text`."""
    if rep.status != "legal":
        return None
    return build_fused_text(rep)[0]


def build_fused_text(rep: FusionReport) -> tuple[str | None, str]:
    """The fused ``linalg.generic`` as MLIR text (and ``""``), or ``None`` and why.

    The indexing maps are the proven ones; the payload is the producer's body
    (its block arguments renamed to the fused op's, its values prefixed ``%p_``)
    followed by the consumer's (values prefixed ``%c_``), the consumer's fused
    block argument replaced by the producer's yielded value. Values defined
    outside the payloads keep their names. The producer's ``linalg.index k``
    becomes ``affine.apply`` of the consumer's loops (``linalg.index`` of the
    fused op) through the proven inverse. This text is what the whole-op proof
    reads back and proves.
    """
    from verified_indexing.legality.linalg_semantics import parse_payload

    if rep.fused is None:
        return None, "no fused operands"
    try:
        pp, cp = parse_payload(rep.producer), parse_payload(rep.consumer)
    except VerifiedIndexingError as exc:
        return None, str(exc)
    if len(pp.block_args) != len(rep.producer.operands) or len(cp.block_args) != len(rep.consumer.operands):
        return None, "a payload's block arguments do not match its operands"
    operand = rep.consumer.operands[rep.operand_index]
    r = rep.producer.results.index(operand.value)
    if r >= len(pp.yields):
        return None, f"the producer's payload yields no value for {operand.value}"
    # Block arguments get their own prefix: MLIR rejects a region value that
    # redefines a name of the enclosing function (``%arg0`` often is one).
    args = [f"%fa{i}" for i in range(len(rep.fused))]
    pdef, cdef = pp.defined(), cp.defined()
    ptable: dict[str, str] = {}
    ctable: dict[str, str] = {}
    into_outs = not operand.is_input
    before = len(rep.consumer.inputs) if into_outs else rep.operand_index
    n = 0
    for i in range(before):
        ctable[cp.block_args[i]] = args[n]
        n += 1
    for i, _ in enumerate(rep.producer.inputs):
        ptable[pp.block_args[i]] = args[n]
        n += 1
    for j, _ in enumerate(rep.producer.outputs):
        if rep.producer.payload_uses(len(rep.producer.inputs) + j):
            ptable[pp.block_args[len(rep.producer.inputs) + j]] = args[n]
            n += 1
    fused_out_arg = ""
    for i in range(before, len(rep.consumer.operands)):
        if i == rep.operand_index:
            if into_outs:
                fused_out_arg = args[n]
                n += 1
            continue
        ctable[cp.block_args[i]] = args[n]
        n += 1

    def rename(text: str, table: dict[str, str], defined: set[str], prefix: str) -> str:
        def sub(m: re.Match[str]) -> str:
            v = m.group()
            if v in table:
                return table[v]
            base = v.split("#")[0]
            if v in defined or base in defined:
                return prefix + v[1:]
            return v  # a value of the enclosing function
        return _SSA_RE.sub(sub, text)

    body: list[str] = []
    uses_index = any(s.op == "linalg.index" for s in pp.stmts)
    if into_outs and rep.first_visit is None:
        return None, "the first write of each element is not recognized"
    if uses_index or rep.first_visit == "reduction-zero":
        if uses_index and rep.producer_loops is None:
            return None, "the producer's loops are not affine functions of the consumer's loops alone"
        body += [f"%fi{i} = linalg.index {i} : index" for i in range(rep.consumer.num_loops)]
    for s in pp.stmts:
        if s.op == "linalg.index" and rep.producer_loops is not None:
            m = re.search(r"linalg\.index\s+(\d+)", s.key)
            if m is None or int(m.group(1)) >= len(rep.producer_loops):
                return None, f"cannot read {s.text!r}"
            e = rep.producer_loops[int(m.group(1))]
            amap = format_affine_map(rep.consumer.num_loops, 0, (e,))
            operands = ", ".join(f"%fi{i}" for i in range(rep.consumer.num_loops))
            body.append(f"{rename(s.results[0], ptable, pdef, '%p_')} = affine.apply {amap}({operands})")
        else:
            body.append(rename(s.text, ptable, pdef, "%p_"))
    produced = rename(pp.yields[r], ptable, pdef, "%p_")
    if into_outs and rep.first_visit == "reduction-zero":
        # The producer's value replaces the init at the first write of each element:
        # the iteration whose reduction loops are all 0.
        red = [i for i, t in enumerate(rep.consumer.iterator_types) if t != "parallel"]
        body.append("%f_zero = arith.constant 0 : index")
        conds = []
        for i in red:
            body.append(f"%f_first{i} = arith.cmpi eq, %fi{i}, %f_zero : index")
            conds.append(f"%f_first{i}")
        while len(conds) > 1:
            body.append(f"%f_and{len(conds)} = arith.andi {conds[0]}, {conds[1]} : i1")
            conds = [f"%f_and{len(conds)}", *conds[2:]]
        elem = _element_type(str(operand.type))
        body.append(f"%f_init = arith.select {conds[0]}, {produced}, {fused_out_arg} : {elem}")
        produced = "%f_init"
    ctable[cp.block_args[rep.operand_index]] = produced
    body += [rename(s.text, ctable, cdef, "%c_") for s in cp.stmts]
    results = [rename(v, ctable, cdef, "%c_") for v in cp.yields]
    results += [rename(pp.yields[rk], ptable, pdef, "%p_") for rk, _ in rep.kept]
    ins = [f for f in rep.fused if f.is_input]
    outs = [f for f in rep.fused if not f.is_input]
    maps = ", ".join(str(f.map) for f in rep.fused)
    iters = ", ".join(f'"{t}"' for t in rep.iterator_types)
    elems = [_element_type(f.type) for f in rep.fused]
    header = ", ".join(f"{a}: {e}" for a, e in zip(args, elems))
    out_elems = [elems[len(ins) + i] for i in range(len(outs))]
    # A tensor init gives a result of its type (named ops such as linalg.reduce
    # print no result types, the fused generic must).
    rtypes = [f.type for f in outs if f.type.startswith("tensor<")]
    result_types = ", ".join(rtypes)
    name = "%fused" if len(rtypes) <= 1 else f"%fused:{len(rtypes)}"
    lines = [
        f"{name} = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{iters}]}}",
        # No ins at all is no ins(...) clause: MLIR rejects "ins( : )".
        "   " + (f" ins({', '.join(f.value for f in ins)} : {', '.join(f.type for f in ins)})" if ins else "")
        + f" outs({', '.join(f.value for f in outs)} : {', '.join(f.type for f in outs)}) {{",
        f"^bb0({header}):",
        *(f"  {ln}" for ln in body),
        f"  linalg.yield {', '.join(results)} : {', '.join(out_elems)}",
        "}" + (f" -> {result_types}" if len(rtypes) == 1 else
               (f" -> ({result_types})" if result_types else "")),
    ]
    return "\n".join(lines), ""
