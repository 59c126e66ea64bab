"""A differential campaign against independent oracles (``make fuzz``).

Areas (each check is seeded by ``(seed, area, index)``, so a run is reproducible
and can be resumed):

* ``equal``    -- two random maps (a map and a mutation of it) compared with
  ``prove_equal``; the oracle enumerates both relations ``{(d, rt) -> results}``
  by evaluating the *text* of the maps with plain Python integers (``//``, ``%``,
  an ``@`` operator for ``ceildiv``): no code of the library is involved.
* ``simplify`` -- a random map simplified; the oracle compares the relations of
  the input and the output the same way; also checks that a second
  ``simplify`` changes nothing (a fixpoint).
* ``rule``     -- a random rewrite ``LHS -> RHS`` over bounded variables checked
  with ``check-rule``; the oracle enumerates the domain.
* ``cli``      -- random bad command lines (NaN, negative, zero and junk numbers,
  deep nesting, junk maps): the exit code must be 3 (never 4, never a traceback).
* ``hlo``      -- random HLO op chains and single ops: the property tests of the
  test suite (``tests/test_hlo_*``), each run on freshly seeded examples; their
  oracle is the numpy interpreter of HLO in ``tests/hlo_oracle.py``.
* ``tvm``      -- random TIR functions, one of TVM's schedule primitives applied by
  TVM and its result validated (``fuzz/tvm_area.py``; ``skip`` without TVM); TVM
  results refuted, TVM refusals the project proves legal and TVM crashes are
  written to the findings (``finding: true``) with program, seed and witness.
* ``mlir``     -- random Linalg producer-consumer pairs (``fuzz/mlir_area.py``, 20 per job,
  one ``iree-opt`` run): MLIR's ``linalg-fuse-elementwise-ops`` applied and its output
  validated by ``validate-mlir``'s checks; refuted pass outputs are findings with
  the function, seed and witness; ``skip`` without IREE.
* ``legality`` -- random fusion programs (Linalg pairs with symbolic sizes, CINN/TVM
  inline, reverse inline, fuse-epilogue, permutations): the legality property
  tests, whose oracles are the numpy interpreters of Linalg and CINN in ``tests/``
  (a ``legal`` verdict must agree with running both programs, a witness must
  reproduce).
* ``coalescing`` -- random coalescing questions (concatenates of two views,
  multi-path sums, tiled layouts, vector and warp sizes): the property tests of
  ``tests/test_coalescing_paths.py``, whose oracle is a brute-force warp emulator
  (the tagged interpreter's reads, addresses from a numpy-built buffer).

In the property areas one job runs one property test (chosen by the index)
on ``EXAMPLES`` hypothesis examples drawn from the job's own seed; each example
is a check, so ``--checks N`` runs about ``N / EXAMPLES`` jobs there.

A finding is a *wrong* answer (``proved`` where the oracle finds a difference,
``refuted`` where it finds none, a simplification that changes the relation, an
internal error) or a *note* (not a fixpoint). Findings go to a JSONL file; the
progress file lets ``--resume`` skip what is done. Checks run on a process pool
(``--jobs``).

    python fuzz/campaign.py --checks 2000 --jobs 1 --seed 0 --out fuzz-out
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import json
import multiprocessing
import os
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

AREAS = ("equal", "simplify", "rule", "cli", "hlo", "legality", "coalescing", "tvm", "mlir")

# ---------------------------------------------------------------------------------------------
# Random maps, as text
# ---------------------------------------------------------------------------------------------


def rand_expr(r: random.Random, names: list[str], depth: int = 3) -> str:
    if depth == 0 or r.random() < 0.3:
        if r.random() < 0.75 and names:
            return r.choice(names)
        return str(r.randint(-5, 9))
    op = r.choice(["+", "-", "*", "floordiv", "mod", "ceildiv", "min", "max", "+"])
    a = rand_expr(r, names, depth - 1)
    if op in ("+", "-"):
        return f"({a} {op} {rand_expr(r, names, depth - 1)})"
    if op == "*":
        return f"({a} * {r.choice([-3, -1, 2, 3, 4, 5])})"
    if op in ("floordiv", "mod", "ceildiv"):
        return f"({a} {op} {r.choice([-4, -3, 2, 3, 4, 5, 8, 16])})"
    return f"{op}({a}, {rand_expr(r, names, depth - 1)})"


def rand_map(r: random.Random) -> dict[str, Any]:
    nd, ns = r.randint(1, 3), r.choice([0, 0, 1, 2])
    dims = [f"d{i}" for i in range(nd)]
    syms = [f"s{i}" for i in range(ns)]
    bounds = {}
    for v in dims + syms:
        lo = r.randint(-4, 4)
        bounds[v] = (lo, lo + r.randint(0, 7))
    results = [rand_expr(r, dims + syms) for _ in range(r.randint(1, 2))]
    cons = []
    for _ in range(r.choice([0, 0, 1])):
        lo = r.randint(-6, 6)
        cons.append((rand_expr(r, dims + syms, 2), (lo, lo + r.randint(0, 10))))
    return {"dims": dims, "syms": syms, "bounds": bounds, "results": results, "constraints": cons}


def map_text(m: dict[str, Any]) -> str:
    head = f"({', '.join(m['dims'])})" + (f"[{', '.join(m['syms'])}]" if m["syms"] else "")
    dom = [f"{v} in [{lo}, {hi}]" for v, (lo, hi) in m["bounds"].items()]
    dom += [f"{e} in [{lo}, {hi}]" for e, (lo, hi) in m["constraints"]]
    return f"{head} -> ({', '.join(m['results'])}), domain: {', '.join(dom)}"


def mutate(r: random.Random, m: dict[str, Any]) -> dict[str, Any]:
    out = json.loads(json.dumps(m))
    out["bounds"] = {k: tuple(v) for k, v in out["bounds"].items()}
    out["constraints"] = [(e, tuple(iv)) for e, iv in out["constraints"]]
    choice = r.random()
    if choice < 0.3:
        return out  # the same map (should be proved)
    i = r.randrange(len(out["results"]))
    if choice < 0.6:
        e = out["results"][i]
        out["results"][i] = r.choice([f"({e} + 1)", f"(({e}) floordiv 1)", f"({e} + 0 * {out['dims'][0]})",
                                      f"((({e}) mod 4) + (({e}) floordiv 4) * 4)", f"(({e}) mod 7)"])
    elif choice < 0.8:
        v = r.choice(list(out["bounds"]))
        lo, hi = out["bounds"][v]
        out["bounds"][v] = (lo, hi + r.choice([-1, 0, 1]) if hi > lo else hi)
    else:
        out["results"][i] = rand_expr(r, out["dims"] + out["syms"])
    return out


# ---------------------------------------------------------------------------------------------
# The oracle: plain Python integers on the text
# ---------------------------------------------------------------------------------------------


class I(int):  # noqa: E742 - a small integer wrapper for the oracle's ``@`` (ceildiv)
    def __matmul__(self, other: int) -> I:
        return I(-((-int(self)) // int(other)))

    def __rmatmul__(self, other: int) -> I:
        return I(-((-int(other)) // int(self)))

    def __add__(self, o: int) -> I: return I(int(self) + int(o))
    def __radd__(self, o: int) -> I: return I(int(o) + int(self))
    def __sub__(self, o: int) -> I: return I(int(self) - int(o))
    def __rsub__(self, o: int) -> I: return I(int(o) - int(self))
    def __mul__(self, o: int) -> I: return I(int(self) * int(o))
    def __rmul__(self, o: int) -> I: return I(int(o) * int(self))
    def __floordiv__(self, o: int) -> I: return I(int(self) // int(o))
    def __rfloordiv__(self, o: int) -> I: return I(int(o) // int(self))
    def __mod__(self, o: int) -> I: return I(int(self) % int(o))
    def __rmod__(self, o: int) -> I: return I(int(o) % int(self))
    def __neg__(self) -> I: return I(-int(self))


def py(text: str) -> Any:
    import re

    t = text.replace("floordiv", "//").replace("ceildiv", "@").replace(" mod ", " % ")
    t = re.sub(r"(?<![A-Za-z0-9_])(\d+)", r"I(\1)", t)
    return compile(t, "<oracle>", "eval")


def relation(m: dict[str, Any]) -> set[tuple[tuple[int, ...], tuple[int, ...]]]:
    """``{(dims, results)}`` over the domain (range variables existential)."""
    names = m["dims"] + m["syms"]
    res = [py(e) for e in m["results"]]
    cons = [(py(e), iv) for e, iv in m["constraints"]]
    out = set()
    ranges = [range(m["bounds"][v][0], m["bounds"][v][1] + 1) for v in names]
    for pt in itertools.product(*ranges):
        env: dict[str, Any] = {v: I(x) for v, x in zip(names, pt)}
        env.update(I=I, min=min, max=max)
        if all(lo <= int(eval(c, env)) <= hi for c, (lo, hi) in cons):
            out.add((pt[: len(m["dims"])], tuple(int(eval(e, env)) for e in res)))
    return out


def relation_of_text(text: str) -> tuple[int, set[tuple[tuple[int, ...], tuple[int, ...]]]] | None:
    """The relation of a map printed by the library (positional names), for the simplifier's output."""
    import re

    mm = re.match(r"\(([^)]*)\)(?:\[([^\]]*)\])?\s*->\s*\((.*)\),\s*domain:\s*(.*)\Z", text.strip())
    if mm is None:
        return None
    dims = [x.strip() for x in mm.group(1).split(",") if x.strip()]
    syms = [x.strip() for x in (mm.group(2) or "").split(",") if x.strip()]
    results = _split_top(mm.group(3))
    bounds, cons = {}, []
    for entry in _split_top(mm.group(4)):
        e, iv = entry.rsplit(" in ", 1)
        lo, hi = (int(x) for x in iv.strip()[1:-1].split(","))
        if e.strip() in dims + syms:
            bounds[e.strip()] = (lo, hi)
        else:
            cons.append((e.strip(), (lo, hi)))
    m = {"dims": dims, "syms": syms, "bounds": bounds, "results": results, "constraints": cons}
    return len(dims), relation(m)


