"""``linalg`` ops read from MLIR text, as ``mlir-opt`` prints them.

:func:`parse_linalg_module` reads every ``linalg`` op of an MLIR module in the
pretty form MLIR prints::

    #map = affine_map<(d0, d1) -> (d0, d1)>
    func.func @f(%A: tensor<4x8xf32>) -> tensor<8x4xf32> {
      %e = tensor.empty() : tensor<8x4xf32>
      %0 = linalg.generic {indexing_maps = [#map, affine_map<(d0, d1) -> (d1, d0)>],
                           iterator_types = ["parallel", "parallel"]}
          ins(%A : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) {
      ^bb0(%in: f32, %out: f32):
        linalg.yield %in : f32
      } -> tensor<8x4xf32>
      return %0 : tensor<8x4xf32>
    }

Accepted: ``module``/``func.func`` wrappers and any non-linalg op around the
ops (ignored: ``tensor.empty``, ``arith.constant``, ``return``...); ``//``
comments and ``loc(...)`` annotations anywhere; ``#name = affine_map<...>``
aliases and inline ``affine_map<...>``; iterator types as strings or
``#linalg.iterator_type<...>``; ``ins``/``outs`` with tensor, memref (layouts
ignored) and scalar types, static or dynamic (``?``) sizes; ``attrs = {...}``,
``library_call``, ``doc`` and other attributes (not interpreted); the payload
region kept as text with its block arguments; ``-> type`` and ``-> (types)``
results; ``%0:2 =`` multi-result ops (results ``%0#0``, ``%0#1``).

Named ops whose indexing maps are fixed by their definition are read as the
equivalent generic (``kind`` keeps the op name, the payload is synthesized):
``linalg.transpose`` (``permutation``), ``linalg.broadcast`` and
``linalg.reduce`` (``dimensions``), ``linalg.map``, ``linalg.fill``,
``linalg.copy``, the contractions ``matmul``, ``batch_matmul``, ``matvec``,
``vecmat``, ``dot`` (an explicit ``indexing_maps = [...]`` wins), and the
elementwise ``add sub mul div max min exp log abs ceil floor sqrt rsqrt tanh
erf negf reciprocal square``. Any other ``linalg`` op is listed in
:attr:`LinalgModule.skipped` with the reason, never guessed.

Also read: attribute aliases ``#trait = {indexing_maps = ..., iterator_types =
...}`` used as ``linalg.generic #trait ins(...)``, whitespace before a
parenthesis (``ins (``), the generic (quoted) form of ``linalg.generic`` and of
the named ops above (the region as the payload). SSA
names are scoped as MLIR scopes them (:func:`regions`, :meth:`GenericOp.sees`):
every function-like op and isolated-from-above region is its own namespace.
``strict=True`` also rejects what MLIR rejects and the lenient reader lets
through (``ins( : )``, ill-typed ops, a converting ``linalg.fill``,
``#linalg.iterator_type`` in the pretty form).

Promises: the op's maps, iterator types, operands, types and payload as
written; an inconsistent op (map count, dims versus iterator count, results
versus operand rank, block argument count, a bad permutation) or malformed
text raises a :class:`ParseError` positioned in the original text.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from verified_indexing.affine_map import AffineMap
from verified_indexing.errors import MapError, ParseError
from verified_indexing.expr import Dim
from verified_indexing.interval import Interval
from verified_indexing.legality._mlir_text import Cursor, ShapedType, parse_affine_span, parse_type
from verified_indexing.legality._scanner import mask_mlir_noise
from verified_indexing.legality.linalg_named import NAMED_OPS
from verified_indexing.syntax.limits import check_limits

__all__ = [
    "Operand", "GenericOp", "LinalgModule", "SkippedOp", "Region", "parse_linalg", "parse_linalg_module", "loop_bounds",
    "regions", "scope_of", "defined_values", "captured_values",
]

_ALIAS_RE = re.compile(r"^[ \t]*#([\w.$-]+)[ \t]*=[ \t]*(?=affine_map\s*<)", re.MULTILINE)
_RESULT_RE = re.compile(r"(%[\w.$-]+)(?::(\d+))?\s*=\s*$")
_VALUE_RE = re.compile(r"%[\w.$-]+(?:#\d+)?")
_ITER_RE = re.compile(r'"(\w+)"|#linalg\.iterator_type<\s*(\w+)\s*>')
_BLOCK_RE = re.compile(r"\^[\w.$-]+\s*\(([^)]*)\)\s*:")


@dataclass(frozen=True)
class Operand:
    """One operand of a generic op: its SSA value, type and indexing map."""

    value: str
    type: ShapedType
    map: AffineMap
    is_input: bool


@dataclass(frozen=True)
class GenericOp:
    """A parsed ``linalg.generic``.

    ``name`` is its first result (``%0``) or ``generic@LINE`` when it has none;
    ``results`` all its result values (``%0#0``... for multi-result ops written
    ``%0:2 =``); ``payload`` the region text; ``block_args`` the payload's
    block argument names in operand order; ``line`` where the op starts.
    """

    name: str
    results: tuple[str, ...]
    inputs: tuple[Operand, ...]
    outputs: tuple[Operand, ...]
    iterator_types: tuple[str, ...]
    payload: str
    block_args: tuple[str, ...]
    result_types: tuple[ShapedType, ...]
    line: int
    offset: int
    kind: str = "linalg.generic"
    function: str = ""
    scope: tuple[int, ...] = ()
    end: int = 0  # the offset just after the op's text (its result types)

    def sees(self, other: GenericOp) -> bool:
        """Whether SSA values ``other`` defines are visible in this op: ``other``'s
        innermost region is one of this op's scope (same isolated region, not a
        sibling region) and ``other`` comes first."""
        mine = self.scope[0] if self.scope else None
        theirs = other.scope[0] if other.scope else None
        if other.offset >= self.offset:
            return False
        if not self.scope or not other.scope:
            return mine == theirs and self.function == other.function
        return theirs in self.scope

    @property
    def operands(self) -> tuple[Operand, ...]:
        return self.inputs + self.outputs

    @property
    def num_loops(self) -> int:
        return len(self.iterator_types)

    @property
    def num_parallel_loops(self) -> int:
        return sum(1 for t in self.iterator_types if t == "parallel")

    @property
    def has_pure_tensor_semantics(self) -> bool:
        return all(o.type.kind != "memref" for o in self.operands)

    def payload_uses(self, operand_index: int) -> bool:
        """True when the payload mentions the block argument of that operand."""
        if operand_index >= len(self.block_args):
            return True
        name = self.block_args[operand_index]
        header = _BLOCK_RE.search(self.payload)
        body = self.payload[header.end() :] if header is not None else self.payload
        return re.search(re.escape(name) + r"(?![\w.$-])", body) is not None


class _Aliases(dict[str, AffineMap]):
    """The module's ``#name = affine_map<...>`` aliases (the dict), its attribute
    dictionary aliases ``#trait = {...}`` (``attrs``: the span inside the braces)
    and whether the reader is strict."""

    def __init__(self) -> None:
        super().__init__()
        self.attrs: dict[str, tuple[int, int]] = {}
        self.strict = False


_ATTR_ALIAS_RE = re.compile(r"^[ \t]*#([\w.$-]+)[ \t]*=[ \t]*(?=\{)", re.MULTILINE)


def _aliases(text: str, source: str, strict: bool = False) -> _Aliases:
    out = _Aliases()
    out.strict = strict
    for m in _ALIAS_RE.finditer(text):
        cur = Cursor(text, m.end(), source)
        start = cur.pos
        cur.expect("affine_map")
        cur.balanced("<", ">")
        out[m.group(1)] = parse_affine_span(text, start, cur.pos, source)
    for m in _ATTR_ALIAS_RE.finditer(text):
        cur = Cursor(text, m.end(), source)
        out.attrs[m.group(1)] = cur.balanced("{", "}")
    return out


def _map_list(cur: Cursor, start: int, stop: int, aliases: dict[str, AffineMap]) -> list[AffineMap]:
    maps: list[AffineMap] = []
    for s, e in cur.split_top(start, stop):
        item = cur.text[s:e].strip()
        lead = s + (len(cur.text[s:e]) - len(cur.text[s:e].lstrip()))
        if item.startswith("#"):
            name = item[1:]
            if name not in aliases:
                raise cur.error(f"unknown affine map alias {item!r}", lead, len(item))
            maps.append(aliases[name])
        elif item.startswith("affine_map"):
            maps.append(parse_affine_span(cur.text, lead, lead + len(item), cur.source))
        else:
            raise cur.error(f"expected an affine map or an alias, found {item!r}", lead, max(1, len(item)))
    return maps


_KEYWORD_PAREN = {k: re.compile(k + r"\s*\(") for k in ("ins", "outs")}


def _operands(cur: Cursor, keyword: str, strict: bool = False) -> list[tuple[str, ShapedType, int]]:
    """``ins(%a, %b : T, U)`` (any whitespace MLIR allows, ``ins (`` included).
    ``strict``: as MLIR's parser, an empty list with a colon (``ins( : )``) and an
    empty ``ins()`` are rejected."""
    cur.skip_ws()
    km = _KEYWORD_PAREN[keyword].match(cur.text, cur.pos)
    if km is None:
        return []
    cur.pos = km.end() - 1
    start, stop = cur.balanced("(", ")")
    inner = cur.text[start:stop]
    if not inner.strip():
        if strict:
            raise cur.error(f"{keyword}() with no operand: MLIR expects an operand (omit {keyword} instead)",
                            km.start(), km.end() - km.start() + 1)
        return []
    colon = inner.find(":")
    if colon < 0:
        raise cur.error(f"expected ':' and the operand types in {keyword}(...)", start, max(1, len(inner)))
    if strict and not inner[:colon].strip():
        raise cur.error(f"{keyword}( : ) with no operand: MLIR rejects it (expected an SSA operand)", start,
                        max(1, len(inner)))
    values = [(m.group(), start + m.start()) for m in _VALUE_RE.finditer(inner[:colon])]
    type_spans = cur.split_top(start + colon + 1, stop)
    if len(values) != len(type_spans):
        raise cur.error(f"{keyword}: {len(values)} operands but {len(type_spans)} types", start, max(1, len(inner)))
    out = []
    for (v, pos), (ts, te) in zip(values, type_spans):
        out.append((v, parse_type(cur.text[ts:te], ts, cur.source, cur.text), pos))
    return out


def _iterators(cur: Cursor, start: int, stop: int) -> list[str]:
    iters: list[str] = []
    for s, e in cur.split_top(start, stop):
        item = cur.text[s:e].strip()
        m = _ITER_RE.fullmatch(item)
        if m is None or (m.group(1) or m.group(2)) not in ("parallel", "reduction", "window"):
            raise cur.error(f"unknown iterator type {item!r}", s, max(1, e - s))
        iters.append(m.group(1) or m.group(2))
    return iters


def _result_types(cur: Cursor) -> list[ShapedType]:
    if not cur.accept("->"):
        return []
    cur.skip_ws()
    if cur.at("("):
        rs, re_ = cur.balanced("(", ")")
        spans = cur.split_top(rs, re_)
    else:
        t0 = cur.pos
        cur.regex(re.compile(r"(tensor|memref)<"), "a result type")
        cur.pos -= 1
        cur.balanced("<", ">")
        spans = [(t0, cur.pos)]
    return [parse_type(cur.text[s:e], s, cur.source, cur.text) for s, e in spans]


def _result_names(text: str, start: int) -> tuple[str, tuple[str, ...]] | None:
    line_start = text.rfind("\n", 0, start) + 1
    rm = _RESULT_RE.search(text[line_start:start])
    if rm is None:
        return None
    base = rm.group(1)
    count = int(rm.group(2)) if rm.group(2) else 1
    return base, ((base,) if count == 1 else tuple(f"{base}#{i}" for i in range(count)))


def _assemble(
    text: str, start: int, head_len: int, source: str, kind: str, maps: list[AffineMap], iters: list[str],
    ins: list[tuple[str, ShapedType, int]], outs: list[tuple[str, ShapedType, int]], payload: str, p_start: int,
    result_types: list[ShapedType],
) -> GenericOp:
    """Check an op's parts against each other and build the :class:`GenericOp`."""
    n_ops = len(ins) + len(outs)
    if len(maps) != n_ops:
        raise ParseError(f"{kind} has {n_ops} operands but {len(maps)} indexing maps", text, start, head_len, source)
    for k, (mp, (v, ty, pos)) in enumerate(zip(maps, ins + outs)):
        if mp.num_dims != len(iters):
            raise ParseError(
                f"indexing map #{k} has {mp.num_dims} dims but the op has {len(iters)} iterators",
                text, start, head_len, source,
            )
        if mp.num_results != ty.rank:
            raise ParseError(
                f"indexing map #{k} has {mp.num_results} results but operand {v} has rank {ty.rank}",
                text, pos, len(v), source,
            )
        if mp.num_symbols:
            raise ParseError(f"indexing map #{k} has symbols (not supported)", text, start, head_len, source)
    bm = _BLOCK_RE.search(payload)
    block_args: list[str] = []
    if bm is not None:
        block_args = [a.split(":")[0].strip() for a in bm.group(1).split(",") if a.strip()]
        if len(block_args) != n_ops:
            raise ParseError(
                f"the payload block has {len(block_args)} arguments for {n_ops} operands",
                text, p_start + bm.start(), len(bm.group()), source,
            )
    line = text.count("\n", 0, start) + 1
    named = _result_names(text, start)
    name, results = named if named is not None else (f"{kind.split('.')[-1]}@{line}", ())
    return GenericOp(
        name=name,
        results=results,
        inputs=tuple(Operand(v, t, mp, True) for (v, t, _), mp in zip(ins, maps)),
        outputs=tuple(Operand(v, t, mp, False) for (v, t, _), mp in zip(outs, maps[len(ins) :])),
        iterator_types=tuple(iters),
        payload=payload,
        block_args=tuple(block_args),
        result_types=tuple(result_types),
        line=line,
        offset=start,
        kind=kind,
    )


def _parse_generic(
    text: str, match: re.Match[str], aliases: dict[str, AffineMap], source: str
) -> tuple[GenericOp, int]:
    cur = Cursor(text, match.end(), source)
    head = len(match.group())
    strict = isinstance(aliases, _Aliases) and aliases.strict
    if cur.at("#"):  # an attribute alias: linalg.generic #trait ins(...)
        am = cur.regex(re.compile(r"#([\w.$-]+)"), "an attribute alias")
        spans = aliases.attrs if isinstance(aliases, _Aliases) else {}
        if am.group(1) not in spans:
            raise cur.error(f"unknown attribute alias {am.group()!r}", am.start(), len(am.group()))
        a_start, a_stop = spans[am.group(1)]
    else:
        a_start, a_stop = cur.balanced("{", "}")
    attrs = text[a_start:a_stop]
    im = re.search(r"indexing_maps\s*=\s*\[", attrs)
    if im is None:
        raise cur.error("linalg.generic needs an 'indexing_maps' attribute", match.start(), head)
    mc = Cursor(text, a_start + im.end() - 1, source)
    ms, me = mc.balanced("[", "]")
    maps = _map_list(mc, ms, me, aliases)
    it = re.search(r"iterator_types\s*=\s*\[([^\]]*)\]", attrs)
    if it is None:
        raise cur.error("linalg.generic needs an 'iterator_types' attribute", match.start(), head)
    iters = _iterators(Cursor(text, 0, source), a_start + it.start(1), a_start + it.end(1))
    if strict and "#linalg.iterator_type" in it.group(1):
        # the generic form's spelling; MLIR's pretty-form parser expects strings (iree-opt crashes on it)
        raise cur.error("iterator_types in the pretty form are strings (\"parallel\"), not #linalg.iterator_type<...>",
                        a_start + it.start(1), max(1, it.end(1) - it.start(1)))
    ins = _operands(cur, "ins", strict)
    outs = _operands(cur, "outs", strict)
    if cur.at("attrs"):
        cur.expect("attrs")
        cur.expect("=")
        cur.balanced("{", "}")
    p_start, p_stop = cur.balanced("{", "}")
    payload = text[p_start:p_stop].strip("\n")
    result_types = _result_types(cur)
    op = _assemble(text, match.start(), head, source, "linalg.generic", maps, iters, ins, outs, payload, p_start,
                   result_types)
    return op, cur.pos


def _parse_generic_form(
    text: str, match: re.Match[str], aliases: dict[str, AffineMap], source: str
) -> tuple[GenericOp, int]:
    """``"linalg.generic"(%a, %b) <{indexing_maps = [...], iterator_types = [...],
    operandSegmentSizes = array<i32: 1, 1>}> ({ ^bb0(...): ... }) : (T, U) -> R``,
    as ``mlir-opt --mlir-print-op-generic`` prints it (attributes in ``<{...}>``
    or, as older MLIR prints them, in ``{...}`` after the region)."""
    head = len(match.group()) + 1
    cur = Cursor(text, match.end() + 1, source)  # after the closing quote
    o_start, o_stop = cur.balanced("(", ")")
    values = [(vm.group(), o_start + vm.start()) for vm in _VALUE_RE.finditer(text[o_start:o_stop])]
    attr_spans: list[tuple[int, int]] = []
    if cur.at("<{"):
        cur.expect("<")
        attr_spans.append(cur.balanced("{", "}"))
        cur.expect(">")
    r_start, _ = cur.balanced("(", ")")
    rc = Cursor(text, r_start, source)
    p_start, p_stop = rc.balanced("{", "}")
    payload = text[p_start:p_stop].strip("\n")
    if cur.at("{"):
        attr_spans.append(cur.balanced("{", "}"))
    attrs_text = " ".join(text[a:b] for a, b in attr_spans)
    if not attr_spans:
        raise cur.error('"linalg.generic" needs its attributes (indexing_maps, iterator_types)', match.start(), head)
    a_start, a_stop = attr_spans[0] if "indexing_maps" in text[attr_spans[0][0]:attr_spans[0][1]] else attr_spans[-1]
    attrs = text[a_start:a_stop]
    im = re.search(r"indexing_maps\s*=\s*\[", attrs)
    if im is None:
        raise cur.error("linalg.generic needs an 'indexing_maps' attribute", match.start(), head)
    mc = Cursor(text, a_start + im.end() - 1, source)
    ms, me = mc.balanced("[", "]")
    maps = _map_list(mc, ms, me, aliases)
    it = re.search(r"iterator_types\s*=\s*\[([^\]]*)\]", attrs)
    if it is None:
        raise cur.error("linalg.generic needs an 'iterator_types' attribute", match.start(), head)
    iters = _iterators(Cursor(text, 0, source), a_start + it.start(1), a_start + it.end(1))
    seg = re.search(r"operandSegmentSizes\s*=\s*array<i32:\s*(\d+)\s*,\s*(\d+)\s*>", attrs_text)
    if seg is None:
        raise cur.error('"linalg.generic" needs operandSegmentSizes = array<i32: #ins, #outs>', match.start(), head)
    n_in, n_out = int(seg.group(1)), int(seg.group(2))
    if n_in + n_out != len(values):
        raise cur.error(f"operandSegmentSizes says {n_in} + {n_out} operands, the op has {len(values)}",
                        o_start, max(1, o_stop - o_start))
    cur.expect(":")
    t_start, t_stop = cur.balanced("(", ")")
    type_spans = cur.split_top(t_start, t_stop)
    if len(type_spans) != len(values):
        raise cur.error(f"{len(values)} operands but {len(type_spans)} operand types", t_start,
                        max(1, t_stop - t_start))
    types = [parse_type(text[a:b], a, source, text) for a, b in type_spans]
    result_types = _result_types(cur)
    ops_ = [(v, t, pos) for (v, pos), t in zip(values, types)]
    op = _assemble(text, match.start(), head, source, "linalg.generic", maps, iters, ops_[:n_in], ops_[n_in:],
                   payload, p_start, result_types)
    return op, cur.pos


# -- named ops ----------------------------------------------------------------

#: Named contractions: (iterator types, operand maps as result dim lists), as
#: the ops' definitions give them (``linalg/opdsl``).
_CONTRACTIONS: dict[str, tuple[str, list[list[int]]]] = {
    "matmul": ("ppr", [[0, 2], [2, 1], [0, 1]]),
    "batch_matmul": ("pppr", [[0, 1, 3], [0, 3, 2], [0, 1, 2]]),
    "matvec": ("pr", [[0, 1], [1], [0]]),
    "vecmat": ("pr", [[1], [1, 0], [0]]),
    "dot": ("r", [[0], [0], []]),
}
_BINARY = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "maximum", "min": "minimum"}
_UNARY = ("exp", "log", "abs", "ceil", "floor", "sqrt", "rsqrt", "tanh", "erf", "negf", "reciprocal", "square")
_SUPPORTED_NAMED = ("transpose", "broadcast", "map", "reduce", "fill", "copy", *_CONTRACTIONS, *_BINARY, *_UNARY)
_INT_LIST_RE = re.compile(r"\[\s*(-?\d+(?:\s*,\s*-?\d+)*)?\s*\]")


