"""The ``tvm`` area of the campaign: a bug hunt against TVM's own schedule primitives.

Each check draws a random TIR function (TVMScript text, seeded by ``(seed, "tvm",
index)``) within what the project's reader models -- elementwise chains
(identity, transpose, reshape through ``//`` and ``%``, shifts, broadcasts, a
second input), a reduction with an epilogue (bias, ReLU, clipping, scaling, a
producer before it and a consumer after it), predicated blocks (``T.where``),
symbolic extents (``N = T.int32()``) -- picks one primitive (``compute_inline``,
``reverse_compute_inline``, ``fuse_reduction_epilogue``) and a block, lets TVM
apply it and validates TVM's result with
:func:`verified_indexing.tvm.driver.validate_primitive`.

Every verdict is re-checked independently:

* ``proved``: TVM's compiled code (``llvm``) of both functions on random integer
  inputs must agree on every output (constant shapes); for symbolic sizes the
  plain interpreter already ran both programs at several sizes;
* ``refuted``: the interpreter re-ran the witness; TVM's compiled code must
  reproduce the difference at the witness element (``tvm_recheck``);
* a TVM refusal the project proves legal (``tvm-too-conservative``): the
  project's own rewritten program is run by the interpreter against the original.

A re-check that disagrees is ``wrong`` (a finding against the project). Every
refuted TVM result and every TVM refusal the project proves legal is written to
the findings with its program, seed and witness (``finding: true``). Without
TVM every check is ``skip``.
"""

from __future__ import annotations

import random
from typing import Any

F32 = '"float32"'


def _c(r: random.Random) -> str:
    return f"T.float32({r.choice([2.0, 3.0, 0.5, -1.0, 1.0])})"


def _f(r: random.Random, x: str, extra: str | None) -> str:
    """A random elementwise value of ``x`` (and ``extra``, a second read)."""
    k = r.randrange(7)
    if extra is not None and r.random() < 0.4:
        return f"{x} + {extra}" if r.random() < 0.5 else f"{x} * {extra}"
    return [f"{x} * {_c(r)}", f"{x} + {_c(r)}", f"T.exp({x})", f"T.max({x}, T.float32(0.0))",
            f"{x} - {_c(r)}", f"T.min({x}, {_c(r)})", f"{x} * {x}"][k]


class _Prog:
    """A TVMScript function under construction."""

    def __init__(self) -> None:
        self.params: list[tuple[str, tuple[str, ...]]] = []
        self.allocs: list[tuple[str, tuple[str, ...]]] = []
        self.body: list[str] = []
        self.blocks: list[str] = []
        self.sizes: list[str] = []
        self.reduction: tuple[str, str] | None = None  # (reduction block, epilogue block)

    def text(self, output: str) -> str:
        sig, pre = [], []
        for n, shape in self.params:
            if self.sizes:
                sig.append(f"{n.lower()}_h: T.handle")
            else:
                sig.append(f"{n}: T.Buffer(({', '.join(shape)},), {F32})")
        if self.sizes:
            pre += [f"    {s} = T.int32()" for s in self.sizes]
            pre += [f"    {n} = T.match_buffer({n.lower()}_h, ({', '.join(shape)},))" for n, shape in self.params]
        allocs = [f"    {n} = T.sblock_alloc_buffer(({', '.join(shape)},))" for n, shape in self.allocs
                  if n != output]
        head = f"@T.prim_func(s_tir=True)\ndef main({', '.join(sig)}):"
        return "\n".join([head, *pre, *allocs, *self.body]) + "\n"

    def block_2d(self, name: str, m: int | str, n: int | str, value: str) -> None:
        """A block ``name`` allocated ``(m, n)`` storing ``value`` at each ``[v0, v1]``."""
        self.allocs.append((name, (str(m), str(n))))
        self.blocks.append(name)
        self.body += [f"    for i, j in T.grid({m}, {n}):", f'        with T.sblock("{name}"):',
                      '            v0, v1 = T.axis.remap("SS", [i, j])', f"            {name}[v0, v1] = {value}"]


