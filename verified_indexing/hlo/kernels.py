"""Translation validation of XLA's emitted kernels (the index arithmetic).

XLA's fusion emitters write each kernel as MLIR before lowering it
(``--xla_dump_to=DIR --xla_dump_emitter_re=.*``; XLA:CPU through jaxlib writes
``*_kernel_module-pre-optimization.mlir``): an ``xla.loop`` over an
``#xla.indexing_map`` gives the output element each iteration writes, the
iteration calls the fused computation's function with those indices, and the
functions compute operand indices (``xla.apply_indexing``, ``arith`` on
``index``, ``scf.for`` loops, ``scf.if`` on index comparisons) and read
operands with ``tensor.extract``.

:func:`kernel_reads` interprets that index arithmetic symbolically (every index
an affine expression, ``min``/``max`` included, of the loop's variables and the
``scf.for`` variables; every ``scf.if`` condition a conjunction of affine
comparisons, the ``else`` branch one case per negated comparison) and gives,
per kernel argument, the exact relation *output element -> operand element
read*. After XLA's passes (``*-post-optimization.mlir``) the buffers are
flattened and the loops are ``scf.for``: each read is attributed to the element
the same iteration writes next (a read hoisted out of a loop to every write of
that loop), and the proven maps are compared between linear indices (each
shape's layout). :func:`audit_kernel` compares it (isl) with the proven maps of the
analysis of the same fusion: ``proved`` (the same relation), ``refuted`` (an
output element and an operand element one side reads and the other does not),
or ``unknown`` with the reason (an index it cannot state, an op it does not
know, an over-approximating map of ours without exact reads). Integers read from
the kernel's arguments (dynamic offsets, a gather's indices at the output row)
are runtime values on both sides, the analysis' evaluated from the parameters'
values through the fused computation.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
import time
from dataclasses import dataclass, field
from typing import Any

from verified_indexing._timing import show_timing
from verified_indexing.errors import ParseError, VerifiedIndexingError
from verified_indexing.expr import AffineExpr, Const, Dim, emax, emin
from verified_indexing.indexing_map import IndexingMap, Variable
from verified_indexing.interval import Interval, range_of
from verified_indexing.syntax import parse_indexing_map

__all__ = ["KernelRead", "KernelResult", "kernel_reads", "audit_kernel", "audit_dump", "format_kernel_results"]


class _Unknown(Exception):
    """The kernel computes an index the interpreter cannot state (the reason)."""


@dataclass
class KernelRead:
    """One ``tensor.extract`` of kernel argument ``arg``: under ``constraints`` on
    the variables (``bounds``), output element ``output`` reads element ``index``."""

    arg: int
    output: list[AffineExpr]
    index: list[AffineExpr]
    constraints: list[tuple[AffineExpr, Interval]]
    pending: bool = False  # (after XLA's passes) not yet attributed to the element written
    used: bool = False  # (after XLA's passes) attributed to at least one write
    attributed: bool = False  # (after XLA's passes) a copy attributed to one write
    #: (after XLA's passes) an integer read of an index array whose value is a runtime value: when the read
    #: is attributed to a write, (its index, the linear index written, its constraints) go to ``_State.raw_post``
    raw_key: bool = False


@dataclass
class KernelResult:
    kernel: str
    file: str
    status: str  # proved | refuted | unknown
    reason: str = ""
    witness: list[str] = field(default_factory=list)
    seconds: float = 0.0
    params: int = 0

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        return {"kernel": self.kernel, "file": self.file, "status": self.status, "reason": self.reason,
                "witness": self.witness, "seconds": self.seconds, "parameters": self.params}


# -- reading the MLIR (the subset the emitters write) -----------------------------------------------

_FUNC_RE = re.compile(
    r"^\s*(?:func\.func|xtile\.entry_func)\s+(?:private\s+)?@\"?([\w.$\-]+)\"?\((.*)\)\s*(?:->\s*(.*?))?\s*(?:attributes\s*\{(.*)\})?\s*\{\s*$"
)
_ASSIGN_RE = re.compile(r"^\s*((?:%[\w.$\-]+(?::\d+)?\s*,\s*)*%[\w.$\-]+(?::\d+)?)\s*=\s*(.*)$")
_MAP_RE = re.compile(r'#xla\.indexing_map<"(.*?)">')


@dataclass
class _Func:
    name: str
    args: list[tuple[str, str]]  # (name, type)
    body: list[str]
    entry: bool
    #: XLA:CPU's tiled emitter (``xtile.entry_func``): the number of tiles (its last argument, the tile id, ranges
    #: over them); None for a ``func.func``.
    tiles: int | None = None


def _split_args(text: str) -> list[tuple[str, str]]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch in "<({[":
            depth += 1
        elif ch in ">)}]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur)
    args = []
    for a in out:
        m = re.match(r"\s*(%[\w.$\-]+)\s*:\s*([^{]*)", a)
        if m:
            args.append((m.group(1), m.group(2).strip()))
    return args


def _functions(text: str) -> dict[str, _Func]:
    lines = text.splitlines()
    funcs: dict[str, _Func] = {}
    i = 0
    while i < len(lines):
        m = _FUNC_RE.match(lines[i])
        if not m:
            i += 1
            continue
        depth, j = 1, i + 1
        body = []
        while j < len(lines) and depth > 0:
            ln = lines[j]
            depth += ln.count("{") - ln.count("}") - _braces_in_strings(ln)
            if depth > 0:
                body.append(ln)
            j += 1
        tm = re.search(r"tile_count\s*:\s*(\d+)", lines[i])
        xtile = "xtile.entry_func" in lines[i]
        funcs[m.group(1)] = _Func(m.group(1), _split_args(m.group(2)), body, xtile or "xla.entry" in (m.group(4) or ""),
                                  int(tm.group(1)) if xtile and tm else None)
        i = j
    return funcs


def _braces_in_strings(line: str) -> int:
    """Net ``{`` minus ``}`` inside quoted strings (indexing maps hold none, but be safe)."""
    net = 0
    for s in re.findall(r'"(?:[^"\\]|\\.)*"', line):
        net += s.count("{") - s.count("}")
    return net


# -- the symbolic interpreter -------------------------------------------------------------------------


@dataclass
class _State:
    bounds: list[Interval]  # the variables (Dim i)
    reads: list[KernelRead]
    output: list[AffineExpr]
    funcs: dict[str, _Func]
    depth: int = 0
    #: A kernel after XLA's passes (no xla.loop; scf.for loops writing linear indices): each read is
    #: attributed to the element the same loop iteration writes next (``mark``: the first read of it).
    post: bool = False
    mark: int = 0
    #: Integer scalars read from kernel arguments (dynamic offsets): (argument, bits) -> the variable
    #: holding the value read (a runtime value, an input of the relation like the output element).
    raw: dict[int, tuple[int, int]] = field(default_factory=dict)
    #: For an integer array read element by element (a gather's indices): the element, as expressions
    #: of the output element's coordinates (``Dim(i)``: coordinate i), one element per argument.
    raw_at: dict[int, tuple[AffineExpr, ...]] = field(default_factory=dict)
    #: After XLA's passes, an integer array read element by element: per argument, every (element read, linear
    #: output index written, constraints) over the loops' variables; :func:`audit_kernel` states the element
    #: as expressions of the output element's coordinates (through the output shape's layout, with isl).
    raw_post: dict[int, list[tuple[list[AffineExpr], list[AffineExpr], list[tuple[AffineExpr, Interval]]]]] = \
        field(default_factory=dict)


def _index_value(env: dict[str, Any], name: str) -> AffineExpr:
    v = env.get(name)
    if isinstance(v, AffineExpr):
        return v
    raise _Unknown(f"the index {name} is not an affine function of the loop variables ({_describe(v)})")


def _describe(v: Any) -> str:
    if isinstance(v, tuple) and v and v[0] == "unknown":
        return str(v[1])
    return "not computed from indices"


def _apply_map(text: str, dims: list[AffineExpr], syms: list[AffineExpr]) -> list[AffineExpr]:
    m = parse_indexing_map(text)
    if m.num_dims != len(dims) or m.num_range_vars != len(syms) or m.num_rt_vars:
        raise _Unknown(f"an indexing map with other variables than its operands: {text}")
    return [r.substitute(dims=dims, syms=syms) for r in m.results]


_CMP = {"slt": (None, -1), "sle": (None, 0), "sgt": (1, None), "sge": (0, None), "eq": (0, 0)}
_BIG = 1 << 40


def _interval(lo: int | None, hi: int | None) -> Interval:
    return Interval(-_BIG if lo is None else lo, _BIG if hi is None else hi)


def _negate(c: tuple[AffineExpr, Interval]) -> list[tuple[AffineExpr, Interval]]:
    """The cases of ``not (e in [lo, hi])``."""
    e, iv = c
    out = []
    if iv.lo > -_BIG:
        out.append((e, Interval(-_BIG, iv.lo - 1)))
    if iv.hi < _BIG:
        out.append((e, Interval(iv.hi + 1, _BIG)))
    return out


def _region(lines: list[str], start: int) -> tuple[list[str], int]:
    """The lines of the region opened at line ``start`` (which ends with ``{``), and
    the index of its closing line."""
    depth, j = 1, start + 1
    while j < len(lines):
        depth += lines[j].count("{") - lines[j].count("}") - _braces_in_strings(lines[j])
        if depth <= 0 or (depth == 1 and re.match(r"^\s*\}\s*else\s*\{\s*$", lines[j])):
            return lines[start + 1: j], j
        j += 1
    raise _Unknown("an unclosed region")


def _run(st: _State, lines: list[str], env: dict[str, Any], cons: list[tuple[AffineExpr, Interval]]) -> None:
    i = 0
    while i < len(lines):
        ln = lines[i].strip()
        i += 1
        if not ln or ln.startswith("//") or ln == "}":
            continue
        m = _ASSIGN_RE.match(ln)
        names = [n.strip().split(":")[0] for n in m.group(1).split(",")] if m else []
        op = m.group(2) if m else ln
        head = op.split()[0] if op.split() else ""
        if head in ("scf.if",):
            cond = env.get(op.split()[1].rstrip(","))
            then_lines, end = _region(lines, i - 1)
            else_lines: list[str] = []
            if re.match(r"^\s*\}\s*else\s*\{\s*$", lines[end]):
                else_lines, end = _region(lines, end)
            i = end + 1
            if isinstance(cond, list) and all(isinstance(e, Const) for e, _ in cond):
                # a condition on constants (the emitters test which operand of a concatenation holds an index):
                # the branch taken runs in place, its scf.yield binding the if's results
                taken = then_lines if all(iv.lo <= e.evaluate() <= iv.hi for e, iv in cond) else else_lines
                inline: list[str] = []
                for ln2 in taken:
                    ym = re.match(r"^\s*scf\.yield\s*(.*?)\s*(?::.*)?$", ln2)
                    if ym is not None and ln2.startswith(taken[0][: len(taken[0]) - len(taken[0].lstrip())]):
                        values = [x.strip() for x in ym.group(1).split(",") if x.strip()]
                        inline += [f"{n} = __alias {v}" for n, v in zip(names, values)]
                    else:
                        inline.append(ln2)
                lines = inline + lines[i:]
                i = 0
                continue
            if not isinstance(cond, list):
                raise _Unknown("an scf.if on a condition that is not a comparison of indices")
            _run(st, then_lines, dict(env), cons + cond)
            if else_lines:
                if not cond:
                    continue
                for k, c in enumerate(cond):  # not (c0 and c1 ...): c0 and ... and not ck
                    for neg in _negate(c):
                        _run(st, else_lines, dict(env), cons + cond[:k] + [neg])
            for n in names:
                env[n] = ("unknown", "the value of an scf.if")
            continue
        if head == "scf.for":
            fm = re.match(r"scf\.for\s+(%[\w.$\-]+)\s*=\s*(%[\w.$\-]+)\s+to\s+(%[\w.$\-]+)\s+step\s+(%[\w.$\-]+)", op)
            if fm is None:
                raise _Unknown(f"an scf.for the interpreter does not read: {ln}")
            lo, hi, step = (_index_value(env, fm.group(k)) for k in (2, 3, 4))
            if not all(isinstance(x, Const) for x in (lo, hi, step)) or step.evaluate() <= 0:
                raise _Unknown("an scf.for with bounds that are not constants")
            n = -(-(hi.evaluate() - lo.evaluate()) // step.evaluate())
            body, end = _region(lines, i - 1)
            i = end + 1
            if n <= 0:
                continue
            v = len(st.bounds)
            st.bounds.append(Interval(0, n - 1))
            inner = dict(env)
            inner[fm.group(1)] = lo + Dim(v) * step.evaluate()
            for it in re.findall(r"(%[\w.$\-]+)\s*=\s*%", op.split("iter_args", 1)[1]) if "iter_args" in op else []:
                inner[it] = ("unknown", "a loop-carried value")
            saved, st.mark = st.mark, len(st.reads)
            _run(st, body, inner, cons)
            for rd in st.reads[st.mark:]:
                if rd.pending and rd.used:  # hoisted into this loop's iterations: consumed by its writes
                    rd.pending = False
            st.mark = saved
            for nm in names:
                env[nm] = ("unknown", "the value of an scf.for")
            continue
        if op.rstrip().endswith("{"):  # any other op with a region: not followed
            raise _Unknown(f"an op with a region the interpreter does not know: {head}")
        if head == "arith.select":
            sm = re.match(r"arith\.select\s+(%[\w.$\-]+)\s*,\s*(%[\w.$\-]+)\s*,\s*(%[\w.$\-]+)", op)
            if sm is not None:
                c, a, b = (env.get(sm.group(k)) for k in (1, 2, 3))
                if isinstance(c, list) and isinstance(a, AffineExpr) and isinstance(b, AffineExpr):
                    # a select on a comparison of indices or runtime values: the rest of this region runs
                    # once per case (the condition, or one negated comparison of it)
                    rest = lines[i:]
                    cases = [(c, a)] + [([*c[:k], neg], b) for k, cc in enumerate(c) for neg in _negate(cc)]
                    for more, value in cases:
                        branch = dict(env)
                        branch[names[0]] = value
                        _run(st, rest, branch, cons + more)
                    return
        _op(st, names, op, head, env, cons)


def _op(st: _State, names: list[str], op: str, head: str, env: dict[str, Any],
        cons: list[tuple[AffineExpr, Interval]]) -> None:
    def operands() -> list[str]:
        return re.findall(r"%[\w.$\-]+", op.split(":")[0])

    if head == "__alias":  # a result of an scf.if on constants: the value its branch yields
        env[names[0]] = env.get(operands()[0], ("unknown", "a value the branch does not define"))
        return
    if head == "arith.constant":
        cm = re.match(r"arith\.constant\s+(-?\d+|true|false)\s*(?::\s*(\S+))?", op)
        if cm is None:
            env[names[0]] = ("data",)
        elif cm.group(1) in ("true", "false"):
            env[names[0]] = [] if cm.group(1) == "true" else [(Const(0), Interval(1, 1))]
        else:
            env[names[0]] = Const(int(cm.group(1)))
        return
    if head in ("arith.addi", "arith.subi", "arith.muli", "arith.minsi", "arith.maxsi", "arith.minui",
                "arith.maxui", "arith.floordivsi", "arith.divui", "arith.remui"):
        a, b = (env.get(x) for x in operands()[:2])
        if not isinstance(a, AffineExpr) or not isinstance(b, AffineExpr):
            env[names[0]] = ("unknown", f"{head} of a value that is not an index of the loops")
            return
        unsigned = head in ("arith.minui", "arith.maxui", "arith.divui", "arith.remui")
        if unsigned and min(range_of(x, st.bounds, [], []).lo for x in (a, b)) < 0:
            env[names[0]] = ("unknown", f"{head} of a value that may be negative")
            return
        if head == "arith.addi":
            r = a + b
        elif head == "arith.subi":
            r = a - b
        elif head == "arith.muli":
            if not isinstance(a, Const) and not isinstance(b, Const):
                env[names[0]] = ("unknown", "a product of two indices")
                return
            r = a * b
        elif head in ("arith.minsi", "arith.minui"):
            r = emin(a, b)
        elif head in ("arith.maxsi", "arith.maxui"):
            r = emax(a, b)
        else:
            if not isinstance(b, Const) or b.value <= 0:
                env[names[0]] = ("unknown", f"{head} by a value that is not a positive constant")
                return
            r = a.floordiv(b.value) if head != "arith.remui" else a % b.value
        env[names[0]] = r
        return
    if head == "arith.cmpi":
        cm = re.match(r"arith\.cmpi\s+(\w+)\s*,\s*(%[\w.$\-]+)\s*,\s*(%[\w.$\-]+)", op)
        if cm is None or cm.group(1) not in (*_CMP, "ult", "ule"):
            env[names[0]] = ("unknown", "a comparison the interpreter does not read")
            return
        a, b = env.get(cm.group(2)), env.get(cm.group(3))
        if not isinstance(a, AffineExpr) or not isinstance(b, AffineExpr):
            env[names[0]] = ("unknown", "a comparison of values that are not indices")
            return
        if cm.group(1) in ("ult", "ule") and isinstance(b, Const) and b.value >= 0:
            # unsigned: a negative index is a huge number, so ``a ult c`` is ``0 <= a < c``
            env[names[0]] = [(a, Interval(0, b.value - (1 if cm.group(1) == "ult" else 0)))]
            return
        lo, hi = _CMP[cm.group(1)]
        env[names[0]] = [(a - b, _interval(lo, hi))]
        return
    if head == "arith.andi":
        a, b = (env.get(x) for x in operands()[:2])
        env[names[0]] = a + b if isinstance(a, list) and isinstance(b, list) else ("unknown", "a condition on data")
        return
    if head == "xla.apply_indexing":
        mm = _MAP_RE.search(op)
        if mm is None:
            raise _Unknown("an xla.apply_indexing without its map")
        rest = op[mm.end():]
        dm = re.match(r"\s*\(([^)]*)\)\s*(?:\[([^\]]*)\])?", rest)
        dims = [_index_value(env, x.strip()) for x in (dm.group(1) if dm else "").split(",") if x.strip()]
        syms = [_index_value(env, x.strip()) for x in ((dm.group(2) or "") if dm else "").split(",") if x.strip()]
        for n, r in zip(names, _apply_map(mm.group(1), dims, syms)):
            env[n] = r
        return
    if head == "tensor.extract":
        tm = re.match(r"tensor\.extract\s+(%[\w.$\-]+)\s*\[([^\]]*)\]", op)
        if tm is None:
            raise _Unknown(f"a tensor.extract the interpreter does not read: {op}")
        tensor = env.get(tm.group(1))
        if not (isinstance(tensor, tuple) and tensor and tensor[0] == "arg"):
            raise _Unknown(f"a tensor.extract from {tm.group(1)}, not a kernel argument")
        idx = [_index_value(env, x.strip()) for x in tm.group(2).split(",") if x.strip()]
        st.reads.append(KernelRead(tensor[1], list(st.output), idx, list(cons), pending=st.post))
        env[names[0]] = ("data", tensor[1], idx)
        tym = re.search(r":\s*tensor<(?:[\dx]*x)?([iu])(\d+)>\s*$", op)
        at = _in_output_coordinates(st, idx) if idx and tym is not None and not st.post else None
        if tym is not None and (not idx or at is not None):
            # an integer read: a runtime value, one variable per argument (a scalar, or the element of an
            # index array that the output element's coordinates give)
            key = at if at is not None else ()
            box = [st.bounds[e.index] for e in st.output if isinstance(e, Dim)]
            if not _same_element(st.raw_at.setdefault(tensor[1], key), key, box if len(box) == len(st.output) else []):
                raise _Unknown(f"two elements of the index array {tm.group(1)} read for one output element")
        post_key = st.post and tym is not None and bool(idx)
        if post_key:  # after XLA's passes: the element read is stated against the output when it is written
            st.reads[-1].raw_key = True
        if tym is not None and (not idx or at is not None or post_key):
            if tensor[1] not in st.raw:
                bits = int(tym.group(2))
                lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if tym.group(1) == "i" else (0, (1 << bits) - 1)
                st.bounds.append(Interval(lo, hi))
                st.raw[tensor[1]] = (len(st.bounds) - 1, bits)
            env[names[0]] = Dim(st.raw[tensor[1]][0])
        return
    if head == "tensor.insert":  # the element the iteration writes must be the loop's
        im = re.match(r"tensor\.insert\s+%[\w.$\-#\d]+\s+into\s+%[\w.$\-]+\s*\[([^\]]*)\]", op)
        written: list[Any] = [env.get(x.strip()) for x in (im.group(1).split(",") if im else []) if x.strip()]
        if st.post and im is not None:
            if not all(isinstance(w, AffineExpr) for w in written):
                raise _Unknown(f"a tensor.insert at an index that is not affine: {op}")
            # the reads of this iteration (since ``mark``) are this write's, consumed; reads of an enclosing
            # iteration (hoisted out of this loop) are every write's of this loop, kept pending
            for k, rd in enumerate(list(st.reads)):
                if rd.pending:
                    st.reads.append(KernelRead(rd.arg, list(written), rd.index, rd.constraints, attributed=True))
                    if rd.raw_key:
                        st.raw_post.setdefault(rd.arg, []).append((rd.index, list(written), rd.constraints))
                    rd.used = True
                    if k >= st.mark:
                        rd.pending = False
            for n in names:
                env[n] = ("data",)
            return
        if im is None or written != st.output:
            raise _Unknown(f"a tensor.insert at an element other than the loop's output element: {op}")
        for n in names:
            env[n] = ("data",)
        return
    if head in ("xla.pure_call", "func.call"):
        cm = re.match(r"(?:xla\.pure_call|func\.call)\s+@\"?([\w.$\-]+)\"?\(([^)]*)\)", op)
        if cm is None or cm.group(1) not in st.funcs:
            raise _Unknown(f"a call the interpreter cannot follow: {op}")
        f = st.funcs[cm.group(1)]
        args = [x.strip() for x in cm.group(2).split(",") if x.strip()]
        if len(args) != len(f.args) or st.depth > 50:
            raise _Unknown(f"a call of {f.name} with {len(args)} arguments for {len(f.args)} parameters")
        inner: dict[str, Any] = {}
        for (pname, _), a in zip(f.args, args):
            inner[pname] = env.get(a, ("unknown", f"{a} is not defined"))
        st.depth += 1
        _run(st, f.body, inner, cons)
        st.depth -= 1
        for n in names:
            env[n] = ("data",)
        return
    if head in ("arith.trunci", "arith.extsi", "arith.extui") and isinstance(env.get(operands()[0]), AffineExpr):
        # an integer index changing width: the same value where it fits the narrower type (signed; extui of a
        # value that cannot be negative)
        src_e = env[operands()[0]]
        bm = re.search(r"to\s+i(\d+)\s*$", op) if head == "arith.trunci" else re.search(r":\s*i(\d+)\s+to", op)
        iv = range_of(src_e, st.bounds, [], [])
        bits = int(bm.group(1)) if bm else 0
        fits = bits > 1 and -(1 << (bits - 1)) <= iv.lo and iv.hi < (1 << (bits - 1))
        if fits and (head != "arith.extui" or iv.lo >= 0):
            env[names[0]] = src_e
        else:
            env[names[0]] = ("unknown", f"{head} of an index that may not fit")
        return
    if head in ("arith.index_cast", "arith.index_castui"):
        src = env.get(operands()[0])
        if head == "arith.index_castui" and isinstance(src, AffineExpr) and range_of(src, st.bounds, [], []).lo < 0:
            env[names[0]] = ("unknown", "an unsigned cast of an index that may be negative")
            return
        env[names[0]] = src if isinstance(src, AffineExpr) else ("unknown", "an index computed from data (a dynamic "
                                                                  "offset)")
        return
    if names and any(isinstance(env.get(x), tuple) and env[x] and env[x][0] == "arg" for x in operands()):
        # a kernel argument used by an op the interpreter does not read (not a tensor.extract): its reads would be
        # missed, so the kernel is not stated
        raise _Unknown(f"{head} of a kernel argument, an op the interpreter does not read")
    for n in names:
        env[n] = ("unknown", f"the result of {head}")


# -- the kernel ---------------------------------------------------------------------------------------


#: The runtime values of the last :func:`kernel_reads` (argument -> (variable, bits)), for its caller.
_LAST_RAW: dict[int, tuple[int, int]] = {}
_LAST_RAW_AT: dict[int, tuple[AffineExpr, ...]] = {}
_LAST_RAW_POST: dict[int, list[tuple[list[AffineExpr], list[AffineExpr], list[tuple[AffineExpr, Interval]]]]] = {}


def kernel_reads(text: str, source: str = "<kernel>") -> tuple[str, list[tuple[str, str]], list[Interval],
                                                                list[KernelRead], int]:
    """(the entry function's name, its arguments, the variables' bounds, every read,
    the output's rank) of a kernel module. Raises :class:`VerifiedIndexingError`
    when the text holds no entry function, ``_Unknown`` (caught by
    :func:`audit_kernel`) for index arithmetic it cannot state."""
    funcs = _functions(text)
    entries = [f for f in funcs.values() if f.entry]
    if len(entries) != 1:
        raise _Unknown(f"expected one entry function (xla.entry), found {len(entries)}")
    entry = entries[0]
    st = _State([], [], [], funcs)
    _LAST_RAW.clear()
    _LAST_RAW_AT.clear()
    _LAST_RAW_POST.clear()
    st.raw, st.raw_at, st.raw_post = _LAST_RAW, _LAST_RAW_AT, _LAST_RAW_POST
    env: dict[str, Any] = {name: ("arg", k) for k, (name, _) in enumerate(entry.args)}
    lines = entry.body
    if entry.tiles is not None or "xtile.entry_func" in text:
        return _xtile(st, entry, env)
    loops = [k for k, ln in enumerate(lines) if "xla.loop" in ln]
    if not loops:  # after XLA's passes: scf.for loops over linear (flattened) buffers
        st.post = True
        _run(st, lines, env, [])
        if any(r.pending and not r.used for r in st.reads):
            raise _Unknown("a read that no write of the same loop iteration follows")
        return entry.name, entry.args, st.bounds, [r for r in st.reads if r.attributed], 1
    for ln in lines[: loops[0]]:
        wm = re.match(r"\s*(%[\w.$\-]+)\s*=\s*xla\.workgroup_id\s+\w+\s*\{xla\.range\s*=\s*\[(-?\d+)\s*:\s*index\s*,\s*"
                      r"(-?\d+)\s*:\s*index\]\}", ln)
        if wm:
            st.bounds.append(Interval(int(wm.group(2)), int(wm.group(3))))
            env[wm.group(1)] = Dim(len(st.bounds) - 1)
        fm = re.match(r"\s*%[\w.$\-]+(?::\d+)?\s*=\s*scf\.forall\s*\(([^)]*)\)\s*in\s*\(([^)]*)\)\s*shared_outs\("
                      r"(%[\w.$\-]+)\s*=", ln)
        if fm:
            for v, n in zip(fm.group(1).split(","), fm.group(2).split(",")):
                st.bounds.append(Interval(0, int(n) - 1))
                env[v.strip()] = Dim(len(st.bounds) - 1)
            shared = re.findall(r"shared_outs\((%[\w.$\-]+)\s*=\s*(%[\w.$\-]+)\)", ln)
            for a, b in shared:
                env[a] = env.get(b)
    rank = 0
    for at in loops:
        rank = _loop(st, lines, at, dict(env))
    return entry.name, entry.args, st.bounds, st.reads, rank


_Tile = tuple[tuple[int, ...], list[tuple[int, Any]]]  # (shape, [(argument, tile element -> (index, constraints))])
_DIMS_RE = r"(?:memref|tensor)<((?:\d+x)*)[a-z]\w*>"


#: StableHLO ops on tiles that the tiled emitter writes element by element (element t of each operand).
_STABLEHLO_ELEMENTWISE = frozenset("stablehlo." + n for n in (
    "abs add and atan2 cbrt ceil clamp compare complex convert cosine count_leading_zeros divide exponential "
    "exponential_minus_one floor imag is_finite log log_plus_one logistic maximum minimum multiply negate not or "
    "popcnt power real remainder round_nearest_afz round_nearest_even rsqrt select shift_left "
    "shift_right_arithmetic shift_right_logical sign sine sqrt subtract tan tanh xor bitcast_convert").split())


def _ints(text: str) -> list[int]:
    return [int(x) for x in re.findall(r"-?\d+", text)]


def _xtile(st: _State, entry: _Func, env: dict[str, Any]) -> tuple[str, list[tuple[str, str]], list[Interval],
                                                                    list[KernelRead], int]:
    """A kernel of XLA:CPU's tiled emitter (``xtile.entry_func``; its last argument the
    tile id, in ``[0, tile_count - 1]``): ``xtile.extract`` of a tile of an argument
    (offsets, static sizes and strides; only the elements inside the argument are
    read), elementwise ``math``/``arith`` ops on tiles (element t of each operand),
    ``stablehlo.transpose`` (a permutation of the tile element), constant tiles, and
    ``xtile.insert`` (tile element t writes offset + t * stride, where inside the
    output). Anything else on a tile is unknown, named."""
    if entry.tiles is None or not entry.args or entry.args[-1][1] != "index":
        raise _Unknown("an xtile.entry_func without its tile count or tile id")
    st.bounds.append(Interval(0, entry.tiles - 1))
    env[entry.args[-1][0]] = Dim(len(st.bounds) - 1)
    rank = 0
    for raw_line in entry.body:
        ln = raw_line.strip()
        if not ln or ln.startswith("//") or ln == "xtile.return":
            continue
        if ln.endswith("{"):
            raise _Unknown(f"an op with a region in a tiled kernel: {ln.split()[0]}")
        m = _ASSIGN_RE.match(ln)
        names = [n.strip().split(":")[0] for n in m.group(1).split(",")] if m else []
        op = m.group(2) if m else ln
        head = op.split()[0]
        if head in ("xtile.extract", "xtile.insert"):
            xm = re.match(r"xtile\.(?:extract\s+(%[\w.$\-]+)|insert\s+(%[\w.$\-]+)\s+into\s+(%[\w.$\-]+))\s*"
                          r"\[([^\]]*)\]\s*\[([^\]]*)\]\s*\[([^\]]*)\]\s*:\s*(\S+)\s*->\s*(\S+)\s*$", op)
            if xm is None:
                raise _Unknown(f"an {head} the interpreter does not read: {op}")
            extract = head == "xtile.extract"
            target = env.get(xm.group(1) if extract else xm.group(3))
            if not (isinstance(target, tuple) and target and target[0] == "arg"):
                raise _Unknown(f"an {head} of a value that is not a kernel argument: {op}")
            offsets = [_index_value(env, x.strip()) for x in xm.group(4).split(",") if x.strip()]
            sizes, strides = _ints(xm.group(5)), _ints(xm.group(6))
            mm = re.match(_DIMS_RE, xm.group(7) if extract else xm.group(8))
            if mm is None:
                raise _Unknown(f"an {head} of a memref without static dimensions: {op}")
            dims = [int(x) for x in mm.group(1).split("x") if x]
            if not (len(offsets) == len(sizes) == len(strides) == len(dims)) or min(strides, default=1) < 0:
                raise _Unknown(f"an {head} whose offsets, sizes, strides and memref differ in rank: {op}")

            def place(t: list[AffineExpr], offsets: list[AffineExpr] = offsets, strides: list[int] = strides,
                      dims: list[int] = dims) -> tuple[list[AffineExpr], list[tuple[AffineExpr, Interval]]]:
                idx = [o + x * s for o, x, s in zip(offsets, t, strides)]
                return idx, [(e, Interval(0, n - 1)) for e, n in zip(idx, dims)]

            if extract:
                env[names[0]] = ("tile", tuple(sizes), [(target[1], place)])
                continue
            tile = env.get(xm.group(2))
            if not (isinstance(tile, tuple) and tile and tile[0] == "tile") or list(tile[1]) != sizes:
                raise _Unknown(f"an xtile.insert of a value that is not a tile of its sizes: {op}")
            base = len(st.bounds)
            st.bounds += [Interval(0, n - 1) for n in sizes]
            t: list[AffineExpr] = [Dim(base + j) for j in range(len(sizes))]
            out, inside = place(t)
            st.output = out
            rank = len(out)
            for arg, fn in tile[2]:
                idx, cons = fn(t)
                st.reads.append(KernelRead(arg, out, idx, inside + cons))
            continue
        used = [env.get(x) for x in re.findall(r"%[\w.$\-]+", op.split(":")[0])]
        tiles = [v for v in used if isinstance(v, tuple) and v and v[0] == "tile"]
        # every other operand must be an index or an integer constant: a value the interpreter does not know
        # (an argument read another way, the result of an op it does not read) could carry reads it would miss
        others = [v for v in used if not (isinstance(v, tuple) and v and v[0] == "tile") and
                  not isinstance(v, (AffineExpr, list)) and v != ("data",)]  # ("data",): a constant that is no index
        if others and (tiles or head == "tensor.from_elements" or
                       any(isinstance(v, tuple) and v and v[0] == "arg" for v in others)):
            raise _Unknown(f"an op on values the interpreter does not read in a tiled kernel: {op}")
        result_type = re.findall(r"tensor<((?:\d+x)*)[a-z]\w*>", op)
        result_shape = tuple(int(x) for x in result_type[-1].split("x") if x) if result_type else None
        if head in ("arith.constant", "stablehlo.iota", "stablehlo.constant", "tensor.from_elements") and \
                result_shape is not None and not tiles:
            # a tile of constants, of an iota, or of scalars that are no data read (indices, constants)
            env[names[0]] = ("tile", result_shape, [])
            continue
        if head == "stablehlo.broadcast_in_dim" and len(tiles) == 1 and result_shape is not None:
            bm = re.search(r"dims\s*=\s*\[([^\]]*)\]", op)
            where = _ints(bm.group(1)) if bm else [-1]
            shape = tiles[0][1]
            if len(where) != len(shape) or any(not 0 <= w < len(result_shape) for w in where) or \
                    any(n not in (1, result_shape[w]) for n, w in zip(shape, where)):
                raise _Unknown(f"a stablehlo.broadcast_in_dim the interpreter does not read: {op}")

            def broadcast(fn: Any, where: list[int] = where, shape: tuple[int, ...] = shape,
                          out: tuple[int, ...] = result_shape) -> Any:
                # operand dim i is result dim where[i]; a dim of size 1 broadcast to more reads its element 0
                return lambda u: fn([u[w] if n == out[w] else Const(0) for n, w in zip(shape, where)])

            env[names[0]] = ("tile", result_shape, [(a, broadcast(fn)) for a, fn in tiles[0][2]])
            continue
        if head == "stablehlo.transpose" and len(tiles) == 1:
            pm = re.search(r"dims\s*=\s*\[([^\]]*)\]", op)
            perm = _ints(pm.group(1)) if pm else []
            shape = tiles[0][1]
            if sorted(perm) != list(range(len(shape))):
                raise _Unknown(f"a stablehlo.transpose the interpreter does not read: {op}")

            def permuted(fn: Any, perm: list[int] = perm) -> Any:
                # result dim i is operand dim perm[i]: operand element u with u[perm[i]] = t[i]
                return lambda u: fn([u[perm.index(j)] for j in range(len(perm))])

            env[names[0]] = ("tile", tuple(shape[p] for p in perm), [(a, permuted(fn)) for a, fn in tiles[0][2]])
            continue
        if tiles:
            if not (head.startswith(("math.", "arith.")) or head in _STABLEHLO_ELEMENTWISE) or len(names) != 1 or \
                    len({tl[1] for tl in tiles}) != 1 or (result_shape is not None and result_shape != tiles[0][1]):
                raise _Unknown(f"an op on tiles the interpreter does not read: {head}")
            env[names[0]] = ("tile", tiles[0][1], [r for tl in tiles for r in tl[2]])  # element t of each operand
            continue
        _op(st, names, op, head, env, [])
    if not rank:
        raise _Unknown("a tiled kernel without an xtile.insert")
    return entry.name, entry.args, st.bounds, st.reads, rank


def _loop(st: _State, lines: list[str], at: int, env: dict[str, Any]) -> int:
    """Interpret the ``xla.loop`` at line ``at``: its variables, the output element
    each iteration writes, the reads of its body. Returns the output's rank."""
    loop = lines[at]
    lm = re.match(r"\s*(%[\w.$\-]+(?:\s*,\s*%[\w.$\-]+)*)\s*=\s*xla\.loop\s*\(([^)]*)\)\s*(?:\[([^\]]*)\])?"
                  r"\s*->\s*\(([^)]*)\)\s*in\s*", loop)
    mm = _MAP_RE.search(loop)
    if lm is None or mm is None:
        raise _Unknown("an xla.loop the interpreter does not read")
    dims = [_index_value(env, x.strip()) for x in lm.group(2).split(",") if x.strip()]
    loop_map = parse_indexing_map(mm.group(1))
    syms: list[AffineExpr] = []
    for v in loop_map.range_vars:
        st.bounds.append(v.bounds)
        syms.append(Dim(len(st.bounds) - 1))
    sym_names = [x.strip() for x in (lm.group(3) or "").split(",") if x.strip()]
    for n, e in zip(sym_names, syms):
        env[n] = e
    cons: list[tuple[AffineExpr, Interval]] = []
    for d, v in zip(dims, loop_map.dims):  # the loop's domain on the thread/block ids
        cons.append((d, v.bounds))
    cons += [(e.substitute(dims=dims, syms=syms), iv) for e, iv in loop_map.constraints]
    results = [r.substitute(dims=dims, syms=syms) for r in loop_map.results]
    for n, r in zip([x.strip() for x in lm.group(4).split(",") if x.strip()], results):
        env[n] = r
    st.output = results
    body, _ = _region(lines, at)
    _run(st, body, env, cons)
    return len(results)



def _in_output_coordinates(st: _State, idx: list[AffineExpr]) -> tuple[AffineExpr, ...] | None:
    """``idx`` as expressions of the output element's coordinates, when it uses only
    the variables the loop writes the output element with (each a coordinate)."""
    from verified_indexing.hlo.audit import _variables

    pos = {e.index: i for i, e in enumerate(st.output) if isinstance(e, Dim)}
    if len(pos) != len(st.output):
        return None
    used = {v.index for e in idx for v in _variables(e) if isinstance(v, Dim)}
    if not used <= set(pos) or any(not isinstance(v, Dim) for e in idx for v in _variables(e)):
        return None
    table: list[AffineExpr] = [Dim(pos.get(j, 0)) for j in range(len(st.bounds))]
    return tuple(e.substitute(dims=table) for e in idx)


def _relation(bounds: list[Interval], reads: list[KernelRead], ctx: Any, raw: list[int] | None = None) -> Any:
    """``{[output, runtime values] -> element}`` of ``reads`` (isl), the other variables
    existential; ``raw``: the variables holding the runtime values, in order."""
    from verified_indexing.engines.isl import to_isl_map

    rel = None
    inputs = [Dim(v) for v in raw or []]
    for r in reads:
        both = IndexingMap([Variable(b) for b in bounds], [*r.output, *inputs, *r.index], constraints=r.constraints)
        if both.is_known_empty:
            continue
        pairs = _split_range(to_isl_map(both, ctx=ctx).range(), len(r.output) + len(inputs))
        rel = pairs if rel is None else rel.union(pairs)
    return rel


def _split_range(rng: Any, k: int) -> Any:
    """``{[o..., e...]}`` -> ``{[o...] -> [e...]}``."""
    import islpy as isl

    m = isl.Map.from_range(rng).move_dims(isl.dim_type.in_, 0, isl.dim_type.out, 0, k)
    return m.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)


