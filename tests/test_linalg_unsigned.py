"""Integer payloads interpreted by value with MLIR's semantics (two's complement at
the operand type's width): signed and unsigned ``arith`` ops, the integer casts,
``cmpi`` with unsigned predicates, and the unsigned named ops (``pooling_*_unsigned``,
``linalg.elementwise`` ``*_unsigned``) that use them.

Oracles: numpy formulas written here with numpy's fixed-width dtypes (``uint8``,
``int16``, ``uint32``...: numpy's integer arithmetic wraps as two's complement; its
``astype`` truncates and extends as C does), and MLIR's own generalization of the
named ops (``iree-opt --linalg-generalize-named-ops``, skipped without IREE): the
interpreter computes the same values on the generic MLIR writes as on the op the
project reads. Values are compared as bit patterns (modulo 2**width): the
interpreter keeps an integer in its signed reading.
"""

from __future__ import annotations

import random
import re
import subprocess
from collections.abc import Callable
from typing import Any

import pytest
from test_linalg_named import IREE_OPT, _case, _only, _pool_nhwc, needs_iree

from verified_indexing.legality.linalg_interpreter import int_binary, int_cast, run_generic
from verified_indexing.legality.linalg_ir import parse_linalg_module

np = pytest.importorskip("numpy")

N = 64
DT = {"i8": (np.int8, np.uint8), "i16": (np.int16, np.uint16), "i32": (np.int32, np.uint32)}


def _values(ty: str, rng: Any, nonzero: bool = False) -> Any:
    """Random bit patterns of ``ty`` (as its unsigned dtype), with the edge values first."""
    u = DT[ty][1]
    w = np.dtype(u).itemsize * 8
    edges = [0, 1, 2, (1 << (w - 1)) - 1, 1 << (w - 1), (1 << (w - 1)) + 1, (1 << w) - 1, (1 << w) - 2]
    v = np.concatenate([np.array(edges, dtype=np.uint64), rng.integers(0, 1 << w, size=N - len(edges),
                                                                        dtype=np.uint64)]).astype(u)
    if nonzero:
        v[v == 0] = 3
    return v


def _generic(line: str, ta: str, tb: str | None, tr: str) -> Any:
    """One 1-D generic whose payload is ``%r = <line>`` on block arguments %a (and %b)."""
    ins = [("%x", ta)] + ([("%y", tb)] if tb else [])
    maps = ", ".join(["affine_map<(d0) -> (d0)>"] * (len(ins) + 1))
    bargs = ", ".join([f"%a: {ta}"] + ([f"%b: {tb}"] if tb else []) + [f"%o: {tr}"])
    text = (f"func.func @f(%x: tensor<{N}x{ta}>, " + (f"%y: tensor<{N}x{tb}>, " if tb else "")
            + f"%e: tensor<{N}x{tr}>) -> tensor<{N}x{tr}> {{\n"
            f'  %0 = linalg.generic {{indexing_maps = [{maps}], iterator_types = ["parallel"]}}\n'
            f"      ins({', '.join(v for v, _ in ins)} : {', '.join(f'tensor<{N}x{t}>' for _, t in ins)}) "
            f"outs(%e : tensor<{N}x{tr}>) {{\n  ^bb0({bargs}):\n    %r = {line}\n    linalg.yield %r : {tr}\n"
            f"  }} -> tensor<{N}x{tr}>\n  return %0 : tensor<{N}x{tr}>\n}}\n")
    (op,) = parse_linalg_module(text, strict=True).ops
    return op


def _bits(a: Any, w: int) -> Any:
    v = np.asarray(a, dtype=np.float64).astype(np.int64)
    return v if w >= 64 else v % (1 << w)


def _ceil_u(a: Any, b: Any) -> Any:
    a, b = a.astype(np.uint64), b.astype(np.uint64)
    return (a + b - 1) // b


def _trunc_div(a: Any, b: Any) -> Any:
    return (np.trunc(a.astype(np.float64) / b.astype(np.float64))).astype(np.int64)


