"""The asynchronous collective pairs XLA prints (all-reduce-start / all-reduce-done, array and variadic;
all-gather-start / -done; collective-permute-start / -done; copy-start / -done) through the fusion walk,
against the numpy interpreter of HLO (tests/hlo_oracle.py) run op by op: the -start by the oracle, the
-done taking its result (element 1 of the start's tuple, 0 for copy-done; the array itself for an array
all-reduce-start), then a reverse so the maps are not the identity."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np
import pytest
from hlo_oracle import compose_tags, run, tagged

from verified_indexing.hlo.fusion import output_to_input_maps
from verified_indexing.hlo.parser import parse_module

PAIRS = {
    "all-reduce (array)": """
  s = f32[4,3] all-reduce-start(p), replica_groups={{0,1}}, to_apply=add
  d = f32[4,3] all-reduce-done(s)""",
    "all-reduce (variadic)": """
  s = (f32[4,3], f32[4,3]) all-reduce-start(q, p), replica_groups={{0,1}}, to_apply=add
  t = (f32[4,3], f32[4,3]) all-reduce-done(s)
  d = f32[4,3] get-tuple-element(t), index=1""",
    "all-gather": """
  s = (f32[2,3], f32[4,3]) all-gather-start(h), replica_groups={{0,1}}, dimensions={0}
  d = f32[4,3] all-gather-done(s)""",
    "collective-permute": """
  s = (f32[4,3], f32[4,3], u32[], u32[]) collective-permute-start(p), source_target_pairs={{0,1},{1,0}}
  d = f32[4,3] collective-permute-done(s)""",
    "copy": """
  s = (f32[4,3], f32[4,3], u32[]) copy-start(p)
  d = f32[4,3] copy-done(s)""",
}


def _text(body: str) -> str:
    return ("HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT z = f32[] add(x, y)\n}\n"
            "ENTRY main {\n  p = f32[4,3] parameter(0)\n  q = f32[4,3] parameter(1)\n"
            "  h = f32[2,3] slice(p), slice={[1:3], [0:3]}" + body + "\n  ROOT r = f32[4,3] reverse(d), dimensions={0}\n}\n")


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_async_collective_pairs_read_what_the_interpreter_says(pair: str) -> None:
    module = parse_module(_text(PAIRS[pair]))
    comp = module.entry
    values: dict[str, Any] = {}  # an array, or a list of arrays for a tuple
    for inst in comp.instructions:
        if inst.opcode == "parameter":
            values[inst.name] = tagged(inst.shape.dims, inst.parameter_number or 0)
            continue
        if inst.opcode.endswith("-done") or inst.opcode == "get-tuple-element":
            start = values[inst.operands[0]]
            if inst.opcode == "get-tuple-element":
                values[inst.name] = start[inst.tuple_index or 0]
            elif inst.opcode == "all-reduce-done":  # the reduced array, or the tuple of a variadic one
                values[inst.name] = start
            else:  # element 1 of the start's tuple (the result), 0 for copy-done
                values[inst.name] = start[0 if inst.opcode == "copy-done" else 1]
            continue
        outs = run(inst, comp, {-2: np.array(2)})
        mapped_all = [compose_tags(res, [values[o] for o in inst.operands]) for res in outs]
        values[inst.name] = mapped_all if inst.shape.is_tuple else mapped_all[0]
    final = values[comp.root.name]
    want = {tuple(int(i) for i in idx): set(final[idx]) for idx in np.ndindex(*final.shape)}
    result = output_to_input_maps(comp, module=module)
    assert not result.unsupported, result.unsupported
    got: dict[tuple[int, ...], set[tuple[int, tuple[int, ...]]]] = defaultdict(set)
    for target in result.targets:
        for access in target.maps:
            for d, s, r in access.map.domain_points():
                got[d].add((target.index, access.map.evaluate(d, s, r)))
    # a per-device map may hold a replica variable (all-gather): every replica's element is the same tag here
    assert {o: got.get(o, set()) for o in want} == want, pair