def _elementwise(r: random.Random, p: _Prog, name: str, src: str, shape: tuple[str, ...],
                 extra: str | None, symbolic: bool) -> tuple[str, ...]:
    """One stage ``name`` reading ``src`` (of ``shape``): returns its shape."""
    kinds = ["id", "id", "shift", "reverse"] if symbolic or len(shape) == 1 else ["id", "id", "transpose"]
    if not symbolic:
        kinds += ["reshape", "bcast", "pred", "shift"]
    kind = r.choice(kinds)
    where = ""
    if len(shape) == 1:
        n = shape[0]
        if kind == "reshape" and n.isdigit() and int(n) % 2 == 0:
            a, b = 2, int(n) // 2
            out = (str(a), str(b))
            loops, bind = f"for i, j in T.grid({a}, {b}):", 'v0, v1 = T.axis.remap("SS", [i, j])'
            read = f"{src}[v0 * {b} + v1]"
        elif kind == "shift":
            out = (f"{n} - 1",) if not n.isdigit() else (str(int(n) - 1),)
            loops, bind = f"for i in range({out[0]}):", f"v0 = T.axis.spatial({out[0]}, i)"
            read = f"{src}[v0 + 1]"
        elif kind == "reverse":
            out = (n,)
            loops, bind = f"for i in range({n}):", f"v0 = T.axis.spatial({n}, i)"
            read = f"{src}[{n} - 1 - v0]"
        elif kind == "bcast" and n.isdigit():
            out = (n, "3")
            loops, bind = f"for i, j in T.grid({n}, 3):", 'v0, v1 = T.axis.remap("SS", [i, j])'
            read = f"{src}[v0]"
        elif kind == "pred" and n.isdigit():
            out = (n,)
            loops, bind = f"for i in range({int(n) + 2}):", f"v0 = T.axis.spatial({n}, i)"
            where, read = "T.where(i < " + n + ")", f"{src}[v0]"
        else:
            out = (n,)
            loops, bind = f"for i in range({n}):", f"v0 = T.axis.spatial({n}, i)"
            read = f"{src}[v0]"
    else:
        a, b = shape
        if kind == "transpose":
            out, read = (b, a), f"{src}[v1, v0]"
        elif kind == "reshape":
            out, read = (str(int(a) * int(b)),), f"{src}[v0 // {b}, v0 % {b}]"
        elif kind == "shift":
            out, read = (str(int(a) - 1), b), f"{src}[v0 + 1, v1]"
        else:
            out, read = (a, b), f"{src}[v0, v1]"
        if len(out) == 1:
            loops, bind = f"for i in range({out[0]}):", f"v0 = T.axis.spatial({out[0]}, i)"
        else:
            loops, bind = f"for i, j in T.grid({out[0]}, {out[1]}):", 'v0, v1 = T.axis.remap("SS", [i, j])'
    idx = "v0" if len(out) == 1 else "v0, v1"
    ex = None
    if extra is not None and len(out) == 1:
        ex = f"{extra}[v0]"
    value = _f(r, read, ex if ex and r.random() < 0.5 else None)
    p.allocs.append((name, out))
    p.blocks.append(name)
    p.body += [f"    {loops}", f'        with T.sblock("{name}"):', f"            {bind}"]
    if where:
        p.body.append(f"            {where}")
    p.body.append(f"            {name}[{idx}] = {value}")
    return out


