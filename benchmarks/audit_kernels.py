"""audit-kernels on the dump directories of 33 small JAX programs (issue 25 item 2): each program is
compiled by jaxlib's XLA:CPU with ``--xla_dump_to=DIR --xla_dump_emitter_re=.*`` into a directory of
its own, and every kernel XLA's fusion emitters wrote (``*-pre-optimization.mlir``) and every kernel
after XLA's passes (``*-post-optimization.mlir``) is checked against the proven maps of its fusion.
Prints, per program, the opcodes of its HLO that name the kind it stands for (checked present), the
number of kernel files, their verdicts and the time of ``audit_dump`` (parsing and isl included), then
the tally. Exit 1 when a kernel is not proved or a program lacks its kind. Needs jax.

Run: ``.venv/bin/python benchmarks/audit_kernels.py [NAME...]`` (default: every program).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

import numpy as np

F32 = np.float32
X48 = np.ones((4, 8), F32)
B8 = np.ones((8,), F32)


def _layer_norm(x: Any) -> Any:
    return (x - x.mean(-1, keepdims=True)) / (x.std(-1, keepdims=True) + 1e-5)


def _programs() -> dict[str, tuple[Callable[..., Any], tuple[Any, ...], tuple[str, ...]]]:
    """name -> (function, arguments, opcodes its optimized-or-not HLO must hold)."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    return {
        "elementwise": (lambda x, y: jnp.exp(x) * y + 1, (X48, X48), ("exponential", "multiply", "add")),
        "broadcast": (lambda x, v: x + v[None, :], (X48, B8), ("broadcast",)),
        "reduce": (lambda x: jnp.sum(jnp.exp(x), axis=1), (X48,), ("reduce",)),
        "transpose": (lambda x: jnp.exp(x.T) + 1, (X48,), ("transpose",)),
        "slice": (lambda x: x[1:3, ::2] * 2, (X48,), ("slice",)),
        "pad": (lambda x: jnp.pad(x, ((1, 2), (0, 3))) * 2, (X48,), ("pad",)),
        "concatenate": (lambda x, y: jnp.concatenate([x, y], 1) + 1, (X48, np.ones((4, 3), F32)), ("concatenate",)),
        "gather": (lambda x, i: x[i] + 1, (np.ones((16, 8), F32), np.array([3, 1, 7], np.int32)), ("gather",)),
        "dynamic_slice": (lambda x, i: lax.dynamic_slice(x, (i, 0), (2, 8)) + 1, (X48, np.int32(1)),
                          ("dynamic-slice",)),
        "dynamic_update_slice": (lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 0)) * 2,
                                 (X48, np.ones((2, 8), F32), np.int32(1)), ("dynamic-update-slice",)),
        "dot": (lambda a, b: jnp.tanh(a @ b), (X48, np.ones((8, 3), F32)), ("dot", "tanh")),
        "convolution": (lambda x, w: lax.conv(x, w, (1, 1), "SAME") + 1,
                        (np.ones((1, 2, 6, 6), F32), np.ones((3, 2, 3, 3), F32)), ("convolution",)),
        "reduce_window": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2), "VALID") + 1, (X48,),
                          ("reduce-window",)),
        "softmax": (lambda x: jax.nn.softmax(x, axis=-1), (X48,), ("reduce", "exponential", "divide")),
        "layer_norm": (_layer_norm, (X48,), ("reduce", "sqrt", "divide")),
        "attention": (lambda q, k, v: jax.nn.softmax(q @ k.T / 2.0, axis=-1) @ v,
                      (X48, np.ones((6, 8), F32), np.ones((6, 8), F32)), ("dot", "reduce", "exponential")),
        "reshape": (lambda x: x.reshape(8, 4)[::2] + 1, (X48,), ("reshape",)),
        "reverse": (lambda x: jnp.flip(x, 1) * 3, (X48,), ("reverse",)),
        "iota": (lambda x: x + jnp.arange(8, dtype=F32)[None, :], (X48,), ("iota",)),
        "select": (lambda x, y: jnp.where(x > 0, x, y) + 1, (X48, X48), ("select", "compare")),
        "cumsum": (lambda x: jnp.cumsum(x, axis=1) + 1, (X48,), ("reduce-window",)),
        "argmax": (lambda x: jnp.argmax(x, axis=1), (X48,), ("reduce",)),
        "embedding": (lambda t, i: t[i] * 2, (np.ones((10, 4), F32), np.array([[1, 2], [3, 9]], np.int32)),
                      ("gather",)),
        "gather_2d": (lambda x, i, j: x[i, j] + 1, (np.ones((8, 8), F32), np.array([1, 2, 3], np.int32),
                                                    np.array([0, 5, 7], np.int32)), ("gather", "concatenate")),
        "take_along_axis": (lambda x, i: jnp.take_along_axis(x, i, axis=1) + 1,
                            (X48, np.array([[0, 7, 3]] * 4, np.int32)), ("gather", "iota")),
        "scatter_add": (lambda x, i, u: x.at[i].add(u), (np.ones((8, 4), F32), np.array([1, 5], np.int32),
                                                         np.ones((2, 4), F32)), ("scatter",)),
        "sort": (lambda x: jnp.sort(x, axis=1) + 1, (X48,), ("sort",)),
        "one_hot": (lambda i: jax.nn.one_hot(i, 6) * 2, (np.array([1, 3, 5], np.int32),), ("iota", "compare")),
        "conv_stride": (lambda x, w: lax.conv(x, w, (2, 2), "SAME") * 3,
                        (np.ones((1, 2, 9, 9), F32), np.ones((4, 2, 3, 3), F32)), ("convolution",)),
        "dus_2d": (lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)) + 1,
                   (np.ones((6, 8), F32), np.ones((2, 3), F32), np.int32(2), np.int32(6)), ("dynamic-update-slice",)),
        "int_ops": (lambda a, b: (a >> 2) ^ (b & 7) + jnp.abs(a), (np.ones((4, 8), np.int32), np.ones((4, 8), np.int32)),
                    ("shift-right-arithmetic", "xor", "and", "abs")),
        "transpose_3d": (lambda x, y: jnp.transpose(x, (2, 0, 1)) + y, (np.ones((4, 6, 8), F32),
                                                                         np.ones((8, 4, 6), F32)), ("transpose",)),
        "matmul_bias_relu": (lambda x, w, b: jax.nn.relu(x @ w + b), (np.ones((8, 16), F32), np.ones((16, 4), F32),
                                                                       np.ones((4,), F32)), ("dot", "maximum")),
    }


