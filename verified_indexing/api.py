"""The functions users call, as the command line's commands do (issue 28 item 3), for a notebook or a script.

Each returns an object that shows itself the way a person wants it: ``repr`` is one short line, ``str`` is
the command line's text output, ``to_json_text()`` the bytes of ``COMMAND --json`` (through the one
serializer, :mod:`verified_indexing.serialize`), and an analysis draws its fusion graph (``to_dot()``,
``_repr_svg_()``: a notebook shows it; no Graphviz needed)::

    >>> from verified_indexing import analyze
    >>> a = analyze("examples/jax_hlo/softmax.post.hlo")
    >>> a
    <Analysis jit_softmax: 6 fusions, 11 maps, 11 proofs (11 proved)>
    >>> a._repr_svg_()[:4]
    '<svg'

The inputs: a path (``str`` or ``os.PathLike``) or the text itself; for ``analyze`` also an HLO ``Module``, a
``*.hlo.pb`` file or an ``--xla_dump_to`` directory, with the command's ``--module``, ``--epilogue``, ``--jobs``
options (docs/python-api.md).
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, overload

from verified_indexing._repr import short

if TYPE_CHECKING:
    from verified_indexing.cli.analyze import Outcome
    from verified_indexing.engines.verdict import Verdict
    from verified_indexing.hlo.audit import AuditResult
    from verified_indexing.hlo.epilogue import EpilogueQuestion
    from verified_indexing.hlo.fusion import ComputationIndexing, Direction
    from verified_indexing.hlo.ir import Module
    from verified_indexing.legality.linalg import FusionReport

__all__ = ["analyze", "fuse", "audit", "check_rule", "Analysis", "Fusions", "AuditReport"]


def _text(given: str | os.PathLike[str], what: str) -> tuple[str, str]:
    """``(text, source)``: a path is read (UTF-8), anything else is the text itself."""
    if isinstance(given, os.PathLike) or ("\n" not in given and 0 < len(given) < 4096 and os.path.isfile(given)):
        path = os.fspath(given)
        from verified_indexing.cli._common import _read_file

        return _read_file(path)
    if isinstance(given, str):
        return given, f"<{what}>"
    raise TypeError(f"expected a path or {what} text, got {type(given).__name__}")


# -- analyze ---------------------------------------------------------------------------------------------------


@dataclass
class Analysis(Sequence["ComputationIndexing"]):
    """The indexing maps of an HLO module's fusions (what ``verified-indexing analyze`` prints): a sequence of
    :class:`~verified_indexing.hlo.fusion.ComputationIndexing`, one per analyzed computation. An input of
    several modules (a dump directory, a file split by ``// -----``) holds them all in ``modules``, each
    result naming its module and file (``module_name``, ``file``) as the command's JSON does."""

    modules: list[Module]
    results: list[ComputationIndexing]
    seconds: float = 0.0
    not_reached: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    """The lines the command writes to standard error before its report (what a dump directory's files
    were picked, StableHLO converted...)."""
    named: bool = False
    """Each result is named by its module and file (several modules, or a dump directory)."""
    epilogue: list[tuple[EpilogueQuestion, Module, list[ComputationIndexing]]] | None = None
    """With ``epilogue=HERO``: per module holding the hero, the question and its results."""
    drawn: list[tuple[Module, list[ComputationIndexing]]] | None = None
    """Each analyzed module and its results (None: every module, with every result)."""

    @property
    def module(self) -> Module:
        """The (first) module analyzed."""
        if not self.modules:
            from verified_indexing.errors import VerifiedIndexingError

            raise VerifiedIndexingError("the time budget ran out before a module was read")
        return self.modules[0]

    @overload
    def __getitem__(self, index: int) -> ComputationIndexing: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[ComputationIndexing]: ...
    def __getitem__(self, index: int | slice) -> ComputationIndexing | Sequence[ComputationIndexing]:
        return self.results[index]

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Iterator[ComputationIndexing]:
        return iter(self.results)

    def _outcome(self) -> Outcome:
        from verified_indexing.cli.analyze import Outcome

        drawn = self.drawn if self.drawn is not None else [(m, self.results) for m in self.modules[:1]]
        return Outcome(self.modules, self.results, self.seconds, self.not_reached, self.named, drawn, [],
                       self.epilogue, unread=not self.modules and self.not_reached == ["reading the input"])

    @property
    def exit_code(self) -> int:
        """The command line's exit code: 0 every map there and proven, 2 unknown or unsupported, 4 a failed
        proof."""
        return self._outcome().exit_code()

    def summary(self) -> dict[str, Any]:
        """The counts of ``analyze --json``'s ``summary`` (fusions, computations, maps, proofs by status...)."""
        from verified_indexing.hlo.report import summary

        return summary(self.results, self.seconds)

    def __repr__(self) -> str:
        s = self.summary()
        status = ", ".join(f"{n} {k}" for k, n in sorted(s["proof_status"].items()))
        proofs = f"{s['proofs']} proofs ({status})" if s["proofs"] else "not verified"
        extra = f", {len(s['unsupported_ops'])} unsupported ops" if s["unsupported_ops"] else ""
        extra += f", {len(self.not_reached)} not reached" if self.not_reached else ""
        what = self.modules[0].name if len(self.modules) == 1 else f"{len(self.modules)} modules"
        return short("Analysis", f"{what}: {s['fusions']} fusions, {s['maps']} maps, {proofs}{extra}")

    def __str__(self) -> str:
        """The text ``verified-indexing analyze`` prints (the maps, then the summary line)."""
        return self._outcome().text()

    def to_json(self) -> dict[str, Any]:
        """The fields of ``analyze --json`` (without ``schema`` and ``command``; absent values None)."""
        from verified_indexing.serialize import to_json_data

        return to_json_data(self._outcome().to_json_data(), "analyze")

    def to_json_text(self, *, no_timing: bool = False) -> str:
        """The bytes ``verified-indexing analyze FILE --json`` prints (``no_timing``: as with ``--no-timing``)."""
        from verified_indexing.serialize import json_text

        return json_text(self.to_json(), "analyze", no_timing=no_timing)

    def to_dot(self) -> str:
        """The fusion graph in Graphviz DOT, as ``analyze --dot`` writes it (each module's graph, named by its
        file when the results are)."""
        from verified_indexing.hlo.dumps import module_source
        from verified_indexing.hlo.graph import to_dot

        return "".join(to_dot(m, found, module_source(m) if self.named else None)
                       for m, found in self._outcome().drawn)

    def _repr_svg_(self) -> str:
        """The fusion graph as SVG (a notebook displays it), drawn without Graphviz."""
        from verified_indexing._svg import dot_to_svg_text

        return dot_to_svg_text(self.to_dot())


def analyze(
    hlo: str | os.PathLike[str] | Module,
    *,
    module: str | None = None,
    computation: str | None = None,
    epilogue: str | None = None,
    instruction: str | None = None,
    direction: Direction = "output-to-input",
    operand: int | None = None,
    verify: bool = True,
    from_instruction: str | None = None,
    physical: bool = False,
    jobs: int | None = None,
    timeout: float = math.inf,
) -> Analysis:
    """The indexing maps of an HLO module, composed, simplified and proven, as ``verified-indexing analyze``
    computes them, through the command's own code (:func:`verified_indexing.cli.analyze.analyze_inputs`).

    ``hlo``: a path (``str`` or ``os.PathLike``: an HLO text file, a ``*.hlo.pb`` module proto read through
    jaxlib, or an ``--xla_dump_to`` directory: its after-optimization modules), HLO text, or a parsed
    :class:`~verified_indexing.hlo.ir.Module`. The options are the command's (see ``analyze --help``):
    ``module`` is ``--module PATTERN`` (a glob on the file or ``HloModule`` name), ``epilogue`` is
    ``--epilogue HERO``, ``jobs`` is ``--jobs N`` (worker processes for several modules), ``timeout`` is
    ``--timeout`` (what was not finished is in ``not_reached``). Bad arguments raise
    :class:`~verified_indexing.errors.VerifiedIndexingError` with the command's message."""
    import time

    from verified_indexing.cli.analyze import analyze_inputs, check_options, read_path
    from verified_indexing.engines.deadline import command_budget
    from verified_indexing.hlo.ir import Module

    start = time.perf_counter()
    check_options(jobs=jobs, operand=operand, epilogue=epilogue, instruction=instruction,
                  from_instruction=from_instruction, direction=direction)
    notes: list[str] = []
    inputs: list[tuple[str, str]] = []
    parsed: list[Module] | None = None
    directory = None
    if isinstance(hlo, Module):
        parsed = [hlo]
    elif isinstance(hlo, os.PathLike) or _could_be_path(hlo):
        inputs, directory = read_path(os.fspath(hlo), notes.append)
    elif isinstance(hlo, str):
        inputs = [(hlo, "<HLO>")]
    else:
        raise TypeError(f"expected a path, HLO text or a Module, got {type(hlo).__name__}")
    options = {"instruction": instruction, "direction": direction, "operand": operand, "verify": verify,
               "from_instruction": from_instruction, "physical": physical}
    with command_budget(timeout):
        found = analyze_inputs(inputs, directory=directory, parsed=parsed, module=module, computation=computation,
                               epilogue=epilogue, jobs=jobs, options=options, say=notes.append, start=start)
    return Analysis(found.modules, found.results, found.seconds, found.not_reached, notes, found.named,
                    found.epilogue, found.drawn)


def _could_be_path(given: str) -> bool:
    """A string that names a file or directory (an existing one; one line without HLO's ``=`` that names
    nothing is a missing path: :class:`VerifiedIndexingError`)."""
    if not isinstance(given, str) or "\n" in given or not 0 < len(given) < 4096 or "\0" in given:
        return False
    if os.path.exists(given):
        return True
    if "HloModule" in given or "=" in given or "{" in given:
        return False
    from verified_indexing.errors import VerifiedIndexingError

    raise VerifiedIndexingError(f"{given}: no such file or directory")


# -- fuse ------------------------------------------------------------------------------------------------------


@dataclass
class Fusions(Sequence["FusionReport"]):
    """The verdicts on the producer-consumer pairs of linalg ops (what ``verified-indexing fuse`` prints): a
    sequence of :class:`~verified_indexing.legality.linalg.FusionReport`."""

    reports: list[FusionReport]
    notes: list[str] = field(default_factory=list)
    nothing: str = ""
    """With no pair: the line saying so."""

    @overload
    def __getitem__(self, index: int) -> FusionReport: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[FusionReport]: ...
    def __getitem__(self, index: int | slice) -> FusionReport | Sequence[FusionReport]:
        return self.reports[index]

    def __len__(self) -> int:
        return len(self.reports)

    def __iter__(self) -> Iterator[FusionReport]:
        return iter(self.reports)

    def __repr__(self) -> str:
        if not self.reports:
            return short("Fusions", self.nothing or "no pair")
        pairs = ", ".join(f"{r.producer.name}->{r.consumer.name} {r.status}" for r in self.reports)
        return short("Fusions", f"{len(self.reports)} pair{'s' if len(self.reports) != 1 else ''}: {pairs}")

    def __str__(self) -> str:
        """The text ``verified-indexing fuse`` prints."""
        from verified_indexing.legality.linalg import format_report

        if not self.reports:
            return "\n".join([*self.notes, self.nothing])
        head = "\n".join([*self.notes, ""]) if self.notes else ""
        return head + "\n\n".join(format_report(r) for r in self.reports)

    def to_json(self) -> dict[str, Any]:
        """The fields of ``fuse --json`` (one pair's report, or several under ``results``; absent values None)."""
        from verified_indexing.serialize import to_json_data

        return to_json_data(self.reports, "fuse", note=self.nothing)

    def to_json_text(self, *, no_timing: bool = False) -> str:
        """The bytes ``verified-indexing fuse FILE --json`` prints."""
        from verified_indexing.serialize import json_text

        return json_text(self.to_json(), "fuse", no_timing=no_timing)


def fuse(mlir: str | os.PathLike[str], producer: str | None = None, consumer: str | None = None) -> Fusions:
    """MLIR's verdict and ours, with proofs, on every producer-consumer pair of linalg ops of ``mlir`` (a path
    or the text), or the pair ``producer`` -> ``consumer`` (``%`` optional), as ``verified-indexing fuse``."""
    text, source = _text(mlir, "MLIR")
    return _fuse_text(text, source, producer, consumer)


def _fuse_text(text: str, source: str, producer: str | None, consumer: str | None) -> Fusions:
    """:func:`fuse` on MLIR text read from ``source`` (the command ``fuse`` prints this): the direct pairs and
    the pairs through a tensor.expand_shape or collapse_shape, in program order. No modelled linalg op, or no
    op or pair of the names given: :class:`VerifiedIndexingError`; no pair at all: no report, and the line
    saying so (``Fusions.nothing``)."""
    from dataclasses import replace

    from verified_indexing.errors import VerifiedIndexingError
    from verified_indexing.legality.linalg import (
        check_fusion,
        fusion_candidates,
        in_context,
        producer_uses,
        reshape_candidates,
        reshape_decision,
        results_used_elsewhere,
    )
    from verified_indexing.legality.linalg_ir import parse_linalg_module

    module = parse_linalg_module(text, source)
    ops = list(module.ops)
    notes = [f"skipped {s.op} ({s.name}, line {s.line}): {s.reason}" for s in module.skipped]
    prod, cons = (None if n is None else n if n.startswith("%") else "%" + n for n in (producer, consumer))
    if not ops and (prod is not None or cons is not None or not module.skipped):
        # No linalg op at all is not MLIR for this command (bad input); one op and no pair is an answer (below).
        raise VerifiedIndexingError("no modelled linalg op in the input" + "".join(f"; {n}" for n in notes))
    by_name = {op.name: op for op in ops}
    for n in (prod, cons):
        if n is not None and n not in by_name:
            raise VerifiedIndexingError(f"no linalg op named {n} (ops: {', '.join(by_name)})")
    # direct pairs, and pairs through a tensor.expand_shape (the consumer reading the producer's result
    # through the collapsed map), in program order
    every = [(p, c, k, "") for p, c, k in fusion_candidates(ops)] + reshape_candidates(text, ops)
    cands = sorted(
        ((p, c, k, via) for p, c, k, via in every
         if (prod is None or p.name == prod) and (cons is None or c.name == cons)),
        key=lambda t: (t[1].offset, t[0].offset, t[2]),
    )
    if not cands and (prod is not None or cons is not None):
        raise VerifiedIndexingError("no producer-consumer pair of linalg ops matches")
    if not cands:
        # Nothing to fuse is an answer, not bad input (a chunk holding one op); with
        # linalg ops not modelled, pairs through them are not decided: unknown.
        line = (f"no producer-consumer pair of linalg ops ({len(ops)} linalg op{'s' if len(ops) != 1 else ''} "
                "read): nothing to fuse")
        if module.skipped:
            line += f"; {len(module.skipped)} linalg op(s) not modelled: pairs through them are not decided"
        return Fusions([], notes, line)
    reports = []
    for p, c, k, via in cands:
        rep = check_fusion(p, c, operand_index=k, keep=results_used_elsewhere(text, p, c, k))
        if via:
            rep = replace(rep, through_reshape=via,
                          pass_decision=reshape_decision(p, c, k, producer_uses(text, p, ops), via,
                                                         next((o for o in ops if o.name == c.name), None), text))
        else:
            rep = in_context(rep, text, ops)
        reports.append(rep)
    return Fusions(reports, notes)


# -- audit, check-rule -----------------------------------------------------------------------------------------


@dataclass
class AuditReport(Sequence["AuditResult"]):
    """XLA's printed maps, each proved, over-approximating, refuted, unknown or an error (what
    ``verified-indexing audit`` prints): a sequence of :class:`~verified_indexing.hlo.audit.AuditResult`."""

    results: list[AuditResult]

    @overload
    def __getitem__(self, index: int) -> AuditResult: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[AuditResult]: ...
    def __getitem__(self, index: int | slice) -> AuditResult | Sequence[AuditResult]:
        return self.results[index]

    def __len__(self) -> int:
        return len(self.results)

    def __iter__(self) -> Iterator[AuditResult]:
        return iter(self.results)

    def __repr__(self) -> str:
        tally: dict[str, int] = {}
        for r in self.results:
            tally[r.status] = tally.get(r.status, 0) + 1
        counts = ", ".join(f"{n} {k}" for k, n in sorted(tally.items()))
        return short("AuditReport", f"{len(self.results)} claims" + (f": {counts}" if counts else ""))

    def __str__(self) -> str:
        """The text ``verified-indexing audit`` prints."""
        from verified_indexing.hlo.audit import format_audit

        return format_audit(self.results)

    def to_json(self) -> dict[str, Any]:
        """The fields of ``audit --json`` (absent values None)."""
        from verified_indexing.serialize import to_json_data

        return to_json_data(self.results, "audit")

    def to_json_text(self, *, no_timing: bool = False) -> str:
        """The bytes ``verified-indexing audit MODULE CLAIMS --json`` prints."""
        from verified_indexing.serialize import json_text

        return json_text(self.to_json(), "audit", no_timing=no_timing)


def audit(hlo: str | os.PathLike[str] | Module, claims: str | os.PathLike[str]) -> AuditReport:
    """Prove or refute XLA's printed indexing maps ``claims`` (a path or the text: XLA's printouts or JSON)
    against our analysis of ``hlo`` (a path, HLO text or a Module), as ``verified-indexing audit``."""
    from verified_indexing.hlo.audit import audit as audit_module
    from verified_indexing.hlo.audit import parse_claims
    from verified_indexing.hlo.ir import Module

    if isinstance(hlo, Module):
        module = hlo
    else:
        from verified_indexing.hlo.report import load_hlo

        module = load_hlo(*_text(hlo, "HLO"))
    return AuditReport(audit_module(module, parse_claims(*_text(claims, "claims"))))


def check_rule(rule: str, where: str = "", domain: str = "", *, timeout: float = 10.0,
               lemmas: Sequence[str] = ()) -> Verdict:
    """Prove the rewrite rule ``LHS -> RHS`` for all integers under ``where`` (symbolic constants ``c0``,
    ``c1``...), or refute it with a counterexample, as ``verified-indexing check-rule``
    (:func:`verified_indexing.proofs.user_rule.check_user_rule`)."""
    from verified_indexing.proofs.user_rule import check_user_rule

    return check_user_rule(rule, where, domain, timeout=timeout, lemmas=lemmas)
