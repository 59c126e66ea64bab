"""ComputeInline, ReverseComputeInline and epilogue fusion on the programs issue 23 (items 5, 6) and
issue 26 (item 8) name: every verdict checked against the plain interpreter (tests/cinn_interpreter.py)
or enumeration, never against the engine that produced it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from cinn_interpreter import run
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing.cli import main
from verified_indexing.legality.cinn_ir import Stmt, at_sizes, cond_holds, format_program, parse_program
from verified_indexing.legality.inline import compute_inline

ROOT = Path(__file__).resolve().parent.parent
CINN = ROOT / "examples" / "cinn"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, _ = capsys.readouterr()
    return code, out


def _outcome(p: Stmt, sizes: dict[str, int], inputs: set[str], tensor: str) -> object:
    """``tensor`` as the interpreter computes it at ``sizes``, or ``"unwritten"`` when the program reads an
    element nothing wrote."""
    try:
        return run(at_sizes(p, sizes), inputs).get(tensor)
    except KeyError:
        return "unwritten"


# ---------------------------------------------------------------------------
# issue 26 item 8: `inline --all` carries the condition of every conditional step
# ---------------------------------------------------------------------------


def test_inline_all_text_and_json_carry_the_condition(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(CINN / "symbolic_collision.txt")
    code, one = _cli(capsys, "inline", "--block", "B", path)
    assert code == 0 and one.splitlines()[0] == "inline B: inlined when N <= 1 and N >= 1"
    code, out = _cli(capsys, "inline", "--all", path)
    assert code == 0
    assert out.splitlines()[0] == "inline B: inlined when N <= 1 and N >= 1"  # was "inline B: inlined"
    code, out = _cli(capsys, "inline", "--all", "--json", path)
    data = json.loads(out)
    assert data["legal_when"] == "N <= 1 and N >= 1"
    assert data["steps"][0]["legal_when"] == "N <= 1 and N >= 1"
    # The oracle: the guarded result computes what the original computes exactly where the condition holds.
    original = parse_program(Path(path).read_text())
    result = parse_program(data["program"])
    guard = result.body[0]  # type: ignore[union-attr]
    for n in range(5):
        holds = cond_holds(guard.conds, [n])  # type: ignore[union-attr]
        same = _outcome(original, {"N": n}, {"A"}, "C") == _outcome(result, {"N": n}, {"A"}, "C")
        assert holds == (n == 1)
        if holds:
            assert same


# ---------------------------------------------------------------------------
# issue 23 item 5: ComputeInline of the middle block of a chain; a write *between* producer and consumer
# ---------------------------------------------------------------------------

_CHAIN = """ScheduleBlock(root)
{{
  {{
    serial for (i, 0, 8)
    {{
      ScheduleBlock(B)
      {{
        i0 = axis.bind(i)
        B[i0] = exp(A[i0])
      }}
    }}
    serial for (i, 0, 8)
    {{
      ScheduleBlock(C)
      {{
        i0 = axis.bind(i)
        C[i0] = (B[i0] * 2)
      }}
    }}
{writer}    serial for (i, 0, {e})
    {{
      ScheduleBlock(D)
      {{
        i0 = axis.bind(i)
        D[i0] = (C[i0] + 1)
      }}
    }}
  }}
}}"""

_WRITER = """    serial for (i, 0, {m})
    {{
      ScheduleBlock(W)
      {{
        i0 = axis.bind(i)
        B[{w}] = 5
      }}
    }}