def _opcodes(text: str) -> set[str]:
    return set(re.findall(r"\s([a-z][a-z0-9\-]*)\((?:%|\))", text))


def main(argv: list[str]) -> int:
    root = tempfile.mkdtemp(prefix="audit_kernels_")
    dump = os.path.join(root, "dump")
    os.environ["XLA_FLAGS"] = f"--xla_dump_to={dump} --xla_dump_emitter_re=.*"
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    import jax

    from verified_indexing.hlo.kernels import audit_dump

    programs = _programs()
    names = argv or list(programs)
    unknown = [n for n in names if n not in programs]
    if unknown:
        print(f"unknown program(s): {', '.join(unknown)}; known: {', '.join(programs)}", file=sys.stderr)
        return 3
    print(f"{'program':22} {'kernels':>7} {'proved':>6} {'ms':>8}  kinds in its HLO")
    total = proved = 0
    bad: list[str] = []
    try:
        for name in names:
            fn, args, kinds = programs[name]
            fn.__name__ = name  # the module's name: jit_<name>
            jax.jit(fn).lower(*args).compile()
            mine = os.path.join(root, name)
            os.makedirs(mine)
            for f in os.listdir(dump):  # this program's files only (the dumps of earlier programs were moved)
                shutil.move(os.path.join(dump, f), mine)
            ops: set[str] = set()
            for f in os.listdir(mine):
                if f.endswith(("before_optimizations.txt", "cpu_after_optimizations.txt")):
                    with open(os.path.join(mine, f), encoding="utf-8") as fh:
                        ops |= _opcodes(fh.read())
            missing = [k for k in kinds if k not in ops]
            start = time.perf_counter()
            results = [r for r in audit_dump(mine) if f"jit_{name}." in os.path.basename(r.file)]
            ms = (time.perf_counter() - start) * 1000
            ok = sum(r.status == "proved" for r in results)
            total += len(results)
            proved += ok
            print(f"{name:22} {len(results):7} {ok:6} {ms:8.1f}  {', '.join(k for k in kinds if k in ops)}", flush=True)
            for r in results:
                if r.status != "proved":
                    bad.append(f"{name}: {r.status} {r.kernel}: {r.reason}")
            if missing:
                bad.append(f"{name}: its HLO lacks {', '.join(missing)}")
            if not results:
                bad.append(f"{name}: no kernel dumped")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"total: {proved} of {total} kernel files proved in {len(names)} programs")
    for b in bad:
        print("NOT PROVED " + b)
    return 0 if not bad else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