def _exact_through_identity(comp: Any, k: int, module: Any) -> list[Any] | None:
    """The exact reads of parameter ``k`` where the analysis' map over-approximates:
    the parameter is only an operand of a dynamic-update-slice or a pad (src,
    update, padding value) whose output the root reads element for element
    (the map from the root to it is the identity, exact); None otherwise."""
    from verified_indexing.hlo.audit import _exact_dus, _with_producer_as_parameter
    from verified_indexing.hlo.fusion import output_to_input_maps

    param = next((p for p in comp.parameters() if p.parameter_number == k), None)
    users = [i for i in comp.instructions if param is not None and param.name in i.operands]
    if param is None or len(users) != 1 or users[0].opcode not in ("dynamic-update-slice", "pad"):
        return None
    user = users[0]
    slots = [j for j, n in enumerate(user.operands) if n == param.name]
    if len(slots) != 1:
        return None
    exact = _exact_dus(user, comp, slots[0])
    if exact is None:
        return None
    if user is not comp.root:
        through, number = _with_producer_as_parameter(comp, user.name)
        result = output_to_input_maps(through, module=module)
        to_user = [t for t in result.targets if t.index == number and t.element is None]
        if result.unsupported or len(to_user) != 1 or len(to_user[0].maps) != 1:
            return None
        (a,) = to_user[0].maps
        if a.over_approximation or a.map != IndexingMap.identity([d.bounds.hi + 1 for d in a.map.dims]):
            return None
    return exact


