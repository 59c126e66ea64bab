"""isl's integer search ignores the operation limit: large divisors run under a wall-clock deadline instead
(a regression test for a hang found in review: ``d0 + d0 mod 2^33`` over ``[60, 10^12 + 60]``)."""

from __future__ import annotations

import pytest

from verified_indexing import Interval, parse_expr, parse_indexing_map
from verified_indexing.engines import IslLimitExceeded, exact_range, prove_equal
from verified_indexing.engines.deadline import largest_divisor, run_bounded
from verified_indexing.simplify import simplify


def test_pathological_exact_range_is_bounded_not_hung() -> None:
    m = parse_indexing_map("(d0) -> (d0), domain: d0 in [60, 1000000000060]")
    e = parse_expr("d0 + d0 mod 8589934592")
    with pytest.raises(IslLimitExceeded, match="did not finish"):
        exact_range(e, m, limited=True)


def test_risky_queries_that_finish_give_the_exact_answer() -> None:
    m = parse_indexing_map("(d0) -> (d0), domain: d0 in [0, 2097152]")
    e = parse_expr("d0 mod 1048576 + d0 floordiv 1048576")
    assert largest_divisor(m, [e]) == 1048576
    expected = max(x % 1048576 + x // 1048576 for x in (1048575, 2097151, 2097152))
    assert exact_range(e, m, limited=True) == Interval(0, expected)


def test_simplify_returns_on_the_pathological_map_and_stays_equal() -> None:
    m = parse_indexing_map("(d0) -> ((d0 + d0 mod 8589934592) ceildiv -7), domain: d0 in [60, 1000000000060]")
    out = simplify(m, timeout=2)
    assert prove_equal(m, out, engine="z3").proved


def _boom() -> int:
    raise ValueError("from the child")


def _add(a: int, b: int) -> int:
    return a + b


def test_errors_in_the_bounded_child_reach_the_caller() -> None:
    with pytest.raises(ValueError, match="from the child"):
        run_bounded(_boom, risky=True)
    assert run_bounded(_add, risky=True, args=(41, 1)) == 42


def test_the_one_map_answer_is_memoised_with_the_thresholds(monkeypatch: pytest.MonkeyPatch) -> None:
    from verified_indexing.engines import deadline

    m = parse_indexing_map("(d0) -> ((d0 floordiv 3) mod 5), domain: d0 in [0, 99]")
    assert deadline.risky_maps([m]) is False
    monkeypatch.setattr(deadline, "RISKY_DIV_DEPTH", 2)  # two nested divisions now count as risky
    assert deadline.risky_maps([m]) is True
    assert deadline.risky_maps([m], existential=False) is True  # the unmemoised path agrees


# -- issue 26 item 10: the layering, the z3 clamp and the backstop ------------------------------------

def _imports(module: str) -> set[str]:
    """Every module ``module``'s source imports (at the top or inside functions)."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    tree = ast.parse(open(spec.origin, encoding="utf-8").read())
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module is not None:
            out.add(node.module)
    return out


def test_the_deadline_machinery_sits_below_the_engines_api() -> None:
    """deadline imports nothing above it (it imported engines.api to warm the worker), and sizes does not
    reach back into the API (it imported engines.api._isl_first): no cycle through the API."""
    from verified_indexing.engines import api, deadline

    assert {m for m in _imports("verified_indexing.engines.deadline") if m.startswith("verified_indexing")} <= {
        "verified_indexing.errors", "verified_indexing.expr", "verified_indexing.indexing_map",
        "verified_indexing.engines.isl",
    }
    assert "verified_indexing.engines.api" not in _imports("verified_indexing.engines.sizes")
    assert "verified_indexing.engines.api" in deadline._PRELOAD  # the API registers itself with the worker
    assert api.__name__ == "verified_indexing.engines.api"


def test_a_z3_solver_never_outlives_the_command_budget() -> None:
    """A solver asked for 10 s under a 0.3 s budget gives up within the budget (oracle: the clock)."""
    import time

    import z3

    from verified_indexing.engines.deadline import command_budget
    from verified_indexing.engines.z3 import Z3Encoder

    enc = Z3Encoder()
    x, y, z = (z3.Int(n, ctx=enc.ctx) for n in "xyz")
    with command_budget(0.3):
        s = enc.solver(timeout=10.0, rlimit=10**12)
        # x^3 + y^3 = z^3 with x, y, z > 0: z3 searches without end
        s.add(x > 0, y > 0, z > 0, x * x * x + y * y * y == z * z * z)
        start = time.monotonic()
        assert s.check() == z3.unknown
        assert time.monotonic() - start < 0.3 + 0.5


def test_the_backstop_stops_python_code_that_never_checks_the_budget() -> None:
    import time

    from verified_indexing.engines.deadline import BudgetExpired, command_budget, hard_deadline

    start = time.monotonic()
    with pytest.raises(BudgetExpired), command_budget(0.2), hard_deadline(0.1):
        while True:  # a loop that checks nothing
            pass
    assert 0.29 <= time.monotonic() - start < 0.8
    import signal

    assert signal.getsignal(signal.SIGALRM) in (signal.SIG_DFL, None)  # the handler is put back
    assert signal.getitimer(signal.ITIMER_REAL)[0] == 0


def test_a_relation_equality_under_a_budget_is_bounded_and_exact() -> None:
    """hlo.relation.relations_equal under a command budget goes to the worker: the same answer as
    in-process isl on small relations (both ways), and a DeadlineExceeded when the budget is gone."""
    import islpy as isl

    from verified_indexing.engines.deadline import DeadlineExceeded, command_budget
    from verified_indexing.hlo.relation import relations_equal

    a = isl.Map("{ [d0] -> [(d0 mod 7) + 7 * floor(d0 / 7)] : 0 <= d0 <= 99 }")
    b = isl.Map("{ [d0] -> [d0] : 0 <= d0 <= 99 }")
    c = isl.Map("{ [d0] -> [d0 mod 7] : 0 <= d0 <= 99 }")
    with command_budget(30):
        assert relations_equal(a, b) is True and relations_equal(a, c) is False
    assert a.is_equal(b) and not a.is_equal(c)  # the oracle: isl in-process
    with command_budget(0.001):
        import time

        time.sleep(0.01)
        with pytest.raises(DeadlineExceeded):
            relations_equal(a, c)


def test_z3_is_interrupted_at_the_deadline_even_where_its_own_timeout_is_not_kept() -> None:
    """A solver made under a budget is stopped at the deadline by hard_deadline's timer (Z3_interrupt),
    not at its own timeout: asked for 30 s (no rlimit, the clamp bypassed by setting the timeout after),
    it returns within the budget."""
    import time

    import z3

    from verified_indexing.engines.deadline import command_budget, hard_deadline
    from verified_indexing.engines.z3 import Z3Encoder

    enc = Z3Encoder()
    x, y, z = (z3.Int(n, ctx=enc.ctx) for n in "xyz")
    start = time.monotonic()
    with command_budget(0.4), hard_deadline(5.0):
        s = enc.solver(timeout=30.0, rlimit=0)
        s.set("timeout", 30_000)  # what a solver that does not keep its timeout would do
        s.add(x > 1, y > 1, z > 1, x * x * x + y * y * y == z * z * z)
        assert s.check() == z3.unknown
    assert time.monotonic() - start < 0.4 + 0.6


def test_the_budget_backstop_never_raises_inside_z3s_python_wrapper() -> None:
    """An exception raised by the SIGALRM backstop between one of z3's C calls and its reference count
    can crash the process later (seen once: SIGSEGV under load); the backstop waits until the stack has
    left z3's package. Oracle: frames compiled under z3's file names and under ours."""
    import os
    import sys

    from verified_indexing.engines.deadline import _in_wrapper

    ns: dict[str, object] = {}
    exec(compile("import sys\nframe = sys._getframe()", os.sep.join(["", "x", "site-packages", "z3", "z3.py"]),
                 "exec"), ns)
    assert _in_wrapper(ns["frame"])
    exec(compile("import sys\nframe = sys._getframe()",
                 os.sep.join(["", "x", "verified_indexing", "engines", "z3.py"]), "exec"), ns)
    assert not _in_wrapper(ns["frame"])
    assert not _in_wrapper(sys._getframe())


def _tree_stats(e: object) -> tuple[int, int, int]:
    """The oracle: (division nodes, deepest nesting of divisions, largest |divisor|) by a plain recursive
    walk over ``children()``."""
    from verified_indexing.expr import _BinaryDiv

    def go(x: object, d: int) -> tuple[int, int, int]:
        div = isinstance(x, _BinaryDiv)
        d += div
        n, dp, big = int(div), d, abs(x.divisor) if isinstance(x, _BinaryDiv) else 0
        for c in x.children():  # type: ignore[attr-defined]
            cn, cd, cb = go(c, d)
            n, dp, big = n + cn, max(dp, cd), max(big, cb)
        return n, dp, big

    return go(e, 0)


def test_the_risky_walk_agrees_with_the_thresholds_on_a_plain_tree_walk() -> None:
    from hypothesis import given, settings

    from verified_indexing import IndexingMap
    from verified_indexing.engines import deadline
    from verified_indexing.testing.strategies import affine_exprs, indexing_maps

    @settings(max_examples=60)
    @given(indexing_maps(max_dims=3, max_syms=2, max_rts=1, max_constraints=2), affine_exprs(3, 2, 1, max_leaves=8))
    def check(m: IndexingMap, extra: object) -> None:
        if m.state != "ok":
            return
        exprs = [extra.floordiv(5) + extra.mod(4096)]  # type: ignore[attr-defined]
        for existential in (True, False):
            roots = list(m.results) + [c for c, _ in m.constraints] + exprs
            stats = [_tree_stats(r) for r in roots]
            divs = sum(s[0] for s in stats)
            depth = max((s[1] for s in stats), default=0)
            big = max((s[2] for s in stats), default=0)
            many = m.num_dims + m.num_range_vars + m.num_rt_vars >= deadline.RISKY_VARIABLES
            expected = many or big >= deadline.RISKY_DIVISOR or depth >= deadline.RISKY_DIV_DEPTH or (
                divs >= deadline.RISKY_DIV_COUNT) or (existential and m.num_range_vars > 0 and divs > 0)
            assert deadline._risky([m], exprs, existential, True) == expected

    check()


# -- the worker: a fork of this process where that is safe, else a fresh interpreter ---------------------

def _pid_alive(pid: int) -> bool:

    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().split(")")[-1].split()[0] != "Z"  # a zombie is not running
    except FileNotFoundError:
        return False


def _kill_and_restart(mode: str) -> None:
    """A runaway isl question is stopped at its deadline (the process is gone: oracle /proc), the next
    call gets the right answer from a new worker of the same kind."""
    import subprocess

    from verified_indexing.engines import deadline

    deadline.stop_worker()
    try:
        assert run_bounded(_add, risky=True, args=(1, 2)) == 3
        proc = deadline._WORKER.proc
        assert proc is not None
        assert isinstance(proc, deadline._Forked if mode == "fork" else subprocess.Popen), type(proc)
        first = proc.pid
        m = parse_indexing_map("(d0) -> (d0), domain: d0 in [60, 1000000000060]")
        with pytest.raises(IslLimitExceeded, match="did not finish"):
            exact_range(parse_expr("d0 + d0 mod 8589934592"), m, limited=True)
        assert not _pid_alive(first)
        assert run_bounded(_add, risky=True, args=(40, 2)) == 42
        again = deadline._WORKER.proc
        assert again is not None and again.pid != first and type(again) is type(proc)
    finally:
        deadline.stop_worker()
    assert not _pid_alive(first)


def test_the_spawned_worker_is_killed_at_the_deadline_and_restarted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VERIFIED_INDEXING_WORKER", "spawn")
    _kill_and_restart("spawn")


def test_the_forked_worker_is_killed_at_the_deadline_and_restarted() -> None:
    """In a fresh process (this one may have threads by now: then it spawns its worker)."""
    import os
    import subprocess
    import sys

    code = ("import sys; from verified_indexing.engines import deadline; assert deadline._may_fork(); "
            "from tests.test_engines_deadline import _kill_and_restart; _kill_and_restart('fork'); print('ok')")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=root,
                          env=dict(os.environ, PYTHONPATH=os.pathsep.join([root, *sys.path])))
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]


def test_a_forked_worker_holds_no_output_open_and_ends_with_its_parent() -> None:
    """A command whose worker is forked: the reader of its output sees the end when the command ends (the
    worker does not keep the pipe open), and a worker whose parent is killed leaves (its pipe closes)."""
    import os
    import subprocess
    import sys
    import time

    code = (
        "import os, sys\n"
        "from verified_indexing.engines import deadline\n"
        "assert deadline._may_fork()\n"
        "assert deadline.run_bounded(abs, risky=True, args=(-3,)) == 3\n"
        "print(deadline._WORKER.proc.pid, flush=True)\n"
        "if sys.argv[1] == 'kill': os.kill(os.getpid(), 9)\n"
    )
    for how in ("exit", "kill"):
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-c", code, how], capture_output=True, text=True, timeout=60,
                              env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        assert time.monotonic() - start < 30
        worker = int(proc.stdout.split()[0])
        for _ in range(200):  # the worker's pipe is closed: it leaves at once
            if not _pid_alive(worker):
                break
            time.sleep(0.01)
        assert not _pid_alive(worker), how