# (payload line with {t}, the formula on (signed, unsigned) arrays of a and b, b must be nonzero)
BINARY: dict[str, tuple[str, Callable[..., Any], bool]] = {
    "addi": ("arith.addi %a, %b : {t}", lambda sa, ua, sb, ub: sa + sb, False),
    "subi": ("arith.subi %a, %b : {t}", lambda sa, ua, sb, ub: ua - ub, False),
    "muli": ("arith.muli %a, %b : {t}", lambda sa, ua, sb, ub: sa * sb, False),
    "maxui": ("arith.maxui %a, %b : {t}", lambda sa, ua, sb, ub: np.maximum(ua, ub), False),
    "minui": ("arith.minui %a, %b : {t}", lambda sa, ua, sb, ub: np.minimum(ua, ub), False),
    "maxsi": ("arith.maxsi %a, %b : {t}", lambda sa, ua, sb, ub: np.maximum(sa, sb), False),
    "minsi": ("arith.minsi %a, %b : {t}", lambda sa, ua, sb, ub: np.minimum(sa, sb), False),
    "divui": ("arith.divui %a, %b : {t}", lambda sa, ua, sb, ub: ua // ub, True),
    "remui": ("arith.remui %a, %b : {t}", lambda sa, ua, sb, ub: ua % ub, True),
    "ceildivui": ("arith.ceildivui %a, %b : {t}", lambda sa, ua, sb, ub: _ceil_u(ua, ub), True),
    "andi": ("arith.andi %a, %b : {t}", lambda sa, ua, sb, ub: ua & ub, False),
    "ori": ("arith.ori %a, %b : {t}", lambda sa, ua, sb, ub: ua | ub, False),
    "xori": ("arith.xori %a, %b : {t}", lambda sa, ua, sb, ub: ua ^ ub, False),
}
CMP = {"ult": np.less, "ule": np.less_equal, "ugt": np.greater, "uge": np.greater_equal}


@pytest.mark.parametrize("ty", ["i8", "i16", "i32"])
@pytest.mark.parametrize("name", sorted(BINARY))
def test_binary_ops_equal_numpy(name: str, ty: str) -> None:
    line, f, nonzero = BINARY[name]
    rng = np.random.default_rng(len(name) * 7 + len(ty))
    s, u = DT[ty]
    ua, ub = _values(ty, rng), _values(ty, rng, nonzero)[::-1].copy()
    if nonzero:
        ub[ub == 0] = 3
    sa, sb = ua.view(s), ub.view(s)
    op = _generic(line.format(t=ty), ty, ty, ty)
    got = run_generic(op, {"%x": ua.astype(np.float64), "%y": ub.astype(np.float64),
                           "%e": np.zeros(N)})[0]
    w = np.dtype(u).itemsize * 8
    want = np.asarray(f(sa, ua, sb, ub)).astype(np.int64) % (1 << w)
    assert np.array_equal(_bits(got, w), want), name


@pytest.mark.parametrize("ty", ["i8", "i32"])
def test_signed_division_equals_numpy(ty: str) -> None:
    """divsi/remsi round toward zero (remsi takes the dividend's sign); floordivsi/ceildivsi as named."""
    rng = np.random.default_rng(5)
    s, u = DT[ty]
    w = np.dtype(u).itemsize * 8
    sa = _values(ty, rng).view(s).astype(np.int64)
    sb = _values(ty, rng, True)[::-1].view(s).astype(np.int64)
    keep = ~((sa == -(1 << (w - 1))) & (sb == -1))  # the overflow is undefined (tested below)
    sa, sb = sa[keep], sb[keep]
    forms = {"divsi": _trunc_div(sa, sb), "remsi": np.fmod(sa, sb), "floordivsi": np.floor_divide(sa, sb),
             "ceildivsi": -np.floor_divide(-sa, sb)}
    for name, want in forms.items():
        got = [int_binary(f"arith.{name}", int(a), int(b), ty) for a, b in zip(sa, sb)]
        assert np.array_equal(np.array(got) % (1 << w), want % (1 << w)), name


@pytest.mark.parametrize("pred", sorted(CMP))
def test_unsigned_compare_equals_numpy(pred: str) -> None:
    rng = np.random.default_rng(11)
    ua, ub = _values("i8", rng), _values("i8", rng)[::-1].copy()
    op = _generic(f"arith.cmpi {pred}, %a, %b : i8", "i8", "i8", "i1")
    got = run_generic(op, {"%x": ua.view(np.int8).astype(np.float64), "%y": ub.astype(np.float64),
                           "%e": np.zeros(N)})[0]
    assert np.array_equal(got.astype(bool), CMP[pred](ua, ub)), pred


def test_shifts_equal_numpy() -> None:
    rng = np.random.default_rng(12)
    ua = _values("i16", rng)
    sh = rng.integers(0, 16, size=N).astype(np.uint16)
    for name, want in {"shli": ua << sh, "shrui": ua >> sh, "shrsi": (ua.view(np.int16) >> sh.view(np.int16))}.items():
        op = _generic(f"arith.{name} %a, %b : i16", "i16", "i16", "i16")
        got = run_generic(op, {"%x": ua.astype(np.float64), "%y": sh.astype(np.float64), "%e": np.zeros(N)})[0]
        assert np.array_equal(_bits(got, 16), np.asarray(want).astype(np.int64) % (1 << 16)), name


def test_casts_equal_numpy() -> None:
    rng = np.random.default_rng(13)
    u8 = _values("i8", rng)
    u32 = _values("i32", rng)
    cases = {
        "arith.extui %a : i8 to i32": ("i8", "i32", u8, u8.astype(np.uint32)),
        "arith.extsi %a : i8 to i32": ("i8", "i32", u8, u8.view(np.int8).astype(np.int32)),
        "arith.trunci %a : i32 to i8": ("i32", "i8", u32, u32.astype(np.uint8)),
        "arith.index_castui %a : i8 to index": ("i8", "index", u8, u8.astype(np.int64)),
        "arith.index_cast %a : i8 to index": ("i8", "index", u8, u8.view(np.int8).astype(np.int64)),
        "arith.uitofp %a : i8 to f32": ("i8", "f32", u8, u8.astype(np.float32)),
        "arith.sitofp %a : i8 to f32": ("i8", "f32", u8, u8.view(np.int8).astype(np.float32)),
    }
    for line, (ta, tr, x, want) in cases.items():
        op = _generic(line, ta, None, tr)
        got = run_generic(op, {"%x": x.view(DT[ta][0]).astype(np.float64) if ta in DT else x.astype(np.float64),
                               "%e": np.zeros(N)})[0]
        if tr.startswith("f"):
            assert np.array_equal(got, want.astype(np.float64)), line
        else:
            w = 64 if tr == "index" else int(tr[1:])
            assert np.array_equal(_bits(got, w), _bits(want.astype(np.int64), w)), line
    f = np.linspace(0.0, 255.9, N).astype(np.float32)
    op = _generic("arith.fptoui %a : f32 to i8", "f32", None, "i8")
    got = run_generic(op, {"%x": f.astype(np.float64), "%e": np.zeros(N)})[0]
    assert np.array_equal(_bits(got, 8), f.astype(np.uint8).astype(np.int64))


def test_what_mlir_leaves_undefined_gives_no_value() -> None:
    for name, a, b in (("divui", 5, 0), ("remui", 5, 0), ("divsi", -128, -1), ("ceildivui", 1, 0),
                       ("shli", 1, 8), ("shrui", 1, 9)):
        with pytest.raises(NotImplementedError, match="undefined"):
            int_binary(f"arith.{name}", a, b, "i8")
    with pytest.raises(NotImplementedError, match="undefined"):
        int_cast("arith.fptoui", 256.0, "f32", "i8")
    with pytest.raises(NotImplementedError, match="undefined"):
        int_cast("arith.fptoui", -1.0, "f32", "i8")
    with pytest.raises(NotImplementedError, match="narrower"):
        int_cast("arith.trunci", 1, "i8", "i8")


def _pool_nwc(x: Any, w: Any, o: Any, s: list[int], d: list[int], how: str) -> Any:
    out = o.copy()
    n_, ow_, c_ = o.shape
    for n in range(n_):
        for ow in range(ow_):
            for c in range(c_):
                window = [x[n, ow * s[0] + kw * d[0], c] for kw in range(w.shape[0])]
                out[n, ow, c] = {"max": max([out[n, ow, c], *window]), "min": min([out[n, ow, c], *window])}[how]
    return out


UNSIGNED_POOLS = {"pooling_nhwc_max_unsigned": ("i32", np.uint32, _pool_nhwc, "max"),
                  "pooling_nhwc_min_unsigned": ("i32", np.uint32, _pool_nhwc, "min"),
                  "pooling_nwc_max_unsigned": ("i16", np.uint16, _pool_nwc, "max"),
                  "pooling_nwc_min_unsigned": ("i16", np.uint16, _pool_nwc, "min")}


def _pool_case(name: str, seed: int) -> tuple[str, dict[str, Any], Any]:
    """The op on i8 inputs, its operands (i8 bit patterns >= 128 included), and numpy's answer."""
    out_t, udt, formula, how = UNSIGNED_POOLS[name]
    text, shapes = _case(name, random.Random(seed), ("i8", "f32", out_t))
    m = re.search(r"dilations = dense<\[([^\]]*)\]>.*strides = dense<\[([^\]]*)\]>", text)
    assert m is not None
    dil, strides = [int(v) for v in m.group(1).split(",")], [int(v) for v in m.group(2).split(",")]
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 256, size=shapes["%x"]).astype(np.uint8)
    o = rng.integers(0, 1 << 16, size=shapes["%o"]).astype(udt)
    w = np.zeros(shapes["%w"])
    # numpy: the i8 input zero-extended (extui) to the output type, compared unsigned
    want = formula(x.astype(udt), w, o, strides, dil, how)
    env = {"%x": x.view(np.int8).astype(np.float64), "%w": w, "%o": o.view(DT[out_t][0]).astype(np.float64)}
    return text, env, want


