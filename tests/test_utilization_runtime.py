"""Utilization with runtime values (issue 26, item 11): variables reading one
source element with different clamps hold one value per run, and a
dynamic-slice with too many offset values to enumerate is decided symbolically.

The oracle runs the module: for a concrete value of every offset parameter,
the tagged numpy interpreter (tests/hlo_oracle.py, which clamps a
dynamic-slice's start as the HLO semantics say) gives the elements each output
element is computed from; the elements of operand 0 read in that run are
counted. No indexing map is used.
"""

from __future__ import annotations

import itertools
import json

import hlo_oracle
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from verified_indexing.hlo.fusion import topological_order
from verified_indexing.hlo.parser import parse_module
from verified_indexing.hlo.utilization import RUNTIME_LIMIT, operand_utilization

Tags = frozenset[tuple[int, tuple[int, ...]]]


def run_reads(text: str, offsets: dict[str, int]) -> tuple[int, int]:
    """(distinct elements of parameter 0 read, (output element, element) pairs)
    in the run where each named s32 parameter (or constant) holds the given value."""
    module = parse_module(text)
    comp = module.computations[module.entry_name]
    values: dict[str, np.ndarray] = {}
    for inst in topological_order(comp):
        dims = inst.shape.dims
        if inst.opcode == "parameter":
            values[inst.name] = hlo_oracle.tagged(dims, inst.parameter_number or 0)
            continue
        if inst.opcode == "constant":  # its value, when an offset, is given in ``offsets``
            values[inst.name] = np.full(dims, frozenset(), dtype=object)
            continue
        local = hlo_oracle.run(inst, comp, {k: np.array(offsets[n]) for k, n in enumerate(inst.operands)
                                            if n in offsets})[0]
        res = np.empty(dims, dtype=object)
        for idx in np.ndindex(*dims):
            acc: Tags = frozenset()
            for k, x in local[idx]:
                acc |= values[inst.operands[k]][x]
            res[idx] = acc
        values[inst.name] = res
    out = values[comp.root.name]
    elements: set[tuple[int, ...]] = set()
    pairs = 0
    for idx in np.ndindex(*out.shape):
        mine = {x for k, x in out[idx] if k == 0}
        elements |= mine
        pairs += len(mine)
    return len(elements), pairs


# o is read by two dynamic-slices: clamped to [0, 8] for 8 elements, to [0, 12]
# for 4. For o <= 8 both start at o; above, the first starts at 8 and the second
# at o <= 12, inside [8, 16): every run reads exactly 8 elements.
TWO_CLAMPS = """HloModule m
ENTRY e {
  p0 = f32[16]{0} parameter(0)
  o = s32[] parameter(1)
  d1 = f32[8]{0} dynamic-slice(p0, o), dynamic_slice_sizes={8}
  d2 = f32[4]{0} dynamic-slice(p0, o), dynamic_slice_sizes={4}
  ROOT c = f32[12]{0} concatenate(d1, d2), dimensions={0}
}
"""


def test_one_source_two_clamps_is_one_value_per_run() -> None:
    # was: "read 8..12; the worst case is reported" (the two clamps enumerated independently)
    runs = {run_reads(TWO_CLAMPS, {"o": x}) for x in range(-3, 20)}
    assert runs == {(8, 12)}  # the oracle: 8 elements, 12 accesses in every run
    entry = operand_utilization(parse_module(TWO_CLAMPS))[0]
    assert (entry.elements_read, entry.elements_read_min, entry.accesses) == (8, 8, 12), entry.format()
    assert entry.exact and entry.runtime is not None and "8 in every run" in entry.runtime


# Two different offsets, one clamp each: the runs do differ (the worst case stays the worst case).
TWO_SOURCES = TWO_CLAMPS.replace("  o = s32[] parameter(1)\n", "  o = s32[] parameter(1)\n  q = s32[] parameter(2)\n"
                                 ).replace("dynamic-slice(p0, o), dynamic_slice_sizes={4}",
                                           "dynamic-slice(p0, q), dynamic_slice_sizes={4}")


def test_two_sources_are_still_enumerated_jointly() -> None:
    counts = {run_reads(TWO_SOURCES, {"o": x, "q": y})[0] for x in range(0, 9) for y in range(0, 13)}
    entry = operand_utilization(parse_module(TWO_SOURCES))[0]
    assert (entry.elements_read_min, entry.elements_read) == (min(counts), max(counts)) == (8, 12)
    assert not entry.exact