def _int_list(cur: Cursor, keyword: str) -> tuple[list[int], int] | None:
    """``keyword = [1, 0]`` at the cursor (or inside a following ``{...}``)."""
    if not cur.at(keyword):
        return None
    at = cur.pos
    cur.expect(keyword)
    cur.expect("=")
    m = cur.regex(_INT_LIST_RE, f"a list of integers after '{keyword} ='")
    return ([int(x) for x in m.group(1).split(",")] if m.group(1) else []), at


def _arith(op: str, element: str) -> str:
    is_float = element.startswith(("f", "bf", "tf"))
    if op in ("maximum", "minimum"):
        return f"arith.{op}f" if is_float else f"arith.{op[:3]}si"
    return f"arith.{op}{'f' if is_float else 'i'}"


def _identity(n: int) -> AffineMap:
    return AffineMap(n, 0, [Dim(i) for i in range(n)])


def _parse_named(
    text: str, match: re.Match[str], aliases: dict[str, AffineMap], source: str, name: str
) -> tuple[GenericOp, int]:
    """A named op (``linalg.transpose``, ``linalg.matmul``...) as its equivalent generic."""
    kind = f"linalg.{name}"
    head = len(match.group())
    cur = Cursor(text, match.end(), source)
    explicit_maps: list[AffineMap] | None = None
    short_body: str | None = None
    if cur.at("indexing_maps"):
        cur.expect("indexing_maps")
        cur.expect("=")
        ms, me = cur.balanced("[", "]")
        explicit_maps = _map_list(cur, ms, me, aliases)
    if name in ("map", "reduce") and cur.at("{"):
        bs, be = cur.balanced("{", "}")
        short_body = text[bs:be].strip()
    elif cur.at("{"):  # a leading attribute dictionary, e.g. {cast = #linalg.type_fn<cast_unsigned>}
        cur.balanced("{", "}")
    strict = isinstance(aliases, _Aliases) and aliases.strict
    ins = _operands(cur, "ins", strict)
    outs = _operands(cur, "outs", strict)
    if not outs:
        raise cur.error(f"{kind} needs an outs(...) operand", match.start(), head)
    perm = _int_list(cur, "permutation")
    dims = _int_list(cur, "dimensions")
    region_args: list[tuple[str, str]] | None = None
    region_body = ""
    p_start = cur.pos
    if name in ("map", "reduce") and short_body is None and cur.at("("):
        a_s, a_e = cur.balanced("(", ")")
        region_args = []
        for s_, e_ in cur.split_top(a_s, a_e):
            arg = text[s_:e_].strip()
            if ":" not in arg:
                raise cur.error(f"expected '%name: type' in the region arguments of {kind}", s_, max(1, e_ - s_))
            region_args.append((arg.split(":")[0].strip(), arg.split(":", 1)[1].strip()))
        p_start, p_stop = cur.balanced("{", "}")
        region_body = text[p_start:p_stop].strip("\n")
    if cur.at("{") and name not in ("map", "reduce"):
        cur.balanced("{", "}")  # attribute dictionary
    result_types = _result_types(cur)
    if not result_types:  # the pretty form of transpose, broadcast, reduce, map prints none: the inits' types
        result_types = [t for _, t, _ in outs if t.kind == "tensor"]
    init = outs[0][1]
    n = init.rank
    elem = init.element
    maps: list[AffineMap]
    iters: list[str]
    args_in = ["%in" if i == 0 else f"%in_{i - 1}" for i in range(len(ins))]
    body: list[str]
    if name == "transpose":
        if perm is None:
            raise cur.error("linalg.transpose needs 'permutation = [...]'", match.start(), head)
        p, at = perm
        if sorted(p) != list(range(n)) or len(ins) != 1 or ins[0][1].rank != n:
            raise cur.error(f"permutation {p} is not a permutation of the {n} dims of the operands", at)
        in_results: list[Dim] = [Dim(0)] * n
        for j, pj in enumerate(p):
            in_results[pj] = Dim(j)
        maps, iters = [AffineMap(n, 0, in_results), _identity(n)], ["parallel"] * n
        body = [f"linalg.yield {args_in[0]} : {elem}"]
    elif name == "broadcast":
        if dims is None:
            raise cur.error("linalg.broadcast needs 'dimensions = [...]'", match.start(), head)
        d, at = dims
        if len(ins) != 1 or len(set(d)) != len(d) or any(not 0 <= x < n for x in d) or ins[0][1].rank + len(d) != n:
            raise cur.error(f"dimensions {d} do not add the missing dims of the {n}-d init", at)
        maps = [AffineMap(n, 0, [Dim(i) for i in range(n) if i not in d]), _identity(n)]
        iters = ["parallel"] * n
        body = [f"linalg.yield {args_in[0]} : {elem}"]
    elif name == "reduce":
        if dims is None or len(ins) != len(outs):
            raise cur.error("linalg.reduce needs 'dimensions = [...]' and one init per input", match.start(), head)
        d, at = dims
        rank = ins[0][1].rank
        if any(not 0 <= x < rank for x in d) or len(set(d)) != len(d) or rank - len(d) != n:
            raise cur.error(f"dimensions {d} do not reduce the {rank}-d input to the {n}-d init", at)
        kept = [Dim(i) for i in range(rank) if i not in d]
        maps = [_identity(rank)] * len(ins) + [AffineMap(rank, 0, kept)] * len(outs)
        iters = ["reduction" if i in d else "parallel" for i in range(rank)]
        if region_args is None:
            if short_body is None or len(ins) != 1:
                raise cur.error("linalg.reduce needs a region '(%in: T, %init: T) { ... }'", match.start(), head)
            opname = short_body.split()[0] if short_body.split() else ""
            region_args = [("%in", ins[0][1].element), ("%init", elem)]
            region_body = f"  %0 = {opname} %in, %init : {elem}\n  linalg.yield %0 : {elem}"
        return _assemble(text, match.start(), head, source, kind, maps, iters, ins, outs,
                         _region_payload(region_args, [], region_body), p_start, result_types), cur.pos
    elif name == "map":
        maps, iters = [_identity(n)] * (len(ins) + 1), ["parallel"] * n
        if region_args is not None:
            return _assemble(text, match.start(), head, source, kind, maps, iters, ins, outs,
                             # newer MLIR gives the region the init's element too (one argument per operand)
                             _region_payload(region_args, [] if len(region_args) == len(ins) + len(outs)
                                             else [("%out", elem)], region_body), p_start,
                             result_types), cur.pos
        if short_body is None:
            raise cur.error("linalg.map needs a region or '{ op }'", match.start(), head)
        opname = short_body.split()[0] if short_body.split() else ""
        body = [f"%0 = {opname} {', '.join(args_in)} : {elem}", f"linalg.yield %0 : {elem}"]
    elif name == "fill":
        maps, iters = [AffineMap(n, 0, []), _identity(n)], ["parallel"] * n
        if strict and ins and ins[0][1].element != elem:
            # MLIR's verifier today; older definitions converted (cast_signed), as the lenient reader does
            raise cur.error(f"linalg.fill: the fill value type ({ins[0][1].element}) does not match the output "
                            f"element type ({elem}), which MLIR's verifier rejects", match.start(), head)
        cv, conv = _converted(cur, ins, args_in, elem, kind, match.start(), head)
        body = [*conv, f"linalg.yield {cv[0]} : {elem}"] if args_in else []
    elif name == "copy":
        maps, iters = [_identity(n), _identity(n)], ["parallel"] * n
        cv, conv = _converted(cur, ins, args_in, elem, kind, match.start(), head)
        body = [*conv, f"linalg.yield {cv[0]} : {elem}"] if args_in else []
    elif name in _CONTRACTIONS:
        codes, results = _CONTRACTIONS[name]
        iters = ["parallel" if c == "p" else "reduction" for c in codes]
        maps = [AffineMap(len(codes), 0, [Dim(i) for i in r]) for r in results]
        cv, conv = _converted(cur, ins, args_in, elem, kind, match.start(), head)
        body = [*conv, f"%0 = {_arith('mul', elem)} {cv[0]}, {cv[1]} : {elem}",
                f"%1 = {_arith('add', elem)} %out, %0 : {elem}", f"linalg.yield %1 : {elem}"]
    elif name in _BINARY:
        maps, iters = [_identity(n)] * 3, ["parallel"] * n
        cv, conv = _converted(cur, ins, args_in, elem, kind, match.start(), head)
        body = [*conv, f"%0 = {_arith(_BINARY[name], elem)} {cv[0]}, {cv[1]} : {elem}", f"linalg.yield %0 : {elem}"]
    else:
        maps, iters = [_identity(n)] * 2, ["parallel"] * n
        cv, conv = _converted(cur, ins, args_in, elem, kind, match.start(), head)
        body = [*conv, f"%0 = math.{name} {cv[0]} : {elem}", f"linalg.yield %0 : {elem}"]
    if explicit_maps is not None:
        if len(explicit_maps) != len(maps):
            raise cur.error(f"{kind} has {len(explicit_maps)} indexing maps for {len(maps)} operands",
                            match.start(), head)
        maps = explicit_maps
    header = ", ".join(f"{a}: {t.element if t.kind != 'scalar' else t}" for a, (_, t, _) in zip(args_in, ins))
    header = f"{header}, %out: {elem}" if header else f"%out: {elem}"
    payload = f"^bb0({header}):\n" + "\n".join(f"  {ln}" for ln in body)
    return _assemble(text, match.start(), head, source, kind, maps, iters, ins, outs, payload, p_start,
                     result_types), cur.pos