def random_program(r: random.Random) -> tuple[str, list[tuple[str, str, str | None]]]:
    """A random function and the primitives worth asking on it: ``(primitive, block, reduction)``."""
    p = _Prog()
    kind = r.choice(["chain", "chain", "reduction", "reduction", "symbolic"])
    asks: list[tuple[str, str, str | None]] = []
    if kind in ("chain", "symbolic"):
        symbolic = kind == "symbolic"
        if symbolic:
            p.sizes = ["N"]
            shape: tuple[str, ...] = ("N",)
        else:
            shape = r.choice([(str(r.randint(3, 8)),), (str(r.randint(2, 5)), str(r.randint(2, 5)))])
        p.params.append(("X", shape))
        extra = None
        if len(shape) == 1 and r.random() < 0.4:
            p.params.append(("Y", shape))
            extra = "Y"
        src = "X"
        names = ["B", "C", "D", "E"][: r.randint(2, 4)]
        for n in names:
            shape = _elementwise(r, p, n, src, shape, extra if shape == p.params[0][1] else None, symbolic)
            src = n
        out = names[-1]
        p.params.append((out, shape))
        asks = [("compute_inline", n, None) for n in names[:-1]] + \
               [("reverse_compute_inline", n, None) for n in names[1:]]
    else:
        m, n, kk = r.randint(2, 5), r.randint(2, 5), r.randint(1, 6)
        p.params += [("A", (str(m), str(kk))), ("W", (str(n), str(kk))), ("bias", (str(m), str(n)))]
        a = "A"
        if r.random() < 0.4:  # a producer before the reduction
            p.block_2d("P", m, kk, _f(r, "A[v0, v1]", None))
            a = "P"
        op = r.choice(["sum", "sum", "sum", "max"])
        init = "T.float32(0.0)" if op == "sum" else "T.float32(-3.4028234663852886e+38)"
        upd = (f"C[v0, v1] + {a}[v0, vk] * W[v1, vk]" if op == "sum"
               else f"T.max(C[v0, v1], {a}[v0, vk] * W[v1, vk])")
        p.allocs.append(("C", (str(m), str(n))))
        p.blocks.append("C")
        p.body += [f"    for i, j, k in T.grid({m}, {n}, {kk}):", '        with T.sblock("C"):',
                   '            v0, v1, vk = T.axis.remap("SSR", [i, j, k])',
                   "            with T.init():", f"                C[v0, v1] = {init}",
                   f"            C[v0, v1] = {upd}"]
        epi = r.choice(["C[v0, v1] + bias[v0, v1]", "T.max(C[v0, v1] + bias[v0, v1], T.float32(0.0))",
                        "T.min(T.max(C[v0, v1], T.float32(-2.0)), T.float32(5.0))",
                        "T.max(T.min(C[v0, v1], T.float32(4.0)), T.float32(-1.0))",
                        "bias[v0, v1] + C[v0, v1]", "C[v0, v1] * T.float32(2.0)",
                        "T.max(bias[v0, v1] + C[v0, v1], T.float32(0.0))"])
        p.block_2d("D", m, n, epi)
        out = "D"
        if r.random() < 0.3:  # a consumer after the epilogue
            p.block_2d("E", m, n, _f(r, "D[v0, v1]", None))
            out = "E"
        p.params.append((out, (str(m), str(n))))
        asks = [("fuse_reduction_epilogue", "D", "C")] * 3 + [("compute_inline", "D", None)]
        if a == "P":
            asks.append(("compute_inline", "P", None))
        if out == "E":
            asks += [("reverse_compute_inline", "E", None), ("compute_inline", "D", None)]
    return p.text(out), asks


