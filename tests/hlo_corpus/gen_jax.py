"""How tests/hlo_corpus/jax and tests/hlo_corpus/dump were made (JAX 0.10.2, CPU), in a separate
venv: ``python3 -m venv /tmp/jaxvenv && /tmp/jaxvenv/bin/pip install jax jaxlib``, then
``/tmp/jaxvenv/bin/python tests/hlo_corpus/gen_jax.py OUT_DIR DUMP_DIR``. Not a test; jax is not a
dependency of the project."""
# ruff: noqa
# mypy: ignore-errors

import os
import sys

OUT, DUMP = sys.argv[1], sys.argv[2]
os.environ["XLA_FLAGS"] = f"--xla_dump_to={DUMP} --xla_dump_hlo_as_text"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

os.makedirs(OUT, exist_ok=True)


def save(name, f, *args):
    low = jax.jit(f).lower(*args)
    with open(f"{OUT}/{name}.pre.hlo", "w") as fh:
        fh.write(low.as_text(dialect="hlo"))
    with open(f"{OUT}/{name}.post.hlo", "w") as fh:
        fh.write(low.compile().as_text())


x = jnp.arange(24.0).reshape(4, 6)
save("sort", lambda a: jnp.sort(a, axis=1), x)
save("argsort", lambda a: jnp.argsort(a, axis=0), x)
save("scatter_add", lambda a, i, u: a.at[i].add(u), jnp.zeros((8, 3)), jnp.array([1, 5, 1]), jnp.ones((3, 3)))
save("scatter_set", lambda a, i, u: a.at[i, 1].set(u), jnp.zeros((8, 3)), jnp.array([2, 6]), jnp.ones((2,)))
save("fori_loop", lambda a: lax.fori_loop(0, 5, lambda i, c: c * 2.0 + i, a), jnp.ones((4,)))
save("cond", lambda p, a: lax.cond(p, lambda v: v + 1, lambda v: v * 2, a), True, jnp.ones((3,)))
lhs, rhs = jnp.ones((4, 3, 9)), jnp.ones((6, 3, 3))
save("conv_batch_group", lambda l, r: lax.conv_general_dilated(l, r, (1,), [(1, 1)], batch_group_count=2), lhs, rhs)
save("conv_rev", lambda l, r: lax.conv_transpose(l, r, (2,), "SAME", dimension_numbers=("NCH", "OIH", "NCH")),
     jnp.ones((1, 3, 5)), jnp.ones((2, 3, 3)))
save("cumsum", lambda a: jnp.cumsum(a, axis=1), x)
save("topk", lambda a: lax.top_k(a, 2), x)
save("pool_pad", lambda a: lax.reduce_window(a, -jnp.inf, lax.max, (2, 3), (2, 1), [(1, 0), (1, 1)]), x)
save("gather_take", lambda a, i: jnp.take(a, i, axis=1), x, jnp.array([0, 5, 2]))
save("dynamic_slice", lambda a, i: lax.dynamic_slice(a, (i, 1), (2, 3)), x, 1)
save("scan_cumprod", lambda a: lax.scan(lambda c, r: (c * r, c), jnp.ones(6), a), x)
save("vmap_dynamic_slice", jax.vmap(lambda a, i: lax.dynamic_slice(a, (i,), (2,))), x, jnp.array([0, 1, 2, 3]))
save("attention", lambda q, k, v: jax.nn.softmax(q @ k.T / 2.0, axis=-1) @ v,
     jnp.ones((4, 8)), jnp.ones((5, 8)), jnp.ones((5, 8)))
save("conv2d_nhwc", lambda a, w: lax.conv_general_dilated(a, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
     jnp.ones((1, 6, 6, 3)), jnp.ones((3, 3, 3, 4)))
save("argmax_onehot", lambda a: jax.nn.one_hot(jnp.argmax(a, axis=1), 6) * a, x)
save("where_pad_concat", lambda a: jnp.concatenate([jnp.pad(jnp.where(a > 3, a, 0.0), ((1, 0), (0, 2))), jnp.zeros((1, 8))]), x)
save("einsum_batched", lambda a, b: jnp.einsum("bij,bjk->bik", a, b), jnp.ones((2, 3, 4)), jnp.ones((2, 4, 5)))
save("cholesky", lambda a: jnp.linalg.cholesky(a @ a.T + jnp.eye(4)), x[:, :4])
save("rev_cumsum_maxpool", lambda a: lax.reduce_window(jnp.cumsum(a[::-1], axis=0), -jnp.inf, lax.max, (2, 2), (1, 1), "SAME"), x)
save("gather_2d", lambda a, i: a[i[:, 0], i[:, 1]], x, jnp.array([[0, 1], [3, 5]]))
save("scatter_2d_max", lambda a, i, u: a.at[i[:, 0], i[:, 1]].max(u), x, jnp.array([[0, 1], [3, 5]]), jnp.array([1.0, 2.0]))
save("sort_multi_key", lambda a, b: lax.sort((a, b), num_keys=2), x, x[::-1])
