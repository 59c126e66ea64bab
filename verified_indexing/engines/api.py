"""The proof questions (skeleton: being filled in)."""

from __future__ import annotations

from collections.abc import Sequence

from verified_indexing.engines.cache import ProofCache
from verified_indexing.engines.verdict import Verdict
from verified_indexing.expr import AffineExpr
from verified_indexing.indexing_map import IndexingMap
from verified_indexing.interval import Interval

ENGINES = ("auto", "isl", "z3", "enum", "all")

CacheArg = ProofCache | None | bool


def prove_equal(
    a: IndexingMap, b: IndexingMap, *, engine: str = "auto", timeout: float = 10.0, cache: CacheArg = None
) -> Verdict:
    raise NotImplementedError


def prove_expr_equal(
    e1: AffineExpr,
    e2: AffineExpr,
    domain: IndexingMap,
    *,
    engine: str = "auto",
    timeout: float = 10.0,
    cache: CacheArg = None,
) -> Verdict:
    raise NotImplementedError


def prove_implies(
    domain: IndexingMap,
    expr: AffineExpr,
    interval: Interval,
    *,
    engine: str = "auto",
    timeout: float = 10.0,
    cache: CacheArg = None,
) -> Verdict:
    raise NotImplementedError


def is_empty(m: IndexingMap, *, engine: str = "auto", timeout: float = 10.0, cache: CacheArg = None) -> Verdict:
    raise NotImplementedError


def exact_range(expr: AffineExpr, m: IndexingMap) -> Interval | None:
    raise NotImplementedError


def is_injective(m: IndexingMap, *, engine: str = "auto", timeout: float = 10.0, cache: CacheArg = None) -> Verdict:
    raise NotImplementedError


def is_bijective_onto(
    m: IndexingMap, box: Sequence[Interval], *, engine: str = "auto", timeout: float = 10.0, cache: CacheArg = None
) -> Verdict:
    raise NotImplementedError