"""


def test_middle_of_a_chain_is_inlined() -> None:
    p = parse_program(_CHAIN.format(writer="", e=8))
    rep = compute_inline(p, "C")  # was refused: "B read by C is written elsewhere"
    assert rep.status == "inlined", rep.reason
    assert rep.program is not None and "D[i0] = ((B[i0] * 2) + 1)" in format_program(rep.program)
    assert run(p, {"A"})["D"] == run(rep.program, {"A"})["D"]


@pytest.mark.parametrize(("m", "w", "e"), [(4, "i0 + 4", 4), (4, "i0 + 4", 8), (2, "7 - i0", 6), (3, "i0", 1),
                                           (1, "7", 7), (1, "7", 8)])
def test_a_write_between_producer_and_consumer(m: int, w: str, e: int) -> None:
    """W overwrites B[w] after C read it: inlining C into D is legal exactly when D reads no element of C
    computed from an overwritten element of B (enumerated), else refused with the three iterations."""
    p = parse_program(_CHAIN.format(writer=_WRITER.format(m=m, w=w), e=e))
    overwritten = {eval(w, {}, {"i0": i}) for i in range(m)}
    harmful = [i for i in range(e) if i in overwritten]  # D reads C[i], computed from B[i]
    rep = compute_inline(p, "C")
    naive = parse_program(format_program(p).replace("D[i0] = (C[i0] + 1)", "D[i0] = ((B[i0] * 2) + 1)")
                          .replace("C[i0] = (B[i0] * 2)", "C[i0] = 0"))
    if not harmful:
        assert rep.status == "inlined", rep.reason
        assert rep.program is not None
        assert run(p, {"A"})["D"] == run(rep.program, {"A"})["D"] == run(naive, {"A"})["D"]
        return
    assert rep.status == "refused", rep.reason
    wit = rep.checks[-1].witness
    assert wit is not None
    (t,), (s,), (x,) = (tuple(wit[k].values()) for k in ("consumer_iteration", "producer_iteration",
                                                          "writer_iteration"))
    assert t == s and t in harmful and eval(w, {}, {"i0": x}) == s == wit["element"][0]
    # the interpreter: the program the inline would produce computes another D at the witness
    assert run(p, {"A"})["D"][(t,)] != run(naive, {"A"})["D"][(t,)]


@pytest.mark.parametrize(("write", "legal"), [("A[i0]", True), ("A[(7 - i0)]", False),
                                              ("A[(i0 - 1)]", True), ("A[(i0 + 1)]", False)])
def test_a_consumer_that_writes_what_the_producer_reads(write: str, legal: bool) -> None:
    """C overwrites A in place: the inlined C reads A at each iteration, legal exactly when no earlier
    iteration of C wrote the element a later one reads (was refused outright: "A is written elsewhere")."""
    text = CHAIN2.format(write=write)
    p = parse_program(text)
    rep = compute_inline(p, "B")
    naive = parse_program(text.replace("= B[i0]", "= (A[i0] * 2)"))
    agree = run(p, {"X"}).get("A") == run(naive, {"X"}).get("A")
    assert agree == legal
    if legal:
        assert rep.status == "inlined", rep.reason
        assert rep.program is not None and run(rep.program, {"X"})["A"] == run(p, {"X"})["A"]
    else:
        assert rep.status == "refused", rep.reason
        wit = rep.checks[-1].witness
        assert wit is not None
        (t,), (x,) = wit["consumer_iteration"].values(), wit["writer_iteration"].values()
        assert x < t and eval(write[2:-1].strip("()"), {}, {"i0": x}) == t == wit["element"][0]


CHAIN2 = """ScheduleBlock(root)
{{
  serial for (i, 0, 9)
  {{
    ScheduleBlock(I)
    {{
      i0 = axis.bind(i)
      A[i0] = exp(X[i0])
    }}
  }}
  serial for (i, 0, 8)
  {{
    ScheduleBlock(B)
    {{
      i0 = axis.bind(i)
      B[i0] = (A[i0] * 2)
    }}
  }}
  serial for (i, 0, 8)
  {{
    ScheduleBlock(C)
    {{
      i0 = axis.bind(i)
      {write} = B[i0]
    }}
  }}
}}"""


# ---------------------------------------------------------------------------
# issue 23 item 5: a dead producer that is a T.alloc_buffer is removed, not refused as "a program output"
# ---------------------------------------------------------------------------

_DEAD = '''@T.prim_func
def main(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + 1.0
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = A[vi] * 2.0
'''


def test_a_dead_alloc_buffer_producer_is_removed() -> None:
    from verified_indexing.legality.tvmscript import parse_tvmscript

    p = parse_tvmscript(_DEAD, "<dead>")
    rep = compute_inline(p, "B")
    assert rep.status == "inlined", rep.reason  # was refused: "B is a program output"
    assert rep.program is not None and "ScheduleBlock(B)" not in format_program(rep.program)
    assert run(rep.program, {"A"}) == {"D": run(p, {"A"})["D"]}  # the interpreter: the same D, no B
    # A parameter buffer nothing reads is an output the caller sees: it stays.
    kept = _DEAD.replace('A: T.Buffer((8,), "float32"), D', 'A: T.Buffer((8,), "float32"), B: T.Buffer((8,)), D')
    q = parse_tvmscript(kept.replace("    B = T.alloc_buffer((8,))\n", ""), "<kept>")
    rep = compute_inline(q, "B")
    assert rep.status == "refused" and "parameter of the function" in rep.reason


_DEAD_CHAIN = '''@T.prim_func
def main(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    E = T.alloc_buffer((8,))
    F = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + 1.0
    for i in range(8):
        with T.block("E"):
            vi = T.axis.spatial(8, i)
            E[vi] = B[7 - vi] * 3.0
    for i in range(8):
        with T.block("F"):
            vi = T.axis.spatial(8, i)
            F[vi] = A[vi] - 5.0
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = A[vi] * 2.0 + F[vi]
'''


def test_inline_all_removes_dead_alloc_buffer_producers(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """inline --all (was: the dead chain B -> E kept: a tensor no block reads counted as an output) removes
    it; F, read by D, is inlined. Oracle: the TVMScript interpreter on the input and on the printed result:
    the same D, and no other buffer written."""
    from tvmscript_interpreter import run_tvmscript

    from verified_indexing.legality.inline import inline_all
    from verified_indexing.legality.tvmscript import format_tvmscript, parse_tvmscript

    p = parse_tvmscript(_DEAD_CHAIN, "<dead chain>")
    final, reports = inline_all(p)
    assert sorted(r.block for r in reports if r.status == "inlined") == ["B", "E", "F"]
    after = run_tvmscript(format_tvmscript(final, _DEAD_CHAIN))
    assert set(after) == {"D"} and after["D"] == run_tvmscript(_DEAD_CHAIN)["D"]
    f = tmp_path / "dead.py"
    f.write_text(_DEAD_CHAIN)
    code, out = _cli(capsys, "inline", str(f), "--all")
    assert code == 0 and 'T.block("E")' not in out and 'T.block("B")' not in out and "alloc_buffer" not in out




_PARAM_CHAIN = '''@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + 1.0
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = B[vi] * 2.0
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = C[vi] - 3.0
'''


def test_a_rewritten_program_keeps_the_buffers_the_caller_sees() -> None:
    """compute_inline's result lost the function's parameters (the root block was rebuilt without them): a
    second compute_inline on it, with the default outputs, inlined the parameter C away (the caller's C no
    longer written). Now refused, as on the input. Oracle: the TVMScript interpreter writes C in the input."""
    from tvmscript_interpreter import run_tvmscript

    from verified_indexing.legality.cinn_ir import program_params
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue
    from verified_indexing.legality.reverse_inline import reverse_compute_inline
    from verified_indexing.legality.tvmscript import parse_tvmscript

    assert set(run_tvmscript(_PARAM_CHAIN)) >= {"C", "D"}  # the caller sees C written
    p = parse_tvmscript(_PARAM_CHAIN, "<params>")
    first = compute_inline(p, "B")
    assert first.status == "inlined" and first.program is not None
    assert program_params(first.program) == program_params(p) == ("A", "C", "D")
    second = compute_inline(first.program, "C")
    assert second.status == "refused" and "parameter of the function" in second.reason
    rev = reverse_compute_inline(p, "C")
    if rev.program is not None:
        assert program_params(rev.program) == ("A", "C", "D")
    mm = parse_tvmscript((ROOT / "tests" / "tvm_corpus" / "te_matmul_bias_relu.tvm").read_text())
    fused = fuse_reduction_epilogue(mm, "bias_add")
    assert fused.program is not None and program_params(fused.program) == program_params(mm)

# ---------------------------------------------------------------------------
# issue 23 item 5: a loop that never runs is a program like any other (was exit 3: "reads B with 0 indices")
# ---------------------------------------------------------------------------

_EMPTY = '''@T.prim_func
def main(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in {pgrid}:
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            B[vi] = A[vi] + 1.0
    for i, j in {cgrid}:
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = B[vi] * 2.0
'''

_EMPTY_MM = '''@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), D: T.Buffer((4, 4), "float32")):
    C = T.alloc_buffer((4, 4))
    for i, j, k in T.grid({ri}, 4, {rk}):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid({ei}, 4):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))
'''


def _judge_empty(p: Stmt, rep_status: str, program: Stmt | None, witness: dict | None, inputs: set[str],  # type: ignore[type-arg]
                 inner: str) -> None:
    """The interpreter decides: an accepted rewrite computes the same D; a refusal's witness either reads an
    element the original never writes (the original itself fails there) or names an element of the inner
    tensor the original writes although it never writes D."""
    try:
        original = run(p, inputs)
    except KeyError:
        original = None
    if rep_status in ("inlined", "fused"):
        assert original is not None and program is not None
        assert run(program, inputs).get("D") == original.get("D")
        return
    assert rep_status in ("refused", "illegal") and witness is not None
    if "which nothing writes" in witness["note"]:
        assert original is None
    else:
        assert original is not None and "D" not in original and tuple(witness["element"]) in original[inner]


@pytest.mark.parametrize("pgrid", ["range(8)", "range(0)", "T.grid(0)"])
@pytest.mark.parametrize("cgrid", ["T.grid(8, 1)", "T.grid(0, 4)", "T.grid(8, 0)"])
def test_loops_that_never_run_inline_and_reverse_inline(pgrid: str, cgrid: str) -> None:
    from verified_indexing.legality.reverse_inline import reverse_compute_inline
    from verified_indexing.legality.tvmscript import parse_tvmscript

    p = parse_tvmscript(_EMPTY.format(pgrid=pgrid, cgrid=cgrid), "<empty>")
    rep = compute_inline(p, "B")
    _judge_empty(p, rep.status, rep.program, rep.checks[-1].witness, {"A"}, "B")
    rev = reverse_compute_inline(p, "D")
    _judge_empty(p, rev.status, rev.program, rev.checks[-1].witness, {"A"}, "B")


@pytest.mark.parametrize(("ri", "rk", "ei"), [(0, 4, 4), (0, 4, 0), (4, 0, 4), (4, 0, 0), (4, 4, 0), (0, 0, 0)])
def test_loops_that_never_run_fuse_epilogue(ri: int, rk: int, ei: int) -> None:
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue
    from verified_indexing.legality.tvmscript import parse_tvmscript

    p = parse_tvmscript(_EMPTY_MM.format(ri=ri, rk=rk, ei=ei), "<empty>")
    rep = fuse_reduction_epilogue(p, "D")
    _judge_empty(p, rep.status, rep.program, rep.checks[-1].witness, {"A", "B"}, "C")


# ---------------------------------------------------------------------------
# issue 23 item 5: ReverseComputeInline under T.where, of a predicated producer, into a reduction, in a shared nest
# ---------------------------------------------------------------------------

_REVERSE = {
    "r1": '''@T.prim_func
def main(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
    C = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            C[vi] = A[vi] + 1.0
    for j in range(8):
        with T.block("D"):
            vj = T.axis.spatial(8, j)
            T.where(j % 2 == 0)
            D[vj] = C[vj // 2] * 2.0
''',
    "r2": '''@T.prim_func
def main(A: T.Buffer((8,), "float32"), D: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8,))
    for i in range(10):
        with T.block("B"):
            vi = T.axis.spatial(8, i)
            T.where(i < 8)
            B[vi] = A[vi] + 1.0
    for i in range(8):
        with T.block("D"):
            vi = T.axis.spatial(8, i)
            D[vi] = B[vi] * 2.0
''',
    "r3": '''@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), D: T.Buffer((8, 4), "float32")):
    B = T.alloc_buffer((8, 4))
    for i in range(8):
        for j in range(4):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                B[vi, vj] = A[vi, vj] + 1.0
        for j in range(4):
            with T.block("D"):
                vi, vj = T.axis.remap("SS", [i, j])
                D[vi, vj] = B[vi, 3 - vj] * 2.0
''',
    "reduction": '''@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), D: T.Buffer((4, 4), "float32")):
    C = T.alloc_buffer((4, 4))
    for i, j, k in T.grid(4, 4, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(4, 4):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))
''',
}


@pytest.mark.parametrize(("name", "into", "inputs"), [("r1", "C", {"A"}), ("r2", "B", {"A"}), ("r3", "B", {"A"}),
                                                      ("reduction", "C", {"A", "B"})])
def test_reverse_inline_programs_tvm_accepts(name: str, into: str, inputs: set[str]) -> None:
    """r1: D[j] = C[j floordiv 2] * 2 under j mod 2 == 0 (the moved store is guarded); r2: a predicated
    producer (was refused "must hold one store"); r3: producer and consumer in one loop nest (was unknown);
    reduction: into a reduction producer (was refused). The interpreter checks every result."""
    from verified_indexing.legality.reverse_inline import reverse_compute_inline
    from verified_indexing.legality.tvmscript import parse_tvmscript

    p = parse_tvmscript(_REVERSE[name], f"<{name}>")
    rep = reverse_compute_inline(p, "D")
    assert rep.status == "inlined", rep.reason
    assert rep.consumers == (into,) and rep.program is not None
    assert "ScheduleBlock(D)" not in format_program(rep.program).replace("ScheduleBlock(D__", "") or name == "reduction"
    assert run(rep.program, inputs)["D"] == run(p, inputs)["D"]


def test_reverse_inline_in_a_shared_nest_across_iterations_is_unknown() -> None:
    """D reads B[i - 1, j]: written in the previous iteration of the shared loop i; moving D's store there
    is not modelled (unknown, exit 2), never a false refusal."""
    from verified_indexing.legality.reverse_inline import reverse_compute_inline
    from verified_indexing.legality.tvmscript import parse_tvmscript

    text = _REVERSE["r3"].replace("D[vi, vj] = B[vi, 3 - vj] * 2.0", "T.where(1 <= i)\n                "
                                  "D[vi, vj] = B[vi - 1, vj] * 2.0")
    rep = reverse_compute_inline(parse_tvmscript(text, "<shifted>"), "D")
    assert rep.status == "unknown" and rep.exit_code == 2 and "not modelled" in rep.reason


_TVM_RELU_FUSED = '''@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), D: T.Buffer((4, 4), "float32")):
    for i, j, k in T.grid(4, 4, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                D[vi, vj] = T.float32(0)
            D[vi, vj] = T.max(D[vi, vj] + A[vi, vk] * B[vk, vj], T.float32(0))
'''


def test_tvms_relu_at_every_reduction_step_is_refuted_with_the_element_and_both_values() -> None:
    """TVM's fuse_reduction_epilogue of a ReLU applies it at every reduction step. The witness is recomputed
    here by hand from the documented input rule: max(sum, 0) against the step-wise clamped sum."""
    import zlib

    from verified_indexing.legality.epilogue import fuse_reduction_epilogue
    from verified_indexing.legality.tvmscript import parse_tvmscript

    p = parse_tvmscript(_EMPTY_MM.format(ri=4, rk=4, ei=4), "<matmul relu>")
    rep = fuse_reduction_epilogue(p, "D", fused=parse_tvmscript(_TVM_RELU_FUSED, "<tvm>"))
    assert rep.status == "illegal" and rep.exit_code == 1
    w = rep.checks[-1].witness
    assert w is not None and w["sizes"] == {"i": 4, "j": 4, "k": 4}

    def x(name: str, idx: tuple[int, int]) -> int:
        return zlib.crc32(f"{name}{list(idx)}{w['seed']}".encode()) % 7 - 3

    i, j = w["element"]
    total, stepwise = 0, 0
    for k in range(4):
        total += x("A", (i, k)) * x("B", (k, j))
        stepwise = max(stepwise + x("A", (i, k)) * x("B", (k, j)), 0)
    assert (str(max(total, 0)), str(stepwise)) == (w["original"], w["fused"]) and max(total, 0) != stepwise


def test_an_epilogue_of_two_stores_is_unknown_not_refused() -> None:
    """An epilogue shape outside the model is unknown (exit 2) naming it, never 'illegal' with 'must hold one
    store' (issue 23 item 6)."""
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue

    text = (CINN / "matmul_relu.txt").read_text()
    line = next(x for x in text.splitlines() if x.strip().startswith("D[") and "C[" in x)
    p = parse_program(text.replace(line, line + "\n" + line.replace("D[", "E[", 1)))
    rep = fuse_reduction_epilogue(p, "D")
    assert rep.status == "unknown" and rep.exit_code == 2 and "not modelled" in rep.reason and "2 store(s)" in rep.reason