def check_tvm(r: random.Random) -> dict[str, Any]:
    """One program, one primitive, TVM's result validated and the verdict re-checked."""
    from verified_indexing.tvm.driver import tvm_available

    if not tvm_available():
        return {"outcome": "skip", "why": "TVM is not installed"}
    from verified_indexing.errors import VerifiedIndexingError
    from verified_indexing.tvm.driver import load_tvm, parse_tvm_source, validate_primitive

    text, asks = random_program(r)
    primitive, block, reduction = r.choice(asks)
    base = {"program": text, "primitive": primitive, "block": block, "reduction": reduction}
    tvm = load_tvm()
    try:
        func = parse_tvm_source(text)
    except VerifiedIndexingError as exc:
        return {**base, "outcome": "skip", "why": f"TVM does not parse the generated program: {exc}"}
    try:
        v = validate_primitive(func, primitive, block, reduction=reduction, timeout=10.0)
    except VerifiedIndexingError as exc:
        return {**base, "outcome": "unknown", "why": f"not read: {str(exc).splitlines()[0]}"}
    if v.project.get("status") == "error":
        base["finding"] = True  # the project's own primitive failed: recorded, TVM's result still validated
    res: dict[str, Any] = {**base, "outcome": v.outcome, "tvm": v.tvm_status, "tvm_error": v.tvm_error or None,
                           "project": {k: x for k, x in v.project.items() if k != "program"},
                           "reason": v.verdict.reason if v.verdict else None}
    if v.outcome == "refuted":
        assert v.verdict is not None
        res.update(witness=v.verdict.witness, tvm_result=v.after, tvm_recheck=v.tvm_recheck, finding=True)
        rc = v.tvm_recheck or {}
        by_tvm = (v.verdict.witness or {}).get("by") == "tvm"  # TVM's own code differs on real inputs
        if rc.get("confirmed") is False and not by_tvm:
            res.update(outcome="wrong", why="TVM's compiled code does not reproduce the interpreter's difference")
    elif v.outcome == "proved":
        res["laws"] = list(v.verdict.laws) if v.verdict else []
        why = _run_both(tvm, func, v.after, laws=bool(res["laws"]))
        if why:
            res.update(outcome="wrong", why=why, tvm_result=v.after)
    elif v.outcome == "tvm-crashed":
        res["finding"] = True
    elif v.outcome == "tvm-too-conservative":
        res["finding"] = True
        why = _project_program_agrees(v.before, primitive, block)
        if why:
            res.update(outcome="wrong", why=why)
    return res


def _run_both(tvm: Any, func: Any, after_text: str | None, laws: bool) -> str:
    """TVM's compiled code of the original and of TVM's result on random
    integer inputs: ``""`` when every output agrees (within float rounding when
    the proof assumed algebraic laws), else what differs."""
    import numpy as np

    from verified_indexing.tvm.driver import run_compiled, run_isolated

    if after_text is None:
        return ""
    params = list(func.params)
    if any(not isinstance(d, tvm.tirx.IntImm) for b in params for d in b.shape):
        return ""  # symbolic: the interpreter ran both at several sizes
    rng = np.random.default_rng(1)
    inputs = [[rng.integers(-3, 4, size=tuple(int(d) for d in b.shape)).astype("float32") for b in params]
              for _ in range(2)]
    try:  # compiled and run in a child process (a wrong result may corrupt memory)
        runs = run_isolated(run_compiled, [func.script(), after_text], inputs, reuse=True)  # proved: one child
    except RuntimeError as exc:
        return f"proved, but TVM's compiled code fails: {exc}"
    for outs in runs:
        for b, x, y in zip(params, outs[0], outs[1]):
            same = np.allclose(x, y, rtol=1e-5, atol=1e-5, equal_nan=True) if laws else \
                np.array_equal(x, y, equal_nan=True)
            if not same:
                bad = tuple(int(i) for i in np.argwhere(~np.isclose(x, y, equal_nan=True))[0]) \
                    if np.any(~np.isclose(x, y, equal_nan=True)) else ()
                return f"proved, but TVM's compiled code differs on {b.name}{list(bad)}"
    return ""


def _project_program_agrees(before_text: str, primitive: str, block: str) -> str:
    """The project's own rewritten program run by the interpreter against the original."""
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue
    from verified_indexing.legality.inline import compute_inline
    from verified_indexing.legality.reverse_inline import reverse_compute_inline
    from verified_indexing.tvm.driver import read_tvm_program
    from verified_indexing.tvm.equivalence import check_equivalence

    before = read_tvm_program(before_text)
    rep: Any
    if primitive == "compute_inline":
        rep = compute_inline(before, block)
    elif primitive == "reverse_compute_inline":
        rep = reverse_compute_inline(before, block)
    else:
        rep = fuse_reduction_epilogue(before, block)
    if rep.program is None:
        return "the project proves it legal but gives no program"
    eq = check_equivalence(before, rep.program)
    if eq.status == "refuted":
        return f"the project's own program differs from the original: {eq.reason}"
    return ""
