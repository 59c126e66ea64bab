"""Convolutions, poolings and softmax as MLIR generalizes them
(verified_indexing/legality/linalg_named.py, issue 24 item 3).

Oracles: MLIR's own ``linalg-generalize-named-ops`` and softmax decomposition run
by ``iree-opt`` (skipped without IREE): the same maps and iterator types, and the
project's interpreter computes the same values on the generic MLIR writes as on
the op the project reads; and, with or without IREE, numpy formulas written here
by loops (a convolution, a depthwise convolution, poolings, softmax) against
the interpreter on the op the project reads.
"""

from __future__ import annotations

import random
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from verified_indexing.errors import ParseError
from verified_indexing.legality.linalg_ir import GenericOp, parse_linalg_module
from verified_indexing.legality.linalg_named import NAMED_CONVS, Q_CONVS, _spatial, softmax_decomposition

np = pytest.importorskip("numpy")


def _iree_opt() -> str | None:
    local = Path(sys.executable).parent / "iree-opt"
    return str(local) if local.exists() else shutil.which("iree-opt")


IREE_OPT = _iree_opt()
needs_iree = pytest.mark.skipif(IREE_OPT is None, reason="iree-opt (iree-base-compiler) is not installed")

SIZES = {"n": 2, "f": 3, "c": 2, "ic": 2, "o": 3, "k": 2, "g": 2, "fg": 2, "cm": 2}


def _size(letter: str) -> int:
    return SIZES.get(letter, SIZES.get(letter[0], 0))


def _case(name: str, rng: random.Random, elem: tuple[str, str, str] = ("f32", "f32", "f32")
          ) -> tuple[str, dict[str, tuple[int, ...]]]:
    """A function holding ``name`` with small static shapes and seeded strides and
    dilations; the operands' shapes by value."""
    dom, i_s, k_s, o_s, _ = NAMED_CONVS[name]
    spatial = _spatial(dom.split())
    has_attrs = name not in ("conv_1d", "conv_2d", "conv_3d")  # those take no strides, no dilations
    strides = [rng.randint(1, 2) if has_attrs else 1 for _ in spatial]
    dil = [rng.randint(1, 2) if has_attrs else 1 for _ in spatial]

    def dim(tok: str) -> int:
        if tok.isupper():
            j = spatial.index(tok.lower())
            return (_size("o") - 1) * strides[j] + (_size("k") - 1) * dil[j] + 1
        return _size(tok)

    shapes = {v: tuple(dim(t) for t in s.split()) for v, s in (("%x", i_s), ("%w", k_s), ("%o", o_s))}
    ty = {v: f"tensor<{''.join(f'{d}x' for d in shapes[v])}{e}>" for v, e in zip(("%x", "%w", "%o"), elem)}
    attrs = ""
    if has_attrs:
        attrs = (f"{{dilations = dense<[{', '.join(map(str, dil))}]> : tensor<{len(dil)}xi64>, "
                 f"strides = dense<[{', '.join(map(str, strides))}]> : tensor<{len(dil)}xi64>}} ")
    text = (f"func.func @f(%x: {ty['%x']}, %w: {ty['%w']}, %o: {ty['%o']}) -> {ty['%o']} {{\n"
            f"  %0 = linalg.{name} {attrs}ins(%x, %w : {ty['%x']}, {ty['%w']}) outs(%o : {ty['%o']}) -> {ty['%o']}\n"
            f"  return %0 : {ty['%o']}\n}}\n")
    return text, shapes


def _q_case(name: str, rng: random.Random, zp: str) -> tuple[str, dict[str, tuple[int, ...]]]:
    """A quantized convolution: the base op's case with the zero points ``%zi, %zk : zp`` added."""
    elem = ("i8", "i8", "i32") if zp == "i32" else ("f16", "f16", "f32")
    text, shapes = _case(name[:-2], rng, elem)
    text = text.replace(f"linalg.{name[:-2]} ", f"linalg.{name} ").replace("%w: ", f"%zi: {zp}, %zk: {zp}, %w: ")
    text = re.sub(r"ins\(%x, %w : ([^)]*)\)", lambda m: f"ins(%x, %w, %zi, %zk : {m.group(1)}, {zp}, {zp})", text)
    return text, {**shapes, "%zi": (), "%zk": ()}


def _only(text: str) -> GenericOp:
    mod = parse_linalg_module(text, strict=True)
    assert not mod.skipped and len(mod.ops) == 1
    return mod.ops[0]