@pytest.mark.parametrize(("read", "legal"), [("B[0]", True), ("B[1]", False)])
def test_a_block_outside_any_loop_is_inlined(read: str, legal: bool) -> None:
    """Was refused with 'not inside a loop nest (nothing to invert)', a false reason: a scalar store has a
    (constant) inverse."""
    text = ("ScheduleBlock(root)\n{\n  ScheduleBlock(B)\n  {\n    B[0] = exp(A[0])\n  }\n  serial for (i, 0, 4)\n"
            "  {\n    ScheduleBlock(C)\n    {\n      i0 = axis.bind(i)\n      C[i0] = (" + read + " * 2)\n    }\n  }\n}")
    p = parse_program(text)
    rep = compute_inline(p, "B")
    if legal:
        assert rep.status == "inlined" and rep.program is not None, rep.reason
        assert run(rep.program, {"A"})["C"] == run(p, {"A"})["C"]
    else:
        assert rep.status == "refused"
        with pytest.raises(KeyError):
            run(p, {"A"})  # the interpreter: C reads B[1], which nothing writes


# ---------------------------------------------------------------------------
# issue 23 item 5: fuse-epilogue with a symbolic reduction length (K = 0 included), clipping, casts
# ---------------------------------------------------------------------------

_SYM_MM = '''@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8, 4), "float32"), bias: T.Buffer((4,), "float32"),
         D: T.Buffer((4, 4), "float32")):
    K = T.int32()
    C = T.alloc_buffer((4, 4))
    for i, j, k in T.grid(4, 4, K):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i, j in T.grid(4, 4):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = EPILOGUE
'''


