"""An oracle of its own for TVMScript (review round 3): the program is run as
Python, with a stand-in ``T`` module, after an ``ast`` rewrite that gives every
loop variable and block axis its own Python name (TVM's scoping: a block opens
a new frame; its axis bindings and ``T.where`` are read in the enclosing one;
``with T.init()`` runs where the block's reduce axes are all 0).

Independent of verified_indexing and of tests/tvmscript_interpreter.py: no
reader, no IR, only Python executing the text. Buffers check their bounds
(``OutOfBounds``) and whether an element was written (``Unwritten``)."""

from __future__ import annotations

import ast
import itertools
import math
import random
from collections.abc import Iterator
from typing import Any

import numpy as np


class OutOfBounds(Exception):
    """An index outside its buffer."""


class Unwritten(Exception):
    """A read of an element nothing wrote."""


class _Skip(Exception):
    """T.where false: the rest of the block does not run."""


class Buf:
    """A buffer: values by index tuple, bounds checked, writes tracked."""

    def __init__(self, name: str, shape: tuple[int, ...], dtype: str, data: dict[tuple[int, ...], Any] | None):
        self.name, self.shape, self.dtype = name, shape, dtype
        self.data: dict[tuple[int, ...], Any] = dict(data or {})
        self.written: set[tuple[int, ...]] = set()

    def _key(self, idx: Any) -> tuple[int, ...]:
        key = tuple(int(i) for i in (idx if isinstance(idx, tuple) else (idx,)))
        if len(key) != len(self.shape) or any(not 0 <= i < n for i, n in zip(key, self.shape)):
            raise OutOfBounds(f"{self.name}{list(key)} outside {self.shape}")
        return key

    def __getitem__(self, idx: Any) -> Any:
        key = self._key(idx)
        if key not in self.data:
            raise Unwritten(f"{self.name}{list(key)}")
        return self.data[key]

    def __setitem__(self, idx: Any, value: Any) -> None:
        key = self._key(idx)
        self.data[key] = value
        self.written.add(key)


class _Spec:
    def __init__(self, shape: Any, dtype: str = "float32") -> None:
        self.shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
        self.dtype = dtype


def _cast(dtype: str, x: Any) -> Any:
    if dtype.startswith("float16"):
        return float(np.float16(x))
    if dtype.startswith("float32"):
        return float(np.float32(x))
    if dtype.startswith("float"):
        return float(x)
    if dtype.startswith("int") or dtype.startswith("uint"):
        return math.trunc(x)
    if dtype == "bool":
        return bool(x)
    raise ValueError(dtype)


class _Dtype:
    def __init__(self, name: str, run: _Run) -> None:
        self.name, self.run = name, run

    def __call__(self, *args: Any) -> Any:
        if not args:
            return self.run.size()
        return _cast(self.name, args[0])


class _Block:
    def __init__(self, run: _Run) -> None:
        self.run = run

    def __enter__(self) -> None:
        self.run.frames.append([])

    def __exit__(self, et: Any, ev: Any, tb: Any) -> bool:
        self.run.frames.pop()
        return et is _Skip


class _Axis:
    def __init__(self, run: _Run) -> None:
        self.run = run

    @staticmethod
    def _inside(ext: Any, value: Any) -> None:
        """TVM's block iteration domain: a binding lies in ``[0, ext)``."""
        if isinstance(ext, int) and isinstance(value, int) and not 0 <= value < ext:
            raise OutOfBounds(f"axis value {value} outside its extent {ext}")

    def spatial(self, ext: Any, value: Any = None, *a: Any) -> Any:
        self._inside(ext, value)
        return value

    def reduce(self, ext: Any, value: Any = None, *a: Any) -> Any:
        self._inside(ext, value)
        self.run.frames[-1].append(value)
        return value

    def remap(self, kinds: str, values: list[Any]) -> list[Any]:
        for k, v in zip(kinds, values):
            if k == "R":
                self.run.frames[-1].append(v)
        return list(values)

    S = spatial
    R = reduce


