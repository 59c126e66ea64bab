"""MLIR read as MLIR reads it (issue 24 items 1 and 2): SSA names scoped by
function-like ops and isolated-from-above regions, attribute aliases
(``#trait``), whitespace (``ins (``), chunks with no pair, element types in the
proof (a fill's scalar converted to the tensor's type), no ``ins( : )`` printed,
and the strict reader. Each test is a defect named in the issue."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from linalg_interpreter import run_ops

from verified_indexing.cli import main
from verified_indexing.errors import ParseError
from verified_indexing.legality.linalg import (
    check_fusion,
    fused_generic_text,
    fusion_candidates,
    parse_linalg,
    results_used_elsewhere,
)
from verified_indexing.legality.linalg_ir import parse_linalg_module
from verified_indexing.legality.linalg_types import type_errors

ID1 = "affine_map<(d0) -> (d0)>"


def _generic(res: str, ins: list[tuple[str, str]], out: tuple[str, str], body: list[str], maps: list[str] | None = None,
             indent: str = "  ") -> str:
    elems = [t.split("x")[-1].rstrip(">") for _, t in [*ins, out]]
    args = ", ".join(f"%b{i}: {e}" for i, e in enumerate(elems))
    maps = maps or [ID1] * (len(ins) + 1)
    ins_txt = f"ins({', '.join(v for v, _ in ins)} : {', '.join(t for _, t in ins)}) " if ins else ""
    lines = [f"{res} = linalg.generic {{indexing_maps = [{', '.join(maps)}], iterator_types = [\"parallel\"]}} "
             f"{ins_txt}outs({out[0]} : {out[1]}) {{", f"^bb0({args}):", *(f"  {b}" for b in body),
             f"}} -> {out[1]}"]
    return "".join(f"{indent}{ln}\n" for ln in lines)


def _pairs(text: str) -> list[tuple[str, str, str, str]]:
    return [(p.function, p.name, c.function, c.name) for p, c, _ in fusion_candidates(parse_linalg(text))]


T4 = "tensor<4xf32>"


def test_two_util_funcs_are_two_namespaces() -> None:
    # IREE emits util.func: %1 of @a and %1 of @b are different values. The
    # consumer in @b reads its own %1 (a tensor.empty): no pair. It was paired with
    # @a's %1 and a "legal" fusion across functions was printed.
    a = _generic("%1", [("%arg0", T4)], ("%0", T4), ["%2 = arith.addf %b0, %b0 : f32", "linalg.yield %2 : f32"])
    b = _generic("%2", [("%1", T4)], ("%0", T4), ["%3 = arith.mulf %b0, %b0 : f32", "linalg.yield %3 : f32"])
    text = (f"util.func public @a(%arg0: {T4}) -> {T4} {{\n  %0 = tensor.empty() : {T4}\n{a}  util.return %1 : {T4}\n}}\n"
            f"util.func public @b(%arg0: {T4}) -> {T4} {{\n  %0 = tensor.empty() : {T4}\n"
            f"  %1 = tensor.empty() : {T4}\n{b}  util.return %2 : {T4}\n}}\n")
    assert _pairs(text) == []
    assert [op.function for op in parse_linalg(text)] == ["@a", "@b"]
    # A real use inside @b is paired, once.
    b2 = b + _generic("%4", [("%2", T4)], ("%0", T4), ["linalg.yield %b0 : f32"])
    text2 = text.replace(b, b2)
    assert _pairs(text2) == [("@b", "%2", "@b", "%4")]


DISPATCH = """
util.func public @main(%x: tensor<4xf32>, %y: tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xbf16>) {
  %r0 = flow.dispatch.workgroups(%x) : (tensor<4xf32>) -> tensor<4xf32> =
      (%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4xf32>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4xf32>>) {
    %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0], sizes = [4], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4xf32>> -> tensor<4xf32>
    %1 = tensor.empty() : tensor<4xf32>
REGION0    iree_tensor_ext.dispatch.tensor.store %2, %arg1, offsets = [0], sizes = [4], strides = [1] : tensor<4xf32> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4xf32>>
    flow.return
  }
  %r1 = flow.dispatch.workgroups(%y) : (tensor<4xbf16>) -> tensor<4xbf16> =
      (%arg0: !iree_tensor_ext.dispatch.tensor<readonly:tensor<4xbf16>>, %arg1: !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4xbf16>>) {
    %0 = iree_tensor_ext.dispatch.tensor.load %arg0, offsets = [0], sizes = [4], strides = [1] : !iree_tensor_ext.dispatch.tensor<readonly:tensor<4xbf16>> -> tensor<4xbf16>
    %1 = tensor.empty() : tensor<4xbf16>
    %2 = tensor.empty() : tensor<4xbf16>
REGION1    iree_tensor_ext.dispatch.tensor.store %3, %arg1, offsets = [0], sizes = [4], strides = [1] : tensor<4xbf16> -> !iree_tensor_ext.dispatch.tensor<writeonly:tensor<4xbf16>>
    flow.return
  }
  util.return %r0, %r1 : tensor<4xf32>, tensor<4xbf16>
}
"""


def test_dispatch_regions_restart_value_names() -> None:
    # Inside each flow.dispatch.workgroups body (isolated from above) names restart:
    # region 1's %2 is a tensor.empty, not region 0's linalg op. It was an invented
    # pair whose fused op used one value as both bf16 and f32, and the proof accepted it.
    r0 = _generic("%2", [("%0", T4)], ("%1", T4), ["%3 = arith.addf %b0, %b0 : f32", "linalg.yield %3 : f32"],
                  indent="    ")
    t16 = "tensor<4xbf16>"
    r1 = _generic("%3", [("%2", t16)], ("%1", t16), ["%4 = arith.mulf %b0, %b0 : bf16", "linalg.yield %4 : bf16"],
                  indent="    ")
    text = DISPATCH.replace("REGION0", r0).replace("REGION1", r1)
    ops = parse_linalg(text)
    assert len(ops) == 2 and ops[0].function != ops[1].function
    second = text[: text.index("{", text.index("%r1 = "))].count("\n") + 1  # the line of region 1's brace
    assert ops[0].function == "flow.dispatch.workgroups at line 4"
    assert ops[1].function == f"flow.dispatch.workgroups at line {second}"
    assert _pairs(text) == []
    # The CLI: a valid file with no pair is an answer (exit 0), not bad input.
    path = Path(__file__).parent / "_tmp_dispatch.mlir"
    try:
        path.write_text(text)
        assert main(["fuse", str(path)]) == 0
    finally:
        path.unlink()
    # A real pair inside region 0 is found, decided, and its fused op is well-typed.
    r0b = r0 + _generic("%5", [("%2", T4)], ("%1", T4), ["%6 = arith.mulf %b0, %b0 : f32", "linalg.yield %6 : f32"],
                        indent="    ")
    text2 = DISPATCH.replace("REGION0", r0b).replace("REGION1", r1)
    ((p, c, k),) = fusion_candidates(parse_linalg(text2))
    assert (p.name, c.name) == ("%2", "%5")
    # %2 is also stored by the region (a use after the consumer): kept, not one of region 1's names.
    assert results_used_elsewhere(text2, p, c, k) == ("%2",)
    rep = check_fusion(p, c, operand_index=k)
    assert rep.status == "legal", rep.reason
    fused = fused_generic_text(rep)
    assert fused is not None
    parse_linalg(fused, strict=True)


def test_a_use_in_a_sibling_region_is_not_a_use() -> None:
    # Two scf.if branches (sibling regions) may reuse a name; a use in the second
    # does not see a definition in the first.
    a = _generic("%1", [("%x", T4)], ("%e", T4), ["linalg.yield %b0 : f32"], indent="    ")
    b = _generic("%2", [("%1", T4)], ("%e", T4), ["linalg.yield %b0 : f32"], indent="    ")
    text = (f"func.func @f(%c: i1, %x: {T4}, %e: {T4}) {{\n  scf.if %c {{\n{a}    scf.yield\n  }} else {{\n"
            f"    %1 = tensor.empty() : {T4}\n{b}    scf.yield\n  }}\n  return\n}}\n")
    assert _pairs(text) == []
    # ... while a nested region sees its enclosing region's values.
    text2 = f"func.func @f(%c: i1, %x: {T4}, %e: {T4}) {{\n{a.replace('    ', '  ', 1)}  scf.if %c {{\n{b}    scf.yield\n  }}\n  return\n}}\n"
    assert _pairs(text2) == [("@f", "%1", "@f", "%2")]
    # The else branch is the then branch's sibling (owned by scf.if), not an op with a symbol that
    # happens to end the then branch (func.call @g): the enclosing function's values stay visible.
    text3 = (f"func.func @f(%c: i1, %x: {T4}, %e: {T4}) {{\n{a.replace('    ', '  ', 1)}  scf.if %c {{\n"
             f"    func.call @g() : () -> ()\n  }} else {{\n{b}  }}\n  return\n}}\n")
    assert _pairs(text3) == [("@f", "%1", "@f", "%2")]


TRAIT = """
#map0 = affine_map<(d0, d1) -> (d0, d1)>
#binary2Dpointwise = {
  indexing_maps = [#map0, #map0, #map0],
  iterator_types = ["parallel", "parallel"]
}
func.func @add_mul_fusion(%arg0: tensor<?x?xf32>, %arg1 : tensor<?x?xf32>, %arg2 : tensor<?x?xf32>, %2 : tensor<?x?xf32>) -> tensor<?x?xf32>
{
  %3 = linalg.generic #binary2Dpointwise
      ins(%arg0, %arg1 : tensor<?x?xf32>, tensor<?x?xf32>)
      outs(%2 : tensor<?x?xf32>) {
    ^bb0(%arg3: f32, %arg4: f32, %arg5: f32):
      %4 = arith.addf %arg3, %arg4 : f32
      linalg.yield %4 : f32
  } -> tensor<?x?xf32>
  %4 = linalg.generic {indexing_maps = [#map0, #map0, #map0], iterator_types = ["parallel", "parallel"]}
      ins (%3, %arg2 : tensor<?x?xf32>, tensor<?x?xf32>)
      outs (%2 : tensor<?x?xf32>) {
    ^bb0(%arg5: f32, %arg6: f32, %arg7: f32):
      %5 = arith.mulf %arg5, %arg6 : f32
      linalg.yield %5 : f32
  } -> tensor<?x?xf32>
  return %4 : tensor<?x?xf32>
}
"""


def test_trait_alias_and_space_before_parenthesis() -> None:
    # MLIR's own fusion tests: "linalg.generic #trait ins(...)" and "ins (" gave "expected '{'".
    a, b = parse_linalg(TRAIT)
    inline = TRAIT.replace("linalg.generic #binary2Dpointwise",
                           'linalg.generic {indexing_maps = [#map0, #map0, #map0], iterator_types = ["parallel", '
                           '"parallel"]}').replace("ins (", "ins(").replace("outs (", "outs(")
    a2, b2 = parse_linalg(inline)
    for x, y in ((a, a2), (b, b2)):
        assert x.operands == y.operands and x.iterator_types == y.iterator_types
    ((p, c, k),) = fusion_candidates([a, b])
    rep = check_fusion(p, c, operand_index=k)
    assert rep.status == "legal" and rep.condition == "every size"
    with pytest.raises(ParseError, match="unknown attribute alias '#nope'"):
        parse_linalg(TRAIT.replace("linalg.generic #binary2Dpointwise", "linalg.generic #nope"))


def test_single_op_chunks_are_answered(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = _generic("%1", [("%a", T4)], ("%e", T4), ["linalg.yield %b0 : f32"])
    two = one + _generic("%2", [("%1", T4)], ("%e", T4), ["linalg.yield %b0 : f32"])
    path = tmp_path / "chunks.mlir"
    path.write_text(f"func.func @one() {{\n{one}}}\n// -----\nfunc.func @two() {{\n{two}}}\n")
    assert main(["fuse", "--split-input-file", str(path)]) == 0  # was 3: "no producer-consumer pair"
    out = capsys.readouterr().out
    assert "no producer-consumer pair of linalg ops (1 linalg op read): nothing to fuse" in out
    assert "ours: legal" in out
    # A pair through an op that is not modelled is not decided: unknown, not "nothing to fuse".
    path.write_text(one + "  %9 = linalg.mmt4d ins(%1, %k : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) "
                    "-> tensor<4xf32>\n")
    assert main(["fuse", str(path)]) == 2
    # Naming an op that does not exist stays bad input.
    assert main(["fuse", str(path), "--producer", "%nope"]) == 3


FILL16 = """
#map = affine_map<(d0, d1) -> (d0, d1)>
func.func @fill_f16(%arg0: tensor<4x8xf16>) -> tensor<4x8xf16> {
  %cst = arith.constant 1.000000e-01 : f32
  %e = tensor.empty() : tensor<4x8xf16>
  %0 = linalg.fill ins(%cst : f32) outs(%e : tensor<4x8xf16>) -> tensor<4x8xf16>
  %1 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%0, %arg0 : tensor<4x8xf16>, tensor<4x8xf16>) outs(%e : tensor<4x8xf16>) {
  ^bb0(%in: f16, %in_0: f16, %out: f16):
    %2 = arith.addf %in, %in_0 : f16
    linalg.yield %2 : f16
  } -> tensor<4x8xf16>
  return %1 : tensor<4x8xf16>
}
"""


def test_f32_fill_into_f16_keeps_the_conversion() -> None:
    # The fused op once added an f32 block argument with "arith.addf ... : f16" (the
    # conversion lost) and was called "read back and proven".
    fill, gen = parse_linalg(FILL16)
    assert "arith.truncf" in fill.payload and not type_errors(fill)
    ((p, c, k),) = fusion_candidates([fill, gen])
    rep = check_fusion(p, c, operand_index=k)
    assert rep.status == "legal", rep.reason
    fused = fused_generic_text(rep)
    assert fused is not None and "arith.truncf %fa0 : f32 to f16" in fused
    (fop,) = parse_linalg(fused, strict=True)
    # Today's MLIR verifier rejects a fill whose value type differs from the element type; the strict reader too.
    with pytest.raises(ParseError, match=r"fill value type \(f32\) does not match the output element type \(f16\)"):
        parse_linalg(FILL16, strict=True)
    # Against the interpreter (which rounds to f16): 0.1 is not an f16, the pair adds the rounded value.
    arg0 = np.arange(32.0).reshape(4, 8) / 8
    env = {"%cst": 0.1, "%e": np.zeros((4, 8)), "%arg0": arg0}
    want = run_ops([fill, gen], dict(env))["%1"]
    got = run_ops([fop], dict(env))["%fused"]
    assert np.array_equal(want, got) and not np.array_equal(want, 0.1 + arg0)
    # The fused op as it was printed before: ill-typed, rejected by the strict reader.
    old = fused.replace("  %p_cast_0 = arith.truncf %fa0 : f32 to f16\n", "").replace("%p_cast_0", "%fa0")
    parse_linalg(old)  # the lenient reader reads it...
    with pytest.raises(ParseError, match="ill-typed: %fa0 is f32, used as f16"):
        parse_linalg(old, strict=True)


def test_no_ins_is_not_printed_as_empty_ins() -> None:
    # A producer with no inputs fused into a consumer whose only input it is: the
    # fused op has no inputs. It was printed "ins( : )", which MLIR rejects and the
    # project's reader accepted.
    prod = _generic("%1", [], ("%e", T4), ["%c = arith.constant 2.0 : f32", "linalg.yield %c : f32"])
    cons = _generic("%2", [("%1", T4)], ("%o", T4), ["%m = arith.mulf %b0, %b0 : f32", "linalg.yield %m : f32"])
    ((p, c, k),) = fusion_candidates(parse_linalg(prod + cons))
    rep = check_fusion(p, c, operand_index=k)
    assert rep.status == "legal", rep.reason
    fused = fused_generic_text(rep)
    assert fused is not None and "ins(" not in fused
    (fop,) = parse_linalg(fused, strict=True)
    env = {"%e": np.zeros(4), "%o": np.ones(4)}
    assert np.array_equal(run_ops([p, c], dict(env))["%2"], run_ops([fop], dict(env))["%fused"])
    bad = fused.replace("    outs(", "    ins( : ) outs(")
    assert len(parse_linalg(bad)[0].inputs) == 0
    with pytest.raises(ParseError, match=r"ins\( : \) with no operand"):
        parse_linalg(bad, strict=True)


def test_one_value_at_two_types_is_ill_typed() -> None:
    # What the invented cross-dispatch pair printed: one block argument used as bf16 and f32.
    op = _generic("%f", [("%a", "tensor<4xbf16>")], ("%o", T4),
                  ["%x = arith.mulf %b0, %b0 : bf16", "%y = arith.addf %b0, %b0 : f32", "linalg.yield %y : f32"])
    (g,) = parse_linalg(op)
    assert type_errors(g) == ["%b0 is bf16, used as f32 in '%y = arith.addf %b0, %b0 : f32'"] * 2
    with pytest.raises(ParseError, match="ill-typed"):
        parse_linalg(op, strict=True)


@pytest.mark.parametrize("old,new,why", [
    ("^bb0(%b0: f32, %b1: f32)", "^bb0(%b0: f16, %b1: f32)", "block argument %b0 is f16"),
    ("linalg.yield %m : f32", "linalg.yield %m : f16", "linalg.yield declares f16"),
    ("} -> tensor<4xf32>\n", "} -> tensor<4xf16>\n", "result type tensor<4xf16> differs"),
    ("%m = arith.mulf %b0, %b0 : f32", "%m = arith.mulf %b0, %b0 : f16", "%b0 is f32, used as f16"),
])
def test_ill_typed_pair_is_never_legal(old: str, new: str, why: str) -> None:
    prod = _generic("%1", [("%a", T4)], ("%e", T4), ["linalg.yield %b0 : f32"])
    cons = _generic("%2", [("%1", T4)], ("%o", T4), ["%m = arith.mulf %b0, %b0 : f32", "linalg.yield %m : f32"])
    bad = cons.replace(old, new)
    assert bad != cons
    ((p, c, k),) = fusion_candidates(parse_linalg(prod + bad))
    assert any(why in e for e in type_errors(c)), type_errors(c)
    rep = check_fusion(p, c, operand_index=k)
    assert rep.status == "unknown" and "the pair is ill-typed" in rep.reason and why in rep.reason
    with pytest.raises(ParseError, match="ill-typed"):
        parse_linalg_module(prod + bad, strict=True)
    rep_ok = check_fusion(*fusion_candidates(parse_linalg(prod + cons))[0][:2])
    assert rep_ok.status == "legal"


IREE_CORPUS = Path(__file__).resolve().parent / "mlir_corpus" / "iree"
# (ops, pairs) of each file: the pairs agree with MLIR's own resolution of the SSA uses
# (iree-opt --mlir-print-unique-ssa-ids, tests/test_linalg_iree.py, when IREE is installed).
IREE_FILES = {
    "chain.input.mlir": (5, 4), "chain.dispatch-creation.mlir": (1, 0), "chain.flow.mlir": (1, 0),
    "mlp_ln.input.mlir": (18, 17), "mlp_ln.dispatch-creation.mlir": (9, 6), "mlp_ln.flow.mlir": (9, 6),
    "softmax_bf16.input.mlir": (13, 13), "softmax_bf16.dispatch-creation.mlir": (8, 4),
    "softmax_bf16.flow.mlir": (8, 4), "mlp_ln.flow.generic.mlir": (9, 6),
    "softmax_bf16.dispatch-creation.generic.mlir": (8, 4),
}


@pytest.mark.parametrize("name", sorted(IREE_FILES))
def test_real_iree_output_is_read(name: str) -> None:
    # What IREE writes from JAX programs at three phases (util.func, flow.dispatch.workgroups regions and
    # flow.executable functions with repeated names): read strictly, paired only within a region.
    text = (IREE_CORPUS / name).read_text()
    mod = parse_linalg_module(text, name, strict=True)
    cands = fusion_candidates(list(mod.ops))
    assert (len(mod.ops), len(cands)) == IREE_FILES[name] and not mod.skipped
    assert all(p.function == c.function and p.function for p, c, _ in cands)
    if "dispatch-creation" in name:  # every pair decided; every legal one checked twice
        for p, c, k in cands:
            rep = check_fusion(p, c, operand_index=k, keep=results_used_elsewhere(text, p, c, k))
            assert rep.status in ("legal", "illegal"), rep.reason
            if rep.status == "legal":
                assert rep.second_check is not None and rep.second_check.verdict.proved
                fused = fused_generic_text(rep)
                assert fused is not None
                parse_linalg(fused, strict=True)


GENERIC_PAYLOAD = """
"func.func"() <{function_type = (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>, sym_name = "f"}> ({
^bb0(%arg0: tensor<4xf32>, %arg1: tensor<4xf32>):
  %0 = "linalg.generic"(%arg0, %arg1) <{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = [#linalg.iterator_type<parallel>], operandSegmentSizes = array<i32: 1, 1>}> ({
  ^bb0(%in: f32, %out: f32):
    %c = "arith.constant"() <{value = 2.000000e+00 : f32}> : () -> f32
    %1 = "arith.mulf"(%in, %c) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32
    %2 = "arith.cmpf"(%1, %c) <{fastmath = #arith.fastmath<none>, predicate = 4 : i64}> : (f32, f32) -> i1
    %3 = "arith.select"(%2, %1, %c) : (i1, f32, f32) -> f32
    "linalg.yield"(%3) : (f32) -> ()
  }) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  "func.return"(%0) : (tensor<4xf32>) -> ()
}) : () -> ()
"""


def test_generic_form_payloads_are_typed() -> None:
    # "(A, B) -> C" types every generic-form operation, constants included (a constant
    # was once typed "() -> f32" and its use called ill-typed).
    (op,) = parse_linalg_module(GENERIC_PAYLOAD, strict=True).ops
    assert type_errors(op) == []
    bad = GENERIC_PAYLOAD.replace('"arith.mulf"(%in, %c) <{fastmath = #arith.fastmath<none>}> : (f32, f32) -> f32',
                                  '"arith.mulf"(%in, %c) <{fastmath = #arith.fastmath<none>}> : (f16, f32) -> f32')
    assert bad != GENERIC_PAYLOAD
    with pytest.raises(ParseError, match="%in is f32, used as f16"):
        parse_linalg_module(bad, strict=True)


WHITESPACE = """
#map = affine_map <(d0) -> (d0)>
func.func @f(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = linalg.generic{indexing_maps=[#map,#map],iterator_types=["parallel"]}ins(%a:tensor<4xf32>)outs(%b:tensor<4xf32>){
  ^bb0(%in : f32 , %out : f32) :
    %s = arith.addf %in , %in : f32
    linalg.yield %s:f32
  }->tensor<4xf32>
  %1 = linalg.generic {indexing_maps = [ affine_map< (d0) -> (d0) >, #map ], iterator_types = [ "parallel" ]}
      ins ( %0 : tensor<4xf32> ) outs ( %b : tensor<4xf32> )
      {
  ^bb0(%in: f32, %out: f32):
    %m = arith.mulf %in, %in : f32
    linalg.yield %m : f32
  } -> (tensor<4xf32>)
  return %1 : tensor<4xf32>
}
"""


def test_whitespace_anywhere_mlir_allows_it() -> None:
    # No space at all, spaces inside brackets, before colons and parentheses, a region brace on its own line.
    mod = parse_linalg_module(WHITESPACE, strict=True)
    a, b = mod.ops
    assert [o.value for o in a.operands] == ["%a", "%b"] and [o.value for o in b.operands] == ["%0", "%b"]
    assert a.block_args == ("%in", "%out") and not type_errors(a) and not type_errors(b)
    ((p, c, k),) = fusion_candidates([a, b])
    rep = check_fusion(p, c, operand_index=k)
    assert rep.status == "legal" and rep.second_check is not None and rep.second_check.verdict.proved


@pytest.mark.parametrize("name", ["mlp_ln.flow", "softmax_bf16.dispatch-creation"])
def test_named_ops_in_the_generic_form_read_as_in_the_pretty_form(name: str) -> None:
    # "linalg.fill"(...), "linalg.matmul"(...) <{indexing_maps = ...}>, "linalg.reduce"(...) as
    # iree-opt --mlir-print-op-generic prints them were skipped ("not read"): the pairs through them lost.
    pretty = parse_linalg_module((IREE_CORPUS / f"{name}.mlir").read_text(), strict=True)
    generic = parse_linalg_module((IREE_CORPUS / f"{name}.generic.mlir").read_text(), strict=True)
    assert not generic.skipped and len(generic.ops) == len(pretty.ops)
    for a, b in zip(pretty.ops, generic.ops):
        assert (a.kind, a.iterator_types, [(str(o.type), o.map, o.is_input) for o in a.operands]) == \
            (b.kind, b.iterator_types, [(str(o.type), o.map, o.is_input) for o in b.operands])
    pairs = [[(pretty.ops.index(p), pretty.ops.index(c), k) for p, c, k in fusion_candidates(list(pretty.ops))],
             [(generic.ops.index(p), generic.ops.index(c), k) for p, c, k in fusion_candidates(list(generic.ops))]]
    assert pairs[0] == pairs[1] and pairs[0]
    verdicts = []
    for mod in (pretty, generic):
        reps = [check_fusion(p, c, operand_index=k) for p, c, k in fusion_candidates(list(mod.ops))]
        verdicts.append([(r.status, r.condition) for r in reps])
        assert all(r.second_check is None or r.second_check.verdict.proved for r in reps)
    assert verdicts[0] == verdicts[1]


CAPTURE = """func.func @f(%a: tensor<4xf32>, %e: tensor<4xf32>) -> tensor<4xf32> {
  %cst = arith.constant 2.0 : f32
  %1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %cst : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"]}
      ins(%1 : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %x, %x : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %2 : tensor<4xf32>
}
"""


def test_strict_reader_rejects_a_payload_use_of_a_value_defined_nowhere() -> None:
    """Issue 24: MLIR rejects a use of an undefined value ("use of undeclared SSA
    value name"); the strict reader does too, with its position; a captured value of
    the function (%cst) is defined, and the lenient reader reads both."""
    from verified_indexing.legality.linalg_ir import captured_values

    mod = parse_linalg_module(CAPTURE, strict=True)
    assert captured_values(mod.ops[0]) == {"%cst"} and captured_values(mod.ops[1]) == set()
    bad = CAPTURE.replace("arith.addf %x, %x", "arith.addf %x, %nowhere")
    parse_linalg_module(bad)  # lenient
    with pytest.raises(ParseError) as err:
        parse_linalg_module(bad, "<bad>", strict=True)
    msg = str(err.value)
    assert "use of undefined value %nowhere" in msg and "<bad>:14:25:" in msg
    # the constant's definition removed: the capture is undefined too
    with pytest.raises(ParseError, match="undefined value %cst"):
        parse_linalg_module(CAPTURE.replace("  %cst = arith.constant 2.0 : f32\n", ""), strict=True)


def test_the_fused_op_is_read_back_with_the_values_it_captures() -> None:
    """The fused op, read alone, captures %cst: strict readback needs the enclosing
    context (check_fusion passes the pair's captured values), and is legal."""
    from verified_indexing.legality.linalg_ir import defined_values

    ops = parse_linalg(CAPTURE)
    rep = check_fusion(ops[0], ops[1])
    assert rep.status == "legal", rep.reason
    fused = fused_generic_text(rep)
    assert fused is not None and "%cst" in fused
    with pytest.raises(ParseError, match="undefined value %cst"):
        parse_linalg(fused, strict=True)
    (fop,) = parse_linalg(fused, strict=True, context={"%cst"})
    assert fop.num_loops == 1
    assert "%cst" in defined_values(CAPTURE)
