"""What the greedy driver's folds do to ``linalg.generic`` payloads, and how that
changes ``linalg-fuse-elementwise-ops``' decision on a pair (issue 24 follow-up).

Oracle: MLIR's real pass (``iree-opt``; skipped without IREE). For the folds
(:func:`fold_payload`, :func:`is_identity_copy`), one generic reading two
function arguments goes through the pass: the op is erased exactly when the model
says it is an identity copy, and otherwise the inputs it still reads are the
model's live block arguments. For the decisions, each op carries a location and
the pair's fate is observed by location: fused or its read dropped (the op at the
consumer's location no longer reads the producer's result, or the producer is
gone), left (it still reads it), or the consumer erased (no op has its location).
"""

from __future__ import annotations

import functools
import json
import re

import pytest
from test_cli_io import run

from verified_indexing.legality.linalg_fold import fold_payload, is_identity_copy
from verified_indexing.legality.linalg_ir import parse_linalg_module
from verified_indexing.mlir_driver import find_iree_opt, run_iree_opt

needs_iree = pytest.mark.skipif(find_iree_opt() is None, reason="iree-opt (iree-base-compiler) is not installed")

ID = "affine_map<(d0) -> (d0)>"


def _one(lines: list[str], yv: str, ty: str = "i32", consts: str = "") -> str:
    """A function with one generic reading %x (block argument %a) and %y (%b)."""
    t = f"tensor<4x{ty}>"
    body = "".join(f"    {ln}\n" for ln in lines)
    return f"""func.func @f(%x: {t}, %y: {t}) -> {t} {{
  %e = tensor.empty() : {t}
{consts}  %1 = linalg.generic {{indexing_maps = [{ID}, {ID}, {ID}], iterator_types = ["parallel"]}}
      ins(%x, %y : {t}, {t}) outs(%e : {t}) {{
  ^bb0(%a: {ty}, %b: {ty}, %o: {ty}):
{body}    linalg.yield {yv} : {ty}
  }} -> {t} loc("1")
  return %1 : {t}
}}
"""


def _c(name: str, v: str, ty: str = "i32") -> str:
    return f"{name} = arith.constant {v}" + ("" if ty == "i1" else f" : {ty}")