def _converted(
    cur: Cursor, ins: list[tuple[str, ShapedType, int]], args: list[str], elem: str, kind: str, at: int, head: int
) -> tuple[list[str], list[str]]:
    """The block arguments converted to the output's element type ``elem`` as the
    named op's definition does (``TypeFn.cast_signed``: ``linalg.fill`` of an
    ``f32`` into an ``f16`` tensor truncates), and the statements doing it."""
    from verified_indexing.legality.linalg_types import convert

    names: list[str] = []
    lines: list[str] = []
    for i, (a, (_, t, _)) in enumerate(zip(args, ins)):
        src = t.element
        conv = convert(a, src, elem, f"%cast_{i}")
        if conv is None:
            raise cur.error(f"{kind}: converting {src} to {elem} is not modelled", at, head)
        names.append(f"%cast_{i}" if conv else a)
        lines += conv
    return names, lines


_ARRAY_RE = re.compile(r"\b(permutation|dimensions)\s*=\s*array<i64(?::\s*([-\d,\s]*))?>")


def _parse_named_generic_form(
    text: str, match: re.Match[str], aliases: dict[str, AffineMap], source: str, name: str
) -> tuple[GenericOp, int]:
    """A named op in the generic (quoted) form, ``"linalg.fill"(%c, %e)
    <{operandSegmentSizes = ...}> ({ ^bb0(...): ... }) : (f32, T) -> T``: its maps
    and iterators from its definition (:func:`_parse_named`, on the equivalent
    pretty form), its payload the region as written (the generic form prints it)."""
    kind = f"linalg.{name}"
    head = len(match.group()) + 1
    cur = Cursor(text, match.end() + 1, source)  # after the closing quote
    o_start, o_stop = cur.balanced("(", ")")
    values = [vm.group() for vm in _VALUE_RE.finditer(text[o_start:o_stop])]
    props = ""
    if cur.at("<{"):
        cur.expect("<")
        a, b = cur.balanced("{", "}")
        props = text[a:b]
        cur.expect(">")
    p_start, p_stop = (0, 0)
    if cur.at("("):
        r_start, _ = cur.balanced("(", ")")
        p_start, p_stop = Cursor(text, r_start, source).balanced("{", "}")
    if cur.at("{"):
        a, b = cur.balanced("{", "}")
        props += " " + text[a:b]
    cur.expect(":")
    t_start, t_stop = cur.balanced("(", ")")
    types = [text[a:b].strip() for a, b in cur.split_top(t_start, t_stop)]
    result_types = _result_types(cur)
    if len(types) != len(values):
        raise cur.error(f"{len(values)} operands but {len(types)} operand types", t_start, max(1, t_stop - t_start))
    seg = re.search(r"operandSegmentSizes\s*=\s*array<i32:\s*(\d+)\s*,\s*(\d+)\s*>", props)
    if seg is not None:
        n_in = int(seg.group(1))
    elif name == "reduce":
        n_in = len(values) // 2
    else:
        n_in = len(values) - 1
    if not 0 <= n_in <= len(values):
        raise cur.error(f"{kind}: operandSegmentSizes does not match its {len(values)} operands", match.start(), head)
    pieces = [f"linalg.{name}"]
    im = re.search(r"indexing_maps\s*=\s*\[", props)
    if im is not None:
        depth, j = 0, im.end() - 1
        while j < len(props):
            depth += props[j] == "["
            depth -= props[j] == "]"
            if depth == 0:
                break
            j += 1
        pieces.append(f"indexing_maps = {props[im.end() - 1 : j + 1]}")
    ins = list(zip(values[:n_in], types[:n_in]))
    outs = list(zip(values[n_in:], types[n_in:]))
    if ins:
        pieces.append(f"ins({', '.join(v for v, _ in ins)} : {', '.join(t for _, t in ins)})")
    pieces.append(f"outs({', '.join(v for v, _ in outs)} : {', '.join(t for _, t in outs)})")
    for am in _ARRAY_RE.finditer(props):
        pieces.append(f"{am.group(1)} = [{am.group(2) or ''}]")
    if name in ("map", "reduce"):
        # the region's block arguments: the pretty form lists the inputs' (and reduce's inits')
        header = _BLOCK_RE.search(text, p_start, p_stop)
        args = [x for x in (header.group(1).split(",") if header else []) if x.strip()]
        keep = args if name == "reduce" else args[: len(ins)]
        pieces.append(f"({', '.join(a.strip() for a in keep)}) {{ linalg.yield }}")
    pretty = " ".join(pieces)  # its #aliases resolve against the module's
    pm = _OP_RE.match(pretty)
    assert pm is not None
    try:
        op, _ = _parse_named(pretty, pm, aliases, source, name)
    except ParseError as exc:
        raise ParseError(f"{kind} (generic form): {exc.message}", text, match.start(), head, source) from None
    payload = text[p_start:p_stop].strip("\n")
    bm = _BLOCK_RE.search(payload)
    if bm is None or len([a for a in bm.group(1).split(",") if a.strip()]) != len(values):
        raise ParseError(f"{kind} (generic form): the region's block has no argument per operand", text,
                         match.start(), head, source)
    block_args = tuple(a.split(":")[0].strip() for a in bm.group(1).split(",") if a.strip())
    line = text.count("\n", 0, match.start()) + 1
    named = _result_names(text, match.start())
    op_name, results = named if named is not None else (f"{name}@{line}", ())
    return replace(op, name=op_name, results=results, payload=payload, block_args=block_args,
                   result_types=tuple(result_types), line=line, offset=match.start()), cur.pos


