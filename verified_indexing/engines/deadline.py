"""Wall-clock bounds: one time budget per command, and a worker process for the
computations that can run away.

isl checks its operation quota in most operations but not everywhere: reading a
map's text (measured: 10 nested ``mod`` s take 9.7 s, 14 never finish), and its
integer search behind relation equality and exact ranges (``d0 + d0 mod 2^33``
over ``[0, 10^12]``; two 16-divisor maps with a range variable) can run for
minutes with the quota never consulted. Such calls run in a *worker process*
that is killed at the deadline; the caller gets :class:`DeadlineExceeded` (an
:class:`~verified_indexing.engines.isl.IslLimitExceeded`), never a hang and
never a guess.

* **The budget.** :func:`command_budget` sets a deadline for everything inside
  it (the CLI wraps each command in one, from ``--timeout``); :func:`remaining`
  is what is left. Engine calls never run past it.
* **The worker.** One persistent process, reused across calls: a *fork* of this
  process where that is safe (Linux, one Python thread, no runtime with native
  thread pools such as XLA's loaded: :func:`_may_fork`), else a fresh interpreter
  started with ``subprocess`` (no fork of a process that has threads, such as the
  z3 context pool; and unlike multiprocessing's ``spawn`` it never re-runs the
  caller's ``__main__``); a call sends a module-level function and picklable
  arguments over a pipe. When a call overruns, the worker is killed and a new one
  is started at once in the background (so its start-up overlaps the caller's
  next steps); a worker that is still starting when a call's time runs out is
  left running (it was given no work). Measured here: start-up about 3 ms forked,
  0.8 s as a fresh interpreter (importing islpy and z3), a round trip 0.1 ms, a
  risky isl question 2.0 ms through the worker against 0.8 ms in-process
  (pickling and rebuilding it).
* **Which calls.** Only *risky* ones (:func:`risky_maps`): most isl queries take
  about 2 ms and stay in-process. A call is risky when a cheap structural check
  finds what makes isl slow: a divisor of :data:`RISKY_DIVISOR` or more, nested
  divisions (depth 3 or more), many divisions, many variables, or a division
  combined with range variables in a question that projects them out (relation
  equality, injectivity, inclusion: existential quantifiers).
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from verified_indexing.errors import IslLimitExceeded

if TYPE_CHECKING:  # imported where used: the command line imports this module before any map
    from verified_indexing.expr import AffineExpr
    from verified_indexing.indexing_map import IndexingMap

__all__ = [
    "RISKY_DIVISOR",
    "DEFAULT_DEADLINE",
    "DeadlineExceeded",
    "BudgetExpired",
    "hard_deadline",
    "at_deadline",
    "largest_divisor",
    "risky_maps",
    "run_bounded",
    "run_in_worker",
    "command_budget",
    "remaining",
    "budget_exhausted",
    "worker_stats",
    "stop_worker",
    "preload_in_worker",
]

RISKY_DIVISOR = 4096
"""Queries with a floordiv/ceildiv/mod divisor at least this large (in absolute value) run under a deadline."""

RISKY_DIV_DEPTH = 3
"""Divisions nested this deep (``((x mod a) mod b) mod c``) make a query risky."""

RISKY_DIV_COUNT = 12
"""This many division nodes in one query make it risky."""

RISKY_VARIABLES = 12
"""This many variables (dims, range and runtime variables) in one map make a query risky."""

DEFAULT_DEADLINE = 2.0
"""Seconds a risky isl computation may take (when no tighter budget applies)."""

T = TypeVar("T")


class DeadlineExceeded(IslLimitExceeded):
    """A bounded computation did not finish within its deadline (the worker was killed)."""


class BudgetExpired(BaseException):
    """The command's budget ran out in code that does not check it: raised in the main thread by
    :func:`hard_deadline`'s alarm. A ``BaseException``, so that no ``except Exception`` on the way
    swallows it and carries on; the command line reports it as ``unknown`` (exit 2)."""


# ---------------------------------------------------------------------------
# The command budget
# ---------------------------------------------------------------------------

_budget = threading.local()


def _deadline() -> float:
    return float(getattr(_budget, "deadline", math.inf))


@contextmanager
def command_budget(seconds: float) -> Iterator[None]:
    """Bound everything inside to ``seconds`` of wall-clock time (``inf``: no bound).
    Nested budgets take the tighter deadline."""
    if not seconds > 0:
        raise ValueError(f"a time budget must be a positive number of seconds, got {seconds}")
    previous = _deadline()
    _budget.deadline = min(previous, time.monotonic() + seconds)
    try:
        yield
    finally:
        _budget.deadline = previous


_AT_DEADLINE: list[Callable[[], None]] = []
"""What :func:`hard_deadline` calls, from a timer thread, when the budget's deadline passes (see
:func:`at_deadline`)."""


def at_deadline(fn: Callable[[], None]) -> None:
    """Have ``fn`` called from a timer thread when a :func:`hard_deadline` budget's deadline passes:
    an engine whose native calls release the interpreter registers how to interrupt them (z3 does:
    ``Z3_interrupt`` on the contexts it gave solvers to under the budget)."""
    if fn not in _AT_DEADLINE:
        _AT_DEADLINE.append(fn)


def _deadline_passed() -> None:
    for fn in list(_AT_DEADLINE):
        with contextlib.suppress(Exception):
            fn()


@contextmanager
def hard_deadline(grace: float) -> Iterator[None]:
    """The backstop of the budget: ``grace`` seconds after the current budget's deadline,
    :class:`BudgetExpired` is raised in the main thread (``SIGALRM``), wherever the command is,
    unless it has left this block. Python code is stopped at once; a native call holding the
    interpreter (an isl call run in-process) delays it until it returns, which is why isl calls
    that can run away run in the worker, killed at the deadline. Does nothing without a finite
    budget, outside the main thread, or where ``setitimer`` is missing."""
    import signal

    left = remaining()
    if (
        left == math.inf
        or not hasattr(signal, "setitimer")
        or threading.current_thread() is not threading.main_thread()
        or signal.getsignal(signal.SIGALRM) not in (signal.SIG_DFL, signal.SIG_IGN, None)
    ):
        yield
        return

    deferred = [0]

    def expire(signum: int, frame: Any) -> None:
        # Never raise inside a native library's Python wrapper (z3's: an exception between one of its C
        # calls and the matching reference count leaves a dangling reference, and the process can crash
        # later, as it did once under load: SIGSEGV); try again a little later, for two seconds at most: every
        # 5 ms (code building a large z3 term is inside the wrapper most of the time, between its calls only
        # briefly: tries 50 ms apart kept landing inside and ran the whole two seconds)
        if deferred[0] < 400 and _in_wrapper(frame):
            deferred[0] += 1
            signal.setitimer(signal.ITIMER_REAL, 0.005)
            return
        raise BudgetExpired("the time budget ran out")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, max(left + grace, 0.001))
    timer = threading.Timer(max(left, 0.0), _deadline_passed)  # interrupts what releases the interpreter
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


_WRAPPERS = ("z3",)
"""Packages whose Python code must not be interrupted by an exception (see :func:`hard_deadline`)."""


def _in_wrapper(frame: Any) -> bool:
    """True when ``frame`` or a caller of it runs code of a package in :data:`_WRAPPERS`."""
    import os

    while frame is not None:
        parts = frame.f_code.co_filename.split(os.sep)
        if any(w in parts[-3:-1] for w in _WRAPPERS):
            return True
        frame = frame.f_back
    return False


def remaining(timeout: float = math.inf) -> float:
    """``min(timeout, what is left of the command budget)`` in seconds (may be <= 0)."""
    d = _deadline()
    left = math.inf if d == math.inf else d - time.monotonic()
    return min(timeout, left)


def budget_exhausted() -> bool:
    return remaining() <= 0


# ---------------------------------------------------------------------------
# Which calls are risky
# ---------------------------------------------------------------------------


def largest_divisor(m: IndexingMap | None, exprs: Iterable[AffineExpr] = ()) -> int:
    """The largest ``|divisor|`` in ``exprs`` and in ``m``'s results and constraints (0 if none)."""
    from verified_indexing.expr import _BinaryDiv

    roots = list(exprs)
    if m is not None and m.state == "ok":
        roots += list(m.results) + [e for e, _ in m.constraints]
    best = 0
    for root in roots:
        for e in root.walk():
            if isinstance(e, _BinaryDiv):
                best = max(best, abs(e.divisor))
    return best


