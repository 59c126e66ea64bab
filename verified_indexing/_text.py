"""The command line's text for results whose text is not a method of their own class: written once, used by
the command (``invert``, ``fuse-epilogue``, ``validate-mlir``, ``inline``, ``reverse-inline``) and by the
result's ``str()``, so the two cannot drift apart (tests/test_reprs.py compares them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["invert_text", "epilogue_text", "validate_mlir_text", "checks_text", "inline_head", "inline_text"]


def _point(p: tuple[int, ...]) -> str:
    return "(" + ", ".join(f"d{i} = {v}" for i, v in enumerate(p)) + ")"


def invert_text(res: Any, mlir: dict[str, Any] | None) -> str:
    """``verified-indexing invert``'s text for the inverse ``res`` of an indexing map and MLIR's view ``mlir``
    (:func:`verified_indexing.serialize.invert_mlir`)."""
    lines = [f"map: {res.map.format(one_line=True)}"]
    if mlir is not None:
        lines.append(f"MLIR inversePermutation: {mlir['inverse_permutation'] or 'null'}")
    lines.append(f"injective: {res.injectivity.status} ({res.injectivity.engine})")
    if res.collision is not None:
        a, b, img = res.collision
        lines.append(f"  counterexample: {_point(a)} and {_point(b)} both map to ({', '.join(map(str, img))})")
    if res.status == "proved" and res.inverse is not None:
        lines.append(f"inverse: {res.inverse.format(one_line=True)}")
        left, right = res.left_identity, res.right_identity
        lines.append(f"  inverse . map = id on the map's domain: {left.status} ({left.engine})")
        lines.append(f"  map . inverse = id on the inverse's domain: {right.status} ({right.engine})")
    elif res.status != "refuted":
        lines.append(f"inverse: {res.status}: {res.reason}")
    return "\n".join(lines)


def checks_text(checks: Any) -> list[str]:
    """The lines of a block transformation's checks (a reason under each one not proved)."""
    lines = []
    for c in checks:
        lines.append(f"  [{c.status}] {c.name}" + (f" ({c.engine})" if c.engine and c.engine != "syntax" else ""))
        if c.status != "proved" and c.detail:
            lines.append(f"    {c.detail}")
    return lines


def epilogue_text(rep: Any, *, given_fused: bool = False, fmt: Callable[[Any], str] | None = None) -> str:
    """``verified-indexing fuse-epilogue``'s text for the report ``rep`` (``given_fused``: the fused program
    was given with --fused; ``fmt``: how the fused program is printed when the project fused it, by default
    as CINN IR)."""
    how = {"fold": "folded into the init", "last": "applied on the last reduction iteration"}.get(rep.form, "")
    head = f"fuse-epilogue {rep.block} into {rep.reduction or '?'}: {rep.status}"
    if rep.status == "fused":
        head += f" ({how})" if not given_fused else " (the given fused program)"
    else:
        head += f": {rep.reason}"
    lines = [head]
    if rep.laws:
        lines.append(f"  laws assumed: {', '.join(rep.laws)}")
    lines += checks_text(rep.checks)
    if rep.program is not None and rep.status == "fused" and not given_fused:
        from verified_indexing.legality.cinn_ir import format_program

        lines.append((fmt or format_program)(rep.program))
    return "\n".join(lines)


def validate_mlir_text(r: Any) -> str:
    """``verified-indexing validate-mlir``'s text for the validation ``r`` (without --show-output)."""
    counts = {s: sum(1 for f in r.fused if f.status == s) for s in ("proved", "refuted", "unknown")}
    lines = [f"validate-mlir {r.pass_name}: {r.pairs} producer-consumer pair(s) in the input, {len(r.fused)} fused "
             f"op(s) checked: {counts['proved']} proved, {counts['refuted']} refuted, {counts['unknown']} unknown"]
    for f in r.fused:
        what = f" (replaced {', '.join(f.replaced)})" if f.replaced else ""
        lines.append(f"  {f.op} at line {f.line}{what}: {f.status.upper() if f.status == 'refuted' else f.status}")
        lines.append(f"    {f.reason}")
        if f.status == "refuted":
            lines.append("    found by the Linalg interpreter running the input and the pass's output on the same "
                         "inputs (for a fused op whose own result is returned: re-run on the replaced ops and the "
                         "fused op alone)")
    for rf in r.refusals:
        lines.append(f"  the pass left {rf.producer} -> {rf.consumer} unfused ({rf.why_refused}); the project "
                     "proves it legal")
    wrong = [d for d in r.decisions if d.predicted != d.fused]
    lines.append(f"  the model of the pass's decision (areElementwiseOpsFusable, the one-use control function, "
                 f"fill folding) agrees with the pass on {len(r.decisions) - len(wrong)} of {len(r.decisions)} "
                 "pair(s)")
    for d in wrong:
        lines.append(f"    {d.producer} -> {d.consumer}: the model says {'fuse' if d.predicted else 'keep'} "
                     f"({d.why}), the pass {'fused' if d.fused else 'kept'} it")
    lines += [f"  note: {n}" for n in r.notes]
    if not r.fused:
        lines.append("  the pass fused nothing")
    return "\n".join(lines)


def inline_head(rep: Any) -> str:
    """``inline B: inlined when N <= 2`` (the condition whenever there is one) or ``inline B: refused: why``."""
    if rep.status != "inlined":
        return f"inline {rep.block}: {rep.status}: {rep.reason}"
    if rep.when:
        return f"inline {rep.block}: inlined when {rep.when}"
    every = rep.reason.removeprefix("all checks proved ")
    return f"inline {rep.block}: inlined" + (f" {every}" if every.startswith("for every") else "")


def inline_text(rep: Any, fmt: Callable[[Any], str] | None = None) -> str:
    """``verified-indexing inline``'s text (``reverse-inline``'s for a report of
    :func:`~verified_indexing.legality.reverse_inline.reverse_compute_inline`): the head, the checks, the new
    program (``fmt``: how it is printed, by default as CINN IR)."""
    from verified_indexing.legality.cinn_ir import format_program

    if getattr(rep, "kind", "inline") == "reverse-inline":
        into = f" into {rep.consumers[0]}" if rep.consumers else ""
        lines = [f"reverse-inline {rep.block}{into}: {rep.status}"
                 + ("" if rep.status == "inlined" else f": {rep.reason}"), *checks_text(rep.checks)]
    else:
        lines = [inline_head(rep)]
        lines += [f"  [{c.status}] {c.name}" + (f" ({c.engine})" if c.engine and c.engine != "syntax" else "")
                  for c in rep.checks]
    if rep.program is not None:
        lines.append((fmt or format_program)(rep.program))
    return "\n".join(lines)
