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
    example arguments (arrays or ``jax.ShapeDtypeStruct``), compiled for the CPU device (the command
    line's ``analyze --jax``). JAX's own errors (a shape mismatch in ``fn``, ...) are raised as
    :class:`VerifiedIndexingError` with JAX's message."""
    jit = jit_kwargs if hasattr(fn, "lower") else {"keep_unused": False, **jit_kwargs}  # JAX's default
    text, _ = _compile(fn, example_args, {}, jit, "cpu")
    return text


def _jax_error(exc: Exception) -> VerifiedIndexingError:
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return VerifiedIndexingError(f"JAX could not trace and compile the function: {type(exc).__name__}: {message}")


def _argument_names(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], jit: dict[str, Any]) -> list[str]:
    """The user's name of every array leaf of the call, in the order of the compiled entry's parameters
    (JAX flattens the positional arguments, then the keyword arguments by name): the parameter's name
    from the signature (``args[i]`` when there is none) and the leaf's pytree path (``params['w']``).
    Static arguments are not parameters."""
    import inspect

    jax = _jax()
    static_nums = jit.get("static_argnums", ())
    static_nums = {static_nums} if isinstance(static_nums, int) else set(static_nums or ())
    static_names = jit.get("static_argnames", ())
    static_names = {static_names} if isinstance(static_names, str) else set(static_names or ())
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    static_names |= {positional[i] for i in static_nums if 0 <= i < len(positional)}
    names: list[str] = []
    for i, value in enumerate(args):
        name = positional[i] if i < len(positional) else f"args[{i}]"
        if i in static_nums or name in static_names:
            continue
        leaves = jax.tree_util.tree_flatten_with_path(value)[0]
        names += [name + jax.tree_util.keystr(path) for path, _ in leaves]
    for key in sorted(kwargs):
        if key in static_names:
            continue
        leaves = jax.tree_util.tree_flatten_with_path(kwargs[key])[0]
        names += [key + jax.tree_util.keystr(path) for path, _ in leaves]
    return names


def _compile(fn: Any, args: tuple[Any, ...], kwargs: dict[str, Any], jit: dict[str, Any],
             backend: str | None) -> tuple[str, list[str] | None]:
    """``(optimized HLO text, the user's argument name of each entry parameter or None)`` for a plain
    function (jitted here with ``jit``), a ``jax.jit``-wrapped one, a ``Lowered``, a ``Compiled`` or an
    exported function (``jax.export.Exported``), on ``backend``'s first device (default: JAX's)."""
    jax = _jax()
    stages = jax.stages
    exported_type = getattr(getattr(jax, "export", None), "Exported", None)
    ready = isinstance(fn, (stages.Lowered, stages.Compiled))
    if ready and (args or kwargs or jit):
        raise VerifiedIndexingError(f"a {type(fn).__name__} is already specialized: give no arguments or jit options")
    jitted = hasattr(fn, "lower") and not ready
    if jitted and jit:
        raise VerifiedIndexingError("the function is already jax.jit-wrapped: give the jit options to jax.jit")
    try:
        device = jax.devices(backend)[0] if backend is not None else jax.devices()[0]
    except RuntimeError as exc:
        raise VerifiedIndexingError(f"backend {backend!r}: {str(exc).strip().splitlines()[0]}") from None
    names: list[str] | None = None
    try:
        with jax.default_device(device):
            if isinstance(fn, stages.Compiled):
                compiled = fn
            elif isinstance(fn, stages.Lowered):
                compiled = fn.compile()
            elif exported_type is not None and isinstance(fn, exported_type):
                if jit:
                    raise VerifiedIndexingError("an exported function takes no jit options")
                call_args = args if args or kwargs else tuple(fn.in_avals)
                compiled = jax.jit(fn.call).lower(*call_args, **kwargs).compile()
            elif jitted:
                compiled = fn.lower(*args, **kwargs).compile()
                names = _argument_names(getattr(fn, "__wrapped__", fn), args, kwargs, {})
            else:
                options = {"keep_unused": True, **jit}  # every argument a parameter: names line up
                compiled = jax.jit(fn, **options).lower(*args, **kwargs).compile()
                names = _argument_names(fn, args, kwargs, options)
            text: str = compiled.as_text()
    except VerifiedIndexingError:
        raise
    except Exception as exc:  # the user's function (or its arguments) failed to trace, lower or compile
        raise _jax_error(exc) from None
    return text, names


