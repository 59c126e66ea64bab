"""linalg.generic parsing and elementwise fusion: the permutation document's
cases, and random fusions checked against a numpy simulation of both ops."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing.affine_map import AffineMap
from verified_indexing.errors import ParseError, VerifiedIndexingError
from verified_indexing.expr import AffineExpr, Dim
from verified_indexing.legality.linalg import FusionReport, check_fusion, fused_generic_text, fusion_pairs, parse_linalg
from verified_indexing.legality.linalg_ir import loop_bounds
from verified_indexing.legality.permutation import inverse_permutation
from verified_indexing.syntax import format_affine_map, parse_affine_map

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "mlir"


def _report(name: str) -> FusionReport:
    ops = parse_linalg((EXAMPLES / name).read_text(encoding="utf-8"))
    (pair,) = fusion_pairs(ops)
    return check_fusion(*pair)


def _fused_map(rep: FusionReport, value: str) -> AffineMap:
    assert rep.fused is not None
    return next(f.map for f in rep.fused if f.value == value)


# ---------------------------------------------------------------------------
# The document's cases
# ---------------------------------------------------------------------------


def test_doc_transpose_case_fuses() -> None:
    rep = _report("transpose.mlir")
    assert rep.mlir.fusable and rep.mlir.rejected_by is None
    transpose = parse_affine_map("affine_map<(d0, d1) -> (d1, d0)>")  # the document's fused map for A
    assert rep.mlir.fused_producer_maps == (transpose,)
    assert rep.status == "legal"
    assert all(o.verdict.proved for o in rep.obligations)
    assert _fused_map(rep, "%A") == transpose
    assert rep.fused is not None
    assert all(f.proof is None or f.proof.proved for f in rep.fused)
    # The producer's payload never reads its init, so the init is not a fused input.
    assert [f.value for f in rep.fused] == ["%A", "%init2"]


def test_doc_broadcast_case_as_mlir_actually_decides() -> None:
    # The document claims `consumerIndexMap.getNumResults() != producer.getNumLoops()`
    # rejects this pair "(1 != 2)"; but its producer has ONE loop and the consumer's
    # map (d0, d1) -> (d0) has ONE result, so MLIR's check passes and MLIR fuses.
    rep = _report("broadcast.mlir")
    assert rep.producer.num_loops == 1
    assert rep.consumer.operands[0].map.num_results == 1
    assert rep.mlir.fusable
    assert rep.mlir.fused_producer_maps == (parse_affine_map("affine_map<(d0, d1) -> (d0)>"),)
    assert rep.status == "legal"
    assert _fused_map(rep, "%A") == parse_affine_map("affine_map<(d0, d1) -> (d0)>")


def test_documented_rejection_reason_where_it_applies() -> None:
    # The check the document names, on a producer that really has 2 loops for 1 result.
    rep = _report("broadcast_rejected.mlir")
    assert not rep.mlir.fusable
    assert rep.mlir.rejected_by == "consumer map of the operand has as many results as producer loops"
    assert [c.ok for c in rep.mlir.checks] == [True, True, True, True, False]  # stops at the failing check
    assert rep.status == "illegal"
    w = rep.obligations[0].witness
    assert w is not None
    p, q = (tuple(x) for x in w["producer_iterations"])
    write = AffineMap(2, 0, [Dim(0)])
    assert p != q and write.evaluate(p) == write.evaluate(q) == tuple(w["element"])


def test_doc_skew_rejected_by_mlir_legal_for_us() -> None:
    rep = _report("skew_legal.mlir")
    assert rep.mlir.rejected_by == "producer result map is a permutation"
    assert inverse_permutation(parse_affine_map("affine_map<(d0, d1) -> (d0 + d1, d0)>")) is None
    assert rep.status == "legal"
    inv = rep.write_inverse
    assert inv is not None and inv.proved and inv.inverse is not None
    d0, d1 = Dim(0), Dim(1)
    assert inv.inverse.results == (d1, d0 - d1)  # the document's hand-solved inverse
    # consumer reads (d0 + d1, d1): the producer iteration is (d1, d0), so A is read transposed.
    assert _fused_map(rep, "%A") == parse_affine_map("affine_map<(d0, d1) -> (d1, d0)>")


def test_doc_skew_illegal_when_consumer_reads_unwritten_elements() -> None:
    rep = _report("skew_illegal.mlir")
    assert rep.status == "illegal"
    assert rep.obligations[0].verdict.proved  # the write map is injective...
    o2 = rep.obligations[1]
    assert o2.verdict.refuted and o2.witness is not None  # ...but the consumer reads outside its image
    element = tuple(o2.witness["element"])
    written = {(p0 + p1, p0) for p0, p1 in itertools.product(range(4), range(4))}
    assert element not in written
    assert rep.fused is None


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------

GENERIC = """#m = affine_map<(d0, d1) -> (d0, d1)>
%r:2 = linalg.generic {indexing_maps = [#m, affine_map<(d0, d1) -> (d1)>, #m, #m],
    iterator_types = [#linalg.iterator_type<parallel>, #linalg.iterator_type<reduction>]}
    ins(%a, %b : tensor<4x?xf32>, tensor<8xf32>) outs(%o1, %o2 : tensor<4x8xf32>, memref<4x8xf32>) {
^bb0(%x: f32, %y: f32, %z: f32, %w: f32):
  linalg.yield %x, %z : f32, f32
} -> (tensor<4x8xf32>, tensor<4x8xf32>)
"""


def test_parse_generic_details() -> None:
    (op,) = parse_linalg(GENERIC)
    assert op.name == "%r" and op.results == ("%r#0", "%r#1")
    assert op.iterator_types == ("parallel", "reduction")
    assert [o.value for o in op.inputs] == ["%a", "%b"]
    assert [str(o.type) for o in op.operands] == ["tensor<4x?xf32>", "tensor<8xf32>", "tensor<4x8xf32>", "memref<4x8xf32>"]
    assert op.inputs[1].map == AffineMap(2, 0, [Dim(1)])
    assert op.block_args == ("%x", "%y", "%z", "%w")
    assert op.payload_uses(0) and not op.payload_uses(1) and op.payload_uses(2) and not op.payload_uses(3)
    assert not op.has_pure_tensor_semantics
    assert [(b.lo, b.hi) for b in loop_bounds(op)] == [(0, 3), (0, 7)]


@pytest.mark.parametrize(
    ("text", "message", "where"),
    [
        ("%0 = linalg.generic {indexing_maps = [#nope], iterator_types = []} outs(%o : tensor<f32>) {\n}",
         "unknown affine map alias", "#nope"),
        ("%0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = [\"parallel\"]}"
         " ins(%a : tensor<4xf32>) outs(%o : tensor<4xf32>) {\n}", "2 operands but 1 indexing maps", "linalg.generic"),
        ("%0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],"
         " iterator_types = [\"parallel\"]} ins(%a : tensor<4x4xf32>) outs(%o : tensor<4xf32>) {\n}",
         "has rank 2", "%a"),
        ("%0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0 +)>], iterator_types = [\"parallel\"]}"
         " outs(%o : tensor<4xf32>) {\n}", "expected an expression", ")"),
        ("%0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = [\"sideways\"]}"
         " outs(%o : tensor<4xf32>) {\n}", "unknown iterator type", '"sideways"'),
        ("%0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = [\"parallel\"]}"
         " outs(%o : tensor<4xf32>) {\n", "no matching '}'", "{"),
        ("func.func @f() { return }", "no linalg.generic", "f"),
    ],
)
def test_parse_errors_are_positioned(text: str, message: str, where: str) -> None:
    with pytest.raises(ParseError) as info:
        parse_linalg(text)
    err = info.value
    assert message in err.message
    assert text[err.offset :].startswith(where) or where in err.line_text


def test_dynamic_shapes_are_size_parameters() -> None:
    # Once "unknown: the semantic checks need static shapes"; now every '?' is a size
    # parameter tied to the others, and every obligation is proved for every size.
    text = (EXAMPLES / "transpose.mlir").read_text(encoding="utf-8").replace("4x8xf32", "?x8xf32")
    text = text.replace("8x4xf32", "8x?xf32")
    rep = check_fusion(*fusion_pairs(parse_linalg(text))[0])
    assert rep.mlir.fusable
    assert rep.status == "legal" and rep.sizes is not None
    assert rep.sizes.legend == ("N0 = %A dim 0 = %init dim 1 = %producer dim 1 = %init2 dim 1 = %consumer dim 1",)
    assert rep.whole_op is not None and rep.whole_op.verdict.proved


def test_unrelated_ops_are_bad_input() -> None:
    ops = parse_linalg((EXAMPLES / "transpose.mlir").read_text(encoding="utf-8"))
    with pytest.raises(VerifiedIndexingError):
        check_fusion(ops[1], ops[0])


def test_consumer_output_operand_is_rejected_by_mlir() -> None:
    text = """
%p = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%a : tensor<4xf32>) outs(%i : tensor<4xf32>) {
^bb0(%x: f32, %y: f32):
  linalg.yield %x : f32
} -> tensor<4xf32>
%c = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%a : tensor<4xf32>) outs(%p : tensor<4xf32>) {
^bb0(%x: f32, %y: f32):
  linalg.yield %x : f32
} -> tensor<4xf32>
"""
    rep = check_fusion(*fusion_pairs(parse_linalg(text))[0])
    assert rep.mlir.rejected_by == "the fused operand is a consumer input (not an output)"
    # Once "unknown: not modelled"; the consumer never reads its init, every
    # element is written once: the fusion into outs() is proven.
    assert rep.status == "legal" and rep.first_visit == "always"


def test_reduction_producer() -> None:
    # A row-sum producer: MLIR rejects (not all parallel); we refute with two
    # iterations accumulating into one element.
    text = """
%p = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
    iterator_types = ["parallel", "reduction"]} ins(%a : tensor<4x3xf32>) outs(%i : tensor<4xf32>) {
^bb0(%x: f32, %acc: f32):
  %s = arith.addf %x, %acc : f32
  linalg.yield %s : f32
} -> tensor<4xf32>
%c = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
    ins(%p : tensor<4xf32>) outs(%j : tensor<4xf32>) {
^bb0(%x: f32, %y: f32):
  linalg.yield %x : f32
} -> tensor<4xf32>
"""
    rep = check_fusion(*fusion_pairs(parse_linalg(text))[0])
    assert rep.mlir.rejected_by == "all producer loops are parallel"
    assert rep.status == "illegal"
    assert rep.obligations[2].verdict.refuted


# ---------------------------------------------------------------------------
# Random fusions against a numpy simulation
# ---------------------------------------------------------------------------

Payload = Callable[[Sequence[float]], float]


def _payload(rng: random.Random, arity: int) -> Payload:
    coeffs = [rng.choice([-2.0, -1.0, 0.5, 1.0, 3.0]) for _ in range(arity)]
    shift = rng.choice([0.0, 1.0, -0.25])
    kind = rng.choice(["linear", "sin", "product"])

    def f(xs: Sequence[float]) -> float:
        lin = sum(c * x for c, x in zip(coeffs, xs)) + shift
        if kind == "sin":
            return float(np.sin(lin))
        if kind == "product":
            out = 1.0
            for x in xs:
                out *= x + shift
            return out
        return lin

    return f


def _mlir_map(n: int, results: Sequence[AffineExpr]) -> str:
    return format_affine_map(n, 0, tuple(results))


def _tensor(shape: Sequence[int]) -> str:
    return "tensor<" + "".join(f"{s}x" for s in shape) + "f32>"


def _generic(name: str, n: int, ins: list[tuple[str, list[int], list[AffineExpr]]],
             out: tuple[str, list[int], list[AffineExpr]], iters: list[str]) -> str:
    maps = [_mlir_map(n, m) for _, _, m in ins] + [_mlir_map(n, out[2])]
    args = ", ".join(f"%b{i}: f32" for i in range(len(ins) + 1))
    ins_text = ""
    if ins:
        ins_text = f"ins({', '.join(v for v, _, _ in ins)} : {', '.join(_tensor(s) for _, s, _ in ins)}) "
    return (
        f"{name} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
        f"iterator_types = [{', '.join(chr(34) + t + chr(34) for t in iters)}]}}\n"
        f"    {ins_text}outs({out[0]} : {_tensor(out[1])}) {{\n"
        f"^bb0({args}):\n  %y = \"test.payload\"(%b0) : (f32) -> f32\n  linalg.yield %y : f32\n}} -> {_tensor(out[1])}\n"
    )


def _run_op(sizes: Sequence[int], ins: list[tuple[np.ndarray, AffineMap]], out: np.ndarray, out_map: AffineMap,
            f: Payload, reads_init: bool) -> np.ndarray:
    res = out.copy()
    for p in itertools.product(*(range(s) for s in sizes)):
        vals = [float(a[m.evaluate(p)]) for a, m in ins]
        idx = out_map.evaluate(p)
        if reads_init:
            vals.append(float(res[idx]))
        res[idx] = f(vals)
    return res


@st.composite
def legal_fusion(draw: st.DrawFn) -> dict[str, object]:
    n = draw(st.integers(1, 3))
    sizes = [draw(st.integers(1, 3)) for _ in range(n)]
    perm = draw(st.permutations(list(range(n))))
    out_shape = [sizes[p] for p in perm]
    n_in = draw(st.integers(1, 2))
    ins = []
    for i in range(n_in):
        k = draw(st.integers(1, n))
        dims = draw(st.permutations(list(range(n))))[:k]
        ins.append((f"%a{i}", [sizes[d] for d in dims], [Dim(d) for d in dims]))
    # Every producer loop must get its size from a static operand: add the identity input.
    ins.append((f"%a{n_in}", list(sizes), [Dim(d) for d in range(n)]))
    m = draw(st.integers(n, n + 1))
    read_dims = draw(st.permutations(list(range(m))))[:n]
    csizes = [1] * m
    for k, c in enumerate(read_dims):
        csizes[c] = out_shape[k]
    for c in range(m):
        if c not in read_dims:
            csizes[c] = draw(st.integers(1, 3))
    return {"n": n, "sizes": sizes, "perm": perm, "ins": ins, "m": m, "read_dims": read_dims, "csizes": csizes,
            "reads_init": draw(st.booleans()), "seed": draw(st.integers(0, 10**6))}


def _build(case: dict[str, object]) -> tuple[str, list[tuple[str, list[int], list[AffineExpr]]]]:
    n = int(case["n"])  # type: ignore[call-overload]
    perm: list[int] = case["perm"]  # type: ignore[assignment]
    sizes: list[int] = case["sizes"]  # type: ignore[assignment]
    ins: list[tuple[str, list[int], list[AffineExpr]]] = case["ins"]  # type: ignore[assignment]
    m = int(case["m"])  # type: ignore[call-overload]
    read_dims: list[int] = case["read_dims"]  # type: ignore[assignment]
    csizes: list[int] = case["csizes"]  # type: ignore[assignment]
    out_shape = [sizes[p] for p in perm]
    producer = _generic("%p", n, ins, ("%pinit", out_shape, [Dim(p) for p in perm]), ["parallel"] * n)
    consumer = _generic("%c", m, [("%p", out_shape, [Dim(c) for c in read_dims])],
                        ("%cinit", csizes, [Dim(c) for c in range(m)]), ["parallel"] * m)
    if case["reads_init"]:
        producer = producer.replace('"test.payload"(%b0)', f'"test.payload"(%b0, %b{len(ins)})')
    return producer + consumer, ins


@settings(max_examples=25)
@given(legal_fusion())
def test_random_legal_fusions_agree_with_numpy(case: dict[str, object]) -> None:
    text, ins = _build(case)
    ops = parse_linalg(text)
    producer, consumer = ops
    rep = check_fusion(producer, consumer)
    assert rep.mlir.fusable  # permutation write maps: MLIR agrees here
    assert rep.status == "legal", rep.reason
    assert rep.fused is not None
    rng = random.Random(int(case["seed"]))  # type: ignore[call-overload]
    reads_init = bool(case["reads_init"])
    f = _payload(rng, len(ins) + (1 if reads_init else 0))
    g = _payload(rng, 1)
    arrays = {v: np.array(rng.random() * 4, dtype=float) + np.arange(int(np.prod(s))).reshape(s) * 0.37
              for v, s, _ in ins}
    psizes = [b.hi + 1 for b in loop_bounds(producer)]
    csizes = [b.hi + 1 for b in loop_bounds(consumer)]
    pinit = np.full(tuple(int(s or 0) for s in producer.outputs[0].type.shape), 0.5)
    cinit = np.zeros(tuple(int(s or 0) for s in consumer.outputs[0].type.shape))
    # Sequential: producer then consumer.
    pres = _run_op(psizes, [(arrays[o.value], o.map) for o in producer.inputs], pinit, producer.outputs[0].map, f,
                   reads_init)
    want = _run_op(csizes, [(pres, consumer.inputs[0].map)], cinit, consumer.outputs[0].map, g, False)
    # Fused: the producer's payload evaluated at the fused maps, inside the consumer's loops.
    env = dict(arrays, **{"%pinit": pinit})
    producer_side = [fo for fo in rep.fused if fo.origin.startswith("producer")]
    assert len(producer_side) == len(ins) + (1 if reads_init else 0)
    got = cinit.copy()
    out_map = consumer.outputs[0].map
    for c in itertools.product(*(range(s) for s in csizes)):
        v = f([float(env[fo.value][fo.map.evaluate(c)]) for fo in producer_side])
        got[out_map.evaluate(c)] = g([v])
    assert np.array_equal(got, want)
    fused_text = fused_generic_text(rep)
    assert fused_text is not None
    assert [o.map for o in parse_linalg(fused_text, strict=True)[0].operands] == [fo.map for fo in rep.fused]
    # MLIR's own construction gives the same maps for the producer inputs.
    assert rep.mlir.fused_producer_maps is not None
    for fo, mm in zip(producer_side, rep.mlir.fused_producer_maps):
        for c in itertools.product(*(range(s) for s in csizes)):
            assert fo.map.evaluate(c) == mm.evaluate(c)


@st.composite
def illegal_fusion(draw: st.DrawFn) -> tuple[str, str]:
    kind = draw(st.sampled_from(["collision", "outside", "offset"]))
    a = draw(st.integers(2, 4))
    b = draw(st.integers(2, 3))
    if kind == "collision":  # two producer loops write one 1-D element
        prod = _generic("%p", 2, [("%a", [a, b], [Dim(0), Dim(1)])], ("%i", [a], [Dim(0)]), ["parallel"] * 2)
        cons = _generic("%c", 1, [("%p", [a], [Dim(0)])], ("%j", [a], [Dim(0)]), ["parallel"])
    elif kind == "outside":  # the skew writes a parallelogram; the consumer reads the whole box
        prod = _generic("%p", 2, [("%a", [a, b], [Dim(0), Dim(1)])], ("%i", [a + b - 1, a], [Dim(0) + Dim(1), Dim(0)]),
                        ["parallel"] * 2)
        cons = _generic("%c", 2, [("%p", [a + b - 1, a], [Dim(0), Dim(1)])], ("%j", [a + b - 1, a], [Dim(0), Dim(1)]),
                        ["parallel"] * 2)
    else:  # the producer writes elements 1..a, the consumer reads 0..a
        prod = _generic("%p", 1, [("%a", [a], [Dim(0)])], ("%i", [a + 1], [Dim(0) + 1]), ["parallel"])
        cons = _generic("%c", 1, [("%p", [a + 1], [Dim(0)])], ("%j", [a + 1], [Dim(0)]), ["parallel"])
    return kind, prod + cons


@settings(max_examples=25)
@given(illegal_fusion())
def test_random_illegal_fusions_are_refused(case: tuple[str, str]) -> None:
    kind, text = case
    producer, consumer = parse_linalg(text)
    rep = check_fusion(producer, consumer)
    assert rep.status == "illegal" and rep.fused is None
    pb = loop_bounds(producer)
    write = producer.outputs[0].map
    written: dict[tuple[int, ...], int] = {}
    for p in itertools.product(*(range(b.lo, b.hi + 1) for b in pb)):
        written[write.evaluate(p)] = written.get(write.evaluate(p), 0) + 1
    if kind == "collision":
        w = rep.obligations[0].witness
        assert w is not None and written[tuple(w["element"])] >= 2
    else:
        w = rep.obligations[1].witness
        assert w is not None
        c = tuple(w["consumer_iteration"])
        assert consumer.inputs[0].map.evaluate(c) == tuple(w["element"])
        assert tuple(w["element"]) not in written


@settings(max_examples=20)
@given(st.integers(1, 3), st.integers(1, 3), st.sampled_from(["skew", "shift", "flatten", "swap-skew"]),
       st.integers(0, 10**6))
def test_random_non_permutation_fusions_agree_with_numpy(a: int, b: int, kind: str, seed: int) -> None:
    # MLIR refuses these (the write map is not a permutation); the consumer reads
    # exactly the written elements, so we fuse, and numpy agrees.
    d0, d1 = Dim(0), Dim(1)
    write: list[AffineExpr]
    shape: list[int]
    if kind == "skew":
        write, shape = [d0 + d1, d0], [a + b - 1, a]
    elif kind == "shift":
        write, shape = [d0 + 2, d1], [a + 2, b]
    elif kind == "flatten":
        write, shape = [d0 * b + d1], [a * b]
    else:
        write, shape = [d1, d0 + d1 * a], [b, a * b]
    prod = _generic("%p", 2, [("%a", [a, b], [d0, d1])], ("%i", shape, write), ["parallel"] * 2)
    cons = _generic("%c", 2, [("%p", shape, write)], ("%j", [a, b], [d0, d1]), ["parallel"] * 2)
    producer, consumer = parse_linalg(prod + cons)
    rep = check_fusion(producer, consumer)
    assert not rep.mlir.fusable
    assert rep.status == "legal", rep.reason
    assert rep.fused is not None
    rng = random.Random(seed)
    f, g = _payload(rng, 1), _payload(rng, 1)
    arr = np.arange(a * b, dtype=float).reshape(a, b) * 0.7 + rng.random()
    pres = _run_op([a, b], [(arr, producer.inputs[0].map)], np.full(tuple(shape), 0.5), producer.outputs[0].map, f,
                   False)
    want = _run_op([a, b], [(pres, consumer.inputs[0].map)], np.zeros((a, b)), consumer.outputs[0].map, g, False)
    (fa,) = [fo for fo in rep.fused if fo.value == "%a"]
    got = np.zeros((a, b))
    for c in itertools.product(range(a), range(b)):
        got[c] = g([f([float(arr[fa.map.evaluate(c)])])])
    assert np.array_equal(got, want)
    # Reading back through the inverse lands on the same iteration.
    assert all(fa.map.evaluate(c) == c for c in itertools.product(range(a), range(b)))


def test_fused_op_text_round_trips_through_the_parser() -> None:
    rep = _report("skew_legal.mlir")
    text = fused_generic_text(rep)
    assert text is not None
    (op,) = parse_linalg(text, strict=True)  # as MLIR reads it
    assert rep.fused is not None
    assert [o.map for o in op.operands] == [f.map for f in rep.fused]
    assert [o.value for o in op.operands] == ["%A", "%init2"]
    # The consumer's negation now takes the producer's exp, through renamed SSA values.
    assert "%p_e = math.exp %fa0 : f32" in op.payload and "%c_n = arith.negf %p_e : f32" in op.payload
    assert fused_generic_text(_report("skew_illegal.mlir")) is None
    # A producer that reads its init: the init becomes a fused input with its own proven map.
    src = (EXAMPLES / "transpose.mlir").read_text(encoding="utf-8").replace(
        "linalg.yield %in : f32", "%s = arith.addf %in, %out : f32\n    linalg.yield %s : f32", 1)
    rep = check_fusion(*fusion_pairs(parse_linalg(src))[0])
    assert rep.status == "legal" and rep.fused is not None
    assert [f.value for f in rep.fused] == ["%A", "%init", "%init2"]
    init = rep.fused[1]
    assert init.proof is not None and init.proof.proved
    assert init.map == AffineMap(2, 0, [Dim(0), Dim(1)])  # the consumer reads %producer[d0, d1] = %init[d0, d1]
    text = fused_generic_text(rep)
    assert text is not None and "%p_s = arith.addf %fa0, %fa1 : f32" in text


def test_multi_result_producer_uses_the_read_result() -> None:
    text = """
