"""Random Linalg pairs with symbolic sizes (``tensor<?x?xf32>``), multi-result
producers and payloads reading their ``outs``: every ``legal`` verdict agrees
with the numpy interpreter at several concrete sizes (the fused op printed, read
back and interpreted equals the pair), every ``illegal`` witness reproduces."""

from __future__ import annotations

import itertools
import random
import re

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from linalg_interpreter import eval_payload, run_ops
from test_linalg_whole_op import _env, agrees_at

from verified_indexing.legality.linalg import FusionReport, check_fusion, fusion_candidates, parse_linalg, semantics

MAPS2 = {"id": "(d0, d1)", "tr": "(d1, d0)", "row": "(d0)", "col": "(d1)"}
OPS = ["arith.addf", "arith.mulf", "arith.subf", "arith.maximumf"]


def _ty(m: str) -> str:
    return "tensor<?xf32>" if m in ("row", "col") else "tensor<?x?xf32>"


def _body(rng: random.Random, args: list[str], n_yield: int) -> list[str]:
    vals = list(args)
    lines = []
    for i in range(rng.randint(0, 3)):
        op = rng.choice(OPS)
        a, b = rng.choice(vals), rng.choice(vals)
        lines.append(f"    %v{i} = {op} {a}, {b} : f32")
        vals.append(f"%v{i}")
    ys = [rng.choice(vals[len(args) - 1 :] if len(vals) > len(args) else vals) for _ in range(n_yield)]
    lines.append(f"    linalg.yield {', '.join(ys)} : {', '.join(['f32'] * n_yield)}")
    return lines


def _generic(name: str, ins: list[tuple[str, str]], outs: list[tuple[str, str]], iters: list[str],
             body: list[str], results: int) -> str:
    maps = ", ".join(f"affine_map<(d0, d1) -> {MAPS2[m]}>" for _, m in ins + outs)
    args = ", ".join(f"%b{i}: f32" for i in range(len(ins) + len(outs)))
    it = ", ".join(f'"{t}"' for t in iters)
    res = ", ".join(_ty(m) for _, m in outs)
    lhs = name if results == 1 else f"{name}:{results}"
    ins_txt = f"ins({', '.join(v for v, _ in ins)} : {', '.join(_ty(m) for _, m in ins)}) " if ins else ""
    return (f"  {lhs} = linalg.generic {{indexing_maps = [{maps}], iterator_types = [{it}]}}\n"
            f"      {ins_txt}outs({', '.join(v for v, _ in outs)} : {res}) {{\n"
            f"  ^bb0({args}):\n" + "\n".join(body) + "\n"
            f"  }} -> {res if results == 1 else '(' + res + ')'}\n")


@st.composite
def pairs(draw: st.DrawFn) -> str:
    seed = draw(st.integers(0, 10**6))
    rng = random.Random(seed)
    n_res = draw(st.integers(1, 2))
    out_maps = [draw(st.sampled_from(["id", "tr"])) for _ in range(n_res)]
    kind = draw(st.sampled_from(["perm", "perm", "perm", "projection"]))
    if kind == "projection":
        out_maps = ["row"] * n_res
    in_maps = [draw(st.sampled_from(["id", "tr", "row", "col"])) for _ in range(draw(st.integers(1, 2)))]
    if kind == "projection" and "id" not in in_maps and "tr" not in in_maps:
        in_maps.append("id")  # some operand gives the projected loop its size
    reads_out = draw(st.booleans())
    p_ins = [(f"%x{i}", m) for i, m in enumerate(in_maps)]
    p_outs = [(f"%o{i}", m) for i, m in enumerate(out_maps)]
    p_args = [f"%b{i}" for i in range(len(p_ins) + (len(p_outs) if reads_out else 0))]
    prod = _generic("%p", p_ins, p_outs, ["parallel", "parallel"], _body(rng, p_args, n_res), n_res)
    r = rng.randrange(n_res)
    res_name = "%p" if n_res == 1 else f"%p#{r}"
    read = draw(st.sampled_from(["id", "tr"])) if out_maps[r] != "row" else draw(st.sampled_from(["row", "col"]))
    into_outs = out_maps[r] != "row" and draw(st.integers(0, 3)) == 0
    c_ins = [] if into_outs else [(res_name, read)]
    if into_outs or draw(st.booleans()):
        c_ins.append(("%y", draw(st.sampled_from(["id", "tr"]))))
    c_outs = [(res_name, read)] if into_outs else [("%j", "id")]
    c_args = [f"%b{i}" for i in range(len(c_ins) + 1)]
    cons = _generic("%c", c_ins, c_outs, ["parallel", "parallel"],
                    _body(rng, c_args if draw(st.booleans()) else c_args[:-1], 1), 1)
    return "func.func @f() {\n" + prod + cons + "}\n"


