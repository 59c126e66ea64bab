"""Persistent proof cache (skeleton: being filled in)."""

from __future__ import annotations

SEMANTICS_VERSION = "1"


class ProofCache:
    """SQLite proof cache."""


def default_cache() -> ProofCache:
    raise NotImplementedError