class _Run:
    """The stand-in ``T`` of one run."""

    def __init__(self, sizes: list[int], seed: int) -> None:
        self.sizes = list(sizes)
        self.seed = seed
        self.bufs: dict[str, Buf] = {}
        self.frames: list[list[Any]] = []
        self.params: list[str] = []
        self.axis = _Axis(self)
        for d in ("float16", "float32", "float64", "int8", "int32", "int64", "bool"):
            setattr(self, d, _Dtype(d, self))

    # sizes and buffers
    def size(self) -> int:
        return self.sizes.pop(0)

    def input_data(self, name: str, shape: tuple[int, ...], dtype: str) -> dict[tuple[int, ...], Any]:
        rng = random.Random(f"{self.seed}/{name}/{shape}")
        out: dict[tuple[int, ...], Any] = {}
        for idx in itertools.product(*(range(n) for n in shape)):
            out[idx] = rng.randint(-8, 8) if dtype.startswith("int") else rng.choice([-2.5, -1.0, -0.5, 0.25, 1.5, 3.0])
        return out

    def param(self, name: str, spec: _Spec) -> Buf:
        """Parameter ``name`` (its position among the parameters names its data:
        the printed program may name a handle and its buffer differently)."""
        shape = tuple(int(n) for n in spec.shape)
        key = f"#{self.params.index(name)}"
        b = Buf(name, shape, spec.dtype, self.input_data(key, shape, spec.dtype))
        self.bufs[key] = b
        return b

    def Buffer(self, shape: Any, dtype: str = "float32", *a: Any, **k: Any) -> _Spec:
        return _Spec(shape, dtype)

    handle = "handle"

    def match_buffer(self, handle: str, shape: Any, dtype: str = "float32", *a: Any, **k: Any) -> Buf:
        return self.param(handle, _Spec(shape, dtype))

    def alloc_buffer(self, shape: Any, dtype: str = "float32", *a: Any, **k: Any) -> Buf:
        return Buf("alloc", tuple(int(n) for n in _Spec(shape).shape), dtype, None)

    sblock_alloc_buffer = alloc_buffer

    def prim_func(self, *a: Any, **k: Any) -> Any:
        if a and callable(a[0]):
            return a[0]
        return lambda f: f

    def func_attr(self, *a: Any) -> None:
        pass

    # loops
    def grid(self, *exts: Any) -> Iterator[tuple[int, ...]]:
        return itertools.product(*(range(int(e)) for e in exts))

    def serial(self, a: Any, b: Any = None, **k: Any) -> range:
        return range(int(a)) if b is None else range(int(a), int(b))

    parallel = vectorized = unroll = serial

    def thread_binding(self, a: Any, b: Any = None, **k: Any) -> range:
        return range(int(a)) if b is None or isinstance(b, str) else range(int(a), int(b))

    # blocks
    def block(self, name: str = "", *a: Any, **k: Any) -> _Block:
        return _Block(self)

    sblock = block

    def where(self, cond: Any) -> None:
        if not cond:
            raise _Skip

    def init_active(self) -> bool:
        return all(v == 0 for v in self.frames[-1])

    def reads(self, *a: Any) -> None:
        pass

    def evaluate(self, *a: Any) -> None:
        pass

    writes = reads

    # values
    def max(self, a: Any, b: Any) -> Any:
        return a if a >= b else b

    def min(self, a: Any, b: Any) -> Any:
        return a if a <= b else b

    def exp(self, x: Any) -> float:
        return math.exp(min(x, 50.0))

    def sqrt(self, x: Any) -> float:
        return math.sqrt(x) if x >= 0 else float("nan")

    def abs(self, x: Any) -> Any:
        return -x if x < 0 else x

    def if_then_else(self, c: Any, a: Any, b: Any) -> Any:
        return a if c else b

    def Select(self, c: Any, a: Any, b: Any) -> Any:
        return a if c else b

    def Cast(self, dtype: str, x: Any) -> Any:
        return _cast(dtype, x)

    def cast(self, x: Any, dtype: str) -> Any:
        return _cast(dtype, x)

    def floordiv(self, a: int, b: int) -> int:
        return a // b

    def floormod(self, a: int, b: int) -> int:
        return a % b

    def truncdiv(self, a: int, b: int) -> int:
        return int(a / b) if b else 0

    def truncmod(self, a: int, b: int) -> int:
        return a - b * self.truncdiv(a, b)

    def And(self, *xs: Any) -> bool:
        return all(xs)

    def Or(self, *xs: Any) -> bool:
        return any(xs)

    def Not(self, x: Any) -> bool:
        return not x


# -- the scoping rewrite -------------------------------------------------------------------------------------


def _is_t_call(node: ast.AST, names: tuple[str, ...]) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "T" and node.func.attr in names)


def _is_axis(value: ast.AST) -> bool:
    return (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and isinstance(value.func.value, ast.Attribute) and value.func.value.attr == "axis")


