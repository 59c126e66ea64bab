"""``audit``: XLA's printed maps (with their runtime-variable bindings) proved or
refuted against our analysis. Planted errors (a wrong rt binding, a changed range
of an unused range variable, a wrong result) are refuted, each witness checked
against what the program actually does (numpy); the correct printout is proved."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hlo_oracle import compose_tags, run

from verified_indexing.cli import main
from verified_indexing.errors import ParseError
from verified_indexing.hlo.audit import audit, parse_claims
from verified_indexing.hlo.parser import parse_module

HERE = Path(__file__).resolve().parent / "hlo_corpus" / "audit"


def _validator() -> Any:
    from importlib import resources

    import jsonschema

    text = resources.files("verified_indexing").joinpath("schema/verified-indexing-1.json").read_text("utf-8")
    return jsonschema.Draft202012Validator(json.loads(text))


VALIDATOR = _validator()
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
        # the binding's map printed without a domain: the claim's bounds
        "  rt0: %b0 = s32[] bitcast(s32[1] %s0)\n    (d0, d1) -> ()",
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


# -- every printed form, the runtime-variable foldings, the four verdicts ------------------------------------------

ITOA_GATHER = """HloModule m
fused {
  p0 = f32[6,4] parameter(0)
  iota = s32[6,1] iota(), iota_dimension=0
  ROOT g = f32[6,2,4] gather(p0, iota), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0},
    index_vector_dim=1, slice_sizes={2,4}
}
ENTRY e {
  x = f32[6,4] parameter(0)
  ROOT f = f32[6,2,4] fusion(x), kind=kLoop, calls=fused
}
"""


def _oracle_reads(comp_text: str, fusion_comp: str, inst: str, values: dict[int, np.ndarray],
                  operand: int = 0) -> dict[tuple[int, ...], set[tuple[int, ...]]]:
    """Output index -> the elements of ``operand`` of ``inst`` it reads, by the numpy interpreter."""
    module = parse_module(comp_text)
    comp = module.computations[fusion_comp]
    (out, *_) = run(comp.by_name[inst], comp, values)
    return {idx: {x for k, x in out[idx] if k == operand} for idx in np.ndindex(*out.shape)}


def _claim_reads(claim_text: str) -> dict[tuple[int, ...], set[tuple[int, ...]]]:
    """Output index -> the elements a (runtime-variable free) claimed map reads, enumerated."""
    m = parse_claims(claim_text)[0].map
    out: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
    for d, s, r in m.domain_points():
        out.setdefault(tuple(d), set()).add(m.evaluate(d, s, r))
    return out


def test_an_iota_offset_folded_without_the_clamp_is_refuted() -> None:
    module = parse_module(ITOA_GATHER)
    oracle = _oracle_reads(ITOA_GATHER, "fused", "g", {1: np.arange(6).reshape(6, 1)})
    right = "operand id = 0 (d0, d1, d2) -> (min(d0, 4) + d1, d2), domain: d0 in [0, 5], d1 in [0, 1], d2 in [0, 3]"
    wrong = "operand id = 0 (d0, d1, d2) -> (d0 + d1, d2), domain: d0 in [0, 5], d1 in [0, 1], d2 in [0, 3]"
    # the oracle (which clamps the start index as HLO does) reads what the right claim says, not the wrong one
    assert _claim_reads(right) == {k: v for k, v in oracle.items() if v}
    assert _claim_reads(wrong) != {k: v for k, v in oracle.items() if v}
    (ok,) = audit(module, parse_claims(right))
    assert ok.status == "proved", ok.steps
    assert any("rt0 = iota[d0, 0] is known: d0, clamped to [0, 4]" in t for _, t in ok.steps)
    (bad,) = audit(module, parse_claims(wrong))
    assert bad.status == "refuted" and bad.counterexample is not None
    c = bad.counterexample
    out = tuple(x for k, x in c.values if k.startswith("d"))
    assert c.target is not None and c.target in oracle[out] and c.target not in _claim_reads(wrong).get(out, set())
    assert any("runtime value: rt0 = iota[d0, 0] = 5, clamped to [0, 4]: 4" in w for w in bad.witness)
    # the same wrong claim restricted to where the iota fits (XLA's constraint, no clamp): still refuted
    (bad2,) = audit(module, parse_claims(wrong + ", d0 in [0, 4]"))
    assert bad2.status == "refuted"


CONST_TABLE = """HloModule m
fused {
  p0 = f32[16] parameter(0)
  t = s32[3] constant({2, 7, 30})
  s = s32[1] slice(t), slice={[IDX:IDX1]}
  b = s32[] reshape(s)
  ROOT ds = f32[4] dynamic-slice(p0, b), dynamic_slice_sizes={4}
}
ENTRY e {
  x = f32[16] parameter(0)
  ROOT f = f32[4] fusion(x), kind=kLoop, calls=fused
}
"""

CLAMPED = """HloModule m
fused {
  p0 = f32[16] parameter(0)
  c = s32[] constant(20)
  lo = s32[] constant(0)
  hi = s32[] constant(HI)
  cl = s32[] clamp(lo, c, hi)
  ROOT ds = f32[4] dynamic-slice(p0, cl), dynamic_slice_sizes={4}
}
ENTRY e {
  x = f32[16] parameter(0)
  ROOT f = f32[4] fusion(x), kind=kLoop, calls=fused
}
"""


@pytest.mark.parametrize(
    ("text", "offset", "right", "wrong"),
    [
        # a constant table read through a slice and a reshape: element 1 = 7; element 2 = 30, clamped to 12
        (CONST_TABLE.replace("IDX1", "2").replace("IDX", "1"), 7, 7, 2),
        (CONST_TABLE.replace("IDX1", "3").replace("IDX", "2"), 30, 12, 30),
        # a constant folded through a clamp: clamp(0, 20, 9) = 9; clamp(0, 20, 15) = 15, then the emitter's 12
        (CLAMPED.replace("HI", "9"), 9, 9, 20),
        (CLAMPED.replace("HI", "15"), 15, 12, 15),
    ],
)
def test_constants_and_clamps_are_folded_with_the_emitters_clamp(text: str, offset: int, right: int,
                                                                   wrong: int) -> None:
    module = parse_module(text)
    oracle = _oracle_reads(text, "fused", "ds", {1: np.array(offset)})
    claim = "operand id = 0\n(d0) -> (d0 + {}),\ndomain:\nd0 in [0, 3]\n"
    assert _claim_reads(claim.format(right)) == oracle
    (ok,) = audit(module, parse_claims(claim.format(right)))
    assert ok.status == "proved", ok.steps
    (bad,) = audit(module, parse_claims(claim.format(wrong)))
    assert bad.status == "refuted" and bad.counterexample is not None and bad.counterexample.target is not None
    d0 = dict(bad.counterexample.values)["d0"]
    assert bad.counterexample.target in oracle[(d0,)] and bad.counterexample.target != (d0 + wrong,)


def test_a_claimed_binding_to_a_constant_is_folded_too() -> None:
    # XLA kept the runtime variable and bound it to the constant: compared with our folded map
    text = CLAMPED.replace("HI", "9")
    module = parse_module(text)
    claim = ("operand id = 0\n(d0){rt0} -> (d0 + rt0),\ndomain:\nd0 in [0, 3],\nrt0 in [0, 12]\nruntime variables:\n"
             "rt0: %cl = s32[] clamp(s32[] %lo, s32[] %c, s32[] %hi)\n  (d0) -> (),\n  domain:\n  d0 in [0, 3]\n")
    (r,) = audit(module, parse_claims(claim))
    assert r.status == "proved", r.steps
    (bad,) = audit(module, parse_claims(claim.replace("rt0: %cl = s32[] clamp(s32[] %lo, s32[] %c, s32[] %hi)",
                                                      "rt0: %c = s32[] constant(20)")))
    assert bad.status == "refuted"  # bound to 20 (clamped to 12), the program reads at 9


REDUCE_WINDOW = """HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  p0 = f32[4, 12] parameter(0)
  c_inf = f32[] constant(-inf)
  ROOT rw = f32[4, 3] reduce-window(p0, c_inf), window={size=1x6 stride=1x3}, to_apply=max
}
"""


def test_per_instruction_claims_whose_operands_are_not_parameters() -> None:
    module = parse_module(REDUCE_WINDOW)
    text = ("operand id = 0\n  (d0, d1)[s0] -> (d0, d1 * 3 + s0),\n  domain:\n  d0 in [0, 3],\n  d1 in [0, 2],\n"
            "  s0 in [0, 5]\noperand id = 1\n  (d0, d1) -> (),\n  domain:\n  d0 in [0, 3],\n  d1 in [0, 2]\n")
    comp = module.entry
    (out,) = run(comp.root, comp)
    for idx in np.ndindex(*out.shape):  # the oracle: the init value (operand 1, a constant) read by every output
        assert (1, ()) in out[idx]
    assert [r.status for r in audit(module, parse_claims(text))] == ["proved", "proved"]
    named = "instruction rw\n" + text
    assert [r.status for r in audit(module, parse_claims(named))] == ["proved", "proved"]
    (bad,) = audit(module, parse_claims("operand id = 1 KNOWN EMPTY"))
    assert bad.status == "refuted" and bad.counterexample is not None and bad.counterexample.target == ()


CONCAT_SLICE = """HloModule m
fused {
  p0 = f32[4] parameter(0)
  p1 = f32[6] parameter(1)
  c = f32[10] concatenate(p0, p1), dimensions={0}
  ROOT s = f32[3] slice(c), slice={[5:8]}
}
ENTRY e {
  x = f32[4] parameter(0)
  y = f32[6] parameter(1)
  ROOT f = f32[3] fusion(x, y), kind=kLoop, calls=fused
}
"""


def test_printed_forms_known_empty_unknown_indexing_and_one_line_maps() -> None:
    module = parse_module(CONCAT_SLICE)
    comp = module.computations["fused"]
    (cat,) = run(comp.by_name["c"], comp)
    # the oracle: the slice [5:8] of the concatenation reads only p1, elements 1..3
    assert all(k == 1 for i in range(5, 8) for k, _ in cat[i])
    text = "operand id = 0\nKNOWN EMPTY\noperand id = 1 (d0) -> (d0 + 1), domain: d0 in [0, 2]\n"
    claims = parse_claims(text)
    assert [(c.operand, c.map.is_known_empty) for c in claims] == [(0, True), (1, False)]
    assert [r.status for r in audit(module, claims)] == ["proved", "proved"]
    # 'unknown indexing' is every element: a sound superset of p1's reads, with an element never read
    (unk,) = audit(module, parse_claims("operand id = 1 unknown indexing\n"))
    assert unk.status == "over-approximates" and unk.counterexample is not None
    d0 = dict(unk.counterexample.values)["d0"]
    assert unk.counterexample.source is not None and unk.counterexample.source[0] != d0 + 1
    # XLA's ToString prints no separator after "unknown indexing"
    glued = parse_claims("operand id = 0 unknown indexingoperand id = 1 (d0) -> (d0 + 1), domain: d0 in [0, 2]")
    assert [(c.operand, c.kind) for c in glued] == [(0, "unknown"), (1, "map")]
    assert [r.status for r in audit(module, glued)] == ["over-approximates", "proved"]
    # the same printout with the map on the next lines, indented as XLA's tests print it
    indented = "operand id = 1\n  (d0) -> (d0 + 1),\n  domain:\n  d0 in [0, 2]\n"
    assert [r.status for r in audit(module, parse_claims(indented))] == ["proved"]
    # an operand read by no output: a map claimed for it reads elements never read
    (extra,) = audit(module, parse_claims("operand id = 0 (d0) -> (d0), domain: d0 in [0, 2]"))
    assert extra.status == "over-approximates"


def test_unknown_indexing_against_an_unmodelled_op_is_unknown() -> None:
    text = ("HloModule m\nfused {\n  p0 = f32[8] parameter(0)\n  ROOT c = f32[8] custom-call(p0), "
            "custom_call_target=\"SomethingUnknown\"\n}\nENTRY e {\n  x = f32[8] parameter(0)\n"
            "  ROOT f = f32[8] fusion(x), kind=kLoop, calls=fused\n}\n")
    module = parse_module(text)
    for claim in ("operand id = 0 unknown indexing", "operand id = 0 (d0) -> (d0), domain: d0 in [0, 7]"):
        (r,) = audit(module, parse_claims(claim))
        assert r.status == "unknown" and r.steps[-1][1].endswith("unknown indexing through c"), r.steps


PRODUCERS = """HloModule m
fused {
  p0 = f32[3, 5] parameter(0)
  p1 = f32[5] parameter(1)
  t = f32[5, 3] transpose(p0), dimensions={1, 0}
  b = f32[5, 3] broadcast(p1), dimensions={0}
  ROOT a = f32[5, 3] add(t, b)
}
ENTRY e {
  x = f32[3, 5] parameter(0)
  y = f32[5] parameter(1)
  ROOT f = f32[5, 3] fusion(x, y), kind=kLoop, calls=fused
}
"""


def test_grouped_by_producer_printouts() -> None:
    module = parse_module(PRODUCERS)
    comp = module.computations["fused"]
    (tr,) = run(comp.by_name["t"], comp)
    box = "domain:\nd0 in [0, 4],\nd1 in [0, 2]\n"
    text = (f"hlo: %a = f32[5,3] add(%t, %b)\n(d0, d1) -> (d0, d1),\n{box}"
            f"t:\n(d0, d1) -> (d0, d1),\n{box}"
            f"%p0 = f32[3,5] parameter(0)\n(d0, d1) -> (d1, d0),\n{box}"
            f"producer p1\n(d0, d1) -> (d0),\n{box}")
    claims = parse_claims(text)
    assert [c.producer for c in claims] == ["a", "t", "p0", "p1"]
    assert [r.status for r in audit(module, claims)] == ["proved"] * 4
    # the oracle: output (i, j) of the transpose reads p0[j, i]
    assert all(tr[i, j] == {(0, (j, i))} for i in range(5) for j in range(3))
    (bad,) = audit(module, parse_claims(f"producer p0\n(d0, d1) -> (d0 mod 3, d1),\n{box}"))
    assert bad.status == "refuted" and bad.counterexample is not None
    i, j = (dict(bad.counterexample.values)[k] for k in ("d0", "d1"))
    assert bad.counterexample.target == (j, i)


def test_physical_layout_claims() -> None:
    module = parse_module("HloModule m\nENTRY e {\n  p0 = f32[2, 3, 4] parameter(0)\n"
                          "  ROOT e0 = f32[2, 3, 4]{1, 0, 2} exponential(p0)\n}\n")
    # physical index of the output: dims in major-to-minor order (2, 0, 1); of p0: (0, 1, 2)
    physical = "physical\noperand id = 0\n(d0, d1, d2) -> (d1, d2, d0),\ndomain:\nd0 in [0, 3],\nd1 in [0, 1],\nd2 in [0, 2]\n"
    (r,) = audit(module, parse_claims(physical))
    assert r.status == "proved" and r.claim.physical
    # an oracle by numpy: output element at physical (a, b, c) is logical (b, c, a) -- the same element of p0
    out = np.arange(24).reshape(2, 3, 4)
    phys = np.transpose(out, (2, 0, 1))
    assert all(phys[a, b, c] == out[b, c, a] for a in range(4) for b in range(2) for c in range(3))
    # without the header: its dims are the output's physical shape (4, 2, 3), not the logical (2, 3, 4)
    (guessed,) = audit(module, parse_claims(physical.replace("physical\n", "")))
    assert guessed.status == "proved" and guessed.steps[0][0] == "layout"
    # a logical claim stays logical
    logical = "operand id = 0 (d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 1], d1 in [0, 2], d2 in [0, 3]"
    (plain,) = audit(module, parse_claims(logical))
    assert plain.status == "proved" and plain.steps[0][0] != "layout"
    (bad,) = audit(module, parse_claims(physical.replace("(d1, d2, d0)", "(d1, d0 mod 3, d2 mod 4)")))
    assert bad.status == "refuted"


SUPERSET = """HloModule m
fused {
  p0 = f32[8] parameter(0)
  ROOT s = f32[4] slice(p0), slice={[2:6]}
}
ENTRY e {
  x = f32[8] parameter(0)
  ROOT f = f32[4] fusion(x), kind=kLoop, calls=fused
}
"""


@pytest.mark.parametrize(
    ("claim", "status", "code"),
    [
        ("operand id = 0 (d0) -> (d0 + 2), domain: d0 in [0, 3]", "proved", 0),
        ("operand id = 0 (d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [2, 3]", "over-approximates", 5),
        ("operand id = 0 (d0) -> (d0 + 3), domain: d0 in [0, 3]", "refuted", 1),
        # a sound superset and a miss together: a wrong claim is never over-approximates
        ("operand id = 0 (d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [3, 4]", "refuted", 1),
        # not comparable (another number of results): unknown, with the reason
        ("operand id = 0 (d0) -> (d0, 0), domain: d0 in [0, 3]", "unknown", 2),
    ],
)
def test_the_four_verdicts_their_exit_codes_and_json(claim: str, status: str, code: int) -> None:
    module = parse_module(SUPERSET)
    oracle = _oracle_reads(SUPERSET, "fused", "s", {})
    (r,) = audit(module, parse_claims(claim))
    assert r.status == status, r.steps
    c = r.counterexample
    if status == "over-approximates":  # an element claimed that the output never reads
        assert c is not None and c.source is not None and c.target is None
        d0 = dict(c.values)["d0"]
        assert c.source not in oracle[(d0,)] and all(oracle[k] <= _claim_reads(claim)[k] for k in oracle)
    if status == "refuted":  # a read missed
        assert c is not None and c.target is not None and c.source is None
        d0 = dict(c.values)["d0"]
        assert c.target in oracle[(d0,)] and c.target not in _claim_reads(claim).get((d0,), set())
    got, out, _ = _cli("audit", "-e", SUPERSET, "-e", claim, "--json")
    assert got == code and json.loads(out)["results"][0]["status"] == status


def test_an_over_approximation_of_ours_is_never_a_refutation() -> None:
    # scatter's map of its operand is marked an over-approximation here: a claim missing part of it is unknown
    text = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
fused {
  p0 = f32[8] parameter(0)
  i = s32[2,1] parameter(1)
  u = f32[2] parameter(2)
  ROOT sc = f32[8] scatter(p0, i, u), update_window_dims={}, inserted_window_dims={0},
    scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
ENTRY e {
  x = f32[8] parameter(0)
  y = s32[2,1] parameter(1)
  z = f32[2] parameter(2)
  ROOT f = f32[8] fusion(x, y, z), kind=kLoop, calls=fused
}
"""
    module = parse_module(text)
    (r,) = audit(module, parse_claims("operand id = 2 KNOWN EMPTY"))
    ours = r.ours
    assert ours and all(a.over_approximation for a in ours), [a.map for a in ours]
    assert r.status == "unknown", r.steps


