"""Short ``repr`` for the public result types (a notebook cell or a log line, not a dump).

Every result type's ``repr`` is one line of at most :data:`LIMIT` characters,
``<Type what: the gist>``; the full content is in ``str()`` (the command line's
text) and ``to_json()``.
"""

from __future__ import annotations

__all__ = ["LIMIT", "clip", "short"]

LIMIT = 299
"""The longest ``repr`` of a result type."""


def clip(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters (``...`` marks a cut)."""
    one = " ".join(text.split())
    return one if len(one) <= width else one[: max(0, width - 3)] + "..."


def short(type_name: str, body: str) -> str:
    """``<type_name body>`` within :data:`LIMIT` characters."""
    return clip(f"<{type_name} {body}", LIMIT - 1) + ">"
