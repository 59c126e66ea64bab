"""Reshape propagation by expansion, checked (issue 24 item 2).

MLIR's ``linalg-fuse-elementwise-ops`` also runs ``FoldReshapeWithGenericOpByExpansion``
(and the fill/reshape patterns): a ``tensor.expand_shape`` of a linalg op's result
(or of an operand) is propagated through the op, which is rewritten over an
*expanded* iteration space -- each of its loops becomes a contiguous group of
loops whose sizes multiply to the original size -- reading expanded operands
(``tensor.expand_shape`` of the originals) and producing the expanded result
directly. The expanded op can then fuse with the op that read the reshape.

:func:`check_expanded` decides that such an op ``a`` (the pass's output) computes
``expand_shape(b)`` for the op ``b`` it replaced: it looks for the grouping of
``a``'s loops into ``b``'s (contiguous, in order, sizes multiplying, iterator
types kept) under which, at **every** point of ``a``'s (static) iteration space,

* each operand ``a`` reads is the expansion of the operand ``b`` reads there
  (the element ``a`` reads, linearized through the operand's reassociation,
  is the element ``b`` reads at the linearized iteration), and
* each output ``a`` writes, linearized through the result's reassociation, is
  the element ``b`` writes at the linearized iteration,

and the payloads are the same (block arguments and local values renamed in
order; ``linalg.index`` is not modelled). The grouping linearizes row-major, a
bijection that keeps the iteration order (a reduction accumulates in the same
order), so ``a``'s result is ``b``'s expanded: a proof by exhaustive enumeration
of the static iteration space (at most :data:`ENUMERATION_LIMIT` points; beyond
it, or with dynamic sizes, the answer is ``unknown``). Nothing here refutes: a
mismatch is ``unknown`` with the reason (the interpreter oracle of
``validate-mlir`` is what refutes).
"""

from __future__ import annotations

import itertools
import json
import re
from collections.abc import Iterator, Mapping, Sequence, Set
from dataclasses import dataclass, replace

from verified_indexing.errors import MapError, VerifiedIndexingError
from verified_indexing.legality._mlir_text import ShapedType
from verified_indexing.legality.linalg_ir import _BLOCK_RE, GenericOp, loop_bounds

__all__ = ["Expansion", "Collapse", "collapse_shapes", "reshape_facts", "expand_shape_facts", "expand_shapes",
           "check_expanded", "read_through", "ENUMERATION_LIMIT"]

ENUMERATION_LIMIT = 50_000
"""The most iteration points :func:`check_expanded` enumerates."""

_EXPAND = re.compile(
    r"^[ \t]*(%[\w$.-]+)\s*=\s*tensor\.expand_shape\s+(%[\w$.-]+)\s*(\[\[[\d,\s\[\]]*\]\])\s*"
    r"(?:output_shape\s*\[[^\]]*\])?\s*:\s*(tensor<[^>]*>)\s*into\s*(tensor<[^>]*>)", re.MULTILINE)


@dataclass(frozen=True)
class Expansion:
    """``value = tensor.expand_shape source groups``: ``value[y]`` is ``source[lin(y)]``,
    ``lin`` collapsing each group of ``value``'s dimensions row-major."""

    value: str
    source: str
    groups: tuple[tuple[int, ...], ...]
    shape: tuple[int, ...]  # the expanded shape (value's)
    source_shape: tuple[int, ...]
    offset: int = -1  # where the expand_shape is in its text

    def collapse(self, y: Sequence[int]) -> tuple[int, ...]:
        """The source element of expanded element ``y``."""
        out = []
        for g in self.groups:
            x = 0
            for d in g:
                x = x * self.shape[d] + y[d]
            out.append(x)
        return tuple(out)


@dataclass(frozen=True)
class Collapse:
    """``value = tensor.collapse_shape source groups``: ``value[y]`` is
    ``source[delin(y)]``, each of ``value``'s dimensions split row-major over its
    group of ``source``'s dimensions."""

    value: str
    source: str
    groups: tuple[tuple[int, ...], ...]
    shape: tuple[int, ...]  # the collapsed shape (value's)
    source_shape: tuple[int, ...]
    offset: int = -1