BATCH_GROUPS = """HloModule m
ENTRY e {
  p0 = f32[6, 4, 2] parameter(0)
  p1 = f32[2, 2, 3] parameter(1)
  ROOT conv = f32[2, 3, 3] convolution(p0, p1), window={size=2}, dim_labels=b0f_0io->b0f, batch_group_count=3
}
"""


def test_xlas_batch_group_convolution_claim_over_approximates() -> None:
    # XLA reads every batch group for each output; the output feature ties the group (the numpy interpreter agrees)
    module = parse_module(BATCH_GROUPS)
    claim = ("operand id = 0\n  (d0, d1, d2)[s0, s1, s2] -> (d0 + s2 * 2, d1 + s0, s1),\n  domain:\n  d0 in [0, 1],\n"
             "  d1 in [0, 2],\n  d2 in [0, 2],\n  s0 in [0, 1],\n  s1 in [0, 1],\n  s2 in [0, 2]\n")
    (r,) = audit(module, parse_claims(claim))
    assert r.status == "over-approximates" and r.counterexample is not None
    comp = module.entry
    (out,) = run(comp.root, comp)
    claimed = _claim_reads(claim)
    for idx in np.ndindex(*out.shape):
        assert {x for k, x in out[idx] if k == 0} <= claimed[idx]  # a superset: sound
    at = tuple(x for k, x in r.counterexample.values if k.startswith("d"))
    assert r.counterexample.source not in {x for k, x in out[at] if k == 0}  # the witness is never read


