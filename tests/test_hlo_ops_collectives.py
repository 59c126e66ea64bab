"""The opcodes added for "every op XLA has" against the numpy interpreter of HLO
(tests/hlo_oracle.py), both directions: the inverse and hyperbolic elementwise
functions, collectives as per-device maps (the oracle simulates each position of
a device in its group), their -start/-done pairs and async wrappers through the
fusion walk, cholesky / triangular-solve / library custom-calls / rng-bit-generator
as marked over-approximations (the oracle's reads are inside the maps), scaled-dot
(exact), rng-get-and-update-state (no operands). An unknown custom-call target
stays unsupported, named."""

from __future__ import annotations

import numpy as np
import pytest
from hlo_oracle import run
from test_hlo_ops_oracle import _shape, build, check

from verified_indexing.errors import UnsupportedError
from verified_indexing.hlo.fusion import output_to_input_maps
from verified_indexing.hlo.ir import Computation, Instruction
from verified_indexing.hlo.ops import output_to_input, over_approximation
from verified_indexing.hlo.parser import parse_module


def _exact(inst: Instruction, comp: Computation) -> bool:
    return all(over_approximation(inst, comp, k) is None for k in range(len(inst.operands)))


@pytest.mark.parametrize("opcode", ["sinh", "cosh", "asin", "acos", "asinh", "acosh", "atanh"])
def test_new_elementwise_opcodes(opcode: str) -> None:
    inst, comp = build(opcode, _shape([2, 3]), [_shape([2, 3])])
    check(inst, comp)
    assert _exact(inst, comp)


@pytest.mark.parametrize("opcode", ["all-reduce", "all-reduce-start", "collective-broadcast"])
def test_elementwise_collectives(opcode: str) -> None:
    inst, comp = build(opcode, _shape([3, 2]), [_shape([3, 2])], {"replica_groups": "{{0,1}}", "to_apply": "add"})
    check(inst, comp)
    assert _exact(inst, comp)
    if opcode == "all-reduce":  # variadic: output k reads operand k only
        from verified_indexing.hlo.ir import Shape

        two = (_shape([3, 2]), _shape([4]))
        inst2, comp2 = build(opcode, Shape("tuple", (), None, two), list(two),
                             {"replica_groups": "{{0,1}}", "to_apply": "add"})
        check(inst2, comp2)


@pytest.mark.parametrize(("src", "dim", "groups"), [([2, 3], 1, 3), ([2, 3], 0, 2), ([4], 0, 1)])
def test_all_gather_has_a_replica_variable(src: list[int], dim: int, groups: int) -> None:
    out = list(src)
    out[dim] *= groups
    inst, comp = build("all-gather", _shape(out), [_shape(src)], {"dimensions": "{" + str(dim) + "}"})
    check(inst, comp)
    assert _exact(inst, comp)
    (m,) = output_to_input(inst, comp)
    assert m.num_range_vars == 1 and m.range_vars[0].bounds.hi == groups - 1  # the replica holding the shard
    from verified_indexing.hlo.ir import Shape

    start, scomp = build("all-gather-start", Shape("tuple", (), None, (_shape(src), _shape(out))), [_shape(src)],
                         {"dimensions": "{" + str(dim) + "}"})
    check(start, scomp)


def test_reduce_scatter_per_device_position() -> None:
    inst, comp = build("reduce-scatter", _shape([2, 2]), [_shape([2, 6])], {"dimensions": "{1}", "to_apply": "add"})
    for me in range(3):
        check(inst, comp, {-1: np.array(me)}, over=frozenset({0}))
    assert over_approximation(inst, comp, 0) is not None


@pytest.mark.parametrize("form", ["array", "tuple"])
def test_all_to_all_per_device_position(form: str) -> None:
    if form == "array":
        inst, comp = build("all-to-all", _shape([6, 2]), [_shape([6, 2])],
                           {"dimensions": "{0}", "replica_groups": "{{0,1,2}}"})
        values = {-2: np.array(3)}
        positions = 3
    else:
        from verified_indexing.hlo.ir import Shape

        inst, comp = build("all-to-all", Shape("tuple", (), None, (_shape([2]), _shape([2]))),
                           [_shape([2]), _shape([2])], {"replica_groups": "{{0,1}}"})
        values, positions = {}, 2
    for me in range(positions):
        check(inst, comp, {**values, -1: np.array(me)}, over=frozenset(range(len(inst.operands))))
    assert over_approximation(inst, comp, 0) is not None