@pytest.mark.parametrize("name", sorted(UNSIGNED_POOLS))
def test_unsigned_poolings_equal_numpy(name: str) -> None:
    text, env, want = _pool_case(name, 1)
    got = run_generic(_only(text), dict(env))[0]
    w = np.dtype(UNSIGNED_POOLS[name][1]).itemsize * 8
    assert np.array_equal(_bits(got, w), want.astype(np.int64)), name


@needs_iree
def test_unsigned_named_ops_equal_mlirs_generalization() -> None:
    """The unsigned poolings and the unsigned elementwise kinds: the interpreter on the
    generic iree-opt writes computes what it computes on the op the project reads."""
    assert IREE_OPT is not None
    cases: dict[str, tuple[str, dict[str, Any]]] = {n: _pool_case(n, 2)[:2] for n in sorted(UNSIGNED_POOLS)}
    rng = np.random.default_rng(6)
    for kind in ("div_unsigned", "max_unsigned", "min_unsigned"):
        t = "tensor<4x8xi8>"
        text = (f"func.func @f(%a0: {t}, %a1: {t}, %o: {t}) -> {t} {{\n  %0 = linalg.elementwise <{kind}> "
                f"ins(%a0, %a1 : {t}, {t}) outs(%o : {t}) -> {t}\n  return %0 : {t}\n}}\n")
        b = rng.integers(0, 256, size=(4, 8)).astype(np.uint8)
        b[b == 0] = 7
        cases[kind] = (text, {"%a0": rng.integers(0, 256, size=(4, 8)).astype(np.uint8).view(np.int8).astype(float),
                              "%a1": b.view(np.int8).astype(float), "%o": np.zeros((4, 8))})
    res = subprocess.run([IREE_OPT, "--split-input-file", "--linalg-generalize-named-ops", "-"],
                         input="\n// -----\n".join(t for t, _ in cases.values()), capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == 0, res.stderr[:3000]
    outs = res.stdout.split("// -----")
    assert len(outs) == len(cases)
    for (name, (text, env)), out in zip(cases.items(), outs):
        ours, mlir = _only(text), _only(out)
        assert "ui" in mlir.payload, (name, mlir.payload)  # MLIR's generic uses the unsigned ops
        theirs = {m.value: env[o.value] for o, m in zip(ours.operands, mlir.operands)}
        a, b = run_generic(ours, dict(env))[0], run_generic(mlir, theirs)[0]
        assert np.array_equal(a, b), name
    # and the elementwise kinds against numpy's unsigned dtypes
    for kind, f in (("div_unsigned", np.floor_divide), ("max_unsigned", np.maximum), ("min_unsigned", np.minimum)):
        text, env = cases[kind]
        ua, ub = (env[v].astype(np.int64).astype(np.int8).view(np.uint8) for v in ("%a0", "%a1"))
        got = run_generic(_only(text), dict(env))[0]
        assert np.array_equal(_bits(got, 8), f(ua, ub).astype(np.int64)), kind


def test_the_refutation_recheck_uses_the_same_integer_semantics() -> None:
    """linalg_semantics.evaluate_payload (which re-checks a refutation of the whole-op
    proof) wraps as MLIR does (numpy int8: 100 * 2 = -56, not 200), reads the
    unsigned ops unsigned, and feeds integer payloads integers only."""
    from verified_indexing.legality.linalg_semantics import evaluate_payload, parse_payload, separating_inputs

    mul = parse_payload(_generic("arith.muli %a, %b : i8", "i8", "i8", "i8"))
    (got,) = evaluate_payload(mul, [100.0, 2.0, 0.0], [0]) or [None]
    assert got == int((np.array([100], dtype=np.int8) * np.array([2], dtype=np.int8))[0])
    mx = parse_payload(_generic("arith.maxui %a, %b : i8", "i8", "i8", "i8"))
    (got,) = evaluate_payload(mx, [-1.0, 3.0, 0.0], [0]) or [None]
    assert got % 256 == int(np.maximum(np.uint8(255), np.uint8(3)))
    assert evaluate_payload(mul, [0.5, 2.0, 0.0], [0]) is None  # 0.5 is no i8
    sep = separating_inputs(mul, [[("%x", (0,)), ("%y", (0,))], [("%x", (1,)), ("%y", (1,))]], [[0], [1]], 0)
    assert sep is not None
    assert all(float(v).is_integer() for v in sep[0].values())
