"""JAX as JAX users write it (issue 28 item 4): ``analyze(f, *args, jit=dict(...), backend=..., **kwargs)``
with the function's own keyword arguments traced, a pytree argument, jit options given apart, a
pre-jitted function, ``Lowered`` / ``Compiled`` stages and an exported function; the entry parameters
named by the user's arguments (pytree paths). Every map is checked against the numpy oracle of the fused
computation (tests/test_hlo_fusion.py), the names against JAX's own flattening of the arguments."""

from __future__ import annotations

import numpy as np
import pytest
from test_hlo_fusion import _reads_from_maps, _run_computation

import verified_indexing.jax as vi_jax
from verified_indexing.errors import VerifiedIndexingError

jax = pytest.importorskip("jax")
jnp = jax.numpy

X = jax.ShapeDtypeStruct((4, 8), jnp.float32)
PARAMS = {"w": jax.ShapeDtypeStruct((8, 6), jnp.float32), "b": jax.ShapeDtypeStruct((6,), jnp.float32)}


def layer(x: object, params: dict[str, object], *, scale: object) -> object:
    return jnp.tanh(x @ params["w"] + params["b"]) * scale  # type: ignore[operator]


def reduce_then_scale(x: object, axis: int) -> object:
    return jnp.sum(jnp.exp(x), axis=axis) * 2.0  # type: ignore[arg-type]


def _check_against_the_oracle(a: vi_jax.JaxAnalysis) -> None:
    assert a.results
    for r in a.results:
        comp = a.module.computations[r.computation]
        assert not r.unsupported
        reads = _reads_from_maps(r)
        values = _run_computation(comp)[comp.root.name]
        for idx in np.ndindex(*comp.root.shape.dims):
            assert reads.get(tuple(idx), set()) == set(values[idx]), (r.fusion, idx)


def test_keyword_and_pytree_arguments_named_by_the_user() -> None:
    a = vi_jax.analyze(layer, X, PARAMS, scale=jax.ShapeDtypeStruct((), jnp.float32))
    _check_against_the_oracle(a)
    # independent: JAX's own flattening of the same call, in the entry's parameter order
    leaves = jax.tree_util.tree_flatten_with_path(((X, PARAMS), {"scale": 0.0}))[0]
    assert len(leaves) == len(a.module.entry.parameters()) == 4
    assert a.argument_names == ["x", "params['b']", "params['w']", "scale"]
    for p in a.module.entry.parameters():  # each parameter's shape is its argument's
        name = a.argument_names[p.parameter_number or 0]
        want = {"x": (4, 8), "params['b']": (6,), "params['w']": (8, 6), "scale": ()}[name]
        assert tuple(p.shape.dims) == want, (name, p.shape)
    named = [n for r in a.results if r.fusion for n in a.operand_names(r.fusion) if n]
    assert any(n.endswith("(params['w'])") for n in named) and any(n.endswith("(x)") for n in named)
    assert len(repr(a)) < 300 and "params['w']" in repr(a)


def test_jit_options_given_apart_and_a_static_argument() -> None:
    a = vi_jax.analyze(reduce_then_scale, X, 1, jit=dict(static_argnums=1))
    _check_against_the_oracle(a)
    assert a.argument_names == ["x"]
    b = vi_jax.analyze(reduce_then_scale, X, 0, jit=dict(static_argnames="axis"))
    assert b.argument_names == ["x"]
    # the two reductions read different elements: the static argument reached JAX
    assert {r.computation for r in a.results} and a.hlo != b.hlo


def test_a_pre_jitted_function_lowered_compiled_and_exported() -> None:
    jitted = jax.jit(layer)
    scale = jax.ShapeDtypeStruct((), jnp.float32)
    direct = vi_jax.analyze(layer, X, PARAMS, scale=scale)
    pre = vi_jax.analyze(jitted, X, PARAMS, scale=scale)
    _check_against_the_oracle(pre)
    assert pre.argument_names == direct.argument_names
    lowered = jitted.lower(X, PARAMS, scale=scale)
    for stage in (lowered, lowered.compile()):
        s = vi_jax.analyze(stage)
        _check_against_the_oracle(s)
        maps = sorted(m.map.format(one_line=True) for r in s.results for t in r.targets for m in t.maps)
        assert maps == sorted(m.map.format(one_line=True) for r in pre.results for t in r.targets for m in t.maps)
    exported = jax.export.export(jax.jit(lambda x: jnp.exp(x).T))(X)
    e = vi_jax.analyze(exported)
    _check_against_the_oracle(e)
    assert [m.map.format(one_line=True) for r in e.results for t in r.targets for m in t.maps] == [
        "(d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3]"]


