"""Random ``tvm.s_tir`` schedules of the TVM corpus workloads, read and validated step by step.

For each seed: a workload of ``tests/tvm_corpus/generate.py`` (unscheduled, static shapes, no scalar
parameters, no gathers), then 1 to 4 random steps among split, reorder, fuse, compute_at,
reverse_compute_at, cache_read, cache_write, parallel, vectorize, unroll, bind, decompose_reduction,
rfactor, storage_align, set_scope, compute_inline, reverse_compute_inline, annotate, blockize (a step TVM
refuses is skipped). After each step that changed the function:

* the reader reads TVM's printed function (``parse_tvmscript``): read, ``unknown`` naming the construct, or
  bad input (never expected: TVM printed it);
* the function before and after the step are compared by ``check_equivalence`` (proved / refuted / unknown);
  a proved or refuted step is re-run by TVM's compiled code (``llvm``) on random integer inputs: a proved
  step whose compiled code differs would be a false proof, a refuted one whose code agrees is reported.

Prints each refutation and each disagreement, then the tally per primitive and the ``unknown`` steps by
reason (:func:`reason_class`), in all and per primitive. Exit 1 on a false proof or a bad-input reading.
Needs TVM. ``--corpus`` instead compares each scheduled function of the corpus (``sched_*``) with the
unscheduled function it came from, with the same tally.

Run: ``.venv/bin/python benchmarks/tvm_schedules.py [--seeds N] [--first S] [--corpus]`` (default 300 seeds
from 0).
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "tvm_corpus"))

PRIMITIVES = ("split", "reorder", "fuse", "compute_at", "reverse_compute_at", "cache_read", "cache_write",
              "parallel", "vectorize", "unroll", "bind", "decompose_reduction", "rfactor", "storage_align",
              "set_scope", "compute_inline", "reverse_compute_inline", "annotate", "blockize")


def random_step(rng: random.Random, s: Any) -> None:
    """One random primitive on a random block of ``s`` (raises when TVM refuses)."""
    import re

    names = [m for m in re.findall(r'T\.sblock\("([^"]+)"\)', s.mod["main"].script()) if m != "root"]
    b = s.get_sblock(rng.choice(names))
    loops = s.get_loops(b)
    p = rng.choice(PRIMITIVES)
    if p == "split" and loops:
        s.split(rng.choice(loops), factors=[None, rng.choice([2, 3, 4])])
    elif p == "reorder" and len(loops) >= 2:
        order = list(loops)
        rng.shuffle(order)
        s.reorder(*order)
    elif p == "fuse" and len(loops) >= 2:
        k = rng.randrange(len(loops) - 1)
        s.fuse(loops[k], loops[k + 1])
    elif p == "compute_at" and s.get_consumers(b):
        s.compute_at(b, rng.choice(s.get_loops(s.get_consumers(b)[0])))
    elif p == "reverse_compute_at" and s.get_producers(b):
        s.reverse_compute_at(b, rng.choice(s.get_loops(s.get_producers(b)[0])))
    elif p == "cache_read":
        s.cache_read(b, 0, "shared")
    elif p == "cache_write":
        s.cache_write(b, 0, "local")
    elif p == "parallel" and loops:
        s.parallel(loops[0])
    elif p == "vectorize" and loops:
        s.vectorize(loops[-1])
    elif p == "unroll" and loops:
        s.unroll(rng.choice(loops))
    elif p == "bind" and loops:
        s.bind(loops[0], "blockIdx.x")
    elif p == "decompose_reduction" and loops:
        s.decompose_reduction(b, rng.choice(loops))
    elif p == "rfactor" and loops:
        s.rfactor(loops[-1], 0)
    elif p == "storage_align":
        s.storage_align(b, 0, axis=0, factor=8, offset=1)
    elif p == "set_scope":
        s.set_scope(b, 0, "shared")
    elif p == "compute_inline":
        s.compute_inline(b)
    elif p == "reverse_compute_inline":
        s.reverse_compute_inline(b)
    elif p == "annotate" and loops:
        s.annotate(loops[0], "pragma_x", 1)
    elif p == "blockize" and loops:
        s.blockize(loops[-1])


#: An unknown's reason, by the words that name it, and the class it is tallied under.
REASONS = (
    ("one more loop (the reduction loop)", "reduction loop not directly inside the init's loops (k outer, tiled)"),
    ("in a loop nest shared with", "a read shares a loop nest with its writer (compute_at, reverse_compute_at)"),
    ("a reduction in one program and a plain store", "a reduction in one program, a plain store in the other"),
    ("reduction loops have different lengths", "reduction loops of different lengths (rfactor, split)"),
    ("stores besides its reduction", "a reduction's tensor written by other stores too"),
    ("stores (one writer per tensor", "several stores into one tensor"),
    ("not proven injective", "a store map not proven injective"),
    ("not proven equal)", "a reduction read by another block differs between the programs"),
    ("without an algebraic law", "the values differ unless an algebraic law holds"),
    ("reads an element nothing wrote", "the original reads memory nothing wrote"),
    ("no longer writes the output", "the transformed program no longer writes an output"),
)


def functions() -> dict[str, Any]:
    """The corpus workloads of ``tests/tvm_corpus/generate.py`` (needs TVM)."""
    from generate import functions as made  # type: ignore[import-not-found]

    out: dict[str, Any] = made()
    return out


def reason_class(reason: str) -> str:
    """The class of an ``unknown``'s reason (:data:`REASONS`; else its first 90 characters)."""
    for words, name in REASONS:
        if words in reason:
            return name
    return "other: " + reason[:90]