def _region_payload(args: list[tuple[str, str]], extra: list[tuple[str, str]], body: str) -> str:
    header = ", ".join(f"{a}: {t}" for a, t in [*args, *extra])
    return f"^bb0({header}):\n{body}"


@dataclass(frozen=True)
class SkippedOp:
    """A ``linalg`` op of the input that is not modelled, and why."""

    op: str
    name: str
    line: int
    reason: str


@dataclass(frozen=True)
class LinalgModule:
    """Every modelled ``linalg`` op of a module (as generics) and the skipped ones."""

    ops: tuple[GenericOp, ...]
    skipped: tuple[SkippedOp, ...]


_OP_RE = re.compile(r"(?<![\w.#$%])(\"?)linalg\.([A-Za-z_][\w.]*)")
_INNER = ("yield", "index")
_STRING_RE = re.compile(r'"(?:[^"\\\n]|\\.)*"')


def parse_linalg_module(text: str, source: str = "<input>", *, strict: bool = False,
                        context: Iterable[str] = ()) -> LinalgModule:
    """Every ``linalg`` op of ``text`` (see the module docstring): generics and the
    named ops with a fixed definition, read as their equivalent generics; other
    ``linalg`` ops are listed in ``skipped`` with the reason. ``//`` comments and
    ``loc(...)`` annotations are ignored (errors keep their original position).

    Each op's ``scope`` is the chain of regions it sits in, innermost first, up to
    the first isolated-from-above one (:func:`regions`): SSA names are resolved
    there only, as MLIR resolves them. ``strict``: reject what MLIR's parser or
    verifier rejects and the lenient reader lets through (``ins( : )``, an empty
    ``ins()``, ill-typed ops: :func:`verified_indexing.legality.linalg_types.type_errors`,
    and a ``linalg.generic`` payload using a value defined nowhere: neither in the
    payload nor anywhere in ``text`` -- an op result, a function or block argument
    -- nor in ``context``, the values of the enclosing function visible to an op
    read alone, e.g. a fused op whose payload captures a constant).
    """
    check_limits(text, source)
    masked = mask_mlir_noise(text)
    try:
        mod = _parse_module(masked, source, strict)
    except ParseError as exc:
        raise ParseError(exc.message, text, exc.offset, exc.length, source) from None
    if strict:
        from verified_indexing.legality.linalg_types import type_errors

        for op in mod.ops:
            errs = type_errors(op)
            if errs:
                raise ParseError(f"{op.kind} {op.name} is ill-typed: {errs[0]}", text, op.offset,
                                 len(op.kind), source)
        known = defined_values(masked) | {v.split("#")[0] for v in context}
        for op in mod.ops:
            at = masked.find(op.payload, op.offset) if op.kind == "linalg.generic" and op.payload else -1
            if at < 0:
                continue  # a named op's payload is built from its definition, not read
            for name, rel in _payload_free_uses(op):
                if name.split("#")[0] not in known:
                    raise ParseError(f"{op.kind} {op.name}: use of undefined value {name} (defined neither in "
                                     "the payload nor around the op)", text, at + rel, len(name), source)
    return mod