def _sizes(rep: FusionReport) -> list[dict[str, int]]:
    assert rep.sizes is not None
    names = rep.sizes.names
    pts = [dict.fromkeys(names, 2), dict(zip(names, (1, 3, 2, 1))), dict(zip(names, (3, 1, 2, 2)))]
    return [dict(zip(names, [p.get(n, 2) for n in names])) for p in pts]


def _witness_reproduces(rep: FusionReport) -> None:
    bad = rep.otherwise or next(o for o in rep.obligations if o.verdict.refuted and o.witness is not None)
    w = bad.witness
    assert w is not None
    sizes = w.get("sizes", {})
    assert rep.sizes is not None
    env = _env(rep, {n: sizes.get(n, 1) for n in rep.sizes.names}, 1)
    prod = rep.producer
    r = prod.results.index(rep.consumer.operands[rep.operand_index].value)
    if "producer_iterations" in w:
        p, q = (tuple(x) for x in w["producer_iterations"])
        out = prod.outputs[r].map
        assert p != q and out.evaluate(p) == out.evaluate(q) == tuple(w["element"])
        if "inputs" in w:  # the two iterations write different values for the witness's inputs
            inputs = w["inputs"]
            vals = []
            for it in (p, q):
                args = [inputs[f"{o.value}{list(o.map.evaluate(it))}"] for o in prod.operands]
                vals.append(eval_payload(prod, args, it, env)[r])
            assert not (vals[0] == vals[1] or (vals[0] != vals[0] and vals[1] != vals[1])), (vals, w)
    elif "producer_iteration" in w:  # outs: an element the producer writes and the consumer never does
        el = prod.outputs[r].map.evaluate(tuple(w["producer_iteration"]))
        assert list(el) == w["element"]
        cons = rep.consumer
        out = cons.operands[rep.operand_index].map
        shapes = {o.value: np.shape(env[o.value]) for o in cons.operands if o.value in env}
        sizes_c = [1] * cons.num_loops
        for o in cons.operands:
            for res, n in zip(o.map.results, shapes.get(o.value, ())):
                if hasattr(res, "index") and type(res).__name__ == "Dim":
                    sizes_c[res.index] = n
        assert all(out.evaluate(it) != el for it in itertools.product(*(range(n) for n in sizes_c)))
    else:
        c = tuple(w["consumer_iteration"])
        el = tuple(w["element"])
        assert rep.consumer.operands[rep.operand_index].map.evaluate(c) == el
        shape = [env[o.value].shape for o in prod.operands if o.map.num_results == prod.num_loops][:1]
        loops = [range(s) for s in shape[0]] if shape else []
        assert all(prod.outputs[r].map.evaluate(it) != el for it in itertools.product(*loops))


COUNTS = {"legal": 0, "legal when": 0, "illegal": 0, "unknown": 0, "into outs": 0}