def _run(op: GenericOp, env: dict[str, Any]) -> Any:
    from verified_indexing.legality.linalg_interpreter import run_generic

    return run_generic(op, dict(env))[0]


def _env(shapes: dict[str, tuple[int, ...]], rng: Any) -> dict[str, Any]:
    return {v: rng.integers(-3, 4, size=s).astype(np.float64) for v, s in shapes.items()}


def _statements(op: GenericOp) -> list[str]:
    """The payload's operations with their types, in order (``arith.mulf:f32``)."""
    out = []
    for ln in op.payload.splitlines():
        ln = ln.strip()
        if ln and not ln.startswith(("^", "}")):
            rhs = ln.split("=", 1)[-1].split()
            out.append(f"{rhs[0]}:{ln.rsplit(':', 1)[-1].strip()}")
    return out


FLOAT_OPS = sorted(n for n in NAMED_CONVS if not n.endswith("_unsigned"))


@needs_iree
def test_generalization_equals_mlirs() -> None:
    # Every modelled op, seeded strides and dilations; MLIR generalizes the whole batch in one process.
    assert IREE_OPT is not None
    rng = random.Random(24)
    cases = {name: _case(name, rng) for name in FLOAT_OPS}
    cases["pooling_nhwc_sum:i8"] = _case("pooling_nhwc_sum", rng, ("i8", "f32", "i32"))
    cases["pooling_nhwc_max_unsigned:i8"] = _case("pooling_nhwc_max_unsigned", rng, ("i8", "f32", "i32"))
    cases["pooling_nwc_min_unsigned:i8"] = _case("pooling_nwc_min_unsigned", rng, ("i8", "f32", "i16"))
    cases["conv_2d_nhwc_hwcf:f16"] = _case("conv_2d_nhwc_hwcf", rng, ("f16", "f16", "f32"))
    for q in sorted(Q_CONVS):  # the quantized ones: i8 operands, i32 zero points and output
        cases[q] = _q_case(q, rng, "i32")
    cases[f"{sorted(Q_CONVS)[0]}:f32"] = _q_case(sorted(Q_CONVS)[0], rng, "f32")
    texts = [t for t, _ in cases.values()]
    res = subprocess.run([IREE_OPT, "--split-input-file", "--linalg-generalize-named-ops", "-"],
                         input="\n// -----\n".join(texts), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[:3000]
    outs = res.stdout.split("// -----")
    assert len(outs) == len(cases)
    nprng = np.random.default_rng(0)
    ran = 0
    for (name, (text, shapes)), out in zip(cases.items(), outs):
        ours = _only(text)
        mlir = _only(out)
        assert ours.kind == f"linalg.{name.split(':')[0]}" and mlir.kind == "linalg.generic", name
        assert [o.map for o in ours.operands] == [o.map for o in mlir.operands], name
        assert ours.iterator_types == mlir.iterator_types, name
        assert ours.result_types == mlir.result_types, name
        assert _statements(ours) == _statements(mlir), (name, ours.payload, mlir.payload)
        if ":" not in name or name.endswith(":f32"):  # payload semantics: the interpreter on both, random operands
            env = _env(shapes, nprng)
            if "%zi" in shapes:
                env.update({"%zi": 2.0, "%zk": -1.0})
            theirs = {m.value: env[o.value] for o, m in zip(ours.operands, mlir.operands)}  # MLIR's names
            assert np.array_equal(_run(ours, env), _run(mlir, theirs)), name
            ran += 1
    assert ran == len(FLOAT_OPS) + len(Q_CONVS) + 1


def _conv_nhwc_hwcf(x: Any, w: Any, o: Any, s: list[int], d: list[int]) -> Any:
    out = o.copy()
    n_, oh_, ow_, f_ = o.shape
    kh_, kw_, c_, _ = w.shape
    for n in range(n_):
        for oh in range(oh_):
            for ow in range(ow_):
                for f in range(f_):
                    for kh in range(kh_):
                        for kw in range(kw_):
                            for c in range(c_):
                                out[n, oh, ow, f] += x[n, oh * s[0] + kh * d[0], ow * s[1] + kw * d[1], c] * w[kh, kw, c, f]
    return out


def _depthwise_nchw_chw(x: Any, w: Any, o: Any, s: list[int], d: list[int]) -> Any:
    out = o.copy()
    n_, c_, oh_, ow_ = o.shape
    for n in range(n_):
        for c in range(c_):
            for oh in range(oh_):
                for ow in range(ow_):
                    for kh in range(w.shape[1]):
                        for kw in range(w.shape[2]):
                            out[n, c, oh, ow] += x[n, c, oh * s[0] + kh * d[0], ow * s[1] + kw * d[1]] * w[c, kh, kw]
    return out


def _pool_nhwc(x: Any, w: Any, o: Any, s: list[int], d: list[int], how: str) -> Any:
    out = o.copy()
    n_, oh_, ow_, c_ = o.shape
    for n in range(n_):
        for oh in range(oh_):
            for ow in range(ow_):
                for c in range(c_):
                    window = [x[n, oh * s[0] + kh * d[0], ow * s[1] + kw * d[1], c]
                              for kh in range(w.shape[0]) for kw in range(w.shape[1])]
                    acc = out[n, oh, ow, c]
                    out[n, oh, ow, c] = {"sum": acc + sum(window), "max": max([acc, *window]),
                                         "min": min([acc, *window])}[how]
    return out


def _conv_1d_ncw_fcw(x: Any, w: Any, o: Any, s: list[int], d: list[int]) -> Any:
    out = o.copy()
    for n in range(o.shape[0]):
        for f in range(o.shape[1]):
            for ow in range(o.shape[2]):
                for c in range(w.shape[1]):
                    for kw in range(w.shape[2]):
                        out[n, f, ow] += x[n, c, ow * s[0] + kw * d[0]] * w[f, c, kw]
    return out


def _conv_nchw_fchw(x: Any, w: Any, o: Any, s: list[int], d: list[int]) -> Any:
    out = o.copy()
    n_, f_, oh_, ow_ = o.shape
    for n in range(n_):
        for f in range(f_):
            for oh in range(oh_):
                for ow in range(ow_):
                    for c in range(w.shape[1]):
                        for kh in range(w.shape[2]):
                            for kw in range(w.shape[3]):
                                out[n, f, oh, ow] += x[n, c, oh * s[0] + kh * d[0], ow * s[1] + kw * d[1]] * w[f, c, kh, kw]
    return out


def _conv_ngchw_fgchw(x: Any, w: Any, o: Any, s: list[int], d: list[int]) -> Any:
    # grouped: output feature fg of group g reads the channels of group g only
    out = o.copy()
    n_, g_, fg_, oh_, ow_ = o.shape
    for n in range(n_):
        for g in range(g_):
            for fg in range(fg_):
                for oh in range(oh_):
                    for ow in range(ow_):
                        acc = out[n, g, fg, oh, ow]
                        for c in range(x.shape[2]):
                            for kh in range(w.shape[3]):
                                for kw in range(w.shape[4]):
                                    acc += x[n, g, c, oh * s[0] + kh * d[0], ow * s[1] + kw * d[1]] * w[fg, g, c, kh, kw]
                        out[n, g, fg, oh, ow] = acc
    return out


def _pool_nchw_max(x: Any, w: Any, o: Any, s: list[int], d: list[int]) -> Any:
    out = o.copy()
    n_, c_, oh_, ow_ = o.shape
    for n in range(n_):
        for c in range(c_):
            for oh in range(oh_):
                for ow in range(ow_):
                    out[n, c, oh, ow] = max([out[n, c, oh, ow]] + [x[n, c, oh * s[0] + kh * d[0], ow * s[1] + kw * d[1]]
                                                                   for kh in range(w.shape[0]) for kw in range(w.shape[1])])
    return out


ORACLES = {
    "conv_2d_nchw_fchw": _conv_nchw_fchw,
    "conv_2d_ngchw_fgchw": _conv_ngchw_fgchw,
    "pooling_nchw_max": _pool_nchw_max,
    "conv_2d_nhwc_hwcf": _conv_nhwc_hwcf,
    "depthwise_conv_2d_nchw_chw": _depthwise_nchw_chw,
    "pooling_nhwc_sum": lambda x, w, o, s, d: _pool_nhwc(x, w, o, s, d, "sum"),
    "pooling_nhwc_max": lambda x, w, o, s, d: _pool_nhwc(x, w, o, s, d, "max"),
    "pooling_nhwc_min": lambda x, w, o, s, d: _pool_nhwc(x, w, o, s, d, "min"),
    "conv_1d_ncw_fcw": _conv_1d_ncw_fcw,
}


@pytest.mark.parametrize("name", sorted(ORACLES))
def test_interpreter_on_the_named_op_equals_numpy_loops(name: str) -> None:
    for seed in range(3):
        rng = random.Random(seed)
        text, shapes = _case(name, rng)
        op = _only(text)
        spatial = _spatial(NAMED_CONVS[name][0].split())
        m = re.search(r"dilations = dense<\[([^\]]*)\]>.*strides = dense<\[([^\]]*)\]>", text)
        assert m is not None
        dil = [int(v) for v in m.group(1).split(",")]
        strides = [int(v) for v in m.group(2).split(",")]
        assert len(strides) == len(spatial)
        env = _env(shapes, np.random.default_rng(seed))
        want = ORACLES[name](env["%x"], env["%w"], env["%o"], strides, dil)
        assert np.array_equal(_run(op, env), want), (name, seed)


def test_named_conv_errors_are_positioned() -> None:
    text, _ = _case("conv_2d_nhwc_hwcf", random.Random(0))
    bad_rank = text.replace("ins(%x, %w : tensor<", "ins(%x, %w : tensor<9x", 1)
    with pytest.raises(ParseError, match="rank"):
        parse_linalg_module(bad_rank)
    three = text.replace("dense<[", "dense<[1, ", 1)
    with pytest.raises(ParseError, match="2 strides and dilations") as info:
        parse_linalg_module(three)
    assert three[info.value.offset:].startswith("linalg.conv_2d_nhwc_hwcf")
    # strides written in a form the reader does not know: an error, never the default 1
    odd = re.sub(r"strides = dense<\[[^\]]*\]>", 'strides = dense<"0x02000000000000000200000000000000">', text)
    assert odd != text
    with pytest.raises(ParseError, match="'strides' is not read"):
        parse_linalg_module(odd)
    # a quantized convolution without its zero points is malformed
    q = text.replace("linalg.conv_2d_nhwc_hwcf", "linalg.conv_2d_nhwc_hwcf_q")
    with pytest.raises(ParseError, match="input zero point, filter zero point"):
        parse_linalg_module(q)
    # an op not modelled is skipped with the reason, never guessed
    mod = parse_linalg_module(text.replace("linalg.conv_2d_nhwc_hwcf", "linalg.depthwise_conv_3d_ndhwc_dhwcm"))
    assert not mod.ops and mod.skipped[0].op == "linalg.depthwise_conv_3d_ndhwc_dhwcm"


def _softmax_case(shape: tuple[int, ...], dim: int) -> str:
    ty = f"tensor<{''.join(f'{d}x' for d in shape)}f32>"
    return (f"func.func @f(%s: {ty}, %o: {ty}) -> {ty} {{\n"
            f"  %r = linalg.softmax dimension({dim}) ins(%s : {ty}) outs(%o : {ty}) -> {ty}\n"
            f"  return %r : {ty}\n}}\n")


def _run_text(ops: list[GenericOp], env: dict[str, Any]) -> dict[str, Any]:
    from verified_indexing.legality.linalg_interpreter import run_ops

    return run_ops(ops, dict(env))


SOFTMAX_CASES = [((4, 8), 1), ((3, 5), 0), ((2, 3, 4), 1)]


def _softmax_env(shape: tuple[int, ...], seed: int) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    return {"%s": rng.integers(-3, 4, size=shape).astype(np.float64), "%o": np.zeros(shape)}


def _scalars(text: str) -> dict[str, float]:
    out = {}
    for m in re.finditer(r"(%[\w.$-]+) = arith.constant (\S+) : f32", text):
        v = m.group(2)
        out[m.group(1)] = float(np.array([int(v, 16)], dtype=np.uint32).view(np.float32)[0]) if v.startswith("0x") \
            else float(v)
    return out


@pytest.mark.parametrize(("shape", "dim"), SOFTMAX_CASES)
def test_softmax_decomposition_equals_numpy(shape: tuple[int, ...], dim: int) -> None:
    ty = f"tensor<{''.join(f'{d}x' for d in shape)}f32>"
    text = softmax_decomposition("%r", "%s", "%o", ty, dim)
    mod = parse_linalg_module(text, strict=True)
    assert [op.kind for op in mod.ops] == ["linalg.fill", "linalg.generic", "linalg.generic", "linalg.fill",
                                           "linalg.generic", "linalg.generic"]
    env = {**_softmax_env(shape, 0), **_scalars(text)}
    env.update({v: np.zeros(tuple(s for i, s in enumerate(shape) if i != dim)) for v in ("%softmax_r_empty",)})
    got = _run_text(list(mod.ops), env)["%r"]
    x = env["%s"]
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    assert np.allclose(got, e / e.sum(axis=dim, keepdims=True), rtol=1e-12, atol=0)


@needs_iree
def test_softmax_decomposition_equals_mlirs() -> None:
    assert IREE_OPT is not None
    texts = [_softmax_case(s, d) for s, d in SOFTMAX_CASES]
    res = subprocess.run([IREE_OPT, "--split-input-file",
                          "--pass-pipeline=builtin.module(func.func(iree-codegen-decompose-softmax{use-fusion=false}))",
                          "-"], input="\n// -----\n".join(texts), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[:3000]
    for (shape, dim), out in zip(SOFTMAX_CASES, res.stdout.split("// -----")):
        ty = f"tensor<{''.join(f'{d}x' for d in shape)}f32>"
        ours = parse_linalg_module(softmax_decomposition("%r", "%s", "%o", ty, dim), strict=True).ops
        mlir = parse_linalg_module(out, strict=True).ops
        assert [(o.kind, o.iterator_types, [x.map for x in o.operands]) for o in ours] == \
               [(o.kind, o.iterator_types, [x.map for x in o.operands]) for o in mlir]
        assert _scalars(out) and sorted(map(str, _scalars(out).values())) == \
            sorted(map(str, _scalars(softmax_decomposition("%r", "%s", "%o", ty, dim)).values()))
        # the same values: MLIR's ops run on the same input (its names: the function's arguments)
        env = _softmax_env(shape, 1)
        rshape = tuple(s for i, s in enumerate(shape) if i != dim)
        mine = _run_text(list(ours), {**env, **_scalars(softmax_decomposition("%r", "%s", "%o", ty, dim)),
                                      "%softmax_r_empty": np.zeros(rshape)})["%r"]
        empties = {m: np.zeros(rshape) for m in re.findall(r"(%\w+) = tensor.empty", out)}
        theirs_env = {"%arg0": env["%s"], "%arg1": env["%o"], **_scalars(out), **empties}
        theirs = _run_text(list(mlir), theirs_env)[mlir[-1].results[0]]
        assert np.array_equal(mine, theirs)


# The named ops the reader already read (linalg_ir), against MLIR's generalization too.
_ARGS = {"%a": "tensor<4x8xf32>", "%b": "tensor<8x5xf32>", "%c": "tensor<4x5xf32>", "%v8": "tensor<8xf32>",
         "%v4": "tensor<4xf32>", "%s": "tensor<f32>", "%ba": "tensor<2x4x8xf32>", "%bb": "tensor<2x8x5xf32>",
         "%bc": "tensor<2x4x5xf32>", "%t": "tensor<8x4xf32>", "%a2": "tensor<4x8xf32>", "%i": "tensor<4x8xi32>",
         "%h": "tensor<4x8xf16>", "%x": "f32"}
OTHER_NAMED = {
    "matmul": "linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%c : tensor<4x5xf32>) -> tensor<4x5xf32>",
    "batch_matmul": "linalg.batch_matmul ins(%ba, %bb : tensor<2x4x8xf32>, tensor<2x8x5xf32>) outs(%bc : "
                    "tensor<2x4x5xf32>) -> tensor<2x4x5xf32>",
    "matvec": "linalg.matvec ins(%a, %v8 : tensor<4x8xf32>, tensor<8xf32>) outs(%v4 : tensor<4xf32>) -> tensor<4xf32>",
    "vecmat": "linalg.vecmat ins(%v4, %a : tensor<4xf32>, tensor<4x8xf32>) outs(%v8 : tensor<8xf32>) -> tensor<8xf32>",
    "dot": "linalg.dot ins(%v8, %v8 : tensor<8xf32>, tensor<8xf32>) outs(%s : tensor<f32>) -> tensor<f32>",
    "transpose": "linalg.transpose ins(%a : tensor<4x8xf32>) outs(%t : tensor<8x4xf32>) permutation = [1, 0]",
    "broadcast": "linalg.broadcast ins(%v8 : tensor<8xf32>) outs(%a2 : tensor<4x8xf32>) dimensions = [0]",
    "reduce": "linalg.reduce ins(%a : tensor<4x8xf32>) outs(%v4 : tensor<4xf32>) dimensions = [1]\n"
              "    (%in: f32, %init: f32) {\n      %r = arith.maximumf %in, %init : f32\n      linalg.yield %r : f32\n    }",
    "map": "linalg.map ins(%a, %a2 : tensor<4x8xf32>, tensor<4x8xf32>) outs(%a2 : tensor<4x8xf32>)\n"
           "    (%l: f32, %r: f32, %o: f32) {\n      %m = arith.subf %l, %r : f32\n      linalg.yield %m : f32\n    }",
    "fill": "linalg.fill ins(%x : f32) outs(%a2 : tensor<4x8xf32>) -> tensor<4x8xf32>",
    "copy_extf": "linalg.copy ins(%h : tensor<4x8xf16>) outs(%a2 : tensor<4x8xf32>) -> tensor<4x8xf32>",
    "matmul_sitofp": "linalg.matmul ins(%i, %b : tensor<4x8xi32>, tensor<8x5xf32>) outs(%c : tensor<4x5xf32>) -> "
                     "tensor<4x5xf32>",
}


@needs_iree
def test_other_named_ops_equal_mlirs_generalization() -> None:
    assert IREE_OPT is not None
    head = ", ".join(f"{v}: {t}" for v, t in _ARGS.items())
    chunks = []
    for op in OTHER_NAMED.values():
        out_ty = re.search(r"outs\(\S+ : ([^)]*)\)", op)
        assert out_ty is not None
        chunks.append(f"func.func @f({head}) -> {out_ty.group(1)} {{\n  %0 = {op}\n  return %0 : {out_ty.group(1)}\n}}\n")
    res = subprocess.run([IREE_OPT, "--split-input-file", "--linalg-generalize-named-ops", "-"],
                         input="\n// -----\n".join(chunks), capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[:3000]
    nprng = np.random.default_rng(5)
    names = list(_ARGS)
    for (name, text), out in zip(zip(OTHER_NAMED, chunks), res.stdout.split("// -----")):
        ours, mlir = _only(text), _only(out)
        assert [o.map for o in ours.operands] == [o.map for o in mlir.operands], name
        assert ours.iterator_types == mlir.iterator_types, name
        assert _statements(ours) == _statements(mlir), (name, ours.payload, mlir.payload)
        env: dict[str, Any] = {}
        for v, t in _ARGS.items():
            shape = tuple(int(d) for d in re.findall(r"(\d+)x", t))
            env[v] = float(nprng.integers(-3, 4)) if t == "f32" else nprng.integers(-3, 4, size=shape).astype(float)
        theirs = {f"%arg{i}": env[v] for i, v in enumerate(names)}  # MLIR's names for the function's arguments
        assert np.array_equal(_run(ours, env), _run(mlir, theirs)), name


def _depthwise_nhwc_hwc(x: Any, w: Any, o: Any, s: list[int], d: list[int]) -> Any:
    out = o.copy()
    n_, oh_, ow_, c_ = o.shape
    for n in range(n_):
        for oh in range(oh_):
            for ow in range(ow_):
                for c in range(c_):
                    for kh in range(w.shape[0]):
                        for kw in range(w.shape[1]):
                            out[n, oh, ow, c] += x[n, oh * s[0] + kh * d[0], ow * s[1] + kw * d[1], c] * w[kh, kw, c]
    return out


CORPUS = Path(__file__).resolve().parent / "mlir_corpus" / "iree"
REAL = {  # a named op IREE wrote (tests/mlir_corpus/iree), its numpy formula
    "conv_bias_relu.input.mlir": ("linalg.conv_2d_nhwc_hwcf", _conv_nhwc_hwcf),
    "depthwise_conv.input.mlir": ("linalg.depthwise_conv_2d_nhwc_hwc", _depthwise_nhwc_hwc),
    "pool_nhwc.input.mlir": ("linalg.pooling_nhwc_max", ORACLES["pooling_nhwc_max"]),
}


@pytest.mark.parametrize("name", sorted(REAL))
def test_named_ops_iree_writes_are_read_and_computed(name: str) -> None:
    # The convolution or pooling of a real IREE file, read strictly, run by the interpreter on random
    # operands, equals the numpy formula at the strides and dilations the file gives.
    kind, oracle = REAL[name]
    text = (CORPUS / name).read_text()
    mod = parse_linalg_module(text, name, strict=True)
    assert not mod.skipped
    (op,) = [o for o in mod.ops if o.kind == kind]
    line = text[op.offset:text.find("\n", op.offset)]
    m = re.search(r"dilations = dense<(\d+)> : \w+<2xi64>, strides = dense<(\d+)>", line)
    assert m is not None, line
    dil, strides = [int(m.group(1))] * 2, [int(m.group(2))] * 2
    rng = np.random.default_rng(7)
    env = {o.value: rng.integers(-3, 4, size=o.type.shape).astype(np.float64) for o in op.operands}
    x, w, out = (env[o.value] for o in op.operands)
    assert np.array_equal(_run(op, env), oracle(x, w, out, strides, dil))


def test_every_corpus_file_reads_with_only_softmax_skipped() -> None:
    # Every linalg op IREE wrote for the corpus programs is read (the convolutions and poolings as their
    # generics), strictly; linalg.softmax (dispatch phase) alone stays skipped, with the reason.
    files = sorted(CORPUS.glob("*.mlir"))
    assert len(files) >= 40
    kinds: set[str] = set()
    for path in files:
        mod = parse_linalg_module(path.read_text(), path.name, strict=True)
        kinds |= {o.kind for o in mod.ops}
        assert all(s.op == "linalg.softmax" for s in mod.skipped), (path.name, mod.skipped)
    assert {"linalg.conv_2d_nhwc_hwcf", "linalg.depthwise_conv_2d_nhwc_hwc", "linalg.pooling_nhwc_max"} <= kinds


def _elementwise_cases() -> dict[str, str]:
    from verified_indexing.legality.linalg_named import ELEMENTWISE_KINDS

    out = {}
    for kind, (arity, _, iop) in ELEMENTWISE_KINDS.items():
        for elem in ("f32", "i32"):
            if (elem == "i32" and iop is None) or (elem == "f32" and kind.endswith("_unsigned")):
                continue
            t = f"tensor<4x8x{elem}>"
            tys = [t] * arity if kind != "select" else ["tensor<4x8xi1>", t, t]
            args = ", ".join(f"%a{i}: {ty}" for i, ty in enumerate(tys)) + f", %o: {t}"
            ins = ", ".join(f"%a{i}" for i in range(arity))
            out[f"{kind}:{elem}"] = (f"func.func @f({args}) -> {t} {{\n  %0 = linalg.elementwise <{kind}> ins({ins} : "
                                     f"{', '.join(tys)}) outs(%o : {t}) -> {t}\n  return %0 : {t}\n}}\n")
    # the newer spelling, and explicit maps (a broadcast input)
    out["kind=:f32"] = out["exp:f32"].replace("<exp>", "kind=#linalg.elementwise_kind<exp>")
    out["maps:f32"] = ("func.func @f(%a: tensor<8xf32>, %b: tensor<4x8xf32>, %o: tensor<4x8xf32>) -> tensor<4x8xf32> {\n"
                       "  %0 = linalg.elementwise <add> indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, "
                       "d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>] ins(%a, %b : tensor<8xf32>, "
                       "tensor<4x8xf32>) outs(%o : tensor<4x8xf32>) -> tensor<4x8xf32>\n  return %0 : tensor<4x8xf32>\n}\n")
    return out


def _no_const(op: GenericOp) -> list[str]:
    return [x for x in _statements(op) if not x.startswith("arith.constant")]


@needs_iree
def test_elementwise_equals_mlirs_generalization() -> None:
    # Every kind of linalg.elementwise (f32 and i32 where defined), read as the generic iree-opt writes
    # (maps, iterators, payload operations and types); the same values on both where the interpreter
    # knows the operation; MLIR's pretty and generic printings of the op read as the same op.
    assert IREE_OPT is not None
    cases = _elementwise_cases()
    newer = cases.pop("kind=:f32")  # the newer spelling, which this MLIR does not parse: read as the older one
    assert _statements(_only(newer)) == _statements(_only(cases["exp:f32"]))
    joined = "\n// -----\n".join(cases.values())
    gen = subprocess.run([IREE_OPT, "--split-input-file", "--linalg-generalize-named-ops", "-"], input=joined,
                         capture_output=True, text=True, timeout=300)
    assert gen.returncode == 0, gen.stderr[:3000]
    printed = {}
    for flags in ((), ("--mlir-print-op-generic",)):
        res = subprocess.run([IREE_OPT, "--split-input-file", *flags, "-"], input=joined, capture_output=True,
                             text=True, timeout=300)
        assert res.returncode == 0, res.stderr[:3000]
        printed[flags] = res.stdout.split("// -----")
    rng = np.random.default_rng(3)
    ran = 0
    for i, ((name, text), out) in enumerate(zip(cases.items(), gen.stdout.split("// -----"))):
        ours, mlir = _only(text), _only(out)
        assert ours.kind == "linalg.elementwise"
        assert [o.map for o in ours.operands] == [o.map for o in mlir.operands], name
        assert ours.iterator_types == mlir.iterator_types, name
        # MLIR hoists a payload's constant (reciprocal's 1.0) into the function: compared without it
        assert _no_const(ours) == _no_const(mlir), (name, ours.payload, mlir.payload)
        for flags, outs in printed.items():
            again = _only(outs[i])
            assert ([o.map for o in again.operands], again.iterator_types, _no_const(again)) == \
                ([o.map for o in ours.operands], ours.iterator_types, _no_const(ours)), (name, flags)
        env = {o.value: (rng.integers(0, 2, size=o.type.shape) if o.type.element == "i1"
                         else rng.integers(1, 4, size=o.type.shape)).astype(np.float64) for o in ours.operands}
        theirs = {**_scalars(out), **{m.value: env[o.value] for o, m in zip(ours.operands, mlir.operands)}}
        try:
            want = _run(mlir, theirs)
        except NotImplementedError:
            continue  # an operation the interpreter does not know (math.acosh...)
        assert np.array_equal(_run(ours, env), want, equal_nan=True), name
        ran += 1
    assert ran >= 15, ran


def test_elementwise_on_numpy() -> None:
    cases = _elementwise_cases()
    rng = np.random.default_rng(4)
    formulas: dict[str, Callable[[list[Any]], Any]] = {"exp:f32": lambda a: np.exp(a[0]), "add:f32": lambda a: a[0] + a[1], "square:f32": lambda a: a[0] * a[0],
                "select:f32": lambda a: np.where(a[0] != 0, a[1], a[2]), "reciprocal:f32": lambda a: 1.0 / a[0],
                "max_signed:f32": lambda a: np.maximum(a[0], a[1]), "maps:f32": lambda a: a[0][None, :] + a[1]}
    for name, f in formulas.items():
        op = _only(cases[name])
        env = {o.value: (rng.integers(0, 2, size=o.type.shape) if o.type.element == "i1"
                         else rng.integers(1, 4, size=o.type.shape)).astype(np.float64) for o in op.operands}
        assert np.allclose(_run(op, env), f([env[o.value] for o in op.inputs]), rtol=1e-12), name
    with pytest.raises(ParseError, match="takes 2 inputs"):
        parse_linalg_module(cases["exp:f32"].replace("<exp>", "<add>"))
    with pytest.raises(ParseError, match=r"unknown linalg\.elementwise kind"):
        parse_linalg_module(cases["exp:f32"].replace("<exp>", "<nope>"))


SOFTMAX_FILES = ("softmax.dispatch-creation.mlir", "attention.dispatch-creation.mlir")


def test_expand_softmax_on_real_iree_output() -> None:
    # The dispatch regions IREE wrote holding a linalg.softmax: expanded, every op is read (none skipped),
    # and the softmax's decomposition, interpreted, is numpy's softmax of its input.
    from verified_indexing.legality.linalg_interpreter import run_ops
    from verified_indexing.legality.linalg_named import expand_softmax

    for name in SOFTMAX_FILES:
        text = (CORPUS / name).read_text()
        before = parse_linalg_module(text, name, strict=True)
        assert [s.op for s in before.skipped] == ["linalg.softmax"]
        expanded = expand_softmax(text)
        after = parse_linalg_module(expanded, name, strict=True)
        assert not after.skipped and len(after.ops) == len(before.ops) + 6
        m = re.search(r"(%\w+) = linalg.softmax dimension\((\d+)\) ins\((%\w+) : tensor<(\d+)x(\d+)xf32>\) "
                      r"outs\((%\w+)", text)
        assert m is not None
        res, dim, src, init = m.group(1), int(m.group(2)), m.group(3), m.group(6)
        shape = (int(m.group(4)), int(m.group(5)))
        ops = [o for o in after.ops if o.name.startswith(f"%softmax_{res[1:]}_") or o.name == res]
        assert len(ops) == 6
        x = np.random.default_rng(9).integers(-3, 4, size=shape).astype(np.float64)
        env = {src: x, init: np.zeros(shape), f"%softmax_{res[1:]}_empty": np.zeros(shape[:dim] + shape[dim + 1:]),
               **_scalars(expanded)}
        got = run_ops(ops, env)[res]
        e = np.exp(x - x.max(axis=dim, keepdims=True))
        assert np.allclose(got, e / e.sum(axis=dim, keepdims=True), rtol=1e-12, atol=0), name


@needs_iree
def test_expanded_softmax_is_valid_mlir() -> None:
    from verified_indexing.legality.linalg_named import expand_softmax

    assert IREE_OPT is not None
    texts = [expand_softmax((CORPUS / n).read_text()) for n in SOFTMAX_FILES]
    res = subprocess.run([IREE_OPT, "--split-input-file", "-"], input="\n// -----\n".join(texts),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[:3000]
    assert "linalg.softmax" not in res.stdout
