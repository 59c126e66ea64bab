"""Naming the modules of an input that holds several (an ``--xla_dump_to`` directory, a lit-test file split by
``// -----``): which file and which ``HloModule`` each analysis is of, and the ``--module PATTERN`` filter of
``verified-indexing analyze``.

Promises:

* :func:`select_modules` keeps the inputs whose file name (base name or path) or module name matches a
  shell-style glob (:mod:`fnmatch`: ``*``, ``?``, ``[seq]``; case-sensitive); with a dump directory, a
  pattern that matches none of the picked files is tried on every module file of the directory (so
  ``--module '*before_optimizations*'`` reads the unoptimized modules); no match at all is bad input naming
  the pattern, the closest name (did you mean) and the names there are;
* :func:`module_source` is the file a parsed module was read from (its instructions remember it);
* :func:`format_named` prints each module's analyses under a ``module NAME (FILE)`` line.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from verified_indexing.errors import VerifiedIndexingError

if TYPE_CHECKING:  # the command line imports this module for its --help text: nothing heavy at import
    from verified_indexing.hlo.fusion import ComputationIndexing
    from verified_indexing.hlo.ir import Module

__all__ = ["select_modules", "module_source", "module_name_of", "module_matches", "no_module_matches", "format_named",
           "SHOWN"]

SHOWN = 12
"""How many available names the no-match message lists."""

_HEADER_RE = re.compile(r"^[ \t]*HloModule[ \t]+([^\s,]+)", re.MULTILINE)


def module_name_of(text: str) -> str | None:
    """The name on the text's ``HloModule`` line (the first), or None (a text without one)."""
    m = _HEADER_RE.search(text[:65536])
    return m.group(1).rstrip(":") if m else None


def _names(text: str, source: str) -> list[str]:
    out = [os.path.basename(source), source]
    name = module_name_of(text)
    if name is not None:
        out.append(name)
    return out


def _matches(pattern: str, text: str, source: str) -> bool:
    return any(fnmatch.fnmatchcase(n, pattern) for n in _names(text, source))


def select_modules(
    inputs: Sequence[tuple[str, str]],
    pattern: str | None,
    fallback: Sequence[tuple[str, str]] = (),
) -> list[tuple[str, str]]:
    """The ``(text, source)`` inputs whose file or module name matches ``pattern`` (all of them when it is
    None); ``fallback`` (every module file of a dump directory) is tried when none of ``inputs`` matches.
    Raises :class:`VerifiedIndexingError` when nothing matches."""
    if pattern is None:
        return list(inputs)
    for pool in (inputs, fallback):
        kept = [(t, s) for t, s in pool if _matches(pattern, t, s)]
        if kept:
            return kept
    from verified_indexing.syntax.suggest import did_you_mean

    every = list(inputs) + [x for x in fallback if x not in inputs]
    labels = []
    for t, s in every:
        name = module_name_of(t)
        labels.append(f"{name} ({os.path.basename(s)})" if name else os.path.basename(s))
    candidates = sorted({n for t, s in every for n in _names(t, s)[:1] + _names(t, s)[2:]})
    shown = ", ".join(labels[:SHOWN]) + (f" and {len(labels) - SHOWN} more" if len(labels) > SHOWN else "")
    hint = did_you_mean(pattern, candidates) if not any(ch in pattern for ch in "*?[") else ""
    raise VerifiedIndexingError(
        f"--module {pattern}: no module matches {pattern!r}{hint} (a glob on the file name or the HloModule "
        f"name); the input holds {len(labels)}: {shown}"
    )


def module_source(module: Module) -> str | None:
    """The file (or ``<stdin>``, ``<argument>``...) the module was read from: what its parser was told."""
    for comp in module.computations.values():
        for inst in comp.instructions:
            return inst.source_name
    return None


def format_named(blocks: Sequence[tuple[Module, Sequence[ComputationIndexing]]]) -> str:
    """The text report of several modules: per module a ``module NAME (FILE)`` line, then its analyses
    (or a line saying it has none)."""
    from verified_indexing.hlo.report import format_results

    parts = []
    for module, found in blocks:
        head = f"module {module.name} ({module_source(module) or 'input'})"
        parts.append(head + "\n\n" + (format_results(found) if found else "  (nothing analyzed in this module)"))
    return "\n\n".join(parts)


def module_matches(pattern: str, module: Module) -> bool:
    """Whether ``pattern`` matches the module's name or the file it was read from (a file holding several
    modules, split by ``// -----``, is filtered module by module)."""
    source = module_source(module) or ""
    return any(fnmatch.fnmatchcase(n, pattern) for n in (module.name, source, os.path.basename(source)))


def no_module_matches(pattern: str, modules: Sequence[Module]) -> VerifiedIndexingError:
    """The bad-input error of a pattern that matches none of ``modules`` (see :func:`select_modules`)."""
    from verified_indexing.syntax.suggest import did_you_mean

    names = [m.name for m in modules]
    shown = ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")
    hint = did_you_mean(pattern, names) if not any(ch in pattern for ch in "*?[") else ""
    return VerifiedIndexingError(
        f"--module {pattern}: no module matches {pattern!r}{hint} (a glob on the file name or the HloModule "
        f"name); the input holds {len(names)}: {shown}"
    )