def test_per_instruction_input_to_output_claims() -> None:
    text = "HloModule m\nENTRY e {\n  p0 = f32[4] parameter(0)\n  ROOT b = f32[3, 4] broadcast(p0), dimensions={1}\n}\n"
    module = parse_module(text)
    (out,) = run(module.entry.root, module.entry)
    uses: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
    for idx in np.ndindex(*out.shape):  # the oracle inverted: input element -> the outputs reading it
        for _, x in out[idx]:
            uses.setdefault(x, set()).add(tuple(int(i) for i in idx))
    right = "input-to-output\noperand id = 0\n(d0)[s0] -> (s0, d0),\ndomain:\nd0 in [0, 3],\ns0 in [0, 2]\n"
    assert _claim_reads(right) == uses
    assert [r.status for r in audit(module, parse_claims(right))] == ["proved"]
    (bad,) = audit(module, parse_claims(right.replace("s0 in [0, 2]", "s0 in [0, 1]")))
    assert bad.status == "refuted" and bad.counterexample is not None and bad.counterexample.target is not None
    d0 = dict(bad.counterexample.values)["d0"]
    assert bad.counterexample.target in uses[(d0,)] and bad.counterexample.target[0] == 2


PARAM_CLAMP = """HloModule m
fused {
  p0 = f32[16] parameter(0)
  p1 = s32[] parameter(1)
  lo = s32[] constant(2)
  hi = s32[] constant(5)
  cl = s32[] clamp(lo, p1, hi)
  ROOT ds = f32[4] dynamic-slice(p0, cl), dynamic_slice_sizes={4}
}
ENTRY e {
  x = f32[16] parameter(0)
  i = s32[] parameter(1)
  ROOT f = f32[4] fusion(x, i), kind=kLoop, calls=fused
}
"""