# (payload lines, the yielded value, element type): each fold the model applies, and some it must not
FOLDS = {
    "x + 0": ([_c("%z", "0"), "%s = arith.addi %a, %z : i32"], "%s", "i32"),
    "0 + x": ([_c("%z", "0"), "%s = arith.addi %z, %a : i32"], "%s", "i32"),
    "x * 1, then * y": ([_c("%u", "1"), "%s = arith.muli %a, %u : i32", "%t = arith.muli %s, %b : i32"], "%t", "i32"),
    "x * 0 + y": ([_c("%z", "0"), "%s = arith.muli %a, %z : i32", "%t = arith.addi %s, %b : i32"], "%t", "i32"),
    "x - x + y": (["%s = arith.subi %a, %a : i32", "%t = arith.addi %s, %b : i32"], "%t", "i32"),
    "x ^ x | y": (["%s = arith.xori %a, %a : i32", "%t = arith.ori %s, %b : i32"], "%t", "i32"),
    "x & 0 + y": ([_c("%z", "0"), "%s = arith.andi %z, %a : i32", "%t = arith.addi %s, %b : i32"], "%t", "i32"),
    "x & x": (["%s = arith.andi %a, %a : i32"], "%s", "i32"),
    "maxsi x x": (["%s = arith.maxsi %a, %a : i32"], "%s", "i32"),
    "x rem 1 + y": ([_c("%u", "1"), "%s = arith.remsi %a, %u : i32", "%t = arith.addi %s, %b : i32"], "%t", "i32"),
    "x & -1": ([_c("%m", "-1"), "%s = arith.andi %a, %m : i32"], "%s", "i32"),
    "0 - x * y (nothing folds)": ([_c("%z", "0"), "%s = arith.subi %z, %a : i32", "%t = arith.muli %s, %b : i32"],
                                  "%t", "i32"),
    "x / 1": ([_c("%u", "1"), "%s = arith.divsi %a, %u : i32"], "%s", "i32"),
    "select true": ([_c("%t", "true", "i1"), "%s = arith.select %t, %a, %b : i32"], "%s", "i32"),
    "select false": ([_c("%t", "false", "i1"), "%s = arith.select %t, %a, %b : i32"], "%s", "i32"),
    "select c x x": (["%c = arith.cmpi slt, %a, %b : i32", "%s = arith.select %c, %a, %a : i32"], "%s", "i32"),
    "x * y (nothing folds)": (["%s = arith.muli %a, %b : i32"], "%s", "i32"),
    "x + x (nothing folds)": (["%s = arith.addi %a, %a : i32"], "%s", "i32"),
    "x * 3 (nothing folds)": ([_c("%k", "3"), "%s = arith.muli %a, %k : i32"], "%s", "i32"),
    "f: x * 1.0": ([_c("%u", "1.0", "f32"), "%s = arith.mulf %a, %u : f32"], "%s", "f32"),
    "f: x + -0.0": ([_c("%z", "-0.0", "f32"), "%s = arith.addf %a, %z : f32"], "%s", "f32"),
    "f: x + 0.0 (not folded)": ([_c("%z", "0.0", "f32"), "%s = arith.addf %a, %z : f32"], "%s", "f32"),
    "f: x - 0.0": ([_c("%z", "0.0", "f32"), "%s = arith.subf %a, %z : f32"], "%s", "f32"),
    "f: x / 1.0 * y": ([_c("%u", "1.0", "f32"), "%s = arith.divf %a, %u : f32", "%t = arith.mulf %s, %b : f32"],
                       "%t", "f32"),
    "f: -(-x)": (["%s = arith.negf %a : f32", "%t = arith.negf %s : f32"], "%t", "f32"),
    "f: maximumf x x": (["%s = arith.maximumf %a, %a : f32"], "%s", "f32"),
    "f: max(x, 0.0) (nothing folds)": ([_c("%z", "0.0", "f32"), "%s = arith.maximumf %a, %z : f32"], "%s", "f32"),
    "f: x + 1.0 (nothing folds)": ([_c("%u", "1.0", "f32"), "%s = arith.addf %a, %u : f32"], "%s", "f32"),
    "f: 1.0 / x (nothing folds)": ([_c("%u", "1.0", "f32"), "%s = arith.divf %u, %a : f32"], "%s", "f32"),
    "f: x * x (nothing folds)": (["%s = arith.mulf %a, %a : f32"], "%s", "f32"),
    "f: x - x (not folded)": (["%s = arith.subf %a, %a : f32", "%t = arith.addf %s, %b : f32"], "%t", "f32"),
    "f: constants only, + y": ([_c("%p", "2.0", "f32"), _c("%q", "3.0", "f32"), "%s = arith.mulf %p, %q : f32",
                                "%t = arith.addf %s, %b : f32"], "%t", "f32"),
    "yield y": ([], "%b", "i32"),
}


def _fate(text: str, after: str | None = None) -> tuple[bool, set[str]]:
    """(the op was erased, the function arguments it still reads) after MLIR's pass (``after``: its output)."""
    if after is None:
        after = run_iree_opt(text, ["--linalg-fuse-elementwise-ops", "--mlir-print-debuginfo",
                                    "--mlir-print-local-scope"])
    ops = [op for op in parse_linalg_module(after).ops if re.match(r'\s*loc\("1"\)', after[op.end:])]
    if not ops:
        return True, set()
    names = {"%arg0": "%a", "%arg1": "%b"}
    return False, {names[o.value] for o in ops[0].inputs if o.value in names}


@functools.lru_cache(maxsize=1)
def _fold_outputs() -> dict[str, str]:
    """MLIR's pass on every case of FOLDS, in one iree-opt run."""
    names = sorted(FOLDS)
    texts = [_one(*FOLDS[n]) for n in names]
    out = run_iree_opt("\n// -----\n".join(texts), ["--split-input-file", "--linalg-fuse-elementwise-ops",
                                                    "--mlir-print-debuginfo", "--mlir-print-local-scope"])
    chunks = out.split("// -----")
    assert len(chunks) == len(names)
    return dict(zip(names, chunks))


