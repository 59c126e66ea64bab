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

Payloads are uninterpreted: equal operands give equal values, so the fused op
computes what the pair computed exactly when the obligations hold. ``legal``
means every obligation and every map proof is ``proved``; ``illegal`` means an
obligation is refuted with an evaluator-confirmed counterexample; anything else
is ``unknown`` with a reason (dynamic shapes, an engine giving up).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from verified_indexing.affine_map import AffineMap
from verified_indexing.engines import Verdict, prove_relation_equal
from verified_indexing.errors import MapError, VerifiedIndexingError
from verified_indexing.expr import Dim, Sym
from verified_indexing.indexing_map import IndexingMap, compose
from verified_indexing.interval import Interval
from verified_indexing.legality._mlir_text import parse_type
from verified_indexing.legality._proofs import now as _now
from verified_indexing.legality._proofs import reads_inside as _reads_inside
from verified_indexing.legality.inverse import InverseResult, collision, inverse, is_injective
from verified_indexing.legality.linalg_ir import _BLOCK_RE, GenericOp, Operand, loop_bounds, parse_linalg
from verified_indexing.legality.permutation import inverse_permutation, is_permutation
from verified_indexing.syntax import format_affine_map

__all__ = [
    "MlirCheck",
    "MlirVerdict",
    "Obligation",
    "FusedOperand",
    "FusionReport",
    "mlir_fusable",
    "check_fusion",
    "fusion_pairs",
    "fusion_candidates",
    "fused_generic_text",
    "parse_linalg",
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


@dataclass(frozen=True)
class Obligation:
    """One proof obligation of our verdict; ``witness`` is a confirmed counterexample."""

    name: str
    verdict: Verdict
    witness: dict[str, Any] | None = None

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

    @property
    def exit_code(self) -> int:
        return {"legal": 0, "illegal": 1, "unknown": 2}[self.status]

    def to_json(self) -> dict[str, Any]:
        return {
            "producer": self.producer.name,
            "producer_op": self.producer.kind,
            "consumer": self.consumer.name,
            "consumer_op": self.consumer.kind,
            "fused_operand": self.operand_index,
            "mlir": {
                "fusable": self.mlir.fusable,
                "rejected_by": self.mlir.rejected_by,
                "checks": [{"check": c.name, "ok": c.ok, "detail": c.detail} for c in self.mlir.checks],
                "fused_producer_maps": (
                    [str(m) for m in self.mlir.fused_producer_maps] if self.mlir.fused_producer_maps else None
                ),
            },
            "status": self.status,
            "reason": self.reason,
            "obligations": [o.to_json() for o in self.obligations],
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
    it has as many results as the producer has loops; the producer's first
    result map is a permutation; if the consumer has reduction loops, every
    consumer loop is still given a size by some operand after fusion.
    """
    operand = consumer.operands[operand_index]
    checks: list[MlirCheck] = []

    def run(name: str, ok: bool, detail: str = "") -> bool:
        checks.append(MlirCheck(name, ok, detail))
        return ok

    result_map = producer.outputs[0].map if producer.outputs else None
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
    # fuseElementwiseOps then inverts the map of the result actually used (the
    # check above only looks at the first init); MLIR asserts if that fails.
    used = _result_index(producer, operand.value)
    used_map = producer.outputs[used].map if used is not None and used < len(producer.outputs) else None
    inv = inverse_permutation(used_map) if used_map is not None else None
    if inv is None:
        run("the used result's map is invertible (MLIR asserts otherwise)", False,
            f"{used_map} has no inversePermutation")
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


def check_fusion(
    producer: GenericOp, consumer: GenericOp, *, operand_index: int | None = None, timeout: float = 10.0
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
    if not operand.is_input:
        return FusionReport(producer, consumer, k, mv, "unknown",
                            f"{operand.value} is an output of the consumer; fusing into outs() is not modelled")
    r = _result_index(producer, operand.value)
    assert r is not None
    if r >= len(producer.outputs):
        raise VerifiedIndexingError(f"{producer.name} has no output operand for result {operand.value}")
    try:
        pb = loop_bounds(producer)
        cb = loop_bounds(consumer)
    except MapError as exc:
        return _unknown(producer, consumer, k, mv, str(exc))
    write = _as_indexing_map(pb, producer.outputs[r].map)
    read = _as_indexing_map(cb, operand.map)
    if read.num_results != write.num_results:
        raise VerifiedIndexingError(
            f"{consumer.name} reads {operand.value} with {read.num_results} indices, {producer.name} writes it with "
            f"{write.num_results}"
        )
    inj = is_injective(write, timeout=timeout)
    inj_w = None
    if inj.refuted:
        pair = collision(write, inj)
        assert pair is not None
        inj_w = {
            "producer_iterations": [list(pair[0]), list(pair[1])],
            "element": list(pair[2]),
            "note": f"producer iterations {pair[0]} and {pair[1]} both write element {pair[2]}",
        }
    o1 = Obligation("producer write map is injective on its iteration domain", inj, inj_w)
    v2, w2 = _reads_inside(read, write, timeout)
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
    elif inj.refuted:
        v3 = Verdict("refuted", "isl", inj.seconds, q3,
                     f"non-parallel loops {', '.join(reductions)} accumulate into one element over several iterations")
        w3 = inj_w
    else:
        v3 = Verdict("unknown", inj.engine, inj.seconds, q3, "injectivity of the write map is not decided")
        w3 = None
    o3 = Obligation(q3, v3, w3)
    obligations = (o1, o2, o3)
    refuted = [o for o in obligations if o.verdict.refuted and o.witness is not None]
    if refuted:
        why = str(refuted[0].witness["note"]) if refuted[0].witness else refuted[0].name
        return FusionReport(producer, consumer, k, mv, "illegal", why, obligations)
    if not all(o.verdict.proved for o in obligations):
        bad = next(o for o in obligations if not o.verdict.proved)
        why = f"{bad.name}: {bad.verdict.status} ({bad.verdict.reason})"
        return _unknown(producer, consumer, k, mv, why, obligations)
    inv = inverse(write, timeout=timeout)
    if not inv.proved or inv.inverse is None:
        return FusionReport(producer, consumer, k, mv, "unknown", f"inverse of the write map: {inv.reason}",
                            obligations, inv)
    g = inv.inverse
    through = compose(read, g)
    fused: list[FusedOperand] = []
    producer_side: list[tuple[Operand, str, bool]] = [(o, "producer input", True) for o in producer.inputs]
    out_arg = len(producer.inputs) + r
    if producer.payload_uses(out_arg):
        producer_side.append((producer.outputs[r], "producer init (read by the producer's payload)", True))
    for o in consumer.inputs[:k]:
        fused.append(FusedOperand(o.value, str(o.type), o.map, "consumer input", True))
    for o, origin, is_in in producer_side:
        arg = _as_indexing_map(pb, o.map)
        fm = compose(through, arg)
        am = AffineMap(consumer.num_loops, 0, fm.results)
        proof = _relation_proof(read, write, arg, IndexingMap(cb, fm.results))
        fused.append(FusedOperand(o.value, str(o.type), am, origin, is_in, proof))
    for o in consumer.inputs[k + 1 :]:
        fused.append(FusedOperand(o.value, str(o.type), o.map, "consumer input", True))
    for o in consumer.outputs:
        fused.append(FusedOperand(o.value, str(o.type), o.map, "consumer output", False))
    bad_proofs = [f for f in fused if f.proof is not None and not f.proof.proved]
    if bad_proofs:
        first = bad_proofs[0]
        why = f"fused map of {first.value}: {first.proof.reason if first.proof else ''}"
        return FusionReport(producer, consumer, k, mv, "unknown", why, obligations, inv, tuple(fused),
                            consumer.iterator_types)
    return FusionReport(producer, consumer, k, mv, "legal", "all obligations proved", obligations, inv, tuple(fused),
                        consumer.iterator_types)


def fusion_pairs(ops: list[GenericOp]) -> list[tuple[GenericOp, GenericOp]]:
    """Every (producer, consumer) pair where the consumer uses a producer result, in
    order; only ops of one function are paired (SSA names are per function)."""
    out = []
    for p, c in itertools.permutations(ops, 2):
        if p.offset < c.offset and p.function == c.function and _fused_operand(p, c) is not None:
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
    lines = [f"fuse {rep.producer.name} into {rep.consumer.name} (operand #{rep.operand_index}: {op.value})"]
    if rep.mlir.fusable:
        lines.append("MLIR: fusable")
    else:
        lines.append(f"MLIR: not fusable: {rep.mlir.rejected_by}")
    for c in rep.mlir.checks:
        lines.append(f"  [{'ok' if c.ok else 'FAIL'}] {c.name}" + (f": {c.detail}" if c.detail and not c.ok else ""))
    if rep.mlir.fused_producer_maps:
        for inp, m in zip(rep.producer.inputs, rep.mlir.fused_producer_maps):
            lines.append(f"  MLIR's fused map for {inp.value}: {m}")
    lines.append(f"ours: {rep.status}" + ("" if rep.status == "legal" else f": {rep.reason}"))
    for o in rep.obligations:
        lines.append(f"  [{o.verdict.status}] {o.name} ({o.verdict.engine})")
        if o.witness is not None:
            lines.append(f"    counterexample: {o.witness['note']}")
    if rep.write_inverse is not None and rep.write_inverse.inverse is not None:
        lines.append(f"  inverse of the producer write map: {rep.write_inverse.inverse.format(one_line=True)}")
    if rep.fused is not None:
        lines.append("fused op:")
        lines.append(f"  iterator_types: [{', '.join(repr(t).replace(chr(39), chr(34)) for t in rep.iterator_types)}]")
        for f in rep.fused:
            kind = "ins" if f.is_input else "outs"
            proof = f"  [{f.proof.status}: {f.proof.question} ({f.proof.engine})]" if f.proof else ""
            lines.append(f"  {kind} {f.value} : {f.type}  {format_affine_map(f.map.num_dims, 0, f.map.results)}{proof}")
        text = fused_generic_text(rep)
        if text is not None:
            lines.append("fused op as MLIR (payloads copied, not interpreted):")
            lines += ["  " + ln for ln in text.splitlines()]
    return "\n".join(lines)


_SSA_RE = re.compile(r"%[\w.$-]+")
_YIELD_RE = re.compile(r"^\s*linalg\.yield\b(.*)$", re.MULTILINE)


def _payload_lines(op: GenericOp) -> tuple[list[str], list[str]] | None:
    """The payload's body lines (block header and yield removed) and the yielded
    values; ``None`` when the payload is not one block ending in a yield."""
    header = _BLOCK_RE.search(op.payload)
    if header is None:
        return None
    body = op.payload[header.end() :]
    yields = list(_YIELD_RE.finditer(body))
    if len(yields) != 1 or body.count("^") or "{" in body:
        return None
    values = _SSA_RE.findall(yields[0].group(1).split(":")[0])
    lines = [ln.strip() for ln in body[: yields[0].start()].splitlines() if ln.strip()]
    return lines, values


def _rename(line: str, table: dict[str, str], prefix: str) -> str:
    return _SSA_RE.sub(lambda m: table.get(m.group(), prefix + m.group()[1:]), line)


def _element_type(t: str) -> str:
    """``f32`` from ``tensor<4x8xf32>``, ``memref<4xf32, strided<[1]>>`` or a scalar ``f32``."""
    if "<" not in t:
        return t
    return parse_type(t, 0, "<type>", t).element


def fused_generic_text(rep: FusionReport) -> str | None:
    """The fused ``linalg.generic`` as MLIR text, for a ``legal`` report.

    The indexing maps are the proven ones; the payload is the producer's body
    (its block arguments renamed to the fused op's, its values prefixed
    ``%p_``) followed by the consumer's (values prefixed ``%c_``), the
    consumer's fused block argument replaced by the producer's yielded value.
    Payloads are copied as text, not interpreted. ``None`` when the report is
    not legal, a payload is not a single block ending in ``linalg.yield``, or
    the producer's payload uses ``linalg.index`` (its indices are the
    producer's loops, which the fused op only reaches through the inverse).
    """
    if rep.status != "legal" or rep.fused is None:
        return None
    if re.search(r"\blinalg\.index\b", rep.producer.payload):
        # The producer's payload reads its own iteration indices, which the fused
        # op would have to recompute through the inverse: not copied as text.
        return None
    prod, cons = _payload_lines(rep.producer), _payload_lines(rep.consumer)
    if prod is None or cons is None or len(rep.producer.block_args) != len(rep.producer.operands):
        return None
    if len(rep.consumer.block_args) != len(rep.consumer.operands):
        return None
    operand = rep.consumer.operands[rep.operand_index]
    r = rep.producer.results.index(operand.value)
    if r >= len(prod[1]):
        return None
    # Block arguments get their own prefix: MLIR rejects a region value that
    # redefines a name of the enclosing function (``%arg0`` often is one).
    args = [f"%fa{i}" for i in range(len(rep.fused))]
    ptable: dict[str, str] = {}
    ctable: dict[str, str] = {}
    k = 0
    for i in range(rep.operand_index):
        ctable[rep.consumer.block_args[i]] = args[k]
        k += 1
    for i, _ in enumerate(rep.producer.inputs):
        ptable[rep.producer.block_args[i]] = args[k]
        k += 1
    out_arg = len(rep.producer.inputs) + r
    if rep.producer.payload_uses(out_arg):
        ptable[rep.producer.block_args[out_arg]] = args[k]
        k += 1
    for i in range(rep.operand_index + 1, len(rep.consumer.operands)):
        ctable[rep.consumer.block_args[i]] = args[k]
        k += 1
    yielded = _rename(prod[1][r], ptable, "%p_")
    ctable[rep.consumer.block_args[rep.operand_index]] = yielded
    body = [_rename(ln, ptable, "%p_") for ln in prod[0]] + [_rename(ln, ctable, "%c_") for ln in cons[0]]
    results = [_rename(v, ctable, "%c_") for v in cons[1]]
    ins = [f for f in rep.fused if f.is_input]
    outs = [f for f in rep.fused if not f.is_input]
    maps = ", ".join(str(f.map) for f in rep.fused)
    iters = ", ".join(f'"{t}"' for t in rep.iterator_types)
    elems = [_element_type(f.type) for f in rep.fused]
    header = ", ".join(f"{a}: {e}" for a, e in zip(args, elems))
    out_elems = [elems[len(ins) + i] for i in range(len(outs))]
    result_types = ", ".join(str(t) for t in rep.consumer.result_types)
    lines = [
        f"%fused = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{iters}]}}",
        f"    ins({', '.join(f.value for f in ins)} : {', '.join(f.type for f in ins)})"
        f" outs({', '.join(f.value for f in outs)} : {', '.join(f.type for f in outs)}) {{",
        f"^bb0({header}):",
        *(f"  {ln}" for ln in body),
        f"  linalg.yield {', '.join(results)} : {', '.join(out_elems)}",
        "}" + (f" -> {result_types}" if len(rep.consumer.result_types) == 1 else
               (f" -> ({result_types})" if result_types else "")),
    ]
    return "\n".join(lines)
