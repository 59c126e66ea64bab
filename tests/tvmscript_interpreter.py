"""A plain interpreter of TVMScript source (and of CINN's Python DSL, ``@to_cinn_llir``):
the independent oracle of the TVMScript reader.

It does not use the project's reader or IR. The ``@T.prim_func``'s body is run by
Python itself (``exec``) with a stand-in for ``T`` that implements TIR's semantics:

* scoping as TVM's parser scopes names: every ``for`` iteration and every block
  (``T.block``/``T.sblock``) and ``T.init()`` opens a frame; the names bound inside
  are dropped when it closes (so a block's ``i = T.axis.spatial(2, i // 2)`` shadows
  the loop's ``i`` in the block body only, and its right-hand side reads the loop's);
* a block's ``T.where(cond)`` disables its stores where ``cond`` is false;
  ``T.init()``'s stores run only where every reduce axis of the block is 0;
* ``T.axis.spatial/reduce/remap`` check their bindings lie in their domains;
* ``X = T.match_buffer(A[a:b, c], (n, 1))`` inside a block is a view of ``A`` at an
  offset; parameters (``T.Buffer`` annotations, ``T.match_buffer`` of a handle) read
  as :func:`cinn_interpreter.input_value` until written (scalar parameters as
  :func:`cinn_interpreter.scalar_value`); a read of an element of a
  ``T.alloc_buffer`` nothing wrote raises ``KeyError`` (as the IR interpreter does).

Values are Python floats; a cast to an integer type truncates; indices use Python's
floor ``//`` and ``%`` (TIR's floordiv/floormod).
"""

from __future__ import annotations

import ast
import itertools
import math
import struct
from collections.abc import Iterator
from typing import Any

from cinn_interpreter import input_value, int_input_value, scalar_value

Tensors = dict[str, dict[tuple[int, ...], float]]

_INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")


def int_params(text: str) -> set[str]:
    """The integer buffer parameters of the first function of ``text`` (``idx: T.Buffer((3,), "int32")``)."""
    fn = next(n for n in ast.walk(ast.parse(text)) if isinstance(n, ast.FunctionDef))
    out: set[str] = set()
    for a in fn.args.args:
        ann = a.annotation
        if isinstance(ann, ast.Call) and any(isinstance(x, ast.Constant) and x.value in _INT_DTYPES
                                             for x in [*ann.args, *(k.value for k in ann.keywords)]):
            out.add(a.arg)
    return out


def _half(x: float) -> float:
    """``x`` rounded to half precision (float16)."""
    return float(struct.unpack("e", struct.pack("e", x))[0])


class _State:
    def __init__(self, env: dict[str, Any]) -> None:
        self.env = env
        self.stores: Tensors = {}
        self.active: list[bool] = []  # one per open block/init frame
        self.reduce: list[list[int]] = []  # per open block: the reduce axes' values
        self.bad: list[str] = []  # per open block: an axis binding outside its domain

    def enabled(self) -> bool:
        if all(self.active):
            for b in self.bad:
                if b:
                    raise IndexError(b)
            return True
        return False


class Buffer:
    """A buffer (or a view of one at an offset)."""

    base: Buffer | None

    def __init__(self, state: _State, name: str, shape: tuple[int, ...], dtype: str, is_param: bool,
                 base: Buffer | None = None, offset: tuple[int, ...] = (), keep: tuple[int, ...] = ()) -> None:
        self.state = state
        self.name = name
        self.shape = shape
        self.dtype = dtype
        self.is_param = is_param
        self.base = base
        self.offset = offset
        self.keep = keep  # for a view: which base dims the view's dims map to

    def _key(self, key: Any) -> tuple[int, ...]:
        idx = key if isinstance(key, tuple) else (key,)
        out = tuple(int(i) for i in idx)
        if len(out) != len(self.shape):
            raise IndexError(f"{self.name}: {len(out)} indices for {len(self.shape)} dims")
        if self.state.enabled():
            for i, n in zip(out, self.shape):
                if not 0 <= i < n:
                    raise IndexError(f"{self.name}{list(out)} out of bounds {self.shape}")
        return out

    def _resolve(self, idx: tuple[int, ...]) -> tuple[Buffer, tuple[int, ...]]:
        if self.base is None:
            return self, idx
        full = list(self.offset)
        for d, i in zip(self.keep, idx):
            full[d] += i
        return self.base._resolve(tuple(full))

    def __getitem__(self, key: object) -> float:
        idx = self._key(key)
        buf, at = self._resolve(idx)
        store = self.state.stores.get(buf.name, {})
        if at in store:
            return store[at]
        if buf.is_param:  # as the IR interpreter reads inputs
            return float(int_input_value(buf.name, at)) if buf.dtype in _INT_DTYPES else input_value(buf.name, at)
        if not self.state.enabled():
            return 0.0
        raise KeyError(f"{buf.name}{list(at)} is read before it is written")

    def __setitem__(self, key: object, value: float) -> None:
        if not self.state.enabled():
            return
        idx = self._key(key)
        buf, at = self._resolve(idx)
        v = float(value)
        self.state.stores.setdefault(buf.name, {})[at] = v


