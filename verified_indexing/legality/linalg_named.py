"""Convolutions, poolings and ``linalg.softmax`` generalized as MLIR generalizes them.

:func:`generalize` gives the indexing maps, iterator types and payload of a
named convolution or pooling op as MLIR's ``linalg-generalize-named-ops`` writes
them (the ops' OpDSL definitions, ``linalg/opdsl/ops/core_named_ops.py``: the
loop order of ``domain(...)``, input index ``o * stride + k * dilation``, the
operands converted to the output's element type by ``TypeFn.cast_signed``, or
``cast_unsigned`` for the ``_unsigned`` poolings). Modelled (:data:`NAMED_CONVS`):

* ``conv_1d``, ``conv_2d``, ``conv_3d`` (no batch, no channel, unit strides);
* ``conv_1d_nwc_wcf``, ``conv_1d_ncw_fcw``, ``conv_2d_nhwc_hwcf``,
  ``conv_2d_nhwc_fhwc``, ``conv_2d_nchw_fchw``, ``conv_3d_ndhwc_dhwcf``,
  ``conv_3d_ncdhw_fcdhw``;
* the grouped ``conv_2d_ngchw_fgchw``, ``conv_2d_ngchw_gfchw``, ``conv_2d_nhwgc_gfhwc``;
* ``depthwise_conv_1d_nwc_wc``, ``depthwise_conv_1d_ncw_cw``, ``depthwise_conv_1d_nwc_wcm``,
  ``depthwise_conv_2d_nhwc_hwcm``,
  ``depthwise_conv_2d_nhwc_hwc``, ``depthwise_conv_2d_nchw_chw``,
  ``depthwise_conv_3d_ndhwc_dhwc``, ``depthwise_conv_3d_ncdhw_cdhw``;
* ``pooling_{nhwc,nchw,nwc,ncw,ndhwc}_{sum,max,min}`` and the
  ``_unsigned`` max/min variants of ``nhwc`` and ``nwc``.

with ``strides``/``dilations`` attributes (``dense<[a, b]>``, a splat
``dense<a>`` or ``array<i64: a, b>``; default 1). Not modelled (left to the
reader's skipped list): ``depthwise_conv_3d_ndhwc_dhwcm``. The quantized
convolutions ``NAME_q`` (:data:`Q_CONVS`) are read with their two zero points.

:func:`parse_conv` reads such an op in MLIR's pretty or generic (quoted) form
as a :class:`~verified_indexing.legality.linalg_ir.GenericOp` (its ``kind`` the
named op); :func:`softmax_decomposition` writes ``linalg.softmax`` as MLIR's
``DecomposeInterface`` does (max-reduce into a fill of NaN, ``exp(x - max)``,
sum-reduce into a fill of 0, divide: two fills and four generics), text the
reader and the interpreter read. The oracle of both is ``iree-opt``
(``--linalg-generalize-named-ops``, ``iree-codegen-decompose-softmax``):
tests/test_linalg_named.py.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from verified_indexing.affine_map import AffineMap
from verified_indexing.errors import ParseError
from verified_indexing.legality._mlir_text import Cursor, ShapedType
from verified_indexing.syntax import parse_affine_map

if TYPE_CHECKING:
    from verified_indexing.legality.linalg_ir import GenericOp

__all__ = ["NAMED_CONVS", "Q_CONVS", "NAMED_OPS", "ELEMENTWISE_KINDS", "generalize", "elementwise_payload",
           "parse_conv", "parse_elementwise", "parse_named_op", "softmax_decomposition", "expand_softmax",
           "is_named_conv"]

# name -> (domain, input indices, filter indices (None: a pooling's window, only its shape), output indices, kind).
# In the indices, "D"/"H"/"W" stand for the spatial index o{x} * S{X} + k{x} * D{X}.
_C2 = ("conv", "n oh ow f kh kw c")
NAMED_CONVS: dict[str, tuple[str, str, str, str, str]] = {
    "conv_1d": ("ow kw", "W", "kw", "ow", "conv"),
    "conv_2d": ("oh ow kh kw", "H W", "kh kw", "oh ow", "conv"),
    "conv_3d": ("od oh ow kd kh kw", "D H W", "kd kh kw", "od oh ow", "conv"),
    "conv_1d_nwc_wcf": ("n ow f kw c", "n W c", "kw c f", "n ow f", "conv"),
    "conv_1d_ncw_fcw": ("n f ow c kw", "n c W", "f c kw", "n f ow", "conv"),
    "conv_2d_nhwc_hwcf": ("n oh ow f kh kw c", "n H W c", "kh kw c f", "n oh ow f", "conv"),
    "conv_2d_nhwc_fhwc": ("n oh ow f kh kw c", "n H W c", "f kh kw c", "n oh ow f", "conv"),
    "conv_2d_nchw_fchw": ("n f oh ow c kh kw", "n c H W", "f c kh kw", "n f oh ow", "conv"),
    "conv_3d_ndhwc_dhwcf": ("n od oh ow f kd kh kw c", "n D H W c", "kd kh kw c f", "n od oh ow f", "conv"),
    "conv_3d_ncdhw_fcdhw": ("n f od oh ow c kd kh kw", "n c D H W", "f c kd kh kw", "n f od oh ow", "conv"),
    "conv_2d_ngchw_fgchw": ("n g fg oh ow c kh kw", "n g c H W", "fg g c kh kw", "n g fg oh ow", "conv"),
    "conv_2d_ngchw_gfchw": ("n g fg oh ow c kh kw", "n g c H W", "g fg c kh kw", "n g fg oh ow", "conv"),
    "conv_2d_nhwgc_gfhwc": ("n oh ow g fg kh kw c", "n H W g c", "g fg kh kw c", "n oh ow g fg", "conv"),
    "depthwise_conv_1d_nwc_wcm": ("n ow ic cm kw", "n W ic", "kw ic cm", "n ow ic cm", "conv"),
    "depthwise_conv_2d_nhwc_hwcm": ("n oh ow ic cm kh kw", "n H W ic", "kh kw ic cm", "n oh ow ic cm", "conv"),
    "depthwise_conv_1d_nwc_wc": ("n ow ic kw", "n W ic", "kw ic", "n ow ic", "conv"),
    "depthwise_conv_1d_ncw_cw": ("n ow ic kw", "n ic W", "ic kw", "n ic ow", "conv"),
    "depthwise_conv_2d_nhwc_hwc": ("n oh ow ic kh kw", "n H W ic", "kh kw ic", "n oh ow ic", "conv"),
    "depthwise_conv_2d_nchw_chw": ("n oh ow ic kh kw", "n ic H W", "ic kh kw", "n ic oh ow", "conv"),
    "depthwise_conv_3d_ndhwc_dhwc": ("n od oh ow kd kh kw ic", "n D H W ic", "kd kh kw ic", "n od oh ow ic", "conv"),
    "depthwise_conv_3d_ncdhw_cdhw": ("n od oh ow kd kh kw ic", "n ic D H W", "ic kd kh kw", "n ic od oh ow", "conv"),
}
_POOL_LAYOUTS = {
    "nhwc": ("n oh ow c kh kw", "n H W c", "kh kw", "n oh ow c"),
    "nchw": ("n c oh ow kh kw", "n c H W", "kh kw", "n c oh ow"),
    "nwc": ("n ow c kw", "n W c", "kw", "n ow c"),
    "ncw": ("n c ow kw", "n c W", "kw", "n c ow"),
    "ndhwc": ("n od oh ow c kd kh kw", "n D H W c", "kd kh kw", "n od oh ow c"),
}
_POOLS = {"nhwc": ("sum", "max", "min", "max_unsigned", "min_unsigned"), "nchw": ("sum", "max"),
          "nwc": ("sum", "max", "min", "max_unsigned", "min_unsigned"), "ncw": ("sum", "max"),
          "ndhwc": ("sum", "max", "min")}
for _layout, _kinds in _POOLS.items():
    for _k in _kinds:
        NAMED_CONVS[f"pooling_{_layout}_{_k}"] = (*_POOL_LAYOUTS[_layout], _k)


#: ``linalg.elementwise`` kinds: (arity, float operation, integer operation or None).
ELEMENTWISE_KINDS: dict[str, tuple[int, str, str | None]] = {
    **{k: (1, f"math.{k}", None) for k in ("exp", "log", "ceil", "floor", "round", "sqrt", "rsqrt", "tanh", "erf",
                                             "sin", "cos", "tan", "acos", "acosh", "asin", "asinh", "atan", "atanh",
                                             "log10", "log1p", "log2")},
    # abs and square on integers: MLIR's generalization writes math.absf / arith.mulf on them (invalid IR)
    "abs": (1, "math.absf", None), "negf": (1, "arith.negf", None),
    "reciprocal": (1, "reciprocal", None), "square": (1, "square", None),
    "add": (2, "arith.addf", "arith.addi"), "sub": (2, "arith.subf", "arith.subi"),
    "mul": (2, "arith.mulf", "arith.muli"), "div": (2, "arith.divf", "arith.divsi"),
    "div_unsigned": (2, "arith.divf", "arith.divui"), "max_signed": (2, "arith.maximumf", "arith.maxsi"),
    "min_signed": (2, "arith.minimumf", "arith.minsi"), "max_unsigned": (2, "arith.maximumf", "arith.maxui"),
    "min_unsigned": (2, "arith.minimumf", "arith.minui"), "powf": (2, "math.powf", None),
    "select": (3, "arith.select", "arith.select"),
}
#: The quantized convolutions: ``NAME_q`` is ``NAME`` with two more inputs, the input's and the filter's
#: zero points (scalars, maps ``() ``), subtracted from the converted operands before the product.
Q_CONVS = frozenset(f"{b}_q" for b in ("conv_2d_nhwc_hwcf", "conv_2d_nhwc_fhwc", "conv_2d_nchw_fchw",
                                        "conv_2d_nhwgc_gfhwc", "conv_2d_ngchw_gfchw", "conv_3d_ndhwc_dhwcf",
                                        "depthwise_conv_2d_nhwc_hwc", "depthwise_conv_2d_nhwc_hwcm"))
#: Every named op this module reads (the reader hands them to :func:`parse_named_op`).
NAMED_OPS = frozenset({*NAMED_CONVS, *Q_CONVS, "elementwise"})


def is_named_conv(name: str) -> bool:
    """Whether ``linalg.<name>`` is a convolution or pooling this module generalizes."""
    return name in NAMED_CONVS or name in Q_CONVS


def _spatial(domain: list[str]) -> list[str]:
    return [x[1] for x in domain if x.startswith("o") and f"k{x[1]}" in domain]


def generalize(name: str, in_elements: tuple[str, ...], out_element: str, strides: list[int] | None = None,
               dilations: list[int] | None = None) -> tuple[list[AffineMap], list[str], list[str]]:
    """The indexing maps (input, filter or window, output), iterator types and
    payload statements (block arguments ``%in``, ``%in_0``, ``%out``) of the named
    convolution or pooling ``name``, as ``linalg-generalize-named-ops`` writes
    them, for those element types, strides and dilations (one per spatial dim,
    outermost first; ``None``: all 1). Raises ``ValueError`` for a wrong number of
    strides or dilations, a non-positive one, or a conversion not modelled. A
    quantized ``NAME_q`` takes four input element types (input, filter and their
    zero points: maps ``()``, payload ``(I - IZp) * (K - KZp)`` after conversion)."""
    from verified_indexing.legality.linalg_types import convert

    quant = name in Q_CONVS
    dom_s, i_s, k_s, o_s, kind = NAMED_CONVS[name[:-2] if quant else name]
    if len(in_elements) != (4 if quant else 2):
        raise ValueError(f"linalg.{name} takes {4 if quant else 2} inputs, got {len(in_elements)}")
    domain = dom_s.split()
    spatial = _spatial(domain)
    strides = [1] * len(spatial) if strides is None else strides
    dilations = [1] * len(spatial) if dilations is None else dilations
    if len(strides) != len(spatial) or len(dilations) != len(spatial):
        raise ValueError(f"linalg.{name} takes {len(spatial)} strides and dilations, got {strides} and {dilations}")
    if any(s <= 0 for s in (*strides, *dilations)):
        raise ValueError(f"linalg.{name}: strides and dilations are positive, got {strides} and {dilations}")
    dims = {x: f"d{i}" for i, x in enumerate(domain)}

    def index(tok: str) -> str:
        if tok.isupper():
            j = spatial.index(tok.lower())
            s, d = strides[j], dilations[j]
            o, k = dims[f"o{tok.lower()}"], dims[f"k{tok.lower()}"]
            return f"{o}{f' * {s}' if s != 1 else ''} + {k}{f' * {d}' if d != 1 else ''}"
        return dims[tok]

    head = f"({', '.join(dims.values())})"
    maps = [parse_affine_map(f"{head} -> ({', '.join(index(t) for t in s.split())})") for s in (i_s, k_s, o_s)]
    if quant:
        scalar = parse_affine_map(f"{head} -> ()")
        maps = [maps[0], maps[1], scalar, scalar, maps[2]]
    # reduced: the kernel loops and, in a convolution with output features (f, or fg per group), the channels
    iters = ["reduction" if x.startswith("k") or (x == "c" and ("f" in domain or "fg" in domain)) else "parallel"
             for x in domain]
    elem = out_element
    is_float = elem.startswith(("f", "bf", "tf"))
    unsigned = kind.endswith("_unsigned")

    if unsigned and is_float:  # MLIR's verifier: "unsigned max not on uint"
        raise ValueError(f"linalg.{name}: an unsigned max/min needs an integer output, not {elem}")

    def cast(value: str, src: str, result: str) -> tuple[str, list[str]]:
        if unsigned and src != elem:
            if not is_float and src.startswith("i") and int(src[1:]) < int(elem[1:]):
                return result, [f"{result} = arith.extui {value} : {src} to {elem}"]
        conv = convert(value, src, elem, result)
        if conv is None:
            raise ValueError(f"linalg.{name}: converting {src} to {elem} is not modelled")
        return (result if conv else value), conv

    a, lines = cast("%in", in_elements[0], "%0")
    n = len(lines)
    sub = "arith.subf" if is_float else "arith.subi"

    def zero_point(value: str, arg: str, src: str) -> str:
        nonlocal n
        zp, more = cast(arg, src, f"%{n}")
        lines.extend(more)
        lines.append(f"%{len(lines)} = {sub} {value}, {zp} : {elem}")
        n = len(lines)
        return f"%{n - 1}"

    if quant:
        a = zero_point(a, "%in_1", in_elements[2])
    if kind == "conv":
        b, more = cast("%in_0", in_elements[1], f"%{n}")
        lines += more
        n = len(lines)
        if quant:
            b = zero_point(b, "%in_2", in_elements[3])
        mul, add = ("arith.mulf", "arith.addf") if is_float else ("arith.muli", "arith.addi")
        lines += [f"%{n} = {mul} {a}, {b} : {elem}", f"%{n + 1} = {add} %out, %{n} : {elem}"]
    else:
        base = kind.split("_")[0]
        op = {"sum": "arith.addf" if is_float else "arith.addi",
              "max": "arith.maximumf" if is_float else ("arith.maxui" if unsigned else "arith.maxsi"),
              "min": "arith.minimumf" if is_float else ("arith.minui" if unsigned else "arith.minsi")}[base]
        lines += [f"%{n} = {op} %out, {a} : {elem}"]
    lines.append(f"linalg.yield %{len(lines) - 1} : {elem}")
    return maps, iters, lines


_DENSE_RE = r"\s*=\s*(?:dense<\s*(\[[^\]]*\]|-?\d+)\s*>(?:\s*:\s*[\w<>x]+)?|array<i64\s*:?\s*([-\d,\s]*)>)"


def _int_attr(attrs: str, key: str, count: int) -> list[int] | None:
    m = re.search(rf"\b{key}{_DENSE_RE}", attrs)
    if m is None:
        if re.search(rf"\b{key}\b", attrs):  # written in a form not read: never the default silently
            raise ValueError(f"'{key}' is not read (expected {key} = dense<[...]>, dense<n> or array<i64: ...>)")
        return None
    if m.group(1) is not None:
        body = m.group(1).strip()
        if body.startswith("["):
            return [int(x) for x in body[1:-1].split(",") if x.strip()]
        return [int(body)] * count
    return [int(x) for x in (m.group(2) or "").split(",") if x.strip()]


def parse_conv(text: str, match: re.Match[str], source: str, name: str, strict: bool = False
               ) -> tuple[GenericOp, int]:
    """The named convolution or pooling at ``match`` (``linalg.NAME`` or
    ``"linalg.NAME"``, as ``linalg_ir``'s op regex finds it) read as its generic
    (:func:`generalize`); returns the op and the offset after it. Errors are
    :class:`ParseError`\\ s positioned in ``text``."""
    from verified_indexing.legality import linalg_ir as ir

    kind = f"linalg.{name}"
    quoted = bool(match.group(1))
    head = len(match.group()) + (1 if quoted else 0)
    cur = Cursor(text, match.end() + (1 if quoted else 0), source)
    attrs = ""
    ins: list[tuple[str, ShapedType, int]]
    outs: list[tuple[str, ShapedType, int]]
    if quoted:
        o_start, o_stop = cur.balanced("(", ")")
        values = [(vm.group(), o_start + vm.start()) for vm in ir._VALUE_RE.finditer(text[o_start:o_stop])]
        if cur.at("<{"):
            cur.expect("<")
            a, b = cur.balanced("{", "}")
            attrs += text[a:b]
            cur.expect(">")
        if cur.at("("):
            cur.balanced("(", ")")  # the region: the payload is the definition's
        if cur.at("{"):
            a, b = cur.balanced("{", "}")
            attrs += " " + text[a:b]
        cur.expect(":")
        t_start, t_stop = cur.balanced("(", ")")
        spans = cur.split_top(t_start, t_stop)
        n_in = 4 if name in Q_CONVS else 2
        if len(spans) != len(values) or len(values) != n_in + 1:
            raise cur.error(f"{kind} has {n_in} inputs and 1 output; {len(values)} operands, {len(spans)} types",
                            match.start(), head)
        from verified_indexing.legality._mlir_text import parse_type

        types = [parse_type(text[a:b], a, source, text) for a, b in spans]
        typed = [(v, t, p) for (v, p), t in zip(values, types)]
        ins, outs = typed[:n_in], typed[n_in:]
    else:
        if cur.at("{"):
            a, b = cur.balanced("{", "}")
            attrs = text[a:b]
        ins = ir._operands(cur, "ins", strict)
        outs = ir._operands(cur, "outs", strict)
        if cur.at("{"):
            a, b = cur.balanced("{", "}")
            attrs += " " + text[a:b]
    result_types = ir._result_types(cur)
    quant = name in Q_CONVS
    if len(ins) != (4 if quant else 2) or len(outs) != 1:
        what = "input, filter, input zero point, filter zero point" if quant else "input, filter"
        raise cur.error(f"{kind} needs ins({what}) and one outs(...)", match.start(), head)
    spatial = len(_spatial(NAMED_CONVS[name[:-2] if quant else name][0].split()))
    try:
        strides = _int_attr(attrs, "strides", spatial)
        dilations = _int_attr(attrs, "dilations", spatial)
        maps, iters, body = generalize(name, tuple(t.element for _, t, _ in ins), outs[0][1].element,
                                       strides, dilations)
    except ValueError as exc:
        raise cur.error(str(exc), match.start(), head) from None
    for (v, t, pos), mp in zip(ins + outs, maps):
        if t.rank != mp.num_results:
            raise ParseError(f"{kind}: operand {v} has rank {t.rank}, the op's definition {mp.num_results}",
                             text, pos, len(v), source)
    arg_names = ["%in", "%in_0", "%in_1", "%in_2"][:len(ins)]
    header = ", ".join(f"{a}: {t.element}" for a, (_, t, _) in zip(arg_names, ins)) + f", %out: {outs[0][1].element}"
    payload = f"^bb0({header}):\n" + "\n".join(f"  {ln}" for ln in body)
    op = ir._assemble(text, match.start(), head, source, kind, maps, iters, ins, outs, payload, cur.pos,
                      result_types)
    return op, cur.pos


def softmax_decomposition(result: str, src: str, init: str, type_text: str, dimension: int) -> str:
    """``result = linalg.softmax dimension(dimension) ins(src : T) outs(init : T)``
    decomposed as MLIR's ``SoftmaxOp::decomposeOperation`` does: ``%max`` =
    max-reduce (``arith.maxnumf``) of ``src`` along ``dimension`` into a fill of NaN
    (``0xFFC00000``, the identity of ``maxnumf``); ``exp(src - max)`` into ``init``;
    a sum-reduce of it into a fill of 0; the division, whose result is ``result``.
    MLIR text (values ``%softmax_{name}_...`` for the intermediates); ``T`` a
    static, floating-point ranked tensor type."""
    from verified_indexing.legality._mlir_text import parse_type

    t = parse_type(type_text, 0, "<softmax>", type_text)
    if t.kind != "tensor" or any(s is None for s in t.shape) or not 0 <= dimension < t.rank:
        raise ValueError(f"softmax over {type_text} along {dimension}: a static ranked tensor is modelled")
    elem, n = t.element, t.rank
    dims = [f"d{i}" for i in range(n)]
    full = f"affine_map<({', '.join(dims)}) -> ({', '.join(dims)})>"
    red = f"affine_map<({', '.join(dims)}) -> ({', '.join(d for i, d in enumerate(dims) if i != dimension)})>"
    rshape = [s for i, s in enumerate(t.shape) if i != dimension]
    rtype = f"tensor<{''.join(f'{s}x' for s in rshape)}{elem}>"
    it = ", ".join('"reduction"' if i == dimension else '"parallel"' for i in range(n))
    par = ", ".join(['"parallel"'] * n)
    r = "%softmax_" + re.sub(r"[^\w$.-]", "_", result[1:])  # the intermediates (a valid SSA name: not a digit first)
    return "\n".join([
        f"{r}_nan = arith.constant 0xFFC00000 : {elem}",
        f"{r}_zero = arith.constant 0.000000e+00 : {elem}",
        f"{r}_empty = tensor.empty() : {rtype}",
        f"{r}_fmax = linalg.fill ins({r}_nan : {elem}) outs({r}_empty : {rtype}) -> {rtype}",
        f"{r}_max = linalg.generic {{indexing_maps = [{full}, {red}], iterator_types = [{it}]}} "
        f"ins({src} : {type_text}) outs({r}_fmax : {rtype}) {{",
        f"^bb0(%in: {elem}, %out: {elem}):",
        f"  %0 = arith.maxnumf %in, %out : {elem}",
        f"  linalg.yield %0 : {elem}",
        f"}} -> {rtype}",
        f"{r}_exp = linalg.generic {{indexing_maps = [{full}, {red}, {full}], iterator_types = [{par}]}} "
        f"ins({src}, {r}_max : {type_text}, {rtype}) outs({init} : {type_text}) {{",
        f"^bb0(%in: {elem}, %in_1: {elem}, %out: {elem}):",
        f"  %0 = arith.subf %in, %in_1 : {elem}",
        f"  %1 = math.exp %0 : {elem}",
        f"  linalg.yield %1 : {elem}",
        f"}} -> {type_text}",
        f"{r}_fsum = linalg.fill ins({r}_zero : {elem}) outs({r}_empty : {rtype}) -> {rtype}",
        f"{r}_sum = linalg.generic {{indexing_maps = [{full}, {red}], iterator_types = [{it}]}} "
        f"ins({r}_exp : {type_text}) outs({r}_fsum : {rtype}) {{",
        f"^bb0(%in: {elem}, %out: {elem}):",
        f"  %0 = arith.addf %in, %out : {elem}",
        f"  linalg.yield %0 : {elem}",
        f"}} -> {rtype}",
        f"{result} = linalg.generic {{indexing_maps = [{full}, {red}, {full}], iterator_types = [{par}]}} "
        f"ins({r}_exp, {r}_sum : {type_text}, {rtype}) outs({init} : {type_text}) {{",
        f"^bb0(%in: {elem}, %in_1: {elem}, %out: {elem}):",
        f"  %0 = arith.divf %in, %in_1 : {elem}",
        f"  linalg.yield %0 : {elem}",
        f"}} -> {type_text}",
    ]) + "\n"


def elementwise_payload(kind: str, element: str) -> list[str]:
    """The payload statements of ``linalg.elementwise <kind>`` over ``element``
    (block arguments ``%in``, ``%in_0``, ``%in_1``), as ``linalg-generalize-named-ops``
    writes them; ``ValueError`` for an unknown kind or one not defined on ``element``."""
    if kind not in ELEMENTWISE_KINDS:
        raise ValueError(f"unknown linalg.elementwise kind {kind!r}")
    arity, fop, iop = ELEMENTWISE_KINDS[kind]
    is_float = element.startswith(("f", "bf", "tf"))
    op = fop if is_float else iop
    if op is None or (kind.endswith("_unsigned") and is_float):
        raise ValueError(f"linalg.elementwise <{kind}> on {element} is not modelled")
    args = ["%in", "%in_0", "%in_1"][:arity]
    if op == "reciprocal":
        return [f"%cst = arith.constant 1.000000e+00 : {element}", f"%0 = arith.divf %cst, %in : {element}",
                f"linalg.yield %0 : {element}"]
    if op == "square":
        return [f"%0 = arith.mulf %in, %in : {element}",
                f"linalg.yield %0 : {element}"]
    return [f"%0 = {op} {', '.join(args)} : {element}", f"linalg.yield %0 : {element}"]


_KIND_RE = re.compile(r"(?:kind\s*=\s*)?#?(?:linalg\.elementwise_kind)?<\s*(\w+)\s*>")


def parse_elementwise(text: str, match: re.Match[str], source: str, strict: bool = False,
                      aliases: dict[str, AffineMap] | None = None) -> tuple[GenericOp, int]:
    """``linalg.elementwise <kind> [indexing_maps = [...]] ins(...) outs(...) -> T``
    (also ``kind=#linalg.elementwise_kind<kind>``, and the generic form, whose
    properties hold the kind and the maps) read as its generic: identity maps
    unless given, every loop parallel, the payload of :func:`elementwise_payload`."""
    from verified_indexing.legality import linalg_ir as ir
    from verified_indexing.legality._mlir_text import parse_type

    kind_name = "linalg.elementwise"
    quoted = bool(match.group(1))
    head = len(match.group()) + (1 if quoted else 0)
    cur = Cursor(text, match.end() + (1 if quoted else 0), source)
    maps: list[AffineMap] | None = None
    if quoted:
        o_start, o_stop = cur.balanced("(", ")")
        values = [(vm.group(), o_start + vm.start()) for vm in ir._VALUE_RE.finditer(text[o_start:o_stop])]
        props = ""
        if cur.at("<{"):
            cur.expect("<")
            a, b = cur.balanced("{", "}")
            props = text[a:b]
            cur.expect(">")
            props_at = a
        if cur.at("("):
            cur.balanced("(", ")")
        if cur.at("{"):
            a, b = cur.balanced("{", "}")
            props += " " + text[a:b]
            props_at = a
        km = re.search(r"kind\s*=\s*#linalg\.elementwise_kind<\s*(\w+)\s*>", props)
        seg = re.search(r"operandSegmentSizes\s*=\s*array<i32:\s*(\d+)\s*,\s*(\d+)\s*>", props)
        if km is None or seg is None:
            raise cur.error(f"{kind_name} (generic form) needs its kind and operandSegmentSizes", match.start(), head)
        kind = km.group(1)
        im = re.search(r"indexing_maps\s*=\s*\[", props)
        if im is not None:
            mc = Cursor(text, props_at + im.end() - 1, source)
            ms, me = mc.balanced("[", "]")
            maps = ir._map_list(mc, ms, me, aliases or {})
        cur.expect(":")
        t_start, t_stop = cur.balanced("(", ")")
        spans = cur.split_top(t_start, t_stop)
        if len(spans) != len(values):
            raise cur.error(f"{len(values)} operands but {len(spans)} operand types", t_start, max(1, t_stop - t_start))
        types = [parse_type(text[a:b], a, source, text) for a, b in spans]
        typed = [(v, t, p) for (v, p), t in zip(values, types)]
        n_in = int(seg.group(1))
        ins, outs = typed[:n_in], typed[n_in:]
    else:
        km2 = cur.regex(_KIND_RE, "the kind: <exp> or kind=#linalg.elementwise_kind<exp>")
        kind = km2.group(1)
        if cur.at("indexing_maps"):
            cur.expect("indexing_maps")
            cur.expect("=")
            ms, me = cur.balanced("[", "]")
            maps = ir._map_list(cur, ms, me, aliases or {})
        ins = ir._operands(cur, "ins", strict)
        outs = ir._operands(cur, "outs", strict)
        if cur.at("{"):
            cur.balanced("{", "}")
    result_types = ir._result_types(cur)
    if len(outs) != 1:
        raise cur.error(f"{kind_name} needs one outs(...) operand", match.start(), head)
    elem = outs[0][1].element
    arity = ELEMENTWISE_KINDS.get(kind, (len(ins), "", None))[0]
    if len(ins) != arity:
        raise cur.error(f"{kind_name} <{kind}> takes {arity} inputs, got {len(ins)}", match.start(), head)
    try:
        body = elementwise_payload(kind, elem)
    except ValueError as exc:
        raise cur.error(str(exc), match.start(), head) from None
    for v, t, pos in ins:
        want = "i1" if kind == "select" and (v, t, pos) == ins[0] else elem
        if t.element != want:
            raise ParseError(f"{kind_name} <{kind}>: operand {v} is {t.element}, not {want} (a conversion is not "
                             "modelled)", text, pos, len(v), source)
    n = outs[0][1].rank
    if maps is None:
        from verified_indexing.expr import Dim

        maps = [AffineMap(n, 0, [Dim(i) for i in range(n)])] * (len(ins) + 1)
    names = ["%in", "%in_0", "%in_1"][:len(ins)]
    header = ", ".join(f"{a}: {t.element}" for a, (_, t, _) in zip(names, ins)) + f", %out: {elem}"
    payload = f"^bb0({header}):\n" + "\n".join(f"  {ln}" for ln in body)
    num_loops = maps[0].num_dims if maps else n
    op = ir._assemble(text, match.start(), head, source, kind_name, maps, ["parallel"] * num_loops, ins, outs,
                      payload, cur.pos, result_types)
    return op, cur.pos


def parse_named_op(text: str, match: re.Match[str], source: str, name: str, strict: bool = False,
                   aliases: dict[str, AffineMap] | None = None) -> tuple[GenericOp, int]:
    """Any op of :data:`NAMED_OPS` at ``match``, read as its generic (``aliases``:
    the module's ``#name = affine_map<...>`` aliases)."""
    if name == "elementwise":
        return parse_elementwise(text, match, source, strict, aliases)
    return parse_conv(text, match, source, name, strict)


_SOFTMAX_RE = re.compile(r"^([ \t]*)(%[\w$.-]+)\s*=\s*linalg\.softmax\s+dimension\(\s*(\d+)\s*\)\s*"
                         r"ins\(\s*(%[\w$.-]+(?:#\d+)?)\s*:\s*([^)]*?)\s*\)\s*"
                         r"outs\(\s*(%[\w$.-]+(?:#\d+)?)\s*:\s*([^)]*?)\s*\)\s*->\s*(\S+)[ \t]*$", re.MULTILINE)


def expand_softmax(text: str) -> str:
    """``text`` with every ``linalg.softmax`` (pretty form, one line, static
    shapes) replaced by its decomposition (:func:`softmax_decomposition`), at the
    op's indentation: a module the reader reads with no softmax skipped, whose
    last op of each decomposition defines the softmax's result. A softmax whose
    types differ or are not static stays as written (the reader skips it)."""
    def one(m: re.Match[str]) -> str:
        indent, res, dim, src, t_in, init, t_out, t_res = m.groups()
        if not t_in == t_out == t_res:
            return m.group()
        try:
            body = softmax_decomposition(res, src, init, t_in, int(dim))
        except ValueError:
            return m.group()
        return "\n".join(f"{indent}{ln}" if ln else ln for ln in body.rstrip("\n").split("\n"))

    return _SOFTMAX_RE.sub(one, text)
