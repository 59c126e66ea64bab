"""A wall-clock bound for isl computations that isl's operation limit does not cover.

isl checks its operation quota in most operations but not everywhere: its integer
search (e.g. the lexicographic maximum behind an exact range) can run for a time
that grows with the size of a divisor, with the quota never consulted (measured:
``d0 + d0 mod 2^20`` over ``[0, 10^9]`` takes 3 s; with ``2^33`` it does not finish).
Such queries run in a forked child process that is killed at the deadline; the
caller gets :class:`~verified_indexing.engines.isl.IslLimitExceeded`, never a hang
and never a guess. Queries whose divisors are all small run in-process (no cost).
"""

from __future__ import annotations

import multiprocessing
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from verified_indexing.engines.isl import IslLimitExceeded
from verified_indexing.expr import AffineExpr, _BinaryDiv
from verified_indexing.indexing_map import IndexingMap

__all__ = ["RISKY_DIVISOR", "DEFAULT_DEADLINE", "largest_divisor", "run_bounded"]

RISKY_DIVISOR = 4096
"""Queries with a floordiv/ceildiv/mod divisor at least this large (in absolute value) run under a deadline."""

DEFAULT_DEADLINE = 2.0
"""Seconds a risky isl computation may take before it is abandoned."""

T = TypeVar("T")


def largest_divisor(m: IndexingMap | None, exprs: Iterable[AffineExpr] = ()) -> int:
    """The largest ``|divisor|`` in ``exprs`` and in ``m``'s results and constraints (0 if none)."""
    roots = list(exprs)
    if m is not None:
        roots += list(m.results) + [e for e, _ in m.constraints]
    best = 0
    for root in roots:
        for e in root.walk():
            if isinstance(e, _BinaryDiv):
                best = max(best, abs(e.divisor))
    return best


def _child(fn: Callable[[], Any], conn: Any) -> None:
    try:
        conn.send((True, fn()))
    except BaseException as exc:  # reported to the parent, re-raised there
        try:
            conn.send((False, exc))
        except Exception:
            conn.send((False, IslLimitExceeded(f"isl failed in the bounded child: {type(exc).__name__}: {exc}")))
    finally:
        conn.close()


def run_bounded(fn: Callable[[], T], risky: bool, seconds: float = DEFAULT_DEADLINE) -> T:
    """``fn()`` in-process when not ``risky``; otherwise in a forked child that is
    killed after ``seconds`` (then :class:`IslLimitExceeded`). ``fn`` must return a
    picklable value."""
    if not risky:
        return fn()
    try:
        ctx = multiprocessing.get_context("fork")
    except ValueError:  # no fork on this platform: in-process, as before
        return fn()
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(fn, send), daemon=True)
    proc.start()
    send.close()
    try:
        if not recv.poll(seconds):
            raise IslLimitExceeded(f"isl did not finish within {seconds:g} s (a divisor of {RISKY_DIVISOR} or more)")
        try:
            ok, value = recv.recv()
        except EOFError:
            raise IslLimitExceeded("isl's bounded child process ended without an answer") from None
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join()
        recv.close()
    if not ok:
        raise value
    return value  # type: ignore[no-any-return]
