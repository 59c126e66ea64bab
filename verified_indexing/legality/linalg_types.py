"""Element types of a ``linalg`` op, checked as MLIR's verifiers check them.

:func:`type_errors` lists what makes an op ill-typed: a result type other than
its init's type; a payload block argument whose type is not its operand's
element type (the scalar itself for a scalar operand); a payload statement
using a value at a type other than the one it was defined with; a
``linalg.yield`` whose types are not the outputs' element types. Payload
statements are typed from their own text, as MLIR prints them:

* ``arith.constant LIT : T`` -> ``T``; ``linalg.index N : index`` and
  ``affine.apply`` -> ``index`` (its operands ``index``);
* casts ``op %x : A to B`` (``arith.extf``, ``truncf``, ``sitofp``, ``fptosi``,
  ``extsi``, ``trunci``, ``index_cast``...) take an ``A`` and give a ``B``;
* ``arith.cmpf``/``cmpi ..., %a, %b : T`` take two ``T`` and give ``i1``;
  ``arith.select %c, %a, %b : T`` takes an ``i1`` and two ``T``;
* any other ``op %a, %b : T`` (the same-operands-and-result-type form of
  ``arith``/``math``) takes and gives ``T``; ``: (A, B) -> C`` takes ``A, B``
  and gives ``C``;
* anything else gives a value of unknown type, and nothing is checked on it
  (values of the enclosing function are of unknown type too).

:func:`convert` writes the conversion MLIR's ``cast_signed`` performs between
two element types (``linalg.fill`` of an ``f32`` into an ``f16`` tensor is an
``arith.truncf``), for the named ops whose definitions convert.
"""

from __future__ import annotations

import re

from verified_indexing.legality._mlir_text import _split_top_commas
from verified_indexing.legality.linalg_ir import _BLOCK_RE, GenericOp

__all__ = ["type_errors", "payload_types", "convert", "CASTS"]

CASTS = frozenset({
    "arith.extf", "arith.truncf", "arith.sitofp", "arith.uitofp", "arith.fptosi", "arith.fptoui", "arith.extsi",
    "arith.extui", "arith.trunci", "arith.index_cast", "arith.index_castui", "arith.bitcast",
})
_SSA_RE = re.compile(r"%[\w.$-]+(?:#\d+)?")
_RESULT_RE = re.compile(r"^(%[\w.$-]+)(?::(\d+))?\s*=\s*(.*)$", re.DOTALL)
_OPNAME_RE = re.compile(r'^"?([A-Za-z_][\w.]*)"?')
_FLOAT_WIDTH = {"f8E4M3FN": 8, "f8E5M2": 8, "f8E4M3FNUZ": 8, "f8E5M2FNUZ": 8, "f8E4M3B11FNUZ": 8, "f16": 16,
                "bf16": 16, "tf32": 19, "f32": 32, "f64": 64, "f80": 80, "f128": 128}


def _is_float(t: str) -> bool:
    return t in _FLOAT_WIDTH


def _int_width(t: str) -> int | None:
    m = re.fullmatch(r"[su]?i(\d+)", t)
    return int(m.group(1)) if m else None


def convert(value: str, src: str, dst: str, result: str) -> list[str] | None:
    """The statements converting ``value`` of element type ``src`` to ``dst`` as
    MLIR's ``TypeFn.cast_signed`` does (``[]`` when the types are equal), the
    converted value named ``result``; ``None`` for a conversion not modelled
    (two float types of one width, ``bf16`` and ``f16``)."""
    if src == dst:
        return []
    sf, df = _is_float(src), _is_float(dst)
    si, di = _int_width(src), _int_width(dst)
    if sf and df:
        ws, wd = _FLOAT_WIDTH[src], _FLOAT_WIDTH[dst]
        if ws == wd:
            return None
        op = "arith.extf" if wd > ws else "arith.truncf"
    elif si is not None and df:
        op = "arith.sitofp"
    elif sf and di is not None:
        op = "arith.fptosi"
    elif si is not None and di is not None:
        op = "arith.extsi" if di > si else "arith.trunci"
    elif "index" in (src, dst) and (si is not None or di is not None):
        op = "arith.index_cast"
    else:
        return None
    return [f"{result} = {op} {value} : {src} to {dst}"]


def _statements(body: str) -> list[str]:
    """The statements of a payload body, one a line: a statement spread over lines
    (its brackets still open, ``->`` not counted) is joined with single spaces."""
    out: list[str] = []
    pending = ""
    for ln in body.splitlines():
        ln = ln.strip()
        if not ln:
            continue
        pending = f"{pending} {ln}".strip()
        depth = 0
        for ch in pending.replace("->", ""):
            depth += ch in "([{<"
            depth -= ch in ")]}>"
        if depth <= 0:
            out.append(pending)
            pending = ""
    if pending:
        out.append(pending)
    return out


def _split_types(text: str) -> list[str]:
    """The comma-separated types of ``text`` (commas inside brackets kept), stripped;
    a trailing empty part dropped."""
    parts = [p.strip() for p in _split_top_commas(text)]
    return parts[:-1] if parts[-1] == "" else parts