DS_2D = """HloModule m
ENTRY e {
  p0 = f32[64,64]{1,0} parameter(0)
  i = s32[] parameter(1)
  j = s32[] parameter(2)
  ROOT d = f32[4,8]{1,0} dynamic-slice(p0, i, j), dynamic_slice_sizes={4,8}
}
"""


def test_dynamic_slice_with_many_offsets_is_decided_symbolically() -> None:
    # was: "more than 256 runtime-value combinations: upper bounds" (exact false)
    assert 61 * 57 > RUNTIME_LIMIT
    sample = [-5, 0, 1, 30, 56, 57, 60, 61, 100]
    assert {run_reads(DS_2D, {"i": x, "j": y}) for x, y in itertools.product(sample, sample)} == {(32, 32)}
    entry = operand_utilization(parse_module(DS_2D))[0]
    assert entry.exact, entry.format()
    assert (entry.elements_read, entry.elements_read_min, entry.accesses) == (32, 32, 32)
    assert entry.runtime is not None and "decided symbolically" in entry.runtime


# Two windows of one 1-D operand at independent offsets: they overlap in some runs
# (8 elements) and not in others (16). Too many values to enumerate, and not the
# same in every run: upper bounds, never "exact".
OVERLAP = """HloModule m
ENTRY e {
  p0 = f32[600]{0} parameter(0)
  o = s32[] parameter(1)
  q = s32[] parameter(2)
  d1 = f32[8]{0} dynamic-slice(p0, o), dynamic_slice_sizes={8}
  d2 = f32[8]{0} dynamic-slice(p0, q), dynamic_slice_sizes={8}
  ROOT c = f32[16]{0} concatenate(d1, d2), dimensions={0}
}
"""


def test_runs_that_differ_are_not_called_exact() -> None:
    assert run_reads(OVERLAP, {"o": 0, "q": 0})[0] == 8 and run_reads(OVERLAP, {"o": 0, "q": 100})[0] == 16
    entry = operand_utilization(parse_module(OVERLAP))[0]
    assert not entry.exact, entry.format()
    assert entry.elements_read is not None and entry.elements_read >= 16
    assert entry.runtime is not None and "upper bounds" in entry.runtime


def test_disjoint_windows_at_many_offsets_are_exact() -> None:
    # two windows of two different operands' rows: never overlapping, 16 in every run
    text = """HloModule m
ENTRY e {
  p0 = f32[2,300]{1,0} parameter(0)
  o = s32[] parameter(1)
  z = s32[] constant(0)
  one = s32[] constant(1)
  d1 = f32[1,8]{1,0} dynamic-slice(p0, z, o), dynamic_slice_sizes={1,8}
  d2 = f32[1,8]{1,0} dynamic-slice(p0, one, o), dynamic_slice_sizes={1,8}
  ROOT c = f32[2,8]{1,0} concatenate(d1, d2), dimensions={0}
}
"""
    assert {run_reads(text, {"o": x, "z": 0, "one": 1}) for x in (-1, 0, 5, 292, 293, 400)} == {(16, 16)}
    entry = operand_utilization(parse_module(text))[0]
    assert entry.exact and entry.elements_read == 16 and entry.accesses == 16, entry.format()


def test_one_source_two_clamps_beyond_enumeration_is_decided_symbolically() -> None:
    # TWO_CLAMPS on a 600-element operand: 597 values of o; the 4-element window
    # always lies inside the 8-element one, so every run reads 8 (12 accesses)
    text = TWO_CLAMPS.replace("f32[16]{0} parameter(0)", "f32[600]{0} parameter(0)")
    assert {run_reads(text, {"o": x}) for x in (-2, 0, 1, 300, 591, 592, 593, 595, 596, 597, 700)} == {(8, 12)}
    entry = operand_utilization(parse_module(text))[0]
    assert entry.exact, entry.format()
    assert (entry.elements_read, entry.elements_read_min, entry.accesses) == (8, 8, 12)
    assert entry.runtime is not None and "decided symbolically" in entry.runtime


REDUCED_WINDOW = """HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p0 = f32[600,4]{1,0} parameter(0)
  o = s32[] parameter(1)
  z = s32[] constant(0)
  c = f32[] constant(0)
  d = f32[8,4]{1,0} dynamic-slice(p0, o, z), dynamic_slice_sizes={8,4}
  ROOT r = f32[8]{0} reduce(d, c), dimensions={1}, to_apply=add
}
"""


