"""Run a pure function over many inputs on a pool, results in input order.

One place for the project's parallel work (batch questions of the command
line; usable by ``fuzz/campaign.py``): ``fn`` must be a module-level function
(it is pickled by name) whose result depends only on its argument, so the
backend changes nothing but the speed.

Backends:

* ``"process"`` (default): :class:`concurrent.futures.ProcessPoolExecutor`, forked
  where that is safe (:func:`start_method`: the workers start warm, with this process's
  imports), else spawned (each worker imports the package once); items travel in
  chunks (:func:`chunk_size`), each worker answers many. ``jobs=1`` (or a single item)
  runs in this process.
  The persistent proof cache is shared safely: each process opens its own SQLite
  connection to the same file (WAL journal, busy timeout; see
  :mod:`verified_indexing.engines.cache`).
* ``"ray"``: the same function over the same chunks as Ray tasks on the running Ray
  runtime, or on a local one started with ``num_cpus=jobs`` (extra ``distributed``: ``pip install
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

__all__ = ["BACKENDS", "CHUNK", "chunk_size", "default_jobs", "progress", "run_ordered", "start_method"]

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


CHUNK = 16
"""Most items a process-pool task carries (:func:`run_ordered` sends items in chunks: one message and one
future per chunk instead of per item; smaller chunks near the end of the work keep both workers busy)."""


def start_method() -> str:
    """The process pool's start method: ``fork`` where it is safe, else ``spawn``.

    A forked worker starts with every module this process imported (no interpreter start, no second import
    of islpy, z3 and the package: about 0.3 s a worker here). It is safe only in a process with one thread (a
    fork copies locks other threads may hold: z3's context prefetcher, a progress bar's monitor) and with no
    engine worker running (the child would share its pipes: :mod:`verified_indexing.engines.deadline`) and no
    runtime with native thread pools Python does not count loaded (jax's XLA, TVM, Ray: the same list the
    engine worker's fork checks);
    isl contexts and the proof cache's connection are per process already (they check the pid). Elsewhere
    (threads, macOS, Windows) a ``spawn`` pool: a fresh interpreter per worker."""
    from verified_indexing.engines import deadline

    if "fork" not in multiprocessing.get_all_start_methods() or deadline._WORKER.proc is not None:
        return "spawn"
    return "fork" if deadline.fork_is_safe() else "spawn"


def chunk_size(items: int, jobs: int) -> int:
    """Items a task carries: about a quarter of an even share (so that a slow chunk does not leave the other
    workers idle at the end), at most :data:`CHUNK`, at least one."""
    return max(1, min(CHUNK, items // (jobs * 4)))


def run_ordered(
    fn: Callable[[T], R],
    items: Sequence[T],
    *,
    jobs: int | None = None,
    backend: str = "process",
    what: str = "",
    on_crash: Callable[[T, BaseException], R] | None = None,
    chunk: int | None = None,
) -> Iterator[R]:
    """``fn(item)`` for each item, yielded in the order of ``items`` as soon as each
    one (and every one before it) is done. ``jobs``: workers (default
    :func:`default_jobs`). ``what``: label of the progress bar (none if empty).
    ``chunk``: items per process-pool task (default :func:`chunk_size`).

    The process pool forks where that is safe (:func:`start_method`), else spawns; the
    results are the same either way, and the same as ``jobs=1``'s (``fn`` is pure).

    ``on_crash``: on the process pool, a worker process that dies (a crash in a native
    library, the kernel's out-of-memory kill) breaks the pool; the items of the earliest
    unfinished chunk are then run one by one in a fresh process, the answer of an item whose
    process dies again is ``on_crash(item, error)``, and the other items still run (on a
    fresh pool). Without ``on_crash`` the error propagates. Items run in this process
    (``jobs=1``) and Ray tasks are not covered."""
    n = default_jobs() if jobs is None else jobs
    if n < 1:
        raise VerifiedIndexingError(f"--jobs must be at least 1, got {n}")
    if backend not in BACKENDS:
        raise VerifiedIndexingError(f"unknown backend {backend!r} (expected one of {', '.join(BACKENDS)})")
    if chunk is not None and chunk < 1:
        raise VerifiedIndexingError(f"chunk must be at least 1, got {chunk}")
    if backend == "ray":
        results = _ray(fn, items, n, chunk or chunk_size(len(items), n))
    elif n == 1 or len(items) <= 1:
        results = (fn(x) for x in items)
    else:  # the start method is chosen now, before a progress bar starts its thread
        size = chunk or chunk_size(len(items), n)
        results = _processes(fn, items, n, on_crash, size, start_method())
    return progress(results, len(items), what) if what else results


def _run_chunk(fn: Callable[[T], R], chunk: Sequence[T]) -> list[R]:
    """The unit of work of a pool task: ``fn`` over a chunk of items, in order."""
    return [fn(x) for x in chunk]


def _processes(
    fn: Callable[[T], R],
    items: Sequence[T],
    jobs: int,
    on_crash: Callable[[T, BaseException], R] | None,
    size: int,
    method: str,
) -> Iterator[R]:
    from concurrent.futures.process import BrokenProcessPool

    from verified_indexing.engines import points

    context = multiprocessing.get_context(method)
    # a spawned worker starts with the module defaults: it takes the parent's engine switch
    enumerate_small = (points.enabled(),)

    def pool_of(workers: int) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(max_workers=workers, mp_context=context, initializer=points.set_enabled,
                                   initargs=enumerate_small)

    start = 0
    while start < len(items):
        rest = items[start:]
        chunks = [rest[k:k + size] for k in range(0, len(rest), size)]
        pool = pool_of(min(jobs, len(chunks)))
        broken = False
        try:
            futures = [pool.submit(_run_chunk, fn, c) for c in chunks]
            for future in futures:
                try:
                    results = future.result()
                except BrokenProcessPool:
                    if on_crash is None:
                        raise
                    broken = True
                    break
                start += len(results)
                yield from results
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
        if broken:  # which item killed its worker: the earliest unfinished chunk's, one by one, alone
            solo = pool_of(1)
            try:
                for item in items[start:start + size]:
                    try:
                        result = solo.submit(fn, item).result()
                    except BrokenProcessPool as exc:
                        assert on_crash is not None
                        result = on_crash(item, exc)
                        solo.shutdown(wait=True)
                        solo = pool_of(1)
                    start += 1
                    yield result
            finally:
                solo.shutdown(wait=True, cancel_futures=True)


def _ray(fn: Callable[[T], R], items: Sequence[T], jobs: int, size: int) -> Iterator[R]:
    try:
        import ray
    except ImportError:
        raise VerifiedIndexingError(
            "--backend ray needs Ray: pip install 'verified-indexing[distributed]' (or pip install ray)"
        ) from None
    if not ray.is_initialized():
        ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False, configure_logging=False)
    remote: Any = ray.remote(_run_chunk)
    refs = [remote.remote(fn, items[k:k + size]) for k in range(0, len(items), size)]  # chunks, as the pool
    for ref in refs:
        yield from ray.get(ref)
