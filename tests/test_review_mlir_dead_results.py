"""Review: a multi-result producer that is an identity copy once its unused results are erased.

MLIR's ``linalg-fuse-elementwise-ops`` runs linalg.generic's canonicalization: a result nothing uses (its
init unread) is erased, then the inputs only it read; ``%p:2`` yielding ``(x * x, x)`` with ``%p#0`` unused
becomes an identity copy of ``x`` and ``EraseIdentityLinalgOp`` erases it: its readers read ``x``. ``fuse``
said 'leaves the pair (control function: %p has 2 uses)'. Oracle: iree-opt's output (every op carries a
location; the pair is rewritten when the op at the consumer's location no longer reads the producer's).
"""

from __future__ import annotations

import json
import re

import pytest
from test_cli_io import run

from verified_indexing.mlir_driver import find_iree_opt, run_iree_opt

needs_iree = pytest.mark.skipif(find_iree_opt() is None, reason="iree-opt (iree-base-compiler) is not installed")


def _func(second: str, readers: str, ret: str, n_ret: int) -> str:
    t = "tensor<4xf32>"
    types = ", ".join([t] * n_ret)
    return f"""#id = affine_map<(d0) -> (d0)>
func.func @f(%x: {t}, %y: {t}) -> ({types}) {{
  %e = tensor.empty() : {t}
  %p:2 = linalg.generic {{indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}}
      ins(%x : {t}) outs(%e, %e : {t}, {t}) {{
  ^bb0(%a: f32, %o0: f32, %o1: f32):
    %m = arith.mulf %a, %a : f32
    linalg.yield %m, {second} : f32, f32
  }} -> ({t}, {t}) loc("p")
{readers}  return {ret} : {types}
}}
"""


def _reader(name: str, src: str, op: str) -> str:
    return f"""  {name} = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel"]}}
      ins({src} : tensor<4xf32>) outs(%e : tensor<4xf32>) {{
  ^bb0(%a: f32, %o: f32):
    %m = {op} : f32
    linalg.yield %m : f32
  }} -> tensor<4xf32> loc("{name[1:]}")
"""


READERS = _reader("%c", "%p#1", "arith.negf %a") + _reader("%r", "%p#1", "arith.mulf %a, %a")
CASES = {
    # %p#0 unused: erased, %p then yields x (an identity copy), erased: %c and %r read %x
    "unused first result, the second yields the input": (_func("%a", READERS, "%c, %r", 2), "rewrites"),
    # %p#0 returned: kept, %p is no identity copy; two uses: left
    "both results used": (_func("%a", READERS, "%c, %r, %p#0", 3), "leaves"),
    # %p#0 unused but the second result is computed: no identity copy; two uses: left
    "unused first result, the second computed": (_func("%m", READERS, "%c, %r", 2), "leaves"),
}


def _fate(text: str) -> str:
    after = run_iree_opt(text, ["--linalg-fuse-elementwise-ops", "--mlir-print-debuginfo", "--mlir-print-local-scope"])
    ops: dict[str, tuple[str, str]] = {}
    for m in re.finditer(r'(%[\w#:]+) = linalg\.generic(.*?)\n\s*\} -> [^\n]*?loc\("(\w+)"\)', after, re.S):
        ops[m.group(3)] = (m.group(1).split(":")[0], m.group(2).split("^bb0")[0])
    if "c" not in ops:
        return "erased"
    if "p" not in ops:
        return "rewrites"
    return "leaves" if re.search(re.escape(ops["p"][0]) + r"\b", ops["c"][1]) else "rewrites"


@needs_iree
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_producer_that_is_an_identity_once_its_unused_results_are_erased(case: str) -> None:
    text, expected = CASES[case]
    assert _fate(text) == expected  # the pass itself
    code, out, err = run("fuse", "-", "--producer", "%p", "--consumer", "%c", "--json", stdin=text)
    assert code in (0, 1, 2), err
    data = json.loads(out)
    d = (data["results"][0] if "results" in data else data)["mlir"]["pass"]
    assert ("rewrites" if d["fuses"] else "leaves") == expected, d
    if expected == "rewrites":
        assert d["decided_by"] == "EraseIdentityLinalgOp", d


def _dup(op: str, ret: str, n_ret: int) -> str:
    t = "tensor<4xf32>"
    types = ", ".join([t] * n_ret)
    return f"""#id = affine_map<(d0) -> (d0)>
func.func @f(%x: {t}, %y: {t}) -> ({types}) {{
  %e = tensor.empty() : {t}
{_reader("%p", "%x", "arith.mulf %a, %a")}  %c = linalg.generic {{indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}}
      ins(%p, %p : {t}, {t}) outs(%e : {t}) {{
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = {op} : f32
    linalg.yield %m : f32
  }} -> {t} loc("c")
  return {ret} : {types}
}}
"""


DUPLICATES = {
    # ins(%p, %p) merged by the canonicalization: max(%a, %a) folds to %a, an identity copy, erased (%p has two
    # uses: the pass does not fuse it first); fuse said 'leaves the pair'
    "max of a duplicated input, the producer returned": (_dup("arith.maximumf %a, %b", "%c, %p", 2), "erased"),
    # one use: fused first
    "max of a duplicated input, one use": (_dup("arith.maximumf %a, %b", "%c", 1), "rewrites"),
    # the payload reads only the second input: the pass fuses %p through it first (one use), the consumer, an
    # identity copy, is not erased before; fuse said 'erases the consumer' for the first (unread) operand
    "max of the second input with itself, one use": (_dup("arith.maximumf %b, %b", "%c", 1), "rewrites"),
    "max of the second input with itself, the producer returned": (_dup("arith.maximumf %b, %b", "%c, %p", 2),
                                                                   "erased"),
    # a + a is no identity: left
    "sum of a duplicated input, the producer returned": (_dup("arith.addf %a, %b", "%c, %p", 2), "leaves"),
}