@pytest.mark.parametrize(
    ("bounds", "binding", "status"),
    [
        ("[2, 5]", "%p1 = s32[] parameter(1)", "proved"),  # XLA moved the binding through the clamp
        ("[0, 12]", "%cl = s32[] clamp(%lo, %p1, %hi)", "proved"),  # bound to the clamp itself
        ("[0, 12]", "%p1 = s32[] parameter(1)", "refuted"),  # the clamp forgotten
        ("[2, 5]", "%p0 = f32[16] parameter(0)", "refuted"),  # a wrong binding
        ("[0, 15]", "%p0 = f32[16] parameter(0)", "refuted"),  # a wrong binding is never over-approximates
    ],
)
def test_runtime_variables_through_a_clamp_of_known_bounds(bounds: str, binding: str, status: str) -> None:
    module = parse_module(PARAM_CLAMP)
    text = (f"operand id = 0\n(d0){{rt0}} -> (d0 + rt0),\ndomain:\nd0 in [0, 3],\nrt0 in {bounds}\n"
            f"runtime variables:\nrt0: {binding}\n  (d0) -> (),\n  domain:\n  d0 in [0, 3]\n")
    (r,) = audit(module, parse_claims(text))
    assert r.status == status, r.steps
    c = r.counterexample
    if status == "refuted" and c is not None:  # a read missed: confirmed by the interpreter at that offset
        values = dict(c.values)
        comp = module.computations["fused"]
        offset = int(np.clip(values["rt0"], 2, 5))  # the clamp instruction, then the slice's own clamp
        (out,) = run(comp.by_name["ds"], comp, {1: np.array(offset)})
        assert c.target is not None and c.target in {x for k, x in out[values["d0"]] if k == 0}
        claimed = values["d0"] + int(np.clip(values["rt0"], *(int(x) for x in bounds.strip("[]").split(","))))
        assert c.target != (claimed,)