def test_a_reduced_window_beyond_enumeration_is_decided_symbolically() -> None:
    # loop variables (the reduction) among the reads: 32 elements, 32 accesses in every run
    assert {run_reads(REDUCED_WINDOW, {"o": x, "z": 0}) for x in (-1, 0, 7, 591, 592, 593, 1000)} == {(32, 32)}
    entry = operand_utilization(parse_module(REDUCED_WINDOW))[0]
    assert entry.exact, entry.format()
    assert (entry.elements_read, entry.accesses) == (32, 32)


@st.composite
def windows(draw: st.DrawFn) -> tuple[str, list[str]]:
    """Two dynamic-slice windows of one 1-D operand (too many offsets to
    enumerate), at one offset or two, concatenated or (same size) added."""
    n = draw(st.integers(300, 400))
    a = draw(st.integers(1, 8))
    b = draw(st.integers(1, 8))
    same = draw(st.booleans())
    join = "add" if a == b and draw(st.booleans()) else "concatenate"
    q = "o" if same else "q"
    root = (f"  ROOT r = f32[{a}]{{0}} add(d1, d2)" if join == "add"
            else f"  ROOT r = f32[{a + b}]{{0}} concatenate(d1, d2), dimensions={{0}}")
    text = f"""HloModule m
ENTRY e {{
  p0 = f32[{n}]{{0}} parameter(0)
  o = s32[] parameter(1)
  q = s32[] parameter(2)
  d1 = f32[{a}]{{0}} dynamic-slice(p0, o), dynamic_slice_sizes={{{a}}}
  d2 = f32[{b}]{{0}} dynamic-slice(p0, {q}), dynamic_slice_sizes={{{b}}}
{root}
}}
"""
    return text, ["o"] if same else ["o", "q"]


@settings(max_examples=12, deadline=None)
@given(windows(), st.lists(st.integers(-5, 410), min_size=4, max_size=6))
def test_runtime_counts_bound_every_run(w: tuple[str, list[str]], picks: list[int]) -> None:
    """Every sampled run (offsets at the ends and at random) reads at most the
    reported count and at least the reported minimum; an exact entry is every run's count."""
    text, offsets = w
    entry = operand_utilization(parse_module(text))[0]
    assert entry.status == "ok" and entry.elements_read is not None, entry.format()
    values = [0, 10_000, *picks]
    runs = {run_reads(text, dict(zip(offsets, combo))) for combo in itertools.product(values, repeat=len(offsets))}
    assert all(n <= entry.elements_read for n, _ in runs), (text, entry.format(), runs)
    if entry.exact:
        assert runs == {(entry.elements_read, entry.accesses)}, (text, entry.format(), runs)
    elif entry.elements_read_min is not None:
        assert all(n >= entry.elements_read_min for n, _ in runs)


def test_json_reports_of_the_reproducers_follow_the_schema(capsys: pytest.CaptureFixture[str]) -> None:
    """utilization of a module without fusion (``fusion: null``; the schema said a string) and
    coalescing of coalesced, uniform and unknown operands (``witness`` and ``lanes`` null: the
    schema said an object and a verdict)."""
    from test_cli_io import assert_valid
    from test_coalescing_paths import CONCAT_TWICE, TILED

    from verified_indexing.cli import main

    runs = [(["utilization", "--json", "-e", DS_2D], 0),
            (["utilization", "--json", "-e", TWO_CLAMPS], 0),
            (["coalescing", "--json", "-e", CONCAT_TWICE], 1),
            (["coalescing", "--json", "-e", TILED], 1),
            (["coalescing", "--json", "--vector-size", "4", "-e", TILED.replace("T(2,4)", "T(2,2)")], 1),
            # coalesced and uniform operands (no witness), an unknown one (no verdict)
            (["coalescing", "--json", "examples/jax_hlo/softmax.post.hlo", "--computation", "fused_computation"], 0),
            (["coalescing", "--json", "-e", TILED.replace("T(2,4)", "D(D,C)")], 2)]
    for args, code in runs:
        assert main(args) == code, args
        doc = json.loads(capsys.readouterr().out)
        assert_valid(doc)
        if args[0] == "utilization":
            assert doc["operands"][0]["fusion"] is None and doc["operands"][0]["exact"] is True
