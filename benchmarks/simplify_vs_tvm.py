"""The verified simplifier next to TVM's arithmetic simplifier and isl, paired per map, in one run.

The benchmark builds its own maps (``N`` seeded random ones, default 200, plus the
fixed families): the spec's examples, the XLA/MLIR parity suite's inputs
(XLA-test-style cases), reshape chains, random op chains (reshape, transpose,
strided slice, reverse, composed), and the unsimplified maps of the bundled HLO
modules in ``examples/``. Each of our configurations is timed in a phase of its own, map after map,
every map's first simplification in the process (memos forgotten before it, the cost model's too): TVM's and
isl's runs of a map come after, in the checking pass (TVM's best of three fresh analyzers per map,
likewise in a phase of its own); the same first sight timed there, between
them (``verified, after set-up``: cold CPU caches), is printed too. For every map it times:

* ``verified``: :func:`simplify_with_report` (every proof, no persistent cache);
* ``verified, isl only``: the same with small domains not enumerated (``points.set_enabled(False)``,
  what the command line does), so every exact question goes to isl;
* ``verified, no isl candidate``: ``isl_candidate=False`` (every proof, without isl's quasi-affine
  form as an extra candidate): what the proofs cost apart from that search for cheaper forms;
* ``warm``: the same question again with a persistent cache that already holds it (the
  ``ProofCache`` object that stored it; ``warm file``: a fresh object, the row read from the file);
* ``unverified``: ``verify=False`` (the rules alone);
* ``TVM``: ``tvm.sym.Analyzer().simplify`` of every result, with every variable's
  range bound by ``analyzer.bind`` (the map's constraints are not given to TVM);
* ``isl``: ``islpy.Map(text).coalesce()`` of the same map (text built beforehand).

It prints the per-map ratios (median, p95) of each against TVM and isl; a before/after table of the
first sight and the repeat, "before" the round's start (:data:`BEFORE_COMMIT`, a ``git archive`` of it)
and "after" this checkout, each timed in a worker process of its own, alternating per map (skipped with
one line when the commit is not in the checkout; ``VI_BENCH_BEFORE=none`` switches it off; the run exits
1 when before and after give different outputs); the
quality tally (fewer/same/more floordiv, ceildiv and mod than TVM's result), and
checks every output by brute force: the input and our result are enumerated
(sampled above ``ENUM_LIMIT`` points) and must be the same relation; TVM's results
are compared pointwise on the input's domain. TVM's ``floordiv``/``floormod`` are
checked against our floor semantics first. Without ``apache-tvm`` (the ``bench``
extra) the TVM columns print one "skipped" line. Timings are printed, never asserted.

Run: ``python benchmarks/simplify_vs_tvm.py [N]``.
"""

from __future__ import annotations

import itertools
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from simplify import forget_memos, parity_maps, random_maps, spec_maps

from verified_indexing import IndexingMap, compose
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
    _BinaryDiv,
    emax,
    emin,
)

ROOT = Path(__file__).resolve().parent.parent
ENUM_LIMIT = 200_000
SAMPLES = 20_000


# -- the maps -------------------------------------------------------------------------------------------------
def _delinearize(flat: AffineExpr, shape: list[int]) -> list[AffineExpr]:
    out: list[AffineExpr] = []
    stride = 1
    strides = []
    for n in reversed(shape):
        strides.append(stride)
        stride *= n
    strides.reverse()
    for i, (n, s) in enumerate(zip(shape, strides)):
        e = flat.floordiv(s) if s != 1 else flat
        out.append(e.mod(n) if i > 0 else e)
    return out


def reshape_map(out_shape: list[int], in_shape: list[int]) -> IndexingMap:
    """Output-to-input map of a row-major reshape from ``in_shape`` to ``out_shape``."""
    flat: AffineExpr = Const(0)
    stride = 1
    for i in reversed(range(len(out_shape))):
        flat = flat + Dim(i) * stride
        stride *= out_shape[i]
    return IndexingMap([(0, n - 1) for n in out_shape], _delinearize(flat, in_shape))