def risky_maps(
    maps: Iterable[IndexingMap], exprs: Iterable[AffineExpr] = (), *, existential: bool = True, results: bool = True
) -> bool:
    """Whether an isl computation over these maps and expressions may run away
    (see the module docstring): a cheap walk over the expressions. With
    ``existential=False`` (pointwise questions: range variables are plain set
    dimensions, nothing is projected out) range variables alone do not count;
    with ``results=False`` the maps' results are not part of the query (only
    their domains are, as in an exact range of another expression)."""
    if existential and results and isinstance(maps, (list, tuple)) and len(maps) == 1 and exprs == ():
        # the simplifier's question, asked of one map a few times per round: memoised per map (the
        # thresholds are constants)
        key = (maps[0], RISKY_DIVISOR, RISKY_DIV_DEPTH, RISKY_DIV_COUNT, RISKY_VARIABLES)  # (a test may patch them)
        hit = _RISKY_ONE.get(key)
        if hit is None:
            if len(_RISKY_ONE) >= 512:
                _RISKY_ONE.clear()
            hit = _RISKY_ONE[key] = _risky(maps, (), existential, results)
        return hit
    return _risky(maps, exprs, existential, results)


_RISKY_ONE: dict[tuple[IndexingMap, int, int, int, int], bool] = {}
"""``risky_maps([m])`` per map."""


