"""Regenerate the IREE corpus: small JAX programs lowered by
``jax.jit(f).lower(...).as_text()`` to StableHLO, then by ``iree-compile
--compile-to=PHASE`` to linalg, as IREE writes it. Phases: ``input`` (IREE's
input pipeline: linalg on tensors in ``util.func``s, named ops as the
StableHLO conversion emits them) and ``dispatch-creation`` (``flow.dispatch.workgroups``
regions, after IREE's own fusion); the first three programs also at ``flow``
(``flow.executable`` functions).

Programs: the three of the first corpus (an MLP block with layer norm, a softmax
in bf16, an elementwise chain with a transpose) and sixteen more, the ones of
``benchmarks/validate_mlir_jax.py`` (elementwise chains, transpose, broadcast,
layer norm, softmax, an MLP block, attention, a convolution with bias and ReLU,
max and average pooling, argmax, GELU, a sum of squares, RMS norm, ``where``, a
mean-centering) plus a depthwise convolution, an NHWC max pooling and a batched
matmul.

Run from this directory with the project's venv (jax and iree-base-compiler
installed): ``python generate.py [NAME...]`` (default: every program). The
files carry the recipe in their first lines; the tests read them whether or not
IREE is installed (tests/test_linalg_iree.py, tests/test_linalg_named.py).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

PHASES = ("input", "dispatch-creation")
FIRST = ("mlp_ln", "softmax_bf16", "chain")  # also at the flow phase


def programs() -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    """Every program of the corpus: name -> (function, example arguments)."""
    import jax
    import jax.numpy as jnp
    import numpy as np

    f32 = np.float32
    x48, b8, w88 = np.ones((4, 8), f32), np.ones((8,), f32), np.ones((8, 8), f32)

    def mlp_ln(x: Any, w: Any, b: Any) -> Any:
        h = jnp.maximum(x @ w + b, 0.0)
        m = h.mean(axis=-1, keepdims=True)
        v = ((h - m) ** 2).mean(axis=-1, keepdims=True)
        return (h - m) / jnp.sqrt(v + 1e-5)

    def softmax_bf16(x: Any) -> Any:
        y = x.astype(jnp.bfloat16)
        e = jnp.exp(y - y.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)).astype(jnp.float32)

    def chain(x: Any, y: Any) -> Any:
        return jnp.tanh(x * 2.0 + y.T) - x

    def layer_norm(x: Any) -> Any:
        m = jnp.mean(x, -1, keepdims=True)
        v = jnp.mean((x - m) ** 2, -1, keepdims=True)
        return (x - m) / jnp.sqrt(v + 1e-5)

    def pool(op: Any, init: float) -> Callable[[Any], Any]:
        return lambda x: jax.lax.reduce_window(x, init, op, (1, 2, 2), (1, 2, 2), "VALID") * 2.0

    def depthwise(x: Any, w: Any) -> Any:
        dn = ("NHWC", "HWIO", "NHWC")
        return jax.lax.conv_general_dilated(x, w, (1, 1), "VALID", dimension_numbers=dn,
                                            feature_group_count=2) * 2.0

    return {
        "mlp_ln": (mlp_ln, (jnp.ones((4, 8)), jnp.ones((8, 16)), jnp.ones((16,)))),
        "softmax_bf16": (softmax_bf16, (jnp.ones((4, 16)),)),
        "chain": (chain, (jnp.ones((4, 4)), jnp.ones((4, 4)))),
        "chain2": (lambda x, y: jnp.tanh(x * y + 1.0) - y, (x48, x48)),
        "transpose": (lambda x: x.T * 2.0, (x48,)),
        "broadcast": (lambda x, b: x * b[None, :] + b, (x48, b8)),
        "layer_norm": (layer_norm, (x48,)),
        "softmax": (lambda x: jax.nn.softmax(x, -1), (x48,)),
        "mlp": (lambda x, w, b: jax.nn.relu(x @ w + b) @ w, (x48, w88, b8)),
        "attention": (lambda q, k, v: jax.nn.softmax(q @ k.T / 2.0, -1) @ v, (x48, x48, x48)),
        "conv_bias_relu": (lambda x, w, b: jax.nn.relu(jax.lax.conv(x, w, (1, 1), "SAME") + b[None, :, None, None]),
                           (np.ones((1, 2, 6, 6), f32), np.ones((3, 2, 3, 3), f32), np.ones((3,), f32))),
        "max_pool": (pool(jax.lax.max, -np.inf), (np.ones((2, 4, 4), f32),)),
        "avg_pool": (pool(jax.lax.add, 0.0), (np.ones((2, 4, 4), f32),)),
        "argmax": (lambda x: jnp.argmax(x * 2.0, -1), (x48,)),
        "gelu": (jax.nn.gelu, (x48,)),
        "sum_squares": (lambda x: jnp.sum(x * x, -1) + 1.0, (x48,)),
        "rms": (lambda x: x / jnp.sqrt(jnp.mean(x * x, -1, keepdims=True) + 1e-6), (x48,)),
        "where": (lambda x, y: jnp.where(x > y, x - y, y * 2.0), (x48, x48)),
        "mean_center": (lambda x: x - jnp.mean(x, 0, keepdims=True), (x48,)),
        "depthwise_conv": (depthwise, (np.ones((1, 5, 5, 2), f32), np.ones((3, 3, 1, 2), f32))),
        "pool_nhwc": (lambda x: jax.lax.reduce_window(x, -np.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
                      + 1.0, (np.ones((1, 4, 4, 2), f32),)),
        "batch_matmul": (lambda a, b: jnp.einsum("bij,bjk->bik", a, b) + 1.0,
                         (np.ones((2, 3, 4), f32), np.ones((2, 4, 5), f32))),
    }


def lower(name: str, fn: Callable[..., Any], args: tuple[Any, ...], phase: str, compiler: str) -> str:
    """``iree-compile --compile-to=phase`` of the program's StableHLO, with the corpus header."""
    import jax

    stablehlo = jax.jit(fn).lower(*args).as_text()
    out = subprocess.run(
        [compiler, "--iree-input-type=stablehlo", f"--compile-to={phase}", "--iree-hal-target-device=local",
         "--iree-hal-local-target-device-backends=llvm-cpu", "--mlir-print-debuginfo=false", "-", "-o", "-"],
        input=stablehlo, check=True, capture_output=True, text=True).stdout
    head = (f"// Generated by iree-compile (iree-base-compiler) --compile-to={phase} from "
            f"jax.jit({name}).lower(...).as_text()\n"
            "// (the recipe: tests/mlir_corpus/iree/generate.py); read by tests/test_linalg_mlir_reading.py "
            "and tests/test_linalg_iree.py.\n")
    return head + out


def main(argv: list[str]) -> None:
    here = Path(__file__).resolve().parent
    compiler = str(Path(sys.executable).parent / "iree-compile")
    progs = programs()
    for name in argv or list(progs):
        fn, args = progs[name]
        for phase in PHASES + (("flow",) if name in FIRST else ()):
            (here / f"{name}.{phase}.mlir").write_text(lower(name, fn, args, phase, compiler))


if __name__ == "__main__":
    main(sys.argv[1:])