_SSA_NAME = r"%[\w$.-]+"
_DEF_LIST = re.compile(rf"(?:^|[;{{}}])[ \t]*((?:{_SSA_NAME}(?::\d+)?[ \t]*,[ \t]*)*{_SSA_NAME}(?::\d+)?)[ \t]*=",
                       re.MULTILINE)
_DEF_BOUND = re.compile(rf"(?:[(,]|\bfor)\s*({_SSA_NAME})\s*=")  # iter_args(%acc = %init), scf.for %i =
_DEF_TUPLE = re.compile(rf"\(((?:\s*{_SSA_NAME}\s*,)*\s*{_SSA_NAME}\s*)\)\s*(?:=|in\b)")  # forall (%i) in
_ARG_LIST = re.compile(r"(?:\^[\w.$-]+|@[\w.$-]+|=)\s*\(")  # ^bb0(, @f(, = ( of a region
_ARG_NAME = re.compile(rf"({_SSA_NAME})\s*:")


def defined_values(text: str) -> set[str]:
    """Every SSA name ``text`` defines (op results, ``%0:2`` as ``%0``; function,
    block and region arguments; ``iter_args(%acc = %init)``, loop variables),
    scopes ignored (an over-approximation: a use is only rejected when defined nowhere)."""
    out: set[str] = set()
    for m in _DEF_LIST.finditer(text):
        out.update(n.split(":")[0].strip() for n in m.group(1).split(","))
    out.update(m.group(1) for m in _DEF_BOUND.finditer(text))
    for m in _DEF_TUPLE.finditer(text):
        out.update(n.strip() for n in m.group(1).split(","))
    for m in _ARG_LIST.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        out.update(a.group(1) for a in _ARG_NAME.finditer(text, m.end(), i))
    return out