@needs_iree
@pytest.mark.parametrize("case", sorted(FOLDS))
def test_the_folds_agree_with_mlir(case: str) -> None:
    lines, yv, ty = FOLDS[case]
    text = _one(lines, yv, ty)
    (op,) = parse_linalg_module(text).ops
    fp = fold_payload(op)
    assert fp is not None and fp.uncertain == "", fp
    erased, reads = _fate(text, _fold_outputs()[case])
    assert is_identity_copy(op, fp) == erased, (erased, reads, fp)
    if not erased:
        assert set(fp.live) - {"%o"} == reads, (reads, fp)


# folds the model does not follow: it must say so (uncertain), not guess; the pass does fold each of them
NOT_MODELLED = {
    "(x - y) + y": (["%s = arith.subi %a, %b : i32", "%t = arith.addi %s, %b : i32"], "%t", "i32", ""),
    # (without the module's constants: fold_payload(op) alone)
    "x * a captured 1.0": (["%s = arith.mulf %a, %cu : f32"], "%s", "f32", "  %cu = arith.constant 1.0 : f32\n"),
    "trunci (extsi x)": (["%s = arith.extsi %a : i32 to i64", "%t = arith.trunci %s : i64 to i32"], "%t", "i32", ""),
}


@needs_iree
@pytest.mark.parametrize("case", sorted(NOT_MODELLED))
def test_what_is_not_modelled_is_uncertain(case: str) -> None:
    lines, yv, ty, consts = NOT_MODELLED[case]
    text = _one(lines, yv, ty, consts)
    (op,) = parse_linalg_module(text).ops
    fp = fold_payload(op)
    assert fp is not None and fp.uncertain, fp
    assert not is_identity_copy(op, fp)
    erased, _ = _fate(text)
    assert erased  # the pass folded it to an identity copy: a syntactic model would have been wrong


def _ident(name: str, src: str) -> str:
    return f"""  {name} = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel"]}}
      ins({src} : tensor<4xf32>) outs(%e : tensor<4xf32>) {{
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }} -> tensor<4xf32> loc("{name[1:]}")
"""


def _ints(body: str, ret: str) -> str:
    n = ret.count(",") + 1
    types = ", ".join(["tensor<4xi32>"] * n)
    return (f"func.func @f(%x: tensor<4xi32>, %y: tensor<4xi32>) -> ({types}) {{\n"
            "  %e = tensor.empty() : tensor<4xi32>\n" + body + f"  return {ret} : {types}\n}}\n")


def _igen(name: str, srcs: list[str], lines: list[str], yv: str) -> str:
    bargs = ", ".join([f"%a{i}: i32" for i in range(len(srcs))] + ["%o: i32"])
    maps = ", ".join([ID] * (len(srcs) + 1))
    body = "".join(f"    {ln}\n" for ln in lines)
    t = ", ".join(["tensor<4xi32>"] * len(srcs))
    return (f'  {name} = linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel"]}}\n'
            f"      ins({', '.join(srcs)} : {t}) outs(%e : tensor<4xi32>) {{\n  ^bb0({bargs}):\n{body}"
            f'    linalg.yield {yv} : i32\n  }} -> tensor<4xi32> loc("{name[1:]}")\n')


SQ = _igen("%1", ["%x"], ["%m = arith.muli %a0, %a0 : i32"], "%m")


DYN = """#id = affine_map<(d0) -> (d0)>
func.func @f(%x: tensor<?xf32>, %y: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<?xf32>) outs(%x : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<?xf32> loc("1")
  %2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%1, %y : tensor<?xf32>, tensor<?xf32>) outs(%y : tensor<?xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.addf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<?xf32> loc("2")
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%y : tensor<?xf32>) outs(%1 : tensor<?xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<?xf32> loc("3")
  return %2, %3 : tensor<?xf32>, tensor<?xf32>
}
"""