def _with_runtime_values(
    m: IndexingMap, comp: Any, raw_args: list[int], raw_bounds: list[Interval],
    raw_at: dict[int, tuple[AffineExpr, ...]] | None = None,
) -> list[IndexingMap] | None:
    """``m`` over the kernel's runtime values: every runtime variable replaced by the
    value its origin computes from the parameters' values (piecewise; clamped to the
    variable's bounds as the emitters clamp), the runtime variables being those
    values (the kernel's scalar integer arguments, in order). None: an origin the
    evaluation does not follow."""
    values = []
    for v in m.rt_vars:
        name = getattr(v.origin, "operand_name", None)
        om = getattr(v.origin, "map", None)
        if not isinstance(name, str) or not isinstance(om, IndexingMap) or om.num_range_vars:
            return None
        pieces = _scalar_value(comp, name, raw_args, 0, list(om.results), raw_at)
        if pieces is None:
            return None
        values.append([(cons, emin(emax(e, Const(v.bounds.lo)), Const(v.bounds.hi))) for cons, e in pieces])
    out = []
    rts = [Variable(b) for b in raw_bounds]
    for combo in itertools.product(*values):
        subst = [e for _, e in combo]
        extra = [c for cons, _ in combo for c in cons]
        mm = IndexingMap(m.dims, [r.substitute(rts=subst) for r in m.results], m.range_vars, rts,
                         [(e.substitute(rts=subst), iv) for e, iv in m.constraints] + extra)
        if not mm.is_known_empty:
            out.append(mm)
    return out