@dataclass
class JaxAnalysis:
    """What :func:`analyze` returns: the compiled module's HLO text, the parsed module, the analyses
    (one per fusion and output, as ``analyze`` prints them), and ``argument_names``: the user's name of
    each entry parameter (``x``, ``params['w']``; ``None`` when it cannot be told, e.g. for a
    ``Lowered`` whose unused arguments JAX dropped)."""

    hlo: str
    module: Module
    results: list[ComputationIndexing]
    argument_names: list[str] | None = None

    def operand_names(self, fusion: str) -> list[str | None]:
        """For each operand of the fusion instruction ``fusion`` (in the entry computation): the entry
        parameter it is, as ``"p0.1 (x)"`` (the HLO name and the user's argument), or ``None`` when the
        operand is computed by another instruction."""
        entry = self.module.entry
        inst = entry.by_name.get(fusion)
        if inst is None:
            raise VerifiedIndexingError(f"no fusion {fusion!r} in the entry computation")
        out: list[str | None] = []
        for k in range(len(inst.operands)):
            op = entry.operand(inst, k)
            if op.opcode != "parameter" or op.parameter_number is None:
                out.append(None)
                continue
            names = self.argument_names
            user = names[op.parameter_number] if names and op.parameter_number < len(names) else None
            out.append(f"{op.name} ({user})" if user else op.name)
        return out

    def __str__(self) -> str:
        """The command line's text: ``verified-indexing analyze`` of the compiled module."""
        from verified_indexing.hlo.report import format_results, summary_line

        head = format_results(self.results) + "\n\n" if self.results else ""
        return head + summary_line(self.results, sum(r.seconds for r in self.results))

    def to_dot(self) -> str:
        """The fusion graph as Graphviz DOT (``analyze --dot``): one node per instruction, the fused
        computations as clusters, each edge labelled by its proven map."""
        from verified_indexing.hlo.graph import to_dot

        return to_dot(self.module, self.results)

    def _repr_svg_(self) -> str | None:
        """The fusion graph drawn as SVG for a notebook: by Graphviz's ``dot`` program when installed, else
        laid out in pure Python (:func:`verified_indexing._svg.dot_to_svg_text`, as ``Analysis._repr_svg_``)."""
        import shutil
        import subprocess

        from verified_indexing._svg import dot_to_svg_text

        exe = shutil.which("dot")
        if exe is None:
            return dot_to_svg_text(self.to_dot())
        done = subprocess.run([exe, "-Tsvg"], input=self.to_dot(), text=True, capture_output=True, timeout=300,
                              check=False)
        return done.stdout if done.returncode == 0 else dot_to_svg_text(self.to_dot())

    def __repr__(self) -> str:
        maps = sum(len(t.maps) for r in self.results for t in r.targets)
        fusions = len({r.fusion for r in self.results})
        names = ", ".join(self.argument_names or []) or "?"
        from verified_indexing._repr import short

        return short("JaxAnalysis", f"of {self.module.name}: {fusions} fusions, {maps} maps; arguments: {names}")


def analyze(fn: Any, *example_args: Any, jit: dict[str, Any] | None = None, backend: str | None = None,
            **example_kwargs: Any) -> JaxAnalysis:
    """Compile ``fn`` with JAX and analyze every fusion of the optimized module: per fusion and parameter,
    the output-to-input maps composed, simplified and proven (isl), as ``verified-indexing analyze`` does.

    ``fn`` is called as JAX users call it: ``analyze(f, x, y, scale=2.0)`` traces ``f(x, y, scale=2.0)``
    (arrays or ``jax.ShapeDtypeStruct``, pytrees of them); ``jit=dict(static_argnums=..., ...)`` are the
    options of ``jax.jit``. ``fn`` may also be a ``jax.jit``-wrapped function (its own options), a
    ``Lowered`` or ``Compiled`` stage (no arguments), or a ``jax.export.Exported`` (its own argument
    shapes by default). ``backend``: the platform compiled for (``"cpu"``, ``"gpu"``...; default: JAX's
    default device). ``argument_names`` of the result name each entry parameter by the user's argument.

    >>> import jax, jax.numpy as jnp
    >>> from verified_indexing.jax import analyze
    >>> a = analyze(lambda x: jnp.exp(x).T, jax.ShapeDtypeStruct((4, 8), jnp.float32))
    >>> [str(m.map.format(one_line=True)) for r in a.results for t in r.targets for m in t.maps]
    ['(d0, d1) -> (d1, d0), domain: d0 in [0, 7], d1 in [0, 3]']
    >>> a.argument_names
    ['x']
    """
    from verified_indexing.hlo.fusion import analyze_module
    from verified_indexing.hlo.report import load_hlo

    text, names = _compile(fn, example_args, example_kwargs, dict(jit or {}), backend)
    label = getattr(fn, "__name__", type(fn).__name__)
    module = load_hlo(text, f"<jax.jit({label})>")
    if names is not None and len(names) != len(module.entry.parameters()):
        names = None  # JAX dropped unused arguments, or a pre-jitted function had static ones: not told
    computation = None if module.fusions() else module.entry_name
    return JaxAnalysis(text, module, analyze_module(module, computation=computation), names)