SIZER = """func.func @f(%x: tensor<4x4xf32>, %y: tensor<4xf32>, %e2: tensor<4x4xf32>, %o: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4x4xf32>) {
  %1 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
      iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x4xf32>) outs(%e2 : tensor<4x4xf32>) {
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m : f32
  } -> tensor<4x4xf32> loc("1")
  %2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>,
      affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]}
      ins(%1, %y : tensor<4x4xf32>, tensor<4xf32>) outs(%o : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %s = arith.addf %b, %c : f32
    linalg.yield %s : f32
  } -> tensor<4xf32> loc("2")
  return %2, %1 : tensor<4xf32>, tensor<4x4xf32>
}
"""


def _pairs() -> dict[str, tuple[str, str, str, str]]:
    """(function, producer, consumer, the fate the model gives: rewrites / leaves / erased / unknown)."""
    from test_linalg_mlir_pass import FILL, _binary, _func, _unary

    return {
        # the consumer is an identity copy: fused when the pass fuses the pair (tried first), erased otherwise
        "identity consumer, one use": (_func(_unary("%1", "%x") + _ident("%2", "%1")), "%1", "%2", "rewrites"),
        "identity consumer, producer returned": (_func(_unary("%1", "%x") + _ident("%2", "%1"), "%2, %1", 2),
                                                 "%1", "%2", "erased"),
        "identity consumer, then a reader of both": (
            _func(_unary("%1", "%x") + _ident("%2", "%1") + _binary("%3", "%2", "%1"), "%3"), "%1", "%2", "erased"),
        # folded to an identity copy, the producer returned
        "x * 1 consumer": (_ints(SQ + _igen("%2", ["%1"], ["%c1 = arith.constant 1 : i32",
                                                          "%s = arith.muli %a0, %c1 : i32"], "%s"), "%2, %1"),
                           "%1", "%2", "erased"),
        # folded, the read of %1 dropped, then an identity copy of %y
        "x - x + y consumer": (_ints(SQ + _igen("%2", ["%1", "%y"], ["%s = arith.subi %a0, %a0 : i32",
                                                                    "%t = arith.addi %s, %a1 : i32"], "%t"),
                                     "%2, %1"), "%1", "%2", "erased"),
        # folded, the read of %1 dropped; the consumer stays (y * y)
        "x * 0 + y * y consumer": (_ints(SQ + _igen("%2", ["%1", "%y"], [
            "%c0 = arith.constant 0 : i32", "%s = arith.muli %a0, %c0 : i32", "%u = arith.muli %a1, %a1 : i32",
            "%t = arith.addi %u, %s : i32"], "%t"), "%2, %1"), "%1", "%2", "rewrites"),
        # the producer is an identity copy: erased before its consumers are visited, even with two uses
        "identity producer": (_func(_ident("%1", "%x") + _unary("%2", "%1")), "%1", "%2", "rewrites"),
        "identity producer, returned too": (_func(_ident("%1", "%x") + _unary("%2", "%1"), "%2, %1", 2),
                                            "%1", "%2", "rewrites"),
        # the pass first fuses %0 (one use) into the identity copy %1, which then has two uses
        "identity producer fed by a generic": (_func(_unary("%0", "%x", loc="0") + _ident("%1", "%0")
                                                     + _unary("%2", "%1"), "%2, %1", 2), "%1", "%2", "leaves"),
        # %0 has two uses: the identity copy %1 is erased, %2 reads %0
        "identity producer fed by a generic with two uses": (
            _func(_unary("%0", "%x", loc="0") + _ident("%1", "%0") + _unary("%2", "%1"), "%2, %1, %0", 3),
            "%1", "%2", "rewrites"),
        # a constant defined outside the payload, read from the function (1.0: the op folds to an identity)
        "x * a captured 1.0 consumer": (_func(_unary("%1", "%x") + _unary("%2", "%1", "arith.mulf %a, %cst"),
                                              "%2, %1", 2), "%1", "%2", "erased"),
        # RemoveOutsDependency: an init the payload does not read becomes a fresh tensor.empty (static shapes):
        # %3's outs(%1) is then no use of %1, which has one use left
        "an unread init is no use": (_func(_unary("%1", "%x") + _binary("%2", "%1", "%y")
                                           + _unary("%3", "%y").replace("outs(%e", "outs(%1"), "%2, %3", 2),
                                     "%1", "%2", "rewrites"),
        "the unread init's pair itself": (_func(_unary("%1", "%x") + _binary("%2", "%1", "%y")
                                                + _unary("%3", "%y").replace("outs(%e", "outs(%1"), "%2, %3", 2),
                                          "%1", "%3", "rewrites"),
        "a read init is a use": (_func(_unary("%1", "%x") + _binary("%2", "%1", "%y")
                                       + _unary("%3", "%y", "arith.addf %a, %o").replace("outs(%e", "outs(%1"),
                                       "%2, %3", 2), "%1", "%2", "leaves"),
        # with ? sizes the fresh tensor.empty reads them with tensor.dim %1: still a use
        "an unread dynamic init is a use (tensor.dim)": (DYN, "%1", "%2", "leaves"),
        # a consumer nothing uses is erased (trivially dead) before FuseElementwiseOps sees it
        "a dead consumer, the producer returned": (_func(_unary("%1", "%x") + _unary("%2", "%1"), "%1"),
                                                   "%1", "%2", "erased"),
        "a dead consumer of a dead producer": (_func(_unary("%1", "%x") + _unary("%2", "%1"), "%x"), "%1", "%2",
                                               "erased"),
        # a fill into a fill: the second is folded into the generic (FoldFillWithGenericOp)
        "a fill into a fill, then a generic": (
            _func(FILL + '  %g = linalg.fill ins(%cst : f32) outs(%f : tensor<4xf32>) -> tensor<4xf32> loc("g")\n'
                  + _binary("%2", "%g", "%y")), "%g", "%2", "rewrites"),
        # %2's payload, folded (x * 0 + y * y), no longer reads %1: no use, %1 has one use left (%3)
        "a reader that no longer reads once folded": (_ints(SQ + _igen("%2", ["%1", "%y"], [
            "%c0 = arith.constant 0 : i32", "%s = arith.muli %a0, %c0 : i32", "%u = arith.muli %a1, %a1 : i32",
            "%t = arith.addi %u, %s : i32"], "%t") + _igen("%3", ["%1", "%y"], ["%t = arith.subi %a0, %a1 : i32"],
                                                             "%t"), "%2, %3"), "%1", "%3", "rewrites"),
        # not modelled: another reader's (a - b) + b, which may drop its read of %1
        "another reader's fold not modelled": (_ints(SQ + _igen("%2", ["%1", "%y"], [
            "%s = arith.subi %a1, %a0 : i32", "%t = arith.addi %s, %a0 : i32"], "%t")
            + _igen("%3", ["%1", "%y"], ["%t = arith.subi %a0, %a1 : i32"], "%t"), "%2, %3"), "%1", "%3", "unknown"),
        # %2 never reads %1, but %1 is its only operand giving loop d1 a size: not dropped, a second use
        "an unread input that sizes a loop stays": (SIZER, "%1", "%2", "leaves"),
        # not modelled: (a - b) + b folds to a (the consumer is then an identity copy of %1)
        "(x - y) + y consumer": (_ints(SQ + _igen("%2", ["%1", "%y"], ["%s = arith.subi %a0, %a1 : i32",
                                                                      "%t = arith.addi %s, %a1 : i32"], "%t"),
                                       "%2, %1"), "%1", "%2", "unknown"),
    }