_COLLAPSE = re.compile(
    r"^[ \t]*(%[\w$.-]+)\s*=\s*tensor\.collapse_shape\s+(%[\w$.-]+)\s*(\[\[[\d,\s\[\]]*\]\])\s*:\s*"
    r"(tensor<[^>]*>)\s*into\s*(tensor<[^>]*>)", re.MULTILINE)


def collapse_shapes(text: str) -> list[Collapse]:
    """Every static ``tensor.collapse_shape`` of ``text``, in order, with its offset."""
    out: list[Collapse] = []
    for m in _COLLAPSE.finditer(text):
        try:
            groups = tuple(tuple(int(d) for d in g) for g in json.loads(m.group(3)))
            src, dst = _shape(m.group(4)), _shape(m.group(5))
        except (ValueError, TypeError, VerifiedIndexingError):
            continue
        if src is None or dst is None or len(groups) != len(dst):
            continue
        if sorted(d for g in groups for d in g) != list(range(len(src))):
            continue
        if any(_prod(src[d] for d in g) != s for g, s in zip(groups, dst)):
            continue
        out.append(Collapse(m.group(1), m.group(2), groups, dst, src, m.start(1)))
    return out


def reshape_facts(text: str) -> dict[str, Expansion | Collapse]:
    """Every static ``expand_shape`` and ``collapse_shape`` of ``text``: value -> fact."""
    out: dict[str, Expansion | Collapse] = {f.value: f for f in expand_shapes(text)}
    out.update({f.value: f for f in collapse_shapes(text)})
    return out


def _shape(t: str) -> tuple[int, ...] | None:
    from verified_indexing.legality._mlir_text import parse_type

    st = parse_type(t, 0, "<type>", t)
    dims = [d for d in st.shape if isinstance(d, int)]
    return tuple(dims) if len(dims) == len(st.shape) else None


def expand_shape_facts(text: str) -> dict[str, Expansion]:
    """Every static ``tensor.expand_shape`` of ``text``: its value -> :class:`Expansion`
    (values unique in the text, as ``iree-opt --mlir-print-unique-ssa-ids`` prints
    them; a name defined twice keeps its last definition: see :func:`expand_shapes`)."""
    return {f.value: f for f in expand_shapes(text)}


def expand_shapes(text: str) -> list[Expansion]:
    """Every static ``tensor.expand_shape`` of ``text``, in order, with its offset."""
    out: list[Expansion] = []
    for m in _EXPAND.finditer(text):
        try:
            groups = tuple(tuple(int(d) for d in g) for g in json.loads(m.group(3)))
            src, dst = _shape(m.group(4)), _shape(m.group(5))
        except (ValueError, TypeError, VerifiedIndexingError):
            continue
        if src is None or dst is None or len(groups) != len(src):
            continue
        if sorted(d for g in groups for d in g) != list(range(len(dst))):
            continue
        if any(_prod(dst[d] for d in g) != s for g, s in zip(groups, src)):
            continue
        out.append(Expansion(m.group(1), m.group(2), groups, dst, src, m.start(1)))
    return out


