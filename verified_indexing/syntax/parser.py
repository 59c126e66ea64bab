"""Parsing XLA indexing maps, MLIR affine maps and expressions.

Accepted, for indexing maps (the spec document's syntax and XLA's dumps):

* ``(d0, d1)[s0, s1]{rt0} -> (expr, ...)`` followed by ``, domain:`` (or a line
  break and ``domain:``) and entries ``name in [lo, hi]`` / ``expr in [lo, hi]``,
  separated by commas or just by line breaks; the first entry naming a variable
  sets its bounds, every other entry is a constraint;
* custom variable names (``th_x``, ``bl_z``, ``vector_elem``), ``KNOWN EMPTY``,
  ``UNDEFINED``, XLA's trailing ``is_simplified: true|false``, and the wrappers
  ``#xla.indexing_map<"...">`` / ``#xla_gpu.indexing_map<...>``;
* expressions with ``+``, ``-``, unary minus, ``*``, ``floordiv`` (also spelled
  ``/`` or ``floorDiv``), ``ceildiv``, ``mod`` (also ``%``), ``truncdiv`` and
  ``truncmod`` (C's rounding toward zero; read as their exact floor forms, see
  :func:`~verified_indexing.expr.truncdiv_expr`), ``min(a, b, ...)``,
  ``max(a, b, ...)``, parentheses, and ``100d0`` for ``100 * d0``. Precedence is
  MLIR's: unary minus binds tightest, then ``* floordiv ceildiv mod`` (left to
  right), then ``+ -``.

A line starting with ``//`` is a comment (lit tests, MLIR files: see
:mod:`verified_indexing.syntax.comments`).

Every malformed input raises :class:`~verified_indexing.errors.ParseError` with
the line, the column, a caret under the offending text and what was expected.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from verified_indexing.affine_map import AffineMap
from verified_indexing.errors import MapError, ParseError, SemiAffineError, ZeroDivisorError
from verified_indexing.expr import (
    AffineExpr,
    Const,
    Dim,
    RtSym,
    Sym,
    _Var,
    emax,
    emin,
    truncdiv_expr,
    truncmod_expr,
)
from verified_indexing.indexing_map import IndexingMap, Variable
from verified_indexing.interval import Interval
from verified_indexing.syntax.comments import blank_comments, double_slash_error
from verified_indexing.syntax.suggest import MAP_WORDS, did_you_mean

__all__ = ["parse_indexing_map", "parse_affine_map", "parse_expr", "parse_map", "parse_domain", "Token", "tokenize"]

_KEYWORDS = {"floordiv", "floorDiv", "ceildiv", "ceilDiv", "mod", "min", "max", "in", "domain", "truncdiv", "truncmod"}
_MUL_OPS = {"*": "mul", "/": "floordiv", "%": "mod", "floordiv": "floordiv", "floorDiv": "floordiv",
            "ceildiv": "ceildiv", "ceilDiv": "ceildiv", "mod": "mod", "truncdiv": "truncdiv", "truncmod": "truncmod"}
_TOKEN_RE = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<int>\d+)
  | (?P<ident>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<arrow>->)
  | (?P<punct>[()\[\]{},:+\-*/%<>"\#])
    """,
    re.VERBOSE,
)


@dataclass(frozen=True)
class Token:
    kind: str  # "int", "ident", "punct", "arrow", "eof"
    text: str
    offset: int

    @property
    def end(self) -> int:
        return self.offset + len(self.text)


def tokenize(text: str, source: str = "<input>", start: int = 0, stop: int | None = None) -> list[Token]:
    """Tokens of ``text[start:stop]`` with offsets into ``text``."""
    stop = len(text) if stop is None else stop
    pos = start
    out: list[Token] = []
    while pos < stop:
        m = _TOKEN_RE.match(text, pos, stop)
        if m is None:
            raise ParseError(f"unexpected character {text[pos]!r}", text, pos, 1, source)
        kind = m.lastgroup or ""
        if kind == "punct" and m.group() == "/" and text.startswith("/", m.end()):
            raise double_slash_error(text, pos, source)
        if kind != "ws":
            out.append(Token("punct" if kind == "arrow" else kind, m.group(), pos))
        pos = m.end()
    # the end of input is placed right after the last token (not after trailing white space or a final
    # newline), so "found end of input" points at the line the text ends on
    out.append(Token("eof", "", out[-1].end if out else start))
    return out


_DEFAULT_NAME_RE = re.compile(r"(d|s|rt)(\d+)\Z")

from verified_indexing.syntax.limits import MAX_NESTING, check_limits  # noqa: E402  (one limit for every parser)