def _factorings(total: int, rng: random.Random) -> list[int]:
    dims: list[int] = []
    rest = total
    while rest > 1 and len(dims) < 3:
        divs = [d for d in range(2, rest + 1) if rest % d == 0]
        d = rng.choice(divs)
        dims.append(d)
        rest //= d
    if rest > 1:
        dims.append(rest)
    rng.shuffle(dims)
    return dims or [1]


def reshape_chains(n: int, seed: int = 11) -> list[IndexingMap]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        total = rng.choice([24, 32, 48, 60, 64, 96, 120, 128, 256])
        shapes = [_factorings(total, rng) for _ in range(rng.randint(2, 4))]
        m = reshape_map(shapes[1], shapes[0])
        for a, b in itertools.pairwise(shapes[1:]):
            m = compose(reshape_map(b, a), m)
        out.append(m)
    return out


def _op(shape: list[int], rng: random.Random) -> tuple[list[int], IndexingMap]:
    """A random op on a tensor of ``shape``: its output shape and output-to-input map."""
    kind = rng.choice(["reshape", "transpose", "slice", "reverse"])
    rank = len(shape)
    if kind == "reshape" or (rank == 1 and kind == "transpose"):
        total = 1
        for n in shape:
            total *= n
        new = _factorings(total, rng)
        return new, reshape_map(new, shape)
    if kind == "transpose":
        perm = list(range(rank))
        rng.shuffle(perm)
        new = [shape[p] for p in perm]
        res: list[AffineExpr] = [Dim(0)] * rank
        for i, p in enumerate(perm):
            res[p] = Dim(i)
        return new, IndexingMap([(0, n - 1) for n in new], res)
    if kind == "slice":
        stride = [rng.choice([1, 2, 3]) if n > 3 else 1 for n in shape]
        start = [rng.randrange(0, max(1, n // 4)) for n in shape]
        new = [max(1, (n - s + st - 1) // st) for n, s, st in zip(shape, start, stride)]
        return new, IndexingMap([(0, n - 1) for n in new], [Dim(i) * st + s for i, (s, st) in enumerate(zip(start, stride))])
    axis = rng.randrange(rank)
    res = [Dim(i) if i != axis else Const(shape[i] - 1) - Dim(i) for i in range(rank)]
    return shape, IndexingMap([(0, n - 1) for n in shape], res)


def op_chains(n: int, seed: int = 12) -> list[IndexingMap]:
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        shape = _factorings(rng.choice([48, 64, 96, 120, 144]), rng)
        shape, m = _op(shape, rng)
        for _ in range(rng.randint(1, 4)):
            shape, nxt = _op(shape, rng)
            m = compose(nxt, m)
        out.append(m)
    return out


def hlo_maps() -> list[IndexingMap]:
    """The unsimplified maps (output to input) of every fusion of the bundled HLO modules."""
    from verified_indexing.hlo.fusion import analyze_module
    from verified_indexing.hlo.parser import parse_module

    out: list[IndexingMap] = []
    seen: set[IndexingMap] = set()
    for path in sorted((ROOT / "examples").glob("*/*.hlo")):
        module = parse_module(path.read_text(), str(path))
        computation = None if module.fusions() else module.entry_name
        try:
            results = analyze_module(module, computation=computation, verify=False, simplify=False)
        except Exception:
            continue
        for r in results:
            for t in r.targets:
                for a in t.maps:
                    if a.map.state == "ok" and a.map not in seen and a.map.num_results:
                        seen.add(a.map)
                        out.append(a.map)
    return out


# -- TVM ------------------------------------------------------------------------------------------------------
def load_tvm() -> Any:
    try:
        import tvm  # type: ignore[import-untyped]
        from tvm import sym as _sym  # noqa: F401  (TVM >= 0.22: arith lives in tvm.sym, tir in tvm.tirx)
        from tvm import tirx as _tirx  # noqa: F401
    except Exception:
        return None
    return tvm


def variables(m: IndexingMap) -> list[tuple[str, int, Any]]:
    return [(k, i, v) for k, i, v in m.variables()]


def to_tvm(tvm: Any, e: AffineExpr, env: dict[tuple[str, int], Any]) -> Any:
    tir = tvm.tirx
    if isinstance(e, Const):
        return tir.IntImm("int64", e.value)
    if isinstance(e, Dim):
        return env[("d", e.index)]
    if isinstance(e, Sym):
        return env[("s", e.index)]
    if isinstance(e, RtSym):
        return env[("rt", e.index)]
    if isinstance(e, Sum):
        acc = None
        for t, c in e.terms:
            x = to_tvm(tvm, t, env)
            x = x if c == 1 else x * tir.IntImm("int64", c)
            acc = x if acc is None else acc + x
        if e.constant or acc is None:
            k = tir.IntImm("int64", e.constant)
            acc = k if acc is None else acc + k
        return acc
    if isinstance(e, _BinaryDiv):
        a = to_tvm(tvm, e.lhs, env)
        c = tir.IntImm("int64", e.divisor)
        if isinstance(e, FloorDiv):
            return tir.floordiv(a, c)
        if isinstance(e, Mod):
            return tir.floormod(a, c)
        return tir.IntImm("int64", 0) - tir.floordiv(tir.IntImm("int64", 0) - a, c)  # ceildiv
    if isinstance(e, Min):
        return tir.min(to_tvm(tvm, e.lhs, env), to_tvm(tvm, e.rhs, env))
    if isinstance(e, Max):
        return tir.max(to_tvm(tvm, e.lhs, env), to_tvm(tvm, e.rhs, env))
    raise TypeError(type(e).__name__)


def from_tvm(tvm: Any, x: Any, names: dict[str, AffineExpr]) -> AffineExpr:
    """Our expression for a TVM result (integer arithmetic only; anything else raises)."""
    tir = tvm.tirx
    if isinstance(x, tir.IntImm):
        return Const(int(x.value))
    if isinstance(x, tir.Var):
        return names[x.name]
    if isinstance(x, tir.Cast):
        return from_tvm(tvm, x.value, names)
    if isinstance(x, tir.Add):
        return from_tvm(tvm, x.a, names) + from_tvm(tvm, x.b, names)
    if isinstance(x, tir.Sub):
        return from_tvm(tvm, x.a, names) - from_tvm(tvm, x.b, names)
    if isinstance(x, tir.Mul):
        a, b = from_tvm(tvm, x.a, names), from_tvm(tvm, x.b, names)
        if isinstance(b, Const):
            return a * b.value
        if isinstance(a, Const):
            return b * a.value
        raise TypeError("non-affine product")
    if isinstance(x, (tir.FloorDiv, tir.FloorMod)):
        b = from_tvm(tvm, x.b, names)
        if not isinstance(b, Const):
            raise TypeError("symbolic divisor")
        a = from_tvm(tvm, x.a, names)
        return a.floordiv(b.value) if isinstance(x, tir.FloorDiv) else a.mod(b.value)
    if isinstance(x, tir.Min):
        return emin(from_tvm(tvm, x.a, names), from_tvm(tvm, x.b, names))
    if isinstance(x, tir.Max):
        return emax(from_tvm(tvm, x.a, names), from_tvm(tvm, x.b, names))
    raise TypeError(f"unsupported TVM node {type(x).__name__}")


def tvm_floor_semantics(tvm: Any) -> str:
    """Check that TVM's constant-folded floordiv/floormod agree with ours on every sign combination."""
    from verified_indexing.expr import floor_div, floor_mod

    tir = tvm.tirx
    an = tvm.sym.Analyzer()
    n = bad = 0
    for a in range(-9, 10):
        for b in (-4, -3, -1, 1, 2, 3, 5):
            q = an.simplify(tir.floordiv(tir.IntImm("int64", a), tir.IntImm("int64", b)))
            r = an.simplify(tir.floormod(tir.IntImm("int64", a), tir.IntImm("int64", b)))
            n += 1
            bad += int(q.value) != floor_div(a, b) or int(r.value) != floor_mod(a, b)
    return f"TVM floordiv/floormod vs ours on {n} constant pairs: {'agree' if not bad else f'{bad} DISAGREE'}"


class TvmCase:
    """One map's TVM inputs, built before timing."""

    def __init__(self, tvm: Any, m: IndexingMap) -> None:
        self.tvm = tvm
        self.vars = []
        self.env: dict[tuple[str, int], Any] = {}
        self.names: dict[str, AffineExpr] = {}
        ctor = {"d": Dim, "s": Sym, "rt": RtSym}
        for k, i, v in m.variables():
            name = f"{k}{i}"
            var = tvm.tirx.Var(name, "int64")
            self.env[(k, i)] = var
            self.names[name] = ctor[k](i)
            self.vars.append((var, tvm.ir.Range.from_min_extent(v.bounds.lo, v.bounds.size())))
        self.exprs = [to_tvm(tvm, r, self.env) for r in m.results]

    def run(self) -> list[Any]:
        an = self.tvm.sym.Analyzer()
        for var, rng in self.vars:
            an.bind(var, rng)
        return [an.simplify(x) for x in self.exprs]


# -- brute force ----------------------------------------------------------------------------------------------
def _points(m: IndexingMap, rng: random.Random) -> tuple[list[tuple[tuple[int, ...], ...]], bool]:
    """The box points of ``m`` (every one, or a sample above ENUM_LIMIT); True when exhaustive."""
    ranges = [(v.bounds.lo, v.bounds.hi) for _, _, v in m.variables()]
    nd, ns = m.num_dims, m.num_range_vars
    pts: Iterable[tuple[int, ...]]
    if m.box_size() <= ENUM_LIMIT:
        pts = itertools.product(*[range(lo, hi + 1) for lo, hi in ranges])
        exhaustive = True
    else:
        pts = (tuple(rng.randint(lo, hi) for lo, hi in ranges) for _ in range(SAMPLES))
        exhaustive = False
    return [(p[:nd], p[nd:nd + ns], p[nd + ns:]) for p in pts], exhaustive


def relation(m: IndexingMap, points: list[Any] | None = None) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
    """``{(dims, rts) -> results}`` over the domain, range variables existential."""
    out = set()
    pts = points if points is not None else _points(m, random.Random(0))[0]
    for d, s, r in pts:
        if m.contains(d, s, r):
            out.add((d + r, m.evaluate(d, s, r)))
    return out


def same_relation(a: IndexingMap, b: IndexingMap) -> tuple[bool, bool]:
    """(agree, exhaustive): ``a`` and ``b`` define the same relation on their domains."""
    if a == b:
        return True, True
    if a.box_size() <= ENUM_LIMIT and b.box_size() <= ENUM_LIMIT:
        return relation(a) == relation(b), True
    # Sampled: every sampled point of a's domain maps the same way in b.
    pts, _ = _points(a, random.Random(1))
    if (a.num_dims, a.num_range_vars, a.num_rt_vars) == (b.num_dims, b.num_range_vars, b.num_rt_vars):
        for d, s, r in pts:
            if a.contains(d, s, r) != b.contains(d, s, r):
                return False, False
            if a.contains(d, s, r) and a.evaluate(d, s, r) != b.evaluate(d, s, r):
                return False, False
        return True, False
    if b.num_range_vars == 0 and (a.num_dims, a.num_rt_vars) == (b.num_dims, b.num_rt_vars):
        # range variables dropped: each sampled point's (dims, rts) -> results must be b's
        for d, s, r in pts:
            if a.contains(d, s, r) and (not b.contains(d, (), r) or a.evaluate(d, s, r) != b.evaluate(d, (), r)):
                return False, False
        return True, False
    raise NotImplementedError("different variables and too many points to enumerate")


def divs(results: Any) -> int:
    return sum(1 for r in results for n in r.walk() if isinstance(n, (FloorDiv, CeilDiv, Mod)))


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))]


def best_of(fn: Any, k: int = 3) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(k):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


BEFORE_COMMIT = os.environ.get("VI_BENCH_BEFORE", "3ae0c1c")
"""The code of the "before" column: the start of this round (issue 27 item 2, fourth round), run by a
worker process on a tree of that commit (``git archive``; ``VI_BENCH_BEFORE`` names another commit)."""


def _families(n: int) -> list[tuple[str, list[IndexingMap]]]:
    return [
        ("spec", spec_maps()),
        ("parity", parity_maps()),
        ("reshape chains", reshape_chains(max(10, n // 8))),
        ("op chains", op_chains(max(10, n // 4))),
        ("HLO", hlo_maps()),
        ("random", random_maps(n)),
    ]


def _maps(n: int) -> tuple[list[tuple[str, IndexingMap]], list[tuple[str, list[IndexingMap]]]]:
    families = _families(n)
    cap = n if n < 50 else None  # a small N (the CI smoke run) takes N maps of each family
    return [(f, m) for f, ms in families for m in ms[:cap]], [(f, ms[:cap]) for f, ms in families]


def _warm_up(n: int) -> None:
    """Simplify a few maps (fresh copies, not the timed objects) so that each process's one-time costs
    (imports, the compiled matcher, isl's context) fall outside the timed runs, then forget the memos."""
    from verified_indexing.simplify import simplify_with_report

    for _, m in _maps(n)[0][:: max(1, min(n, 200) // 20)][:25]:
        simplify_with_report(m)
    forget_memos()


def _worker(n: int) -> int:
    """The before column's process (``--worker N``, run with another tree of the package first on the
    path): builds the same maps, then for each index read from stdin prints the first and repeated
    simplification's seconds and the output map on one line."""
    from verified_indexing.engines import to_isl_map
    from verified_indexing.simplify import simplify_with_report

    maps = [m for _, m in _maps(n)[0]]
    for m in maps:
        to_isl_map(m).to_str()  # (as the main process does before timing a map)
    _warm_up(n)
    print("ready", flush=True)
    for line in sys.stdin:
        m = maps[int(line)]
        forget_memos()
        t = time.perf_counter()
        rep = simplify_with_report(m)
        first = time.perf_counter() - t
        t = time.perf_counter()
        simplify_with_report(m)
        repeat = time.perf_counter() - t
        print(f"{first!r} {repeat!r} {rep.map.format(True)}", flush=True)
    return 0


class Worker:
    """A worker process timing the maps' first sight on a tree of :data:`BEFORE_COMMIT` (``commit``), or on
    this checkout (``commit=None``): the before/after table times both the same way, each in a process of
    its own. :attr:`proc` is ``None`` when the commit is not in this checkout (a shallow clone) or git is
    missing (:attr:`why` says so)."""

    def __init__(self, n: int, commit: str | None) -> None:
        import subprocess

        self.proc: Any = None
        self.why = ""
        tree = self.tree = tempfile.mkdtemp(prefix="vi-bench-worker-")
        if commit is None:
            tree = str(ROOT)
        else:
            try:
                archive = subprocess.run(["git", "-C", str(ROOT), "archive", commit, "verified_indexing"],
                                         capture_output=True, check=True, timeout=60).stdout
                subprocess.run(["tar", "-x", "-C", tree], input=archive, check=True, timeout=60)
            except (OSError, subprocess.SubprocessError) as exc:
                self.why = f"no tree of commit {commit} ({type(exc).__name__})"
                return
        env = dict(os.environ, PYTHONPATH=tree)
        self.proc = subprocess.Popen([sys.executable, __file__, "--worker", str(n)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env=env, cwd=str(ROOT))
        if self.proc.stdout.readline().strip() != "ready":
            self.proc = None
            self.why = f"the worker on {commit or 'this checkout'} did not start"

    def run(self, i: int) -> tuple[float, float, str]:
        """(first sight seconds, repeat seconds, output map text) of map ``i`` in the worker."""
        self.proc.stdin.write(f"{i}\n")
        self.proc.stdin.flush()
        first, repeat, text = self.proc.stdout.readline().rstrip("\n").split(" ", 2)
        return float(first), float(repeat), text

    def close(self) -> None:
        import shutil

        if self.proc is not None:
            self.proc.stdin.close()
            self.proc.wait(timeout=60)
        shutil.rmtree(self.tree, ignore_errors=True)


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    import islpy as isl

    from verified_indexing.engines import ProofCache, points, to_isl_map
    from verified_indexing.simplify import simplify_with_report

    maps, families = _maps(n)
    before: Worker | None = None
    after: Worker | None = None
    if tvm_and_git_wanted():
        before = Worker(n, BEFORE_COMMIT)
        after = Worker(n, None) if before.proc is not None else None
    tvm = load_tvm()
    print(f"simplify vs TVM and isl: {len(maps)} maps ("
          + ", ".join(f"{f} {len(ms)}" for f, ms in families) + ")")
    if tvm is None:
        print("TVM: skipped: apache-tvm not installed (pip install 'verified-indexing[bench]')")
    else:
        print(f"TVM {tvm.__version__}: {tvm_floor_semantics(tvm)}")

    _warm_up(n)
    tmp = tempfile.mkdtemp(prefix="vi-bench-tvm-")
    cache = ProofCache(os.path.join(tmp, "cache.sqlite"))
    ver: list[float] = []
    ver_repeat: list[float] = []
    before_first: list[float] = []
    before_repeat: list[float] = []
    after_first: list[float] = []
    after_repeat: list[float] = []
    outputs: list[str] = []
    differ_before = 0
    ver_isl: list[float] = []
    differ_isl = 0
    ver_plain: list[float] = []
    more_plain = 0
    warm: list[float] = []
    warm_file: list[float] = []
    unv: list[float] = []
    tv: list[float] = []
    il: list[float] = []
    tally = {"fewer": 0, "same": 0, "more": 0}
    tvm_untranslatable = 0
    wrong_ours = wrong_tvm = sampled = unchecked = 0
    not_proved = 0
    proof_engines: dict[str, int] = {}
    # First sight of every map, one after the other with nothing else in between (the peers' runs and the
    # checks below come after: run between two of ours, TVM's and isl's work evicted our data from the CPU's
    # caches, and a first sight measured that way is the cost of the interleaving, not of the map)
    reps = []
    ver_cold: list[float] = []
    for _, m in maps:
        forget_memos()
        t = time.perf_counter()
        rep = simplify_with_report(m)
        ver.append(time.perf_counter() - t)
        t = time.perf_counter()
        simplify_with_report(m)  # again in the process (in-process memos kept)
        ver_repeat.append(time.perf_counter() - t)
        reps.append(rep)
    # the variants, each in a phase of its own in the same way (later maps' first sights: the same maps
    # again, each after forgetting the memos; the map objects were seen once)
    reps_isl = []
    prev = points.set_enabled(False)  # the command line's configuration: every exact question to isl
    try:
        for _, m in maps:
            forget_memos()
            t = time.perf_counter()
            reps_isl.append(simplify_with_report(m))
            ver_isl.append(time.perf_counter() - t)
    finally:
        points.set_enabled(prev)
    reps_plain = []
    for _, m in maps:
        forget_memos()
        t = time.perf_counter()
        reps_plain.append(simplify_with_report(m, isl_candidate=False))  # without isl's extra candidates
        ver_plain.append(time.perf_counter() - t)
    # TVM likewise in a phase of its own: every map's inputs built first, then each map's best of three
    # fresh analyzers, map after map
    tcases = [TvmCase(tvm, m) if tvm is not None else None for _, m in maps]
    tvm_runs = [best_of(c.run) if c is not None else None for c in tcases]
    for (fam, m), rep, tcase, tvm_run in zip(maps, reps, tcases, tvm_runs):
        text = to_isl_map(m).to_str()
        forget_memos()  # the first sight as the benchmark measured it before: right after the peers' set-up
        t = time.perf_counter()
        simplify_with_report(m)
        ver_cold.append(time.perf_counter() - t)
        outputs.append(rep.map.format(True))
        engine_name = "unchanged" if rep.verdict is None else str(rep.verdict.engine)
        proof_engines[engine_name] = proof_engines.get(engine_name, 0) + 1
        if reps_isl[len(outputs) - 1].map != rep.map:
            differ_isl += 1
        more_plain += divs(reps_plain[len(outputs) - 1].map.results) > divs(rep.map.results)
        if not rep.verified:
            not_proved += 1
        simplify_with_report(m, cache=cache)  # fill the persistent cache
        warm.append(best_of(lambda m=m: simplify_with_report(m, cache=cache))[0])
        fresh = ProofCache(cache.path)  # another process's view: the row is read from the file
        fresh._open()
        t = time.perf_counter()
        simplify_with_report(m, cache=fresh)
        warm_file.append(time.perf_counter() - t)
        fresh.close()
        unv.append(best_of(lambda m=m: simplify_with_report(m, verify=False))[0])
        il.append(best_of(lambda text=text: isl.Map(text).coalesce())[0])
        try:
            ok, exhaustive = same_relation(m, rep.map)
        except NotImplementedError:
            ok, exhaustive = True, False
            unchecked += 1
        wrong_ours += not ok
        sampled += not exhaustive
        if not ok:
            print(f"  WRONG ({fam}): {m.format(True)}  ->  {rep.map.format(True)}")
        if tcase is not None and tvm_run is not None:
            secs, outs = tvm_run
            tv.append(secs)
            try:
                theirs = [from_tvm(tvm, x, tcase.names) for x in outs]
            except (TypeError, KeyError):
                tvm_untranslatable += 1
                continue
            mine, other = divs(rep.map.results), divs(theirs)
            tally["fewer" if mine < other else "same" if mine == other else "more"] += 1
            tm = m.replace(results=theirs)
            pts, _ = _points(m, random.Random(2))
            if any(m.contains(*p) and m.evaluate(*p) != tm.evaluate(*p) for p in pts):
                wrong_tvm += 1

    def ratio_line(label: str, xs: list[float], ys: list[float]) -> str:
        rs = [x / y for x, y in zip(xs, ys) if y > 0]
        return f"  {label:<28} median x{statistics.median(rs):8.2f}   p95 x{pct(rs, 0.95):8.2f}"

    print("per-map times (ms): " + "; ".join(
        f"{name} median {statistics.median(xs) * 1000:.3f} p95 {pct(xs, 0.95) * 1000:.3f}"
        for name, xs in [("verified", ver), ("verified, isl only", ver_isl), ("verified, no isl candidate", ver_plain),
                         ("warm", warm),
                         ("warm file", warm_file), ("unverified", unv),
                         ("isl", il)]
        + ([("TVM", tv)] if tv else [])))
    if tv:
        print("per-map ratios against TVM (paired):")
        print(ratio_line("verified / TVM", ver, tv))
        print(ratio_line("verified, after set-up / TVM", ver_cold, tv)
              + "   (the same, timed between TVM's and isl's set-up and runs: cold CPU caches)")
        print(ratio_line("verified, isl only / TVM", ver_isl, tv))
        print(ratio_line("verified, no isl cand. / TVM", ver_plain, tv))
        print(ratio_line("warm cache / TVM", warm, tv))
        print(ratio_line("warm, row from the file / TVM", warm_file, tv))
        print(ratio_line("unverified / TVM", unv, tv))
        print(ratio_line("isl / TVM", il, tv))
    if before is not None and after is not None and before.proc is not None and after.proc is not None:
        # Before and after, each in a worker process of its own, alternating which goes first per map; run
        # after the timings above (a worker running between them would slow the main process's runs).
        for index in range(len(maps)):
            differs = False
            for w in (before, after) if index % 2 == 0 else (after, before):
                first, repeat, out_text = w.run(index)
                (before_first if w is before else after_first).append(first)
                (before_repeat if w is before else after_repeat).append(repeat)
                differs = differs or out_text != outputs[index]
            differ_before += differs
    for worker in (before, after):
        if worker is not None:
            worker.close()
    if tv and not before_first:
        print(f"before / after this round's changes: skipped: {before.why if before is not None else 'not asked'}")
    if tv and before_first:
        print(f"before / after this round's changes (before: commit {BEFORE_COMMIT}, the round's start; after: this "
              "checkout; each in a worker process of its own, the two alternating per map), medians of per-map ratios "
              "against TVM, one run:")
        print(f"  {'':<26} {'before':>10} {'after':>10}")
        for label, b, a in [("first sight (no cache)", before_first, after_first),
                            ("repeat (in-process memos)", before_repeat, after_repeat)]:
            rb = statistics.median(x / y for x, y in zip(b, tv) if y > 0)
            ra = statistics.median(x / y for x, y in zip(a, tv) if y > 0)
            print(f"  {label:<26} x{rb:9.2f} x{ra:9.2f}")
        paired = statistics.median(a / b for a, b in zip(after_first, before_first) if b > 0)
        print(f"  (ms, median: first sight {statistics.median(before_first) * 1000:.3f} -> "
              f"{statistics.median(after_first) * 1000:.3f}, repeat {statistics.median(before_repeat) * 1000:.3f} -> "
              f"{statistics.median(after_repeat) * 1000:.3f}; first sight paired per map, after / before: median "
              f"{paired:.3f}; outputs differ on {differ_before} maps)")
    print("first proof of each map by engine (rules: every step a proven rule or domain rule; unchanged: "
          "nothing to prove): " + ", ".join(f"{k} {v}" for k, v in sorted(proof_engines.items())))
    print("per-map ratios against isl parse+coalesce (paired):")
    print(ratio_line("verified / isl", ver, il))
    print(ratio_line("verified, isl only / isl", ver_isl, il))
    print(ratio_line("warm cache / isl", warm, il))
    print(ratio_line("unverified / isl", unv, il))
    print(f"small domains by enumeration (numpy) vs isl only (the command line's setting): "
          f"{'on' if points.enabled() else 'off (numpy missing)'}; results differ on {differ_isl} maps")
    print(f"without isl's quasi-affine candidate (isl_candidate=False): more floordiv/ceildiv/mod than the default "
          f"on {more_plain} maps")
    if tvm is not None:
        print(f"quality (floordiv+ceildiv+mod in the results) against TVM: fewer {tally['fewer']}, "
              f"same {tally['same']}, more {tally['more']}; TVM result not translatable: {tvm_untranslatable}")
        print(f"brute force, TVM's results: {len(maps) - tvm_untranslatable - wrong_tvm} agree with the input, "
              f"{wrong_tvm} WRONG")
    print(f"brute force, our results: {len(maps) - wrong_ours - unchecked}/{len(maps)} the same relation as the "
          f"input ({len(maps) - sampled} enumerated exhaustively, {sampled - unchecked} on sampled points, "
          f"{unchecked} too large to compare), {wrong_ours} WRONG; "
          f"not proven (input returned): {not_proved}")
    if differ_before:
        print(f"OUTPUT CHANGED: this round's before and after differ on {differ_before} maps")
    return 1 if wrong_ours or differ_before else 0


def tvm_and_git_wanted() -> bool:
    """Whether to run the before column (``VI_BENCH_BEFORE=none`` switches it off)."""
    return BEFORE_COMMIT.lower() != "none"


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        sys.exit(_worker(int(sys.argv[2])))
    sys.exit(main())
