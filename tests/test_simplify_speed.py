"""The simplifier's faster paths (issue 27 item 2, fourth round) against the plain ones they replace:
interval evaluation against the composition of :class:`Interval`'s own operations and enumeration,
canonical sums against the constructor, the gcd splits' shifted ranges against building every split,
the skipped second (exact) try against the rewriter that always tries, each result checked by
enumeration."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Sequence

import pytest

import verified_indexing.simplify.engine as engine
from verified_indexing import IndexingMap, Interval, range_of
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
    emax,
    emin,
    linear_sum,
)
from verified_indexing.simplify.rules import Binding, _gcd_splits, _split_divisors


def random_expr(rng: random.Random, nd: int, ns: int, depth: int) -> AffineExpr:
    """A random quasi-affine expression over ``d0..d<nd-1>`` and ``s0..s<ns-1>``."""
    if depth == 0 or rng.random() < 0.25:
        var: AffineExpr = Dim(rng.randrange(nd)) if not ns or rng.random() < 0.7 else Sym(rng.randrange(ns))
        return var * rng.choice([1, 1, 2, 3, -1, -2, 4, 6, 8]) + rng.randint(-5, 5)
    kind = rng.choice(["add", "add", "floordiv", "mod", "ceildiv", "mul", "min", "max"])
    a = random_expr(rng, nd, ns, depth - 1)
    if kind == "add":
        return a + random_expr(rng, nd, ns, depth - 1)
    if kind == "mul":
        return a * rng.choice([2, 3, -2, 4])
    if kind in ("min", "max"):
        b = random_expr(rng, nd, ns, depth - 1)
        return emin(a, b) if kind == "min" else emax(a, b)
    c = rng.choice([2, 3, 4, 6, 8, 16, -2, -3, -4])
    return a.floordiv(c) if kind == "floordiv" else a.mod(c) if kind == "mod" else a.ceildiv(c)


def reference_range(e: AffineExpr, dims: Sequence[Interval], syms: Sequence[Interval]) -> Interval:
    """Interval evaluation composed from :class:`Interval`'s public operations (the plain recursion)."""
    if isinstance(e, Const):
        return Interval(e.value, e.value)
    if isinstance(e, Dim):
        return dims[e.index]
    if isinstance(e, Sym):
        return syms[e.index]
    if isinstance(e, Sum):
        total = Interval(e.constant, e.constant)
        for t, c in e.terms:
            total = total + reference_range(t, dims, syms) * Interval(c, c)
        return total
    if isinstance(e, FloorDiv):
        return reference_range(e.lhs, dims, syms).floordiv(e.divisor)
    if isinstance(e, CeilDiv):
        return reference_range(e.lhs, dims, syms).ceildiv(e.divisor)
    if isinstance(e, Mod):
        return reference_range(e.lhs, dims, syms).mod(e.divisor)
    if isinstance(e, Min):
        return reference_range(e.lhs, dims, syms).min(reference_range(e.rhs, dims, syms))
    assert isinstance(e, Max)
    return reference_range(e.lhs, dims, syms).max(reference_range(e.rhs, dims, syms))


def box_points(dims: Sequence[Interval], syms: Sequence[Interval]) -> Iterator[tuple[list[int], list[int]]]:
    nd = len(dims)
    for p in itertools.product(*[range(b.lo, b.hi + 1) for b in (*dims, *syms)]):
        yield list(p[:nd]), list(p[nd:])


def test_range_of_is_the_composition_of_interval_operations_and_holds_every_value() -> None:
    rng = random.Random(7)
    for _ in range(300):
        dims = [Interval(lo, lo + rng.randint(0, 6)) for lo in (rng.randint(-5, 3) for _ in range(2))]
        syms = [Interval(0, rng.randint(0, 4))]
        e = random_expr(rng, 2, 1, 3)
        got = range_of(e, dims, syms)
        assert got == reference_range(e, dims, syms)
        assert type(got) is Interval and isinstance(got.lo, int) and isinstance(got.hi, int)
        values = [e.evaluate(d, s) for d, s in box_points(dims, syms)]
        assert got.lo <= min(values) and max(values) <= got.hi  # sound: the enumeration oracle
        # the rewriter's memoised intervals: the same for e and every subexpression
        rw = engine.Rewriter(IndexingMap(dims, [Dim(0)], syms))
        for sub in e.walk():
            assert rw.interval(sub) == range_of(sub, dims, syms)