def _prod(xs: Iterator[int] | Sequence[int]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def _partitions(sa: Sequence[int], sb: Sequence[int], ta: Sequence[str], tb: Sequence[str]
                ) -> Iterator[tuple[tuple[int, ...], ...]]:
    """Every split of ``a``'s loops into contiguous groups, one per loop of ``b``,
    with sizes multiplying to ``b``'s and ``b``'s iterator type."""
    def rec(i: int, j: int) -> Iterator[tuple[tuple[int, ...], ...]]:
        if j == len(sb):
            if i == len(sa):
                yield ()
            return
        for end in range(i + 1, len(sa) + 1):
            g = tuple(range(i, end))
            if _prod(sa[d] for d in g) != sb[j] or any(ta[d] != tb[j] for d in g):
                continue
            for rest in rec(end, j + 1):
                yield (g, *rest)
    yield from rec(0, 0)


def _normalized_body(op: GenericOp) -> list[str] | None:
    """The payload's statements with block arguments and local values renamed in
    order (values from outside kept), ``loc(...)`` dropped; ``None`` when it uses
    ``linalg.index`` (not modelled)."""
    header = _BLOCK_RE.search(op.payload)
    body = op.payload[header.end():] if header is not None else op.payload
    if "linalg.index" in body:
        return None
    names = {b: f"%b{i}" for i, b in enumerate(op.block_args)}
    for m in re.finditer(r"(%[\w$.-]+)(?::\d+)?\s*=", body):
        names.setdefault(m.group(1), f"%l{len(names)}")
    body = re.sub(r"\s*loc\((?:[^()]|\([^()]*\))*\)", "", body)
    body = re.sub(r"%[\w$.-]+", lambda m: names.get(m.group(), m.group()), body)
    return [ln.strip() for ln in body.strip().rstrip("}").splitlines() if ln.strip()]


def check_expanded(a: GenericOp, b: GenericOp, facts: Mapping[str, Expansion],
                   undefined: Set[str] = frozenset()) -> tuple[str, str, list[Expansion]]:
    """Whether ``a`` computes ``expand_shape(b)`` (module docstring): ``("proved",
    why, the result expansions)`` or ``("unknown", why, [])``. ``facts`` gives, for a
    value ``a`` reads, the :class:`Expansion` relating it to the value ``b`` reads
    (an ``expand_shape`` in the pass's output, or an expanded op proven before);
    an operand ``a`` reads that is ``b``'s own (same value, same type) needs none.
    An output whose init is ``undefined`` (a ``tensor.empty``) on both sides, and
    read by neither payload, may be any grouping of ``a``'s result dimensions into
    ``b``'s (each tried): undefined either way where not written."""
    def no(why: str) -> tuple[str, str, list[Expansion]]:
        return "unknown", why, []

    if a.kind != b.kind or len(a.inputs) != len(b.inputs) or len(a.outputs) != len(b.outputs):
        return no(f"{a.name} is not {b.name} reshaped (other operands)")
    ba, bb = _normalized_body(a), _normalized_body(b)
    if ba is None or bb is None:
        return no("the payload uses linalg.index (its expansion is not modelled)")
    if ba != bb:
        return no(f"{a.name}'s payload is not {b.name}'s")
    try:
        sa = [iv.hi + 1 for iv in loop_bounds(a)]
        sb = [iv.hi + 1 for iv in loop_bounds(b)]
    except MapError as exc:
        return no(f"loop sizes: {exc}")
    total = _prod(sa)
    if total > ENUMERATION_LIMIT:
        return no(f"{total} iteration points: more than the {ENUMERATION_LIMIT} enumerated")
    rel: list[Expansion | None] = []
    free: list[int] = []  # outputs whose grouping is tried
    for i, (oa, ob) in enumerate(zip(a.operands, b.operands)):
        if oa.type.element != ob.type.element or oa.is_input != ob.is_input:
            return no(f"{a.name}'s operand {oa.value} ({oa.type}) is not {b.name}'s {ob.value} ({ob.type}) reshaped")
        if oa.value == ob.value and oa.type == ob.type:
            rel.append(None)
            continue
        if (not oa.is_input and oa.value in undefined and ob.value in undefined and not a.payload_uses(i)
                and not b.payload_uses(i) and oa.value not in facts):
            sa_, sb_ = _shape(str(oa.type)), _shape(str(ob.type))
            if sa_ is None or sb_ is None:
                return no(f"{oa.value}: a dynamic shape")
            free.append(i)
            rel.append(Expansion(oa.value, ob.value, (), sa_, sb_))
            continue
        f = facts.get(oa.value)
        if f is None or f.source != ob.value or f.source_shape != _shape(str(ob.type)) or f.shape != _shape(
                str(oa.type)):
            return no(f"{a.name} reads {oa.value} where {b.name} reads {ob.value}: not shown to be its expansion")
        rel.append(f)
    # the results: a's result is b's expanded through the outputs' groups (as their inits are)
    for j, oa in enumerate(a.outputs):
        if rel[len(a.inputs) + j] is None:
            return no(f"{a.name}'s output {oa.value} is {b.name}'s: not an expansion")
        if j >= len(a.results) or j >= len(b.results):
            return no("an output without a result")
    choices: list[list[Expansion]] = []
    for i in free:
        f0 = rel[i]
        assert f0 is not None
        choices.append([replace(f0, groups=g) for g in _partitions(f0.shape, f0.source_shape, ["p"] * len(f0.shape),
                                                                    ["p"] * len(f0.source_shape))])
    for chosen in itertools.product(*choices):
        rel_ = list(rel)
        for i, f in zip(free, chosen):
            rel_[i] = f
        outs = [Expansion(a.results[j], b.results[j], f.groups, f.shape, f.source_shape)
                for j, f in enumerate(rel_[len(a.inputs):]) if f is not None]
        for groups in _partitions(sa, sb, a.iterator_types, b.iterator_types):
            if _holds(a, b, rel_, groups, sa):
                shown = ", ".join(f"d{i} -> ({', '.join(f'd{d}' for d in g)})" for i, g in enumerate(groups))
                extra = (f" (the undefined init(s) {', '.join(a.operands[i].value for i in free)} grouped as the "
                         "writes require)") if free else ""
                return ("proved", f"{a.name} is {b.name} over the expanded loops ({shown}), reading and writing "
                        f"the expanded operands: its result is {b.name}'s expanded (every point of the {total}-point "
                        f"iteration space checked; same payload){extra}", outs)
    return no(f"no grouping of {a.name}'s loops into {b.name}'s makes every access the expanded one")


def _holds(a: GenericOp, b: GenericOp, rel: Sequence[Expansion | None], groups: Sequence[Sequence[int]],
           sa: Sequence[int]) -> bool:
    for e in itertools.product(*(range(s) for s in sa)):
        lin = []
        for g in groups:
            x = 0
            for d in g:
                x = x * sa[d] + e[d]
            lin.append(x)
        for oa, ob, f in zip(a.operands, b.operands, rel):
            ya = tuple(r.evaluate(e) for r in oa.map.results)
            yb = tuple(r.evaluate(lin) for r in ob.map.results)
            if (f.collapse(ya) if f is not None else ya) != yb:
                return False
    return True


def read_through(op: GenericOp, k: int, fact: Expansion | Collapse, source_type: ShapedType | None = None
                 ) -> GenericOp:
    """``op`` with operand ``k`` (which reads ``fact.value``, an ``expand_shape``)
    reading ``fact.source`` instead, through the collapsed map: ``value[y]`` is
    ``source[lin(y)]`` with ``lin`` the row-major linearization of each group, so
    the op reads the same elements (an exact rewrite)."""
    from verified_indexing.affine_map import AffineMap
    from verified_indexing.expr import AffineExpr, Const
    o = op.operands[k]
    results: list[AffineExpr] = []
    if isinstance(fact, Collapse):
        # source[delin(y)]: each collapsed index split over its group, row-major
        for j, g in enumerate(fact.groups):
            for pos, d in enumerate(g):
                stride = _prod(fact.source_shape[x] for x in g[pos + 1:])
                e: AffineExpr = o.map.results[j]
                if stride != 1:
                    e = e.floordiv(stride)
                if pos > 0:
                    e = e % fact.source_shape[d]
                results.append(e)
    else:
        for g in fact.groups:
            e = Const(0)
            for d in g:
                e = e * fact.shape[d] + o.map.results[d]
            results.append(e)
    t = source_type if source_type is not None else ShapedType(o.type.kind, fact.source_shape, o.type.element)
    new = replace(o, value=fact.source, type=t, map=AffineMap(o.map.num_dims, o.map.num_symbols, results))
    ops = list(op.operands)
    ops[k] = new
    return replace(op, inputs=tuple(ops[:len(op.inputs)]), outputs=tuple(ops[len(op.inputs):]))
