"""Real-model-sized HLO modules, generated with JAX (nothing large is committed).

Two programs written in JAX, in the style of the models whose HLO users analyze:

* ``llama``: a llama-style decoder (RMSNorm, rotary embeddings, grouped-query attention with a
  causal mask, SwiGLU MLP), ``layers`` layers unrolled in Python (as ``jax.jit`` of a model
  without ``scan`` traces them);
* ``moe``: a mixture-of-experts layer stack (a router, top-k gating by ``jax.lax.top_k``, each
  expert's SwiGLU MLP weighted by its gate, a residual), ``layers`` layers unrolled;
* ``train``: a training step of a decoder whose layers are stacked and run by ``jax.lax.scan`` (the
  forward pass and, through ``jax.grad``, the backward pass are each a ``while`` loop over the layers), a
  mean-squared loss and an SGD update, repeated by ``jax.lax.fori_loop`` (a ``while`` around the loops); its
  size grows with the scan's ``unroll`` (``layers`` copies of the layer in each loop body).

:func:`generate` writes each, unoptimized (``jax.jit(f).lower(...).as_text(dialect='hlo')``: no
fusions) and optimized (``.compile().as_text()``: XLA:CPU's fusions), with the number of layers
chosen so that the text is about the requested size. Run: ``python benchmarks/hlo_models.py DIR
[KB,...]`` (writes ``DIR/{llama,moe}.{unopt,opt}.{SIZE}K.hlo``, default 1024, 2048 and 4096 KB; without
arguments, a short run at 10 KB in a temporary directory). ``benchmarks/hlo.py`` measures them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

KINDS = ("llama", "moe", "train")


def _spec(shape: tuple[int, ...]) -> Any:
    """A float32 argument of ``shape`` (traced, never allocated)."""
    import jax
    import jax.numpy as jnp

    return jax.ShapeDtypeStruct(shape, jnp.float32)  # type: ignore[no-untyped-call]


def _llama(layers: int) -> tuple[Callable[..., Any], list[Any]]:
    import jax
    import jax.numpy as jnp

    seq, dim, heads, kv_heads, hidden = 16, 64, 4, 2, 128
    head = dim // heads

    def rms(x: Any, w: Any) -> Any:
        return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w

    def rope(x: Any) -> Any:
        pos = jnp.arange(seq, dtype=jnp.float32)[:, None]
        freq = 1.0 / (10000.0 ** (jnp.arange(0, head, 2, dtype=jnp.float32) / head))
        ang = pos * freq
        cos, sin = jnp.cos(ang)[:, None, :], jnp.sin(ang)[:, None, :]
        x1, x2 = x[..., ::2], x[..., 1::2]
        return jnp.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], axis=-1).reshape(x.shape)

    def layer(x: Any, w: dict[str, Any]) -> Any:
        h = rms(x, w["n1"])
        q = rope((h @ w["q"]).reshape(seq, heads, head))
        k = rope((h @ w["k"]).reshape(seq, kv_heads, head))
        v = (h @ w["v"]).reshape(seq, kv_heads, head)
        k = jnp.repeat(k, heads // kv_heads, axis=1)
        v = jnp.repeat(v, heads // kv_heads, axis=1)
        s = jnp.einsum("qhd,khd->hqk", q, k) / jnp.sqrt(head)
        mask = jnp.tril(jnp.ones((seq, seq), bool))
        s = jnp.where(mask, s, -1e9)
        a = jax.nn.softmax(s, axis=-1)
        o = jnp.einsum("hqk,khd->qhd", a, v).reshape(seq, dim) @ w["o"]
        x = x + o
        h = rms(x, w["n2"])
        return x + (jax.nn.silu(h @ w["g"]) * (h @ w["u"])) @ w["d"]

    def model(x: Any, ws: list[dict[str, Any]]) -> Any:
        for w in ws:
            x = layer(x, w)
        return x

    shapes = {"n1": (dim,), "q": (dim, dim), "k": (dim, kv_heads * head), "v": (dim, kv_heads * head),
              "o": (dim, dim), "n2": (dim,), "g": (dim, hidden), "u": (dim, hidden), "d": (hidden, dim)}
    ws = [{k: _spec(s) for k, s in shapes.items()} for _ in range(layers)]
    return model, [_spec((seq, dim)), ws]


def _moe(layers: int) -> tuple[Callable[..., Any], list[Any]]:
    import jax
    import jax.numpy as jnp

    tokens, dim, experts, top, hidden = 32, 64, 8, 2, 128

    def layer(x: Any, w: dict[str, Any]) -> Any:
        logits = x @ w["router"]
        gates, chosen = jax.lax.top_k(jax.nn.softmax(logits, axis=-1), top)
        weight = jnp.sum(jax.nn.one_hot(chosen, experts) * gates[..., None], axis=1)  # [tokens, experts]
        h = jnp.einsum("td,edh->teh", x, w["g"])
        u = jnp.einsum("td,edh->teh", x, w["u"])
        y = jnp.einsum("teh,ehd->ted", jax.nn.silu(h) * u, w["d"])
        return x + jnp.einsum("ted,te->td", y, weight)

    def model(x: Any, ws: list[dict[str, Any]]) -> Any:
        for w in ws:
            x = layer(x, w)
        return x

    shapes = {"router": (dim, experts), "g": (experts, dim, hidden), "u": (experts, dim, hidden),
              "d": (experts, hidden, dim)}
    ws = [{k: _spec(s) for k, s in shapes.items()} for _ in range(layers)]
    return model, [_spec((tokens, dim)), ws]


def _train(layers: int) -> tuple[Callable[..., Any], list[Any]]:
    import jax
    import jax.numpy as jnp

    seq, dim, hidden, steps = 16, 64, 128, 2
    depth = 2 * layers  # stacked layers, two trips of the scan, whose body holds ``layers`` of them (unroll)

    def rms(x: Any, w: Any) -> Any:
        return x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6) * w

    def layer(x: Any, w: dict[str, Any]) -> tuple[Any, None]:
        h = rms(x, w["n1"])
        q, k, v = h @ w["q"], h @ w["k"], h @ w["v"]
        s = (q @ k.T) / jnp.sqrt(dim)
        s = jnp.where(jnp.tril(jnp.ones((seq, seq), bool)), s, -1e9)
        x = x + (jax.nn.softmax(s, axis=-1) @ v) @ w["o"]
        h = rms(x, w["n2"])
        return x + (jax.nn.silu(h @ w["g"]) * (h @ w["u"])) @ w["d"], None

    def loss(ws: dict[str, Any], x: Any, y: Any) -> Any:
        out, _ = jax.lax.scan(layer, x, ws, unroll=layers)
        return jnp.mean((out - y) ** 2)

    def train(ws: dict[str, Any], x: Any, y: Any) -> Any:
        def step(_: Any, ws: dict[str, Any]) -> dict[str, Any]:
            grads = jax.grad(loss)(ws, x, y)
            return jax.tree_util.tree_map(lambda w, g: w - 1e-3 * g, ws, grads)

        return jax.lax.fori_loop(0, steps, step, ws)

    shapes = {"n1": (dim,), "q": (dim, dim), "k": (dim, dim), "v": (dim, dim), "o": (dim, dim), "n2": (dim,),
              "g": (dim, hidden), "u": (dim, hidden), "d": (hidden, dim)}
    ws = {k: _spec((depth, *s)) for k, s in shapes.items()}
    return train, [ws, _spec((seq, dim)), _spec((seq, dim))]


_MODELS = {"llama": _llama, "moe": _moe, "train": _train}


def hlo_text(kind: str, layers: int, optimized: bool) -> str:
    """The HLO text of model ``kind`` with ``layers`` layers (``train``: layers per loop body), unoptimized
    or XLA:CPU-optimized."""
    import jax

    f, args = _MODELS[kind](layers)
    lowered = jax.jit(f).lower(*args)
    if optimized:
        return str(lowered.compile().as_text())
    return str(lowered.as_text(dialect="hlo"))


def sized(kind: str, size: int, optimized: bool) -> tuple[str, int]:
    """The text of ``kind`` with the number of layers making it about ``size`` bytes (at least one
    layer), and that number."""
    one = len(hlo_text(kind, 1, optimized))
    two = len(hlo_text(kind, 2, optimized))
    per = max(two - one, 1)
    layers = max(1, round((size - (one - per)) / per))
    text = hlo_text(kind, layers, optimized)
    if layers > 2 and abs(len(text) - size) > size // 8:  # not linear in the layers: one secant step more
        per = max((len(text) - one) / (layers - 1), 1.0)
        layers = max(1, round(1 + (size - one) / per))
        text = hlo_text(kind, layers, optimized)
    return text, layers


def generate(out: Path, sizes: tuple[int, ...] = (1 << 20, 2 << 20, 4 << 20)) -> list[Path]:
    """Write every kind, unoptimized and optimized, at each size; the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for kind in KINDS:
        for optimized in (False, True):
            for size in sizes:
                text, _ = sized(kind, size, optimized)
                path = out / f"{kind}.{'opt' if optimized else 'unopt'}.{size >> 10}K.hlo"
                path.write_text(text)
                paths.append(path)
    return paths


if __name__ == "__main__":
    if len(sys.argv) > 1:
        target = Path(sys.argv[1])
        kb = [int(x) for x in sys.argv[2].split(",") if x] if len(sys.argv) > 2 else [1024, 2048, 4096]
        for p in generate(target, tuple(k << 10 for k in kb)):
            print(f"{p}  {p.stat().st_size} bytes")
    else:  # a short run (CI's smoke test): small modules in a temporary directory
        import tempfile

        print("short run: each kind at about 10 KB, unoptimized and optimized, in a temporary directory")
        with tempfile.TemporaryDirectory() as tmp:
            for p in generate(Path(tmp), (10 << 10,)):
                print(f"{p.name}  {p.stat().st_size} bytes")