_Pieces = list[tuple[list[tuple[AffineExpr, Interval]], AffineExpr]]
_DIRECTIONS = {"LT": (None, -1), "LE": (None, 0), "GT": (1, None), "GE": (0, None), "EQ": (0, 0)}


def _scalar_value(comp: Any, name: str, raw_args: list[int], depth: int, index: list[AffineExpr] | None = None,
                  raw_at: dict[int, tuple[AffineExpr, ...]] | None = None) -> _Pieces | None:
    """The value of scalar instruction ``name`` of ``comp`` as pieces over the
    runtime values (``rtJ``: the scalar integer parameter ``raw_args[J]``):
    parameters, integer constants, add, subtract, multiply by a constant, negate,
    minimum, maximum, clamp, select on a compare, widening converts, and the
    value-preserving ops. None for anything else."""
    from verified_indexing.expr import RtSym
    from verified_indexing.hlo.fusion import _trace_step
    from verified_indexing.hlo.ops import constant_scalar

    inst = comp.by_name.get(name)
    if inst is None or depth > 64 or inst.shape.is_tuple:
        return None
    index = list(index or [])
    step = _trace_step(comp, name)
    if step is not None:
        return _scalar_value(comp, step[0], raw_args, depth + 1, [r.substitute(dims=index) for r in step[1].results],
                             raw_at)
    if len(index) != len(inst.shape.dims):
        return None
    if inst.opcode == "parameter":
        k = inst.parameter_number
        if k not in raw_args or not _same_element(index, (raw_at or {}).get(k, ())):
            return None  # not the element the kernel reads
        return [([], RtSym(raw_args.index(k)))]
    value = constant_scalar(inst)
    if value is not None:
        return [([], Const(value))]
    if inst.opcode == "iota" and inst.iota_dimension is not None and inst.iota_dimension < len(index):
        return [([], index[inst.iota_dimension])]  # the element's coordinate along the iota's dimension
    if inst.opcode == "concatenate":  # the element of one operand, where the index along the dimension is known
        dims = inst.dimensions()
        if len(dims) != 1 or not isinstance(index[dims[0]], Const):
            return None
        at_d, start = index[dims[0]].evaluate(), 0
        for o in inst.operands:
            src = comp.by_name.get(o)
            if src is None:
                return None
            n = src.shape.dims[dims[0]]
            if start <= at_d < start + n:
                inner = list(index)
                inner[dims[0]] = Const(at_d - start)
                return _scalar_value(comp, o, raw_args, depth + 1, inner, raw_at)
            start += n
        return None
    if inst.shape.dims and inst.opcode not in ("add", "subtract", "multiply", "negate", "minimum", "maximum",
                                               "clamp", "select", "convert", "compare"):
        return None
    def at(o: str) -> list[AffineExpr]:
        op = comp.by_name.get(o)
        return [] if op is None or not op.shape.dims else index

    first = 1 if inst.opcode == "select" else 0  # a select's predicate is read as a comparison below
    ops = [None] * first + [_scalar_value(comp, o, raw_args, depth + 1, at(o), raw_at)
                            for o in inst.operands[first:]]
    if any(p is None for p in ops[first:]):
        return None
    parts: list[_Pieces] = [p if p is not None else [] for p in ops]
    out: _Pieces = []
    if inst.opcode == "select" and len(parts) == 3:
        pred = comp.by_name.get(inst.operands[0])
        if pred is None or pred.opcode != "compare" or len(pred.operands) != 2:
            return None
        direction = (pred.attr("direction") or "").strip()
        if direction not in _DIRECTIONS:
            return None
        lhs, rhs = (_scalar_value(comp, o, raw_args, depth + 1, at(o), raw_at) for o in pred.operands)
        if lhs is None or rhs is None:
            return None
        lo, hi = _DIRECTIONS[direction]
        for (cl, el), (cr, er) in itertools.product(lhs, rhs):
            cond = (el - er, _interval(lo, hi))
            for ca, ea in parts[1]:
                out.append(([*cl, *cr, cond, *ca], ea))
            for neg in _negate(cond):
                for cb, eb in parts[2]:
                    out.append(([*cl, *cr, neg, *cb], eb))
        return out
    for combo in itertools.product(*parts):
        cons = [c for cs, _ in combo for c in cs]
        es = [e for _, e in combo]
        if inst.opcode == "add" and len(es) == 2:
            out.append((cons, es[0] + es[1]))
        elif inst.opcode == "subtract" and len(es) == 2:
            out.append((cons, es[0] - es[1]))
        elif inst.opcode == "multiply" and len(es) == 2 and any(isinstance(e, Const) for e in es):
            out.append((cons, es[0] * es[1]))
        elif inst.opcode == "negate" and len(es) == 1:
            out.append((cons, es[0] * -1))
        elif inst.opcode in ("minimum", "maximum") and len(es) == 2:
            out.append((cons, (emin if inst.opcode == "minimum" else emax)(es[0], es[1])))
        elif inst.opcode == "clamp" and len(es) == 3:
            out.append((cons, emin(emax(es[1], es[0]), es[2])))
        elif inst.opcode == "convert" and len(es) == 1 and _widening(comp, inst):
            out.append((cons, es[0]))
        else:
            return None
    return out


