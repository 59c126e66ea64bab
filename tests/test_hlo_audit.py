"""``audit``: XLA's printed maps (with their runtime-variable bindings) proved or
refuted against our analysis. Planted errors (a wrong rt binding, a changed range
of an unused range variable, a wrong result) are refuted, each witness checked
against what the program actually does (numpy); the correct printout is proved."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest
from hlo_oracle import run

from verified_indexing.cli import main
from verified_indexing.errors import ParseError
from verified_indexing.hlo.audit import audit, parse_claims
from verified_indexing.hlo.parser import parse_module

HERE = Path(__file__).resolve().parent / "hlo_corpus" / "audit"
MODULE = parse_module((HERE / "module.hlo").read_text(), "module.hlo")
CLAIMS = (HERE / "claims.txt").read_text()


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def _values(result_values: tuple[tuple[str, int], ...]) -> dict[str, int]:
    return dict(result_values)


def test_the_correct_printout_is_proved() -> None:
    claims = parse_claims(CLAIMS, "claims.txt")
    assert [c.operand for c in claims] == [0, 1, 0, 0]
    assert claims[0].bindings[0].instruction == "b0" and claims[0].bindings[0].map.num_results == 0
    results = audit(MODULE, claims)
    assert [r.status for r in results] == ["proved"] * 4
    assert any("rt0 = p1: the binding is proved" in text for _, text in results[0].steps)
    code, out, _ = _cli("audit", str(HERE / "module.hlo"), str(HERE / "claims.txt"))
    assert code == 0 and out.strip().endswith("summary: 4 proved")


def test_planted_wrong_rt_binding_is_refuted_with_a_confirmed_witness() -> None:
    # rt0 is bound to p1[1] instead of p1[0] (the slice takes element 0).
    planted = CLAIMS.replace("rt0: %b0 = s32[] bitcast(s32[1] %s0)\n  (d0, d1) -> (),",
                             "rt0: %p1 = s32[2] parameter(1)\n  (d0, d1) -> (1),")
    assert planted != CLAIMS
    (r, *_) = audit(MODULE, parse_claims(planted))
    assert r.status == "refuted" and r.counterexample is not None
    c = r.counterexample
    assert c.source == (1,) and c.target == (0,)  # claimed p1[1], the value is in p1[0]
    # Confirmation: with p1 = [2, 7] the program's output row 0 is input row 2 (dynamic-slice from p1[0]);
    # the claim's binding would read the offset 7.
    p1 = np.array([2, 7])
    x = np.arange(16 * 32).reshape(16, 32)
    program = x[np.clip(p1[0], 0, 12): np.clip(p1[0], 0, 12) + 4]
    at = _values(c.values)
    claimed_offset = int(np.clip(p1[c.source[0]], 0, 12))
    assert program[at["d0"], at["d1"]] != x[at["d0"] + claimed_offset, at["d1"]]
    # Bound to another instruction altogether: refuted, naming where the value comes from.
    other = CLAIMS.replace("rt0: %b0 = s32[] bitcast(s32[1] %s0)", "rt0: %p0 = f32[16,32] parameter(0)")
    (r2, *_) = audit(MODULE, parse_claims(other))
    assert r2.status == "refuted" and "value comes from p1 (through" in " ".join(t for _, t in r2.steps)
    code, out, _ = _cli("audit", str(HERE / "module.hlo"), planted)
    assert code == 1 and "REFUTED" in out and "claimed: element (1)" in out and "analysis: element (0)" in out


def test_planted_range_change_of_an_unused_range_variable_is_refuted() -> None:
    # fusion f3 reduces a broadcast over 6 columns: s0 (unused in the results) runs over [0, 5].
    planted = CLAIMS.replace("d0 in [0, 7],\ns0 in [0, 5]\n", "d0 in [0, 7],\ns0 in [0, 7]\n")
    planted = CLAIMS[: CLAIMS.index("fusion f3")] + planted[planted.index("fusion f3"):]
    results = audit(MODULE, parse_claims(planted))
    r = results[3]
    assert r.status == "refuted" and r.counterexample is not None
    assert r.counterexample.in_domain == "source"  # a loop iteration the claim admits and the program has not
    s0 = _values(r.counterexample.values)["s0"]
    comp = MODULE.computations["fused_reduce_bcast"]
    reduced = comp.by_name["b"].shape.dims[1]
    assert s0 >= reduced  # confirmed: the reduce loop runs s0 over [0, 5] only
    # The relation question alone cannot see it (s0 is unused): prove-equal --relation proves it.
    claim_map = parse_claims(planted)[3].map
    ours = results[3].ours[0].map
    code, _, _ = _cli("prove-equal", claim_map.format(one_line=True), ours.format(one_line=True), "--relation",
                      "--no-cache")
    assert code == 0


def test_planted_wrong_result_is_refuted_with_the_element_read() -> None:
    planted = CLAIMS.replace("fusion f2\noperand id = 0\n(d0)[s0] -> (d0, s0),", "fusion f2\noperand id = 0\n"
                             "(d0)[s0] -> (-d0 + 7, s0),")
    assert planted != CLAIMS
    r = audit(MODULE, parse_claims(planted))[2]
    assert r.status == "refuted" and r.counterexample is not None
    c = r.counterexample
    at = _values(c.values)
    # Confirmation by the numpy oracle: output d0 of the reduce reads row d0 of its operand.
    comp = MODULE.computations["fused_reduce"]
    (out,) = run(comp.root, comp)
    reads = {x for k, x in out[at["d0"]] if k == 0}
    # The witness is a read the claim misses: the program reads it, the claim (row 7 - d0) does not.
    assert c.source is None and c.target is not None and tuple(c.target) in reads
    assert c.target[0] != 7 - at["d0"]


def test_json_claims_and_bad_input() -> None:
    data = {"claims": [{"fusion": "f1", "operand": 0, "map": "(d0, d1){rt0} -> (d0 + rt0, d1), domain: d0 in [0, 3], "
                        "d1 in [0, 31], rt0 in [0, 12]", "runtime_variables": [{"rt": 0, "instruction": "p1",
                                                                                "map": "(d0, d1) -> (0), domain: d0 in [0, 3], d1 in [0, 31]"}]}]}
    code, out, _ = _cli("audit", str(HERE / "module.hlo"), json.dumps(data), "--json")
    assert code == 0 and json.loads(out)["results"][0]["status"] == "proved"
    with pytest.raises(ParseError) as info:
        parse_claims("fusion f1\noperand id = 0\n(d0, d1) -> (d0 +, d1), domain: d0 in [0, 3], d1 in [0, 31]\n")
    assert info.value.line == 3
    code, _, err = _cli("audit", str(HERE / "module.hlo"), "operand id = 0\n(d0) -> (d0), domain: d0 in [0, 3]")
    assert code == 3 and "3 fusions" in err
    # --timeout is the whole command's budget, validated like every command's.
    code, out, _ = _cli("audit", str(HERE / "module.hlo"), json.dumps(data), "--json", "--timeout", "60")
    assert code == 0 and json.loads(out)["results"][0]["status"] == "proved"
    for bad in ("nan", "0", "-1"):
        code, _, err = _cli("audit", str(HERE / "module.hlo"), json.dumps(data), "--timeout", bad)
        assert code == 3 and "--timeout" in err


@pytest.mark.parametrize(
    "binding",
    [
        "rt0: %b0 = s32[] bitcast(s32[1] %s0)\n  (d0, d1) -> (),\n  domain:\n  d0 in [0, 3],\n  d1 in [0, 31]",
        "rt0: %b0 = s32[] bitcast(s32[1] %s0): (d0, d1) -> (), domain: d0 in [0, 3], d1 in [0, 31]",
        "rt0: hlo: b0\n(d0, d1) -> (),\ndomain:\nd0 in [0, 3],\nd1 in [0, 31]",
        "rt0:\n  %b0 = s32[] bitcast(s32[1] %s0)\n  (d0, d1) -> (), domain: d0 in [0, 3], d1 in [0, 31]",
    ],
)
def test_runtime_variable_sections_in_several_layouts(binding: str) -> None:
    text = (
        "fusion f1\noperand id = 0\n(d0, d1){rt0} -> (d0 + rt0, d1),\ndomain:\nd0 in [0, 3],\nd1 in [0, 31],\n"
        f"rt0 in [0, 12]\nruntime variables:\n{binding}\n"
    )
    (claim,) = parse_claims(text)
    assert [(b.index, b.instruction, b.map.num_results) for b in claim.bindings] == [(0, "b0", 0)]
    (r,) = audit(MODULE, [claim])
    assert r.status == "proved"


def test_json_report_carries_the_counterexample() -> None:
    planted = CLAIMS.replace("(d0)[s0] -> (d0, s0),", "(d0)[s0] -> (-d0 + 7, s0),")
    code, out, _ = _cli("audit", str(HERE / "module.hlo"), planted, "--json")
    assert code == 1
    (bad,) = [r for r in json.loads(out)["results"] if r["status"] == "refuted"]
    c = bad["counterexample"]
    # a read the claim misses: output d0 reads row d0 (the claim reads row 7 - d0)
    assert c["claimed"] is None and c["analysis"][0] == c["values"]["d0"] != 7 - c["values"]["d0"]
    assert any("the claim: no range-variable value makes that output read it" in w for w in bad["witness"])


def test_mutated_claims_give_only_our_errors() -> None:
    """A small fuzzer over the claims file: parse and audit raise nothing but
    VerifiedIndexingError (ParseError positioned in the file)."""
    import random

    from verified_indexing.errors import VerifiedIndexingError

    rng = random.Random(7)
    tokens = ["(", ")", "{", "}", ",", "\n", " ", "rt0: ", "runtime variables:\n", "operand id = 1\n", "fusion f9\n",
              "d0", "s0", "rt1", "->", "[0, 3]", "output 1\n", "%p1 = s32[2] parameter(1)"]
    for _ in range(80):
        text = CLAIMS
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(text))
            if rng.random() < 0.5:
                text = text[:i] + text[i + rng.randint(1, 4):]
            else:
                text = text[:i] + rng.choice(tokens) + text[i:]
        try:
            audit(MODULE, parse_claims(text))
        except VerifiedIndexingError:
            pass


I2O = """fusion f1
input-to-output
operand id = 0
(d0, d1){rt0} -> (d0 - rt0, d1),
domain:
d0 in [0, 15],
d1 in [0, 31],
rt0 in [0, 12],
d0 - rt0 in [0, 3]
runtime variables:
rt0: %p1 = s32[2] parameter(1)
  (d0, d1) -> (0),
  domain:
  d0 in [0, 15],
  d1 in [0, 31]