def _risky(maps: Iterable[IndexingMap], exprs: Iterable[AffineExpr], existential: bool, results: bool) -> bool:
    from verified_indexing.expr import Sum, _BinaryDiv

    extra = list(exprs)
    divs = depth = biggest = 0
    range_vars = False
    for m in maps:
        if m.state != "ok":
            continue
        if m.num_dims + m.num_range_vars + m.num_rt_vars >= RISKY_VARIABLES:
            return True
        range_vars = range_vars or (existential and m.num_range_vars > 0)
        extra += (list(m.results) if results else []) + [e for e, _ in m.constraints]
    for root in extra:
        stack: list[tuple[AffineExpr, int]] = [(root, 0)]
        push = stack.append
        while stack:
            e, d = stack.pop()
            if type(e) is Sum:  # (the common node, its terms read directly: no tuple of children built)
                for c, _ in e.terms:
                    push((c, d))
                continue
            if isinstance(e, _BinaryDiv):
                d += 1
                divs += 1
                if abs(e.divisor) > biggest:
                    biggest = abs(e.divisor)
                if d > depth:
                    depth = d
                push((e.lhs, d))
                continue
            for c in e.children():  # (min/max; a leaf has none)
                push((c, d))
    if biggest >= RISKY_DIVISOR or depth >= RISKY_DIV_DEPTH or divs >= RISKY_DIV_COUNT:
        return True
    return range_vars and divs > 0


# ---------------------------------------------------------------------------
# The worker process
# ---------------------------------------------------------------------------


_PRELOAD: list[str] = ["verified_indexing.engines.isl"]
"""The modules a new worker imports before it says ready (see :func:`preload_in_worker`)."""


def preload_in_worker(module: str) -> None:
    """Have every worker started from now on import ``module`` before it takes work (its first call
    then does not pay the import). The layers above register themselves (``engines.api`` does on
    import, the command line names what it will need): this module imports none of them."""
    if module not in _PRELOAD:
        _PRELOAD.append(module)


def _serve(rfd: int, wfd: int, preload: tuple[str, ...] = ()) -> None:  # pragma: no cover - in the worker
    """The worker's loop: import ``preload``, receive ``(fn, args)``, reply ``(ok, value)``."""
    import importlib
    from multiprocessing.connection import Connection

    inbox, outbox = Connection(rfd, writable=False), Connection(wfd, readable=False)
    for name in preload:  # imported before saying ready
        importlib.import_module(name)

    outbox.send("ready")
    while True:
        try:
            fn, args = inbox.recv()
        except (EOFError, OSError, KeyboardInterrupt):
            return
        try:
            reply = (True, fn(*args))
        except BaseException as exc:  # reported to the parent, re-raised there
            reply = (False, exc)
        try:
            outbox.send(reply)
        except Exception as exc:  # an unpicklable result or exception
            outbox.send((False, IslLimitExceeded(f"the worker could not send its answer: {type(exc).__name__}: {exc}")))