class _Frame:
    """A frame: the names bound inside are dropped when it closes."""

    def __init__(self, state: _State, active: bool | None = None, block: bool = False) -> None:
        self.state = state
        self.active_flag = active
        self.block = block

    def __enter__(self) -> _Frame:
        self.saved = dict(self.state.env)
        if self.active_flag is not None:
            self.state.active.append(self.active_flag)
        if self.block:
            self.state.active.append(True)
            self.state.reduce.append([])
            self.state.bad.append("")
        return self

    def __exit__(self, *exc: object) -> None:
        self.state.env.clear()
        self.state.env.update(self.saved)
        if self.active_flag is not None:
            self.state.active.pop()
        if self.block:
            self.state.active.pop()
            self.state.reduce.pop()
            self.state.bad.pop()


def _shape(s: object) -> tuple[int, ...]:
    if isinstance(s, (tuple, list)):
        return tuple(int(x) for x in s)
    return (int(s),)  # type: ignore[call-overload]


class _Axis:
    def __init__(self, state: _State) -> None:
        self.state = state

    def _bind(self, extent: Any, value: Any, kind: str) -> int:
        v = int(value)
        lo, hi = (int(extent[0]), int(extent[1])) if isinstance(extent, tuple) else (0, int(extent))
        if not lo <= v < hi and self.state.bad:  # checked where the block stores (after its T.where)
            self.state.bad[-1] = f"axis binding {v} outside [{lo}, {hi})"
        if kind == "R" and self.state.reduce:
            self.state.reduce[-1].append(v - lo)
        return v

    def spatial(self, extent: object, value: object, dtype: str = "int32") -> int:
        return self._bind(extent, value, "S")

    S = spatial

    def reduce(self, extent: object, value: object, dtype: str = "int32") -> int:
        return self._bind(extent, value, "R")

    R = reduce

    def remap(self, kinds: str, values: list[object]) -> Any:
        out = [int(v) for v in values]  # type: ignore[call-overload]
        for k, v in zip(kinds, out):
            if k == "R" and self.state.reduce:
                self.state.reduce[-1].append(v)
        return out[0] if len(out) == 1 else tuple(out)


