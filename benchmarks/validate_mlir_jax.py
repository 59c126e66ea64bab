"""validate-mlir on 17 small JAX programs (issue 24): MLIR's linalg-fuse-elementwise-ops run by
IREE on each program's linalg (``iree-compile --compile-to=input``), every fused op and every op
rewritten by reshape propagation checked; prints each program's verdicts, the decisions the model of
the pass gets wrong, and the tally. Needs jax and IREE (the ``mlir`` extra).

Run: ``.venv/bin/python benchmarks/validate_mlir_jax.py``
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from verified_indexing.mlir_driver import validate_jax

F32 = np.float32
X48 = np.ones((4, 8), F32)
B8 = np.ones((8,), F32)
W88 = np.ones((8, 8), F32)


def _layer_norm(x: Any) -> Any:
    m = jnp.mean(x, -1, keepdims=True)
    v = jnp.mean((x - m) ** 2, -1, keepdims=True)
    return (x - m) / jnp.sqrt(v + 1e-5)


def _pool(op: Any, init: float) -> Callable[[Any], Any]:
    return lambda x: jax.lax.reduce_window(x, init, op, (1, 2, 2), (1, 2, 2), "VALID") * 2.0


PROGRAMS: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
    "chain": (lambda x, y: jnp.tanh(x * y + 1.0) - y, (X48, X48)),
    "transpose": (lambda x: x.T * 2.0, (X48,)),
    "broadcast": (lambda x, b: x * b[None, :] + b, (X48, B8)),
    "layer_norm": (_layer_norm, (X48,)),
    "softmax": (lambda x: jax.nn.softmax(x, -1), (X48,)),
    "mlp": (lambda x, w, b: jax.nn.relu(x @ w + b) @ w, (X48, W88, B8)),
    "attention": (lambda q, k, v: jax.nn.softmax(q @ k.T / 2.0, -1) @ v, (X48, X48, X48)),
    "conv_bias_relu": (lambda x, w, b: jax.nn.relu(jax.lax.conv(x, w, (1, 1), "SAME") + b[None, :, None, None]),
                       (np.ones((1, 2, 6, 6), F32), np.ones((3, 2, 3, 3), F32), np.ones((3,), F32))),
    "max_pool": (_pool(jax.lax.max, -np.inf), (np.ones((2, 4, 4), F32),)),
    "avg_pool": (_pool(jax.lax.add, 0.0), (np.ones((2, 4, 4), F32),)),
    "argmax": (lambda x: jnp.argmax(x * 2.0, -1), (X48,)),
    "gelu": (jax.nn.gelu, (X48,)),
    "sum_squares": (lambda x: jnp.sum(x * x, -1) + 1.0, (X48,)),
    "rms": (lambda x: x / jnp.sqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6), (X48,)),
    "where": (lambda x, y: jnp.where(x > y, x - y, y * 2.0), (X48, X48)),
    "mean_center": (lambda x: x - jnp.mean(x, 0, keepdims=True), (X48,)),
    "flatten": (lambda x, y: jnp.reshape(jnp.exp(x), (32,)) * y, (X48, np.ones((32,), F32))),
}


def main(argv: list[str]) -> int:
    """Validate the pass on each program (``argv``: a subset of their names); exit 1 unless every fused and every
    reshape-propagated op is proved and every modelled decision agrees with the pass."""
    unknown_names = [n for n in argv if n not in PROGRAMS]
    if unknown_names:
        print(f"unknown program(s) {unknown_names}; known: {sorted(PROGRAMS)}", file=sys.stderr)
        return 2
    tot = dict.fromkeys(("pairs", "fused", "proved", "refuted", "unknown", "reshaped", "reshaped_proved",
                         "decisions", "decisions_agree", "refusals"), 0)
    for name, (fn, args) in PROGRAMS.items():
        if argv and name not in argv:
            continue
        t = time.time()
        r = validate_jax(fn, *args)
        reshaped = [f for f in r.fused if f.reason.startswith("reshape propagation")]
        fused = [f for f in r.fused if f not in reshaped]
        agree = sum(d.predicted == d.fused for d in r.decisions)
        tot["pairs"] += r.pairs
        tot["fused"] += len(fused)
        tot["reshaped"] += len(reshaped)
        tot["reshaped_proved"] += sum(f.status == "proved" for f in reshaped)
        for f in fused:
            tot[f.status] += 1
        tot["decisions"] += len(r.decisions)
        tot["decisions_agree"] += agree
        tot["refusals"] += len(r.refusals)
        print(f"{name}: {r.pairs} pairs, fused {[f.status for f in fused]}, reshaped {[f.status for f in reshaped]}, "
              f"decisions {agree}/{len(r.decisions)} ({time.time() - t:.1f} s)")
        for f in r.fused:
            if f.status != "proved":
                print(f"    {f.op} {f.status}: {f.reason[:300]}")
        for d in r.decisions:
            if d.predicted != d.fused:
                print(f"    decision {d.producer} -> {d.consumer}: model {d.predicted}, pass {d.fused}: {d.why[:150]}")
    bad = tot["fused"] - tot["proved"] + tot["reshaped"] - tot["reshaped_proved"]
    print(f"total: {tot['pairs']} pairs; fused ops {tot['proved']}/{tot['fused']} proved, reshape-propagated ops "
          f"{tot['reshaped_proved']}/{tot['reshaped']} proved; the modelled decision equals the pass's on "
          f"{tot['decisions_agree']}/{tot['decisions']} pairs; pass refusals the project proves legal: {tot['refusals']}")
    if bad or tot["decisions_agree"] != tot["decisions"]:
        print(f"NOT ALL PROVED OR AGREEING: {tot}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