#: The output's coordinates (bounds) of the kernel :func:`audit_kernel` is comparing, for :func:`_same_element`.
_BOX: list[Interval] = []


def _same_element(index: list[AffineExpr] | tuple[AffineExpr, ...], key: tuple[AffineExpr, ...],
                  box: list[Interval] | None = None) -> bool:
    """True when the analysis' element ``index`` of an index array is the kernel's
    ``key`` at every output element (written alike, or proven equal by isl over the
    output's coordinates, ``box`` or ``_BOX``: ``(d0 * 2 + d1) floordiv 2`` is ``d0`` there)."""
    if tuple(index) == key:
        return True
    box = _BOX if box is None else box
    if len(index) != len(key) or not box:
        return False
    import islpy as isl

    from verified_indexing.engines.isl import to_isl_map

    ctx = isl.Context()
    try:
        a, b = (to_isl_map(IndexingMap([Variable(v) for v in box], list(e)), ctx=ctx) for e in (index, key))
    except (VerifiedIndexingError, ValueError, IndexError):
        return False
    flat = [m.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out) for m in (a, b)]
    return bool(flat[0].is_equal(flat[1]))


def _widening(comp: Any, inst: Any) -> bool:
    src = comp.by_name.get(inst.operands[0])
    bits = {"s8": 8, "s16": 16, "s32": 32, "s64": 64}
    return src is not None and src.shape.element_type in bits and inst.shape.element_type in bits and \
        bits[inst.shape.element_type] >= bits[src.shape.element_type]