def _default_lookup(name: str) -> AffineExpr | None:
    m = _DEFAULT_NAME_RE.match(name)
    if m is None:
        return None
    kind, index = m.group(1), int(m.group(2))
    return {"d": Dim, "s": Sym, "rt": RtSym}[kind](index)


class _Parser:
    def __init__(self, text: str, source: str, start: int = 0, stop: int | None = None) -> None:
        self.text = text
        self.source = source
        self.toks = tokenize(text, source, start, stop)
        self.i = 0
        self.depth = 0
        self.lookup: Callable[[str], AffineExpr | None] = _default_lookup

    # -- token helpers --------------------------------------------------------
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def peek(self, k: int = 1) -> Token:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def advance(self) -> Token:
        t = self.toks[self.i]
        if t.kind != "eof":
            self.i += 1
        return t

    def error(self, message: str, tok: Token | None = None) -> ParseError:
        t = tok or self.tok
        shown = "end of input" if t.kind == "eof" else repr(t.text)
        return ParseError(f"{message}, found {shown}{self.hint(t)}", self.text, t.offset, max(1, len(t.text)),
                          self.source)

    def hint(self, t: Token) -> str:
        """"Did you mean" for a misspelt keyword at or next to the error: the word itself ('floordvi',
        'mni'), the word after a comma ('domian'), or the word before '(' ('mni(' as min or max)."""

        def unknown(k: int) -> str | None:
            w = self.toks[k] if 0 <= k < len(self.toks) else None
            ok = w is not None and w.kind == "ident" and w.text not in _KEYWORDS and self.lookup(w.text) is None
            return w.text if ok and w is not None else None

        k = next((i for i, x in enumerate(self.toks) if x.offset == t.offset and x.kind == t.kind), -1)
        if (word := unknown(k)) is not None:
            return did_you_mean(word, MAP_WORDS)
        if t.text == "," and (word := unknown(k + 1)) is not None:
            return did_you_mean(word, ("domain",))
        if t.text == "(" and (word := unknown(k - 1)) is not None:
            return did_you_mean(word, ("min", "max"))
        return ""

    def at(self, text: str) -> bool:
        return self.tok.kind in ("punct", "ident") and self.tok.text == text

    def accept(self, text: str) -> bool:
        if self.at(text):
            self.advance()
            return True
        return False

    def expect(self, text: str, what: str | None = None) -> Token:
        if not self.at(text):
            raise self.error(f"expected {what or repr(text)}")
        return self.advance()

    def expect_eof(self) -> None:
        if self.tok.kind != "eof":
            raise self.error("expected end of input")

    def integer(self) -> int:
        neg = self.accept("-")
        if self.tok.kind != "int":
            raise self.error("expected an integer")
        v = self.int_value(self.advance())
        return -v if neg else v

    def int_value(self, t: Token) -> int:
        try:
            return int(t.text)
        except ValueError:  # Python's limit on the digits of an int conversion
            raise ParseError(
                f"integer literal of {len(t.text)} digits is too long", self.text, t.offset, len(t.text), self.source
            ) from None

    def nested(self, t: Token, parse: Callable[[], AffineExpr]) -> AffineExpr:
        """``parse()`` one nesting level deeper (refused beyond MAX_NESTING, never a RecursionError)."""
        self.depth += 1
        try:
            if self.depth > MAX_NESTING:
                raise ParseError(
                    f"expression nested more than {MAX_NESTING} levels deep", self.text, t.offset, 1, self.source
                )
            return parse()
        finally:
            self.depth -= 1

    # -- expressions ------------------------------------------------------------
    def expr(self) -> AffineExpr:
        lhs = self.term()
        while self.at("+") or self.at("-"):
            op = self.advance()
            rhs = self.term()
            lhs = lhs + rhs if op.text == "+" else lhs - rhs
        return lhs

    def term(self) -> AffineExpr:
        lhs = self.unary()
        while self.tok.kind in ("punct", "ident") and self.tok.text in _MUL_OPS:
            op = self.advance()
            rhs_tok = self.tok
            rhs = self.unary()
            kind = _MUL_OPS[op.text]
            try:
                if kind == "mul":
                    lhs = lhs * rhs
                else:
                    if not isinstance(rhs, Const):
                        raise SemiAffineError(f"the divisor of {kind} must be a constant, not {rhs}")
                    if kind in ("truncdiv", "truncmod"):  # no node of its own: the exact floor form
                        lhs = (truncdiv_expr if kind == "truncdiv" else truncmod_expr)(lhs, rhs.value)
                    else:
                        lhs = {"floordiv": lhs.floordiv, "ceildiv": lhs.ceildiv, "mod": lhs.mod}[kind](rhs)
            except (SemiAffineError, ZeroDivisorError) as exc:
                end = self.toks[self.i - 1].end if self.i > 0 else rhs_tok.end
                raise ParseError(str(exc), self.text, op.offset, max(1, end - op.offset), self.source) from None
        return lhs

    def unary(self) -> AffineExpr:
        t = self.tok
        if self.accept("-"):
            return -self.nested(t, self.unary)
        return self.primary()

    def primary(self) -> AffineExpr:
        t = self.tok
        if t.kind == "int":
            self.advance()
            value = Const(self.int_value(t))
            nxt = self.tok
            # "100d0" (a coefficient written against its variable) means 100 * d0.
            if nxt.kind == "ident" and nxt.offset == t.end and nxt.text not in _KEYWORDS:
                return value * self.primary()
            return value
        if t.kind == "ident" and t.text in ("min", "max"):
            self.advance()
            self.expect("(", f"'(' after {t.text}")
            args = [self.nested(t, self.expr)]
            while self.accept(","):
                args.append(self.nested(t, self.expr))
            self.expect(")", "')' or ','")
            if len(args) < 2:
                raise self.error(f"{t.text} needs at least two arguments", t)
            out = args[0]
            for a in args[1:]:
                out = emin(out, a) if t.text == "min" else emax(out, a)
            return out
        if t.kind == "ident" and t.text not in _KEYWORDS:
            e = self.lookup(t.text)
            if e is None:
                raise self.error("unknown variable (not declared in the map's header)")
            self.advance()
            return e
        if self.accept("("):
            e = self.nested(t, self.expr)
            self.expect(")", "')'")
            return e
        raise self.error("expected an expression (a number, a variable, '-', '(' , min or max)")

    # -- maps -------------------------------------------------------------------------
    def name_list(self, close: str) -> list[Token]:
        names: list[Token] = []
        if self.accept(close):
            return names
        while True:
            t = self.tok
            if t.kind != "ident" or t.text in _KEYWORDS:
                raise self.error("expected a variable name")
            self.advance()
            names.append(t)
            if self.accept(close):
                return names
            self.expect(",", f"',' or '{close}'")

    def header(self, allow_rt: bool) -> tuple[list[Token], list[Token], list[Token], list[AffineExpr]]:
        self.expect("(", "'(' to start the dimension list")
        dims = self.name_list(")")
        syms = self.name_list("]") if self.accept("[") else []
        rts: list[Token] = []
        if allow_rt and self.accept("{"):
            rts = self.name_list("}")
        table: dict[str, AffineExpr] = {}
        for kind, group in (("d", dims), ("s", syms), ("rt", rts)):
            for i, t in enumerate(group):
                if t.text in table:
                    raise self.error("duplicate variable name", t)
                table[t.text] = {"d": Dim, "s": Sym, "rt": RtSym}[kind](i)
        self.lookup = table.get
        self.expect("->", "'->'")
        self.expect("(", "'(' to start the results")
        results: list[AffineExpr] = []
        if not self.accept(")"):
            results.append(self.expr())
            while self.accept(","):
                results.append(self.expr())
            self.expect(")", "',' or ')'")
        return dims, syms, rts, results

    def interval(self) -> Interval:
        self.expect("[", "'['")
        lo = self.integer()
        self.expect(",", "','")
        hi = self.integer()
        self.expect("]", "']'")
        return Interval(lo, hi)

    def indexing_map(self) -> IndexingMap:
        if self.at("KNOWN") and self.peek().text == "EMPTY":
            self.advance()
            self.advance()
            return IndexingMap.known_empty()
        if self.accept("UNDEFINED"):
            return IndexingMap.undefined()
        start = self.tok
        dims, syms, rts, results = self.header(allow_rt=True)
        groups = {"d": dims, "s": syms, "rt": rts}
        bounds: dict[tuple[str, int], Interval] = {}
        constraints: list[tuple[AffineExpr, Interval]] = []
        had_comma = self.accept(",")
        if self.accept("domain"):
            self.expect(":", "':' after 'domain'")
            while self.tok.kind != "eof" and not self.at("is_simplified"):
                e = self.expr()
                self.expect("in", "'in'")
                iv = self.interval()
                if isinstance(e, _Var) and (e.kind, e.index) not in bounds:
                    bounds[(e.kind, e.index)] = iv
                else:  # includes a second entry for a variable: a constraint on it
                    constraints.append((e, iv))
                if not self.accept(","):
                    # Entries may be separated by line breaks alone.
                    if self.tok.kind == "eof" or self.at("is_simplified"):
                        break
            if self.accept("is_simplified"):
                self.expect(":", "':'")
                if not (self.accept("true") or self.accept("false")):
                    raise self.error("expected 'true' or 'false'")
        elif had_comma and self.accept("is_simplified"):
            self.expect(":", "':'")
            if not (self.accept("true") or self.accept("false")):
                raise self.error("expected 'true' or 'false'")
        self.expect_eof()
        variables: dict[str, list[Variable]] = {}
        for kind, group in groups.items():
            vs = []
            for i, t in enumerate(group):
                found = bounds.get((kind, i))
                if found is None:
                    raise ParseError(
                        f"variable {t.text!r} has no bounds: add '{t.text} in [lo, hi]' to the domain",
                        self.text, t.offset, len(t.text), self.source,
                    )
                name = None if t.text == f"{kind}{i}" else t.text
                vs.append(Variable(found, name))
            variables[kind] = vs
        try:
            return IndexingMap(variables["d"], results, variables["s"], variables["rt"], constraints)
        except MapError as exc:
            raise ParseError(str(exc), self.text, start.offset, 1, self.source) from None

    def affine_map(self) -> AffineMap:
        dims, syms, _, results = self.header(allow_rt=False)
        return AffineMap(len(dims), len(syms), results)