class _Scoper:
    def __init__(self) -> None:
        self.n = 0

    def fresh(self, name: str) -> str:
        self.n += 1
        return f"{name}__s{self.n}"

    def expr(self, node: ast.expr, env: dict[str, str]) -> ast.expr:
        class R(ast.NodeTransformer):
            def visit_Name(self, n: ast.Name) -> ast.AST:
                if isinstance(n.ctx, ast.Load) and n.id in env:
                    return ast.copy_location(ast.Name(env[n.id], ast.Load()), n)
                return n

            def visit_Call(self, n: ast.Call) -> ast.AST:
                self.generic_visit(n)
                if _is_t_call(n, ("if_then_else", "Select")) and len(n.args) == 3:  # lazy, as TVM evaluates it
                    return ast.copy_location(ast.IfExp(n.args[0], n.args[1], n.args[2]), n)
                return n

        out: ast.expr = R().visit(node)
        return out

    def targets(self, t: ast.expr, env: dict[str, str]) -> tuple[ast.expr, dict[str, str]]:
        names = [n.id for n in ast.walk(t) if isinstance(n, ast.Name)]
        new = dict(env)
        for n in names:
            new[n] = self.fresh(n)

        class R(ast.NodeTransformer):
            def visit_Name(self, n: ast.Name) -> ast.AST:
                return ast.copy_location(ast.Name(new[n.id], ast.Store()), n)

        out: ast.expr = R().visit(t)
        return out, new

    def body(self, stmts: list[ast.stmt], env: dict[str, str]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        for s in stmts:
            if isinstance(s, ast.For):
                it = self.expr(s.iter, env)
                tgt, inner = self.targets(s.target, env)
                out.append(ast.For(tgt, it, self.body(s.body, inner), [], None))
            elif isinstance(s, ast.With) and _is_t_call(s.items[0].context_expr, ("init",)):
                test = ast.parse("T.init_active()", mode="eval").body
                out.append(ast.If(test, self.body(s.body, env), []))
            elif isinstance(s, ast.With) and _is_t_call(s.items[0].context_expr, ("block", "sblock")):
                inner = dict(env)
                new_body: list[ast.stmt] = []
                for b in s.body:
                    if isinstance(b, ast.Assign) and _is_axis(b.value):
                        val = self.expr(b.value, env)  # read in the enclosing frame
                        tgt, inner2 = self.targets(b.targets[0], {})
                        inner.update(inner2)
                        new_body.append(ast.Assign([tgt], val))
                    elif isinstance(b, ast.Expr) and _is_t_call(b.value, ("where",)):
                        new_body.append(ast.Expr(self.expr(b.value, env)))
                    elif isinstance(b, ast.Expr) and _is_t_call(b.value, ("reads", "writes")):
                        continue
                    else:
                        new_body.extend(self.body([b], inner))
                out.append(ast.With(s.items, new_body or [ast.Pass()]))
            elif isinstance(s, ast.AnnAssign):
                if s.value is None:
                    out.append(ast.Pass())
                else:
                    out.append(ast.Assign([s.target], self.expr(s.value, env)))
            else:
                out.append(self.expr(s, env))  # type: ignore[arg-type]
        return out


def run(text: str, sizes: list[int] | None = None, seed: int = 0) -> dict[str, dict[tuple[int, ...], Any]]:
    """Run the TVMScript ``text`` (one prim_func); ``sizes``: the values of
    ``T.int32()``/``T.int64()`` size variables, in order. Returns every
    parameter buffer's elements written by the program (inputs included when
    written), keyed ``#k`` by the parameter's position."""
    tree = ast.parse(text)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef))
    fn.body = _Scoper().body(fn.body, {})
    fn.decorator_list = []
    fn.returns = None
    specs = {}
    T = _Run(list(sizes or []), seed)
    # size variables (n = T.int32(); n, m = T.int64(), T.int64()) may appear in the parameters' shapes
    # (as names or strings): bound first, in order
    known: dict[str, Any] = {"T": T}
    for st in fn.body:
        if isinstance(st, ast.Assign) and all(
                isinstance(c, ast.Call) and not c.args and _is_t_call(c, ("int32", "int64"))
                for c in (st.value.elts if isinstance(st.value, ast.Tuple) else [st.value])):
            tgt = st.targets[0]
            for n in (tgt.elts if isinstance(tgt, ast.Tuple) else [tgt]):
                if isinstance(n, ast.Name):
                    known[n.id] = T.sizes[len(known) - 1]
    for a in fn.args.args:
        if a.annotation is not None:
            spec = eval(compile(ast.Expression(a.annotation), "<ann>", "eval"), known)
            if isinstance(spec, _Spec):
                spec.shape = tuple(known[x] if isinstance(x, str) else x for x in spec.shape)
            specs[a.arg] = spec
        else:
            specs[a.arg] = None
        a.annotation = None
    mod = ast.Module([fn], [])
    ast.fix_missing_locations(mod)
    ns: dict[str, Any] = {"T": T}
    exec(compile(mod, "<tvmscript>", "exec"), ns)
    args = {}
    T.params = list(specs)
    for name, spec in specs.items():
        if isinstance(spec, _Dtype):  # a scalar parameter (lo: T.float32)
            args[name] = T.input_data(f"#{T.params.index(name)}", (), spec.name)[()]
        else:
            args[name] = T.param(name, spec) if isinstance(spec, _Spec) else name
    ns[fn.name](**args)
    out = {}
    for name, b in T.bufs.items():
        out[name] = {k: b.data[k] for k in sorted(b.written)}
    return out


def transformed(cli_text: str) -> str:
    """The TVMScript a command printed after its checks."""
    lines = cli_text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith(("@T.", "# from", "from ", "import ")):
            return "\n".join(lines[i:]) + "\n"
    raise AssertionError("no program printed:\n" + cli_text)