def _linear(shape: Any, ctx: Any, extra: list[Interval] | None = None) -> Any:
    """``{[d..., x...] -> [linear index, x...]}`` of ``shape`` in its layout (row-major
    without one), the ``extra`` inputs (runtime values) passed through."""
    import islpy as isl

    from verified_indexing.engines.isl import to_isl_map

    dims = list(shape.dims)
    stride = 1
    expr: AffineExpr = Const(0)
    terms: list[AffineExpr] = []
    for d in shape.minor_to_major():
        terms.append(Dim(d) * stride)
        stride *= dims[d]
    for t in terms:
        expr = expr + t
    # a scalar stays without an index (the kernel reads tensor<f32> with [])
    results: list[AffineExpr] = [expr] if dims else []
    results += [Dim(len(dims) + j) for j in range(len(extra or []))]
    m = to_isl_map(IndexingMap([Variable(Interval(0, n - 1)) for n in dims] + [Variable(b) for b in extra or []],
                               results), ctx=ctx)
    return m.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)


def _post_keys(bounds: list[Interval], shape: Any, params: dict[int, Any], ctx: Any) -> \
        dict[int, tuple[AffineExpr, ...]] | str:
    """After XLA's passes: the element of each index array read element by element
    (``_LAST_RAW_POST``), stated as expressions of the output element's coordinates:
    the relation *output coordinates -> coordinates of the element read* (through the
    linear index the same iteration writes, in the output shape's layout, and the
    linear index read, in the index array's layout: ``params``, argument -> shape)
    must be a function on the whole output, affine (fitted at the origin and the unit
    points, then proven equal by isl). A reason (str) where it is not."""
    import islpy as isl

    from verified_indexing.engines.isl import point_values, to_isl_map

    dims = list(shape.dims)
    box = [Variable(Interval(0, n - 1)) for n in dims]
    keys: dict[int, tuple[AffineExpr, ...]] = {}
    for arg, entries in _LAST_RAW_POST.items():
        if arg not in params or any(len(e[0]) != 1 for e in entries):
            return f"after XLA's passes, the index array of argument {arg} is not read at a linear index"
        rank = len(params[arg].dims)
        rel = None
        for idx, written, cons in entries:
            m = IndexingMap([Variable(b) for b in bounds], [*written, *idx], constraints=cons)
            if m.is_known_empty:
                continue
            part = _split_range(to_isl_map(m, ctx=ctx).range(), len(written))
            rel = part if rel is None else rel.union(part)
        if rel is None:
            continue
        k = _linear(shape, ctx).apply_range(rel.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out))
        k = k.apply_range(_linear(params[arg], ctx).reverse())  # the element's coordinates in the index array
        whole = to_isl_map(IndexingMap(box, []), ctx=ctx).domain().reset_tuple_id()
        if not k.is_single_valued() or not k.domain().is_equal(whole):
            return (f"after XLA's passes, the elements of the index array of argument {arg} read are not one per "
                    "output element over the whole output")

        def at(point: list[int], k: Any = k, rank: int = rank) -> list[int]:
            pt = isl.Set.read_from_str(ctx, "{ [" + ", ".join(map(str, point)) + "] }")
            return list(point_values(k.intersect_domain(pt).range().sample_point(), rank))

        origin = at([0] * len(dims))
        exprs: list[AffineExpr] = [Const(c) for c in origin]
        for i, n in enumerate(dims):
            if n > 1:
                unit = at([1 if j == i else 0 for j in range(len(dims))])
                exprs = [e + Dim(i) * (u - c) for e, u, c in zip(exprs, unit, origin)]
        fitted = to_isl_map(IndexingMap(box, exprs), ctx=ctx)
        fitted = fitted.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)
        if not fitted.is_equal(k.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)):
            return (f"after XLA's passes, the element of the index array of argument {arg} read is not an affine "
                    "function of the output element")
        keys[arg] = tuple(exprs)
    return keys


