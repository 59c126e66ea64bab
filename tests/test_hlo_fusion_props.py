"""Property test: random chains of data-movement ops (transpose, reverse, slice,
reshape, broadcast, pad, reduce, concatenate, elementwise with two paths) on small
shapes; the composed, simplified, merged maps read exactly what the numpy oracle
(run through the whole computation) says each output element reads, in both
directions, and every map is proven."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from test_hlo_fusion import _reads_from_maps, _run_computation

from verified_indexing.hlo.fusion import input_to_output_maps, output_to_input_maps
from verified_indexing.hlo.parser import parse_hlo_snippet

REDUCER = "add_f { a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b) }\n"


def _shape(dims: list[int]) -> str:
    return "f32[" + ",".join(str(d) for d in dims) + "]"


@st.composite
def chains(draw: st.DrawFn) -> str:
    rank = draw(st.integers(1, 3))
    dims = [draw(st.integers(1, 4)) for _ in range(rank)]
    lines = [f"  p0 = {_shape(dims)} parameter(0)", "  zero = f32[] constant(0)"]
    cur = "p0"
    for k in range(draw(st.integers(1, 4))):
        name = f"v{k}"
        op = draw(st.sampled_from(["transpose", "reverse", "slice", "reshape", "broadcast", "pad", "reduce",
                                   "concat", "two_paths"]))
        if op == "transpose":
            perm = draw(st.permutations(range(len(dims))))
            dims = [dims[p] for p in perm]
            lines.append(f"  {name} = {_shape(dims)} transpose({cur}), dimensions={{{','.join(map(str, perm))}}}")
        elif op == "reverse":
            rev = sorted(draw(st.sets(st.integers(0, len(dims) - 1))))
            lines.append(f"  {name} = {_shape(dims)} reverse({cur}), dimensions={{{','.join(map(str, rev))}}}")
        elif op == "slice":
            parts, new = [], []
            for n in dims:
                start = draw(st.integers(0, n - 1))
                limit = draw(st.integers(start + 1, n))
                stride = draw(st.integers(1, 3))
                parts.append(f"[{start}:{limit}:{stride}]")
                new.append((limit - start + stride - 1) // stride)
            dims = new
            lines.append(f"  {name} = {_shape(dims)} slice({cur}), slice={{{', '.join(parts)}}}")
        elif op == "reshape":
            total = int(np.prod(dims))
            divisors = [d for d in range(1, total + 1) if total % d == 0]
            a = draw(st.sampled_from(divisors))
            dims = draw(st.sampled_from([[total], [a, total // a], [total // a, a]]))
            lines.append(f"  {name} = {_shape(dims)} reshape({cur})")
        elif op == "broadcast":
            if len(dims) >= 3:
                continue
            pos = draw(st.integers(0, len(dims)))
            size = draw(st.integers(1, 3))
            kept = [i if i < pos else i + 1 for i in range(len(dims))]
            dims = [*dims[:pos], size, *dims[pos:]]
            lines.append(f"  {name} = {_shape(dims)} broadcast({cur}), dimensions={{{','.join(map(str, kept))}}}")
        elif op == "pad":
            cfg, new = [], []
            for n in dims:
                lo, hi, inner = draw(st.integers(-1, 2)), draw(st.integers(-1, 2)), draw(st.integers(0, 1))
                size = lo + hi + n + max(n - 1, 0) * inner
                if size < 1:
                    lo, hi = 0, 0
                    size = n + max(n - 1, 0) * inner
                cfg.append(f"{lo}_{hi}_{inner}")
                new.append(size)
            dims = new
            lines.append(f"  {name} = {_shape(dims)} pad({cur}, zero), padding={'x'.join(cfg)}")
        elif op == "reduce":
            if len(dims) == 1:
                continue
            d = draw(st.integers(0, len(dims) - 1))
            dims = dims[:d] + dims[d + 1 :]
            lines.append(f"  {name} = {_shape(dims)} reduce({cur}, zero), dimensions={{{d}}}, to_apply=add_f")
        elif op == "concat":
            d = draw(st.integers(0, len(dims) - 1))
            dims = [n * 2 if i == d else n for i, n in enumerate(dims)]
            lines.append(f"  {name} = {_shape(dims)} concatenate({cur}, {cur}), dimensions={{{d}}}")
        else:  # two paths that meet again: x + reverse(x)
            lines.append(f"  {name}r = {_shape(dims)} reverse({cur}), dimensions={{0}}")
            lines.append(f"  {name} = {_shape(dims)} add({cur}, {name}r)")
        cur = name
    lines.append(f"  ROOT out = {_shape(dims)} negate({cur})")
    return REDUCER + "ENTRY f {\n" + "\n".join(lines) + "\n}\n"


@settings(max_examples=60)
@given(chains())
def test_random_chains_read_what_the_oracle_reads(text: str) -> None:
    comp = parse_hlo_snippet(text)
    result = output_to_input_maps(comp)
    assert not result.unsupported, text
    for v in result.verdicts():
        assert v.proved, (text, v)
    reads = _reads_from_maps(result)
    values = _run_computation(comp)[comp.root.name]
    for idx in np.ndindex(*comp.root.shape.dims):
        got = {r for r in reads.get(tuple(idx), set()) if r[0] == 0}
        assert got == set(values[idx]), (text, idx)
    # Input to output is the inverse relation.
    pairs = {(d, a.map.evaluate(d, s, r)) for a in result.targets[0].maps for d, s, r in a.map.domain_points()}
    back = input_to_output_maps(comp, 0)
    assert not back.unsupported, text
    inverse = {(a.map.evaluate(d, s, r), d) for a in back.targets[0].maps for d, s, r in a.map.domain_points()}
    assert inverse == pairs, text
    for v in back.verdicts():
        assert v.proved
