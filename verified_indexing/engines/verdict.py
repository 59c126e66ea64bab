"""Verdicts and counterexamples: what every proof question returns.

A :class:`Verdict` is one of ``proved``, ``refuted``, ``unknown`` or ``error``
(see ``design/semantics-and-engines.md`` section 2), names the engine that
decided and the time taken, and a refutation carries a :class:`Counterexample`
that the plain evaluator has confirmed before the verdict was built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from verified_indexing.deferred_text import deferred_text, store_deferred

ENGINES = ("auto", "isl", "z3", "enum", "all")
"""The engine names every question accepts (``engines.api`` documents them)."""

__all__ = ["Verdict", "Counterexample", "Status", "CounterexampleKind"]

Status = Literal["proved", "refuted", "unknown", "error"]
CounterexampleKind = Literal[
    "results", "domain", "relation", "injectivity", "implies", "nonempty", "bijectivity", "subset"
]


@dataclass(frozen=True)
class Counterexample:
    """Concrete, evaluator-confirmed evidence that a claim is false.

    Attributes:
        kind: ``results`` (a common domain point where the results differ),
            ``domain`` (a point in one domain and not the other: ``in_domain`` says
            which), ``relation`` (a (dims, rt vars) -> results pair one map
            relates and the other does not), ``injectivity`` (two points with the
            same image: ``values`` and ``other_values``), ``implies`` (a domain
            point where the expression leaves the interval), ``nonempty`` (a
            domain point), ``bijectivity`` (a box point with no preimage, or two
            preimages), ``subset`` (a point of the first map whose domain, image
            or relation element the second map lacks; ``source`` holds its results).
        values: every variable's value, by name, in map order.
        source: the first side's results at the point (``None`` if not defined).
        target: the second side's results at the point (``None`` if not defined).
        subexpressions: ``(side, expression text, value)`` for every
            subexpression whose value differs between the sides (or, for one-sided
            questions, every subexpression).
        in_domain: for ``domain``: ``"source"`` or ``"target"`` (the point is in
            that domain only).
        other_values: the second point (injectivity) or a preimage's values.
        note: one line saying what the example shows.
    """

    kind: CounterexampleKind
    values: tuple[tuple[str, int], ...]
    source: tuple[int, ...] | None = None
    target: tuple[int, ...] | None = None
    subexpressions: tuple[tuple[str, str, int], ...] = ()
    in_domain: str = ""
    other_values: tuple[tuple[str, int], ...] = ()
    note: str = ""

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict (values as ``{name: value}`` objects, in order)."""
        return {
            "kind": self.kind,
            "values": dict(self.values),
            "source": list(self.source) if self.source is not None else None,
            "target": list(self.target) if self.target is not None else None,
            "subexpressions": [{"side": s, "expr": e, "value": v} for s, e, v in self.subexpressions],
            "in_domain": self.in_domain,
            "other_values": dict(self.other_values),
            "note": self.note,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> Counterexample:
        """The inverse of :meth:`to_json` (used by the proof cache); also reads the
        command line's JSON, where absent texts are ``null``."""
        return Counterexample(
            kind=data["kind"],
            values=tuple((str(k), int(v)) for k, v in data["values"].items()),
            source=tuple(int(x) for x in data["source"]) if data["source"] is not None else None,
            target=tuple(int(x) for x in data["target"]) if data["target"] is not None else None,
            subexpressions=tuple((str(d["side"]), str(d["expr"]), int(d["value"])) for d in data["subexpressions"]),
            in_domain=str(data.get("in_domain") or ""),
            other_values=tuple((str(k), int(v)) for k, v in data["other_values"].items()),
            note=str(data.get("note") or ""),
        )

    def lines(self) -> list[str]:
        """The Alive2-style text: values, then both sides, then subexpressions."""
        out = []
        if self.note:
            out.append(self.note)
        out.append("Example:")
        out += [f"  {n} = {v}" for n, v in self.values]
        if self.other_values:
            out.append("Second point:")
            out += [f"  {n} = {v}" for n, v in self.other_values]
        if self.kind == "subset":
            out.append(f"Source: {_fmt_tuple(self.source)}")
            out.append("Target: (no such element)")
        elif self.source is not None or self.target is not None or self.kind in ("results", "domain", "relation"):
            out.append(f"Source: {_fmt_tuple(self.source)}")
            out.append(f"Target: {_fmt_tuple(self.target)}")
        if self.subexpressions:
            out.append("Subexpressions:")
            out += [f"  {side}: {text} = {value}" for side, text, value in self.subexpressions]
        return out


def _fmt_tuple(t: tuple[int, ...] | None) -> str:
    if t is None:
        return "(not in the domain)"
    return "(" + ", ".join(str(x) for x in t) + ")"


@dataclass(frozen=True)
class Verdict:
    """The answer to one proof question.

    ``proved``: holds on every point of the domain (``engine`` proved it);
    ``refuted``: ``counterexample`` holds evaluator-confirmed values;
    ``unknown``: the engine gave up, ``reason`` says why (never a pass);
    ``error``: the question is ill-formed or the engines disagree (``reason``).
    """

    status: Status
    engine: str
    seconds: float
    question: str
    reason: str = ""
    counterexample: Counterexample | None = None
    cached: bool = field(default=False, compare=False)
    vacuous: bool = False
    """A proof that holds only because there is nothing to check: the assumptions
    are unsatisfiable or the domain is empty (reported, as Alive2 warns; the
    status stays ``proved``)."""

    @property
    def proved(self) -> bool:
        return self.status == "proved"

    @property
    def refuted(self) -> bool:
        return self.status == "refuted"

    @property
    def unknown(self) -> bool:
        return self.status == "unknown"

    @property
    def error(self) -> bool:
        return self.status == "error"

    def with_time(self, seconds: float) -> Verdict:
        return replace(self, seconds=seconds)

    @staticmethod
    def deferred(status: Status, engine: str, seconds: float, question: Callable[[], str]) -> Verdict:
        """A verdict whose question text is built on first read (``question()``, once): for the
        simplifier's many proofs whose text is seldom shown. It is otherwise the same verdict:
        equality, hashing, ``to_json`` and pickling read the text."""
        v = Verdict(status, engine, seconds, "")
        store_deferred(v, "question", question)
        return v

    def __reduce__(self) -> tuple[Any, ...]:
        return (Verdict, (self.status, self.engine, self.seconds, self.question, self.reason,
                          self.counterexample, self.cached, self.vacuous))

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready dict with every field."""
        return {
            "status": self.status,
            "engine": self.engine,
            "seconds": self.seconds,
            "question": self.question,
            "reason": self.reason,
            "counterexample": self.counterexample.to_json() if self.counterexample is not None else None,
            "cached": self.cached,
            "vacuous": self.vacuous,
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> Verdict:
        ce = data.get("counterexample")
        return Verdict(
            status=data["status"],
            engine=str(data["engine"]),
            seconds=float(data["seconds"]),
            question=str(data["question"]),
            reason=str(data.get("reason") or ""),
            counterexample=Counterexample.from_json(ce) if ce is not None else None,
            cached=bool(data.get("cached", False)),
            vacuous=bool(data.get("vacuous", False)),
        )

    def __repr__(self) -> str:
        """One line (at most 299 characters): status, engine, question, and the reason or the counterexample's
        values (``str()`` is the command line's full text)."""
        from verified_indexing._repr import clip, short

        extra = f"; {clip(self.reason, 80)}" if self.reason else ""
        if self.counterexample is not None:
            values = ", ".join(f"{n} = {v}" for n, v in self.counterexample.values)
            extra += f"; counterexample {clip(values, 80)}"
        return short("Verdict", f"{self.status} by {self.engine}: {clip(self.question, 140)}{extra}")

    def __str__(self) -> str:
        head = {
            "proved": "Proved: the claim holds on every point of the domain.",
            "refuted": "Refuted: the claim does not hold.",
            "unknown": "Unknown: the engine gave up; nothing is proved.",
            "error": "Error: the question could not be answered.",
        }[self.status]
        lines = ["-" * 40, self.question, "", head]
        if self.vacuous:
            lines.append("Warning: the proof is VACUOUS: the assumptions have no solution (or the domain is empty), "
                         "so nothing was checked.")
        if self.reason:
            lines.append(f"Reason: {self.reason}")
        if self.counterexample is not None:
            lines.append("")
            lines += self.counterexample.lines()
        lines.append("")
        from verified_indexing._timing import show_timing

        if show_timing():  # --no-timing: neither the time nor whether it came from the cache
            lines.append(f"Engine: {self.engine}{' (cached)' if self.cached else ''}")
            lines.append(f"Time: {self.seconds * 1000:.2f} ms")
        else:
            lines.append(f"Engine: {self.engine}")
        return "\n".join(lines)


# ``question`` is a dataclass field read through a property, so that Verdict.deferred can give a
# function that builds the text on first read.
Verdict.question = deferred_text("question")  # type: ignore[assignment]