@pytest.mark.parametrize("targeted", [True, False])
def test_collective_permute(targeted: bool) -> None:
    from verified_indexing.hlo.ir import Shape

    values = {} if targeted else {-3: np.array(1)}
    inst, comp = build("collective-permute", _shape([3]), [_shape([3])], {"source_target_pairs": "{{0,1}}"})
    check(inst, comp, values, over=frozenset({0}))
    start, scomp = build("collective-permute-start",
                         Shape("tuple", (), None, (_shape([3]), _shape([3]), _shape([], "u32"), _shape([], "u32"))),
                         [_shape([3])], {"source_target_pairs": "{{0,1}}"})
    check(start, scomp, values, over=frozenset({0}))
    copy, ccomp = build("copy-start", Shape("tuple", (), None, (_shape([3]), _shape([3]), _shape([], "u32"))),
                        [_shape([3])])
    check(copy, ccomp)
    assert _exact(copy, ccomp) and not _exact(inst, comp)


def test_cholesky_triangular_solve_and_lapack_calls_hold_their_reads() -> None:
    inst, comp = build("cholesky", _shape([2, 3, 3]), [_shape([2, 3, 3])], {"lower": "true"})
    check(inst, comp, over=frozenset({0}))
    lapack, lcomp = build("custom-call", _shape([2, 3, 3]), [_shape([2, 3, 3])],
                          {"custom_call_target": '"lapack_spotrf_ffi"'})
    check(lapack, lcomp, over=frozenset({0}))
    assert "LAPACK" in (over_approximation(lapack, lcomp, 0) or "")
    for lower in ("true", "false"):
        ts, tcomp = build("triangular-solve", _shape([2, 3, 2]), [_shape([2, 3, 3]), _shape([2, 3, 2])],
                          {"left_side": "true", "lower": lower, "transpose_a": "NO_TRANSPOSE"})
        check(ts, tcomp, over=frozenset({0, 1}))
    # the batch is tied: output batch 0 never reads batch 1
    (m,) = output_to_input(inst, comp)
    assert m.results[0].evaluate([1, 0, 0], [0, 0]) == 1


def test_rng_ops() -> None:
    from verified_indexing.hlo.ir import Shape

    gen, gcomp = build("rng-bit-generator", Shape("tuple", (), None, (_shape([2], "u64"), _shape([3, 2], "u32"))),
                       [_shape([2], "u64")], {"algorithm": "rng_default"})
    check(gen, gcomp, over=frozenset({0}))
    module = parse_module("HloModule r\nENTRY e {\n  s = u64[2] rng-get-and-update-state(), delta=4\n"
                          "  ROOT c = u64[2] copy(s)\n}\n")
    assert output_to_input(module.entry.by_name["s"], module.entry) == []
    assert not output_to_input_maps(module.entry, module=module).unsupported


def test_scaled_dot_is_exact() -> None:
    inst, comp = build(
        "scaled-dot", _shape([2, 3]), [_shape([2, 4]), _shape([4, 3]), _shape([2, 2]), _shape([2, 3])],
        {"lhs_contracting_dims": "{1}", "rhs_contracting_dims": "{0}"},
    )
    check(inst, comp)
    assert _exact(inst, comp)


def test_unknown_custom_call_targets_stay_unsupported_named() -> None:
    inst, comp = build("custom-call", _shape([3]), [_shape([3])], {"custom_call_target": '"my_vendor_op"'})
    with pytest.raises(UnsupportedError, match="my_vendor_op"):
        output_to_input(inst, comp)


