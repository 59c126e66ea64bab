"""The package version, written once: in ``pyproject.toml``.

An installed package (a wheel, or ``pip install -e``) reads it from its
distribution metadata (:mod:`importlib.metadata`). A source checkout put on
``PYTHONPATH`` reads the ``pyproject.toml`` beside the package first, so a
worktree reports its own version even when another checkout of the project is
installed in the same interpreter. Neither found: ``"0+unknown"``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["dependency_versions", "package_version", "version_text"]

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


# What ``--version`` lists beside the package: (label, distributions tried in order, always listed). Read
# from the installed metadata (importlib.metadata), so that no heavy module (jax, tvm, iree) is imported.
_DEPENDENCIES: tuple[tuple[str, tuple[str, ...], bool], ...] = (
    ("z3", ("z3-solver",), True),
    ("islpy", ("islpy",), True),
    ("jax", ("jax",), False),
    ("jaxlib", ("jaxlib",), False),
    ("tvm", ("apache-tvm", "tvm", "mlc-ai-nightly"), False),
    ("iree", ("iree-base-compiler", "iree-compiler"), False),
)


def dependency_versions() -> list[tuple[str, str]]:
    """``(label, version)`` of the engines (z3, islpy: ``"not installed"`` when missing) and of the
    compilers the package drives when they are installed (jax, jaxlib, TVM, IREE)."""
    from importlib.metadata import PackageNotFoundError, version

    found: list[tuple[str, str]] = []
    for label, dists, always in _DEPENDENCIES:
        for dist in dists:
            try:
                found.append((label, version(dist)))
                break
            except PackageNotFoundError:
                continue
        else:
            if always:
                found.append((label, "not installed"))
    return found


def version_text() -> str:
    """What ``verified-indexing --version`` prints: the package's version, then one line per dependency."""
    lines = [f"verified-indexing {package_version()}"]
    lines += [f"  {label} {ver}" for label, ver in dependency_versions()]
    return "\n".join(lines)


def __getattr__(name: str) -> Any:
    """``__version__``, computed on first use (``import verified_indexing`` reads no file)."""
    if name == "__version__":
        return package_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
