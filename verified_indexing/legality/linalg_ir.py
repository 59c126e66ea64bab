"""``linalg.generic`` ops read from MLIR text.

:func:`parse_linalg` reads every ``linalg.generic`` op of an MLIR module in the
pretty form MLIR prints::

    #map = affine_map<(d0, d1) -> (d0, d1)>
    %0 = linalg.generic {indexing_maps = [#map, affine_map<(d0, d1) -> (d1, d0)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%A : tensor<4x8xf32>) outs(%init : tensor<8x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<8x4xf32>

Accepted: ``#name = affine_map<...>`` aliases anywhere before use, inline
``affine_map<...>``, iterator types as strings or ``#linalg.iterator_type<...>``,
optional ``ins``, ``outs``, tensor and memref operand types with static or
dynamic (``?``) sizes, the payload region kept as text with its block
arguments, ``-> type`` results. Promises: the op's maps, iterator types,
operands, types and payload as written; an inconsistent op (map count, dims
versus iterator count, results versus operand rank, block argument count) or
malformed text raises a positioned :class:`ParseError`. Nothing else of the
module is interpreted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from verified_indexing.affine_map import AffineMap
from verified_indexing.errors import MapError, ParseError
from verified_indexing.expr import Dim
from verified_indexing.interval import Interval
from verified_indexing.legality._mlir_text import Cursor, ShapedType, parse_affine_span, parse_type

__all__ = ["Operand", "GenericOp", "parse_linalg", "loop_bounds"]

_ALIAS_RE = re.compile(r"^[ \t]*#([\w.$-]+)[ \t]*=[ \t]*(?=affine_map\s*<)", re.MULTILINE)
_GENERIC_RE = re.compile(r"linalg\.generic\b")
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
        return all(o.type.kind == "tensor" for o in self.operands)

    def payload_uses(self, operand_index: int) -> bool:
        """True when the payload mentions the block argument of that operand."""
        if operand_index >= len(self.block_args):
            return True
        name = self.block_args[operand_index]
        header = _BLOCK_RE.search(self.payload)
        body = self.payload[header.end() :] if header is not None else self.payload
        return re.search(re.escape(name) + r"(?![\w.$-])", body) is not None


def _aliases(text: str, source: str) -> dict[str, AffineMap]:
    out: dict[str, AffineMap] = {}
    for m in _ALIAS_RE.finditer(text):
        cur = Cursor(text, m.end(), source)
        start = cur.pos
        cur.expect("affine_map")
        cur.balanced("<", ">")
        out[m.group(1)] = parse_affine_span(text, start, cur.pos, source)
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


def _operands(cur: Cursor, keyword: str) -> list[tuple[str, ShapedType, int]]:
    if not cur.at(keyword + "("):
        return []
    cur.expect(keyword)
    start, stop = cur.balanced("(", ")")
    inner = cur.text[start:stop]
    if not inner.strip():
        return []
    colon = inner.find(":")
    if colon < 0:
        raise cur.error(f"expected ':' and the operand types in {keyword}(...)", start, max(1, len(inner)))
    values = [(m.group(), start + m.start()) for m in _VALUE_RE.finditer(inner[:colon])]
    type_spans = cur.split_top(start + colon + 1, stop)
    if len(values) != len(type_spans):
        raise cur.error(f"{keyword}: {len(values)} operands but {len(type_spans)} types", start, max(1, len(inner)))
    out = []
    for (v, pos), (ts, te) in zip(values, type_spans):
        out.append((v, parse_type(cur.text[ts:te], ts, cur.source, cur.text), pos))
    return out


def _parse_one(text: str, match: re.Match[str], aliases: dict[str, AffineMap], source: str) -> GenericOp:
    line_start = text.rfind("\n", 0, match.start()) + 1
    before = text[line_start : match.start()]
    rm = _RESULT_RE.search(before)
    line = text.count("\n", 0, match.start()) + 1
    cur = Cursor(text, match.end(), source)
    a_start, a_stop = cur.balanced("{", "}")
    attrs = text[a_start:a_stop]
    im = re.search(r"indexing_maps\s*=\s*\[", attrs)
    if im is None:
        raise cur.error("linalg.generic needs an 'indexing_maps' attribute", match.start(), len(match.group()))
    mc = Cursor(text, a_start + im.end() - 1, source)
    ms, me = mc.balanced("[", "]")
    maps = _map_list(mc, ms, me, aliases)
    it = re.search(r"iterator_types\s*=\s*\[([^\]]*)\]", attrs)
    if it is None:
        raise cur.error("linalg.generic needs an 'iterator_types' attribute", match.start(), len(match.group()))
    iters: list[str] = []
    for s, e in Cursor(text, 0, source).split_top(a_start + it.start(1), a_start + it.end(1)):
        item = text[s:e].strip()
        m = _ITER_RE.fullmatch(item)
        if m is None or (m.group(1) or m.group(2)) not in ("parallel", "reduction", "window"):
            raise cur.error(f"unknown iterator type {item!r}", s, max(1, e - s))
        iters.append(m.group(1) or m.group(2))
    ins = _operands(cur, "ins")
    outs = _operands(cur, "outs")
    if cur.at("attrs"):
        cur.expect("attrs")
        cur.expect("=")
        cur.balanced("{", "}")
    p_start, p_stop = cur.balanced("{", "}")
    payload = text[p_start:p_stop].strip("\n")
    result_types: list[ShapedType] = []
    if cur.accept("->"):
        cur.skip_ws()
        if cur.at("("):
            rs, re_ = cur.balanced("(", ")")
            spans = cur.split_top(rs, re_)
        else:
            t0 = cur.pos
            cur.regex(re.compile(r"(tensor|memref)<[^<>]*>"), "a result type")
            spans = [(t0, cur.pos)]
        result_types = [parse_type(text[s:e], s, source, text) for s, e in spans]
    n_ops = len(ins) + len(outs)
    where = match.start()
    if len(maps) != n_ops:
        raise ParseError(
            f"linalg.generic has {n_ops} operands but {len(maps)} indexing maps",
            text, where, len(match.group()), source,
        )
    for k, (mp, (v, ty, pos)) in enumerate(zip(maps, ins + outs)):
        if mp.num_dims != len(iters):
            raise ParseError(
                f"indexing map #{k} has {mp.num_dims} dims but the op has {len(iters)} iterators",
                text, where, len(match.group()), source,
            )
        if mp.num_results != ty.rank:
            raise ParseError(
                f"indexing map #{k} has {mp.num_results} results but operand {v} has rank {ty.rank}",
                text, pos, len(v), source,
            )
        if mp.num_symbols:
            raise ParseError(f"indexing map #{k} has symbols (not supported)", text, where, len(match.group()), source)
    bm = _BLOCK_RE.search(payload)
    block_args: list[str] = []
    if bm is not None:
        block_args = [a.split(":")[0].strip() for a in bm.group(1).split(",") if a.strip()]
        if len(block_args) != n_ops:
            raise ParseError(
                f"the payload block has {len(block_args)} arguments for {n_ops} operands",
                text, p_start + bm.start(), len(bm.group()), source,
            )
    if rm is not None:
        base = rm.group(1)
        count = int(rm.group(2)) if rm.group(2) else 1
        results = (base,) if count == 1 else tuple(f"{base}#{i}" for i in range(count))
        name = base
    else:
        results = ()
        name = f"generic@{line}"
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
        offset=match.start(),
    )


def parse_linalg(text: str, source: str = "<input>") -> list[GenericOp]:
    """Every ``linalg.generic`` op of ``text``, in order (see the module docstring)."""
    aliases = _aliases(text, source)
    ops = [_parse_one(text, m, aliases, source) for m in _GENERIC_RE.finditer(text)]
    if not ops:
        raise ParseError("no linalg.generic op in the input", text, 0, 1, source)
    return ops


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
