"""CINN's loop-nest IR as printed by its schedule (``ScheduleBlock``, ``serial for``).

The subset of ``../shared/spec/cinn-compute-inline.zh.md``::

    ScheduleBlock(root)
    {
      serial for (i, 0, 32)
      {
        ScheduleBlock(B)
        {
          i0 = axis.bind(i)
          B[i0] = (1 + A[i0])
        }
      }
    }

Statements: ``ScheduleBlock(NAME) { ... }``, a bare ``{ ... }`` group,
``KIND for (VAR, MIN, EXTENT) { ... }`` (KIND is ``serial``, ``parallel``,
``vectorize``, ``unroll`` or absent; MIN and EXTENT integers; the loop runs
``VAR = MIN .. MIN + EXTENT - 1``; an ``ll`` suffix on integers is accepted),
``v0, v1 = axis.bind(e0, e1)`` and stores
``T[e, ...] = value``, one per line; ``read_buffers(...)``/``write_buffers(...)``
lines are skipped, ``//`` comments allowed, and the program may be wrapped in
``function NAME (args) { ... }``. Index expressions (``e``) are quasi-affine in
the enclosing loop variables and block iteration variables: ``+ - *``,
``floordiv``, ``mod``, ``ceildiv``, ``min``, ``max``, and C's truncating ``/``
and ``%`` -- accepted only where they provably equal ``floordiv``/``mod`` (see
``_Reader.check_truncating``), else refused with a point where they differ.
Values are uninterpreted terms: loads ``T[e, ...]``, numbers, calls
``f(a, b)``, binary ``+ - * / %``, comparisons, ``&& ||``, unary ``-`` and ``!``.
``if (c0 && c1 ...) { ... }`` statements (inside loops or blocks) hold affine
comparisons (``< <= > >= ==``) of loop and iteration variables: they become
constraints of the iteration domain of the stores inside (:class:`If`); a
non-affine predicate, ``||``, ``!=`` or ``else`` is refused with a positioned
error. Symbolic loop bounds are refused with a positioned error.

Promises: :func:`format_program` prints the layout above (two spaces per level,
binary operations parenthesized as CINN prints them) and
``parse_program(format_program(p)) == p``; malformed input raises a
positioned :class:`ParseError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field

from verified_indexing.engines import prove_implies
from verified_indexing.errors import NotModelledError, ParseError, VerifiedIndexingError
from verified_indexing.expr import AffineExpr, Const, Dim, emax, emin
from verified_indexing.indexing_map import IndexingMap, Variable
from verified_indexing.interval import Interval, range_of
from verified_indexing.legality._scanner import Scanner
from verified_indexing.syntax import format_expr
from verified_indexing.syntax.limits import check_limits

__all__ = [
    "Value",
    "Num",
    "Load",
    "Call",
    "BinOp",
    "Neg",
    "IndexValue",
    "Stmt",
    "Store",
    "Bind",
    "For",
    "Group",
    "ScheduleBlock",
    "If",
    "Cond",
    "cond_constraints",
    "cond_holds",
    "parse_program",
    "format_program",
    "SIZE_MAX",
    "at_sizes",
    "loop_range",
    "program_sizes",
    "size_names",
    "with_sizes",
    "format_value",
    "walk_blocks",
    "BlockContext",
    "unique_names",
    "last_index",
]

# ---------------------------------------------------------------------------
# Values (uninterpreted) and statements. Index expressions are AffineExprs whose
# Dim(k) is the k-th name of the statement's scope (loop vars outer to inner,
# then the block's iteration variables).
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Num:
    text: str


@dataclass(frozen=True)
class Load:
    tensor: str
    indices: tuple[AffineExpr, ...]


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple[Value, ...]


@dataclass(frozen=True)
class BinOp:
    op: str
    lhs: Value
    rhs: Value


@dataclass(frozen=True)
class Neg:
    operand: Value


@dataclass(frozen=True)
class IndexValue:
    """An index expression used as a value (e.g. ``i0`` in ``(A[i0] + i0)``)."""

    expr: AffineExpr


Value = Num | Load | Call | BinOp | Neg | IndexValue


@dataclass(frozen=True)
class Store:
    tensor: str
    indices: tuple[AffineExpr, ...]
    value: Value
    scope: tuple[str, ...]


@dataclass(frozen=True)
class Bind:
    """``names = axis.bind(values)``: values over the enclosing loop variables."""

    names: tuple[str, ...]
    values: tuple[AffineExpr, ...]
    scope: tuple[str, ...]


@dataclass(frozen=True)
class For:
    """``KIND for (VAR, START, EXTENT) { body }``. A symbolic extent (an affine
    expression of the size parameters and enclosing loops, over ``scope``) is
    ``bound``; the loop variable then ranges over ``[START, START + SIZE_MAX - 1]``
    with the constraint ``VAR <= START + bound - 1`` (``extent`` is ``SIZE_MAX``).
    A size parameter ``N`` of the program is an outermost pseudo-loop of kind
    ``size`` over ``[0, SIZE_MAX]`` (printed as nothing), so that it is the first
    variable of every scope and the first dim of every map (the convention of
    :mod:`verified_indexing.engines.sizes`)."""

    kind: str
    var: str
    start: int
    extent: int
    body: tuple[Stmt, ...]
    bound: AffineExpr | None = None
    scope: tuple[str, ...] = ()


@dataclass(frozen=True)
class Group:
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class ScheduleBlock:
    """A block; ``params`` (on the root only) names the buffers its caller sees
    (a TVMScript function's parameter buffers): they are program outputs by
    default, never inlined away. Not part of equality or of the printed text."""

    name: str
    body: tuple[Stmt, ...]
    params: tuple[str, ...] = field(default=(), compare=False)


#: One affine comparison ``lhs OP rhs`` (OP in ``< <= > >= ==``) of a predicate.
Cond = tuple[AffineExpr, str, AffineExpr]


@dataclass(frozen=True)
class If:
    """``if (c0 && c1 ...) { body }`` (CINN) or a block's ``T.where`` (TVM):
    a conjunction of affine comparisons over ``scope`` (the loop variables then
    the block's iteration variables at that point). The body runs where every
    comparison holds: the comparisons become constraints of the iteration
    domain of every store inside (:func:`cond_constraints`)."""

    conds: tuple[Cond, ...]
    body: tuple[Stmt, ...]
    scope: tuple[str, ...]


Stmt = Store | Bind | For | Group | ScheduleBlock | If


def cond_constraints(conds: Sequence[Cond], bounds: Sequence[Interval]) -> list[tuple[AffineExpr, Interval]]:
    """The comparisons as ``(expr, interval)`` domain constraints (``expr`` in
    ``interval``), over variables with the given ``bounds``. The upper bound of
    a one-sided comparison is the largest value ``expr`` can take on the box."""
    out: list[tuple[AffineExpr, Interval]] = []
    for lhs, op, rhs in conds:
        d = rhs - lhs if op in ("<", "<=", "==") else lhs - rhs
        low = 1 if op in ("<", ">") else 0
        if op == "==":
            out.append((d, Interval(0, 0)))
            continue
        hi = range_of(d, bounds).hi
        out.append((d, Interval(low, max(low, hi))))
    return out


def cond_holds(conds: Sequence[Cond], point: Sequence[int]) -> bool:
    """Whether every comparison holds at ``point`` (the plain evaluator)."""
    for lhs, op, rhs in conds:
        a, b = lhs.evaluate(list(point)), rhs.evaluate(list(point))
        if not {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b}[op]:
            return False
    return True


# ---------------------------------------------------------------------------
# Printing
# ---------------------------------------------------------------------------


def _namer(scope: Sequence[str]):  # type: ignore[no-untyped-def]
    def names(kind: str, index: int) -> str:
        return scope[index] if kind == "d" else f"{kind}{index}"

    return names


def format_index(e: AffineExpr, scope: Sequence[str]) -> str:
    """An index expression with the scope's names."""
    return format_expr(e, _namer(scope))


def format_value(v: Value, scope: Sequence[str]) -> str:
    """A value in CINN's syntax (binary operations parenthesized)."""
    if isinstance(v, Num):
        return v.text
    if isinstance(v, Load):
        return f"{v.tensor}[{', '.join(format_index(i, scope) for i in v.indices)}]"
    if isinstance(v, Call):
        return f"{v.name}({', '.join(format_value(a, scope) for a in v.args)})"
    if isinstance(v, BinOp):
        return f"({format_value(v.lhs, scope)} {v.op} {format_value(v.rhs, scope)})"
    if isinstance(v, Neg):
        return f"-{format_value(v.operand, scope)}"
    return format_index(v.expr, scope)


def _fmt_stmt(s: Stmt, depth: int, out: list[str]) -> None:
    pad = "  " * depth
    if isinstance(s, Store):
        idx = ", ".join(format_index(i, s.scope) for i in s.indices)
        out.append(f"{pad}{s.tensor}[{idx}] = {format_value(s.value, s.scope)}")
    elif isinstance(s, Bind):
        vals = ", ".join(format_index(v, s.scope) for v in s.values)
        out.append(f"{pad}{', '.join(s.names)} = axis.bind({vals})")
    else:
        if isinstance(s, For) and s.kind == "size":
            for c in s.body:
                _fmt_stmt(c, depth, out)
            return
        if isinstance(s, For):
            ext = format_index(s.bound, s.scope) if s.bound is not None else str(s.extent)
            head = f"{s.kind + ' ' if s.kind else ''}for ({s.var}, {s.start}, {ext})"
            out.append(pad + head)
        elif isinstance(s, ScheduleBlock):
            out.append(f"{pad}ScheduleBlock({s.name})")
        elif isinstance(s, If):
            out.append(f"{pad}if ({format_conds(s.conds, s.scope)})")
        out.append(pad + "{")
        for c in s.body:
            _fmt_stmt(c, depth + 1, out)
        out.append(pad + "}")


def format_conds(conds: Sequence[Cond], scope: Sequence[str]) -> str:
    """A predicate in CINN's syntax: ``(i < 6) && (j == 0)``."""
    return " && ".join(f"({format_index(a, scope)} {op} {format_index(b, scope)})" for a, op, b in conds)


def format_program(p: Stmt) -> str:
    """The program text (no trailing newline)."""
    out: list[str] = []
    _fmt_stmt(p, 0, out)
    return "\n".join(out)


# ---------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------

_IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
_SB_RE = re.compile(rf"ScheduleBlock\s*\(\s*({_IDENT})\s*\)")
_FOR_HEAD_RE = re.compile(
    rf"(?:(serial|parallel|vectorize|unroll|gpu_block|gpu_thread)\s+)?"
    rf"(for\s*\()\s*({_IDENT})\s*,\s*(-?\d+)(?:ll|l)?\s*,"
)
_INT_EXTENT_RE = re.compile(r"\s*(\d+)(?:ll|l)?\s*$")
SIZE_MAX = 2**63 - 1


def _for_header(text: str, pos: int) -> tuple[re.Match[str], int, int] | None:
    """A loop header ``KIND for (VAR, MIN, EXTENT)`` at ``pos``: the match (kind,
    var, min) and where the EXTENT text starts and ends (before the closing
    parenthesis, which may enclose parenthesized extents like ``(S0 / 2)``)."""
    m = _FOR_HEAD_RE.match(text, pos)
    if m is None:
        return None
    depth = 1
    i = m.end()
    while i < len(text) and text[i] != "\n":
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return m, m.end(), i
        i += 1
    return None
_ANY_FOR_RE = re.compile(r"(?:(?:serial|parallel|vectorize|unroll|gpu_block|gpu_thread)\s+)?for\s*\(")
_BIND_RE = re.compile(rf"({_IDENT}(?:\s*,\s*{_IDENT})*)\s*=\s*axis\.bind\s*\(")
_STORE_RE = re.compile(rf"({_IDENT})\s*\[")
_IF_RE = re.compile(r"if\s*\(")
_BUFFERS_RE = re.compile(r"(?:read|write)_buffers\s*\(")
_VTOKEN_RE = re.compile(
    r"\s*(?:(?P<num>\d+\.\d*(?:e[+-]?\d+)?f?|\d+(?:e[+-]?\d+)?f?)"
    r"|(?P<id>[A-Za-z_][A-Za-z0-9_.]*)|(?P<p><=|>=|==|!=|&&|\|\||[-+*/%()\[\],<>!]))"
)
_ITOKEN_RE = re.compile(
    r"\s*(?:(?P<num>\d+)(?:ll|l)?(?![A-Za-z0-9_])|(?P<id>[A-Za-z_][A-Za-z0-9_]*)|(?P<p>[-+*/%(),]))"
)

#: An enclosing loop while parsing: name, first value, extent.
_Loop = tuple[str, int, int]
#: A block iteration variable and its bound value (over the enclosing loops).
_Iter = tuple[str, AffineExpr]


class _Reader(Scanner):
    def unknown(self, message: str, pos: int | None = None, length: int = 1) -> NotModelledError:
        """A well-formed construct the reader does not model: the answer is ``unknown`` (exit 2)."""
        return NotModelledError(message, self.text, self.pos if pos is None else pos, length, self.source)

    def __init__(self, text: str, source: str, check_truncation: bool = True) -> None:
        super().__init__(text, 0, source)
        self.loop_stack: list[_Loop] = []
        self.check_truncation = check_truncation

    # -- statements ---------------------------------------------------------
    def body(self, loops: tuple[str, ...], iters: tuple[_Iter, ...] | None) -> tuple[Stmt, ...]:
        self.expect("{")
        out: list[Stmt] = []
        while True:
            self.skip_ws()
            if self.pos >= len(self.text):
                raise self.error("expected '}' to close the block, found end of input")
            if self.text[self.pos] == "}":
                self.pos += 1
                return tuple(out)
            m = _BUFFERS_RE.match(self.text, self.pos)
            if m is not None:  # read_buffers(...) / write_buffers(...): informational, skipped
                self.skip_call(m.end() - 1)
                continue
            stmt, new_iters = self.stmt(loops, iters)
            if new_iters is not None:
                iters = new_iters
            out.append(stmt)

    def skip_call(self, open_pos: int) -> None:
        depth = 0
        i = open_pos
        while i < len(self.text):
            if self.text[i] == "(":
                depth += 1
            elif self.text[i] == ")":
                depth -= 1
                if depth == 0:
                    self.pos = i + 1
                    return
            i += 1
        raise self.error("no matching ')'", open_pos)

    def stmt(
        self, loops: tuple[str, ...], iters: tuple[_Iter, ...] | None
    ) -> tuple[Stmt, tuple[_Iter, ...] | None]:
        self.skip_ws()
        start = self.pos
        if self.text.startswith("{", self.pos):
            return Group(self.body(loops, iters)), None
        m = _SB_RE.match(self.text, self.pos)
        if m:
            self.pos = m.end()
            return ScheduleBlock(m.group(1), self.body(loops, ())), None
        head = _for_header(self.text, self.pos)
        if head:
            m, ext_start, ext_end = head
            self.pos = ext_end + 1
            var = m.group(3)
            # A loop variable named like an enclosing one opens a new frame and shadows it
            # (lexical scoping; renamed apart by unique_names after parsing).
            bound: AffineExpr | None = None
            im = _INT_EXTENT_RE.match(self.text[ext_start:ext_end])
            if im is not None:
                extent = int(im.group(1))
            else:  # a symbolic extent: an affine expression of the sizes and enclosing loops
                scope = loops + tuple(n for n, _ in (iters or ()))
                bound = self.index_expr(ext_start, ext_end, scope, iters or ())
                extent = SIZE_MAX
            start_value = int(m.group(4))
            self.loop_stack.append((var, start_value, extent))
            try:
                body = self.body((*loops, var), iters)
            finally:
                self.loop_stack.pop()
            kind = m.group(1) or ""
            if bound is None:
                return For(kind, var, start_value, extent, body), None
            return For(kind, var, start_value, extent, body, bound, loops + tuple(n for n, _ in (iters or ()))), None
        m = _BIND_RE.match(self.text, self.pos)
        if m:
            if iters is None:
                raise self.error("axis.bind outside a ScheduleBlock", start)
            names = tuple(n.strip() for n in m.group(1).split(","))
            # The block opens a new frame: an iteration variable named like an enclosing
            # loop variable shadows it in the block's body; the bound values are read in
            # the enclosing scope (as TVMScript scopes a block's T.axis bindings).
            if len(set(names)) != len(names) or any(n in [k for k, _ in iters] for n in names):
                raise self.error("an iteration variable is bound twice in one ScheduleBlock", start,
                                 len(m.group(1)))
            self.pos = m.end() - 1
            args = self.bracket_list("(", ")", loops, ())
            if len(args) != len(names):
                raise self.error(f"axis.bind binds {len(names)} names to {len(args)} values", start, len(m.group()))
            return Bind(names, tuple(args), loops), iters + tuple(zip(names, args))
        m = _STORE_RE.match(self.text, self.pos)
        if m:
            it = iters or ()
            scope = loops + tuple(n for n, _ in it)
            self.pos = m.end() - 1
            indices = self.bracket_list("[", "]", scope, it)
            self.expect("=")
            value = self.value_line(scope, it)
            return Store(m.group(1), tuple(indices), value, scope), None
        fm = _ANY_FOR_RE.match(self.text, self.pos)
        if fm is not None:
            raise self.unknown("a loop needs 'for (VAR, MIN, EXTENT)' with an integer MIN and an integer or affine "
                             "EXTENT; other computed bounds are not modelled", start, len(fm.group()))
        m = _IF_RE.match(self.text, self.pos)
        if m:
            it = iters or ()
            scope = loops + tuple(n for n, _ in it)
            self.pos = m.end() - 1
            conds = self.predicate(scope, it)
            body = self.body(loops, iters)
            self.skip_ws()
            if re.match(r"else\b", self.text[self.pos:]):
                raise self.unknown("'else' branches are not modelled (only 'if (affine predicate) { ... }')",
                                   self.pos, 4)
            return If(conds, body, scope), None
        raise self.error(
            f"expected a statement (ScheduleBlock, for, axis.bind, a store or '{{'), found {self.found()}", start
        )

    def predicate(self, scope: tuple[str, ...], iters: tuple[_Iter, ...]) -> tuple[Cond, ...]:
        """``( c && c ... )`` at ``self.pos`` (the '('): affine comparisons only."""
        open_pos = self.pos
        depth = 0
        i = self.pos
        while i < len(self.text):
            if self.text[i] == "(":
                depth += 1
            elif self.text[i] == ")":
                depth -= 1
                if depth == 0:
                    break
            i += 1
        if depth:
            raise self.error("no matching ')' for the predicate", open_pos)
        stop = i
        self.pos = stop + 1
        parts: list[tuple[int, int]] = []
        depth, s0, j = 0, open_pos + 1, open_pos + 1
        while j < stop:
            ch = self.text[j]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif depth == 0 and self.text.startswith("||", j):
                raise self.unknown("a predicate with '||' is not a conjunction of affine constraints "
                                 "(not modelled)", j, 2)
            elif depth == 0 and self.text.startswith("&&", j):
                parts.append((s0, j))
                s0 = j + 2
                j += 1
            j += 1
        parts.append((s0, stop))
        return tuple(self.comparison(a, b, scope, iters) for a, b in parts)

    def comparison(self, start: int, stop: int, scope: tuple[str, ...], iters: tuple[_Iter, ...]) -> Cond:
        # strip one level of enclosing parentheses: "(i < 6)"
        while True:
            raw = self.text[start:stop]
            lead = len(raw) - len(raw.lstrip())
            trail = len(raw) - len(raw.rstrip())
            a, b = start + lead, stop - trail
            if a < b and self.text[a] == "(" and self.text[b - 1] == ")" and self._matching(a) == b - 1:
                start, stop = a + 1, b - 1
                continue
            break
        depth = 0
        for j in range(start, stop):
            ch = self.text[j]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif depth == 0 and ch in "<>=!":
                op = self.text[j:j + 2] if self.text[j:j + 2] in ("<=", ">=", "==", "!=") else ch
                if op in ("=", "!"):
                    continue
                if op == "!=":
                    raise self.unknown("'!=' in a predicate is not a convex affine constraint (not modelled)", j, 2)
                try:
                    lhs = self.index_expr(start, j, scope, iters)
                    rhs = self.index_expr(j + len(op), stop, scope, iters)
                except ParseError as exc:
                    raise self.unknown(f"a predicate must compare affine expressions of the loop and iteration "
                                     f"variables: {exc.message}", exc.offset) from None
                return (lhs, op, rhs)
        raise self.unknown("a predicate must be a comparison (< <= > >= ==) of affine expressions", start,
                         max(1, stop - start))

    def _matching(self, open_pos: int) -> int:
        depth = 0
        for j in range(open_pos, len(self.text)):
            if self.text[j] == "(":
                depth += 1
            elif self.text[j] == ")":
                depth -= 1
                if depth == 0:
                    return j
        return -1

    def bracket_list(
        self, open_: str, close: str, scope: tuple[str, ...], iters: tuple[_Iter, ...]
    ) -> list[AffineExpr]:
        self.expect(open_)
        start = self.pos
        depth = 1
        i = self.pos
        while i < len(self.text) and depth:
            ch = self.text[i]
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            if ch == "\n":
                break
            i += 1
        if depth:
            raise self.error(f"no matching {close!r}", start - 1)
        self.pos = i
        return self.index_list(start, i - 1, scope, iters)

    def index_list(
        self, start: int, stop: int, scope: tuple[str, ...], iters: tuple[_Iter, ...]
    ) -> list[AffineExpr]:
        out: list[AffineExpr] = []
        depth = 0
        s = start
        for i in range(start, stop + 1):
            ch = self.text[i] if i < stop else ","
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif ch == "," and depth == 0:
                out.append(self.index_expr(s, i, scope, iters))
                s = i + 1
        return out

    def index_expr(self, start: int, stop: int, scope: tuple[str, ...], iters: tuple[_Iter, ...]) -> AffineExpr:
        raw = self.text[start:stop]
        if not raw.strip():
            raise self.error("expected an index expression", start)
        ip = _IndexParser(self, start, stop, scope)
        e = ip.parse()
        if ip.truncating and self.check_truncation:
            for dividend, divisor, op, pos in ip.truncating:
                self.check_truncating(dividend, divisor, op, pos, scope, iters)
        return e

    def check_truncating(
        self, dividend: AffineExpr, divisor: int, op: str, pos: int, scope: tuple[str, ...], iters: tuple[_Iter, ...]
    ) -> None:
        """C's ``/`` and ``%`` truncate toward zero. With a positive divisor
        ``c`` they equal ``floordiv``/``mod`` at a point exactly when the
        dividend ``a`` is nonnegative or a multiple of ``c``, that is when
        ``max(a, -(a mod c)) >= 0``; that is proven over the enclosing loops'
        ranges (isl/z3 via :func:`prove_implies`), else the op is refused with a
        point where the two semantics differ, re-checked by evaluation."""
        what = "'/'" if op == "/" else "'%'"
        advice = "write 'floordiv' or 'mod' for floor semantics"
        if divisor <= 0:
            raise self.unknown(
                f"{what} truncates toward zero in CINN and its divisor {divisor} is not positive, so it differs "
                f"from floor semantics; {advice}", pos)
        loops = self.loop_stack
        dims = [Variable(Interval(lo, lo + ext - 1), name) for name, lo, ext in loops]
        resolved = dividend.substitute(dims=[Dim(i) for i in range(len(loops))] + [v for _, v in iters])
        agree = emax(resolved, -(resolved.mod(divisor)))
        names = [n for n, _, _ in loops]
        shown = format_expr(dividend, _namer(scope))

        def differs(point: Sequence[int]) -> bool:
            a = resolved.evaluate(list(point))
            trunc_q = abs(a) // divisor * (1 if a >= 0 else -1)
            return trunc_q != a // divisor

        if not dims:
            if not differs([]):
                return
            raise self.unknown(f"{what} truncates toward zero in CINN and its dividend {shown} is "
                             f"{resolved.evaluate([])}, where floor semantics differ; {advice}", pos)
        domain = IndexingMap(dims, [resolved])
        verdict = prove_implies(domain, agree, Interval(0, _HUGE))
        if verdict.proved:
            return
        ce = verdict.counterexample
        if verdict.refuted and ce is not None:
            point = [v for _, v in ce.values[: len(dims)]]
            if domain.contains(point) and differs(point):
                at = ", ".join(f"{n} = {v}" for n, v in zip(names, point))
                raise self.unknown(
                    f"{what} truncates toward zero in CINN and its dividend {shown} is {resolved.evaluate(point)} "
                    f"at ({at}), where C's truncation and floor semantics differ; {advice}", pos)
        raise self.unknown(
            f"{what} truncates toward zero in CINN; it could not be proven equal to floor semantics "
            f"({verdict.status}: {verdict.reason}); {advice}", pos)

    # -- values ---------------------------------------------------------------
    def value_line(self, scope: tuple[str, ...], iters: tuple[_Iter, ...] = ()) -> Value:
        self.skip_ws_inline()
        end = self.line_end()
        toks: list[tuple[str, str, int]] = []
        i = self.pos
        while i < end:
            if self.text[i].isspace():
                i += 1
                continue
            if self.text.startswith("//", i):
                end = i
                break
            m = _VTOKEN_RE.match(self.text, i, end)
            if m is None or m.end() == i:
                raise self.error(f"unexpected character {self.text[i]!r} in a value", i)
            kind = m.lastgroup or ""
            toks.append((kind, m.group(kind), m.start(kind)))
            i = m.end()
        if not toks:
            raise self.error("expected a value after '='")
        vp = _ValueParser(self, toks, end, scope, iters)
        v = vp.expr()
        if vp.i != len(toks):
            raise self.error(f"unexpected {toks[vp.i][1]!r} in a value", toks[vp.i][2], len(toks[vp.i][1]))
        self.pos = end
        return v

    def skip_ws_inline(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1


_HUGE = 2**80  # above every sum of int64 sizes


class _IndexParser:
    """A quasi-affine index expression over the scope's names, in CINN's syntax.

    ``+ - *``, ``floordiv mod ceildiv`` (floor semantics), ``min(a, b)``,
    ``max(a, b)``, parentheses and C's truncating ``/`` and ``%``: each of those
    is read as ``floordiv``/``mod`` and recorded in ``truncating`` with its
    dividend, so the reader can prove the two semantics agree there.
    """

    _KEYWORDS = ("floordiv", "mod", "ceildiv")

    def __init__(self, r: _Reader, start: int, stop: int, scope: tuple[str, ...]) -> None:
        self.r = r
        self.scope = scope
        self.stop = stop
        self.toks: list[tuple[str, str, int]] = []
        self.truncating: list[tuple[AffineExpr, int, str, int]] = []
        i = start
        text = r.text
        while i < stop:
            if text[i].isspace():
                i += 1
                continue
            m = _ITOKEN_RE.match(text, i, stop)
            if m is None or m.end() == i:
                raise r.error(f"unexpected character {text[i]!r} in an index expression", i)
            kind = m.lastgroup or ""
            self.toks.append((kind, m.group(kind), m.start(kind)))
            i = m.end()
        self.i = 0

    def peek(self) -> tuple[str, str, int]:
        return self.toks[self.i] if self.i < len(self.toks) else ("eof", "", self.stop)

    def fail(self, what: str) -> ParseError:
        kind, text, pos = self.peek()
        shown = repr(text) if kind != "eof" else "end of the index"
        return self.r.error(f"expected {what}, found {shown}", pos, max(1, len(text)))

    def take(self, text: str) -> bool:
        kind, t, _ = self.peek()
        if t == text and kind in ("p", "id"):
            self.i += 1
            return True
        return False

    def parse(self) -> AffineExpr:
        e = self.expr()
        if self.i != len(self.toks):
            raise self.fail("an operator or the end of the index")
        return e

    def expr(self) -> AffineExpr:
        e = self.term()
        while True:
            if self.take("+"):
                e = self.wrap(lambda a, b: a + b, e, self.term())
            elif self.take("-"):
                e = self.wrap(lambda a, b: a - b, e, self.term())
            else:
                return e

    def wrap(self, fn: Callable[[AffineExpr, AffineExpr], AffineExpr], a: AffineExpr, b: AffineExpr,
             pos: int | None = None) -> AffineExpr:
        try:
            return fn(a, b)
        except VerifiedIndexingError as exc:  # a product of variables...: well-formed, not modelled
            at = self.toks[self.i - 1][2] if pos is None else pos
            raise self.r.unknown(f"a non-affine index: {exc}", at) from None

    def term(self) -> AffineExpr:
        e = self.unary()
        while True:
            kind, op, pos = self.peek()
            if not ((kind == "p" and op in "*/%") or (kind == "id" and op in self._KEYWORDS)):
                return e
            self.i += 1
            rhs = self.unary()
            if op == "*":
                e = self.wrap(lambda a, b: a * b, e, rhs, pos)
                continue
            c = rhs.evaluate([]) if not rhs.variables() else None
            if c is None:
                raise self.r.unknown(f"the divisor of {op!r} must be a constant", pos, len(op))
            if c == 0:
                raise self.r.error(f"division by zero ({op!r} by 0)", pos, len(op))
            if op in "/%":
                self.truncating.append((e, c, op, pos))
            if op in ("/", "floordiv"):
                e = self.wrap(lambda a, b: a.floordiv(b), e, rhs, pos)
            elif op in ("%", "mod"):
                e = self.wrap(lambda a, b: a.mod(b), e, rhs, pos)
            else:
                e = self.wrap(lambda a, b: a.ceildiv(b), e, rhs, pos)

    def unary(self) -> AffineExpr:
        if self.take("-"):
            return -self.unary()
        return self.primary()

    def primary(self) -> AffineExpr:
        kind, text, pos = self.peek()
        if kind == "num":
            self.i += 1
            return Const(int(text))
        if kind == "p" and text == "(":
            self.i += 1
            e = self.expr()
            if not self.take(")"):
                raise self.fail("')'")
            return e
        if kind == "id" and text in ("min", "max"):
            self.i += 1
            if not self.take("("):
                raise self.fail(f"'(' after {text}")
            a = self.expr()
            if not self.take(","):
                raise self.fail("','")
            b = self.expr()
            if not self.take(")"):
                raise self.fail("')'")
            return emin(a, b) if text == "min" else emax(a, b)
        if kind == "id" and text not in self._KEYWORDS:
            self.i += 1
            if text not in self.scope:
                raise self.r.error(f"unknown variable {text!r} (not a loop or iteration variable)", pos, len(text))
            return Dim(last_index(self.scope, text))
        raise self.fail("an index expression")


class _ValueParser:
    def __init__(
        self, r: _Reader, toks: list[tuple[str, str, int]], end: int, scope: tuple[str, ...], iters: tuple[_Iter, ...]
    ) -> None:
        self.r = r
        self.toks = toks
        self.i = 0
        self.end = end
        self.scope = scope
        self.iters = iters

    def peek(self) -> tuple[str, str, int]:
        return self.toks[self.i] if self.i < len(self.toks) else ("eof", "", self.end)

    def take(self, text: str) -> bool:
        if self.peek()[1] == text and self.peek()[0] == "p":
            self.i += 1
            return True
        return False

    def need(self, text: str) -> None:
        if not self.take(text):
            _k, t, pos = self.peek()
            shown = repr(t) if t else "end of line"
            raise self.r.error(f"expected {text!r} in a value, found {shown}", pos)

    def binary(self, ops: tuple[str, ...], operand: Callable[[], Value]) -> Value:
        v = operand()
        while self.peek()[1] in ops and self.peek()[0] == "p":
            op = self.toks[self.i][1]
            self.i += 1
            v = BinOp(op, v, operand())
        return v

    def expr(self) -> Value:
        return self.binary(("||",), self.conj)

    def conj(self) -> Value:
        return self.binary(("&&",), self.compare)

    def compare(self) -> Value:
        return self.binary(("<", "<=", ">", ">=", "==", "!="), self.additive)

    def additive(self) -> Value:
        return self.binary(("+", "-"), self.term)

    def term(self) -> Value:
        v = self.unary()
        while self.peek()[1] in ("*", "/", "%") and self.peek()[0] == "p":
            op = self.toks[self.i][1]
            self.i += 1
            v = BinOp(op, v, self.unary())
        return v

    def unary(self) -> Value:
        if self.take("-"):
            return Neg(self.unary())
        if self.take("!"):
            return Call("!", (self.unary(),))
        return self.primary()

    def primary(self) -> Value:
        kind, text, pos = self.peek()
        if kind == "num":
            self.i += 1
            return Num(text)
        if kind == "p" and text == "(":
            self.i += 1
            v = self.expr()
            self.need(")")
            return v
        if kind == "id":
            self.i += 1
            nxt = self.peek()
            if nxt[0] == "p" and nxt[1] == "[":
                # The index list: find the matching ']' in the raw text.
                depth = 0
                j = self.i
                while j < len(self.toks):
                    t = self.toks[j]
                    if t[0] == "p" and t[1] in "([":
                        depth += 1
                    elif t[0] == "p" and t[1] in ")]":
                        depth -= 1
                        if depth == 0:
                            break
                    j += 1
                if j == len(self.toks):
                    raise self.r.error("no matching ']'", nxt[2])
                indices = self.r.index_list(nxt[2] + 1, self.toks[j][2], self.scope, self.iters)
                self.i = j + 1
                return Load(text, tuple(indices))
            if nxt[0] == "p" and nxt[1] == "(":
                self.i += 1
                args: list[Value] = []
                if not self.take(")"):
                    args.append(self.expr())
                    while self.take(","):
                        args.append(self.expr())
                    self.need(")")
                return Call(text, tuple(args))
            if text in self.scope:
                return IndexValue(Dim(last_index(self.scope, text)))
            raise self.r.error(f"unknown name {text!r} (not a loop or iteration variable)", pos, len(text))
        shown = repr(text) if text else "end of line"
        raise self.r.error(f"expected a value, found {shown}", pos)


_FUNCTION_RE = re.compile(rf"function\s+{_IDENT}\s*\([^()]*\)")


def size_names(text: str) -> tuple[str, ...]:
    """The size parameters of a CINN program: names used in a loop extent that
    are not loop or iteration variables, in order of appearance."""
    loop_vars = set(re.findall(rf"for\s*\(\s*({_IDENT})", text))
    bound = {n.strip() for m in _BIND_RE.finditer(text) for n in m.group(1).split(",")}
    out: list[str] = []
    for m in re.finditer(r"for\s*\(", text):
        head = _for_header(text, m.start())
        if head is None:
            continue
        for name in re.findall(_IDENT, text[head[1]:head[2]]):
            if name in ("floordiv", "mod", "ceildiv", "min", "max", "ll", "l") or name in loop_vars | bound:
                continue
            if name not in out:
                out.append(name)
    top = re.match(r"\s*if\s*\(", text)  # a size condition around the whole program (a conditional rewrite)
    if top is not None:
        depth, i = 1, top.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        for name in re.findall(_IDENT, text[top.end():i]):
            if name not in out and name not in loop_vars | bound:
                out.append(name)
    return tuple(out)


def with_sizes(stmt: Stmt, sizes: Sequence[str]) -> Stmt:
    """``stmt`` inside the pseudo-loops of its size parameters (outermost first)."""
    for name in reversed(sizes):
        stmt = For("size", name, 0, SIZE_MAX + 1, (stmt,))
    return stmt


def program_sizes(p: Stmt) -> tuple[str, ...]:
    """The size parameters of a program (its leading ``size`` pseudo-loops)."""
    out: list[str] = []
    while isinstance(p, For) and p.kind == "size":
        out.append(p.var)
        p = p.body[0]
    return tuple(out)


def at_sizes(p: Stmt, values: dict[str, int]) -> Stmt:
    """The program with each size parameter fixed (its pseudo-loop runs once, at
    the given value): what the plain interpreters run."""
    if isinstance(p, For) and p.kind == "size":
        if p.var not in values:
            raise VerifiedIndexingError(f"no value for the size parameter {p.var}")
        return For("size", p.var, values[p.var], 1, tuple(at_sizes(c, values) for c in p.body))
    return p


def loop_range(f: For, scope_values: Sequence[int]) -> range:
    """The values the loop runs over, its symbolic extent evaluated at the enclosing scope's values."""
    if f.bound is None:
        return range(f.start, f.start + f.extent)
    return range(f.start, f.start + max(0, f.bound.evaluate(list(scope_values))))


def parse_program(text: str, source: str = "<input>") -> Stmt:
    """The program of ``text``: one top-level statement (usually ``ScheduleBlock(root)``),
    optionally wrapped in CINN's ``function NAME (args) { ... }``. Names used in
    loop extents (``for (i, 0, N)``) are size parameters: the program is wrapped
    in their pseudo-loops (:func:`with_sizes`)."""
    check_limits(text, source)
    r = _Reader(text, source)
    sizes = size_names(text)
    r.loop_stack = [(n, 0, SIZE_MAX + 1) for n in sizes]
    r.skip_ws()
    fm = _FUNCTION_RE.match(text, r.pos)
    if fm is not None:  # ``function fn_name (_A, _B)`` wrapper, as CINN prints lowered functions
        r.pos = fm.end()
        r.expect("{")
        stmt, _ = r.stmt(sizes, None)
        r.expect("}")
    else:
        stmt, _ = r.stmt(sizes, None)
    r.skip_ws()
    if r.pos != len(text):
        raise r.error(f"expected end of input after the top-level statement, found {r.found()}")
    return unique_names(with_sizes(stmt, sizes), set(re.findall(_IDENT, text)))


@dataclass(frozen=True)
class BlockContext:
    """A ScheduleBlock with its enclosing loops (outer first), its position in
    program order, and the predicates around it (each over a prefix of the
    loops, so over the block's loop variables)."""

    block: ScheduleBlock
    loops: tuple[For, ...]
    order: int
    guards: tuple[If, ...] = ()


def program_params(p: Stmt) -> tuple[str, ...]:
    """The buffers the caller of the program sees (``ScheduleBlock.params`` of
    its root block, under any size pseudo-loops and guards); ``()`` when none
    are declared."""
    stack: list[Stmt] = [p]
    while stack:
        s = stack.pop()
        if isinstance(s, ScheduleBlock):
            if s.params:
                return s.params
            if s.name == "root":
                return ()
        body = getattr(s, "body", None)
        if isinstance(body, tuple):
            stack.extend(reversed(body))
    return ()


def find_block(contexts: Sequence[BlockContext], name: str) -> BlockContext:
    """The one ``ScheduleBlock`` named ``name`` among ``contexts`` (from
    :func:`walk_blocks`; the very object, so callers may compare by identity); a
    missing or repeated name is a :class:`VerifiedIndexingError` listing the blocks."""
    matches = [c for c in contexts if c.block.name == name]
    if not matches:
        known = ", ".join(c.block.name for c in contexts)
        raise VerifiedIndexingError(f"no ScheduleBlock named {name!r} (blocks: {known})")
    if len(matches) > 1:
        raise VerifiedIndexingError(f"several ScheduleBlocks are named {name!r}")
    return matches[0]


def walk_blocks(p: Stmt) -> Iterator[BlockContext]:
    """Every ScheduleBlock of the program in order, with its enclosing loops."""
    counter = [0]

    def go(s: Stmt, loops: tuple[For, ...], guards: tuple[If, ...]) -> Iterator[BlockContext]:
        if isinstance(s, ScheduleBlock):
            yield BlockContext(s, loops, counter[0], guards)
            counter[0] += 1
            for c in s.body:
                yield from go(c, loops, guards)
        elif isinstance(s, For):
            for c in s.body:
                yield from go(c, (*loops, s), guards)
        elif isinstance(s, Group):
            for c in s.body:
                yield from go(c, loops, guards)
        elif isinstance(s, If):
            for c in s.body:
                yield from go(c, loops, (*guards, s))

    yield from go(p, (), ())


def last_index(scope: Sequence[str], name: str) -> int:
    """The position of the innermost binding of ``name`` in ``scope`` (outer
    names first): a name bound again in an inner frame shadows the outer one."""
    for k in range(len(scope) - 1, -1, -1):
        if scope[k] == name:
            return k
    raise ValueError(f"{name!r} is not in the scope")


def unique_names(p: Stmt, taken: Collection[str] = ()) -> Stmt:
    """``p`` with every name of every scope distinct.

    The IR is positional (``Dim(k)`` is the k-th name of the statement's scope),
    so a loop or iteration variable that shadows an enclosing one (a new frame,
    as TVMScript and CINN scope a block's bindings) is well defined, but its
    printed text would be ambiguous. Each shadowing name is renamed ``NAME_1``,
    ``NAME_2``... (the first not in ``taken`` and not used in ``p``), as TVM's
    printer does; the scope of every statement follows. A program without
    shadowing is returned unchanged (the same object)."""
    used: set[str] = set(taken)
    _collect_names(p, used)
    renamed = [False]

    def fresh(name: str, visible: Sequence[str]) -> str:
        if name not in visible:
            return name
        k = 1
        while f"{name}_{k}" in used:
            k += 1
        used.add(f"{name}_{k}")
        renamed[0] = True
        return f"{name}_{k}"

    def go(s: Stmt, loops: tuple[str, ...], iters: tuple[str, ...]) -> tuple[Stmt, tuple[str, ...]]:
        scope = loops + iters
        if isinstance(s, (Store, Bind, For, If)) and len(s.scope) > len(scope):
            raise NotModelledError("a statement uses more enclosing names than its loops and block bind "
                                   "(not modelled)")
        if isinstance(s, Store):
            return Store(s.tensor, s.indices, s.value, scope[: len(s.scope)]), iters
        if isinstance(s, Bind):
            outer = scope[: len(s.scope)]
            names: list[str] = []
            for n in s.names:
                names.append(fresh(n, outer + tuple(names)))
            return Bind(tuple(names), s.values, outer), tuple(names)
        if isinstance(s, For):
            var = s.var if s.kind == "size" else fresh(s.var, scope)
            # the reader's scope inside a loop in a block: the loops, this loop, then the block's names
            body = tuple(go(c, (*loops, var), iters)[0] for c in s.body)
            return For(s.kind, var, s.start, s.extent, body, s.bound, scope[: len(s.scope)]), iters
        if isinstance(s, If):
            return If(s.conds, tuple(go(c, loops, iters)[0] for c in s.body), scope[: len(s.scope)]), iters
        if isinstance(s, Group):
            return Group(tuple(go(c, loops, iters)[0] for c in s.body)), iters
        its: tuple[str, ...] = ()
        out: list[Stmt] = []
        for c in s.body:
            c2, its = go(c, loops, its)
            out.append(c2)
        return ScheduleBlock(s.name, tuple(out), s.params), iters

    result = go(p, (), ())[0]
    return result if renamed[0] else p


def _collect_names(s: Stmt, out: set[str]) -> None:
    if isinstance(s, Store):
        out.add(s.tensor)
        out.update(s.scope)
        return
    if isinstance(s, Bind):
        out.update(s.names)
        return
    if isinstance(s, For):
        out.add(s.var)
    if isinstance(s, ScheduleBlock):
        out.add(s.name)
    for c in s.body:
        _collect_names(c, out)