_WRAPPER_RE = re.compile(r"\s*#(?:xla|xla_gpu)\.indexing_map\s*<\s*(\"?)(.*?)\1\s*>\s*\Z", re.DOTALL)
_AFFINE_RE = re.compile(r"\s*(?:#\w+\s*=\s*)?affine_map\s*<(.*)>\s*\Z", re.DOTALL)


def _unwrap(text: str, regex: re.Pattern[str], group: int) -> tuple[int, int]:
    m = regex.match(text)
    if m is None:
        return 0, len(text)
    return m.start(group), m.end(group)


def parse_indexing_map(text: str, source: str = "<input>") -> IndexingMap:
    """An :class:`IndexingMap` from XLA's text (see the module docstring)."""
    text = blank_comments(text)
    check_limits(text, source)
    start, stop = _unwrap(text, _WRAPPER_RE, 2)
    return _Parser(text, source, start, stop).indexing_map()


def parse_affine_map(text: str, source: str = "<input>") -> AffineMap:
    """An :class:`AffineMap` from ``affine_map<(d0)[s0] -> (...)>`` (the wrapper
    and a ``#name =`` alias prefix are optional)."""
    text = blank_comments(text)
    check_limits(text, source)
    start, stop = _unwrap(text, _AFFINE_RE, 1)
    p = _Parser(text, source, start, stop)
    m = p.affine_map()
    p.expect_eof()
    return m