def _signature(rhs: str, op: str, n_operands: int) -> tuple[list[str | None], list[str | None]] | None:
    """(operand types, result types) of a statement's right-hand side, or ``None``."""
    if ":" not in rhs:
        return None
    tail = rhs.rsplit(":", 1)[1] if op != "affine.apply" else ""
    tail = tail.strip()
    fm = re.fullmatch(r"\((.*)\)\s*->\s*(.+)", tail)
    if fm is not None:  # the generic form, any op: "(A, B) -> C"
        return list(_split_types(fm.group(1))), list(_split_types(fm.group(2).strip().strip("()")))
    if op == "arith.constant":
        return [], [tail]
    if op == "linalg.index":
        return [], ["index"]
    if op == "affine.apply":
        return ["index"] * n_operands, ["index"]
    m = re.fullmatch(r"(.+?)\s+to\s+(.+)", tail)
    if op in CASTS and m is not None:
        return [m.group(1).strip()], [m.group(2).strip()]
    types = _split_types(tail)
    if op in ("arith.cmpf", "arith.cmpi") and len(types) == 1:
        return [types[0]] * n_operands, ["i1"]
    if op == "arith.select" and len(types) in (1, 2):
        return ["i1" if len(types) == 1 else types[0], types[-1], types[-1]], [types[-1]]
    if len(types) == 1 and " to " not in tail and (op.startswith(("arith.", "math."))):
        return [types[0]] * n_operands, [types[0]]
    return None


def payload_types(op: GenericOp) -> tuple[dict[str, str], list[str]]:
    """The types of the payload's values (block arguments as declared, statement
    results as their text gives them) and the errors met (see :func:`type_errors`)."""
    errors: list[str] = []
    env: dict[str, str] = {}
    header = _BLOCK_RE.search(op.payload)
    if header is None:
        return env, errors
    for a in header.group(1).split(","):
        if ":" in a:
            name, ty = a.split(":", 1)
            env[name.strip()] = ty.strip()
    for st in _statements(op.payload[header.end():]):
        rm = _RESULT_RE.match(st)
        om = _OPNAME_RE.match(st if rm is None else rm.group(3).strip())
        if om is None:
            continue
        name = om.group(1)
        rhs = st if rm is None else rm.group(3).strip()
        operands = _SSA_RE.findall(rhs[om.end():])
        if name == "linalg.yield":
            tail = rhs.rsplit(":", 1)[1].strip() if ":" in rhs else ""
            fm = re.fullmatch(r"\((.*)\)\s*->\s*\(\s*\)", tail)  # the generic form: (f32) -> ()
            declared = _split_types(fm.group(1) if fm is not None else tail)
            want = [o.type.element for o in op.outputs]
            if declared and declared != want:
                errors.append(f"linalg.yield declares {', '.join(declared)}, the outputs' element types are "
                              f"{', '.join(want)}")
            if len(operands) != len(want):
                errors.append(f"linalg.yield yields {len(operands)} values for {len(want)} outputs")
            for v, t in zip(operands, want):
                if env.get(v, t) != t:
                    errors.append(f"linalg.yield yields {v} of type {env[v]} for an output of element type {t}")
            continue
        sig = _signature(rhs[om.end():] if name != "arith.constant" else rhs, name, len(operands))
        if rm is None:
            continue
        count = int(rm.group(2)) if rm.group(2) else 1
        results = [rm.group(1)] if count == 1 else [f"{rm.group(1)}#{i}" for i in range(count)]
        if sig is None:
            continue
        ins, outs = sig
        for v, need in zip(operands, ins):
            if need is not None and v in env and env[v] != need:
                errors.append(f"{v} is {env[v]}, used as {need} in {st!r}")
        for r, got in zip(results, outs):
            if got is not None:
                env[r] = got
    return env, errors


def type_errors(op: GenericOp) -> list[str]:
    """Why ``op`` is ill-typed (module docstring); ``[]`` when nothing is wrong
    with what is checked."""
    errors: list[str] = []
    tensors = [o for o in op.outputs if o.type.kind == "tensor"]
    if op.result_types and len(op.result_types) != len(tensors):
        errors.append(f"{len(op.result_types)} result types for {len(tensors)} tensor outputs")
    for o, rt in zip(tensors, op.result_types):
        if (o.type.kind, o.type.shape, o.type.element) != (rt.kind, rt.shape, rt.element):
            errors.append(f"result type {rt} differs from the type of its init {o.value} ({o.type})")
    header = _BLOCK_RE.search(op.payload)
    if header is not None:
        args = [a for a in header.group(1).split(",") if a.strip()]
        for o, a in zip(op.operands, args):
            if ":" not in a:
                continue
            name, ty = (x.strip() for x in a.split(":", 1))
            want = o.type.element if o.type.kind != "scalar" else str(o.type)
            if ty != want:
                errors.append(f"block argument {name} is {ty}, its operand {o.value} has element type {want}")
    errors += payload_types(op)[1]
    return errors
