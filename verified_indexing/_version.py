"""The package version, written once: in ``pyproject.toml``.

An installed package (a wheel, or ``pip install -e``) reads it from its
distribution metadata (:mod:`importlib.metadata`). A source checkout put on
``PYTHONPATH`` reads the ``pyproject.toml`` beside the package first, so a
worktree reports its own version even when another checkout of the project is
installed in the same interpreter. Neither found: ``"0+unknown"``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["package_version"]

DIST_NAME = "verified-indexing"
UNKNOWN = "0+unknown"


def _from_checkout() -> str | None:
    from pathlib import Path

    pyproject = Path(__file__).resolve().parent.parent / "pyproject.toml"
    if not pyproject.is_file():
        return None
    import tomllib

    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, tomllib.TOMLDecodeError):
        return None
    version = project.get("version")
    if project.get("name") != DIST_NAME or not isinstance(version, str):
        return None  # some other project's pyproject.toml (e.g. the package vendored elsewhere)
    return version


def package_version() -> str:
    """The version of this copy of the package (see the module docstring for the order)."""
    found = _from_checkout()
    if found is not None:
        return found
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DIST_NAME)
    except PackageNotFoundError:
        return UNKNOWN


def __getattr__(name: str) -> Any:
    """``__version__``, computed on first use (``import verified_indexing`` reads no file)."""
    if name == "__version__":
        return package_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