def _fate_of_pair(text: str, producer: str, consumer: str) -> str:
    after = run_iree_opt(text, ["--linalg-fuse-elementwise-ops", "--mlir-print-debuginfo",
                                "--mlir-print-local-scope"])
    by_loc = {}
    for op in parse_linalg_module(after).ops:
        m = re.match(r'\s*loc\("(\w+)"\)', after[op.end:])
        if m is not None:
            by_loc[m.group(1)] = op
    c = by_loc.get(consumer[1:])
    if c is None:
        return "erased"
    p = by_loc.get(producer[1:])
    return "rewrites" if p is None or not any(o.value in p.results for o in c.operands) else "leaves"


@needs_iree
@pytest.mark.parametrize("case", sorted(_pairs()))
def test_the_decision_with_folds_agrees_with_the_pass(case: str) -> None:
    from verified_indexing.legality.linalg import _pass_decision_as_written, unused_results

    text, producer, consumer, expected = _pairs()[case]
    seen = _fate_of_pair(text, producer, consumer)
    code, out, err = run("fuse", "-", "--producer", producer, "--consumer", consumer, "--json", stdin=text)
    assert code in (0, 1, 2), err
    data = json.loads(out)
    d = (data["results"][0] if "results" in data else data)["mlir"]["pass"]
    model = ("unknown" if d["fuses"] is None else "rewrites" if d["fuses"]
             else "erased" if d["decided_by"] in ("EraseIdentityLinalgOp", "trivially dead") else "leaves")
    assert model == expected, d
    if model != "unknown":
        assert model == seen, (seen, d)
    else:  # the abstention is needed: the decision as written (no folds) says what the pass does not do
        from verified_indexing.legality.linalg import producer_uses

        ops = list(parse_linalg_module(text).ops)
        p = next(o for o in ops if o.name == producer)
        c = next(o for o in ops if o.name == consumer)
        k = next(i for i, o in enumerate(c.operands) if o.value in p.results)
        naive = _pass_decision_as_written(p, c, k, producer_uses(text, p, ops), unused_results(text, p))
        assert ("rewrites" if naive.fuses else "leaves") != seen, (seen, naive)