def _payload_free_uses(op: GenericOp) -> list[tuple[str, int]]:
    """The values ``op``'s payload uses without defining them (not its block
    arguments, not a result of one of its statements, not an argument of a nested
    block), with their offsets in ``op.payload``: what it captures from outside."""
    header = _BLOCK_RE.search(op.payload)
    start = header.end() if header is not None else 0
    local = defined_values(op.payload) | set(op.block_args)
    out = []
    for m in re.finditer(_SSA_NAME + r"(?:#\d+)?", op.payload[start:]):
        if m.group().split("#")[0] not in local:
            out.append((m.group(), start + m.start()))
    return out


def captured_values(op: GenericOp) -> set[str]:
    """The values ``op``'s payload captures from its enclosing region (the
    ``context`` a fused op built from it needs when read back alone)."""
    return {n for n, _ in _payload_free_uses(op)}


@dataclass(frozen=True)
class Region:
    """A region of the module: ``{`` at ``start``, ``}`` at ``stop``; ``owner`` the
    op it belongs to (``func.func``, ``flow.dispatch.workgroups``...), ``symbol``
    its ``@name`` if any; ``isolated``: a new namespace for SSA values (an op with
    a symbol and a body, or an op known to be isolated from above)."""

    start: int
    stop: int
    parent: int | None
    owner: str
    symbol: str
    isolated: bool
    line: int = 0