DUS = """HloModule m
ENTRY e {
  src = s32[6,5] parameter(0)
  upd = s32[2,3] parameter(1)
  of1 = s32[] parameter(2)
  of2 = s32[] parameter(3)
  ROOT dus = s32[6,5] dynamic-update-slice(src, upd, of1, of2)
}
"""

DUS_CLAIMS = """operand id = 0
  (d0, d1) -> (d0, d1),
  domain:
  d0 in [0, 5],
  d1 in [0, 4]
operand id = 1
  (d0, d1){rt0, rt1} -> (d0 - rt0, d1 - rt1),
  domain:
  d0 in [0, 5],
  d1 in [0, 4],
  rt0 in [0, 4],
  rt1 in [0, 2]
  runtime variables:
  rt0: %of1 = s32[] parameter(2)
    (d0, d1) -> ()
  rt1: %of2 = s32[] parameter(3)
    (d0, d1) -> ()
"""


def test_xlas_dynamic_update_slice_maps_over_approximate() -> None:
    # XLA's (and the spec's) maps for src and update are supersets: src is not read inside the window, the
    # update map names elements outside the update. The audit compares them with the exact reads.
    module = parse_module(DUS)
    results = audit(module, parse_claims(DUS_CLAIMS))
    assert [r.status for r in results] == ["over-approximates", "over-approximates"], [r.steps for r in results]
    comp = module.entry
    for k, r in enumerate(results):
        c = r.counterexample
        assert c is not None and c.source is not None
        at = dict(c.values)
        (out,) = run(comp.root, comp, {2: np.array(at["rt0"]), 3: np.array(at["rt1"])})
        read = {x for j, x in out[at["d0"], at["d1"]] if j == k}
        assert tuple(c.source) not in read  # the interpreter: that output never reads the claimed element
    # the exact reads claimed (the window in the update's domain): proved
    exact = DUS_CLAIMS.split("operand id = 1")[1].replace("rt1 in [0, 2]\n", "rt1 in [0, 2],\n  d0 - rt0 in [0, 1],\n"
                                                          "  d1 - rt1 in [0, 2]\n")
    (upd,) = audit(module, parse_claims("operand id = 1" + exact))
    assert upd.status == "proved", upd.steps
    # a claim missing the src's reads outside one side of the window: refuted
    (bad,) = audit(module, parse_claims("operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 5], d1 in [0, 2]"))
    assert bad.status == "refuted" and bad.counterexample is not None and bad.counterexample.target is not None
    at = dict(bad.counterexample.values)
    (out,) = run(comp.root, comp, {2: np.array(at["rt0"]), 3: np.array(at["rt1"])})
    assert bad.counterexample.target in {x for j, x in out[at["d0"], at["d1"]] if j == 0}


PAD = """HloModule m
ENTRY e {
  p0 = f32[4, 4] parameter(0)
  p1 = f32[] parameter(1)
  ROOT pad = f32[12, 16] pad(p0, p1), padding=1_4_1x4_8_0
}
"""


def test_xlas_padding_value_map_over_approximates_and_the_exact_set_is_proved() -> None:
    module = parse_module(PAD)
    comp = module.entry
    (out,) = run(comp.root, comp)
    padded = {idx for idx in np.ndindex(*out.shape) if any(k == 1 for k, _ in out[idx])}
    (xla,) = audit(module, parse_claims("operand id = 1 (d0, d1) -> (), domain: d0 in [0, 11], d1 in [0, 15]"))
    assert xla.status == "over-approximates" and xla.counterexample is not None
    at = dict(xla.counterexample.values)
    assert (at["d0"], at["d1"]) not in padded  # the interpreter: that output reads the operand, not the padding
    pieces = ["d0 in [0, 0], d1 in [0, 15]", "d0 in [8, 11], d1 in [0, 15]",
              "d0 in [0, 11], d1 in [0, 15], (d0 - 1) mod 2 in [1, 1]", "d0 in [0, 11], d1 in [0, 3]",
              "d0 in [0, 11], d1 in [8, 15]"]
    claimed: set[tuple[int, ...]] = set()
    for p in pieces:
        claimed |= set(_claim_reads(f"operand id = 1 (d0, d1) -> (), domain: {p}"))
    assert claimed == padded
    text = "operand id = 1\n" + "\n".join(f"(d0, d1) -> (), domain: {p}" for p in pieces)
    assert {r.status for r in audit(module, parse_claims(text))} == {"proved"}


def test_range_variables_listed_in_another_order_are_the_same_loops() -> None:
    module = parse_module("HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                          "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p0 = f32[4, 5, 6] parameter(0)\n"
                          "  c = f32[] constant(0)\n  ROOT r = f32[5] reduce(p0, c), dimensions={0, 2}, to_apply=add\n}\n")
    comp = module.entry
    (out,) = run(comp.root, comp)
    swapped = "operand id = 0 (d0)[s0, s1] -> (s1, d0, s0), domain: d0 in [0, 4], s0 in [0, 5], s1 in [0, 3]"
    # the interpreter: output d0 reads p0[:, d0, :], which the claim names (as a relation)
    assert _claim_reads(swapped) == {k: {x for j, x in out[k] if j == 0} for k in np.ndindex(*out.shape)}
    (r,) = audit(module, parse_claims(swapped))
    assert r.status == "proved" and "in the order s1, s0" in r.steps[-1][1]
    # a loop over other iterations is still refuted (s1 runs one iteration short, its reads being covered by
    # nothing else: a read missed)
    (bad,) = audit(module, parse_claims(swapped.replace("s1 in [0, 3]", "s1 in [0, 2]")))
    assert bad.status == "refuted"


# -- audit-kernels: XLA's emitted kernels (XLA:CPU, jaxlib) against the proven maps ---------------------------

