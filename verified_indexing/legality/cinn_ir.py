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
``VAR = MIN .. MIN + EXTENT - 1``), ``v0, v1 = axis.bind(e0, e1)`` and stores
``T[e, ...] = value``, one per line. Index expressions (``e``) are quasi-affine in
the enclosing loop variables and block iteration variables: ``+ - *``,
``floordiv``, ``mod``, ``ceildiv``, ``min``, ``max``. C's ``/`` and ``%`` in an
index are refused (they truncate toward zero; write ``floordiv``/``mod``).
Values are uninterpreted terms: loads ``T[e, ...]``, numbers, calls
``f(a, b)``, binary ``+ - * / %`` and unary ``-``.

Promises: :func:`format_program` prints the layout above (two spaces per level,
binary operations parenthesized as CINN prints them) and
``parse_program(format_program(p)) == p``; malformed input raises a
positioned :class:`ParseError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from verified_indexing.errors import ParseError, VerifiedIndexingError
from verified_indexing.expr import AffineExpr, Dim
from verified_indexing.syntax import format_expr, parse_expr

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
    "parse_program",
    "format_program",
    "format_value",
    "walk_blocks",
    "BlockContext",
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
    kind: str
    var: str
    start: int
    extent: int
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class Group:
    body: tuple[Stmt, ...]


@dataclass(frozen=True)
class ScheduleBlock:
    name: str
    body: tuple[Stmt, ...]


Stmt = Store | Bind | For | Group | ScheduleBlock


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
        if isinstance(s, For):
            head = f"{s.kind + ' ' if s.kind else ''}for ({s.var}, {s.start}, {s.extent})"
            out.append(pad + head)
        elif isinstance(s, ScheduleBlock):
            out.append(f"{pad}ScheduleBlock({s.name})")
        out.append(pad + "{")
        for c in s.body:
            _fmt_stmt(c, depth + 1, out)
        out.append(pad + "}")


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
_FOR_RE = re.compile(
    rf"(?:(serial|parallel|vectorize|unroll|gpu_block|gpu_thread)\s+)?"
    rf"for\s*\(\s*({_IDENT})\s*,\s*(-?\d+)\s*,\s*(\d+)\s*\)"
)
_BIND_RE = re.compile(rf"({_IDENT}(?:\s*,\s*{_IDENT})*)\s*=\s*axis\.bind\s*\(")
_STORE_RE = re.compile(rf"({_IDENT})\s*\[")
_VTOKEN_RE = re.compile(
    r"\s*(?:(?P<num>\d+\.\d*(?:e[+-]?\d+)?f?|\d+(?:e[+-]?\d+)?f?)"
    r"|(?P<id>[A-Za-z_][A-Za-z0-9_.]*)|(?P<p>[-+*/%()\[\],]))"
)


class _Reader:
    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.pos = 0

    def error(self, message: str, pos: int | None = None, length: int = 1) -> ParseError:
        return ParseError(message, self.text, self.pos if pos is None else pos, length, self.source)

    def skip_ws(self) -> None:
        while self.pos < len(self.text):
            if self.text[self.pos].isspace():
                self.pos += 1
            elif self.text.startswith("//", self.pos):
                nl = self.text.find("\n", self.pos)
                self.pos = len(self.text) if nl < 0 else nl
            else:
                return

    def found(self) -> str:
        t = self.text[self.pos : self.pos + 16].split("\n")[0]
        return repr(t) if t else "end of input"

    def expect(self, s: str) -> None:
        self.skip_ws()
        if not self.text.startswith(s, self.pos):
            raise self.error(f"expected {s!r}, found {self.found()}")
        self.pos += len(s)

    def line_end(self) -> int:
        nl = self.text.find("\n", self.pos)
        return len(self.text) if nl < 0 else nl

    # -- statements ---------------------------------------------------------
    def body(self, loops: tuple[str, ...], iters: tuple[str, ...] | None) -> tuple[Stmt, ...]:
        self.expect("{")
        out: list[Stmt] = []
        while True:
            self.skip_ws()
            if self.pos >= len(self.text):
                raise self.error("expected '}' to close the block, found end of input")
            if self.text[self.pos] == "}":
                self.pos += 1
                return tuple(out)
            stmt, new_iters = self.stmt(loops, iters)
            if new_iters is not None:
                iters = new_iters
            out.append(stmt)

    def stmt(self, loops: tuple[str, ...], iters: tuple[str, ...] | None) -> tuple[Stmt, tuple[str, ...] | None]:
        self.skip_ws()
        start = self.pos
        if self.text.startswith("{", self.pos):
            return Group(self.body(loops, iters)), None
        m = _SB_RE.match(self.text, self.pos)
        if m:
            self.pos = m.end()
            return ScheduleBlock(m.group(1), self.body(loops, ())), None
        m = _FOR_RE.match(self.text, self.pos)
        if m:
            self.pos = m.end()
            var = m.group(2)
            if var in loops:
                raise self.error(f"loop variable {var!r} shadows an enclosing loop", m.start(2), len(var))
            extent = int(m.group(4))
            return For(m.group(1) or "", var, int(m.group(3)), extent, self.body((*loops, var), iters)), None
        m = _BIND_RE.match(self.text, self.pos)
        if m:
            if iters is None:
                raise self.error("axis.bind outside a ScheduleBlock", start)
            names = tuple(n.strip() for n in m.group(1).split(","))
            for n in names:
                if n in loops or n in iters:
                    raise self.error(f"iteration variable {n!r} is already defined", start, len(m.group(1)))
            self.pos = m.end() - 1
            args = self.bracket_list("(", ")", loops)
            if len(args) != len(names):
                raise self.error(f"axis.bind binds {len(names)} names to {len(args)} values", start, len(m.group()))
            return Bind(names, tuple(args), loops), iters + names
        m = _STORE_RE.match(self.text, self.pos)
        if m:
            scope = loops + (iters or ())
            self.pos = m.end() - 1
            indices = self.bracket_list("[", "]", scope)
            self.expect("=")
            value = self.value_line(scope)
            return Store(m.group(1), tuple(indices), value, scope), None
        raise self.error(
            f"expected a statement (ScheduleBlock, for, axis.bind, a store or '{{'), found {self.found()}", start
        )

    def bracket_list(self, open_: str, close: str, scope: tuple[str, ...]) -> list[AffineExpr]:
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
        return self.index_list(start, i - 1, scope)

    def index_list(self, start: int, stop: int, scope: tuple[str, ...]) -> list[AffineExpr]:
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
                out.append(self.index_expr(s, i, scope))
                s = i + 1
        return out

    def index_expr(self, start: int, stop: int, scope: tuple[str, ...]) -> AffineExpr:
        raw = self.text[start:stop]
        if not raw.strip():
            raise self.error("expected an index expression", start)
        for m in re.finditer(r"[/%]", raw):
            raise self.error(
                "'/' and '%' truncate toward zero in CINN; write 'floordiv' or 'mod' in an index",
                start + m.start(),
            )
        names = {n: Dim(k) for k, n in enumerate(scope)}
        try:
            return parse_expr(raw, names, self.source)
        except ParseError as exc:
            raise ParseError(exc.message, self.text, start + exc.offset, exc.length, self.source) from None
        except VerifiedIndexingError as exc:
            raise self.error(str(exc), start, max(1, stop - start)) from None

    # -- values ---------------------------------------------------------------
    def value_line(self, scope: tuple[str, ...]) -> Value:
        self.skip_ws_inline()
        end = self.line_end()
        toks: list[tuple[str, str, int]] = []
        i = self.pos
        while i < end:
            if self.text[i].isspace():
                i += 1
                continue
            m = _VTOKEN_RE.match(self.text, i, end)
            if m is None or m.end() == i:
                raise self.error(f"unexpected character {self.text[i]!r} in a value", i)
            kind = m.lastgroup or ""
            toks.append((kind, m.group(kind), m.start(kind)))
            i = m.end()
        if not toks:
            raise self.error("expected a value after '='")
        vp = _ValueParser(self, toks, end, scope)
        v = vp.expr()
        if vp.i != len(toks):
            raise self.error(f"unexpected {toks[vp.i][1]!r} in a value", toks[vp.i][2], len(toks[vp.i][1]))
        self.pos = end
        return v

    def skip_ws_inline(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1


class _ValueParser:
    def __init__(self, r: _Reader, toks: list[tuple[str, str, int]], end: int, scope: tuple[str, ...]) -> None:
        self.r = r
        self.toks = toks
        self.i = 0
        self.end = end
        self.scope = scope

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

    def expr(self) -> Value:
        v = self.term()
        while self.peek()[1] in ("+", "-") and self.peek()[0] == "p":
            op = self.toks[self.i][1]
            self.i += 1
            v = BinOp(op, v, self.term())
        return v

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
                indices = self.r.index_list(nxt[2] + 1, self.toks[j][2], self.scope)
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
                return IndexValue(Dim(self.scope.index(text)))
            raise self.r.error(f"unknown name {text!r} (not a loop or iteration variable)", pos, len(text))
        shown = repr(text) if text else "end of line"
        raise self.r.error(f"expected a value, found {shown}", pos)


def parse_program(text: str, source: str = "<input>") -> Stmt:
    """The program of ``text``: one top-level statement (usually ``ScheduleBlock(root)``)."""
    r = _Reader(text, source)
    stmt, _ = r.stmt((), None)
    r.skip_ws()
    if r.pos != len(text):
        raise r.error(f"expected end of input after the top-level statement, found {r.found()}")
    return stmt


@dataclass(frozen=True)
class BlockContext:
    """A ScheduleBlock with its enclosing loops (outer first) and its position
    in program order."""

    block: ScheduleBlock
    loops: tuple[For, ...]
    order: int


def walk_blocks(p: Stmt) -> Iterator[BlockContext]:
    """Every ScheduleBlock of the program in order, with its enclosing loops."""
    counter = [0]

    def go(s: Stmt, loops: tuple[For, ...]) -> Iterator[BlockContext]:
        if isinstance(s, ScheduleBlock):
            yield BlockContext(s, loops, counter[0])
            counter[0] += 1
            for c in s.body:
                yield from go(c, loops)
        elif isinstance(s, For):
            for c in s.body:
                yield from go(c, (*loops, s))
        elif isinstance(s, Group):
            for c in s.body:
                yield from go(c, loops)

    yield from go(p, ())