def corpus() -> int:
    """Each scheduled function of the corpus (``sched_*``) against the unscheduled function it came from
    (the one with the same parameters): the verdicts and the unknowns' reasons."""

    from verified_indexing.errors import NotModelledError
    from verified_indexing.legality.tvmscript import parse_tvmscript
    from verified_indexing.tvm.equivalence import check_equivalence

    funcs = functions()
    base = {k: v for k, v in funcs.items() if not k.startswith("sched_")}
    tally: collections.Counter[str] = collections.Counter()

    def sig(f: Any) -> tuple[Any, ...]:
        return tuple((str(b.name), tuple(int(d) for d in b.shape)) for b in f.params)

    for name, f in sorted(funcs.items()):
        if not name.startswith("sched_"):
            continue
        orig = next(k for k in ("elementwise_chain", "matmul", "row_sum", "matmul_bias_relu", "softmax")
                    if sig(base[k]) == sig(f))
        try:
            after = parse_tvmscript(f.script())
        except NotModelledError as exc:
            tally["read: unknown"] += 1
            print(f"{name} (from {orig}): read: unknown: {exc.message.splitlines()[0][:100]}")
            continue
        r = check_equivalence(parse_tvmscript(base[orig].script()), after, timeout=10.0)
        tally[r.status] += 1
        why = f": {reason_class(r.reason)}" if r.status == "unknown" else ""
        if r.status == "unknown":
            tally[f"unknown{why}"] += 1
        print(f"{name} (from {orig}): {r.status}{why}")
    for key, count in sorted(tally.items()):
        print(f"{key}: {count}")
    return 0


def _run(tvm: Any, fn: Any, arrays: list[Any]) -> list[Any]:
    m = tvm.compile(fn, target="llvm")
    args = [tvm.runtime.tensor(a.copy()) for a in arrays]
    m(*args)
    return [a.numpy() for a in args]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=300)
    ap.add_argument("--first", type=int, default=0)
    ap.add_argument("--corpus", action="store_true",
                    help="the corpus's scheduled functions against their unscheduled ones instead")
    args = ap.parse_args()
    if args.corpus:
        return corpus()
    import tvm  # type: ignore[import-untyped]

    from verified_indexing.errors import NotModelledError, VerifiedIndexingError
    from verified_indexing.legality.tvmscript import parse_tvmscript
    from verified_indexing.tvm.equivalence import check_equivalence

    base = {k: v for k, v in functions().items()
            if not k.startswith("sched_") and not any(w in k for w in ("symbolic", "gather", "scalar"))}
    tally: collections.Counter[str] = collections.Counter()
    bad = 0
    for seed in range(args.first, args.first + args.seeds):
        rng = random.Random(seed)
        name = rng.choice(sorted(base))
        s = tvm.s_tir.Schedule(base[name])
        for n in range(rng.randint(1, 4)):
            before = s.mod["main"]
            try:
                random_step(rng, s)
            except Exception:  # TVM refused the step (ScheduleError and the like): skipped
                continue
            after = s.mod["main"]
            if before.script() == after.script():
                continue
            kind = s.trace.insts[-1].kind.name
            try:
                p, q = parse_tvmscript(before.script()), parse_tvmscript(after.script())
            except NotModelledError as exc:
                tally["read: unknown"] += 1
                print(f"seed {seed} step {n} {name} {kind}: unknown: {exc.message.splitlines()[0][:120]}")
                continue
            except VerifiedIndexingError as exc:
                tally["read: BAD INPUT"] += 1
                bad += 1
                print(f"seed {seed} step {n} {name} {kind}: BAD INPUT: {str(exc).splitlines()[0]}")
                continue
            tally["read"] += 1
            r = check_equivalence(p, q, timeout=10.0)
            tally[r.status] += 1
            tally[f"{kind}: {r.status}"] += 1
            if r.status == "unknown":
                tally[f"unknown: {reason_class(r.reason)}"] += 1
                tally[f"unknown: {kind}: {reason_class(r.reason)}"] += 1
            if r.status not in ("proved", "refuted"):
                continue
            rs = np.random.default_rng(seed)
            arrays = [rs.integers(-3, 4, size=tuple(int(d) for d in b.shape)).astype(str(b.dtype))
                      for b in before.params]
            try:
                x, y = _run(tvm, before, arrays), _run(tvm, after, arrays)
            except Exception:  # e.g. a thread binding on the CPU target: not run
                tally[f"{r.status}, not run by TVM"] += 1
                continue
            same = all(np.allclose(a, b, rtol=1e-4, atol=1e-4) for a, b in zip(x, y))
            if r.status == "proved" and not same:
                tally["FALSE PROOF"] += 1
                bad += 1
                print(f"seed {seed} step {n} {name} {kind}: FALSE PROOF (TVM's compiled code differs)")
            elif r.status == "refuted":
                agree = "TVM's compiled code differs too" if not same else "TVM's compiled code agrees here"
                print(f"seed {seed} step {n} {name} {kind}: refuted: {r.reason[:120]} ({agree})")
    for key, count in sorted(tally.items()):
        print(f"{key}: {count}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