ASYNC = """HloModule a
wrapped {
  p = f32[4] parameter(0)
  ROOT n = f32[4] reverse(p), dimensions={0}
}
ENTRY e {
  x = f32[2] parameter(0)
  ags = (f32[2], f32[4]) all-gather-start(x), dimensions={0}, replica_groups={{0,1}}
  agd = f32[4] all-gather-done(ags)
  cps = (f32[4], f32[4], u32[], u32[]) collective-permute-start(agd), source_target_pairs={{0,1},{1,0}}
  cpd = f32[4] collective-permute-done(cps)
  cs = (f32[4], f32[4], u32[]) copy-start(cpd)
  cd = f32[4] copy-done(cs)
  as = ((f32[4]), f32[4], s32[]) async-start(cd), calls=wrapped
  au = ((f32[4]), f32[4], s32[]) async-update(as)
  ROOT ad = f32[4] async-done(au)
}
"""


def test_start_done_pairs_and_async_wrappers_through_the_fusion_walk() -> None:
    module = parse_module(ASYNC)
    result = output_to_input_maps(module.entry, module=module)
    assert not result.unsupported, result.unsupported
    (a,) = result.targets[0].maps
    # the oracle, instruction by instruction: all-gather (two copies), then the identity chain, then a reverse
    comp = module.entry
    gathered = np.concatenate([np.arange(2)] * 2)
    wrapped = module.computations["wrapped"]
    (rev,) = run(wrapped.root, wrapped)
    want = {(o,): {(int(gathered[x]),) for _, (x,) in rev[o]} for o in range(4)}
    got: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
    for d, s, r in a.map.domain_points():
        got.setdefault(tuple(d), set()).add(a.map.evaluate(d, s, r))
    assert got == want
    assert a.over_approximation  # the collective-permute is marked
    assert comp.root.opcode == "async-done"


@pytest.mark.parametrize(
    ("kind", "src", "out", "lengths"),
    [("FFT", [2, 4], [2, 4], [4]), ("IFFT", [2, 2, 3], [2, 2, 3], [2, 3]), ("RFFT", [3, 4], [3, 3], [4]),
     ("IRFFT", [2, 3], [2, 4], [4])],
)
def test_fft_reads_every_element_of_the_transformed_dims(kind: str, src: list[int], out: list[int],
                                                         lengths: list[int]) -> None:
    inst, comp = build("fft", _shape(out, "c64"), [_shape(src, "c64")],
                       {"fft_type": kind, "fft_length": "{" + ",".join(map(str, lengths)) + "}"})
    check(inst, comp)
    assert _exact(inst, comp)


@pytest.mark.parametrize("opcode", ["batch-norm-inference", "batch-norm-training", "batch-norm-grad"])
def test_batch_norm(opcode: str) -> None:
    from verified_indexing.hlo.ir import Shape

    x, v = _shape([2, 3, 2]), _shape([3])
    if opcode == "batch-norm-inference":
        inst, comp = build(opcode, x, [x, v, v, v, v], {"feature_index": "1", "epsilon": "0.001"})
    elif opcode == "batch-norm-training":
        inst, comp = build(opcode, Shape("tuple", (), None, (x, v, v)), [x, v, v], {"feature_index": "1"})
    else:
        inst, comp = build(opcode, Shape("tuple", (), None, (x, v, v)), [x, v, v, v, x], {"feature_index": "1"})
    over = frozenset(range(len(inst.operands))) if opcode == "batch-norm-grad" else frozenset()
    check(inst, comp, over=over)
    assert _exact(inst, comp) == (opcode != "batch-norm-grad")


def test_ragged_dot_is_a_marked_over_approximation() -> None:
    inst, comp = build("ragged-dot", _shape([5, 2]), [_shape([5, 3]), _shape([2, 3, 2]), _shape([2], "s32")],
                       {"lhs_contracting_dims": "{1}", "rhs_contracting_dims": "{1}",
                        "lhs_ragged_dimensions": "{0}", "rhs_group_dimensions": "{0}"})
    for sizes in ([2, 3], [5, 0], [1, 1]):
        check(inst, comp, {2: np.array(sizes)}, over=frozenset({0, 1, 2}))
    assert over_approximation(inst, comp, 0) is not None
