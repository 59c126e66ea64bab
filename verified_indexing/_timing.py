"""Whether text output shows run-dependent times (milliseconds, seconds).

On by default; the command line's ``--no-timing`` turns it off for the command
(every output: the JSON's run-dependent fields and the times in the text), so that
two runs print the same bytes (golden files, lit/FileCheck tests). Library
callers may turn it off too (:func:`set_show_timing`).
"""

from __future__ import annotations

__all__ = ["set_show_timing", "show_timing"]

_SHOW = [True]


def show_timing() -> bool:
    """Whether text output shows times."""
    return _SHOW[0]


def set_show_timing(show: bool) -> bool:
    """Show times in text output (or not); returns the previous setting."""
    previous = _SHOW[0]
    _SHOW[0] = show
    return previous
