"""Breadth: a range of real JAX programs, compiled by XLA, analysed fusion by fusion.

Every program's optimized HLO must be read (valid XLA text is never rejected); every fusion either has
proven maps or names each op it does not model (never a silent approximation). Oracle: for every fusion
whose ops the tagged numpy interpreter of ``tests/hlo_oracle.py`` runs, each output element's reads
(from the maps) equal the parameter elements its value is computed from (from the interpreter).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest
from test_hlo_fusion import _reads_from_maps, _run_computation

jax = pytest.importorskip("jax")  # the `test` extra installs it
jnp = pytest.importorskip("jax.numpy")
lax = pytest.importorskip("jax.lax")

import verified_indexing.jax as vi_jax  # noqa: E402


def _programs() -> dict[str, tuple[Any, tuple[Any, ...]]]:
    x = jnp.ones((4, 8), jnp.float32)
    return {
        "transpose_reshape": (lambda a: jnp.exp(a.T.reshape(2, 16)), (x,)),
        "strided_slice": (lambda a: jnp.exp(a[1:4:2, ::3]), (x,)),
        "concat": (lambda a, b: jnp.concatenate([jnp.exp(a), b * 2], axis=1), (x, x)),
        "pad_negative_interior": (lambda a: jnp.exp(lax.pad(a, 0.0, [(1, -1, 1), (-2, 3, 0)])), (x,)),
        "reduce": (lambda a: jnp.exp(a).sum(axis=1), (x,)),
        "reduce_window": (lambda a: lax.reduce_window(jnp.exp(a), -jnp.inf, lax.max, (2, 2), (2, 1), "SAME"), (x,)),
        "flip_roll": (lambda a: jnp.exp(jnp.roll(jnp.flip(a, 0), 3, axis=1)), (x,)),
        "broadcast_iota_select": (lambda a, b: jnp.where(jnp.arange(8) % 2 == 0, a + b, -a), (x, jnp.ones((8,)))),
        "integer_ops": (lambda a: (a // 3) % 5 + jnp.left_shift(a, 1), (jnp.arange(32, dtype=jnp.int32).reshape(4, 8),)),
        "several_outputs": (lambda a: (jnp.exp(a).sum(0), a.max(1), a * 2), (x,)),
        "take": (lambda a, i: jnp.exp(jnp.take(a, i, axis=1)), (x, jnp.array([0, 3, 5]))),
        "cumsum": (lambda a: jnp.cumsum(jnp.exp(a), axis=1), (x,)),
        "batched_matmul": (lambda a, b: jnp.exp(jnp.einsum("bij,bjk->bik", a, b)), (jnp.ones((2, 3, 4)), jnp.ones((2, 4, 5)))),
        "attention": (lambda q, k, v: jax.nn.softmax(q @ k.T / 8.0) @ v, (jnp.ones((8, 16)),) * 3),
        "conv": (lambda a, w: lax.conv_general_dilated(a, w, (2, 2), "VALID", feature_group_count=2),
                 (jnp.ones((1, 4, 6, 6)), jnp.ones((4, 2, 3, 3)))),
        "sort": (lambda a: jnp.sort(jnp.exp(a), axis=1), (x,)),
    }


PROGRAMS = _programs()
TALLY: Counter[str] = Counter()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_fusion_is_proven_or_names_what_it_does_not_model(name: str) -> None:
    fn, args = PROGRAMS[name]
    analysis = vi_jax.analyze(fn, *args)
    module = analysis.module
    assert {r.fusion for r in analysis.results} == {inst.name for inst, _ in module.fusions()}
    for r in analysis.results:
        comp = module.computations[r.computation]
        if r.unsupported:
            assert all(isinstance(u, str) and u for u in r.unsupported), r.unsupported
            TALLY["unsupported fusions"] += 1
            continue
        for t in r.targets:
            assert all(a.verdict is not None and a.verdict.proved for a in t.maps), (name, r.fusion, t.name)
        if any(a.map.num_rt_vars for t in r.targets for a in t.maps):  # reads depend on data (gather indices)
            TALLY["data-dependent fusions"] += 1
            continue
        try:
            values = _run_computation(comp)[comp.root.name]
        except NotImplementedError:  # the interpreter has no model of some op: the maps are proven, not re-run
            TALLY["fusions without an interpreter"] += 1
            continue
        reads = _reads_from_maps(r)
        for idx in np.ndindex(*comp.root.shape.dims):
            assert reads.get(tuple(idx), set()) == set(values[idx]), (name, r.fusion, idx)
        TALLY["fusions checked by the interpreter"] += 1