#: Ops whose regions are isolated from above without carrying a symbol.
ISOLATED_OPS = frozenset({
    "builtin.module", "module", "func.func", "util.func", "util.initializer", "flow.dispatch.workgroups",
    "iree_tensor_ext.dispatch.workgroups", "flow.executable", "stream.executable", "hal.executable",
    "hal.executable.variant", "gpu.module", "gpu.func", "llvm.func", "spirv.func", "spirv.module",
    "transform.named_sequence", "ml_program.func", "tosa.func", "shape.func",
})
_OWNER_RE = re.compile(r'^[ \t]*(?:%[\w.$-]+(?::\d+)?(?:\s*,\s*%[\w.$-]+(?::\d+)?)*\s*=\s*)?"?'
                       r'([A-Za-z_][\w$]*(?:\.[\w$]+)+|module|func)"?(?![\w.$])', re.MULTILINE)
_SYMBOL_RE = re.compile(r"@[\w.$-]+|@\"[^\"]*\"")
_SYM_NAME_RE = re.compile(r'\bsym_name\s*=\s*"([^"]*)"')  # the generic form: <{sym_name = "f", ...}>


@functools.lru_cache(maxsize=8)
def regions(text: str) -> list[Region]:
    """The regions of ``text`` (comments masked), outermost first. A ``{`` opens a
    region when the rest of its line is blank or a block label ``^bb`` follows
    (attribute dictionaries are written on one line; a region's first operation
    on the ``{`` line, ``{ linalg.yield ... }``, is not seen as a region, which
    only matters for names defined in it). Its owner is the last operation whose
    name starts a line (``%r = op``, ``op``, ``"op"``) before the ``{``; a region
    opened on a line that starts with ``}`` (``} else {``, ``}, {``) is a sibling of
    the region just closed there, with its owner."""
    out: list[Region] = []
    stack: list[int] = []
    i, n = 0, len(text)
    line = 1
    opened: list[int | None] = []  # for every "{": the region index, or None (an attribute dictionary)
    closed: dict[int, int] = {}  # depth -> the region closed last at that depth
    owners = list(_OWNER_RE.finditer(text))
    owner_starts = [m.end(1) for m in owners]
    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
        elif ch == '"':
            j = i + 1
            while j < n and text[j] != '"' and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if ch == "{":
            eol = text.find("\n", i)
            rest = text[i + 1 : n if eol < 0 else eol]
            if not rest.strip() or rest.lstrip().startswith("^"):
                owner, symbol = "", ""
                at = bisect.bisect_left(owner_starts, i) - 1
                if at >= 0:
                    last = owners[at]
                    owner = last.group(1)
                    sm = _SYMBOL_RE.search(text, last.end(), i) or _SYM_NAME_RE.search(text, last.end(), i)
                    symbol = "" if sm is None else sm.group() if sm.group().startswith("@") else "@" + sm.group(1)
                line_start = text.rfind("\n", 0, i) + 1
                sibling = closed.get(len(stack))
                if text[line_start:i].lstrip().startswith("}") and sibling is not None:
                    owner, symbol = out[sibling].owner, out[sibling].symbol
                parent = stack[-1] if stack else None
                isolated = owner in ISOLATED_OPS or bool(symbol)
                out.append(Region(i, -1, parent, owner, symbol, isolated, line))
                stack.append(len(out) - 1)
                opened.append(len(out) - 1)
            else:
                opened.append(None)
        elif ch == "}" and opened:
            idx = opened.pop()
            if idx is not None:
                out[idx] = replace(out[idx], stop=i)
                stack.pop()
                closed[len(stack)] = idx
        i += 1
    return [r if r.stop >= 0 else replace(r, stop=n) for r in out]