def _split_top(s: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


# ---------------------------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------------------------


def check_equal(r: random.Random) -> dict[str, Any]:
    from verified_indexing import parse_indexing_map
    from verified_indexing.engines import prove_equal

    a = rand_map(r)
    b = mutate(r, a)
    ta, tb = map_text(a), map_text(b)
    try:
        ma, mb = parse_indexing_map(ta), parse_indexing_map(tb)
    except Exception as exc:  # the generator's fault only if the text is bad (e.g. zero divisor)
        return {"outcome": "skip", "why": f"parse: {exc}"}
    v = prove_equal(ma, mb, timeout=5)
    same = relation(a) == relation(b)
    wrong = (v.proved and not same) or (v.refuted and same) or v.error
    return {"outcome": "wrong" if wrong else v.status, "a": ta, "b": tb, "verdict": v.status,
            "engine": v.engine, "oracle_equal": same}


def check_simplify(r: random.Random) -> dict[str, Any]:
    from verified_indexing import parse_indexing_map
    from verified_indexing.simplify.api import simplify_with_report

    a = rand_map(r)
    ta = map_text(a)
    try:
        m = parse_indexing_map(ta)
    except Exception as exc:
        return {"outcome": "skip", "why": f"parse: {exc}"}
    rep = simplify_with_report(m, timeout=5)
    out = rep.map
    if out.state != "ok":
        same = not relation(a) if out.is_known_empty else False
        return {"outcome": "ok" if same else "wrong", "a": ta, "out": out.format(True)}
    got = relation_of_text(out.format(one_line=True).replace("domain: ", "domain: ", 1))
    if got is None:
        return {"outcome": "skip", "why": "cannot read the output", "out": out.format(True)}
    want = relation(a)
    if out.num_rt_vars or got[0] != len(a["dims"]):
        return {"outcome": "skip", "why": "variables changed", "out": out.format(True)}
    if got[1] != want:
        return {"outcome": "wrong", "a": ta, "out": out.format(True), "why": "the relation changed"}
    again = simplify_with_report(out, timeout=5).map
    if again != out:
        return {"outcome": "note", "a": ta, "out": out.format(True), "again": again.format(True),
                "why": "not a fixpoint"}
    return {"outcome": "ok", "rounds": rep.rounds}


def check_rule(r: random.Random) -> dict[str, Any]:
    from verified_indexing.proofs.user_rule import check_user_rule

    names = ["x", "y"][: r.randint(1, 2)]
    lhs = rand_expr(r, names, 3)
    rhs = r.choice([lhs, rand_expr(r, names, 2), f"({lhs} + 0)", f"((({lhs}) mod 4) + (({lhs}) floordiv 4) * 4)"])
    bounds = {n: (lo, lo + r.randint(0, 12)) for n in names for lo in [r.randint(-8, 8)]}
    dom = ", ".join(f"{n} in [{lo}, {hi}]" for n, (lo, hi) in bounds.items())
    if r.random() < 0.1:  # an empty domain: must be proved and vacuous
        dom += f", {names[0]} in [100, 99]"
    text = f"{lhs} -> {rhs}"
    try:
        v = check_user_rule(text, domain=dom, timeout=5)
    except Exception as exc:
        return {"outcome": "skip", "why": f"{type(exc).__name__}: {exc}", "rule": text}
    m = {"dims": names, "syms": [], "bounds": bounds, "results": [lhs, rhs], "constraints": []}
    if "[100, 99]" in dom:
        m["constraints"] = [(names[0], (100, 99))]
    pairs = relation(m)
    holds = all(res[0] == res[1] for _, res in pairs)
    wrong = (v.proved and not holds) or (v.refuted and holds) or v.error
    if v.proved and not pairs and not v.vacuous:
        wrong = True
    return {"outcome": "wrong" if wrong else v.status, "rule": text, "domain": dom, "verdict": v.status,
            "oracle_holds": holds}


BAD_NUMBERS = ["nan", "NaN", "-1", "0", "-0", "-inf", "1e", "", "abc", "0x10", "--1"]


def check_cli(r: random.Random) -> dict[str, Any]:
    from verified_indexing.cli import main

    deep = r.choice(["(" * 150 + "d0" + ")" * 150, "-" * 500 + "d0", "min(" * 120 + "d0" + ", d0)" * 120])
    good_map = "(d0) -> (d0), domain: d0 in [0, 3]"
    cases = [
        (["prove-equal", "d0", "d0", "--domain", "d0 in [0, 3]", "--timeout", r.choice(BAD_NUMBERS)], {3}),
        (["simplify", good_map, "--timeout", r.choice(BAD_NUMBERS)], {3}),
        (["check-rule", "x -> x", "--timeout", r.choice(BAD_NUMBERS)], {3}),
        (["invert", good_map, "--timeout", r.choice(BAD_NUMBERS)], {3}),
        (["verify-cache", "--sample", r.choice(["-1", "x", "1.5", "nan"])], {3}),
        (["check-rule", f"x -> {deep.replace('d0', 'x')}"], {3}),
        (["show", f"(d0) -> ({deep}), domain: d0 in [0, 3]"], {3}),
        (["prove-equal", f"d0 + {deep}", "d0", "--domain", "d0 in [0, 3]"], {3}),
        (["simplify", "".join(r.choice("()[]{}d0123,->:+-* modfloor") for _ in range(r.randint(1, 60)))], {3}),
    ]
    argv, allowed = r.choice(cases)
    sink = io.StringIO()
    # in a scratch directory: a random command line may hold `-o NAME` and write a file
    with tempfile.TemporaryDirectory(prefix="vi-fuzz-cli-") as scratch, contextlib.chdir(scratch), \
            contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        try:
            code = main(argv)
        except BaseException as exc:
            return {"outcome": "wrong", "argv": argv, "why": f"{type(exc).__name__}: {exc}"}
    if code not in allowed:
        return {"outcome": "wrong", "argv": [a[:80] for a in argv], "code": code, "output": sink.getvalue()[-300:]}
    return {"outcome": "ok"}


# ---------------------------------------------------------------------------------------------
# The property areas: the suite's property tests, on freshly seeded examples
# ---------------------------------------------------------------------------------------------

TESTS_DIR = Path(__file__).resolve().parent.parent / "tests"
EXAMPLES = 8
MLIR_BATCH = 20  # fuzz/mlir_area.py's BATCH
PROPERTY_AREAS: dict[str, tuple[str, ...]] = {
    "hlo": ("test_hlo_fusion_props", "test_hlo_ops_oracle", "test_hlo_ops_extended"),
    "legality": ("test_linalg_props", "test_linalg_bounds", "test_linalg_mlir", "test_linalg",
                 "test_legality_permutation", "test_inline", "test_inline_cinn", "test_reverse_inline",
                 "test_epilogue", "test_predicates", "test_sizes_inline"),
    "coalescing": ("test_coalescing_paths",),
}


def _property_tests(area: str) -> list[tuple[str, Any]]:
    """Every hypothesis test of the area's modules, sorted by name (stable across runs)."""
    import importlib

    if str(TESTS_DIR) not in sys.path:
        sys.path.insert(0, str(TESTS_DIR))
    found = []
    for module in PROPERTY_AREAS[area]:
        mod = importlib.import_module(module)
        for name in sorted(vars(mod)):
            fn = getattr(mod, name)
            if name.startswith("test_") and hasattr(getattr(fn, "hypothesis", None), "inner_test"):
                found.append((f"{module}::{name}", fn))
    return found


def check_property(area: str, r: random.Random) -> dict[str, Any]:
    from hypothesis import HealthCheck, Phase, settings

    tests = _property_tests(area)
    name, fn = tests[r.randrange(len(tests))]
    calls = [0]
    inner = fn.hypothesis.inner_test

    def counted(*args: Any, **kwargs: Any) -> None:
        calls[0] += 1
        inner(*args, **kwargs)

    saved = (inner, fn._hypothesis_internal_use_settings, getattr(fn, "_hypothesis_internal_use_seed", None))
    fn.hypothesis.inner_test = counted
    fn._hypothesis_internal_use_settings = settings(
        saved[1], max_examples=EXAMPLES, database=None, deadline=None, derandomize=False, print_blob=True,
        phases=[Phase.explicit, Phase.generate, Phase.shrink], suppress_health_check=list(HealthCheck))
    fn._hypothesis_internal_use_seed = r.getrandbits(64)
    sink = io.StringIO()
    try:
        with contextlib.redirect_stdout(sink):
            fn()
    except Exception as exc:
        if type(exc).__name__ in ("Unsatisfiable", "FailedHealthCheck"):
            return {"outcome": "skip", "test": name, "why": type(exc).__name__, "checks": calls[0]}
        return {"outcome": "wrong", "test": name, "why": f"{type(exc).__name__}: {exc}"[:2000],
                "output": sink.getvalue()[-2000:], "checks": calls[0]}
    finally:
        fn.hypothesis.inner_test, fn._hypothesis_internal_use_settings, fn._hypothesis_internal_use_seed = saved
    return {"outcome": "ok", "test": name, "checks": calls[0]}


def _area(stem: str) -> Any:
    """The module ``fuzz/<stem>.py`` (as ``fuzz_<stem>``), loaded afresh from its file."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"fuzz_{stem}", Path(__file__).with_name(f"{stem}.py"))
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_mlir(r: random.Random) -> dict[str, Any]:
    """The ``mlir`` area (``fuzz/mlir_area.py``): MLIR's fusion pass on random Linalg pairs, its output validated."""
    result: dict[str, Any] = _area("mlir_area").check_mlir(r)
    return result


def check_tvm(r: random.Random) -> dict[str, Any]:
    """The ``tvm`` area (``fuzz/tvm_area.py``): TVM's primitives on random TIR, TVM's results validated."""
    result: dict[str, Any] = _area("tvm_area").check_tvm(r)
    return result


CHECKS = {"equal": check_equal, "simplify": check_simplify, "rule": check_rule, "cli": check_cli,
          "hlo": lambda r: check_property("hlo", r), "legality": lambda r: check_property("legality", r),
          "coalescing": lambda r: check_property("coalescing", r),
          "tvm": check_tvm, "mlir": check_mlir}


def run_one(job: tuple[int, str, int]) -> dict[str, Any]:
    seed, area, index = job
    if sys.getrecursionlimit() < 10_000:  # a worker not started by _init_worker (Ray)
        _init_worker()
    r = random.Random(f"{seed}/{area}/{index}")
    t0 = time.monotonic()
    try:
        res = CHECKS[area](r)
    except Exception as exc:
        res = {"outcome": "wrong", "why": f"{type(exc).__name__}: {exc}"}
    res.update(area=area, index=index, seed=seed, seconds=round(time.monotonic() - t0, 3))
    return res


def _init_worker() -> None:
    os.environ.setdefault("VERIFIED_INDEXING_CACHE", os.devnull)
    sys.setrecursionlimit(10_000)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--checks", type=int, default=200, help="checks per area (default 200)")
    ap.add_argument("--areas", default=",".join(AREAS), help=f"comma-separated areas (default {','.join(AREAS)})")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    ap.add_argument("--out", default="fuzz-out", help="directory of findings.jsonl and progress.jsonl")
    ap.add_argument("--resume", action="store_true", help="skip the checks already in progress.jsonl")
    ap.add_argument("--backend", choices=("process", "ray"), default="process",
                    help="a local process pool (default) or Ray (extra 'distributed'; a cluster when "
                    "RAY_ADDRESS is set): the same pure check, (seed, area, index) -> result")
    args = ap.parse_args(argv)
    areas = [a for a in args.areas.split(",") if a]
    bad = [a for a in areas if a not in CHECKS]
    if bad or args.checks < 0 or args.jobs < 1:
        ap.error(f"bad --areas {bad}" if bad else "--checks must be >= 0 and --jobs >= 1")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    progress, findings = out / "progress.jsonl", out / "findings.jsonl"
    done: set[tuple[int, str, int]] = set()
    tally: Counter[tuple[str, str]] = Counter()
    checks: Counter[str] = Counter()  # one per job, or the number of examples a property job ran
    if args.resume and progress.exists():
        for line in progress.read_text().splitlines():
            try:
                d = json.loads(line)
            except ValueError:
                continue
            done.add((d["seed"], d["area"], d["index"]))
            tally[(d["area"], d["outcome"])] += 1
            checks[d["area"]] += d.get("checks", 1)
    elif progress.exists():
        progress.unlink()
        if findings.exists():
            findings.unlink()
    def n_jobs(area: str) -> int:  # a property job runs EXAMPLES checks
        if area == "mlir":  # a job validates a batch of pairs
            return int(-(-args.checks // MLIR_BATCH))
        return -(-args.checks // EXAMPLES) if area in PROPERTY_AREAS else args.checks

    jobs = [(args.seed, a, i) for i in range(args.checks) for a in areas
            if i < n_jobs(a) and (args.seed, a, i) not in done]
    t0 = time.monotonic()
    with progress.open("a") as prog, findings.open("a") as fnd:
        pool = None
        if args.backend == "ray":
            from verified_indexing.parallel import run_ordered

            os.environ.setdefault("VERIFIED_INDEXING_CACHE", os.devnull)  # inherited by Ray's workers
            results = run_ordered(run_one, jobs, jobs=args.jobs, backend="ray")
        elif args.jobs == 1:
            _init_worker()
            results = map(run_one, jobs)
        else:
            ctx = multiprocessing.get_context("spawn")
            pool = ctx.Pool(args.jobs, initializer=_init_worker)
            results = pool.imap_unordered(run_one, jobs, chunksize=4)
        try:
            for res in results:
                tally[(res["area"], res["outcome"])] += 1
                res.setdefault("checks", 1)
                checks[res["area"]] += res["checks"]
                keys = ("seed", "area", "index", "outcome", "seconds", "checks")
                extra = {k: res[k] for k in ("tally", "unknown_reasons", "refusal_reasons", "decision_differs")
                         if k in res}
                prog.write(json.dumps({**{k: res[k] for k in keys}, **extra}) + "\n")
                prog.flush()
                if res["outcome"] in ("wrong", "note") or res.get("finding"):
                    fnd.write(json.dumps(res) + "\n")
                    fnd.flush()
        finally:
            if pool is not None:
                pool.terminate()
    total = sum(checks[a] for a in areas)
    print(f"campaign seed {args.seed}: {total} checks in {time.monotonic() - t0:.1f} s")
    for area in areas:
        counts = {o: n for (a, o), n in sorted(tally.items()) if a == area}
        jobs_note = f" in {sum(counts.values())} jobs" if checks[area] != sum(counts.values()) else ""
        print(f"  {area:9s} {checks[area]:7d}{jobs_note}  " + ", ".join(f"{o} {n}" for o, n in counts.items()))
    wrong = sum(n for (_, o), n in tally.items() if o == "wrong")
    print(f"wrong: {wrong}; findings in {findings}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main())
