"""The JAX front door: the proven indexing maps of a jitted function's fusions.

:func:`analyze` lowers and compiles a function with JAX on the CPU backend, takes
the optimized HLO XLA compiled (``jax.jit(fn).lower(*args).compile().as_text()``:
after the fusion passes, so its fusions are the ones XLA runs) and runs the same
analysis as ``verified-indexing analyze`` on it. :func:`shape_spec` turns HLO shape
text (``f32[8,128]``) into a ``jax.ShapeDtypeStruct``; :func:`load_function`
resolves ``module:function`` as the CLI's ``analyze --jax`` does.

jax is an optional dependency (``pip install 'verified-indexing[jax]'``); it is
imported when one of these functions runs, never when this module is imported.

Promises: the maps are those of :func:`verified_indexing.hlo.analyze_module` on
the compiled module (each proven equal to the exact composition of the per-op
maps, see docs/hlo.md); nothing here changes or guesses a map. Bad specs and
functions JAX cannot trace raise :class:`~verified_indexing.errors.VerifiedIndexingError`.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from verified_indexing.errors import ParseError, VerifiedIndexingError
from verified_indexing.hlo.fusion import ComputationIndexing
from verified_indexing.hlo.ir import Module
from verified_indexing.hlo.loader import JAX_INSTALL_HINT

__all__ = ["JaxAnalysis", "analyze", "compiled_hlo", "shape_spec", "load_function", "ELEMENT_TYPES"]

#: HLO element types and the numpy/JAX dtype names they stand for.
ELEMENT_TYPES = {
    "pred": "bool",
    "s8": "int8",
    "s16": "int16",
    "s32": "int32",
    "s64": "int64",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "f16": "float16",
    "bf16": "bfloat16",
    "f32": "float32",
    "f64": "float64",
    "c64": "complex64",
    "c128": "complex128",
}


@dataclass
class JaxAnalysis:
    """What :func:`analyze` returns: the compiled module's HLO text, the parsed
    module and the analyses (one per fusion and output, as ``analyze`` prints them)."""

    hlo: str
    module: Module
    results: list[ComputationIndexing]


def _jax() -> Any:
    try:
        import jax
    except ImportError:
        raise VerifiedIndexingError(f"the JAX front door needs jax: {JAX_INSTALL_HINT}") from None
    return jax


def shape_spec(text: str, source: str = "--args") -> Any:
    """A ``jax.ShapeDtypeStruct`` from HLO shape text: ``f32[8,128]``, ``s32[]``,
    ``bf16[4,4]`` (a layout ``{1,0}`` is accepted and ignored; tuples and dynamic
    dimensions are refused). Raises :class:`ParseError` with the offending text."""
    from verified_indexing.hlo.parser import parse_shape

    shape = parse_shape(text, source)
    if shape.is_tuple:
        raise ParseError("an example argument is one array, not a tuple shape", text, 0, len(text), source)
    if shape.is_dynamic:
        raise ParseError("an example argument needs static dimensions", text, 0, len(text), source)
    dtype = ELEMENT_TYPES.get(shape.element_type)
    if dtype is None:
        raise ParseError(
            f"unknown element type {shape.element_type!r} (known: {', '.join(ELEMENT_TYPES)})",
            text,
            len(text) - len(text.lstrip()),
            len(shape.element_type),
            source,
        )
    jax = _jax()
    return jax.ShapeDtypeStruct(shape.dims, getattr(jax.numpy, dtype))


def load_function(spec: str) -> Callable[..., Any]:
    """The function named by ``module:function`` (``pkg.mod:fn``, imported with the
    current directory first on ``sys.path`` as ``python -m`` does) or
    ``path/to/file.py:function``; ``function`` may be dotted (``Class.method``).
    Raises :class:`VerifiedIndexingError` saying what is missing."""
    module_name, sep, attr = spec.rpartition(":")
    if not sep or not module_name or not attr:
        raise VerifiedIndexingError(f"--jax {spec!r}: expected MODULE:FUNCTION (e.g. mypkg.model:forward)")
    try:
        if module_name.endswith(".py") or os.sep in module_name:
            if not os.path.isfile(module_name):
                raise VerifiedIndexingError(f"--jax {spec!r}: no such file: {module_name}")
            name = "_vi_jax_" + os.path.splitext(os.path.basename(module_name))[0]
            loader_spec = importlib.util.spec_from_file_location(name, module_name)
            if loader_spec is None or loader_spec.loader is None:
                raise VerifiedIndexingError(f"--jax {spec!r}: cannot load {module_name} as Python")
            module = importlib.util.module_from_spec(loader_spec)
            sys.modules[name] = module  # as an import would: dataclasses and pickling look the module up
            try:
                loader_spec.loader.exec_module(module)
            except BaseException:
                del sys.modules[name]
                raise
        else:
            cwd = os.getcwd()
            if cwd not in sys.path and "" not in sys.path:
                sys.path.insert(0, cwd)
            module = importlib.import_module(module_name)
    except VerifiedIndexingError:
        raise
    except ModuleNotFoundError as exc:
        raise VerifiedIndexingError(
            f"--jax {spec!r}: no module named {exc.name!r} (modules are imported from the current directory "
            "and sys.path; a file can be given as path/to/file.py:function)"
        ) from None
    except Exception as exc:  # the user's module raised while being imported
        raise VerifiedIndexingError(
            f"--jax {spec!r}: importing {module_name} raised {type(exc).__name__}: {exc}"
        ) from None
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise VerifiedIndexingError(f"--jax {spec!r}: {module_name} has no attribute {attr!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise VerifiedIndexingError(f"--jax {spec!r}: {attr} is a {type(obj).__name__}, not a function")
    fn: Callable[..., Any] = obj
    return fn


def compiled_hlo(fn: Callable[..., Any], *example_args: Any, **jit_kwargs: Any) -> str:
    """The optimized HLO text XLA compiles for ``jax.jit(fn, **jit_kwargs)`` on the
    example arguments (arrays or ``jax.ShapeDtypeStruct``; compiled for the CPU device, which is the
    default device while compiling). JAX's own errors (a shape mismatch in
    ``fn``, ...) are raised as :class:`VerifiedIndexingError` with JAX's message."""
    jax = _jax()
    try:
        with jax.default_device(jax.devices("cpu")[0]):
            text: str = jax.jit(fn, **jit_kwargs).lower(*example_args).compile().as_text()
    except Exception as exc:  # the user's function (or its arguments) failed to trace, lower or compile
        message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise VerifiedIndexingError(
            f"JAX could not trace and compile the function: {type(exc).__name__}: {message}"
        ) from None
    return text


def analyze(fn: Callable[..., Any], *example_args: Any, **jit_kwargs: Any) -> JaxAnalysis:
    """Compile ``fn`` with JAX (see :func:`compiled_hlo`) and analyze every fusion of
    the optimized module: per fusion and parameter, the output-to-input maps
    composed, simplified and proven (isl), as ``verified-indexing analyze`` does.

    >>> import jax, jax.numpy as jnp
    >>> from verified_indexing.jax import analyze
    >>> a = analyze(lambda x: jnp.exp(x).T, jax.ShapeDtypeStruct((4, 8), jnp.float32))
    >>> [str(m.map.format(one_line=True)) for r in a.results for t in r.targets for m in t.maps]
    ['(d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3]']
    """
    from verified_indexing.hlo.fusion import analyze_module
    from verified_indexing.hlo.report import load_hlo

    text = compiled_hlo(fn, *example_args, **jit_kwargs)
    module = load_hlo(text, f"<jax.jit({getattr(fn, '__name__', 'fn')})>")
    computation = None if module.fusions() else module.entry_name
    return JaxAnalysis(text, module, analyze_module(module, computation=computation))