def parse_map(text: str, source: str = "<input>") -> IndexingMap | AffineMap:
    """An MLIR ``affine_map<...>``, or a map with no ``domain`` (no bounds), becomes
    an :class:`AffineMap`; anything else is read as an XLA indexing map."""
    text = blank_comments(text)
    plain = "->" in text and "domain" not in text and not _WRAPPER_RE.match(text)
    if plain or _AFFINE_RE.match(text):
        return parse_affine_map(text, source)
    return parse_indexing_map(text, source)


def parse_expr(
    text: str,
    names: Mapping[str, AffineExpr] | None = None,
    source: str = "<input>",
) -> AffineExpr:
    """An expression. Variables are looked up in ``names``, or by their
    positional names (``d0``, ``s1``, ``rt2``) when ``names`` is None."""
    text = blank_comments(text)
    check_limits(text, source)
    p = _Parser(text, source)
    if names is not None:
        p.lookup = names.get
    e = p.expr()
    p.expect_eof()
    return e


def parse_domain(
    text: str,
    names: Mapping[str, AffineExpr] | None = None,
    source: str = "<input>",
) -> list[tuple[AffineExpr, Interval]]:
    """Entries ``expr in [lo, hi]`` separated by commas or line breaks (a
    ``domain:`` prefix is optional), e.g. ``"d0 in [0, 9], d1 + s0 in [0, 20]"``."""
    text = blank_comments(text)
    check_limits(text, source)
    p = _Parser(text, source)
    if names is not None:
        p.lookup = names.get
    if p.accept("domain"):
        p.expect(":", "':' after 'domain'")
    out: list[tuple[AffineExpr, Interval]] = []
    while p.tok.kind != "eof":
        e = p.expr()
        p.expect("in", "'in'")
        out.append((e, p.interval()))
        p.accept(",")
    return out
