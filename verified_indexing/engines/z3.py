"""The z3 encoding of the project's integer semantics (the one encoding).

:class:`Z3Encoder` turns :class:`~verified_indexing.expr.AffineExpr` trees, map
domains and hand-written rule statements into z3 integer terms, always with the
project's semantics (``floordiv`` rounds toward negative infinity for divisors of
both signs, ``a mod b = a - b * (a floordiv b)``, ``a ceildiv b = -((-a) floordiv
b)``). z3's own ``div``/``mod`` are never used: they are Euclidean (they differ
for negative divisors) and, as measured in the design document, take seconds where
explicit quotient/remainder variables take milliseconds.

Every encoder owns a fresh :class:`z3.Context` (never used by another query; a
daemon thread prepares them ahead of time), so queries never share solver state. Typical use::

    enc = Z3Encoder()
    x, c = enc.int_var("x"), enc.int_var("c")
    claim = enc.floordiv(x, c) * c + enc.mod(x, c) == x
    solver = enc.solver(timeout=1.0)
    solver.add(c > 0, *enc.side_conditions, enc.z3.Not(claim))
    assert solver.check() == enc.z3.unsat

Build every term before reading ``side_conditions`` (``s.add(*enc.side_conditions,
enc.mod(x, c) >= 0)`` would unpack the list before ``mod`` adds to it). The
``side_conditions`` are the defining constraints of every auxiliary
quotient/remainder variable the encoder introduced; a query must assert them
(they are satisfiable for every value of the inputs with a nonzero divisor). For a
symbolic divisor ``b`` (a z3 term) the definition is
``a = b*q + r`` and ``0 <= r < b`` if ``b > 0``, ``b < r <= 0`` if ``b < 0``; it
is unsatisfiable when ``b = 0``, so a theorem proved under the side conditions
says nothing about ``b = 0`` (state ``b != 0`` or ``b > 0`` as a hypothesis).
The same ``(a, b)`` pair always reuses the same quotient and remainder.
"""

from __future__ import annotations

import math
import os
import queue
import threading
import weakref
from collections.abc import Mapping
from typing import Any

import z3

from verified_indexing.errors import ZeroDivisorError
from verified_indexing.expr import (
    AffineExpr,
    CeilDiv,
    Const,
    Dim,
    FloorDiv,
    Max,
    Min,
    Mod,
    RtSym,
    Sum,
    Sym,
    VarKind,
)
from verified_indexing.indexing_map import IndexingMap

__all__ = ["Z3Encoder", "Z3Term", "Env", "DEFAULT_RLIMIT", "fresh_context", "timeout_ms"]

Z3Term = Any
"""A z3 integer term (``z3.ArithRef``); z3 ships no type stubs."""

Env = Mapping[tuple[VarKind, int], Z3Term]
"""Variable ``(kind, index)`` -> z3 term, e.g. ``{("d", 0): d0}``."""

DEFAULT_RLIMIT = 5_000_000
"""Deterministic z3 resource limit per query (far above what the spec's queries use)."""


class _ContextPool:
    """Fresh z3 contexts made ahead of time by a daemon thread.

    Creating a context costs about 8-10 ms on this machine (``Z3_mk_context_rc``
    alone), more than a whole query; the thread overlaps that with the caller's
    work (ctypes releases the GIL). Every context is handed out exactly once, so
    each query still runs in a context that has never seen another query.

    Fork safety: a fork waits until the thread is not inside z3 (``_making``), and
    the child starts with an empty pool and no thread.
    """

    def __init__(self, spare: int = 2) -> None:
        self.spare = spare
        self._making = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=self.spare)
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def _fill(self, q: queue.Queue[Any]) -> None:
        while True:
            try:
                with self._making:
                    ctx = z3.Context()
            except Exception:  # the caller makes its own context instead
                return
            q.put(ctx)

    def take(self) -> Any:
        """A context never handed out before. If the thread has stopped (a failed
        ``z3.Context()``), one is made here and the thread restarted."""
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                try:
                    return self._queue.get_nowait()
                except queue.Empty:
                    pass
                self._thread = threading.Thread(
                    target=self._fill, args=(self._queue,), name="z3-context-pool", daemon=True
                )
                self._thread.start()
                if self._queue.empty():
                    return z3.Context()
            thread = self._thread
        while True:
            try:
                return self._queue.get(timeout=0.05)
            except queue.Empty:
                if not thread.is_alive() and self._queue.empty():
                    return z3.Context()

    def before_fork(self) -> None:
        self._making.acquire()

    def after_fork_parent(self) -> None:
        self._making.release()

    def after_fork_child(self) -> None:
        self._making = threading.Lock()
        self._reset()


_POOL = _ContextPool()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_POOL.before_fork,
        after_in_parent=_POOL.after_fork_parent,
        after_in_child=_POOL.after_fork_child,
    )