@needs_iree
@pytest.mark.parametrize("case", sorted(DUPLICATES))
def test_a_consumer_that_is_an_identity_once_its_duplicate_inputs_are_merged(case: str) -> None:
    text, expected = DUPLICATES[case]
    assert _fate(text) == expected  # the pass itself
    code, out, err = run("fuse", "-", "--producer", "%p", "--consumer", "%c", "--json", stdin=text)
    assert code in (0, 1, 2), err
    data = json.loads(out)
    for entry in data["results"] if "results" in data else [data]:  # (one per operand reading %p)
        d = entry["mlir"]["pass"]
        model = ("rewrites" if d["fuses"] else "erased" if d["decided_by"] == "EraseIdentityLinalgOp" else "leaves")
        assert model == expected, d


def test_an_identity_consumer_of_an_identity_producer_is_erased_too() -> None:
    # both payloads fold to their input (max(a, a)): the pass erases the producer, then the consumer, which reads
    # %x instead and is an identity copy of it; fuse said 'rewrites the pair (the consumer reads its input)'
    text = ("#id = affine_map<(d0) -> (d0)>\nfunc.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
            "  %e = tensor.empty() : tensor<4xf32>\n" + _reader("%p", "%x", "arith.maximumf %a, %a")
            + _reader("%c", "%p", "arith.maximumf %a, %a") + "  return %c : tensor<4xf32>\n}\n")
    if find_iree_opt() is not None:
        assert _fate(text) == "erased"
    code, out, err = run("fuse", "-", "--producer", "%p", "--consumer", "%c", "--json", stdin=text)
    assert code in (0, 1, 2), err
    d = json.loads(out)["mlir"]["pass"]
    assert d["fuses"] is False and d["decided_by"] == "EraseIdentityLinalgOp", d


@needs_iree
def test_an_init_the_folded_payload_no_longer_reads_is_replaced() -> None:
    # the consumer's outs(%p) is read only by %o * 0 (i32: folded to 0): the init is then unread, and
    # RemoveOutsDependency replaces it by a fresh tensor.empty; fuse said 'leaves' (areElementwiseOpsFusable: an
    # outs operand) for that operand
    t = "tensor<4xi32>"
    text = f"""#id = affine_map<(d0) -> (d0)>
func.func @f(%x: {t}, %y: {t}) -> ({t}, {t}) {{
  %e = tensor.empty() : {t}
  %zero = arith.constant 0 : i32
  %p = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel"]}}
      ins(%x : {t}) outs(%e : {t}) {{
  ^bb0(%a: i32, %o: i32):
    %m = arith.muli %a, %a : i32
    linalg.yield %m : i32
  }} -> {t} loc("p")
  %c = linalg.generic {{indexing_maps = [#id, #id], iterator_types = ["parallel"]}}
      ins(%y : {t}) outs(%p : {t}) {{
  ^bb0(%a: i32, %o: i32):
    %z = arith.muli %o, %zero : i32
    %m = arith.addi %a, %z : i32
    %n = arith.muli %m, %a : i32
    linalg.yield %n : i32
  }} -> {t} loc("c")
  return %c, %p : {t}, {t}
}}
"""
    assert _fate(text) == "rewrites"  # the pass: %c no longer reads %p
    code, out, err = run("fuse", "-", "--producer", "%p", "--consumer", "%c", "--json", stdin=text)
    assert code in (0, 1, 2), err
    d = json.loads(out)["mlir"]["pass"]
    assert d["fuses"] is True and d["decided_by"] == "RemoveOutsDependency", d


OUTS_FOLDED = """#id = affine_map<(d0) -> (d0)>
func.func @f(%x: tensor<4xi32>, %y: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
  %e = tensor.empty() : tensor<4xi32>
  %zero = arith.constant 0 : i32
  %p = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%x : tensor<4xi32>) outs(%e : tensor<4xi32>) {
  ^bb0(%a: i32, %o: i32):
    %m = arith.muli %a, %a : i32
    linalg.yield %m : i32
  } -> tensor<4xi32> loc("p")
  %c = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%p, %y : tensor<4xi32>, tensor<4xi32>) outs(%e : tensor<4xi32>) {
  ^bb0(%a: i32, %b: i32, %o: i32):
    %m = arith.addi %a, %b : i32
    linalg.yield %m : i32
  } -> tensor<4xi32> loc("c")
  %r = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]}
      ins(%y : tensor<4xi32>) outs(%p : tensor<4xi32>) {
  ^bb0(%a: i32, %o: i32):
    %z = arith.muli %o, %zero : i32
    %m = arith.addi %a, %z : i32
    %n = arith.muli %m, %a : i32
    linalg.yield %n : i32
  } -> tensor<4xi32> loc("r")
  return %c, %r : tensor<4xi32>, tensor<4xi32>
}
"""


@needs_iree
def test_another_reader_s_init_read_only_in_a_folded_op_is_no_use() -> None:
    # %r's outs(%p) is read only by %o * 0 (folded): RemoveOutsDependency replaces it, so %p has one use (%c) and
    # the pass fuses it into %c; fuse said 'leaves (control function: %p has 2 uses)'
    text = OUTS_FOLDED
    assert _fate(text) == "rewrites"
    code, out, err = run("fuse", "-", "--producer", "%p", "--consumer", "%c", "--json", stdin=text)
    assert code in (0, 1, 2), err
    d = json.loads(out)["mlir"]["pass"]
    assert d["fuses"] is True and d["producer_uses"] == 1, d