KERNELS = HERE / "kernels"
PAD_KERNEL = next(KERNELS.glob("module_0034.*-pre-optimization.mlir"))
PAD_KERNEL_AFTER = next(KERNELS.glob("module_0034.*-post-optimization.mlir"))
CONCAT_KERNEL = next(KERNELS.glob("module_0036.*-pre-optimization.mlir"))


def _kernel_relation(text: str, arg: int) -> dict[tuple[int, ...], set[tuple[int, ...]]]:
    """Output element -> the elements of kernel argument ``arg`` the kernel reads, by enumerating the
    interpreted index arithmetic (every variable over its bounds)."""
    from verified_indexing.hlo.kernels import kernel_reads
    from verified_indexing.indexing_map import IndexingMap, Variable

    _, _, bounds, reads, _ = kernel_reads(text)
    out: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
    for r in reads:
        if r.arg != arg:
            continue
        m = IndexingMap([Variable(b) for b in bounds], [*r.output, *r.index], constraints=r.constraints)
        for d, s, rt in m.domain_points():
            v = m.evaluate(d, s, rt)
            out.setdefault(v[: len(r.output)], set()).add(v[len(r.output):])
    return out


def _fusion_oracle(hlo: Path, arg: int, fusion: str | None = None) -> dict[tuple[int, ...], set[tuple[int, ...]]]:
    """The numpy interpreter, op by op through the fused computation (the module's only one, or the one of
    fusion ``fusion``): output element -> the elements of parameter ``arg`` it is computed from (iota and
    constants read nothing; elementwise ops unite their operands' elements)."""
    from hlo_oracle import _empty, tagged

    module = parse_module(hlo.read_text(), str(hlo))
    if fusion is None:
        ((_, comp),) = module.fusions()
    else:
        comp = next(c for i, c in module.fusions() if i.name == fusion)
    values: dict[str, np.ndarray] = {}
    for inst in comp.instructions:
        if inst.opcode == "parameter":
            values[inst.name] = tagged(inst.shape.dims, inst.parameter_number or 0)
            continue
        if inst.opcode in ("constant", "iota"):
            values[inst.name] = _empty(inst.shape.dims)
            continue
        # run the op on tags: every operand element's tag k refers to operand k; map them back to parameters
        (res, *_) = run(inst, comp)
        values[inst.name] = compose_tags(res, [values[o] for o in inst.operands])
    root = values[comp.root.name]
    return {tuple(int(i) for i in idx): {x for k, x in root[idx] if k == arg} for idx in np.ndindex(*root.shape)}


def test_kernels_of_the_dump_are_proved_and_read_what_the_interpreter_says() -> None:
    code, out, _ = _cli("audit-kernels", str(KERNELS))
    assert code == 0 and out.strip().endswith("summary: 9 proved"), out
    assert "broadcast_multiply_fusion (after XLA's passes)" in out  # the flattened kernel, checked the same way
    # independent of the analysis: the kernel's reads (its own index arithmetic, enumerated) are what the
    # numpy interpreter of the fused HLO reads -- the pad (scf.if on the padding) and the concatenation (two loops)
    for kernel, args in ((PAD_KERNEL, (0,)), (CONCAT_KERNEL, (0, 1))):
        hlo = next(KERNELS.glob(kernel.name.split(".")[0] + ".*.cpu_after_optimizations.txt"))
        for arg in args:
            want = {k: v for k, v in _fusion_oracle(hlo, arg).items() if v}
            assert _kernel_relation(kernel.read_text(), arg) == want


@pytest.mark.parametrize(
    ("kernel", "old", "new"),
    [
        (PAD_KERNEL, '"(d0, d1) -> (d0 - 1), domain', '"(d0, d1) -> (d0 - 2), domain'),  # a wrong apply_indexing
        (CONCAT_KERNEL, "-> (s0, s1 + 8), domain", "-> (s0, s1 + 7), domain"),  # a wrong loop map (the 2nd loop)
        # after XLA's passes: a wrong flattened map (the row of the padded operand off by one element)
        (PAD_KERNEL_AFTER, '"(d0, d1) -> (d1 * 8 + d0 - 8), domain', '"(d0, d1) -> (d1 * 8 + d0 - 7), domain'),
    ],
)
def test_a_planted_wrong_indexing_map_in_a_kernel_is_refuted_with_its_element(
    tmp_path: Path, kernel: Path, old: str, new: str
) -> None:
    import shutil

    shutil.copy(kernel, tmp_path / kernel.name)
    for f in KERNELS.glob(kernel.name.split(".")[0] + ".*.txt"):
        shutil.copy(f, tmp_path / f.name)
    text = kernel.read_text()
    assert old in text
    (tmp_path / kernel.name).write_text(text.replace(old, new))
    code, out, _ = _cli("audit-kernels", str(tmp_path), "--json")
    assert code == 1
    data = json.loads(out)
    assert not list(VALIDATOR.iter_errors(data))  # the shipped JSON schema
    (r,) = data["kernels"]
    assert r["status"] == "refuted" and r["witness"], r
    if kernel is PAD_KERNEL_AFTER:  # linear indices: the padded operand f32[4,8], the output f32[7,11]
        m = re.search(r"output element \((\d+)\): (the kernel|the analysis) reads parameter 0 element \((\d+)\)",
                      r["witness"][0])
        assert m is not None
        o, e = divmod(int(m.group(1)), 11), divmod(int(m.group(3)), 8)  # row-major multi-indices
        hlo = next(tmp_path.glob("*.cpu_after_optimizations.txt"))
        truth = _fusion_oracle(hlo, 0)
        assert (e in truth[o]) == (m.group(2) == "the analysis")  # the program reads what the analysis says
        return
    # the witness against the interpreter: at that output element one side reads an element the program does not
    import re as _re

    m = _re.search(r"output element \(([^)]*)\): (the kernel|the analysis) reads parameter (\d+) element \(([^)]*)\)",
                   r["witness"][0])
    assert m is not None
    at = tuple(int(x) for x in m.group(1).split(", "))
    element = tuple(int(x) for x in m.group(4).split(", "))
    hlo = next(tmp_path.glob("*.cpu_after_optimizations.txt"))
    truth = _fusion_oracle(hlo, int(m.group(3)))
    kernel_reads_it = element in _kernel_relation((tmp_path / kernel.name).read_text(), int(m.group(3))).get(at, set())
    assert (element in truth[at]) != kernel_reads_it  # the kernel and the program disagree exactly there