"""


def test_input_to_output_claims() -> None:
    (claim,) = parse_claims(I2O)
    assert claim.direction == "input-to-output"
    (r,) = audit(MODULE, [claim])
    assert r.status == "proved", r.steps
    (bad,) = audit(MODULE, parse_claims(I2O.replace("d0 - rt0 in [0, 3]", "d0 - rt0 in [0, 4]")))
    # A superset (every use claimed, and more): over-approximates, never refuted.
    assert bad.status == "over-approximates" and bad.counterexample is not None
    # The witness: an input row the claim sends to output row 4, which does not exist in f32[4,32].
    c = bad.counterexample
    assert c.source is not None and c.source[0] == 4 and c.target is None
    # Narrower than the truth (row 3 of the slice missed): refuted with the missed element.
    (miss,) = audit(MODULE, parse_claims(I2O.replace("d0 - rt0 in [0, 3]", "d0 - rt0 in [0, 2]")))
    assert miss.status == "refuted" and miss.counterexample is not None
    mc = miss.counterexample
    assert mc.target is not None and mc.target[0] == 3 and mc.source is None


TWO_PATHS = """HloModule two
fused {
  p0 = f32[8] parameter(0)
  r = f32[8] reverse(p0), dimensions={0}
  ROOT a = f32[8] add(p0, r)
}
ENTRY e {
  x = f32[8] parameter(0)
  ROOT f = f32[8] fusion(x), kind=kLoop, calls=fused
}
"""


def test_coverage_every_map_of_ours_must_be_claimed() -> None:
    module = parse_module(TWO_PATHS)
    both = "operand id = 0\n(d0) -> (d0),\ndomain:\nd0 in [0, 7]\n(d0) -> (-d0 + 7),\ndomain:\nd0 in [0, 7]\n"
    claims = parse_claims(both)
    assert [c.operand for c in claims] == [0, 0]
    assert [r.status for r in audit(module, claims)] == ["proved", "proved"]
    # XLA's set missing the reversed read: refuted, with the element we read.
    (missing,) = audit(module, parse_claims("operand id = 0\n(d0) -> (d0),\ndomain:\nd0 in [0, 7]\n"))
    assert missing.status == "refuted"
    c = missing.counterexample
    assert c is not None and c.source is None and c.target is not None
    d0 = dict(c.values)["d0"]
    assert c.target == (7 - d0,) and c.target != (d0,)  # the analysis reads x[7 - d0]; the claim does not
    assert any("the analysis: output" in w for w in missing.witness)


def test_a_claim_merging_two_of_our_maps_is_not_refuted() -> None:
    # XLA may print one map where we keep two (or the other way round): no refutation without an element
    # claimed that none of our maps reads.
    halves = parse_module(
        "HloModule h\nfused {\n  p0 = f32[8] parameter(0)\n  a = f32[4] slice(p0), slice={[0:4]}\n"
        "  b = f32[4] slice(p0), slice={[4:8]}\n  ROOT s = f32[4] add(a, b)\n}\n"
        "ENTRY e {\n  x = f32[8] parameter(0)\n  ROOT f = f32[4] fusion(x), kind=kLoop, calls=fused\n}\n"
    )
    union = "operand id = 0\n(d0)[s0] -> (d0 + s0 * 4),\ndomain:\nd0 in [0, 3],\ns0 in [0, 1]\n"
    results = audit(halves, parse_claims(union))
    # the same reads as our two maps together: proved (the loop variable is not compared pointwise)
    assert len(results[0].ours) == 2 and results[0].status == "proved", results[0].steps
    assert results[0].counterexample is None
    assert "union of several of our maps" in results[0].steps[-1][1]
    module = parse_module(TWO_PATHS)
    # A claimed element that none of our maps reads is refuted, even with two maps of ours.
    wrong = "operand id = 0\n(d0) -> (d0),\ndomain:\nd0 in [0, 7]\n(d0) -> ((d0 + 1) mod 8),\ndomain:\nd0 in [0, 7]\n"
    results = audit(module, parse_claims(wrong))
    assert results[0].status == "proved" and results[1].status == "refuted"
    c = results[1].counterexample
    assert c is not None and c.source is not None
    d0 = dict(c.values)["d0"]
    assert c.source[0] == (d0 + 1) % 8 and c.source[0] not in (d0, 7 - d0)