_THREADED_RUNTIMES = ("jax", "jaxlib", "tvm", "ray", "torch", "tensorflow")
"""Modules whose import starts native thread pools that Python's ``threading`` does not count."""


def fork_is_safe() -> bool:
    """Whether this process may fork a child that runs Python: Linux, ``os.fork`` present, one Python
    thread (a fork copies the locks other threads may hold) and no runtime with native thread pools
    loaded (XLA's, TVM's, Ray's). The engine worker and the process pool (:mod:`verified_indexing.parallel`)
    both ask."""
    if sys.platform != "linux" or not hasattr(os, "fork") or threading.active_count() > 1:
        return False
    return not any(name in sys.modules for name in _THREADED_RUNTIMES)


def _may_fork() -> bool:
    """Whether the worker may be a fork of this process (:func:`fork_is_safe`);
    ``VERIFIED_INDEXING_WORKER=spawn`` forces a fresh interpreter."""
    return os.environ.get("VERIFIED_INDEXING_WORKER") != "spawn" and fork_is_safe()


class _Forked:
    """A forked worker's process, with the part of :class:`subprocess.Popen` the worker uses."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere
                self.returncode = -1
                return self.returncode
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def kill(self) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)

    def wait(self, timeout: float) -> int:
        end = time.monotonic() + timeout
        while self.poll() is None:
            if time.monotonic() > end:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout)
            time.sleep(0.001)
        assert self.returncode is not None
        return self.returncode


def _fork_server(rfd: int, wfd: int) -> _Forked:
    """Fork this process into a worker serving on ``rfd``/``wfd`` (it has every module this process
    imported: milliseconds instead of an interpreter's start). The child keeps only its two pipe ends
    (standard streams on ``/dev/null``: it never holds the caller's output open), runs :func:`_serve`
    and leaves with ``os._exit``: none of this process's exit handlers, buffers or files are touched."""
    pid = os.fork()
    if pid:
        return _Forked(pid)
    try:  # pragma: no cover - in the child
        for s in (signal.SIGINT, signal.SIGTERM, signal.SIGALRM):
            signal.signal(s, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        keep = sorted({0, 1, 2, rfd, wfd})
        low = 3
        for fd in keep[3:]:
            os.closerange(low, fd)
            low = fd + 1
        os.closerange(low, 1 << 16)  # (the parent's ends of the two pipes among them)
        _serve(rfd, wfd, tuple(_PRELOAD))
    finally:
        os._exit(0)


class _Worker:
    """One persistent worker, talking over two pipes with pickled messages: a fork of this process
    where that is safe (:func:`_may_fork`), else a fresh interpreter started with ``subprocess``
    (unlike multiprocessing's ``spawn`` it never re-runs the caller's ``__main__``)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.proc: subprocess.Popen[bytes] | _Forked | None = None
        self.inbox: Any = None
        self.outbox: Any = None
        self.ready = False
        self.started = 0
        self.killed = 0
        self.calls = 0

    def _start(self) -> None:
        from multiprocessing.connection import Connection

        to_child_r, to_child_w = os.pipe()
        to_parent_r, to_parent_w = os.pipe()
        try:
            if _may_fork():
                self.proc = _fork_server(to_child_r, to_parent_w)
            else:
                code = (
                    "from verified_indexing.engines.deadline import _serve; "
                    f"_serve({to_child_r}, {to_parent_w}, {tuple(_PRELOAD)!r})"
                )
                env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
                self.proc = subprocess.Popen(
                    [sys.executable, "-c", code],
                    pass_fds=(to_child_r, to_parent_w),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env=env,
                    close_fds=True,
                )
        finally:
            os.close(to_child_r)
            os.close(to_parent_w)
        self.outbox = Connection(to_child_w, readable=False)
        self.inbox = Connection(to_parent_r, writable=False)
        self.ready = False
        self.started += 1

    def _alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _stop(self) -> None:
        proc, inbox, outbox = self.proc, self.inbox, self.outbox
        self.proc = self.inbox = self.outbox = None
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            try:
                proc.wait(1.0)
            except subprocess.TimeoutExpired:  # pragma: no cover
                pass
        for c in (inbox, outbox):
            if c is not None:
                c.close()

    def prewarm(self) -> None:
        with self.lock:
            if not self._alive():
                self._stop()
                self._start()

    def call(self, fn: Callable[..., T], args: tuple[Any, ...], seconds: float) -> T:
        with self.lock:
            if not self._alive():
                self._stop()
                try:
                    self._start()
                except OSError as exc:
                    raise DeadlineExceeded(f"cannot start the worker process ({exc})") from None
            self.calls += 1
            deadline = time.monotonic() + max(seconds, 0.0)
            if not self.ready:
                # A starting worker is not stopped when the time runs out: it is
                # given no work, so it stays warm for the next call.
                if not self.inbox.poll(max(seconds, 0.0)):
                    raise DeadlineExceeded(f"could not start within {max(seconds, 0.0):.3g} s (the worker is starting)")
                try:
                    if self.inbox.recv() != "ready":
                        raise EOFError
                except (EOFError, OSError):
                    self._stop()
                    raise DeadlineExceeded("the worker process failed to start") from None
                self.ready = True
                seconds = deadline - time.monotonic()
                if seconds <= 0:
                    raise DeadlineExceeded("no time was left once the worker had started")
            try:
                self.outbox.send((fn, args))
            except (OSError, ValueError) as exc:
                self._stop()
                raise DeadlineExceeded(f"the worker process is not available ({exc})") from None
            if not self.inbox.poll(max(seconds, 0.0)):
                self._stop()
                self.killed += 1
                with contextlib.suppress(OSError):
                    self._start()  # the next call finds a warm worker
                raise DeadlineExceeded(f"did not finish within {max(seconds, 0.0):.3g} s (the worker was stopped)")
            try:
                ok, value = self.inbox.recv()
            except (EOFError, OSError):
                self._stop()
                raise DeadlineExceeded("the worker process ended without an answer") from None
        if not ok:
            raise value
        return value  # type: ignore[no-any-return]


_WORKER = _Worker()
atexit.register(_WORKER._stop)


def stop_worker() -> None:
    """Stop the worker now (it is stopped at exit anyway)."""
    _WORKER._stop()


def worker_stats() -> dict[str, int]:
    """How often the worker was started, killed at a deadline, and called."""
    return {"started": _WORKER.started, "killed": _WORKER.killed, "calls": _WORKER.calls}


def prewarm() -> None:
    """Start the worker now (in the background) so its start-up overlaps other work."""
    if os.environ.get("VERIFIED_INDEXING_NO_WORKER"):
        return
    _WORKER.prewarm()


def run_in_worker(fn: Callable[..., T], args: tuple[Any, ...], seconds: float) -> T:
    """``fn(*args)`` in the worker process, stopped after ``seconds`` (then
    :class:`DeadlineExceeded`). ``fn`` must be a module-level function; ``args``
    and the result picklable. Exceptions raised by ``fn`` are re-raised here.
    With ``VERIFIED_INDEXING_NO_WORKER=1`` the call runs in-process (no bound)."""
    if os.environ.get("VERIFIED_INDEXING_NO_WORKER"):
        return fn(*args)
    if seconds <= 0:
        raise DeadlineExceeded("the time budget is exhausted")
    from verified_indexing.engines.isl import get_max_operations

    result: T = _WORKER.call(_with_settings, (get_max_operations(), fn, args), seconds)
    return result


def _with_settings(max_operations: int, fn: Callable[..., T], args: tuple[Any, ...]) -> T:
    """In the worker: the caller's isl operation limit, then ``fn(*args)``."""
    from verified_indexing.engines.isl import set_max_operations

    set_max_operations(max_operations)
    return fn(*args)


def run_bounded(
    fn: Callable[..., T], risky: bool, seconds: float = DEFAULT_DEADLINE, args: tuple[Any, ...] = ()
) -> T:
    """``fn(*args)`` in-process when not ``risky``; otherwise in the worker,
    stopped after ``min(seconds, what is left of the command budget)``."""
    if not risky:
        return fn(*args)
    left = remaining(seconds)
    if left <= 0:
        raise DeadlineExceeded("the command's time budget is exhausted")
    try:
        return run_in_worker(fn, args, left)
    except DeadlineExceeded as exc:
        raise DeadlineExceeded(f"isl {exc}") from None