def test_the_text_says_the_consumer_is_erased() -> None:
    text = _pairs()["identity consumer, producer returned"][0]
    code, out, _ = run("fuse", "-", "--producer", "%1", "--consumer", "%2", stdin=text)
    assert code in (0, 1, 2)
    assert "MLIR's pass in this function: erases the consumer (decided by EraseIdentityLinalgOp)" in out, out
    text = _pairs()["(x - y) + y consumer"][0]
    code, out, _ = run("fuse", "-", "--producer", "%1", "--consumer", "%2", stdin=text)
    assert code in (0, 1, 2)
    assert "MLIR's pass in this function: unknown (decided by folding)" in out, out


def test_an_undecided_decision_reads_unknown() -> None:
    """``fuses``/``predicted`` None (a fold not modelled) reads 'unknown', not 'refuses'."""
    from verified_indexing.legality.linalg import PassDecision
    from verified_indexing.mlir_driver import Decision

    assert repr(PassDecision(None, "folding", "why", 1)) == "<PassDecision unknown (folding): why>"
    assert "predicted unknown" in repr(Decision("%1", "%2", None, False, "why", "folding"))
    assert "predicted refuses" in repr(Decision("%1", "%2", False, False, "why", "control function"))


_T = "tensor<3x3xf32>"
_TR, _ID2 = "affine_map<(d0, d1) -> (d1, d0)>", "affine_map<(d0, d1) -> (d0, d1)>"


def _copy(maps: str, payload: str, yv: str) -> str:
    return f"""func.func @f(%x: {_T}, %e: {_T}) -> {_T} {{
  %1 = linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel", "parallel"]}}
      ins(%x : {_T}) outs(%e : {_T}) {{
  ^bb0(%a: f32, %o: f32):
{payload}    linalg.yield {yv} : f32
  }} -> {_T} loc("1")
  return %1 : {_T}
}}
"""


COPIES = {  # (function, whether the model calls it an identity copy)
    "transposed maps, all the same": (_copy(f"{_TR}, {_TR}", "", "%a"), True),
    "a transposed input only": (_copy(f"{_TR}, {_ID2}", "", "%a"), False),
    "yields its init": (_copy(f"{_ID2}, {_ID2}", "", "%o"), True),
    "a dead linalg.index": (_copy(f"{_ID2}, {_ID2}", "    %i = linalg.index 0 : index\n", "%a"), True),
    "-(-x)": (_copy(f"{_ID2}, {_ID2}", "    %n = arith.negf %a : f32\n    %m = arith.negf %n : f32\n", "%m"), True),
}


@needs_iree
@pytest.mark.parametrize("case", sorted(COPIES))
def test_identity_copies_agree_with_mlir(case: str) -> None:
    text, identity = COPIES[case]
    (op,) = parse_linalg_module(text).ops
    assert is_identity_copy(op) == identity
    erased, _ = _fate(text)
    assert erased == identity
