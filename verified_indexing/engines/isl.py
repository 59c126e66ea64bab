"""isl encoding (skeleton: being filled in)."""

from __future__ import annotations

from typing import Any

from verified_indexing.indexing_map import IndexingMap


def to_isl_map(m: IndexingMap) -> Any:
    raise NotImplementedError


def to_isl_domain(m: IndexingMap) -> Any:
    raise NotImplementedError


def image(m: IndexingMap) -> Any:
    raise NotImplementedError


def compose_relation(first: IndexingMap, second: IndexingMap) -> Any:
    raise NotImplementedError


def indexing_map_from_isl(isl_map: Any) -> IndexingMap | None:
    raise NotImplementedError