class _T:
    """The stand-in for ``T`` (``from tvm.script import tir/tirx as T``)."""

    def __init__(self, state: _State, scalars: dict[str, float]) -> None:
        self.state = state
        self.axis = _Axis(state)
        self.scalars = scalars

    # blocks and frames
    def block(self, name: str = "", *a: object, **k: object) -> _Frame:
        return _Frame(self.state, block=True)

    sblock = block

    def init(self) -> _Frame:
        red = self.state.reduce[-1] if self.state.reduce else []
        return _Frame(self.state, active=all(v == 0 for v in red))

    def frame(self) -> _Frame:
        return _Frame(self.state)

    def where(self, cond: object) -> None:
        if self.state.active:
            self.state.active[-1] = bool(cond)

    def reads(self, *a: object) -> None:
        return None

    writes = reads
    block_attr = sblock_attr = reads
    func_attr = reads

    def evaluate(self, *a: object) -> None:
        return None

    # loops
    def grid(self, *extents: object) -> Iterator[tuple[int, ...]]:
        return itertools.product(*(range(int(e)) for e in extents))  # type: ignore[call-overload]

    def serial(self, a: object, b: object = None, **k: object) -> range:
        return range(int(a)) if b is None else range(int(a), int(b))  # type: ignore[call-overload]

    parallel = vectorized = unroll = thread_binding = serial

    # buffers
    def Buffer(self, shape: object = (), dtype: str = "float32", *a: object, _name: str = "",
               **k: object) -> _Buf | None:
        """``X = T.Buffer(shape)`` inside a block (TVM prints a buffer it uses where nothing defines it so): a
        buffer nothing allocates; reading it raises ``KeyError``. As an annotation: nothing."""
        return _Buf(self.state, _name, _shape(shape), dtype, False) if _name else None

    def alloc_buffer(self, shape: object, dtype: str = "float32", *a: object, _name: str = "",
                     **k: object) -> _Buf:
        return _Buf(self.state, _name, _shape(shape), dtype, False)

    sblock_alloc_buffer = alloc_buffer

    def match_buffer(self, src: object, shape: object, dtype: str = "float32", *a: object, _name: str = "",
                     **k: object) -> _Buf:
        if isinstance(src, _Region):
            keep = tuple(d for d, (lo, ext) in enumerate(src.ranges) if ext != 1 or len(_shape(shape)) ==
                         len(src.ranges))
            return _Buf(self.state, _name, _shape(shape), dtype, False, src.buffer,
                          tuple(lo for lo, _ in src.ranges), keep)
        return _Buf(self.state, _name, _shape(shape), dtype, True)

    # values
    def _num(self, dtype: str, x: object = None) -> Any:
        if isinstance(x, str):
            return float(x)
        if dtype.startswith(("int", "uint")):
            return int(x)  # type: ignore[call-overload]
        return float(x)  # type: ignore[arg-type]

    def float32(self, x: object = None) -> Any:
        return self._num("float32", x)

    float64 = bfloat16 = float32

    def float16(self, x: object = None) -> Any:
        return _half(self._num("float16", x))

    def int32(self, x: object = None) -> Any:
        return self._num("int32", x)

    int64 = int8 = int16 = int32

    def bool(self, x: object = None) -> bool:
        return bool(x)

    def Cast(self, dtype: str, x: Any) -> Any:
        if dtype == "float16":
            return _half(float(x))
        return float(math.trunc(x)) if dtype.startswith(("int", "uint")) else float(x)

    def cast(self, x: object, dtype: str) -> Any:
        return self.Cast(dtype, x)

    def min_value(self, dtype: str) -> float:
        return -3.40282347e38

    def max_value(self, dtype: str) -> float:
        return 3.40282347e38

    def max(self, a: Any, b: Any) -> Any:
        return max(a, b)

    def min(self, a: Any, b: Any) -> Any:
        return min(a, b)

    def exp(self, a: float) -> float:
        return math.exp(a)

    def if_then_else(self, c: object, a: Any, b: Any) -> Any:
        return a if c else b

    Select = if_then_else

    def And(self, a: object, b: object) -> bool:
        return bool(a) and bool(b)

    def Or(self, a: object, b: object) -> bool:
        return bool(a) or bool(b)

    def Not(self, a: object) -> bool:
        return not a

    def ceildiv(self, a: int, b: int) -> int:
        return -(-a // b)

    def floordiv(self, a: int, b: int) -> int:
        return a // b

    def floormod(self, a: int, b: int) -> int:
        return a % b


class _IR:
    """The stand-in for CINN's Python DSL ``ir`` (``ScheduleBlockContext``, ``AxisMap``)."""

    def __init__(self, t: _T) -> None:
        self.ScheduleBlockContext = t.block
        self.AxisMap = t.axis.remap


class _Schedule:
    """``sch.*`` of CINN's DSL: schedule steps after the blocks, not run (the program before them)."""

    def __getattr__(self, name: str) -> Any:
        return lambda *a, **k: None


class _Region:
    def __init__(self, buffer: Buffer, ranges: list[tuple[int, int]]) -> None:
        self.buffer = buffer
        self.ranges = ranges


class _Rewrite(ast.NodeTransformer):
    """Frames for loops; names for buffer declarations; size parameters from ``sizes``;
    ``A[a:b, c]`` regions inside ``T.match_buffer``."""

    def visit_For(self, node: ast.For) -> ast.AST:
        self.generic_visit(node)
        tmp = ast.Name("__it", ast.Store())
        frame = ast.With([ast.withitem(ast.parse("T.frame()", mode="eval").body)],
                         [ast.Assign([node.target], ast.Name("__it", ast.Load())), *node.body])
        return ast.For(tmp, node.iter, [frame], [])

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        v = node.value
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr in ("reads", "writes"):
            return None  # declared regions: not evaluated
        self.generic_visit(node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("if_then_else", "Select") and \
                len(node.args) == 3:
            return ast.IfExp(node.args[0], node.args[1], node.args[2])  # only the chosen branch is evaluated
        return node

    def visit_Assign(self, node: ast.Assign) -> ast.AST:
        self.generic_visit(node)
        v = node.value
        t = node.targets[0]
        if isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and isinstance(t, ast.Name) and \
                v.func.attr in ("alloc_buffer", "sblock_alloc_buffer", "match_buffer", "decl_buffer", "Buffer"):
            v.keywords.append(ast.keyword("_name", ast.Constant(t.id)))
            if v.func.attr == "match_buffer" and v.args and isinstance(v.args[0], ast.Subscript):
                v.args[0] = _region(v.args[0])
        calls = v.elts if isinstance(v, ast.Tuple) else [v]
        names = t.elts if isinstance(t, ast.Tuple) else [t]
        if all(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and not c.args and
               c.func.attr in ("int32", "int64", "var") for c in calls) or \
                all(isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr == "var"
                    for c in calls):
            return ast.Assign([t], ast.Tuple([ast.parse(f"__sizes[{n.id!r}]", mode="eval").body  # type: ignore[attr-defined]
                                              for n in names], ast.Load()) if len(names) > 1 else
                              ast.parse(f"__sizes[{names[0].id!r}]", mode="eval").body)  # type: ignore[attr-defined]
        return node


def _region(sub: ast.Subscript) -> ast.expr:
    elts = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
    ranges: list[ast.expr] = []
    for e in elts:
        if isinstance(e, ast.Slice):
            assert e.lower is not None and e.upper is not None
            ranges.append(ast.Tuple([e.lower, ast.BinOp(e.upper, ast.Sub(), e.lower)], ast.Load()))
        else:
            ranges.append(ast.Tuple([e, ast.Constant(1)], ast.Load()))
    return ast.Call(ast.Name("__Region", ast.Load()), [sub.value, ast.List(ranges, ast.Load())], [])


def run_tvmscript(text: str, sizes: dict[str, int] | None = None, scalars: dict[str, float] | None = None,
                  func: str | None = None) -> Tensors:
    """Every element each buffer of the ``@T.prim_func`` (the one named ``func``,
    else the first) holds at the end of a run at ``sizes``; scalar parameters take
    ``scalars`` (default: a fixed value per name)."""
    tree = ast.parse(text)
    fns = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)]
    fn = next(f for f in fns if func is None or f.name == func)
    env: dict[str, Any] = {}
    state = _State(env)
    t = _T(state, scalars or {})
    env.update({"T": t, "ir": _IR(t), "sch": _Schedule(), "__sizes": dict(sizes or {}), "__Region": _Region,
                **(sizes or {})})
    for a in fn.args.args:
        ann = a.annotation
        if ann is not None and isinstance(ann, (ast.Call, ast.Subscript)):
            if isinstance(ann, ast.Call):
                args, kws = list(ann.args), ann.keywords
            else:
                args, kws = list(ann.slice.elts) if isinstance(ann.slice, ast.Tuple) else [ann.slice], []
            dtype = "float32"
            shape: tuple[int, ...] = ()
            if args:
                shape_v = eval(ast.unparse(args[0]), {"T": t, **(sizes or {})})
                shape_v = shape_v if isinstance(shape_v, tuple) else (shape_v,)
                shape = _shape(tuple((sizes or {})[x] if isinstance(x, str) else x for x in shape_v))
                if len(args) > 1 and isinstance(args[1], ast.Constant):
                    dtype = str(args[1].value)
            for kw in kws:
                if kw.arg == "dtype" and isinstance(kw.value, ast.Constant):
                    dtype = str(kw.value.value)
            env[a.arg] = Buffer(state, a.arg, shape, dtype, True)
        elif ann is not None and isinstance(ann, ast.Attribute) and ann.attr == "handle":
            env[a.arg] = a.arg
        else:
            default = (scalars or {}).get(a.arg, scalar_value(a.arg))
            env[a.arg] = default
    # size parameters first (they may be used by parameter shapes: those are evaluated lazily above)
    body = [_Rewrite().visit(s) for s in fn.body]
    module = ast.fix_missing_locations(ast.Module(body=body, type_ignores=[]))
    exec(compile(module, "<tvmscript>", "exec"), env)
    return state.stores


_Buf = Buffer