@pytest.mark.parametrize(("epilogue", "form"), [
    ("T.max(C[vi, vj], T.float32(0))", "last"),
    ("C[vi, vj] + bias[vj]", "fold"),
    ("T.min(T.max(C[vi, vj], T.float32(-1)), T.float32(2))", "last"),
    ("T.Cast(\"float16\", T.max(C[vi, vj] * T.float32(2), T.float32(0)))", "last"),
])
def test_symbolic_reduction_length_fuses_for_every_k(epilogue: str, form: str) -> None:
    """Was unknown ('symbolic sizes are not modelled'). The fused program computes D at every K the
    interpreter tries, K = 0 included (no last iteration: the init applies the epilogue)."""
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue
    from verified_indexing.legality.tvmscript import parse_tvmscript

    p = parse_tvmscript(_SYM_MM.replace("EPILOGUE", epilogue), "<symbolic K>")
    rep = fuse_reduction_epilogue(p, "D")
    assert rep.status == "fused" and rep.form == form, rep.reason
    assert rep.program is not None
    for k in range(5):  # the fold form reassociates the sum: equal up to float rounding
        a = _outcome(rep.program, {"K": k}, {"A", "B", "bias"}, "D")
        b = _outcome(p, {"K": k}, {"A", "B", "bias"}, "D")
        assert isinstance(a, dict) and isinstance(b, dict) and a.keys() == b.keys(), k
        assert all(math.isclose(a[x], b[x], rel_tol=1e-9, abs_tol=1e-9) for x in a), k