DS_KERNEL = next(KERNELS.glob("module_0012.*-pre-optimization.mlir"))


def test_a_dynamic_offset_read_from_data_is_compared_as_a_runtime_value(tmp_path: Path) -> None:
    # the kernel of dynamic_slice(x, (i, 0), (2, 8)) + 1: it reads i, wraps a negative i (jax's select), clamps to
    # [0, 2]; the analysis' runtime variable is bound to the same select, evaluated from i: proved for every i
    code, out, _ = _cli("audit-kernels", str(KERNELS))
    assert code == 0 and "PROVED   broadcast_add_fusion (after XLA's passes)" in out
    import shutil

    text = DS_KERNEL.read_text()
    assert text.count("%c2 = arith.constant 2 : index") == 1
    shutil.copy(next(KERNELS.glob("module_0012.*.txt")), tmp_path)
    (tmp_path / DS_KERNEL.name).write_text(text.replace("%c2 = arith.constant 2 : index",
                                                         "%c2 = arith.constant 3 : index"))  # a wrong clamp
    code, out, _ = _cli("audit-kernels", str(tmp_path))
    assert code == 1 and "REFUTED" in out
    m = re.search(r"output element \((\d+), (\d+)\), parameter 1 = (-?\d+): (the kernel|the analysis) reads parameter 0 "
                  r"element \((\d+), (\d+)\)", out)
    assert m is not None, out
    o = (int(m.group(1)), int(m.group(2)))
    i, element = int(m.group(3)), (int(m.group(5)), int(m.group(6)))
    module = parse_module(next(tmp_path.glob("*.txt")).read_text())
    ((_, comp),) = module.fusions()
    wrapped = i + 4 if i < 0 else i  # the select in the fused computation
    (ds,) = run(comp.by_name["dynamic_slice.0"], comp, {1: np.array(wrapped), 2: np.array(0)})
    truth = {x for k, x in ds[o] if k == 0}
    assert (element in truth) == (m.group(4) == "the analysis")


def test_a_gather_kernel_reading_its_indices_per_output_row(tmp_path: Path) -> None:
    # x[i] + 1: the kernel reads i[o0] (wrapped when negative, clamped to [0, 15]); the analysis' runtime variable
    # is bound to the same element of the same select: proved for every value of it
    gather = HERE / "kernels_dynamic"
    code, out, _ = _cli("audit-kernels", str(gather))
    assert code == 0 and "PROVED" in out, out
    import shutil

    kernel = next(gather.glob("*-pre-optimization.mlir"))
    shutil.copy(next(gather.glob("*.txt")), tmp_path)
    (tmp_path / kernel.name).write_text(kernel.read_text().replace("%c15 = arith.constant 15 : index",
                                                                   "%c15 = arith.constant 14 : index"))
    code, out, _ = _cli("audit-kernels", str(tmp_path))
    m = re.search(r"output element \((\d+), (\d+)\), parameter 1 element \((\d+)\) = (-?\d+): (the kernel|the analysis) "
                  r"reads parameter 0 element \((\d+), (\d+)\)", out)
    assert code == 1 and m is not None, out
    o, row, value = (int(m.group(1)), int(m.group(2))), int(m.group(3)), int(m.group(4))
    element = (int(m.group(6)), int(m.group(7)))
    assert row == o[0]  # the index the output row reads
    module = parse_module(next(tmp_path.glob("*.txt")).read_text())
    ((_, comp),) = module.fusions()
    indices = np.full((3, 1), value + 16 if value < 0 else value)  # the fused computation's wrap of negatives
    (g,) = run(comp.by_name["gather.2"], comp, {1: indices})
    truth = {x for k, x in g[o[0], 0, o[1]] if k == 0}
    assert (element in truth) == (m.group(5) == "the analysis")


def test_kernel_indices_the_interpreter_cannot_state_are_unknown_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "module_0001.jit__lambda.k_kernel_module-pre-optimization.mlir").write_text(
        SYNTHETIC_KERNEL.replace("CMP", "ult").replace("%x = arith.subi %arg1, %c1 : index",
                                                       "%x = arith.muli %arg1, %arg1 : index"))
    (tmp_path / "module_0001.jit__lambda.cpu_after_optimizations.txt").write_text(
        "HloModule m\nf {\n  p = f32[8] parameter(0)\n  ROOT s = f32[7] slice(p), slice={[1:8]}\n}\n"
        "ENTRY e {\n  x = f32[8] parameter(0)\n  ROOT k = f32[7] fusion(x), kind=kLoop, calls=f\n}\n")
    code, out, _ = _cli("audit-kernels", str(tmp_path))
    # the comparison is on x * x, a product the interpreter does not state: unknown, with the reason
    assert code == 2 and "UNKNOWN" in out and "not a comparison of indices" in out, out
    code, _, err = _cli("audit-kernels", str(HERE / "module.hlo"))
    assert code == 3 and "not a directory" in err


def test_a_kernel_writing_another_element_than_its_loop_is_not_proved(tmp_path: Path) -> None:
    import shutil

    for f in KERNELS.glob(PAD_KERNEL.name.split(".")[0] + ".*"):
        shutil.copy(f, tmp_path / f.name)
    text = PAD_KERNEL.read_text()
    assert "into %iter[%ra, %rb]" in text
    (tmp_path / PAD_KERNEL.name).write_text(text.replace("into %iter[%ra, %rb]", "into %iter[%rb, %ra]"))
    code, out, _ = _cli("audit-kernels", str(tmp_path))
    assert code == 2 and "other than the loop's output element" in out


