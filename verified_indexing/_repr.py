"""Short ``repr`` for the public result types (a notebook cell or a log line, not a dump).

Every result type's ``repr`` is one line of at most :data:`LIMIT` characters,
``<Type what: the gist>``; the full content is in ``str()`` (the command line's
text) and ``to_json()``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["LIMIT", "clip", "short", "report_repr", "report_str"]

LIMIT = 299
"""The longest ``repr`` of a result type."""


def clip(text: str, width: int) -> str:
    """``text`` on one line, cut to ``width`` characters (``...`` marks a cut)."""
    one = " ".join(text.split())
    return one if len(one) <= width else one[: max(0, width - 3)] + "..."


def short(type_name: str, body: str) -> str:
    """``<type_name body>`` within :data:`LIMIT` characters."""
    return clip(f"<{type_name} {body}", LIMIT - 1) + ">"


def _name(x: object) -> str:
    return str(getattr(x, "name", x))


def _heads() -> dict[str, Callable[[Any], str]]:
    return {
        "FusionReport": lambda r: f"{_name(r.producer)} -> {_name(r.consumer)} (operand {r.operand_index}): {r.status}"
        + ("" if r.mlir is None else f"; MLIR {'fusable' if r.mlir.fusable else 'refuses'}")
        + (f"; {r.reason}" if r.reason and r.status != "legal" else ""),
        "AuditResult": lambda r: f"operand {r.claim.operand} line {r.claim.line}: {r.status}",
        "OperandUtilization": lambda r: f"{r.fusion or r.computation} operand {r.operand} {r.name}: {r.status}, "
        f"{r.elements_read} elements read{'' if r.exact else ' (bound)'}",
        "TileRead": lambda r: f"operand {r.operand} {r.name}: offsets {list(r.offsets)} sizes {list(r.sizes)} strides "
        f"{list(r.strides)}{', exact' if r.exact else ''}" + (f"; {r.reason}" if r.reason else ""),
        "CoalescingResult": lambda r: f"{r.computation + ' ' if r.computation else ''}operand {r.operand} {r.name}: "
        f"{r.status}" + (f"; {r.reason}" if r.reason else ""),
        "InlineReport": lambda r: f"{r.block}{' into ' + ', '.join(r.consumers) if r.consumers else ''}: {r.status}"
        + (f" when {r.when}" if getattr(r, "when", "") else "") + (f"; {r.reason}" if r.status != "inlined" else "")
        + f"; {len(r.checks)} checks",
        "EpilogueReport": lambda r: f"{r.block} into {r.reduction or '?'}: {r.status}"
        + (f" ({r.form})" if r.form else "") + (f"; {r.reason}" if r.status != "fused" else "")
        + f"; {len(r.checks)} checks",
        "InverseResult": lambda r: f"{r.status}: {r.map.format(one_line=True)}"
        + (f"; inverse {r.inverse.format(one_line=True)}" if r.inverse is not None else "")
        + (f"; {r.reason}" if r.reason else ""),
        "MlirValidation": lambda r: f"{r.pass_name}: {r.pairs} pairs, {len(r.fused)} fused ops ("
        + ", ".join(f"{sum(1 for f in r.fused if f.status == s)} {s}" for s in ("proved", "refuted", "unknown"))
        + f"), {len(r.refusals)} refusals",
        "FusedCheck": lambda r: f"{r.op}" + (f" (replaced {', '.join(r.replaced)})" if r.replaced else "")
        + f": {r.status}; {r.reason}",
        "Refusal": lambda r: f"{r.producer} -> {r.consumer}: refused by MLIR ({r.why_refused}); project: {r.project}",
        "Decision": lambda r: f"{r.producer} -> {r.consumer}: predicted "
        f"{'unknown' if r.predicted is None else 'fuses' if r.predicted else 'refuses'}, "
        f"MLIR {'fused' if r.fused else 'refused'}" + (f" ({r.decided_by})" if r.decided_by else ""),
        "Obligation": lambda r: f"{r.name}: {getattr(r.verdict, 'status', r.verdict)}",
        "CacheCheck": lambda r: f"{r.outcome}: {r.question}",
        "Counterexample": lambda r: f"{r.kind}: " + ", ".join(f"{k} = {v}" for k, v in r.values)
        + (f"; {r.note}" if r.note else ""),
        "Step": lambda r: f"{r.rule} at {r.where}: {r.before} -> {r.after}",
        "InlineCheck": lambda r: f"{r.name}: {r.status}" + (f" ({r.engine})" if r.engine else ""),
        "PassDecision": lambda r: f"{'unknown' if r.fuses is None else 'fuses' if r.fuses else 'refuses'} "
        f"({r.decided_by}): {r.why}",
        "UnsupportedOp": lambda r: f"{r.instruction} ({r.opcode})" + (f": {r.reason}" if r.reason else ""),
        "KernelResult": lambda r: f"{r.kernel}: {r.status}" + (f"; {r.reason}" if r.reason else ""),
        "StepValidation": lambda r: f"{r.primitive}: TVM {r.tvm_status}"
        + (f"; {r.verdict.status}" if getattr(r.verdict, "status", None) else ""),
        "EquivalenceReport": lambda r: f"{r.status}" + (f"; {r.reason}" if r.reason else "")
        + f"; {len(r.checks)} checks",
    }


def report_repr(obj: object) -> str:
    """The one-line ``repr`` of a result type of the package (a report, a verdict on a fusion...): its type,
    what it is about, its status, within :data:`LIMIT` characters."""
    name = type(obj).__name__
    head = _heads().get(name)
    if head is None:
        return short(name, f"status {getattr(obj, 'status', '?')}")
    try:
        return short(name, head(obj))
    except Exception:  # a half-built object: still a short line
        return short(name, f"status {getattr(obj, 'status', '?')}")


def report_str(obj: object) -> str:
    """The command line's text for a result whose class has no text method of its own
    (:mod:`verified_indexing._text`): an InverseResult (``invert``), an EpilogueReport (``fuse-epilogue``), a
    MlirValidation (``validate-mlir``)."""
    from verified_indexing._text import epilogue_text, inline_text, invert_text, validate_mlir_text

    name = type(obj).__name__
    if name == "InverseResult":
        from verified_indexing.serialize import invert_mlir

        return invert_text(obj, invert_mlir(obj.map))  # type: ignore[attr-defined]
    if name == "EpilogueReport":
        return epilogue_text(obj)
    if name == "MlirValidation":
        return validate_mlir_text(obj)
    if name == "InlineReport":
        return inline_text(obj)
    return repr(obj)