def test_a_fused_form_wrong_only_at_k_0_is_refuted_at_k_0() -> None:
    """The last-iteration form without the K <= 0 case never applies the ReLU when K = 0: refuted with
    K = 0 in the witness; the interpreter agrees."""
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue
    from verified_indexing.legality.tvmscript import parse_tvmscript

    p = parse_tvmscript(_SYM_MM.replace("EPILOGUE", "T.max(C[vi, vj], T.float32(0)) + T.float32(1)"), "<p>")
    good = fuse_reduction_epilogue(p, "D")
    assert good.status == "fused" and good.program is not None
    text = format_program(good.program)
    assert "select((K <= 0), " in text
    wrong = parse_program(text.replace("select((K <= 0), (max(0, 0) + 1), 0)", "0"))
    assert wrong != good.program
    rep = fuse_reduction_epilogue(p, "D", fused=wrong)
    assert rep.status == "illegal", rep.reason
    w = rep.checks[-1].witness
    assert w is not None and w["sizes"]["K"] == 0
    assert _outcome(wrong, {"K": 0}, {"A", "B"}, "D") != _outcome(p, {"K": 0}, {"A", "B"}, "D")
    for k in (1, 2, 3):
        assert _outcome(wrong, {"K": k}, {"A", "B"}, "D") == _outcome(p, {"K": k}, {"A", "B"}, "D")


