"""Lazy package attributes (PEP 562): a package's public names load their
module on first use, so importing the package (or any small submodule of it)
costs nothing heavy. One definition, used by the package ``__init__`` files."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

__all__ = ["lazy_names", "table_from_imports"]

def table_from_imports(source: str) -> dict[str, str]:
    """``{name: module}`` for every ``from MODULE import name`` of ``source``
    (used by the tests to check a package's table against its
    ``if TYPE_CHECKING:`` imports, so the two cannot drift apart)."""
    import ast

    table: dict[str, str] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("verified_indexing"):
            for alias in node.names:
                table[alias.asname or alias.name] = node.module
    return table


def lazy_names(
    package: str, namespace: dict[str, Any], table: dict[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module ``__getattr__`` and ``__dir__`` of ``package`` for ``table``."""

    def getattr_(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(table))

    return getattr_, dir_
