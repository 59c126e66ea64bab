"""Text fields built on first read.

The simplifier records a verdict for every proof and a step for every rewrite; their texts (two
maps, two expressions) are seldom shown but cost as much to print as a small proof costs to run. A
frozen dataclass field of text made a :func:`deferred_text` property takes either the text or a
function that builds it (anything else that is not callable is kept as given); the function is
called once, on the first read, and every other use (equality, hashing, ``repr``, JSON, pickling
through ``__reduce__``) reads the text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Text = str | Callable[[], str]
"""A text, or a function building it."""


def deferred_text(name: str) -> property:
    """A property for the dataclass field ``name`` that stores a :data:`Text` (the dataclass
    ``__init__`` stores through it) and reads back the text, building it once when needed."""
    key = "_" + name + "_text"

    def get(self: Any) -> str:
        d = self.__dict__
        value = d[key] if key in d else d.get(name)  # (the plain field of an object pickled before)
        if callable(value):
            value = d[key] = str(value())
        return value  # type: ignore[no-any-return]

    def put(self: Any, value: Text) -> None:
        self.__dict__[key] = value

    return property(get, put, doc=f"The {name} text (built on first read when given as a function).")


def store_deferred(obj: object, name: str, value: Text) -> None:
    """Set a :func:`deferred_text` field of a (frozen) dataclass instance at construction."""
    object.__setattr__(obj, name, value)