def audit_kernel(text: str, module: Any, source: str = "<kernel>") -> KernelResult:
    """One kernel module against the proven maps of its fusion in ``module`` (the
    HLO after optimizations)."""
    from verified_indexing.engines.isl import point_values, to_isl_map
    from verified_indexing.hlo.fusion import output_to_input_maps

    start = time.perf_counter()
    post = "xla.loop" not in text and "xtile.entry_func" not in text
    entries = [f.name for f in _functions(text).values() if f.entry]
    name = entries[0] if len(entries) == 1 else "?"
    try:
        name, _, bounds, reads, _ = kernel_reads(text, source)
    except _Unknown as exc:
        return KernelResult(name, source, "unknown", str(exc), seconds=time.perf_counter() - start)
    except (VerifiedIndexingError, ValueError, IndexError, KeyError) as exc:  # text the interpreter cannot read
        message = exc.message if isinstance(exc, ParseError) else str(exc)
        return KernelResult(name, source, "unknown", f"the kernel's text is not read: {message}",
                            seconds=time.perf_counter() - start)
    fusions = {inst.name: (inst, comp) for inst, comp in module.fusions()}
    if name not in fusions:
        return KernelResult(name, source, "unknown", f"no fusion {name!r} in the module",
                            seconds=time.perf_counter() - start)
    inst, comp = fusions[name]
    params = len(inst.operands)
    res = KernelResult(name, source, "proved", params=params)
    root = comp.root
    outputs = list(root.shape.tuple_shapes) if root.shape.is_tuple else [root.shape]
    if len({tuple(o.dims) for o in outputs}) != 1 or any(o.is_tuple for o in outputs):
        return KernelResult(name, source, "unknown", "a multi-output fusion whose outputs differ in shape",
                            seconds=time.perf_counter() - start, params=params)
    if "xtile.entry_func" in text:  # the tiled emitter indexes memrefs by logical coordinates: row-major only
        shapes = [p.shape for p in sorted(comp.parameters(), key=lambda p: p.parameter_number or 0)] + outputs
        types = [t for _, t in _functions(text)[name].args[:-1]]
        for shape, ty in zip(shapes, types):
            dm = re.match(_DIMS_RE, ty)
            if len(types) != len(shapes) or dm is None or [int(x) for x in dm.group(1).split("x") if x] != \
                    list(shape.dims) or shape.minor_to_major() != tuple(range(len(shape.dims) - 1, -1, -1)):
                return KernelResult(name, source, "unknown", f"a memref {ty} that is not the row-major {shape}",
                                    seconds=time.perf_counter() - start, params=params)
    ours = output_to_input_maps(comp, module=module)
    for j in range(1, len(outputs)):  # one loop writes every output at the same index: the union of their reads
        more = output_to_input_maps(comp, output_index=j, module=module)
        ours.unsupported += more.unsupported
        for t, u in zip(ours.targets, more.targets):
            t.maps += u.maps
    if ours.unsupported:
        res.status = "unknown"
        res.reason = "the analysis does not model " + ", ".join(u.instruction for u in ours.unsupported)
        res.seconds = time.perf_counter() - start
        return res
    import islpy as isl

    ctx = isl.Context()
    raw = dict(_LAST_RAW)
    raw_at = dict(_LAST_RAW_AT)
    if post and _LAST_RAW_POST:
        keys = _post_keys(bounds, outputs[0], {p.parameter_number: p.shape for p in comp.parameters()}, ctx)
        if isinstance(keys, str):
            return KernelResult(name, source, "unknown", keys, seconds=time.perf_counter() - start, params=params)
        raw_at.update(keys)
    raw_args = sorted(raw)
    raw_bounds = [bounds[raw[a][0]] for a in raw_args]
    _BOX[:] = [Interval(0, n - 1) for n in outputs[0].dims]
    for target in ours.targets:
        if target.element is not None:
            continue
        k = target.index
        mine = [r for r in reads if r.arg == k]
        if any(a.over_approximation for a in target.maps):
            exact = _exact_through_identity(comp, k, module)
            if exact is None:
                res.status = "unknown"
                res.reason = f"parameter {k}: the analysis' map is an over-approximation"
                continue
            target = dataclasses.replace(target, maps=exact)
        theirs = _relation(bounds, mine, ctx, [raw[a][0] for a in raw_args])
        our_maps: list[IndexingMap] | None = []
        for a in target.maps:
            folded = _with_runtime_values(a.map, comp, raw_args, raw_bounds, raw_at)
            if folded is None or our_maps is None:
                our_maps = None
                break
            our_maps += folded
        if our_maps is None:
            res.status = "unknown"
            res.reason = f"parameter {k}: a runtime variable of the analysis not traced to a parameter's value"
            continue
        our = None
        for m in our_maps:
            r = to_isl_map(m, ctx=ctx)
            if post:  # XLA's passes flattened every buffer: compare linear indices (each shape's layout)
                r = r.apply_domain(_linear(outputs[0], ctx, raw_bounds)).apply_range(_linear(target.shape, ctx))
            our = r if our is None else our.union(r)
        if theirs is None and our is None:
            continue
        if theirs is None or our is None:
            only = "the analysis" if theirs is None else "the kernel"
            res.status, res.reason = "refuted", f"parameter {k}: only {only} reads it"
            break
        theirs = theirs.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)
        our = our.reset_tuple_id(isl.dim_type.in_).reset_tuple_id(isl.dim_type.out)
        if theirs.space.dim(isl.dim_type.in_) != our.space.dim(isl.dim_type.in_) or \
                theirs.space.dim(isl.dim_type.out) != our.space.dim(isl.dim_type.out):
            res.status, res.reason = "unknown", f"parameter {k}: the kernel's indices and the analysis' differ in rank"
            continue
        for a_rel, b_rel, who in ((theirs, our, "the kernel"), (our, theirs, "the analysis")):
            diff = a_rel.subtract(b_rel)
            if not diff.is_empty():
                n_in = a_rel.space.dim(isl.dim_type.in_)
                n_out = a_rel.space.dim(isl.dim_type.out)
                pt = point_values(diff.wrap().lexmin().sample_point(), n_in + n_out)
                other = "the analysis" if who == "the kernel" else "the kernel"
                res.status = "refuted"
                res.reason = f"parameter {k}: {who} reads an element {other} does not"
                n_out = n_in - len(raw_args)
                when = ""
                coords = list(pt[:n_out])
                if post and n_out == 1:  # a linear index of the output: its coordinates in the output's layout
                    coords, rest = [0] * len(outputs[0].dims), pt[0]
                    for d in outputs[0].minor_to_major():
                        coords[d], rest = rest % outputs[0].dims[d], rest // outputs[0].dims[d]
                for arg, x in zip(raw_args, pt[n_out:n_in]):
                    where = [e.evaluate(coords) for e in raw_at.get(arg, ())]
                    element = f" element ({', '.join(map(str, where))})" if where else ""
                    when += f", parameter {arg}{element} = {x}"
                res.witness = [f"output element ({', '.join(map(str, pt[:n_out]))}){when}: {who} reads parameter {k} "
                               f"element ({', '.join(map(str, pt[n_in:]))}), {other} does not"]
                break
        if res.status == "refuted":
            break
    res.seconds = time.perf_counter() - start
    return res