def fresh_context() -> Any:
    """A z3 context no query has used (from the prefetching pool)."""
    return _POOL.take()


class Z3Encoder:
    """Encodes the project's semantics into z3 in one fresh :class:`z3.Context`.

    Attributes:
        ctx: the context every term of this encoder lives in.
        z3: the z3 module (so callers need not import it).
        side_conditions: defining constraints of every auxiliary variable introduced
            so far (quotients, remainders); assert them in every query.
    """

    z3 = z3

    def __init__(self, ctx: Any | None = None) -> None:
        self.ctx: Any = ctx if ctx is not None else fresh_context()
        self.side_conditions: list[Z3Term] = []
        # key -> (quotient, remainder, the dividend and divisor terms). Keeping the
        # terms alive matters: z3 reuses the id of a collected term.
        self._divs: dict[tuple[int, int | str], tuple[Z3Term, Z3Term, Z3Term, Z3Term | int]] = {}
        self._fresh = 0

    # -- variables and constants ---------------------------------------------
    def int_var(self, name: str) -> Z3Term:
        """A z3 integer variable in this encoder's context."""
        return z3.Int(name, self.ctx)

    def int_val(self, value: int) -> Z3Term:
        """A z3 integer constant in this encoder's context."""
        return z3.IntVal(value, self.ctx)

    def fresh(self, prefix: str) -> Z3Term:
        """A new integer variable ``prefix!N`` that no other call returns."""
        self._fresh += 1
        return z3.Int(f"{prefix}!{self._fresh}", self.ctx)

    def term(self, value: Z3Term | int) -> Z3Term:
        """``value`` as a term of this context (ints become constants)."""
        if isinstance(value, int):
            return self.int_val(value)
        return value

    # -- the integer operations ----------------------------------------------
    def _quot_rem(self, a: Z3Term | int, b: Z3Term | int) -> tuple[Z3Term, Z3Term]:
        ta = self.term(a)
        key: tuple[int, int | str]
        if isinstance(b, int):
            if b == 0:
                raise ZeroDivisorError("division by the constant zero in a z3 encoding")
            key = (ta.get_id(), b)
        else:
            key = (ta.get_id(), f"#{b.get_id()}")
        hit = self._divs.get(key)
        if hit is not None:
            return hit[0], hit[1]
        q = self.fresh("q")
        r = self.fresh("r")
        if isinstance(b, int):
            self.side_conditions.append(ta == b * q + r)
            if b > 0:
                self.side_conditions += [r >= 0, r < b]
            else:
                self.side_conditions += [r <= 0, r > b]
        else:
            tb = self.term(b)
            self.side_conditions.append(ta == tb * q + r)
            self.side_conditions.append(z3.If(tb > 0, z3.And(r >= 0, r < tb), z3.And(r <= 0, r > tb)))
        self._divs[key] = (q, r, ta, b)
        return q, r

    def floordiv(self, a: Z3Term | int, b: Z3Term | int) -> Z3Term:
        """``a floordiv b`` (rounds toward negative infinity), ``b`` an int or a term."""
        return self._quot_rem(a, b)[0]

    def mod(self, a: Z3Term | int, b: Z3Term | int) -> Z3Term:
        """``a mod b`` = ``a - b * (a floordiv b)`` (the sign follows ``b``)."""
        return self._quot_rem(a, b)[1]

    def ceildiv(self, a: Z3Term | int, b: Z3Term | int) -> Z3Term:
        """``a ceildiv b`` = ``-((-a) floordiv b)``."""
        return -self.floordiv(-self.term(a), b)

    def _trunc_quot_rem(self, a: Z3Term | int, b: Z3Term | int) -> tuple[Z3Term, Z3Term]:
        """C's division, defined on its own (not through the floor quotient): ``a = b*q + r`` with
        ``|r| < |b|`` and ``r`` zero or of the sign of ``a``."""
        ta = self.term(a)
        if isinstance(b, int) and b == 0:
            raise ZeroDivisorError("division by the constant zero in a z3 encoding")
        tb = self.term(b)
        key = (ta.get_id(), f"t{b}" if isinstance(b, int) else f"t#{tb.get_id()}")
        hit = self._divs.get(key)
        if hit is not None:
            return hit[0], hit[1]
        q = self.fresh("tq")
        r = self.fresh("tr")
        magnitude = z3.If(tb > 0, z3.And(-tb < r, r < tb), z3.And(tb < r, r < -tb))
        self.side_conditions += [ta == tb * q + r, magnitude, z3.Or(r == 0, (r > 0) == (ta > 0))]
        self._divs[key] = (q, r, ta, b)
        return q, r

    def truncdiv(self, a: Z3Term | int, b: Z3Term | int) -> Z3Term:
        """``a truncdiv b``: the quotient rounded toward zero (C, LLVM ``sdiv``, TVM ``truncdiv``)."""
        return self._trunc_quot_rem(a, b)[0]

    def truncmod(self, a: Z3Term | int, b: Z3Term | int) -> Z3Term:
        """``a truncmod b`` = ``a - b * (a truncdiv b)`` (C's ``%``: the sign follows ``a``)."""
        return self._trunc_quot_rem(a, b)[1]

    def min(self, a: Z3Term | int, b: Z3Term | int) -> Z3Term:
        ta, tb = self.term(a), self.term(b)
        return z3.If(ta <= tb, ta, tb)

    def max(self, a: Z3Term | int, b: Z3Term | int) -> Z3Term:
        ta, tb = self.term(a), self.term(b)
        return z3.If(ta >= tb, ta, tb)

    # -- expressions and maps ------------------------------------------------
    def expr(self, e: AffineExpr, env: Env) -> Z3Term:
        """The z3 term of an expression; ``env`` gives every variable's term."""
        memo: dict[AffineExpr, Z3Term] = {}

        def go(x: AffineExpr) -> Z3Term:
            hit = memo.get(x)
            if hit is not None:
                return hit
            out: Z3Term
            if isinstance(x, Const):
                out = self.int_val(x.value)
            elif isinstance(x, (Dim, Sym, RtSym)):
                try:
                    out = env[(x.kind, x.index)]
                except KeyError:
                    raise KeyError(f"no z3 term for variable {x}") from None
            elif isinstance(x, Sum):
                parts = [go(t) if c == 1 else c * go(t) for t, c in x.terms]
                if x.constant:
                    parts.append(self.int_val(x.constant))
                out = parts[0] if len(parts) == 1 else z3.Sum(*parts)
            elif isinstance(x, FloorDiv):
                out = self.floordiv(go(x.lhs), x.divisor)
            elif isinstance(x, CeilDiv):
                out = self.ceildiv(go(x.lhs), x.divisor)
            elif isinstance(x, Mod):
                out = self.mod(go(x.lhs), x.divisor)
            elif isinstance(x, Min):
                out = self.min(go(x.lhs), go(x.rhs))
            elif isinstance(x, Max):
                out = self.max(go(x.lhs), go(x.rhs))
            else:
                raise TypeError(f"unknown expression node {type(x).__name__}")
            memo[x] = out
            return out

        return go(e)

    def map_vars(self, m: IndexingMap, prefix: str = "") -> dict[tuple[VarKind, int], Z3Term]:
        """One z3 variable per variable of ``m``, named ``prefix`` + the map's name."""
        return {(k, i): self.int_var(prefix + m.var_name(k, i)) for k, i, _ in m.variables()}

    def domain(self, m: IndexingMap, env: Env) -> list[Z3Term]:
        """The constraints of ``m``'s domain (variable bounds and constraints)."""
        out: list[Z3Term] = []
        for k, i, v in m.variables():
            x = env[(k, i)]
            out += [x >= v.bounds.lo, x <= v.bounds.hi]
        for e, iv in m.constraints:
            t = self.expr(e, env)
            out += [t >= iv.lo, t <= iv.hi]
        return out

    def solver(self, timeout: float | None = None, rlimit: int = DEFAULT_RLIMIT) -> Any:
        """A solver in this context with a deterministic ``rlimit`` and a wall-clock
        ``timeout`` in seconds (either exhausted makes ``check()`` return unknown),
        never longer than what is left of the command's budget
        (:func:`verified_indexing.engines.deadline.remaining`)."""
        from verified_indexing.engines.deadline import at_deadline, remaining

        s = z3.Solver(ctx=self.ctx)
        s.set("rlimit", rlimit)
        if remaining() != math.inf:  # interrupted at the command's deadline (z3's timeout is not always kept)
            _UNDER_BUDGET.add(self.ctx)
            at_deadline(_interrupt_budgeted)
        ms = timeout_ms(max(remaining(math.inf if timeout is None else timeout), 0.001))
        if ms is not None:
            s.set("timeout", ms)
        return s


_UNDER_BUDGET: weakref.WeakSet[Any] = weakref.WeakSet()
"""The contexts given solvers under a command budget (interrupted when its deadline passes)."""


def _interrupt_budgeted() -> None:
    """Called from the deadline's timer thread: stop every z3 call of the budgeted contexts
    (``Z3_interrupt``; z3's check releases the interpreter, so this thread runs)."""
    for ctx in list(_UNDER_BUDGET):
        ctx.interrupt()


def timeout_ms(timeout: float | None) -> int | None:
    """A wall-clock limit in seconds as z3's milliseconds: ``None`` or infinity
    give ``None`` (no wall-clock limit; the rlimit still applies), at least 1 ms,
    at most z3's largest value."""
    if timeout is None or math.isinf(timeout):
        return None
    return min(max(1, int(timeout * 1000)), 2**32 - 1)