%r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d1, d0)>], iterator_types = ["parallel", "parallel"]}
    ins(%a : tensor<2x3xf32>) outs(%o0, %o1 : tensor<2x3xf32>, tensor<3x2xf32>) {
^bb0(%x: f32, %y: f32, %z: f32):
  %e = math.exp %x : f32
  linalg.yield %x, %e : f32, f32
} -> (tensor<2x3xf32>, tensor<3x2xf32>)
%c = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                     iterator_types = ["parallel", "parallel"]}
    ins(%r#1 : tensor<3x2xf32>) outs(%j : tensor<3x2xf32>) {
^bb0(%x: f32, %y: f32):
  %n = arith.negf %x : f32
  linalg.yield %n : f32
} -> tensor<3x2xf32>
"""
    rep = check_fusion(*fusion_pairs(parse_linalg(text))[0])
    transpose = parse_affine_map("affine_map<(d0, d1) -> (d1, d0)>")
    assert rep.status == "legal" and _fused_map(rep, "%a") == transpose
    assert rep.mlir.fused_producer_maps == (transpose,)  # result #1 is written transposed
    fused = fused_generic_text(rep)
    assert fused is not None and "%c_n = arith.negf %p_e : f32" in fused  # the second yielded value


def test_unwritten_element_confirmed_by_z3_on_large_domains() -> None:
    # A producer domain too large to enumerate: the witness is confirmed by z3.
    from verified_indexing.indexing_map import IndexingMap
    from verified_indexing.legality._proofs import not_written, reads_inside

    write = IndexingMap([(0, 999), (0, 999)], [Dim(0) * 2, Dim(1)])  # even rows only
    read = IndexingMap([(0, 1999), (0, 999)], [Dim(0), Dim(1)])
    v, w = reads_inside(read, write, 5.0)
    assert v.refuted and w is not None
    assert w["element"][0] % 2 == 1
    assert not_written(write, tuple(w["element"]), 5.0) is True
    assert not_written(write, (4, 7), 5.0) is False