def audit_dump(directory: str) -> list[KernelResult]:
    """Every kernel of an XLA dump directory (``*_kernel_module-pre-optimization.mlir``,
    the emitter's, and ``*-post-optimization.mlir``, after XLA's passes: flattened
    buffers, ``scf.for`` loops, simplified maps; beside the module's
    ``*after_optimizations.txt``)."""
    import glob
    import os

    from verified_indexing.hlo.parser import parse_module

    if not os.path.isdir(directory):
        raise VerifiedIndexingError(f"{directory}: not a directory (an --xla_dump_to directory)")
    kernels = sorted(glob.glob(os.path.join(directory, "*_kernel_module-pre-optimization.mlir"))
                     + glob.glob(os.path.join(directory, "*_kernel_module-post-optimization.mlir"))
                     + glob.glob(os.path.join(directory, "*.__compute_module_*-pre-optimization.mlir")))
    if not kernels:
        raise VerifiedIndexingError(f"{directory}: no kernel dumps (*_kernel_module-pre-optimization.mlir): run with "
                                    "XLA_FLAGS='--xla_dump_to=DIR --xla_dump_emitter_re=.*'")
    out = []
    modules: dict[str, Any] = {}
    for path in kernels:
        base = os.path.basename(path)
        prefix = ".".join(base.split(".")[:2])  # module_0004.jit__lambda
        hlo = os.path.join(directory, prefix + ".cpu_after_optimizations.txt")
        if not os.path.exists(hlo):
            found = glob.glob(os.path.join(directory, prefix + "*after_optimizations.txt"))
            hlo = found[0] if found else ""
        if not hlo:
            out.append(KernelResult(base, path, "unknown", "no after-optimizations HLO beside it"))
            continue
        if hlo not in modules:
            with open(hlo, encoding="utf-8") as f:
                try:
                    modules[hlo] = parse_module(f.read(), hlo)
                except ParseError as exc:
                    out.append(KernelResult(base, path, "unknown", f"the module does not parse: {exc.message}"))
                    continue
        with open(path, encoding="utf-8") as f:
            text = f.read()
        result = audit_kernel(text, modules[hlo], path)
        if path.endswith("-post-optimization.mlir"):
            result.kernel += " (after XLA's passes)"
        out.append(result)
    return out


def format_kernel_results(results: list[KernelResult]) -> str:
    lines = []
    for r in results:
        line = f"{r.status.upper():8} {r.kernel}" + (f" ({r.seconds * 1000:.1f} ms)" if show_timing() else "")
        if r.reason:
            line += f": {r.reason}"
        lines.append(line)
        lines += [f"    {w}" for w in r.witness]
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    lines.append("summary: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items())))
    return "\n".join(lines)
