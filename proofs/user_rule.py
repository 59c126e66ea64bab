"""``check-rule``: prove a user's rewrite statement for all integers.

A statement is ``LHS -> RHS`` in the expression syntax of indexing maps, where
names ``c0, c1, ...`` are symbolic integer constants (they may multiply and divide:
``x * c0``, ``x floordiv c1``) and every other identifier (``x``, ``y``, ``d0``,
``s1``) is an integer variable. Side conditions (``--where``) are comma-separated
comparisons ``A op B`` with ``op`` one of ``< <= > >= == = !=``; the domain
(``--domain``) is entries ``e in [lo, hi]``. Products of two non-constants are
rejected, as in maps.

The claim ``where and domain -> LHS == RHS`` is encoded with the project's one z3
encoding (:class:`~verified_indexing.engines.z3.Z3Encoder`); a counterexample is
re-evaluated with plain integers before it is reported; on unknown, a small
exhaustive search may still find a (confirmed) counterexample.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verified_indexing.engines import Counterexample, Verdict, Z3Encoder
from verified_indexing.engines.deadline import budget_exhausted, remaining
from verified_indexing.errors import ParseError
from verified_indexing.expr import ceil_div, floor_div, floor_mod, trunc_div, trunc_mod
from verified_indexing.syntax.comments import blank_comments, double_slash_error
from verified_indexing.syntax.limits import check_limits
from verified_indexing.syntax.suggest import MAP_WORDS, did_you_mean

__all__ = ["Node", "parse_rule", "parse_conditions", "check_user_rule"]

_TOKEN_RE = re.compile(
    r"(?P<ws>\s+)|(?P<int>\d+)|(?P<ident>[A-Za-z_][A-Za-z0-9_.]*)|(?P<op>->|<=|>=|==|!=|[-+*/%(),<>=\[\]])"
)
_CONST_RE = re.compile(r"c\d+\Z")
_MUL = {"*": "mul", "/": "floordiv", "%": "mod", "floordiv": "floordiv", "ceildiv": "ceildiv", "mod": "mod",
        "truncdiv": "truncdiv", "truncmod": "truncmod"}
_CMP = ("<=", ">=", "==", "!=", "<", ">", "=")


@dataclass(frozen=True)
class Node:
    """A parsed term: ``op`` in int, var, const, add, sub, neg, mul, floordiv,
    ceildiv, mod, truncdiv, truncmod, min, max; ``args`` the children (or the value / name)."""

    op: str
    args: tuple[Any, ...]
    offset: int

    def names(self) -> set[str]:
        if self.op in ("var", "const"):
            return {self.args[0]}
        out: set[str] = set()
        for a in self.args:
            if isinstance(a, Node):
                out |= a.names()
        return out

    def is_constant(self) -> bool:
        return all(_CONST_RE.match(n) for n in self.names())

    def divisors(self) -> list[Node]:
        out: list[Node] = []
        if self.op in ("floordiv", "ceildiv", "mod", "truncdiv", "truncmod"):
            out.append(self.args[1])
        for a in self.args:
            if isinstance(a, Node):
                out += a.divisors()
        return out

    def evaluate(self, alg: _Ops, env: Mapping[str, Any]) -> Any:
        op, a = self.op, self.args
        if op == "int":
            return alg.lit(a[0])
        if op in ("var", "const"):
            return env[a[0]]
        vals = [x.evaluate(alg, env) for x in a]
        if op == "add":
            return vals[0] + vals[1]
        if op == "sub":
            return vals[0] - vals[1]
        if op == "neg":
            return -vals[0]
        if op == "mul":
            return vals[0] * vals[1]
        return getattr(alg, op)(vals[0], vals[1])


class _Ops:
    def lit(self, v: int) -> Any:
        return v

    def floordiv(self, a: Any, b: Any) -> Any:
        return floor_div(a, b)

    def ceildiv(self, a: Any, b: Any) -> Any:
        return ceil_div(a, b)

    def mod(self, a: Any, b: Any) -> Any:
        return floor_mod(a, b)

    def truncdiv(self, a: Any, b: Any) -> Any:
        return trunc_div(a, b)

    def truncmod(self, a: Any, b: Any) -> Any:
        return trunc_mod(a, b)

    def min(self, a: Any, b: Any) -> Any:
        return min(a, b)

    def max(self, a: Any, b: Any) -> Any:
        return max(a, b)


class _Z3Ops(_Ops):
    def __init__(self, enc: Z3Encoder) -> None:
        self.enc = enc

    def lit(self, v: int) -> Any:
        return self.enc.int_val(v)

    def floordiv(self, a: Any, b: Any) -> Any:
        return self.enc.floordiv(a, b)

    def ceildiv(self, a: Any, b: Any) -> Any:
        return self.enc.ceildiv(a, b)

    def mod(self, a: Any, b: Any) -> Any:
        return self.enc.mod(a, b)

    def truncdiv(self, a: Any, b: Any) -> Any:
        return self.enc.truncdiv(a, b)

    def truncmod(self, a: Any, b: Any) -> Any:
        return self.enc.truncmod(a, b)

    def min(self, a: Any, b: Any) -> Any:
        return self.enc.min(a, b)

    def max(self, a: Any, b: Any) -> Any:
        return self.enc.max(a, b)


class _Parser:
    def __init__(self, text: str, source: str) -> None:
        self.text, self.source = text, source
        self.toks: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            m = _TOKEN_RE.match(text, pos)
            if m is None:
                raise ParseError(f"unexpected character {text[pos]!r}", text, pos, 1, source)
            if m.group() == "/" and text.startswith("/", m.end()):
                raise double_slash_error(text, pos, source)
            if m.lastgroup != "ws":
                self.toks.append((m.lastgroup or "", m.group(), pos))
            pos = m.end()
        self.toks.append(("eof", "", len(text)))
        self.i = 0

    @property
    def tok(self) -> tuple[str, str, int]:
        return self.toks[self.i]

    def error(self, msg: str) -> ParseError:
        kind, text, off = self.tok
        shown = "end of input" if kind == "eof" else repr(text)
        hint = ""  # a misspelt keyword read as a name ('x floordvi c0'), or before '(' ('mni(x, 3)')
        if kind == "ident" and text not in _MUL:
            hint = did_you_mean(text, MAP_WORDS, cutoff=0.7)
        elif text == "(" and self.i > 0 and self.toks[self.i - 1][0] == "ident":
            hint = did_you_mean(self.toks[self.i - 1][1], ("min", "max"))
        return ParseError(f"{msg}, found {shown}{hint}", self.text, off, max(1, len(text)), self.source)

    def at(self, s: str) -> bool:
        return self.tok[0] in ("op", "ident") and self.tok[1] == s

    def accept(self, s: str) -> bool:
        if self.at(s):
            self.i += 1
            return True
        return False

    def expect(self, s: str) -> None:
        if not self.accept(s):
            raise self.error(f"expected {s!r}")

    def expr(self) -> Node:
        lhs = self.term()
        while self.at("+") or self.at("-"):
            op = self.toks[self.i]
            self.i += 1
            lhs = Node("add" if op[1] == "+" else "sub", (lhs, self.term()), op[2])
        return lhs

    def term(self) -> Node:
        lhs = self.unary()
        while self.tok[0] in ("op", "ident") and self.tok[1] in _MUL:
            _, text, off = self.toks[self.i]
            self.i += 1
            rhs = self.unary()
            kind = _MUL[text]
            if kind == "mul" and not (lhs.is_constant() or rhs.is_constant()):
                raise ParseError("semi-affine product: one side must be a constant (a number or c0, c1, ...)",
                                 self.text, off, len(text), self.source)
            if kind != "mul" and not rhs.is_constant():
                raise ParseError(f"the divisor of {kind} must be a constant (a number or c0, c1, ...)",
                                 self.text, off, len(text), self.source)
            if kind != "mul" and rhs.op == "int" and rhs.args[0] == 0:
                raise ParseError(f"{kind} by zero", self.text, off, len(text), self.source)
            lhs = Node(kind, (lhs, rhs), off)
        return lhs

    def unary(self) -> Node:
        off = self.tok[2]
        if self.accept("-"):
            return Node("neg", (self.unary(),), off)
        return self.primary()

    def primary(self) -> Node:
        kind, text, off = self.tok
        if kind == "int":
            self.i += 1
            node = Node("int", (int(text),), off)
            nk, nt, noff = self.tok
            if nk == "ident" and noff == off + len(text) and nt not in _MUL and nt not in ("min", "max"):
                return Node("mul", (node, self.primary()), off)
            return node
        if kind == "ident" and text in ("min", "max"):
            self.i += 1
            self.expect("(")
            args = [self.expr()]
            while self.accept(","):
                args.append(self.expr())
            self.expect(")")
            if len(args) < 2:
                raise ParseError(f"{text} needs at least two arguments", self.text, off, len(text), self.source)
            out = args[0]
            for a in args[1:]:
                out = Node(text, (out, a), off)
            return out
        if kind == "ident" and text not in _MUL and text != "in":
            self.i += 1
            return Node("const" if _CONST_RE.match(text) else "var", (text,), off)
        if self.accept("("):
            e = self.expr()
            self.expect(")")
            return e
        raise self.error("expected an expression (a number, a name, '-', '(', min or max)")

    def done(self) -> None:
        if self.tok[0] != "eof":
            raise self.error("expected end of input")


def parse_rule(text: str, source: str = "<rule>") -> tuple[Node, Node]:
    """``(lhs, rhs)`` of ``"LHS -> RHS"`` (``//`` comment lines are blank)."""
    text = blank_comments(text)
    check_limits(text, source)
    p = _Parser(text, source)
    lhs = p.expr()
    p.expect("->")
    rhs = p.expr()
    p.done()
    return lhs, rhs


def parse_conditions(text: str, source: str = "<where>") -> list[tuple[str, Node, Node]]:
    """Side conditions ``A op B, ...`` and domain entries ``e in [lo, hi]``, as
    ``(op, A, B)`` (an ``in`` entry becomes two comparisons; ``//`` comment lines are blank)."""
    text = blank_comments(text)
    check_limits(text, source)
    p = _Parser(text, source)
    out: list[tuple[str, Node, Node]] = []
    while p.tok[0] != "eof":
        a = p.expr()
        if p.accept("in"):
            p.expect("[")
            lo = p.expr()
            p.expect(",")
            hi = p.expr()
            p.expect("]")
            out += [(">=", a, lo), ("<=", a, hi)]
        else:
            _kind, op, _ = p.tok
            if op not in _CMP:
                raise p.error("expected a comparison (< <= > >= == != or 'in [lo, hi]')")
            p.i += 1
            out.append(("==" if op == "=" else op, a, p.expr()))
        if not p.accept(","):
            break
    p.done()
    return out


_CMP_FN: dict[str, Callable[[Any, Any], Any]] = {
    "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
}


def check_user_rule(
    text: str, where: str = "", domain: str = "", *, timeout: float = 10.0, lemmas: Sequence[str] = (),
    source: str = "<rule>", smt2: str | None = None,
) -> Verdict:
    """Prove ``LHS -> RHS`` under the conditions (see the module docstring).

    ``lemmas`` are proof hints in the language of ``where`` (comparisons over the
    rule's names, e.g. ``"x == (c0 * c1) * ((x floordiv c0) floordiv c1) + ..."``):
    each is proven in turn under the conditions and the lemmas before it, then the
    claim is proven with them as extra hypotheses (sound: a proven lemma removes no
    point). A lemma that is not proved is never assumed; the claim is then attempted
    without the lemmas and an unknown verdict says which lemma failed. ``source``
    names ``text`` in error messages (a rule file's path). ``smt2``: a path where the
    claim's query is written as SMT-LIB 2 (the conditions, the proven lemmas, every
    quotient's and remainder's definition, and the two sides differing: ``unsat``
    means proved) before z3 checks it; a definedness failure writes nothing.
    """
    start = time.perf_counter()
    lhs, rhs = parse_rule(text, source)
    text = " ".join(blank_comments(text).split())  # a rule file's comment lines are not part of the question
    conds = parse_conditions(where, "<where>") if where.strip() else []
    conds += parse_conditions(domain, "<domain>") if domain.strip() else []
    hints = [parse_conditions(t, "<lemma>") for t in lemmas if t.strip()]
    question = f"rule {text}" + (f" where {where}" if where.strip() else "") + (
        f" on {domain}" if domain.strip() else "")
    all_conds = conds + [c for h in hints for c in h]
    names = sorted(lhs.names() | rhs.names() | {n for _, a, b in all_conds for n in a.names() | b.names()},
                   key=lambda n: (not _CONST_RE.match(n), n))
    enc = Z3Encoder()
    z3 = enc.z3
    ops = _Z3Ops(enc)
    env = {n: enc.int_var(n) for n in names}
    hyps = [_CMP_FN[op](a.evaluate(ops, env), b.evaluate(ops, env)) for op, a, b in conds]
    divisors = [d for n in (lhs, rhs) for d in n.divisors()] + [
        d for _, a, b in all_conds for n in (a, b) for d in n.divisors()]
    zl, zr = lhs.evaluate(ops, env), rhs.evaluate(ops, env)
    hint_terms = [z3.And(*[_CMP_FN[op](a.evaluate(ops, env), b.evaluate(ops, env)) for op, a, b in h]) for h in hints]

    def elapsed() -> float:
        return time.perf_counter() - start

    def confirm(values: dict[str, int]) -> Verdict | None:
        try:
            if not all(_CMP_FN[op](a.evaluate(_Ops(), values), b.evaluate(_Ops(), values)) for op, a, b in conds):
                return None
            lv, rv = lhs.evaluate(_Ops(), values), rhs.evaluate(_Ops(), values)
        except ArithmeticError:
            return None
        if lv == rv:
            return None
        ce = Counterexample("results", tuple((n, values[n]) for n in names), (lv,), (rv,),
                            note="the conditions hold but the two sides differ")
        return Verdict("refuted", "z3", elapsed(), question, counterexample=ce)

    for d in divisors:
        bad = _zero_divisor(d, conds, names, _left(timeout))
        if isinstance(bad, str):
            return Verdict("unknown", "z3", elapsed(), question, reason=f"definedness (nonzero divisors): {bad}")
        if bad is not None:
            return Verdict("error", "z3", elapsed(), question,
                           reason=f"the conditions allow a zero divisor, e.g. {bad}; add a condition such as c0 != 0")
    # The lemmas, in order (each under the conditions and the lemmas before it).
    proven: list[Any] = []
    failed = ""
    for i, term in enumerate(hint_terms):
        s = enc.solver(timeout=_left(timeout))
        s.add(*hyps, *enc.side_conditions, *proven, z3.Not(term))
        r = s.check()
        if r != z3.unsat:
            failed = f"lemma {i + 1} ({lemmas[i].strip()}) not proved: " + (
                "z3 found a model of its negation" if r == z3.sat else s.reason_unknown())
            proven = []
            break
        proven.append(term)
    s = enc.solver(timeout=_left(timeout))
    s.add(*hyps, *enc.side_conditions, *proven, zl != zr)
    if smt2 is not None:
        _write_smt2(smt2, s, question, names, len(proven))
    r = s.check()
    if r == z3.unsat:
        plural = "s" if len(proven) > 1 else ""
        reason = f"with {len(proven)} lemma{plural}, each proven by z3" if proven else ""
        vacuous = _unsatisfiable(enc, hyps, _left(timeout))
        if vacuous:
            reason = "; ".join(x for x in ("the conditions (--where, --domain) have no solution", reason) if x)
        return Verdict("proved", "z3", elapsed(), question, reason=reason, vacuous=vacuous)
    if r == z3.sat:
        m = s.model()
        vals = {n: int(m.eval(env[n], model_completion=True).as_long()) for n in names}
        v = confirm(vals)
        if v is not None:
            return _smallest(confirm, names, vals) or v
        if proven:  # never reached when the lemmas are true; an unconfirmed model is no refutation
            return Verdict("unknown", "z3", elapsed(), question, reason="z3's model with the lemmas is not confirmed")
        return Verdict("error", "z3", elapsed(), question,
                       reason="encoding disagrees with evaluator: z3's counterexample does not hold")
    why = s.reason_unknown() + (f"; {failed}" if failed else "")
    # Small exhaustive search: a confirmed counterexample is still a refutation.
    bound = 8
    while (2 * bound + 1) ** len(names) > 200_000 and bound > 1:
        bound -= 1
    for i, point in enumerate(itertools.product(range(-bound, bound + 1), repeat=len(names))):
        if i % 4096 == 0 and budget_exhausted():
            return Verdict("unknown", "z3", elapsed(), question,
                           reason=f"z3: {why}; the search for a counterexample in [-{bound}, {bound}] ran out of time")
        v = confirm(dict(zip(names, point)))
        if v is not None:
            return Verdict("refuted", "enum", elapsed(), question, counterexample=v.counterexample)
    return Verdict("unknown", "z3", elapsed(), question,
                   reason=f"z3: {why}; no counterexample with every name in [-{bound}, {bound}]")


def _write_smt2(path: str, s: Any, question: str, names: Sequence[str], lemmas: int) -> None:
    """The solver's assertions as a standalone SMT-LIB 2 file (any solver with integer arithmetic)."""
    import z3

    from verified_indexing.errors import VerifiedIndexingError

    head = [f"; verified_indexing check-rule query (z3 {z3.get_version_string()})", f"; {question}",
            f"; names: {', '.join(names)} (c0, c1, ...: symbolic constants); q!N/r!N, tq!N/tr!N: the quotients and "
            "remainders of floor and truncating division, defined by the assertions",
            f"; asserted: the conditions, {lemmas} proven lemma(s), and the two sides differ",
            "; unsat = proved; sat = refuted (the model is a counterexample)"]
    text = "\n".join(head) + "\n(set-logic ALL)\n" + str(s.to_smt2())
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except OSError as exc:
        raise VerifiedIndexingError(f"--smt2 {path}: cannot write: {exc.strerror or exc}") from None


SHRINK_POINTS = 50_000
"""How many small points :func:`_smallest` visits before keeping z3's model."""


def _smallest(confirm: Callable[[dict[str, int]], Verdict | None], names: Sequence[str],
              model: dict[str, int]) -> Verdict | None:
    """A counterexample no larger than z3's ``model`` in max-norm and the first in a
    fixed order: shells of growing max-norm, values ordered 0, 1, -1, 2, -2, ...
    Deterministic (z3's model depends on the process's history) and as small as
    the search finds within :data:`SHRINK_POINTS` evaluations by the plain
    evaluator (``confirm``); ``None`` when it finds none in that budget."""
    top = max((abs(v) for v in model.values()), default=0)
    seen = 0
    for r in range(top + 1):
        values = [0, *[x for k in range(1, r + 1) for x in (k, -k)]]
        for point in itertools.product(values, repeat=len(names)):
            seen += 1
            if seen > SHRINK_POINTS or (seen % 4096 == 0 and budget_exhausted()):
                return None
            if r and max(abs(x) for x in point) != r:
                continue  # an inner shell, already tried
            v = confirm(dict(zip(names, point)))
            if v is not None:
                return v
    return None


def _left(timeout: float) -> float:
    """What is left of ``timeout`` and of the command's budget (at least 1 ms: z3 then says unknown)."""
    return max(0.001, remaining(timeout))


def _unsatisfiable(enc: Z3Encoder, hyps: list[Any], timeout: float) -> bool:
    """Whether z3 proves the conditions contradictory (a vacuous proof). Only the
    conditions count: the division definitions of the two sides are always
    satisfiable once the divisors are nonzero (checked before)."""
    s = enc.solver(timeout=timeout)
    s.add(*hyps)
    return bool(s.check() == enc.z3.unsat)


def _zero_divisor(
    d: Node, conds: list[tuple[str, Node, Node]], names: list[str], timeout: float
) -> dict[str, int] | str | None:
    """A model of the conditions where the divisor ``d`` is zero, None when there
    is none, or z3's reason when it cannot tell.

    The divisions *inside* ``d`` (``c0 floordiv c1`` used as a divisor) are encoded
    with their definitions, which is sound because their own divisors are checked
    too (inner first, by induction on size). The conditions are encoded without the
    definitions of their divisions, which only admits more models (conservative).
    """
    enc = Z3Encoder()
    z3 = enc.z3
    ops = _Z3Ops(enc)
    env = {n: enc.int_var(n) for n in names}
    dv = d.evaluate(ops, env)
    inner = list(enc.side_conditions)
    hyps = [_CMP_FN[op](a.evaluate(ops, env), b.evaluate(ops, env)) for op, a, b in conds]
    s = enc.solver(timeout=timeout)
    s.add(*hyps, *inner, dv == 0)
    r = s.check()
    if r == z3.unsat:
        return None
    if r != z3.sat:
        return str(s.reason_unknown())
    m = s.model()
    return {n: m.eval(env[n], model_completion=True).as_long() for n in names}