_PRED_MM = '''@T.prim_func
def main(A: T.Buffer((6, 4), "float32"), B: T.Buffer((4, 4), "float32"), D: T.Buffer((6, 4), "float32")):
    C = T.alloc_buffer((6, 4))
    for io, ii, j, k in T.grid(2, 4, 4, 4):
        with T.block("C"):
            vi = T.axis.spatial(6, io * 4 + ii)
            vj = T.axis.spatial(4, j)
            vk = T.axis.reduce(4, k)
            T.where(io * 4 + ii < 6)
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for io, ii, j in T.grid(2, 4, 4):
        with T.block("D"):
            vi = T.axis.spatial(6, io * 4 + ii)
            vj = T.axis.spatial(4, j)
            T.where(io * 4 + ii < 6)
            D[vi, vj] = T.max(C[vi, vj], T.float32(0))
'''


@pytest.mark.parametrize(("epilogue_where", "fused"), [("io * 4 + ii < 6", True), ("io * 4 + ii < 5", True)])
def test_predicated_reduction_and_epilogue(epilogue_where: str, fused: bool) -> None:
    """A split loop with a tail (T.where(io * 4 + ii < 6)) around the reduction and the epilogue: fused under
    the reduction's predicate (was unknown: 'must hold one store'); an epilogue reading fewer rows than the
    reduction writes: the fused stores run under the epilogue's rows too (was refused)."""
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue
    from verified_indexing.legality.tvmscript import parse_tvmscript

    text = _PRED_MM.replace("            T.where(io * 4 + ii < 6)\n            D[", f"            T.where({epilogue_where})\n"
                            "            D[")
    p = parse_tvmscript(text, "<where>")
    rep = fuse_reduction_epilogue(p, "D")
    original = run(p, {"A", "B"})
    if fused:
        assert rep.status == "fused", rep.reason
        assert rep.program is not None and run(rep.program, {"A", "B"})["D"] == original["D"]
        # the fused form without the predicate writes rows 6 and 7: refuted
        bare = parse_program(format_program(rep.program).replace("if ((io * 4 + ii < 6))", "if ((0 <= io))")
                             .replace(f"if (({epilogue_where}))", "if ((0 <= io))"))
        wrong = fuse_reduction_epilogue(p, "D", fused=bare)
        assert wrong.status in ("illegal", "unknown")
        assert run(bare, {"A", "B"})["D"] != original["D"]
        return
    assert rep.status == "illegal", rep.reason
    w = rep.checks[-1].witness
    assert w is not None
    row = w["element"][0]
    assert (row, w["element"][1]) in original["C"] and all(key[0] != row for key in original["D"])


_CLIP_WRONG = '''@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), D: T.Buffer((4, 4), "float32"), lo: T.float32, hi: T.float32):
    for i, j, k in T.grid(4, 4, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                D[vi, vj] = T.float32(0)
            D[vi, vj] = T.min(T.max(D[vi, vj] + A[vi, vk] * B[vk, vj], lo), hi)
'''


def _with_scalars(p: Stmt, values: dict[str, float]) -> Stmt:
    """The program with each scalar parameter (a nullary call ``lo()``) replaced by a number, for the plain
    interpreter."""
    text = format_program(p)
    for name, v in values.items():
        text = text.replace(f"{name}()", repr(v))
    return parse_program(text)


def test_clipping_epilogue_with_scalar_parameters() -> None:
    """D = min(max(C, lo), hi) with scalar parameters: fused on the last iteration (checked by the interpreter
    at several lo, hi); TVM's clipping at every reduction step is refuted, the witness recomputed by hand."""
    import zlib

    from verified_indexing.legality.epilogue import fuse_reduction_epilogue
    from verified_indexing.legality.tvmscript import parse_tvmscript

    text = _EMPTY_MM.format(ri=4, rk=4, ei=4).replace("T.max(C[vi, vj], T.float32(0))", "T.min(T.max(C[vi, vj], lo), hi)")
    text = text.replace('D: T.Buffer((4, 4), "float32"))', 'D: T.Buffer((4, 4), "float32"), lo: T.float32, hi: T.float32)')
    p = parse_tvmscript(text, "<clip>")
    rep = fuse_reduction_epilogue(p, "D")
    assert rep.status == "fused" and rep.form == "last" and rep.program is not None, rep.reason
    for lo, hi in ((-1.0, 2.0), (0.0, 0.5), (-3.0, -1.0), (1.0, -1.0)):
        scal = {"lo": lo, "hi": hi}
        assert run(_with_scalars(rep.program, scal), {"A", "B"})["D"] == run(_with_scalars(p, scal), {"A", "B"})["D"]
    bad = fuse_reduction_epilogue(p, "D", fused=parse_tvmscript(_CLIP_WRONG, "<tvm clip>"))
    assert bad.status == "illegal", bad.reason
    w = bad.checks[-1].witness
    assert w is not None

    def x(name: str, idx: tuple[int, ...]) -> int:
        return zlib.crc32(f"{name}{list(idx)}{w['seed']}".encode()) % 7 - 3

    i, j = w["element"]
    lo_v, hi_v = x("lo", ()), x("hi", ())
    total, stepwise = 0, 0
    for k in range(4):
        total += x("A", (i, k)) * x("B", (k, j))
        stepwise = min(max(stepwise + x("A", (i, k)) * x("B", (k, j)), lo_v), hi_v)
    assert (str(min(max(total, lo_v), hi_v)), str(stepwise)) == (w["original"], w["fused"])