SYNTHETIC_KERNEL = """module @k_kernel_module {
  func.func @k(%arg0: tensor<8xf32>, %arg1: tensor<7xf32>) -> tensor<7xf32> attributes {xla.entry} {
    %0 = xla.workgroup_id x {xla.range = [0 : index, 0 : index]}
    %3 = scf.forall (%a) in (1) shared_outs(%o = %arg1) -> (tensor<7xf32>) {
      %xla_loop = xla.loop (%a, %0)[%i] -> (%ra) in #xla.indexing_map<"(th_x, bl_x)[s0] -> (s0), domain: th_x in [0, 0], bl_x in [0, 0], s0 in [0, 6]"> iter_args(%iter = %o) -> (tensor<7xf32>) {
        %v = xla.pure_call @body(%arg0, %ra) : (tensor<8xf32>, index) -> f32
        %inserted = tensor.insert %v into %iter[%ra] : tensor<7xf32>
        xla.yield %inserted : tensor<7xf32>
      }
    }
    return %3 : tensor<7xf32>
  }
  func.func private @body(%arg0: tensor<8xf32>, %arg1: index) -> f32 {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %x = arith.subi %arg1, %c1 : index
    %in = arith.cmpi CMP, %x, %c4 : index
    %r = scf.if %in -> (f32) {
      %e = tensor.extract %arg0[%x] : tensor<8xf32>
      scf.yield %e : f32
    } else {
      %z = arith.constant 0.0 : f32
      scf.yield %z : f32
    }
    return %r : f32
  }
}
"""


@pytest.mark.parametrize(("cmp", "outputs"), [("ult", {1, 2, 3, 4}), ("slt", {0, 1, 2, 3, 4})])
def test_kernel_comparisons_are_read_with_their_signedness(cmp: str, outputs: set[int]) -> None:
    # unsigned: x = o - 1 is below 4 only for 0 <= x (a negative index is a huge unsigned number)
    got = _kernel_relation(SYNTHETIC_KERNEL.replace("CMP", cmp), 0)
    assert {o for (o,) in got} == outputs and all(v == {(o - 1,)} for (o,), v in got.items())


def test_mutated_kernels_give_verdicts_never_tracebacks() -> None:
    import random

    from verified_indexing.hlo.kernels import audit_kernel

    rng = random.Random(11)
    module = parse_module(next(KERNELS.glob("module_0034.*.txt")).read_text())
    tokens = ["(", ")", "{", "}", ",", "\n", " ", "%arg0", "%c1", "arith.addi", "scf.if", "[", "]", "xla.loop", "d0"]
    for kernel in (PAD_KERNEL, PAD_KERNEL_AFTER):
        for _ in range(15):
            text = kernel.read_text()
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(len(text))
                text = text[:i] + text[i + rng.randint(1, 6):] if rng.random() < 0.5 else \
                    text[:i] + rng.choice(tokens) + text[i:]
            assert audit_kernel(text, module, "mutated").status in ("proved", "refuted", "unknown")


DUS_KERNEL = next(KERNELS.glob("module_0124.*-pre-optimization.mlir"))


def test_a_dynamic_update_slice_kernel_against_the_exact_reads(tmp_path: Path) -> None:
    # the spec's maps of src and update over-approximate; the kernel reads src outside the window and the update
    # inside it, exactly what ops.dus_exact_o2i says (proved with the 9 of the directory above); a window end off by
    # one row (src read inside the window's last row) is refuted, the element checked by the interpreter
    import shutil

    text = DUS_KERNEL.read_text()
    assert text.count("%c2_1 = arith.constant 2 : index") == 1
    shutil.copy(next(KERNELS.glob("module_0124.*.txt")), tmp_path)
    (tmp_path / DUS_KERNEL.name).write_text(text.replace("%c2_1 = arith.constant 2 : index",
                                                         "%c2_1 = arith.constant 1 : index"))
    code, out, _ = _cli("audit-kernels", str(tmp_path))
    assert code == 1 and "REFUTED" in out, out
    m = re.search(r"output element \((\d+), (\d+)\), parameter 2 = (-?\d+): (the kernel|the analysis) reads parameter "
                  r"(\d) element \((\d+), (\d+)\)", out)
    assert m is not None, out
    o, i, k = (int(m.group(1)), int(m.group(2))), int(m.group(3)), int(m.group(5))
    element = (int(m.group(6)), int(m.group(7)))
    module = parse_module(next(tmp_path.glob("*.txt")).read_text())
    ((_, comp),) = module.fusions()
    dus = comp.by_name["dynamic_update_slice.0"]
    wrap = next(x for x in comp.instructions if x.name == dus.operands[2])
    assert wrap.opcode == "select"
    add = comp.by_name[wrap.operands[1]]
    (shift,) = (int(comp.by_name[x].literal or "") for x in add.operands if comp.by_name[x].opcode == "constant")
    wrapped = i + shift if i < 0 else i  # jax's wrap of a negative index, as the fused computation computes it
    (out_dus,) = run(dus, comp, {2: np.array(wrapped), 3: np.array(0)})
    truth = {x for kk, x in out_dus[o] if kk == k}
    assert (element in truth) == (m.group(4) == "the analysis")


def test_xlas_dynamic_update_slice_map_inside_a_fusion_over_approximates() -> None:
    # the fusion multiplies the updated tensor by 2: the root reads the dynamic-update-slice element for element
    module = parse_module(next(KERNELS.glob("module_0124.*.txt")).read_text())
    claim = "operand id = 0 (d0, d1) -> (d0, d1), domain: d0 in [0, 3], d1 in [0, 7]"
    (r,) = audit(module, parse_claims(claim))
    assert r.status == "over-approximates" and r.counterexample is not None, r.steps
    at = dict(r.counterexample.values)
    ((_, comp),) = module.fusions()
    dus = comp.by_name["dynamic_update_slice.0"]
    (out,) = run(dus, comp, {2: np.array(at["rt0"]), 3: np.array(0)})
    assert r.counterexample.source not in {x for k, x in out[at["d0"], at["d1"]] if k == 0}
