"""TVM itself, driven: apply TVM's own schedule primitive, read TVM's result, validate it.

TVM (``apache-tvm``, the ``tvm`` extra) is imported lazily: without it every entry
point raises :class:`TvmNotInstalled` (an :class:`~verified_indexing.errors.UnsupportedError`,
exit 3 at the command line, with the message).

:func:`validate_primitive` takes a function -- TVMScript text, a ``PrimFunc``, an
``IRModule`` or a ``tvm.s_tir.Schedule`` (its current function) -- applies one of
:data:`PRIMITIVES` through ``tvm.s_tir.Schedule``, prints TVM's result with
``script()`` and reads both programs with the project's TVMScript reader. Then:

* TVM applied it: :func:`~verified_indexing.tvm.equivalence.check_equivalence`
  proves TVM's result computes every output of the original (same elements, same
  values, every size) or refutes it with the sizes, the element and both values
  (the plain interpreter's, re-run). A refutation is re-checked once more by TVM
  itself: both functions compiled for the CPU (``llvm``) and run on the witness's
  input data, the witness element compared (``tvm_recheck``).
* TVM refused (``ScheduleError``): the project's own answer decides whether TVM is
  too conservative (the project proves the primitive legal).

The project's own answer for the primitive (:func:`~verified_indexing.legality.inline.compute_inline`,
:func:`~verified_indexing.legality.reverse_inline.reverse_compute_inline`,
:func:`~verified_indexing.legality.epilogue.fuse_reduction_epilogue`) is reported
side by side. :func:`validate` checks every recorded step of a schedule's trace
against the function before it.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from verified_indexing.errors import ParseError, UnsupportedError, VerifiedIndexingError
from verified_indexing.legality.cinn_eval import INPUT_RULE, input_value
from verified_indexing.legality.cinn_ir import Stmt
from verified_indexing.tvm.equivalence import EquivalenceReport, check_equivalence

__all__ = ["PRIMITIVES", "StepValidation", "TvmNotInstalled", "load_tvm", "parse_tvm_source", "read_tvm_program",
           "tvm_available", "validate", "validate_primitive"]

#: The schedule primitives TVM applies here.
PRIMITIVES = ("compute_inline", "reverse_compute_inline", "fuse_reduction_epilogue")


class TvmNotInstalled(UnsupportedError):
    """TVM (the ``tvm`` extra, ``apache-tvm``) is not installed."""


def tvm_available() -> bool:
    """Whether ``import tvm`` (with ``tvm.s_tir``) works."""
    try:
        load_tvm()
    except TvmNotInstalled:
        return False
    return True


def load_tvm() -> Any:
    """The ``tvm`` module with ``tvm.s_tir`` loaded; :class:`TvmNotInstalled` without it."""
    try:
        tvm = importlib.import_module("tvm")
        importlib.import_module("tvm.s_tir")
        importlib.import_module("tvm.script")
    except ImportError as exc:
        raise TvmNotInstalled(f"TVM is not installed ({exc}): install the extra with "
                              "pip install 'verified-indexing[tvm]' (apache-tvm >= 0.27)") from None
    return tvm


# ---------------------------------------------------------------------------
# Reading TVMScript with TVM, and TVM's output with the project's reader
# ---------------------------------------------------------------------------

_OLD_TO_NEW = ((re.compile(r"\bT\.block\("), "T.sblock("),
               (re.compile(r"\bT\.alloc_buffer\("), "T.sblock_alloc_buffer("),
               (re.compile(r"@T\.prim_func\s*$", re.MULTILINE), "@T.prim_func(s_tir=True)"),
               (re.compile(r"@T\.prim_func\((?![^)]*s_tir)"), "@T.prim_func(s_tir=True, "))


def parse_tvm_source(text: str, source: str = "<input>") -> Any:
    """TVMScript read by TVM's own parser (old spelling ``T.block`` accepted:
    mapped to ``T.sblock``): a ``PrimFunc`` or an ``IRModule``. Import lines are
    dropped (TVM's parser provides ``T`` and ``I``). A TVM diagnostic becomes a
    :class:`VerifiedIndexingError` naming the source."""
    tvm = load_tvm()
    lines = ["" if re.match(r"\s*(from\s+\S+\s+import\b|import\s)", ln) and "__future__" not in ln else ln
             for ln in text.splitlines()]
    body = "\n".join(lines)
    for pat, new in _OLD_TO_NEW:
        body = pat.sub(new, body)
    if "@T.prim_func" not in body and "@I.ir_module" not in body:
        raise ParseError("no @T.prim_func function in the TVMScript", text, 0, 1, source)
    try:
        return tvm.script.from_source(body, s_tir=True)
    except Exception as exc:  # TVM's diagnostics carry the line and column in the message
        raise VerifiedIndexingError(f"{source}: TVM cannot parse this TVMScript: {str(exc).strip()}") from None


def read_tvm_program(text: str, source: str = "<tvm>") -> Stmt:
    """TVMScript printed by TVM, read by the project's reader
    (:func:`~verified_indexing.legality.tvmscript.parse_tvmscript`, which reads
    TVM 0.27's ``T.sblock`` spelling)."""
    from verified_indexing.legality.tvmscript import parse_tvmscript

    return parse_tvmscript(text, source)


def _prim_func(tvm: Any, obj: Any) -> Any:
    """The ``PrimFunc`` of a PrimFunc, an IRModule (``main`` or its only function) or a Schedule."""
    s_tir = tvm.s_tir
    if isinstance(obj, s_tir.Schedule):
        obj = obj.mod
    if isinstance(obj, tvm.IRModule):
        names = [gv.name_hint for gv in obj.functions.keys()]
        if "main" in names:
            return obj["main"]
        if len(names) == 1:
            return obj[names[0]]
        raise VerifiedIndexingError(f"the IRModule holds {len(names)} functions ({', '.join(names)}) and no main")
    if isinstance(obj, str):
        return _prim_func(tvm, parse_tvm_source(obj))
    if obj.__class__.__name__ == "PrimFunc":
        return obj
    raise VerifiedIndexingError(f"expected TVMScript, a PrimFunc, an IRModule or a Schedule, got {type(obj).__name__}")


# ---------------------------------------------------------------------------
# One primitive
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class StepValidation:
    """One primitive applied by TVM and validated.

    ``tvm_status`` is ``applied``, ``refused`` (a ``ScheduleError``) or ``crashed``
    (any other exception inside TVM's primitive; ``tvm_error`` is TVM's message);
    ``verdict`` validates TVM's result (``proved`` / ``refuted`` / ``unknown`` /
    ``error``; ``None`` when TVM refused); ``project`` is the project's own answer
    for the primitive (``status``, ``reason``); ``tvm_recheck`` is TVM's compiled
    code run on a refutation's inputs (``None`` when not run)."""

    primitive: str
    blocks: tuple[str, ...]
    tvm_status: str
    tvm_error: str
    before: str
    after: str | None
    verdict: EquivalenceReport | None
    project: dict[str, Any]
    tvm_recheck: dict[str, Any] | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def outcome(self) -> str:
        """``proved``, ``refuted``, ``unknown`` or ``error`` for an applied
        primitive; ``tvm-too-conservative`` for a refusal the project proves
        legal; ``refused`` for one it does not."""
        if self.tvm_status == "crashed":
            return "tvm-crashed"
        if self.tvm_status == "refused":
            return "tvm-too-conservative" if self.project.get("legal") else "refused"
        assert self.verdict is not None
        return self.verdict.status

    @property
    def exit_code(self) -> int:
        """0 proved, 1 refuted, 2 unknown (and a TVM refusal), 4 error."""
        return {"proved": 0, "refuted": 1, "unknown": 2, "error": 4, "refused": 2,
                "tvm-too-conservative": 2, "tvm-crashed": 2}[self.outcome]

    def __repr__(self) -> str:
        from verified_indexing._repr import report_repr

        return report_repr(self)

    def to_json(self) -> dict[str, Any]:
        """The validation as JSON-ready data."""
        return {"primitive": self.primitive, "blocks": list(self.blocks), "outcome": self.outcome,
                "tvm": {"status": self.tvm_status, "error": self.tvm_error or None, "result": self.after},
                "validation": self.verdict.to_json() if self.verdict else None,
                "project": self.project, "tvm_recheck": self.tvm_recheck, "notes": list(self.notes)}


def _apply(tvm: Any, func: Any, primitive: str, block: str, reduction: str | None) -> Any:
    sch = tvm.s_tir.Schedule(func)
    if primitive == "fuse_reduction_epilogue":
        if reduction is None:
            raise VerifiedIndexingError("fuse_reduction_epilogue needs the reduction block (--reduction)")
        sch.fuse_reduction_epilogue(sch.get_sblock(reduction), sch.get_sblock(block))
    else:
        getattr(sch, primitive)(sch.get_sblock(block))
    return sch


def _block_names(text: str) -> list[str]:
    """The block names of a function printed by TVM."""
    return re.findall(r'T\.s?block\("([^"]*)"', text)


def _reduction_of(program: Stmt, block: str) -> str | None:
    """The reduction block whose tensor the epilogue block ``block`` reads (the project's view)."""
    from verified_indexing.legality.cinn_ir import find_block, walk_blocks
    from verified_indexing.legality.epilogue import find_reduction
    from verified_indexing.legality.inline import _own_stores, _value_loads

    contexts = list(walk_blocks(program))
    try:
        ctx = find_block(contexts, block)
    except VerifiedIndexingError:
        return None
    for s in _own_stores(ctx):
        for ld in _value_loads(s.value):
            red = find_reduction(program, ld.tensor, predicated=True)
            if not isinstance(red, str):
                return red.update.block.name
    return None


def project_answer(program: Stmt, primitive: str, block: str, timeout: float = 10.0) -> dict[str, Any]:
    """The project's own answer for the primitive on ``program``: ``{status,
    reason, legal}`` (``legal`` only when every obligation is proved)."""
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue
    from verified_indexing.legality.inline import compute_inline
    from verified_indexing.legality.reverse_inline import reverse_compute_inline

    try:
        if primitive == "compute_inline":
            rep: Any = compute_inline(program, block, timeout=timeout)
            legal = rep.status == "inlined" and not rep.when
        elif primitive == "reverse_compute_inline":
            rep = reverse_compute_inline(program, block, timeout=timeout)
            legal = rep.status == "inlined" and not getattr(rep, "when", "")
        else:
            rep = fuse_reduction_epilogue(program, block, timeout=timeout)
            legal = rep.status == "fused"
    except VerifiedIndexingError as exc:
        return {"status": "unknown", "reason": f"not modelled: {exc}", "legal": False}
    except Exception as exc:  # the project's own engine failed: reported next to TVM's result, not raised
        return {"status": "error", "reason": f"internal error: {type(exc).__name__}: {exc}", "legal": False}
    out: dict[str, Any] = {"status": rep.status, "reason": rep.reason, "legal": legal}
    if getattr(rep, "laws", ()):
        out["laws_assumed"] = list(rep.laws)
    if getattr(rep, "when", ""):
        out["when"] = rep.when
    return out


def validate_primitive(
    func: Any, primitive: str, block: str, *, reduction: str | None = None, timeout: float = 10.0,
    outputs: Sequence[str] | None = None, recheck_with_tvm: bool = True,
) -> StepValidation:
    """Apply TVM's ``primitive`` to ``block`` of ``func`` (TVMScript text, a
    PrimFunc, an IRModule or a Schedule) and validate TVM's result (module
    docstring). ``reduction`` is the reduction block of ``fuse_reduction_epilogue``
    (default: the one whose tensor ``block`` reads)."""
    if primitive not in PRIMITIVES:
        raise VerifiedIndexingError(f"unknown primitive {primitive!r} (one of {', '.join(PRIMITIVES)})")
    tvm = load_tvm()
    pf = _prim_func(tvm, func)
    before_text = pf.script()
    before = read_tvm_program(before_text, "<original>")
    names = [b for b in _block_names(before_text) if b != "root"]
    if block not in names:
        raise VerifiedIndexingError(f"no block named {block!r} (blocks: {', '.join(names)})")
    if primitive == "fuse_reduction_epilogue" and reduction is None:
        reduction = _reduction_of(before, block)
        if reduction is None:
            raise VerifiedIndexingError(f"block {block} reads no reduction the project recognizes: "
                                        "name it with --reduction (reduction= in Python)")
    blocks = (block,) if reduction is None else (reduction, block)
    project = project_answer(before, primitive, block, timeout)
    try:
        sch = _apply(tvm, pf, primitive, block, reduction)
    except tvm.s_tir.ScheduleError as exc:
        return StepValidation(primitive, blocks, "refused", _schedule_error(str(exc)), before_text, None, None,
                              project)
    except Exception as exc:  # TVM failed inside the primitive (an internal error, not a ScheduleError)
        msg = [ln for ln in str(exc).strip().splitlines() if ln.strip()]
        text = f"{type(exc).__name__}: {msg[-1] if msg else ''}".strip()
        return StepValidation(primitive, blocks, "crashed", text, before_text, None, None, project)
    after_pf = _prim_func(tvm, sch)
    after_text = after_pf.script()
    return _validate_result(tvm, pf, after_pf, before, before_text, after_text, primitive, blocks, project,
                            timeout, outputs, recheck_with_tvm)


def _schedule_error(text: str) -> str:
    """TVM's ScheduleError in one line: the first line and the ``Error message:`` paragraph."""
    lines = text.strip().splitlines()
    head = lines[0].strip() if lines else ""
    m = re.search(r"Error message:\s*(.*)", text, re.DOTALL)
    if m is None:
        return head
    return f"{head} {' '.join(m.group(1).split())}"


def _validate_result(
    tvm: Any, pf: Any, after_pf: Any, before: Stmt, before_text: str, after_text: str, primitive: str,
    blocks: tuple[str, ...], project: dict[str, Any], timeout: float, outputs: Sequence[str] | None,
    recheck_with_tvm: bool,
) -> StepValidation:
    notes: list[str] = []
    try:
        after = read_tvm_program(after_text, "<tvm result>")
    except VerifiedIndexingError as exc:
        verdict = EquivalenceReport("unknown", f"TVM's result is not read: {str(exc).splitlines()[0]}")
        return StepValidation(primitive, blocks, "applied", "", before_text, after_text, verdict, project)
    verdict = check_equivalence(before, after, outputs=outputs, timeout=timeout)
    if verdict.status == "unknown" and primitive == "fuse_reduction_epilogue":
        verdict = _epilogue_verdict(before, after, blocks[-1], verdict, timeout)
    recheck = None
    if verdict.status == "refuted" and verdict.witness and recheck_with_tvm:
        recheck = run_with_tvm(tvm, pf, after_pf, before, verdict.witness)
        exact = not verdict.witness.get("uninterpreted")
        if recheck.get("confirmed") is False and exact:
            notes.append("TVM's compiled code does not reproduce the interpreter's difference: " +
                         str(recheck.get("note", "")))
        if not exact and not recheck.get("confirmed"):
            # the interpreter's values rest on functions it does not compute (exp...) or on exact division:
            # only a difference of TVM's own code on real inputs refutes TVM's result
            found = recheck.get("found")
            names = ", ".join(verdict.witness["uninterpreted"])
            if found:
                w = {**found, "sizes": {}, "by": "tvm", "note": f"{found['tensor']}{found['element']}: original "
                     f"{found['original']}, transformed {found['after']} (TVM's compiled code; {found['inputs']})"}
                verdict = EquivalenceReport("refuted", w["note"], verdict.checks, w, verdict.outputs)
                notes.append(f"the interpreter's witness treats {names} as uninterpreted; the witness is the "
                             "difference of TVM's compiled code on real inputs")
            else:
                verdict = EquivalenceReport(
                    "unknown", f"the interpreter's difference ({verdict.reason}) rests on {names} computed as "
                    "an uninterpreted function, and TVM's compiled code shows no difference: "
                    f"{recheck.get('note', '')}", verdict.checks, None, verdict.outputs)
    return StepValidation(primitive, blocks, "applied", "", before_text, after_text, verdict, project, recheck,
                          tuple(notes))


def _epilogue_verdict(before: Stmt, after: Stmt, block: str, general: EquivalenceReport,
                      timeout: float) -> EquivalenceReport:
    """fuse-epilogue's own comparison of a given fused program (induction over the
    reduction loop), used when the general check leaves the fusion unknown."""
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue

    try:
        rep = fuse_reduction_epilogue(before, block, fused=after, timeout=timeout)
    except VerifiedIndexingError as exc:
        return EquivalenceReport("unknown", f"{general.reason}; fuse-epilogue: {exc}", general.checks,
                                 outputs=general.outputs)
    if rep.status == "fused":
        laws = tuple(rep.laws)
        reason = "fuse-epilogue's induction proves the fused reduction computes the epilogue" + (
            f" (laws assumed: {', '.join(laws)})" if laws else "")
        return EquivalenceReport("proved", reason, general.checks + tuple(rep.checks), outputs=general.outputs,
                                 laws=laws)
    return EquivalenceReport("unknown", f"{general.reason}; fuse-epilogue: {rep.status}: {rep.reason}",
                             general.checks + tuple(rep.checks), outputs=general.outputs)


# ---------------------------------------------------------------------------
# TVM's compiled code as a second opinion on a refutation
# ---------------------------------------------------------------------------


def _shape(tvm: Any, buf: Any) -> tuple[int, ...]:
    """A buffer's constant shape (:class:`VerifiedIndexingError` for a symbolic one)."""
    out = []
    for d in buf.shape:
        if not isinstance(d, tvm.tirx.IntImm):
            raise VerifiedIndexingError("a symbolic buffer shape is not run by TVM here")
        out.append(int(d))
    return tuple(out)


def run_isolated(fn: Callable[..., Any], *args: Any, timeout: float = 60.0, reuse: bool = False) -> Any:
    """``fn(*args)`` in a child process (a new Python interpreter, ``subprocess``: never
    ``os.fork``, which JAX and other multithreaded libraries warn against and which can
    deadlock; allowed in daemonic pool workers too), its result pickled back. ``fn``
    must be picklable by reference (a module-level function; not a lambda or a closure)
    and ``args`` picklable. TVM's compiled code of a wrong result may read or write out
    of bounds (a TVM primitive that drops a predicate): the corruption stays in the
    child. Raises :class:`RuntimeError` when the child dies (a signal), fails or
    exceeds ``timeout`` seconds, :class:`TypeError` when ``fn`` cannot be pickled.

    With ``reuse``, one child per process serves the calls one after the other (it
    imports TVM once: a new interpreter importing TVM costs about 3 s a call); it is
    replaced after a crash, an error or a timeout. Memory a wrong result corrupted
    without crashing would stay corrupted for the next call of that child: use it
    where every call's programs are believed correct (re-running proved results)."""
    import pickle
    import subprocess
    import sys

    try:
        job = pickle.dumps((fn, args))
        payload = pickle.dumps(list(sys.path)) + job
    except (pickle.PicklingError, AttributeError, TypeError) as exc:
        raise TypeError(f"run_isolated: {fn!r} cannot run in a child process (a module-level function "
                        f"with picklable arguments is needed): {exc}") from exc
    if reuse:
        return _serve(job, timeout)
    code = "from verified_indexing.tvm.driver import _isolated_child; _isolated_child()"
    try:
        proc = subprocess.run([sys.executable, "-c", code], input=payload, capture_output=True,
                              timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"TVM's compiled code did not finish in {timeout:g} s") from None
    if proc.returncode != 0 or not proc.stdout:
        tail = proc.stderr.decode(errors="replace").strip().splitlines()[-1:] if proc.stderr else []
        raise RuntimeError(f"TVM's compiled code crashed (exit code {proc.returncode}): an out-of-bounds access "
                           "is likely" + (f" ({tail[0]})" if tail else ""))
    kind, value = pickle.loads(proc.stdout)
    if kind != "ok":
        raise RuntimeError(str(value))
    return value


_SERVER: dict[int, Any] = {}  # the process id -> its serving child (a forked pool worker gets its own)


def _serve(job: bytes, timeout: float) -> Any:
    """One call in this process's serving child (started on first use): frames of a 4-byte length and a pickle,
    both ways."""
    import os
    import pickle
    import select
    import struct
    import subprocess
    import sys
    import time

    proc = _SERVER.get(os.getpid())
    if proc is None or proc.poll() is not None:
        code = "from verified_indexing.tvm.driver import _isolated_server; _isolated_server()"
        proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        assert proc.stdin is not None
        proc.stdin.write(pickle.dumps(list(sys.path)))
        _SERVER[os.getpid()] = proc
    assert proc.stdin is not None and proc.stdout is not None

    def fail(message: str) -> RuntimeError:
        proc.kill()
        proc.wait()
        _SERVER.pop(os.getpid(), None)
        return RuntimeError(message)

    try:
        proc.stdin.write(struct.pack("<I", len(job)) + job)
        proc.stdin.flush()
    except OSError:
        raise fail("TVM's compiled code crashed (its process is gone): an out-of-bounds access is likely") from None
    deadline = time.monotonic() + timeout
    fd = proc.stdout.fileno()
    data = b""
    need = 4
    size: int | None = None
    while len(data) < need:
        left = deadline - time.monotonic()
        if left <= 0:
            raise fail(f"TVM's compiled code did not finish in {timeout:g} s")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, max(need - len(data), 1 << 16))
        if not chunk:
            raise fail(f"TVM's compiled code crashed (exit code {proc.wait()}): an out-of-bounds access is likely")
        data += chunk
        if size is None and len(data) >= 4:
            size = struct.unpack("<I", data[:4])[0]
            need = 4 + size
    kind, value = pickle.loads(data[4:need])
    if kind != "ok":
        raise fail(str(value))
    return value


def _isolated_server() -> None:
    """The serving child of :func:`run_isolated` with ``reuse``: reads the parent's ``sys.path``, then runs one
    framed ``(fn, args)`` after the other, answering each with a framed ``("ok", result)`` or
    ``("error", text)`` on the original standard output."""
    import os
    import pickle
    import struct
    import sys

    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    sys.path[:] = pickle.load(inp)
    while True:
        head = inp.read(4)
        if len(head) < 4:
            return
        body = inp.read(struct.unpack("<I", head)[0])
        try:
            fn, args = pickle.loads(body)
            data = pickle.dumps(("ok", fn(*args)))
        except BaseException as exc:  # everything goes back to the parent as text
            data = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
        out.write(struct.pack("<I", len(data)) + data)
        out.flush()


def _isolated_child() -> None:
    """The child of :func:`run_isolated`: reads the parent's ``sys.path`` and ``(fn, args)`` from standard
    input, writes ``("ok", result)`` or ``("error", text)`` on the original standard output (anything the
    function prints goes to standard error)."""
    import os
    import pickle
    import sys

    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # prints of the function (or of TVM's C++ code) do not mix with the result
    sys.path[:] = pickle.load(sys.stdin.buffer)
    try:
        fn, args = pickle.load(sys.stdin.buffer)
        data = pickle.dumps(("ok", fn(*args)))
    except BaseException as exc:  # everything goes back to the parent as text
        data = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
    out.write(data)
    out.flush()


def run_compiled(texts: Sequence[str], inputs: Sequence[Sequence[Any]]) -> list[list[list[Any]]]:
    """Each TVMScript function of ``texts`` parsed by TVM, compiled (``llvm``) and run on each input set of
    ``inputs`` (numpy arrays, one per parameter, copied): for each input set, for each function, every
    parameter's array after the run. Runs where it is called: give it to :func:`run_isolated`."""
    tvm = load_tvm()

    mods = [tvm.compile(parse_tvm_source(t), target="llvm") for t in texts]
    dev = tvm.cpu()
    out = []
    for arrays in inputs:
        results = []
        for m in mods:
            args = [tvm.runtime.tensor(a.copy(), dev) for a in arrays]
            m(*args)
            results.append([x.numpy() for x in args])
        out.append(results)
    return out


#: Elements of canary memory :func:`run_compiled_guarded` places before and after every buffer.
GUARD = 64


def _canary(dtype: Any) -> Any:
    """The value the guard cells hold (``None``: a type too narrow to guard, e.g. ``bool`` or ``int8``)."""
    import numpy as np

    dt = np.dtype(dtype)
    if dt.kind == "f" and dt.itemsize >= 2:
        return dt.type(-8191.5)
    if dt.kind in "iu" and dt.itemsize >= 2:
        return dt.type(8191)
    return None


def run_compiled_guarded(texts: Sequence[str], inputs: Sequence[Sequence[Any]],
                         guard: int = GUARD) -> list[list[tuple[list[Any], list[list[tuple[int, Any]]]]]]:
    """As :func:`run_compiled`, but every parameter's array is placed, without a copy, inside a larger
    array of ``guard`` canary elements before and after it (its start 64-byte aligned, as TVM requires),
    so that a write of the compiled code just outside a buffer is seen: for each input set, for each
    function, ``(arrays, outside)`` where ``outside[k]`` lists the guard cells of parameter ``k`` the run
    changed, as ``(flat offset from the buffer's start, value)`` (negative: before it; at least its size:
    after it). A parameter whose type is too narrow for a canary (``bool``, 8 bits) is not guarded.
    Runs where it is called: give it to :func:`run_isolated` (a write further out corrupts other memory)."""
    import numpy as np

    tvm = load_tvm()
    mods = [tvm.compile(parse_tvm_source(t), target="llvm") for t in texts]
    out = []
    for arrays in inputs:
        results = []
        for m in mods:
            args: list[Any] = []
            views: list[Any] = []
            fences: list[tuple[Any, int, Any] | None] = []
            for a in arrays:
                a = np.ascontiguousarray(a)
                canary = _canary(a.dtype)
                if canary is None or a.size == 0:
                    args.append(tvm.runtime.tensor(a.copy(), tvm.cpu()))
                    views.append(None)
                    fences.append(None)
                    continue
                slack = 64 // a.itemsize + 1
                raw = np.full(a.size + 2 * guard + slack, canary, dtype=a.dtype)
                start = guard + (-(raw.ctypes.data + guard * a.itemsize) % 64) // a.itemsize
                view = raw[start:start + a.size].reshape(a.shape)
                view[...] = a
                args.append(tvm.runtime.from_dlpack(view))
                views.append(view)
                fences.append((raw, start, canary))
            m(*args)
            got: list[Any] = []
            outside: list[list[tuple[int, Any]]] = []
            for x, view, fence in zip(args, views, fences):
                if fence is None:
                    got.append(x.numpy())
                    outside.append([])
                    continue
                raw, start, canary = fence
                got.append(view.copy())
                n = view.size
                cells = [i for i in range(start - guard, start + n + guard)
                         if not start <= i < start + n and raw[i] != canary]
                outside.append([(i - start, raw[i].item()) for i in cells])
            results.append((got, outside))
        out.append(results)
    return out


def run_with_tvm(tvm: Any, before_pf: Any, after_pf: Any, before: Stmt, witness: dict[str, Any],
                 random_runs: int = 3) -> dict[str, Any]:
    """Both functions compiled by TVM (``llvm``) and run (in a child process,
    :func:`run_isolated` of :func:`run_compiled`) on the witness's input data
    (:func:`~verified_indexing.legality.cinn_eval.input_value`), then on
    ``random_runs`` random integer inputs (``numpy.random.default_rng(0)``,
    integers in [-3, 3]): ``{confirmed, original, after, note}`` at the witness
    element on the witness inputs, and ``found``: the first element of any
    buffer where the two differ over all runs (``None`` when none does).
    Every buffer is run inside guard cells (:func:`run_compiled_guarded`):
    ``outside`` lists the writes just outside a buffer that the transformed
    function makes and the original does not (``{tensor, offset, value, inputs}``,
    the offset flat from the buffer's start), so a dropped guard that writes
    past a buffer's end is seen; a witness element outside its buffer is
    ``confirmed`` when the transformed function writes that cell.
    ``confirmed`` is ``None`` when TVM cannot run them (symbolic shapes, a crash)
    and for a witness that is a read of memory nothing writes."""
    import numpy as np

    sizes = dict(witness.get("sizes", {}))
    tensor = str(witness.get("tensor", ""))
    element = tuple(witness.get("element", ()))
    if sizes:
        return {"confirmed": None, "found": None, "note": "size parameters: not run by TVM here"}
    try:
        bufs = list(before_pf.params)  # TVM 0.27: the parameters are the buffers
        shapes = [_shape(tvm, b) for b in bufs]
        names = [str(b.name) for b in bufs]
        dtypes = [str(b.dtype) for b in bufs]
    except Exception as exc:  # a second opinion only: TVM failing is reported, not raised
        return {"confirmed": None, "found": None, "note": f"TVM could not compile the functions: "
                f"{type(exc).__name__}: {exc}"}
    seed = int(witness.get("seed", 0))
    inputs: list[list[Any]] = []
    rng = np.random.default_rng(0)
    for run in range(1 + random_runs):
        arrays = []
        for n, shp, dt in zip(names, shapes, dtypes):
            if run == 0:
                a = np.zeros(shp, dtype=dt)
                for idx in np.ndindex(*shp):
                    a[idx] = float(input_value(n, tuple(int(i) for i in idx), seed))
            else:
                a = rng.integers(-3, 4, size=shp).astype(dt)
            arrays.append(a)
        inputs.append(arrays)

    try:  # compiled and run in a child process (a wrong result may corrupt memory)
        guarded = run_isolated(run_compiled_guarded, [before_pf.script(), after_pf.script()], inputs)
    except RuntimeError as exc:  # TVM's diagnostics run over many lines: the first and the reason
        lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
        why = [ln for ln in lines[1:] if "ill-formed" in ln or "Check failed" in ln][:1]
        return {"confirmed": None, "found": None, "note": " ".join(lines[:1] + why)}
    runs = [[arrays for arrays, _ in results] for results in guarded]
    written_outside: list[dict[str, Any]] = []
    for run, results in enumerate(guarded):
        if written_outside:
            break
        (_, out_a), (_, out_b) = results
        for n, cells_a, cells_b in zip(names, out_a, out_b):
            seen = {off for off, _ in cells_a}
            written_outside += [
                {"tensor": n, "offset": off, "value": val, "inputs": (
                    f"{INPUT_RULE}, seed {seed}" if run == 0 else
                    f"numpy.random.default_rng(0) integers in [-3, 3], draw {run}")}
                for off, val in cells_b if off not in seen]
    at_witness: tuple[Any, Any] | None = None
    found: dict[str, Any] | None = None
    outside = bool(tensor in names and element and (
        len(element) != len(shapes[names.index(tensor)])
        or any(not 0 <= e < n for e, n in zip(element, shapes[names.index(tensor)]))))
    for run, results in enumerate(runs):
        if run == 0 and tensor in names and element and not outside:
            k = names.index(tensor)
            at_witness = (results[0][k][element].item(), results[1][k][element].item())
        for n, x, y in zip(names, results[0], results[1]):
            diff = np.argwhere(~((x == y) | (np.isnan(x) & np.isnan(y))))
            if found is None and len(diff):
                el = tuple(int(i) for i in diff[0])
                found = {"tensor": n, "element": list(el), "original": x[el].item(), "after": y[el].item(),
                         "inputs": (f"{INPUT_RULE}, seed {seed}" if run == 0 else
                                    f"numpy.random.default_rng(0) integers in [-3, 3], draw {run}")}
    # a witness that is a read of memory nothing writes is not observable by running (TVM reads whatever
    # is there, or out of bounds): only the interpreter confirms it
    confirmed: bool | None = None if not tensor or outside else (
        at_witness is not None and at_witness[0] != at_witness[1])
    if outside and len(element) == len(shapes[names.index(tensor)]):
        # the element's row-major offset, as TVM flattens a buffer
        flat = sum(e * int(np.prod(shapes[names.index(tensor)][d + 1:])) for d, e in enumerate(element))
        if any(w["tensor"] == tensor and w["offset"] == flat for w in written_outside):
            confirmed = True
    out: dict[str, Any] = {"confirmed": confirmed, "found": found, "outside": written_outside}
    if outside:
        note = (f"{tensor}{list(element)} lies outside the buffer (shape {list(shapes[names.index(tensor)])}): "
                "an out-of-bounds write" + (", and TVM's compiled code of the transformed function writes that "
                                            "cell" if confirmed else ", not observable in the buffer"))
    elif at_witness is not None:
        out.update(original=at_witness[0], after=at_witness[1])
        note = (f"TVM-compiled code at {tensor}{list(element)} on the witness inputs: original "
                f"{at_witness[0]}, transformed {at_witness[1]}")
    else:
        note = "TVM-compiled code run on the witness inputs"
    if found is not None and not confirmed:
        note += (f"; it differs at {found['tensor']}{found['element']}: original {found['original']}, "
                 f"transformed {found['after']} ({found['inputs']})")
    elif found is None:
        note += f"; no difference on any buffer over {1 + random_runs} inputs"
    if written_outside:
        w = written_outside[0]
        cells = [x["offset"] for x in written_outside if x["tensor"] == w["tensor"]]
        size = int(np.prod(shapes[names.index(w["tensor"])]))
        where = ", ".join(f"{c - size} past its end" if c >= size else f"{-c} before its start" for c in cells[:4])
        note += (f"; the transformed function's compiled code writes outside buffer {w['tensor']} "
                 f"({len(cells)} element{'s' if len(cells) != 1 else ''}: {where}{', ...' if len(cells) > 4 else ''};"
                 f" {w['inputs']}), the original's does not")
    out["note"] = note
    return out


# ---------------------------------------------------------------------------
# A schedule's trace, step by step
# ---------------------------------------------------------------------------


def validate(schedule: Any, original: Any | None = None, *, timeout: float = 10.0,
             recheck_with_tvm: bool = True) -> list[StepValidation]:
    """Every recorded transforming step of ``schedule``'s trace, checked against the
    function before it: TVM's result computes every output of the function before
    the step (proved, refuted with the element and both values, or unknown).
    ``original`` is the function the schedule started from (a PrimFunc, IRModule or
    TVMScript); without it, the schedule's ``mod`` must still be that function (a
    schedule with steps needs ``original``). Lookups (``get_sblock``...) are
    replayed. For :data:`PRIMITIVES` the project's own answer is given too; for any
    other primitive (``split``, ``reorder``, ``fuse``, ``compute_at``,
    ``cache_read``, ``decompose_reduction``...) ``project`` is ``not asked``. A
    function before a step that the reader does not read stops the validation
    with an ``unknown`` step."""
    tvm = load_tvm()
    s_tir = tvm.s_tir
    if not isinstance(schedule, s_tir.Schedule):
        raise VerifiedIndexingError(f"validate() takes a tvm.s_tir.Schedule, got {type(schedule).__name__}")
    trace = schedule.trace
    if trace is None:
        raise VerifiedIndexingError("the schedule records no trace (create it with tvm.s_tir.Schedule(func))")
    insts = list(trace.insts)
    base = _prim_func(tvm, original if original is not None else schedule)
    if original is None and any(i.kind.name not in _READ_ONLY for i in insts):
        raise VerifiedIndexingError("validate(schedule) needs original=: the function the schedule started from")
    out: list[StepValidation] = []
    names: list[tuple[Any, str]] = []
    for n, inst in enumerate(insts):
        kind = inst.kind.name
        if kind in ("GetSBlock", "GetBlock") and inst.outputs and inst.attrs:
            names.append((inst.outputs[0], str(inst.attrs[0])))
        if kind in _READ_ONLY:
            continue
        prim = _KIND_TO_PRIMITIVE.get(kind)
        before_sch = s_tir.Schedule(base)
        s_tir.Trace(insts[:n], {}).apply_to_schedule(before_sch, remove_postproc=False)
        pf = _prim_func(tvm, before_sch)
        after_sch = s_tir.Schedule(base)
        s_tir.Trace(insts[: n + 1], {}).apply_to_schedule(after_sch, remove_postproc=False)
        after_pf = _prim_func(tvm, after_sch)
        blocks = tuple(next((nm for rv, nm in names if rv.same_as(x)), str(x)) for x in inst.inputs)
        before_text = pf.script()
        try:
            before = read_tvm_program(before_text, "<original>")
        except VerifiedIndexingError as exc:
            verdict = EquivalenceReport("unknown", f"the function before {kind} is not read: "
                                                   f"{str(exc).splitlines()[0]}")
            out.append(StepValidation(kind, blocks, "applied", "", before_text, after_pf.script(), verdict,
                                      {"status": "unknown", "reason": "not asked", "legal": False}))
            break
        if prim is None:  # any other primitive (split, reorder, compute_at, cache_read...): its result is
            # validated against the function before it the same way; the project has no answer of its own
            out.append(_validate_result(tvm, pf, after_pf, before, before_text, after_pf.script(), kind, blocks,
                                        {"status": "not asked", "reason": f"the project does not model {kind}",
                                         "legal": False}, timeout, None, recheck_with_tvm))
            continue
        project = project_answer(before, prim, blocks[-1], timeout)
        out.append(_validate_result(tvm, pf, after_pf, before, before_text, after_pf.script(), prim, blocks,
                                    project, timeout, None, recheck_with_tvm))
    return out


_READ_ONLY = {"GetSBlock", "GetBlock", "GetLoops", "GetChildBlocks", "GetProducers", "GetConsumers",
              "GetOutputBlocks", "EnterPostproc"}
_KIND_TO_PRIMITIVE = {"ComputeInline": "compute_inline", "ReverseComputeInline": "reverse_compute_inline",
                      "FuseReductionEpilogue": "fuse_reduction_epilogue"}