# ---------------------------------------------------------------------------
# issue 23 item 6: "written between" is decided on the elements, not on the tensor's name
# ---------------------------------------------------------------------------

_BETWEEN = '''@T.prim_func
def main(A: T.Buffer((4, 4), "float32"), B: T.Buffer((4, 4), "float32"), P: T.Buffer((4,), "float32"),
         D: T.Buffer((4, 4), "float32")):
    C = T.alloc_buffer((4, 4))
    X = T.alloc_buffer((4,))
    for i in range(4):
        with T.block("I"):
            vi = T.axis.spatial(4, i)
            X[vi] = P[vi] * 2.0
    for i, j, k in T.grid(4, 4, 4):
        with T.block("C"):
            vi, vj, vk = T.axis.remap("SSR", [i, j, k])
            with T.init():
                C[vi, vj] = T.float32(0)
            C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
    for i in range(M):
        with T.block("W"):
            vi = T.axis.spatial(4, i)
            X[WIDX] = T.float32(5)
    for i, j in T.grid(4, 4):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            D[vi, vj] = T.max(C[vi, vj] + X[RIDX], T.float32(0))
'''


@pytest.mark.parametrize(("m", "w", "r"), [(2, "vi + 2", "vj // 2"), (1, "3", "vj // 2"), (2, "vi", "vj"),
                                           (1, "3", "3 - vi")])
def test_fuse_epilogue_with_a_write_between(m: int, w: str, r: str) -> None:
    """W writes X after the reduction starts and before the epilogue, which reads X: fusing is legal exactly
    when W writes no element the epilogue reads (enumerated); was refused whenever any block wrote X there.
    A refusal's witness is checked by the interpreter: the fused program computes another D."""
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue
    from verified_indexing.legality.tvmscript import parse_tvmscript

    text = _BETWEEN.replace("M", str(m)).replace("WIDX", w).replace("RIDX", r)
    p = parse_tvmscript(text, "<between>")
    written = {eval(w, {}, {"vi": i}) for i in range(m)}
    read = {eval(r, {}, {"vi": i, "vj": j}) for i in range(4) for j in range(4)}
    rep = fuse_reduction_epilogue(p, "D")
    inputs = {"A", "B", "P"}
    if not written & read:
        assert rep.status == "fused", rep.reason
        assert rep.program is not None and run(rep.program, inputs)["D"] == run(p, inputs)["D"]
        return
    assert rep.status == "illegal", rep.reason
    wit = rep.checks[-1].witness
    assert wit is not None and wit["element"][0] in written & read
    # the interpreter: the epilogue run inside the reduction (before W) computes another D
    moved = text.replace(f"X[{w}] = T.float32(5)", f"Q[{w}] = T.float32(5)")
    assert moved != text
    q = parse_tvmscript(moved, "<W writes elsewhere>")
    assert run(q, inputs)["D"] != run(p, inputs)["D"]


# ---------------------------------------------------------------------------
# Random programs: empty loops, predicates, a writer in between; every accepted rewrite against the interpreter
# ---------------------------------------------------------------------------

_R_IDX = ["i0", "i0 + 1", "i0 * 2", "{n} - 1 - i0", "i0 floordiv 2", "i0 mod 3", "3"]


def _r_block(name: str, ext: int, store: str, value: str, pred: str) -> str:
    body = f"{store} = {value}"
    if pred:
        body = f"if ({pred})\n      {{\n        {body}\n      }}"
    return (f"  serial for (i, 0, {ext})\n  {{\n    ScheduleBlock({name})\n    {{\n      i0 = axis.bind(i)\n"
            f"      {body}\n    }}\n  }}\n")


@settings(max_examples=25, deadline=None)
@given(st.sampled_from([0, 1, 3, 4, 6]), st.sampled_from([0, 1, 3, 4, 6]), st.sampled_from(_R_IDX),
       st.sampled_from(_R_IDX), st.sampled_from(["", "i0 < 3", "i0 >= 1"]), st.sampled_from(["", "i0 < 2"]),
       st.sampled_from([None, (0, "i0"), (2, "i0 + 5"), (4, "7 - i0")]))
