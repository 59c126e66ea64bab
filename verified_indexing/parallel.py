"""Run a pure function over many inputs on a pool, results in input order.

One place for the project's parallel work (batch questions of the command
line; usable by ``fuzz/campaign.py``): ``fn`` must be a module-level function
(it is pickled by name) whose result depends only on its argument, so the
backend changes nothing but the speed.

Backends:

* ``"process"`` (default): :class:`concurrent.futures.ProcessPoolExecutor` with the
  ``spawn`` start method (no forked isl/z3 state; each worker imports the package
  once and answers many items). ``jobs=1`` (or a single item) runs in this process.
  The persistent proof cache is shared safely: each process opens its own SQLite
  connection to the same file (WAL journal, busy timeout; see
  :mod:`verified_indexing.engines.cache`).
* ``"ray"``: the same function as a Ray task on the running Ray runtime, or on a
  local one started with ``num_cpus=jobs`` (extra ``distributed``: ``pip install
  verified-indexing[distributed]``).
"""

from __future__ import annotations

import multiprocessing
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from verified_indexing.errors import VerifiedIndexingError

__all__ = ["BACKENDS", "default_jobs", "run_ordered", "progress"]

T = TypeVar("T")
R = TypeVar("R")

BACKENDS = ("process", "ray")


def default_jobs() -> int:
    """The machine's cores available to this process."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def progress(items: Iterable[R], total: int, what: str, *, delay: float = 1.0) -> Iterator[R]:
    """``items`` unchanged; with a progress bar on stderr when stderr is a terminal,
    ``total`` is more than one and the work lasts more than ``delay`` seconds
    (tqdm, no colour; the bar is erased when done)."""
    if total <= 1 or not sys.stderr.isatty():
        return iter(items)
    from tqdm import tqdm

    bar = tqdm(items, total=total, desc=what, unit="", file=sys.stderr, leave=False, dynamic_ncols=True, delay=delay)
    return iter(bar)


def run_ordered(
    fn: Callable[[T], R],
    items: Sequence[T],
    *,
    jobs: int | None = None,
    backend: str = "process",
    what: str = "",
    on_crash: Callable[[T, BaseException], R] | None = None,
) -> Iterator[R]:
    """``fn(item)`` for each item, yielded in the order of ``items`` as soon as each
    one (and every one before it) is done. ``jobs``: workers (default
    :func:`default_jobs`). ``what``: label of the progress bar (none if empty).

    ``on_crash``: on the process pool, a worker process that dies (a crash in a native
    library, the kernel's out-of-memory kill) breaks the pool; the item it was answering
    is found by running the earliest unfinished item alone in a fresh process, its answer
    is ``on_crash(item, error)`` when it dies again, and the other items still run (on a
    fresh pool). Without ``on_crash`` the error propagates. Items run in this process
    (``jobs=1``) and Ray tasks are not covered."""
    n = default_jobs() if jobs is None else jobs
    if n < 1:
        raise VerifiedIndexingError(f"--jobs must be at least 1, got {n}")
    if backend not in BACKENDS:
        raise VerifiedIndexingError(f"unknown backend {backend!r} (expected one of {', '.join(BACKENDS)})")
    if backend == "ray":
        results = _ray(fn, items, n)
    elif n == 1 or len(items) <= 1:
        results = (fn(x) for x in items)
    else:
        results = _processes(fn, items, n, on_crash)
    return progress(results, len(items), what) if what else results


def _processes(
    fn: Callable[[T], R], items: Sequence[T], jobs: int, on_crash: Callable[[T, BaseException], R] | None
) -> Iterator[R]:
    from concurrent.futures.process import BrokenProcessPool

    from verified_indexing.engines import points

    context = multiprocessing.get_context("spawn")
    # a spawned worker starts with the module defaults: it takes the parent's engine switch
    enumerate_small = (points.enabled(),)
    start = 0
    while start < len(items):
        pool = ProcessPoolExecutor(max_workers=min(jobs, len(items) - start), mp_context=context,
                                   initializer=points.set_enabled, initargs=enumerate_small)
        broken = False
        try:
            futures = [pool.submit(fn, x) for x in items[start:]]
            for future in futures:
                try:
                    result = future.result()
                except BrokenProcessPool:
                    if on_crash is None:
                        raise
                    broken = True
                    break
                start += 1
                yield result
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        if broken:  # which item killed its worker: the earliest unfinished one, alone
            with ProcessPoolExecutor(max_workers=1, mp_context=context, initializer=points.set_enabled,
                                     initargs=enumerate_small) as solo:
                try:
                    result = solo.submit(fn, items[start]).result()
                except BrokenProcessPool as exc:
                    assert on_crash is not None
                    result = on_crash(items[start], exc)
            start += 1
            yield result


def _ray(fn: Callable[[T], R], items: Sequence[T], jobs: int) -> Iterator[R]:
    try:
        import ray
    except ImportError:
        raise VerifiedIndexingError(
            "--backend ray needs Ray: pip install 'verified-indexing[distributed]' (or pip install ray)"
        ) from None
    if not ray.is_initialized():
        ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False, configure_logging=False)
    remote: Any = ray.remote(fn)
    refs = [remote.remote(x) for x in items]
    for ref in refs:
        yield ray.get(ref)