@settings(max_examples=40, deadline=None)
@given(pairs())
def test_random_symbolic_pairs_agree_with_the_interpreter(text: str) -> None:
    ops = parse_linalg(text)
    for p, c, k in fusion_candidates(ops):
        rep = check_fusion(p, c, operand_index=k)
        COUNTS["legal when" if rep.otherwise is not None else rep.status] += 1
        COUNTS["into outs"] += not c.operands[k].is_input and rep.status == "legal"
        if rep.otherwise is not None:
            _witness_reproduces(rep)  # the sizes excluded by the condition really fail
        if rep.status == "legal":
            assert rep.whole_op is not None and rep.whole_op.verdict.proved
            assert rep.sizes is not None
            for pt in _sizes(rep):
                if not rep.holds_at([pt[n] for n in rep.sizes.names]):
                    continue
                env = _env(rep, pt, 0)
                try:
                    run_ops([p, c], dict(env))
                except IndexError:
                    continue  # the pair itself reads out of bounds at these sizes
                assert agrees_at(rep, pt), (text, pt)
        elif rep.status == "illegal":
            _witness_reproduces(rep)
        else:
            assert rep.reason


def test_the_property_reached_every_verdict() -> None:
    # Runs after the property (file order): both legal and illegal were exercised.
    if sum(COUNTS.values()):
        assert COUNTS["legal"] > 0 and COUNTS["legal when"] + COUNTS["illegal"] > 0, COUNTS


MUTATIONS = [
    ("arith.addf", "arith.mulf"), ("arith.mulf", "arith.addf"), ("arith.subf", "arith.addf"),
    ("(d0, d1) -> (d1, d0)", "(d0, d1) -> (d0, d1)"), ("(d0, d1) -> (d0, d1)>", "(d0, d1) -> (d1, d0)>"),
    ("%fa0", "%fa1"), ("%fa1", "%fa0"), ("%fa1", "%fa2"), ("ins(%x0, %x1", "ins(%x1, %x0"),
    ("(d0, d1) -> (d1)>", "(d0, d1) -> (d0)>"),
]


@settings(max_examples=30, deadline=None)
@given(pairs(), st.integers(0, len(MUTATIONS) - 1), st.integers(0, 3))
def test_whole_op_proof_is_sound_on_mutated_fused_ops(text: str, which: int, nth: int) -> None:
    # Soundness of the whole-op proof itself: a mutated fused op (a wrong operation,
    # map, block argument or operand order) that the proof still calls equal must
    # agree with the pair under the interpreter at every size tried.
    from verified_indexing.errors import VerifiedIndexingError
    from verified_indexing.legality.linalg import fused_generic_text

    ops = parse_linalg(text)
    for p, c, k in fusion_candidates(ops):
        rep = check_fusion(p, c, operand_index=k)
        fused = fused_generic_text(rep)
        if fused is None:
            continue
        old, new = MUTATIONS[which]
        starts = [m.start() for m in re.finditer(re.escape(old), fused)]
        if not starts:
            continue
        at = starts[nth % len(starts)]
        mutated = fused[:at] + new + fused[at + len(old):]
        try:
            (mop,) = parse_linalg(mutated)
        except VerifiedIndexingError:
            continue  # the mutation broke the op (a map of the wrong rank...)
        from verified_indexing.legality.linalg_semantics import prove_fused_equivalent

        v, _ = prove_fused_equivalent(semantics(rep), mop)
        assert v.status in ("proved", "refuted", "unknown"), v
        if not v.proved:
            continue
        assert rep.sizes is not None
        for pt in _sizes(rep):
            if not rep.holds_at([pt[n] for n in rep.sizes.names]):
                continue
            env = _env(rep, pt, 3)
            try:
                want = run_ops([p, c], dict(env))
                got = run_ops([mop], dict(env))
            except (IndexError, ValueError, KeyError, TypeError, NotImplementedError):
                # the mutated op does not run at these shapes (loop sizes, bounds, an ill-typed value), or uses a
                # value defined nowhere (the interpreter's NotImplementedError); a dead statement may do so and
                # still yield the pair's values, which the proof rightly says
                continue
            assert all(np.array_equal(want[a], got[b]) for a, b in zip(c.results, mop.results)), (mutated, pt)


def test_outs_coverage_witness_reproduces() -> None:
    from test_linalg_whole_op import FILL_MATMUL

    ((p, c, k),) = fusion_candidates(parse_linalg(FILL_MATMUL))
    rep = check_fusion(p, c, operand_index=k)
    assert rep.otherwise is not None and "producer_iteration" in (rep.otherwise.witness or {})
    _witness_reproduces(rep)
