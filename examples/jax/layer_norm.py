"""Small real JAX programs for ``verified-indexing analyze --jax`` (docs/for-xla-users.md).

    verified-indexing analyze --jax examples/jax/layer_norm.py:layer_norm --args 'f32[8,128]' --args 'f32[128]'
"""

import jax
import jax.numpy as jnp


def layer_norm(x: jax.Array, scale: jax.Array) -> jax.Array:
    """Layer normalization over the last axis, with a learned scale."""
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * scale


def attention_scores(q: jax.Array, k: jax.Array) -> jax.Array:
    """Softmax of q @ k.T (one attention head): a transpose, a dot and two reductions."""
    return jax.nn.softmax(q @ k.T / jnp.sqrt(q.shape[-1]), axis=-1)


if __name__ == "__main__":
    # Run both once, so that XLA_FLAGS=--xla_dump_to=DIR leaves their compiled modules in DIR.
    x = jnp.linspace(-1.0, 1.0, 8 * 128, dtype=jnp.float32).reshape(8, 128)
    print(jax.jit(layer_norm)(x, jnp.ones(128, jnp.float32)).sum())
    q = jnp.ones((8, 16), jnp.float32)
    print(jax.jit(attention_scores)(q, q).sum())