def test_misuse_is_refused_with_a_reason() -> None:
    with pytest.raises(VerifiedIndexingError, match=r"already jax\.jit-wrapped"):
        vi_jax.analyze(jax.jit(layer), X, PARAMS, scale=1.0, jit=dict(static_argnums=0))
    with pytest.raises(VerifiedIndexingError, match="already specialized"):
        vi_jax.analyze(jax.jit(jnp.exp).lower(X), X)
    with pytest.raises(VerifiedIndexingError, match="backend 'no-such-platform'"):
        vi_jax.analyze(jnp.exp, X, backend="no-such-platform")
    with pytest.raises(VerifiedIndexingError, match="could not trace"):
        vi_jax.analyze(layer, X, PARAMS)  # scale missing


def test_backend_by_name_and_default() -> None:
    a = vi_jax.analyze(jnp.exp, X, backend="cpu")
    b = vi_jax.analyze(jnp.exp, X)  # JAX's default device (the CPU here)
    assert [r.computation for r in a.results] == [r.computation for r in b.results]


def test_a_notebook_shows_a_summary_the_cli_text_and_the_graph() -> None:
    import shutil

    import pydot

    a = vi_jax.analyze(layer, X, PARAMS, scale=jax.ShapeDtypeStruct((), jnp.float32))
    assert len(repr(a)) < 300
    text = str(a)
    assert text.splitlines()[-1].startswith(f"summary: {len({r.fusion for r in a.results})} fusions")
    for r in a.results:
        assert f"fusion {r.fusion} ({r.computation}): output to input" in text
    (graph,) = pydot.graph_from_dot_data(a.to_dot())  # an independent DOT reader
    clusters = {g.get_name().strip('"') for g in graph.get_subgraphs()}
    assert len(clusters) >= len({r.fusion for r in a.results}), clusters
    svg = a._repr_svg_()  # Graphviz when installed, else the pure-Python layout (verified_indexing._svg)
    assert svg is not None and "<svg" in svg
    if shutil.which("dot") is None:  # every fusion cluster's nodes are drawn (tests/test_notebook.py checks more)
        assert all(f"<title>{r.fusion}/" in svg for r in a.results)


def test_cli_takes_several_argument_shapes_in_one_args() -> None:
    import contextlib
    import io
    from pathlib import Path

    from verified_indexing.cli import main
    from verified_indexing.cli.analyze import split_shapes

    assert split_shapes("f32[8,128], f32[128]") == ["f32[8,128]", "f32[128]"]
    assert split_shapes("f32[8,128]{1,0} s32[]") == ["f32[8,128]{1,0}", "s32[]"]
    assert split_shapes("f32[8,128]") == ["f32[8,128]"]
    example = Path(__file__).resolve().parent.parent / "examples" / "jax" / "layer_norm.py"
    outputs = []
    for args in (["--args", "f32[8,128]", "--args", "f32[128]"], ["--args", "f32[8,128], f32[128]"]):
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            code = main(["analyze", "--jax", f"{example}:layer_norm", *args, "--no-timing"])
        assert code == 0
        outputs.append(out.getvalue())
    assert outputs[0] == outputs[1] and "fusion" in outputs[0]


def test_a_tuple_shape_in_args_stays_one_value() -> None:
    from verified_indexing.cli.analyze import split_shapes

    assert split_shapes("(f32[8], f32[8])") == ["(f32[8], f32[8])"]  # refused later as a tuple, named whole
    assert split_shapes("(f32[8], f32[8]), s32[]") == ["(f32[8], f32[8])", "s32[]"]