def test_interval_operations_on_ints_and_empty_intervals() -> None:
    """The int fast paths against the general ones (an int is the one-value interval), empty operands
    included: the same bounds, the same (non-canonical) sums."""
    rng = random.Random(3)
    for _ in range(500):
        a = Interval(rng.randint(-9, 9), rng.randint(-9, 9))  # empty when lo > hi
        k = rng.randint(-5, 5)
        assert a * k == a * Interval(k, k)
        assert a + k == a + Interval(k, k)
        assert -a == Interval(-a.hi, -a.lo)
        c = rng.choice([-4, -3, -2, -1, 1, 2, 3, 5])
        if not a.is_empty():
            qs = [x // c for x in a]
            assert a.floordiv(c) == Interval(min(qs), max(qs))
            rs = [x - c * (x // c) for x in a]
            got = a.mod(c)
            assert got.lo <= min(rs) and max(rs) <= got.hi
        else:
            assert a.floordiv(c) == Interval(1, 0) == a.mod(c)
    with pytest.raises(Exception, match="zero"):
        Interval(0, 3).floordiv(0)
    with pytest.raises(Exception, match="zero"):
        Interval(0, 3).mod(0)
    assert range_of(RtSym(0), (), (), [Interval(2, 5)]) == Interval(2, 5)


def test_canonical_sums_match_the_constructor() -> None:
    """Sums built through the fast path are the nodes the constructor builds: equal, same key and hash,
    same text, same values."""
    rng = random.Random(11)
    atoms: list[AffineExpr] = [Dim(0), Dim(1), Sym(0), Dim(0).floordiv(3), Dim(1).mod(4), emin(Dim(0), Dim(1))]
    for _ in range(400):
        pairs = [(rng.choice(atoms), rng.randint(-3, 3)) for _ in range(rng.randint(0, 5))]
        k = rng.randint(-4, 4)
        got = linear_sum(pairs, k)
        coeffs: dict[AffineExpr, int] = {}
        for t, c in pairs:
            coeffs[t] = coeffs.get(t, 0) + c
        terms = tuple(sorted(((t, c) for t, c in coeffs.items() if c), key=lambda tc: tc[0].sort_key))
        if not terms:
            want: AffineExpr = Const(k)
        elif len(terms) == 1 and terms[0][1] == 1 and k == 0:
            want = terms[0][0]
        else:
            want = Sum(terms, k)
        assert got == want and hash(got) == hash(want) and got.sort_key == want.sort_key
        assert str(got) == str(want) and type(got) is type(want)
        for d0, d1, s0 in itertools.product(range(-2, 3), range(0, 3), range(1, 3)):
            assert got.evaluate([d0, d1], [s0]) == sum(c * t.evaluate([d0, d1], [s0]) for t, c in pairs) + k


def reference_gcd_splits(s: AffineExpr, m: int, rng: Callable[[AffineExpr], Interval]) -> list[Binding]:
    """The gcd splits as built before this round: every split's y built and its range asked."""
    out: list[Binding] = []
    if not isinstance(s, Sum) or m <= 0:
        return out
    for g in _split_divisors(s, m):
        if g == m:
            continue
        xs = [(t, coef // g) for t, coef in s.terms if coef % g == 0]
        if not xs and s.constant // g == 0:
            continue
        y = linear_sum([(t, coef) for t, coef in s.terms if coef % g != 0], s.constant - g * (s.constant // g))
        if isinstance(y, Const) and y.value == 0:
            continue
        x = linear_sum(xs, s.constant // g)
        r = rng(y)
        if r.lo >= 0 and r.hi <= g - 1:
            out.append(Binding({"x": x, "y": y}, {"g": g, "k": m // g}))
    return out


def test_gcd_splits_shifted_ranges_give_the_same_bindings() -> None:
    """Intervals over a box and exact ranges by enumeration over a constrained domain (both shift with a
    constant exactly): the same bindings as building each split; each binding is ``s = x*g + y`` with
    ``y`` in ``[0, g-1]`` at every point (enumeration)."""
    rng = random.Random(5)
    dims = [Interval(0, 7), Interval(0, 5)]
    pts = [p for p in itertools.product(range(8), range(6)) if (p[0] + 2 * p[1]) % 3 != 1]

    def exact(e: AffineExpr) -> Interval:
        vals = [e.evaluate(list(p)) for p in pts]
        return Interval(min(vals), max(vals))

    def box(e: AffineExpr) -> Interval:
        return range_of(e, dims)

    for _ in range(300):
        terms: list[tuple[AffineExpr, int]] = [(Dim(0), rng.choice([1, 2, 3, 4, 6, 8, 12, 16])),
                                               (Dim(1), rng.choice([0, 1, 2, 4, 8, 24]))]
        extra = rng.choice([[], [(Dim(0).floordiv(2), rng.choice([2, 4, 6]))]])
        s = linear_sum(terms + extra, rng.randint(-20, 20))
        m = rng.choice([2, 4, 6, 8, 12, 16, 24, 32, 48])
        for fn in (box, exact):
            got = list(_gcd_splits(s, m, fn))
            assert got == reference_gcd_splits(s, m, fn)
            for b in got:
                x, y, g = b.variables["x"], b.variables["y"], b.constants["g"]
                for p in pts:
                    assert x.evaluate(list(p)) * g + y.evaluate(list(p)) == s.evaluate(list(p))
                    assert 0 <= y.evaluate(list(p)) <= g - 1 or fn is box


@pytest.mark.parametrize("seed", range(3))
def test_skipped_exact_retry_rewrites_the_same(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a domain with no constraint, a node with linear children is not tried again with exact ranges
    (:meth:`Rewriter._same_ranges`): the rewriter that always tries again gives the same results and the
    same steps; the results equal the input at every point (enumeration)."""
    rng = random.Random(100 + seed)
    for _ in range(40):
        nd = rng.randint(1, 2)
        dims = [(rng.randint(-3, 2), rng.randint(3, 12)) for _ in range(nd)]
        exprs = [random_expr(rng, nd, 1, 3) for _ in range(2)]
        m = IndexingMap(dims, exprs, [(0, rng.randint(0, 3))])
        fast = engine.Rewriter(m, exact=True)
        got = [fast.simplify(e) for e in exprs]
        with monkeypatch.context() as patch:
            patch.setattr(engine.Rewriter, "_same_ranges", lambda self, rule, e: False)
            slow = engine.Rewriter(m, exact=True)
            want = [slow.simplify(e) for e in exprs]
        assert got == want
        assert [s[:4] for s in fast._log] == [s[:4] for s in slow._log]
        boxes = [range(v.bounds.lo, v.bounds.hi + 1) for v in (*m.dims, *m.range_vars)]
        for p in itertools.product(*boxes):
            d, s = list(p[:nd]), list(p[nd:])
            assert [g.evaluate(d, s) for g in got] == [e.evaluate(d, s) for e in exprs]


def test_exact_retry_kept_with_constraints() -> None:
    """A constraint can make a range tighter than its interval: the second try still happens there (the
    division is removed only with the exact range), checked at every point of the domain."""
    m = IndexingMap([(0, 15)], [Dim(0).floordiv(4)], constraints=[(Dim(0), (4, 7))])
    rw = engine.Rewriter(m, exact=True)
    assert not rw._same_ranges(rw._candidates(m.results[0])[0], m.results[0])  # type: ignore[index]
    out = rw.simplify(m.results[0])
    assert out == Const(1)
    assert all(out.evaluate([d]) == m.results[0].evaluate([d]) for d in range(4, 8))


def test_nonlinear_counts_and_linear_test_match_a_walk() -> None:
    """The stack walks of the isl candidate's tests against counting every node of ``walk()``."""
    from verified_indexing.simplify.api import _linear, _nonlinear_nodes

    rng = random.Random(13)
    for _ in range(300):
        exprs = [random_expr(rng, 2, 1, rng.randint(0, 4)) for _ in range(rng.randint(1, 3))]
        for e in exprs:
            assert _nonlinear_nodes(e) == sum(1 for n in e.walk() if isinstance(n, (FloorDiv, CeilDiv, Mod, Min, Max)))
        m = IndexingMap([(0, 3), (0, 3)], exprs, [(0, 2)])
        assert _linear(m) == all(_nonlinear_nodes(e) == 0 for e in exprs)


def test_corner_test_leaves_the_corners_and_never_rejects_an_affine_result() -> None:
    """The corner test (one coordinate moved in place, then restored) against the full fit: a result it
    rejects has no affine fit, and a result affine on the box (found by enumeration) is never rejected;
    the table's low corner is unchanged after each question."""
    from verified_indexing.engines.points import table_for

    rng = random.Random(17)
    for _ in range(200):
        dims = [(rng.randint(-3, 2), rng.randint(3, 9)) for _ in range(2)]
        e = random_expr(rng, 2, 0, 3)
        m = IndexingMap(dims, [e])
        table = table_for(m)
        if table is None:  # pragma: no cover (numpy missing)
            pytest.skip("no point tables")
        names = sorted(e.variables())
        ok = table._corners_fit(e, names)
        assert table._corners is not None
        assert table._corners[0]["d"] == [lo for lo, _ in dims]
        fit = table.affine_fit(e)
        if not ok:
            assert fit is None
        pts = list(itertools.product(*[range(lo, hi + 1) for lo, hi in dims]))
        affine = any(all(e.evaluate(list(p)) == a * p[0] + b * p[1] + c for p in pts)
                     for a, b, c in [_fit3(e, dims)])
        if affine:
            assert ok and fit is not None
            assert all(fit.evaluate(list(p)) == e.evaluate(list(p)) for p in pts)


def _fit3(e: AffineExpr, dims: Sequence[tuple[int, int]]) -> tuple[int, int, int]:
    """The affine form through the low corner and its two neighbours (what any affine fit must be)."""
    (l0, _), (l1, _) = dims
    base = e.evaluate([l0, l1])
    a = e.evaluate([l0 + 1, l1]) - base
    b = e.evaluate([l0, l1 + 1]) - base
    return a, b, base - a * l0 - b * l1


def test_measure_weights_match_a_walk() -> None:
    """The cost model's tie-breakers (cost under divisions, mods under floordivs) by stack walks against
    the plain ``walk()`` definition."""
    from verified_indexing.simplify.cost import _weight, cost

    def reference(e: AffineExpr) -> tuple[int, int]:
        w = nested = 0
        for node in e.walk():
            if isinstance(node, (FloorDiv, CeilDiv, Mod)):
                w += cost(node.lhs)
                if isinstance(node, (FloorDiv, CeilDiv)):
                    nested += sum(1 for n in node.lhs.walk() if isinstance(n, Mod))
            elif isinstance(node, (Min, Max)):
                w += cost(node.lhs) + cost(node.rhs)
        return w, nested

    rng = random.Random(19)
    for _ in range(400):
        e = random_expr(rng, 2, 1, rng.randint(0, 5))
        assert _weight(e) == reference(e)


def test_scaling_and_shifting_match_the_canonical_sum() -> None:
    """``e * k``, ``k * e``, ``-e``, ``e + k``, ``e - k`` (built without merging and sorting) against
    :func:`~verified_indexing.expr._make_sum` of the same pairs: equal nodes, keys, hashes and texts."""
    from verified_indexing.expr import _make_sum

    rng = random.Random(23)
    samples: list[AffineExpr] = [Const(3), Const(0), Dim(0), Sym(0) * -1, Dim(0) * 2 + Dim(1) - 5, -Dim(1) + 4,
                                 Dim(0).floordiv(3), Dim(0).floordiv(3) * 1 - 7, emax(Dim(0), Sym(0))]
    for _ in range(300):
        samples.append(random_expr(rng, 2, 1, rng.randint(0, 3)))
    for e in samples:
        for k in (-3, -1, 0, 1, 2, 5):
            for got, want in [(e * k, _make_sum([(e, k)])), (k * e, _make_sum([(e, k)])),
                              (e + k, _make_sum([(e, 1)], k)), (e - k, _make_sum([(e, 1)], -k)),
                              (k + e, _make_sum([(e, 1)], k)), (-e, _make_sum([(e, -1)]))]:
                assert got == want and type(got) is type(want)
                assert got.sort_key == want.sort_key and hash(got) == hash(want) and str(got) == str(want)


def test_deferred_step_is_the_constructed_step() -> None:
    """``Step.deferred`` (fields filled directly) against the constructor with the texts stored after it:
    the same fields, equality, text, JSON and pickle round trip; a text function runs on first read."""
    import pickle

    from verified_indexing.deferred_text import store_deferred
    from verified_indexing.simplify.engine import Step

    calls: list[int] = []

    def text() -> str:
        calls.append(1)
        return "d0 floordiv 4"

    fast = Step.deferred("div_point", "result 0", text, "1")
    slow = Step("div_point", "result 0", "", "")
    store_deferred(slow, "before", text)
    store_deferred(slow, "after", "1")
    assert vars(fast).keys() == vars(slow).keys()
    assert not calls
    assert fast == slow and repr(fast) == repr(slow) and fast.to_json() == slow.to_json()
    assert fast.before == "d0 floordiv 4" and fast.after == "1"
    assert pickle.loads(pickle.dumps(fast)) == fast


def test_exact_quotient_is_the_sum_divided() -> None:
    """The matchers' exact quotient of a sum by a common factor, checked by evaluation."""
    from verified_indexing.simplify.rules import _exact_quotient

    rng = random.Random(29)
    for _ in range(200):
        g = rng.choice([2, 3, 4, 6])
        s = linear_sum([(Dim(0), g * rng.randint(-3, 3)), (Dim(1).floordiv(3), g * rng.randint(-3, 3))],
                       g * rng.randint(-4, 4))
        if not isinstance(s, Sum):  # (the matchers ask it of a division's sum only)
            continue
        q = _exact_quotient(s, g)
        for d0, d1 in itertools.product(range(-3, 4), range(-2, 7)):
            assert q.evaluate([d0, d1]) * g == s.evaluate([d0, d1])


def test_matcher_declarations_hold() -> None:
    """The compiled matcher leaves out, for a division by a constant beyond +-1, the rules declared silent
    on a bare variable's division and (for a positive divisor) the negative divisor's rules: each such
    matcher proposes no binding there, on every variable kind and several divisors and ranges."""
    from verified_indexing.simplify.rules import RULES, rule_fires_on_positive_divisor, rule_fires_on_variable_dividend

    silent_on_var = [r for r in RULES if not rule_fires_on_variable_dividend(r)]
    negative_only = [r for r in RULES if not rule_fires_on_positive_divisor(r)]
    assert {r.name for r in negative_only} == {"div_negative_divisor", "mod_negative_divisor", "cdiv_negative_divisor"}
    assert {"div_pull_multiples", "mod_gcd_factor", "div_scale", "mod_reduce_coefficients"} <= {
        r.name for r in silent_on_var}
    rng = random.Random(37)
    ranges = [Interval(0, 0), Interval(0, 1), Interval(-5, 7), Interval(3, 3), Interval(-40, -2)]
    for cls in (FloorDiv, Mod, CeilDiv):
        for var in (Dim(0), Sym(0), RtSym(0)):
            for c in (-16, -3, -2, 2, 3, 5, 8, 64):
                node = cls(var, c)
                for r in silent_on_var:
                    for iv in ranges:
                        def constant_range(_e: AffineExpr, iv: Interval = iv) -> Interval:
                            return iv

                        assert list(r.match(node, constant_range)) == [], (r.name, node)
        for _ in range(100):
            node = cls(random_expr(rng, 2, 1, 2), rng.choice([2, 3, 4, 7, 16]))
            if not isinstance(node, cls):
                continue
            for r in negative_only:
                assert list(r.match(node, lambda _e: Interval(-9, 9))) == [], (r.name, node)