def test_random_programs_inline_and_reverse_inline_agree_with_the_interpreter(
    n1: int, n2: int, store: str, read: str, pred1: str, pred2: str, writer: tuple[int, str] | None
) -> None:
    from verified_indexing.errors import VerifiedIndexingError
    from verified_indexing.legality.reverse_inline import reverse_compute_inline

    mid = "" if writer is None else _r_block("W", writer[0], f"A[{writer[1]}]", "7", "")
    text = ("ScheduleBlock(root)\n{\n" + _r_block("I", 8, "A[i0]", "exp(P[i0])", "")
            + _r_block("B", n1, f"B[{store.format(n=n1)}]", "exp(A[i0])", pred1) + mid
            + _r_block("D", n2, "D[i0]", f"(B[{read.format(n=n2)}] * A[i0])", pred2) + "}")
    p = parse_program(text)
    original = _outcome(p, {}, {"P"}, "D")
    for which in ("inline", "reverse-inline"):
        try:
            rep = compute_inline(p, "B") if which == "inline" else reverse_compute_inline(p, "D")
        except VerifiedIndexingError:
            continue  # a positioned, reported error: never a traceback
        if rep.status == "inlined":
            assert original != "unwritten" and rep.program is not None, text
            assert _outcome(rep.program, {}, {"P"}, "D") == original, text
        elif rep.status == "refused" and original == "unwritten":
            pass  # the original itself reads an element nothing writes
        elif rep.status == "refused":
            assert rep.checks[-1].status == "refuted"


def test_reverse_inline_into_a_predicated_reduction() -> None:
    """A split loop's tail around the reduction: reverse-inline hands the consumer to epilogue fusion (was
    unknown: 'C is written by several blocks' / not a recognized reduction). The interpreter checks it."""
    from verified_indexing.legality.reverse_inline import reverse_compute_inline
    from verified_indexing.legality.tvmscript import parse_tvmscript

    p = parse_tvmscript(_PRED_MM, "<where>")
    rep = reverse_compute_inline(p, "D")
    assert rep.status == "inlined" and rep.consumers == ("C",), rep.reason
    assert rep.program is not None and run(rep.program, {"A", "B"})["D"] == run(p, {"A", "B"})["D"]


def test_a_given_fused_program_with_a_wrong_predicate_is_never_proven() -> None:
    """Too large to evaluate (the proof stands alone): a given fused program whose predicate drops a row the
    epilogue reads, or keeps one it does not, is not 'fused'; the exact one is. Enumerated: rows < 3 are read."""
    from verified_indexing.legality.epilogue import EVALUATION_LIMIT, evaluation_size, fuse_reduction_epilogue
    from verified_indexing.legality.tvmscript import parse_tvmscript

    text = (_EMPTY_MM.format(ri=64, rk=8, ei=3).replace("(4, 4)", "(64, 64)")
            .replace("T.grid(64, 4, 8)", "T.grid(64, 64, 8)").replace("T.grid(3, 4)", "T.grid(3, 64)"))
    p = parse_tvmscript(text, "<big>")
    rep = fuse_reduction_epilogue(p, "D")
    assert rep.status == "fused" and rep.program is not None, rep.reason
    assert evaluation_size(p) > EVALUATION_LIMIT  # no evaluation: the verdicts below are the proof's alone
    good = format_program(rep.program)
    assert good.count("if ((i <= 2))") == 2
    for wrong in ("if ((i <= 1))", "if ((i <= 3))"):
        given = parse_program(good.replace("if ((i <= 2))", wrong))
        assert fuse_reduction_epilogue(p, "D", fused=given).status == "unknown"
    assert fuse_reduction_epilogue(p, "D", fused=parse_program(good)).status == "fused"


def test_sizes_at_which_the_original_is_undefined_are_not_compared() -> None:
    """The epilogue reads X[0], written only when N >= 1: at N = 0 the original reads an unwritten element
    (undefined there). The evaluation compares the other sizes (was: exit 3, 'the original program reads an
    unwritten element'); the interpreter agrees at N = 1..3 and fails at N = 0 for both programs."""
    from verified_indexing.legality.epilogue import fuse_reduction_epilogue
    from verified_indexing.legality.tvmscript import parse_tvmscript

    text = _EMPTY_MM.format(ri=4, rk=4, ei=4).replace("    C = T.alloc_buffer((4, 4))\n", (
        "    N = T.int32()\n    C = T.alloc_buffer((4, 4))\n    X = T.alloc_buffer((4,))\n    for i in range(N):\n"
        "        with T.block(\"I\"):\n            vi = T.axis.spatial(4, i)\n            X[vi] = A[vi, 0]\n"))
    text = text.replace("T.max(C[vi, vj], T.float32(0))", "T.max(C[vi, vj], X[0])")
    p = parse_tvmscript(text, "<undefined at N = 0>")
    rep = fuse_reduction_epilogue(p, "D")
    assert rep.status == "fused" and rep.program is not None, rep.reason
    for n in (1, 2, 3):
        assert _outcome(rep.program, {"N": n}, {"A", "B"}, "D") == _outcome(p, {"N": n}, {"A", "B"}, "D")
    assert _outcome(p, {"N": 0}, {"A", "B"}, "D") == _outcome(rep.program, {"N": 0}, {"A", "B"}, "D") == "unwritten"