def scope_of(regs: Sequence[Region], offset: int) -> tuple[tuple[int, ...], str]:
    """The chain of regions (their ``start`` offsets) holding ``offset``, innermost
    first, up to and including the first isolated-from-above one (the SSA names
    visible there), and the name of that isolated region's op (``@f``, or the op
    name and the line of its region, ``flow.dispatch.workgroups at line 12``)."""
    return _scope(regs, [r.start for r in regs], offset)


def _scope(regs: Sequence[Region], starts: Sequence[int], offset: int) -> tuple[tuple[int, ...], str]:
    # The innermost region holding ``offset``: from the last region opened before it,
    # climb to the first whose span holds it (regions are in order of their start).
    k: int | None = bisect.bisect_left(starts, offset) - 1 if regs else None
    if k is not None and k < 0:
        k = None
    while k is not None and not regs[k].start < offset < regs[k].stop:
        k = regs[k].parent
    chain: list[int] = []
    name = ""
    while k is not None:
        r = regs[k]
        chain.append(r.start)
        if r.isolated:
            name = r.symbol or f"{r.owner} at line {r.line}"
            break
        k = r.parent
    return tuple(chain), name


def _parse_module(text: str, source: str, strict: bool = False) -> LinalgModule:
    regs = regions(text)
    mod = _parse_ops(text, source, strict)
    ops = []
    starts = [r.start for r in regs]
    for op in mod.ops:
        chain, name = _scope(regs, starts, op.offset)
        ops.append(replace(op, function=name, scope=chain))
    return LinalgModule(tuple(ops), mod.skipped)


def _parse_ops(text: str, source: str, strict: bool = False) -> LinalgModule:
    aliases = _aliases(text, source, strict)
    ops: list[GenericOp] = []
    skipped: list[SkippedOp] = []
    strings = [(sm.start(), sm.end()) for sm in _STRING_RE.finditer(text)]
    pos = 0
    while True:
        m = _OP_RE.search(text, pos)
        if m is None:
            break
        name = m.group(2)
        line = text.count("\n", 0, m.start()) + 1
        named = _result_names(text, m.start())
        label = named[0] if named is not None else f"{name}@{line}"
        quoted_op = bool(m.group(1)) and re.match(r'"\s*\(', text[m.end() :]) is not None
        if not quoted_op and any(a <= m.start() < b for a, b in strings):
            pos = m.end()  # a mention inside a string attribute (doc = "...", library_call = "...")
            continue
        if name in _INNER:
            pos = m.end()
            continue
        if quoted_op and name == "generic":
            op, pos = _parse_generic_form(text, m, aliases, source)
            ops.append(replace(op, end=pos))
            continue
        if quoted_op and name in _SUPPORTED_NAMED:
            op, pos = _parse_named_generic_form(text, m, aliases, source, name)
            ops.append(replace(op, end=pos))
            continue
        if name in NAMED_OPS and (quoted_op or not m.group(1)):  # convolutions, poolings, elementwise: linalg_named
            from verified_indexing.legality.linalg_named import parse_named_op

            conv, pos = parse_named_op(text, m, source, name, strict, aliases)
            ops.append(replace(conv, end=pos))
            continue
        if quoted_op:
            skipped.append(SkippedOp(f"linalg.{name}", label, line,
                                     f"the generic (quoted) form of linalg.{name} is not read (only "
                                     '"linalg.generic"); print the op in pretty form'))
            pos = m.end()
            continue
        if name == "generic":
            op, pos = _parse_generic(text, m, aliases, source)
            ops.append(replace(op, end=pos))
        elif name in _SUPPORTED_NAMED:
            op, pos = _parse_named(text, m, aliases, source, name)
            ops.append(replace(op, end=pos))
        else:
            skipped.append(SkippedOp(f"linalg.{name}", label, line,
                                     f"linalg.{name} is not modelled (its indexing maps are not read)"))
            pos = m.end()
    return LinalgModule(tuple(ops), tuple(skipped))


def parse_linalg(text: str, source: str = "<input>", *, strict: bool = False,
                 context: Iterable[str] = ()) -> list[GenericOp]:
    """Every modelled ``linalg`` op of ``text``, in order, as generics (see
    :func:`parse_linalg_module`, ``strict`` and ``context`` too); a :class:`ParseError` when there is none."""
    mod = parse_linalg_module(text, source, strict=strict, context=context)
    if not mod.ops:
        extra = "".join(f"; skipped {s.op} at line {s.line}: {s.reason}" for s in mod.skipped)
        raise ParseError(f"no linalg.generic op in the input{extra}", text, 0, 1, source)
    return list(mod.ops)


def loop_bounds(op: GenericOp) -> list[Interval]:
    """The loop ranges ``[0, size - 1]`` of ``op``, read from static operand sizes.

    As MLIR infers them: the first operand (inputs, then outputs) whose map has
    a result that is exactly ``d_k`` gives loop ``k`` that operand's size there.
    Raises :class:`MapError` when a loop's size is not given by any static
    size (dynamic shapes: the semantic checks need static shapes) or when two
    operands disagree.
    """
    sizes: list[int | None] = [None] * op.num_loops
    for o in op.operands:
        for r, s in zip(o.map.results, o.type.shape):
            if isinstance(r, Dim) and s is not None:
                if sizes[r.index] is None:
                    sizes[r.index] = s
                elif sizes[r.index] != s:
                    raise MapError(
                        f"{op.name}: loop d{r.index} has size {sizes[r.index]} from one operand and {s} from {o.value}"
                    )
    missing = [f"d{k}" for k, s in enumerate(sizes) if s is None]
    if missing:
        raise MapError(
            f"{op.name}: the size of loop(s) {', '.join(missing)} is not given by a static operand size; "
            "the semantic checks need static shapes"
        )
    return [Interval(0, s - 1) for s in sizes if s is not None]
