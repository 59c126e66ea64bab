"""TVMScript (``@T.prim_func``) read with the standard library's :mod:`ast`, as the CINN loop-nest IR.

A TVM test's function is pasted as is::

    @T.prim_func
    def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")):
        C = T.alloc_buffer((16, 16))
        for i, j, k in T.grid(16, 16, 16):
            with T.block("C"):
                vi, vj, vk = T.axis.remap("SSR", [i, j, k])
                with T.init():
                    C[vi, vj] = T.float32(0)
                C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
        ...

and becomes the IR of :mod:`~verified_indexing.legality.cinn_ir`. One reader takes what
apache-tvm 0.27 prints (``from tvm.script import tirx as T``, ``@T.prim_func(s_tir=True)``,
``T.sblock``, ``T.sblock_alloc_buffer``), the older spelling (``tir``, ``@T.prim_func``,
``T.block``, ``T.alloc_buffer``) and CINN's Python DSL (``@to_cinn_llir``, ``DataArray``
parameters, ``with ir.ScheduleBlockContext("NAME")``, ``ir.AxisMap``; ``sch.*`` steps are
skipped: the program before the schedule is read).

``for`` over ``T.grid(...)``, ``T.serial(...)``, ``range(...)`` (``T.parallel``,
``T.vectorized``, ``T.unroll`` keep their kind) nest; a block becomes
``ScheduleBlock(NAME)``; ``T.axis.remap("SSR", [...])``, ``T.axis.spatial/reduce/S/R(extent,
value)`` become one ``axis.bind``. **Names are scoped as TVM's parser scopes them**: a block
opens a frame, its axis values are read in the enclosing scope and its axes shadow loop
variables of the same name in its body; a loop may shadow an enclosing loop; shadowing
names are renamed apart (``i_1``) by :func:`~verified_indexing.legality.cinn_ir.unique_names`.
``T.where(cond)`` wraps the block's stores in a predicate (:class:`If`); ``with T.init():``
becomes the init block ``NAME__reduce_init``, placed before the reduction loops when they are
the innermost loops around the block, else inside them storing where every reduce axis is 0
(TVM's semantics). ``T.reads``, ``T.writes``, ``T.block_attr``, ``T.func_attr`` and a root
block around everything are skipped; buffer declarations are read for names, an in-block
``T.match_buffer(A[a:b, c], shape)`` as a view of ``A``. Let bindings (``v: T.float32 = e``)
are substituted. Values: ``+ - * /``, comparisons, ``and``/``or``/``T.And``/``T.Or``/``T.Not``,
``T.max``/``T.min``/``T.exp``/... calls, ``T.if_then_else`` (``select``), numbers,
``T.float32(x)`` (the value), ``T.Cast``/``T.cast`` (to an integer type the uninterpreted
``int32(x)``), scalar parameters (``lo: T.float32``: the nullary ``lo()``),
``T.min_value``/``T.max_value``/``T.float32("-inf")``, and a data-dependent read
``A[idx[i], j]`` of an input no block writes (the uninterpreted ``A.load(idx[i], j)``).
Index expressions: ``+ - *``, ``//`` and ``%`` (floor semantics in TIR), ``T.floordiv``,
``T.floormod``, ``T.min``, ``T.max``.

Size parameters ``N = T.int32()`` / ``N = T.var("int32")`` / ``n, m = T.int64(), T.int64()``
/ a module-level ``n = TypeVar("n")`` lead every scope
(:func:`~verified_indexing.legality.cinn_ir.with_sizes`); loop extents may be affine
expressions of them. A well-formed construct that is not modelled (an opaque
``T.evaluate``, a data-dependent predicate or read of a computed buffer, a non-affine index,
a nested block...) raises :class:`~verified_indexing.errors.NotModelledError` naming it (the
answer is ``unknown``, exit 2); malformed input raises a :class:`ParseError` at its line and
column (exit 3). :func:`format_tvmscript` prints a program back as TVMScript in the
spelling of its input.
"""

from __future__ import annotations

import ast
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace

from verified_indexing.errors import NotModelledError, ParseError, VerifiedIndexingError
from verified_indexing.expr import AffineExpr, Const, Dim, emax, emin
from verified_indexing.legality.cinn_ir import (
    SIZE_MAX,
    Bind,
    BinOp,
    Call,
    Cond,
    For,
    Group,
    If,
    IndexValue,
    Load,
    Neg,
    Num,
    ScheduleBlock,
    Stmt,
    Store,
    Value,
    last_index,
    unique_names,
    with_sizes,
)

__all__ = ["format_like_input", "format_tvmscript", "is_tvmscript", "parse_tvmscript"]

#: The names TVMScript's ``T`` goes by (``from tvm.script import tir as T`` / ``tirx as T``).
_T_ALIASES = ("T", "tir", "tirx")
_INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool")
_DTYPES = (*_INT_DTYPES, "float16", "float32", "float64", "bfloat16")
_BUFFER_DECLS = ("alloc_buffer", "sblock_alloc_buffer", "match_buffer", "decl_buffer")
_DETECT = re.compile(r"@T\.prim_func|^\s*(?:import tvm|from tvm)|@tvm\.script|@(?:\w+\.)*to_cinn_llir\b",
                     re.MULTILINE)
_LOWEST = "3.40282347e+38f"
_LOOP_KINDS = {"serial": "serial", "parallel": "parallel", "vectorized": "vectorize", "unroll": "unroll",
               "thread_binding": "gpu_thread"}
_VALUE_CALLS = {"max", "min", "exp", "log", "sqrt", "tanh", "sigmoid", "abs", "fabs", "exp2", "rsqrt", "pow",
                "floor", "ceil", "round", "erf", "cos", "sin"}
_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
_ARITH = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Mod: "%"}


def is_tvmscript(text: str) -> bool:
    """Whether ``text`` looks like TVMScript (``@T.prim_func``, ``import tvm``)."""
    return _DETECT.search(text) is not None


def _bool_constant(node: ast.expr) -> bool | None:
    """``True``/``False``, ``T.bool(True)``/``T.bool(False)`` (also ``T.bool(0)``, ``T.bool(1)``): its value."""
    if isinstance(node, ast.Call) and _t_name(node.func) == "bool" and len(node.args) == 1 and not node.keywords:
        node = node.args[0]
    if isinstance(node, ast.Constant) and isinstance(node.value, (bool, int)):
        return bool(node.value)
    return None


def _is_t(node: ast.AST, *names: str) -> bool:
    """``node`` is ``T.name`` (or ``T.axis.name`` when ``names`` starts with ``axis``)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in _T_ALIASES:
        return False
    return tuple(reversed(parts)) == names


def _t_name(node: ast.AST) -> str | None:
    """``name`` for ``T.name`` (``None`` otherwise)."""
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in _T_ALIASES:
        return node.attr
    return None


def _is_buffer_annotation(a: ast.expr) -> bool:
    """``T.Buffer((16, 16), "float32")``, ``T.Buffer[(16, 16), "float32"]`` or CINN's ``DataArray((16, 16))``."""
    target = a.func if isinstance(a, ast.Call) else a.value if isinstance(a, ast.Subscript) else a
    return _t_name(target) == "Buffer" or _is_ir(target, "DataArray")


def _is_ir(node: ast.AST, name: str) -> bool:
    """``node`` is CINN's Python DSL ``ir.NAME`` (or a bare ``NAME``, as imported)."""
    if isinstance(node, ast.Attribute):
        return node.attr == name and isinstance(node.value, (ast.Name, ast.Attribute))
    return isinstance(node, ast.Name) and node.id == name


def _is_schedule_call(node: ast.stmt) -> bool:
    """``sch.compute_inline(b)`` / ``b = sch.get_block("A")``: a schedule step of CINN's DSL."""
    value = node.value if isinstance(node, (ast.Expr, ast.Assign)) else None
    return isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and \
        isinstance(value.func.value, ast.Name) and value.func.value.id == "sch"


def _is_entry(d: ast.expr) -> bool:
    """A ``@T.prim_func`` (any arguments) or CINN's ``@to_cinn_llir`` decorator."""
    f = d.func if isinstance(d, ast.Call) else d
    return _is_t(f, "prim_func") or _is_ir(f, "to_cinn_llir")


class _Reader:
    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.pending: dict[int, _Pending] = {}
        self.sizes: list[str] = []
        self.matched: set[str] = set()
        self.scalars: set[str] = set()  # scalar parameters (``lo: T.float32``)
        self.lets: dict[str, tuple[Value, AffineExpr | None]] = {}  # a block's let bindings
        self.views: dict[str, tuple[str, tuple[AffineExpr, ...], tuple[int, ...], int]] = {}
        self.let_reads: dict[str, tuple[set[str], set[str]]] = {}
        self.dd_loads: list[tuple[str, str, ast.AST]] = []  # data-dependent reads: tensor, text, node
        self.declared: dict[str, ast.AST] = {}  # ``X = T.Buffer(...)`` inside a block: used, never allocated
        # enclosing blocks of nested ones: axis names, their bindings, the scope depth, the predicate
        self.outer: list[tuple[tuple[str, ...], tuple[AffineExpr, ...], int, tuple[Cond, ...]]] = []
        self.block_written: set[str] = set()
        self.spelling = "block"  # ``sblock`` when the input spells blocks so
        self.module_sizes: list[str] = []  # ``n = TypeVar("n")`` at module level
        self.starts = [0]
        for line in text.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def unknown(self, message: str, node: ast.AST) -> NotModelledError:
        """A construct the reader does not model: the answer is ``unknown`` (exit 2)."""
        e = self.error(message, node)
        return NotModelledError(e.message, e.text, e.offset, e.length, e.source)

    def error(self, message: str, node: ast.AST) -> ParseError:
        line = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        end_col = getattr(node, "end_col_offset", None)
        end_line = getattr(node, "end_lineno", line)
        offset = self.starts[min(line - 1, len(self.starts) - 1)] + col
        length = (end_col - col) if end_col is not None and end_line == line else 1
        return ParseError(message, self.text, offset, max(1, length), self.source)

    # -- the function ----------------------------------------------------------
    def function(self, fn: ast.FunctionDef) -> Stmt:
        body = list(fn.body)
        for a in fn.args.args:  # scalar parameters: runtime values (``lo: T.float32``)
            if a.annotation is not None and _t_name(a.annotation) in _DTYPES:
                self.scalars.add(a.arg)
            elif (a.annotation is not None and _t_name(a.annotation) == "var") or (
                    isinstance(a.annotation, ast.Call) and _t_name(a.annotation.func) == "var"):
                self.scalars.add(a.arg)
        used = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name)}
        self.sizes.extend(n for n in self.module_sizes if n in used)
        # ``with T.block("root"):`` wrapping everything (after the function's attributes and size declarations)
        lead = [n for n in body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
                                         and _t_name(n.value.func) == "func_attr") and not self._is_size_decl(n)]
        if len(lead) == 1 and isinstance(lead[0], ast.With) and self._block_name(lead[0]) == "root":
            body = [n for n in body if n is not lead[0]] + list(lead[0].body)
        for node in body:  # size parameters first: they lead every scope
            self._size_decl(node)
        sizes = tuple(self.sizes)
        stmts = self.stmts(body, sizes, ())
        return with_sizes(ScheduleBlock("root", tuple(stmts), params=self._params(fn)), sizes)

    def _params(self, fn: ast.FunctionDef) -> tuple[str, ...]:
        """The buffers the caller sees: ``T.Buffer`` parameters and ``T.match_buffer``
        results of a handle (``T.alloc_buffer`` ones are internal; a match_buffer of a
        region is a view)."""
        names = [a.arg for a in fn.args.args if a.annotation is not None and _is_buffer_annotation(a.annotation)]
        for node in ast.walk(fn):
            if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)
                    and _t_name(node.value.func) == "match_buffer" and node.value.args
                    and isinstance(node.value.args[0], ast.Name)):
                names += [t.id for t in node.targets if isinstance(t, ast.Name)]
        return tuple(dict.fromkeys(names))

    def _block_name(self, node: ast.With) -> str | None:
        if len(node.items) != 1:
            return None
        e = node.items[0].context_expr
        if isinstance(e, ast.Call) and (_is_t(e.func, "block") or _is_t(e.func, "sblock")
                                        or _is_ir(e.func, "ScheduleBlockContext")):
            if _is_t(e.func, "sblock"):
                self.spelling = "sblock"
            if len(e.args) >= 1 and isinstance(e.args[0], ast.Constant) and isinstance(e.args[0].value, str):
                return e.args[0].value
            if not e.args:  # an unnamed block: named after its line
                return f"block_{e.lineno}"
            raise self.error("T.block needs its name as a string", e)
        return None

    def stmts(self, body: Sequence[ast.stmt], loops: tuple[str, ...], loop_nodes: tuple[For, ...]) -> list[Stmt]:
        out: list[Stmt] = []
        for node in body:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # docstring
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and (
                    _t_name(node.value.func) in _BUFFER_DECLS):
                self._buffer_decl(node.value)
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
                    _t_name(node.value.func) in ("func_attr", "reads", "writes", "block_attr", "sblock_attr"):
                continue  # attributes; a root block's declared regions
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and \
                    _t_name(node.value.func) == "evaluate":
                self._evaluate(node.value)
                continue
            if self._size_decl(node):
                continue
            if _is_schedule_call(node):
                continue  # CINN's DSL: a schedule step after the blocks (the question, not the program)
            if isinstance(node, ast.For):
                out.extend(self.loop(node, loops))
                continue
            if isinstance(node, ast.With):
                name = self._block_name(node)
                if name is not None:
                    out.extend(self.block(node, name, loops))
                    continue
            if isinstance(node, (ast.Assign, ast.AugAssign)) and self._is_store(node):
                raise self.unknown("a buffer store outside a T.block is not modelled", node)
            raise self.unknown(f"unsupported TVMScript statement ({type(node).__name__}): only for loops over "
                               "T.grid/T.serial/range and T.block are modelled here", node)
        return out

    def _evaluate(self, call: ast.Call) -> None:
        """``T.evaluate(0)`` does nothing; anything else (an extern call, a pointer
        ``X.access_ptr(...)`` handed to one) is an opaque use of memory: not modelled."""
        if len(call.args) == 1 and isinstance(call.args[0], ast.Constant):
            return
        ptrs = [n for n in ast.walk(call) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                and n.func.attr in ("access_ptr", "data") and isinstance(n.func.value, ast.Name)]
        if ptrs:
            f = ptrs[0].func
            assert isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
            raise self.unknown(f"T.evaluate({ast.unparse(call.args[0]) if call.args else ''}) is an opaque use of "
                               f"buffer {f.value.id} through {f.attr} (what it reads and writes is not modelled)",
                               call)
        raise self.unknown(f"T.evaluate({', '.join(ast.unparse(a) for a in call.args)}) is an opaque call (its "
                           "effect on memory is not modelled)", call)

    def _buffer_decl(self, call: ast.Call) -> None:
        """Buffers are read for names only: one that shares another's memory
        (``data=``, or a second ``T.match_buffer`` of one handle) would make a write
        through one name invisible to the other (the checks compare names)."""
        for kw in call.keywords:
            if kw.arg == "data":
                raise self.unknown("a buffer aliasing another's memory (data=...) is not modelled", kw.value)
        if _t_name(call.func) == "match_buffer" and call.args and isinstance(call.args[0], ast.Name):
            handle = call.args[0].id
            if handle in self.matched:
                raise self.unknown(f"a second T.match_buffer of the handle {handle} (aliasing buffers) is not modelled",
                                 call.args[0])
            self.matched.add(handle)

    @staticmethod
    def _is_size_decl(node: ast.stmt) -> bool:
        """``N = T.int32()``, ``N = T.var("int32")``, ``n, m = T.int64(), T.int64()``."""
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            return False
        target, value = node.targets[0], node.value
        names = target.elts if isinstance(target, ast.Tuple) else [target]
        calls = value.elts if isinstance(value, ast.Tuple) else [value]
        if len(names) != len(calls) or not all(isinstance(n, ast.Name) for n in names):
            return False
        for c in calls:
            if not isinstance(c, ast.Call):
                return False
            t = _t_name(c.func)
            if not (t == "var" or (t in ("int32", "int64") and not c.args)):
                return False
        return True

    def _size_decl(self, node: ast.stmt) -> bool:
        """A size parameter declaration (recorded; see :meth:`_is_size_decl`)."""
        if not self._is_size_decl(node):
            return False
        assert isinstance(node, ast.Assign)
        target = node.targets[0]
        for n in target.elts if isinstance(target, ast.Tuple) else [target]:
            assert isinstance(n, ast.Name)
            if n.id not in self.sizes:
                self.sizes.append(n.id)
        return True

    def _is_store(self, node: ast.Assign | ast.AugAssign) -> bool:
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        return isinstance(target, ast.Subscript)

    def loop(self, node: ast.For, loops: tuple[str, ...]) -> list[Stmt]:
        if node.orelse:
            raise self.unknown("for ... else is not modelled", node)
        names: list[str]
        if isinstance(node.target, ast.Name):
            names = [node.target.id]
        elif isinstance(node.target, ast.Tuple) and all(isinstance(e, ast.Name) for e in node.target.elts):
            names = [e.id for e in node.target.elts if isinstance(e, ast.Name)]
        else:
            raise self.error("a loop variable must be a name or a tuple of names", node.target)
        it = node.iter
        if not isinstance(it, ast.Call):
            raise self.unknown("a loop must iterate over T.grid(...), T.serial(...) or range(...)", it)
        kind = "serial"
        t = _t_name(it.func)
        ranges: list[tuple[int, int | AffineExpr]]
        if t == "grid":
            ranges = [(0, self.extent(a, loops)) for a in it.args]
        elif t in _LOOP_KINDS or (isinstance(it.func, ast.Name) and it.func.id == "range"):
            kind = _LOOP_KINDS.get(t or "serial", "serial")
            args = list(it.args)  # keywords (thread=..., annotations=...) are not bounds
            if len(args) == 1:
                ranges = [(0, self.extent(args[0], loops))]
            elif len(args) == 2:
                lo, hi = self.const(args[0]), self.extent(args[1], loops)
                ranges = [(lo, hi - lo)]
            else:
                raise self.unknown("a loop range takes (extent) or (start, stop)", it)
        else:
            raise self.unknown("a loop must iterate over T.grid(...), T.serial(...) or range(...)", it)
        if len(ranges) != len(names):
            raise self.error(f"{len(names)} loop variables for {len(ranges)} extents", node.target)
        # A loop variable named like an enclosing name opens a new frame and shadows it
        # (TVM's parser scopes names so); unique_names renames it apart after parsing.
        inner_loops = loops + tuple(names)
        body = self.stmts(node.body, inner_loops, ())
        stmt: For | None = None
        for at, (name, (lo, ext)) in reversed(list(enumerate(zip(names, ranges)))):
            inner = tuple(body) if stmt is None else (stmt,)
            if isinstance(ext, int):
                stmt = For(kind, name, lo, ext, inner)
            else:  # a symbolic extent over the sizes and enclosing loops
                stmt = For(kind, name, lo, SIZE_MAX, inner, ext, loops + tuple(names[:at]))
        assert stmt is not None
        return _hoist(stmt, self)

    def const(self, node: ast.expr) -> int:
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self.const(node.operand)
        if isinstance(node, ast.Call) and _t_name(node.func) in ("int32", "int64") and len(node.args) == 1:
            return self.const(node.args[0])
        raise self.unknown("a loop start must be an integer constant", node)

    def extent(self, node: ast.expr, loops: tuple[str, ...]) -> int | AffineExpr:
        """A loop extent: an integer, or an affine expression of the size parameters
        (``N = T.int32()``) and enclosing loops."""
        try:
            return self.const(node)
        except ParseError:
            pass
        e = self.index(node, loops)
        if not e.variables():
            return e.evaluate([])
        return e

    # -- blocks ----------------------------------------------------------------
    def block(self, node: ast.With, name: str, loops: tuple[str, ...]) -> list[Stmt]:
        names: list[str] = []
        values: list[AffineExpr] = []
        kinds: list[str] = []
        where: list[Cond] = []
        init: list[ast.stmt] | None = None
        stores: list[Store] = []
        body: list[ast.stmt] = []  # stores, let bindings and region views, in order
        nested: list[ast.stmt] = []
        for st in node.body:
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant):
                continue
            if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) and _t_name(st.value.func) == "Buffer" \
                    and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                # TVM prints a buffer it uses where no allocation or parameter defines it so (a primitive
                # that removed the buffer's producer left a reader): memory nothing allocates or writes.
                # With data=, strides or an offset it would be a view of another buffer's memory: unknown.
                call = st.value
                if len(call.args) > 2 or any(k.arg not in ("dtype", "scope", "align", "offset_factor")
                                             for k in call.keywords):
                    raise self.unknown(f"{ast.unparse(st)}: a buffer declared inside block {name!r} with its "
                                       "memory, strides or offset given (a view of other memory) is not modelled", st)
                self.declared.setdefault(st.targets[0].id, st)
                continue
            if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) and \
                    _t_name(st.value.func) in ("alloc_buffer", "sblock_alloc_buffer", "decl_buffer"):
                raise self.unknown(f"{ast.unparse(st)}: a buffer allocated inside block {name!r} (one buffer per "
                                   "instance of the block, as TVM's cache_read/cache_write under blockize print it) "
                                   "is not modelled", st)
            if isinstance(st, ast.Assign) and isinstance(st.value, ast.Call) and not body and \
                    self._axis(st, loops, names, values, kinds):
                continue
            if isinstance(st, ast.Expr) and isinstance(st.value, ast.Call):
                t = _t_name(st.value.func)
                if t in ("reads", "writes", "block_attr", "sblock_attr"):  # annotations (storage_align...)
                    continue
                if t == "where":
                    if len(st.value.args) != 1:
                        raise self.error("T.where takes one condition", st.value)
                    # the predicate belongs to the block's realization: it is read in the enclosing
                    # scope, where TVM's parser finds the block's own variables undefined
                    for x in ast.walk(st.value.args[0]):
                        if isinstance(x, ast.Name) and x.id in names:
                            raise self.error(f"T.where uses {x.id!r}, an iteration variable of this block: the "
                                             "predicate is read outside the block (TVM: undefined variable); "
                                             "write it with the loop variables", x)
                    where.extend(self.predicate(st.value.args[0], loops + tuple(names)))
                    continue
                if t == "evaluate":
                    self._evaluate(st.value)
                    continue
            if isinstance(st, ast.With) and len(st.items) == 1 and isinstance(st.items[0].context_expr, ast.Call) \
                    and _is_t(st.items[0].context_expr.func, "init"):
                if init is not None:
                    raise self.error("a block has one T.init()", st)
                init = list(st.body)
                continue
            if isinstance(st, (ast.Assign, ast.AugAssign)) and self._is_store(st):
                body.append(st)
                continue
            if isinstance(st, (ast.Assign, ast.AnnAssign)) and self._let_target(st) is not None:
                body.append(st)
                continue
            if isinstance(st, ast.For) or (isinstance(st, ast.With) and self._block_name(st) is not None):
                nested.append(st)  # an outer block (blockize): its loops and inner blocks
                continue
            raise self.unknown(f"unsupported statement in a T.block ({type(st).__name__}: "
                               f"{ast.unparse(st).splitlines()[0]})", st)
        if nested:
            return self._outer_block(node, name, loops, names, values, kinds, where, nested, body, init)
        where.extend(c for outer in self.outer for c in outer[3])  # the predicates of enclosing blocks
        scope = loops + tuple(names)
        self.lets, self.views = {}, {}
        written: set[str] = set()
        self.block_written = written
        try:
            for st in body:
                if isinstance(st, ast.AnnAssign) or (isinstance(st, ast.Assign) and not self._is_store(st)):
                    self._let(st, scope, written)
                    continue
                assert isinstance(st, (ast.Assign, ast.AugAssign))
                store = self.store(st, scope)
                written.add(store.tensor)
                stores.append(store)
            if init is not None:
                init_stores = [self.store(st, scope) for st in init if self._init_stmt(st)]
        finally:
            self.lets, self.views = {}, {}
        if not stores:
            raise self.unknown(f"block {name!r} stores nothing", node)
        bind: tuple[Stmt, ...] = (Bind(tuple(names), tuple(values), loops),) if names else ()

        def wrap(ss: Sequence[Store], sc: tuple[str, ...]) -> tuple[Stmt, ...]:
            return (If(tuple(where), tuple(ss), sc),) if where else tuple(ss)

        main = ScheduleBlock(name, bind + wrap(stores, scope))
        if init is None:
            return [main]
        # Hoisted by the enclosing loop nest where it can be (see _hoist), else a predicated init block.
        self.pending[id(main)] = _Pending(main, tuple(init_stores), tuple(names), tuple(values), tuple(kinds), loops,
                                          tuple(where), node)
        return [main]

    def _outer_block(self, node: ast.With, name: str, loops: tuple[str, ...], names: list[str],
                     values: list[AffineExpr], kinds: list[str], where: list[Cond], nested: list[ast.stmt],
                     body: list[ast.stmt], init: list[ast.stmt] | None) -> list[Stmt]:
        """A block holding loops and blocks (TVM's ``blockize``): its iteration variables
        name their bindings (over the enclosing loops) in everything inside, its predicate
        guards every block inside; its ``T.init()`` (blocks) runs first where every reduce
        axis of the block is 0; the block itself stores nothing and is not kept."""
        if body:
            raise self.unknown(f"block {name!r} holds both nested blocks or loops and stores: not modelled", node)
        self.outer.append((tuple(names), tuple(values), len(loops), tuple(where)))
        try:
            out: list[Stmt] = []
            if init is not None:
                first = [(v, "==", Const(0)) for v, k in zip(values, kinds) if k == "R"]
                init_body = self.stmts(init, loops, ())
                out += [If(tuple(first), tuple(init_body), loops)] if first else init_body
            return out + self.stmts(nested, loops, ())
        finally:
            self.outer.pop()

    def _outer_axis(self, name: str, scope: Sequence[str]) -> AffineExpr | None:
        """The binding of ``name`` when it names an iteration variable of an enclosing block
        not shadowed by a deeper loop or axis."""
        for names, values, depth, _ in reversed(self.outer):
            if name in names:
                if name in scope and last_index(scope, name) >= depth:
                    return None
                return values[names.index(name)]
        return None

    def _let_target(self, st: ast.Assign | ast.AnnAssign) -> str | None:
        target = st.targets[0] if isinstance(st, ast.Assign) and len(st.targets) == 1 else \
            st.target if isinstance(st, ast.AnnAssign) else None
        if isinstance(target, ast.Name) and st.value is not None:
            return target.id
        return None

    def _let(self, st: ast.Assign | ast.AnnAssign, scope: tuple[str, ...], written: set[str]) -> None:
        """``v: T.float32 = e`` / ``v = e`` in a block: ``v`` names ``e`` in the statements after
        it; ``X = T.match_buffer(A[a:b, c], shape)`` names a region of ``A``."""
        name = self._let_target(st)
        assert name is not None and st.value is not None
        if isinstance(st.value, ast.Call) and _t_name(st.value.func) in _BUFFER_DECLS:
            self._region_view(name, st.value, scope)
            return
        v = self.value(st.value, scope)
        loads = {x.tensor for x in _loads(v)}
        try:
            idx: AffineExpr | None = self._index(st.value, scope)
        except (ParseError, VerifiedIndexingError):
            idx = None
        self.lets[name] = (v, idx)
        self.let_reads[name] = (loads, set(written))

    def _region_view(self, name: str, call: ast.Call, scope: tuple[str, ...]) -> None:
        if _t_name(call.func) != "match_buffer" or not call.args or not isinstance(call.args[0], ast.Subscript) \
                or not isinstance(call.args[0].value, ast.Name):
            raise self.unknown("a buffer declared inside a block is modelled only as T.match_buffer of a region "
                               "(X = T.match_buffer(A[a:b, c], shape))", call)
        for kw in call.keywords:
            if kw.arg not in ("dtype", "offset_factor", "align", "scope"):
                raise self.unknown(f"T.match_buffer with {kw.arg}= is not modelled", kw.value)
        region = call.args[0]
        assert isinstance(region.value, ast.Name)
        base = region.value.id
        sl = region.slice
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        offsets: list[AffineExpr] = []
        extents: list[int | None] = []
        for e in elts:
            if isinstance(e, ast.Slice):
                if e.lower is None or e.upper is None or e.step is not None:
                    raise self.unknown("a region needs a lower and an upper bound (a:b)", e)
                lo = self.index(e.lower, scope)
                ext = self.index(e.upper, scope) - lo
                offsets.append(lo)
                extents.append(ext.evaluate([]) if not ext.variables() else None)
            else:
                offsets.append(self.index(e, scope))
                extents.append(1)
        shape = call.args[1] if len(call.args) > 1 else None
        rank = len(shape.elts) if isinstance(shape, (ast.Tuple, ast.List)) else 1
        if rank == len(elts):
            keep = tuple(range(len(elts)))
        else:
            keep = tuple(d for d, ext in enumerate(extents) if ext != 1)
            if len(keep) != rank:
                raise self.unknown(f"T.match_buffer: the region of {base} and the shape have different ranks", call)
        self.views[name] = (base, tuple(offsets), keep, len(elts))

    def _init_stmt(self, st: ast.stmt) -> bool:
        if isinstance(st, (ast.Assign, ast.AugAssign)) and self._is_store(st):
            return True
        raise self.unknown("T.init() may only hold buffer stores", st)

    def _axis(self, st: ast.Assign, loops: tuple[str, ...], names: list[str], values: list[AffineExpr],
              kinds: list[str]) -> bool:
        call = st.value
        assert isinstance(call, ast.Call)
        f = call.func
        targets = st.targets[0]
        tnames: list[str]
        if isinstance(targets, ast.Name):
            tnames = [targets.id]
        elif isinstance(targets, ast.Tuple) and all(isinstance(e, ast.Name) for e in targets.elts):
            tnames = [e.id for e in targets.elts if isinstance(e, ast.Name)]
        else:
            return False
        if _is_t(f, "axis", "remap") or _is_ir(f, "AxisMap"):
            if len(call.args) != 2 or not isinstance(call.args[0], ast.Constant) or \
                    not isinstance(call.args[0].value, str) or not isinstance(call.args[1], (ast.List, ast.Tuple)):
                raise self.error('T.axis.remap takes a kind string and a list of loop variables', call)
            ks = call.args[0].value
            vals = call.args[1].elts
            if len(ks) != len(vals) or len(vals) != len(tnames) or any(k not in "SR" for k in ks):
                raise self.error("T.axis.remap: kinds (S or R), values and names must match in number", call)
            before = list(names)  # the values are read before any name of this statement is bound
            for n, k, v in zip(tnames, ks, vals):
                self._own_axis(v, before)
                self._add_axis(n, k, self.index(v, loops), names, values, kinds, st)
            return True
        for kind_names, k in ((("spatial", "S"), "S"), (("reduce", "R"), "R")):
            if any(_is_t(f, "axis", kn) for kn in kind_names):
                if len(tnames) != 1 or len(call.args) != 2:
                    raise self.error(f"T.axis.{kind_names[0]} takes (extent, value) and binds one name", call)
                self._own_axis(call.args[1], names)
                self._add_axis(tnames[0], k, self.index(call.args[1], loops), names, values, kinds, st)
                return True
        if _t_name(f) == "axis" or (isinstance(f, ast.Attribute) and _is_t(f.value, "axis")):
            raise self.unknown("unsupported axis kind (only spatial/S, reduce/R and remap are modelled)", call)
        return False

    def _own_axis(self, value: ast.expr, names: list[str]) -> None:
        """An axis value naming an axis bound earlier in the same block: TVM's parser reads
        the block's own iteration variable there, which TVM rejects (not well-formed)."""
        for x in ast.walk(value):
            if isinstance(x, ast.Name) and x.id in names:
                raise self.error(f"the binding uses {x.id!r}, an iteration variable of this block (TVM reads "
                                 "the block's own variable here: not well-formed)", x)

    def _add_axis(self, name: str, kind: str, value: AffineExpr, names: list[str], values: list[AffineExpr],
                  kinds: list[str], node: ast.AST) -> None:
        if name in names:
            raise self.error(f"iteration variable {name!r} is bound twice", node)
        names.append(name)
        values.append(value)
        kinds.append(kind)

    # -- stores, values, indices -------------------------------------------------
    def store(self, st: ast.stmt, scope: tuple[str, ...]) -> Store:
        if isinstance(st, ast.Assign):
            if len(st.targets) != 1:
                raise self.error("one store target at a time", st)
            target = st.targets[0]
            assert isinstance(target, ast.Subscript)
            tensor, idx = self.subscript(target, scope)
            return Store(tensor, idx, self.value(st.value, scope), tuple(scope))
        assert isinstance(st, ast.AugAssign) and isinstance(st.target, ast.Subscript)
        tensor, idx = self.subscript(st.target, scope)
        op = _ARITH.get(type(st.op))
        if op is None:
            raise self.unknown("unsupported augmented assignment", st)
        return Store(tensor, idx, BinOp(op, Load(tensor, idx), self.value(st.value, scope)), scope)

    def subscript(self, node: ast.Subscript, scope: Sequence[str]) -> tuple[str, tuple[AffineExpr, ...]]:
        if not isinstance(node.value, ast.Name):
            raise self.unknown(f"a buffer must be named ({ast.unparse(node.value)})", node.value)
        sl = node.slice
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if any(isinstance(e, ast.Slice) for e in elts):
            raise self.unknown("buffer slices are not modelled (index each element)", node)
        for e in elts:
            dep = next((x for x in ast.walk(e) if isinstance(x, ast.Subscript)), None)
            if dep is not None:
                raise self.unknown(f"the index {ast.unparse(e)} of {node.value.id} depends on the data "
                                   f"({ast.unparse(dep)}, a runtime value): not modelled", e)
        name = node.value.id
        idx = tuple(self.index(e, scope) for e in elts)
        if name in self.views:
            base, offsets, keep, _rank = self.views[name]
            if len(idx) != len(keep):
                raise self.error(f"{name} has {len(keep)} dimensions, indexed with {len(idx)}", node)
            full = list(offsets)
            for d, at in zip(keep, idx):
                full[d] = full[d] + at
            return base, tuple(full)
        return name, idx

    def index(self, node: ast.expr, scope: Sequence[str]) -> AffineExpr:
        try:
            return self._index(node, scope)
        except ParseError:
            raise
        except VerifiedIndexingError as exc:
            raise self.unknown(f"an index must be quasi-affine in the loop and iteration variables: {exc}",
                             node) from None

    def _index(self, node: ast.expr, scope: Sequence[str]) -> AffineExpr:
        if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
            return Const(node.value)
        if isinstance(node, ast.Name):
            if node.id in self.lets:
                self._check_let(node)
                let_idx = self.lets[node.id][1]
                if let_idx is None:
                    raise self.unknown(f"the let-bound {node.id!r} used in an index is not an affine index", node)
                return let_idx
            outer = self._outer_axis(node.id, scope)
            if outer is not None:
                return outer
            if node.id not in scope:
                if node.id in self.scalars:
                    raise self.unknown(f"the index depends on the scalar parameter {node.id!r} (a runtime value): "
                                       "not modelled", node)
                raise self.error(f"unknown variable {node.id!r} in an index (not a loop or iteration variable)",
                                 node)
            return Dim(last_index(scope, node.id))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            return -self._index(node.operand, scope)
        if isinstance(node, ast.BinOp):
            a, b = self._index(node.left, scope), self._index(node.right, scope)
            if isinstance(node.op, ast.Add):
                return a + b
            if isinstance(node.op, ast.Sub):
                return a - b
            if isinstance(node.op, ast.Mult):
                return a * b
            if isinstance(node.op, (ast.FloorDiv, ast.Mod)):
                c = b.evaluate([]) if not b.variables() else None
                if c is None or c == 0:
                    raise self.unknown("the divisor of '//' or '%' must be a nonzero constant", node.right)
                return a.floordiv(c) if isinstance(node.op, ast.FloorDiv) else a.mod(c)
            raise self.unknown("an index supports + - * // % only ('/' on integers is floor division in TIR: "
                             "write '//')", node)
        if isinstance(node, ast.Call):
            t = _t_name(node.func)
            if t in ("floordiv", "floormod", "min", "max") and len(node.args) == 2:
                a, b = self._index(node.args[0], scope), self._index(node.args[1], scope)
                if t == "min":
                    return emin(a, b)
                if t == "max":
                    return emax(a, b)
                c = b.evaluate([]) if not b.variables() else None
                if c is None or c == 0:
                    raise self.unknown("the divisor must be a nonzero constant", node.args[1])
                return a.floordiv(c) if t == "floordiv" else a.mod(c)
            if t in ("int32", "int64") and len(node.args) == 1:
                return self._index(node.args[0], scope)
        raise self.unknown("an index must be quasi-affine in the loop and iteration variables", node)

    def _data_dependent_load(self, node: ast.Subscript, scope: Sequence[str]) -> Value | None:
        """``A[idx[i], j]``: a read at an index that is a runtime value. When no block of
        the program writes ``A`` (checked at the end), its value is an uninterpreted
        function of the index values, ``A.load(idx[i], j)``: every check that does not
        depend on which element is read is decided. Otherwise: unknown, naming the value."""
        if not isinstance(node.value, ast.Name):
            return None
        sl = node.slice
        elts = sl.elts if isinstance(sl, ast.Tuple) else [sl]
        if not any(isinstance(x, ast.Subscript) for e in elts for x in ast.walk(e)):
            return None
        name = node.value.id
        if name in self.views or any(isinstance(e, ast.Slice) for e in elts):
            return None  # refused by subscript()
        args = tuple(self.value(e, scope) for e in elts)
        dep = next(x for e in elts for x in ast.walk(e) if isinstance(x, ast.Subscript))
        self.dd_loads.append((name, f"{ast.unparse(node)} (the index {ast.unparse(dep)} is a runtime value)", node))
        return Call(f"{name}.load", args)

    def _check_let(self, node: ast.Name) -> None:
        loads, before = self.let_reads.get(node.id, (set(), set()))
        stale = loads & (self.block_written - before)
        if stale:
            raise self.unknown(f"{node.id!r} is bound to a value read from {', '.join(sorted(stale))}, which the "
                               "block writes before this use (a let of a changing buffer is not modelled)", node)

    def predicate(self, node: ast.expr, scope: Sequence[str]) -> list[Cond]:
        dep = next((x for x in ast.walk(node) if isinstance(x, ast.Subscript)), None)
        if dep is not None:
            raise self.unknown(f"the predicate {ast.unparse(node)} depends on the data ({ast.unparse(dep)}, a "
                               "runtime value): not modelled", node)
        if isinstance(node, ast.BoolOp) and isinstance(node.op, ast.And):
            return [c for v in node.values for c in self.predicate(v, scope)]
        truth = _bool_constant(node)
        if truth is not None:  # T.where(T.bool(False)) (TVM prints it): the block never runs
            return [] if truth else [(Const(0), "==", Const(1))]
        if isinstance(node, ast.Call) and _t_name(node.func) == "And" and len(node.args) == 2:
            return [c for v in node.args for c in self.predicate(v, scope)]
        if isinstance(node, ast.Compare):
            out: list[Cond] = []
            left = node.left
            for op, right in zip(node.ops, node.comparators):
                sym = _CMP.get(type(op))
                if sym is None or sym == "!=":
                    raise self.unknown("a predicate comparison must be < <= > >= or == (a convex affine constraint)",
                                     node)
                out.append((self.index(left, scope), sym, self.index(right, scope)))
                left = right
            return out
        raise self.unknown("a predicate must be a conjunction ('and') of affine comparisons", node)

    def value(self, node: ast.expr, scope: Sequence[str]) -> Value:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and \
                not isinstance(node.value, bool):
            return _num(node.value)
        if isinstance(node, ast.Name):
            if node.id in self.lets:
                self._check_let(node)
                return self.lets[node.id][0]
            outer = self._outer_axis(node.id, scope)
            if outer is not None:
                return IndexValue(outer)
            if node.id in scope:
                return IndexValue(Dim(last_index(scope, node.id)))
            if node.id in self.scalars:
                return Call(node.id, ())  # a scalar parameter: one runtime value (a nullary function)
            raise self.error(f"unknown name {node.id!r} in a value", node)
        if isinstance(node, ast.Subscript):
            dd = self._data_dependent_load(node, scope)
            if dd is not None:
                return dd
            tensor, idx = self.subscript(node, scope)
            return Load(tensor, idx)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.USub):
                inner = self.value(node.operand, scope)
                return Neg(inner)
            if isinstance(node.op, ast.Not):
                return Call("!", (self.value(node.operand, scope),))
        if isinstance(node, ast.BinOp):
            op = _ARITH.get(type(node.op))
            if op is None and isinstance(node.op, ast.FloorDiv):
                op = "/"
            if op is not None:
                return BinOp(op, self.value(node.left, scope), self.value(node.right, scope))
        if isinstance(node, ast.Compare) and len(node.ops) == 1:
            sym = _CMP.get(type(node.ops[0]))
            if sym is not None:
                return BinOp(sym, self.value(node.left, scope), self.value(node.comparators[0], scope))
        if isinstance(node, ast.BoolOp):
            op = "&&" if isinstance(node.op, ast.And) else "||"
            v = self.value(node.values[0], scope)
            for w in node.values[1:]:
                v = BinOp(op, v, self.value(w, scope))
            return v
        if isinstance(node, ast.Call):
            t = _t_name(node.func)
            if t in _DTYPES and len(node.args) == 1:
                a = node.args[0]
                if isinstance(a, ast.Constant) and isinstance(a.value, str):
                    if a.value in ("-inf", "inf"):
                        return Neg(Num(_LOWEST)) if a.value == "-inf" else Num(_LOWEST)
                    raise self.unknown(f"unsupported constant {a.value!r}", a)
                if isinstance(a, ast.Constant) or (isinstance(a, ast.UnaryOp) and isinstance(a.operand, ast.Constant)):
                    return self.value(a, scope)  # a typed constant
                return _cast(t, self.value(a, scope))
            if t in ("min_value", "max_value"):
                return Neg(Num(_LOWEST)) if t == "min_value" else Num(_LOWEST)
            if t in ("Cast", "cast") and len(node.args) == 2:
                dtype_node, x = (node.args[0], node.args[1]) if t == "Cast" else (node.args[1], node.args[0])
                if not (isinstance(dtype_node, ast.Constant) and isinstance(dtype_node.value, str)):
                    raise self.error(f"T.{t} needs its type as a string", dtype_node)
                return _cast(dtype_node.value, self.value(x, scope))
            if t in ("And", "Or") and len(node.args) == 2:
                return BinOp("&&" if t == "And" else "||", self.value(node.args[0], scope),
                             self.value(node.args[1], scope))
            if t == "Not" and len(node.args) == 1:
                return Call("!", (self.value(node.args[0], scope),))
            if t in ("if_then_else", "Select") and len(node.args) == 3:
                return Call("select", tuple(self.value(a, scope) for a in node.args))
            if t in _VALUE_CALLS:
                return Call(t, tuple(self.value(a, scope) for a in node.args))
        raise self.unknown(f"unsupported value ({ast.unparse(node)})", node)


def _cast(dtype: str, v: Value) -> Value:
    """A conversion to ``dtype``: the value itself for an index or a literal (exact), else
    an uninterpreted ``int32(x)`` / ``float16(x)`` / ``float32(x)`` (CINN's spelling of the
    cast). The type of a loaded value is not tracked, so even a conversion to ``float32`` may
    round (from ``float64``) or truncate: it is never dropped from a rewritten program."""
    if isinstance(v, IndexValue):
        return v
    if isinstance(v, Num) and (dtype not in _INT_DTYPES or re.fullmatch(r"-?\d+", v.text)):
        return v
    return Call(dtype, (v,))


def _loads(v: Value) -> list[Load]:
    if isinstance(v, Load):
        return [v]
    if isinstance(v, BinOp):
        return _loads(v.lhs) + _loads(v.rhs)
    if isinstance(v, Neg):
        return _loads(v.operand)
    if isinstance(v, Call):
        return [x for a in v.args for x in _loads(a)]
    return []


def _num(v: int | float) -> Num:
    if isinstance(v, float):
        return Num(f"{v!r}f" if "e" in repr(v) or "." in repr(v) else f"{v}.0f")
    return Num(str(v))


@dataclass(frozen=True)
class _Pending:
    """A block with a ``T.init()``, before its init block is placed (internal)."""

    main: ScheduleBlock
    init_stores: tuple[Store, ...]
    names: tuple[str, ...]
    values: tuple[AffineExpr, ...]
    kinds: tuple[str, ...]
    loops: tuple[str, ...]
    where: tuple[Cond, ...]
    node: ast.AST


def _hoist(stmt: For, r: _Reader) -> list[Stmt]:
    """Rewrite ``for ... { for k { block-with-init } }`` into
    ``for ... { init block; for k { block } }``: the reduce axes must be bound
    to the innermost loops around the block, which hold nothing else."""
    # Walk down the chain of single-statement loops.
    chain: list[For] = []
    s: Stmt = stmt
    while isinstance(s, For) and len(s.body) == 1:
        chain.append(s)
        s = s.body[0]
    if not isinstance(s, ScheduleBlock) or id(s) not in r.pending:
        return [stmt]
    p = r.pending[id(s)]
    names, values, kinds, loops = p.names, p.values, p.kinds, p.loops
    # Where the init cannot be hoisted before the reduction loops, the block stays pending
    # and gets a predicated init block instead (see _predicated_init).
    red_loops: list[int] = []
    for v, k in zip(values, kinds):
        if k != "R":
            continue
        if not isinstance(v, Dim) or v.index >= len(loops):
            return [stmt]  # a reduce axis not bound to one loop variable
        red_loops.append(v.index)
    n = len(loops)
    first = min(red_loops) if red_loops else n
    if sorted(red_loops) != list(range(first, n)):
        return [stmt]  # the reduce loops are not the innermost ones
    outer = n - len(chain)  # loops of the enclosing statements, not in this chain
    if first < outer:
        return [stmt]
    for v, k in zip(values, kinds):
        if k == "S" and any(isinstance(x, Dim) and x.index >= first for x in v.walk()):
            return [stmt]
    for st in p.init_stores:
        used = {x.index for e in st.indices for x in e.walk() if isinstance(x, Dim)}
        if any(first <= k < n for k in used):
            return [stmt]  # the init store uses a reduction loop variable directly
    r.pending.pop(id(s))
    sp = [(nm, v) for nm, v, k in zip(names, values, kinds) if k == "S"]
    init_scope = loops[:first] + tuple(nm for nm, _ in sp)
    # init stores: re-index from the block scope (loops + all names) to the init scope, by
    # position (a name may be bound twice: a block's axis shadowing a loop variable)
    remap: list[AffineExpr] = [Dim(k) if k < first else Const(0) for k in range(n)]
    spatial_at = 0
    for k in kinds:
        if k == "S":
            remap.append(Dim(first + spatial_at))
            spatial_at += 1
        else:
            remap.append(Const(0))
    where = [(a.substitute(dims=remap), op, b.substitute(dims=remap)) for a, op, b in p.where]
    init_stores = tuple(Store(f"{st.tensor}__reduce_init", tuple(e.substitute(dims=remap) for e in st.indices),
                              _remap_value(st.value, remap), init_scope)
                        for st in p.init_stores)
    init_body: tuple[Stmt, ...] = (Bind(tuple(nm for nm, _ in sp), tuple(v for _, v in sp), loops[:first]),) \
        if sp else ()
    init_body += (If(tuple(where), init_stores, init_scope),) if where else init_stores
    init_block = ScheduleBlock(f"{p.main.name}__reduce_init", init_body)
    # rebuild: the loops chain[:split] outside, then the init block and the reduce loops
    split = first - outer
    inner: Stmt = p.main
    for f in reversed(chain[split:]):
        inner = replace(f, body=(inner,))
    body: list[Stmt] = [init_block, inner]
    for f in reversed(chain[:split]):
        body = [replace(f, body=tuple(body))]
    return body


def _remap_value(v: Value, remap: list[AffineExpr]) -> Value:
    from verified_indexing.legality.inline import _subst_value

    return _subst_value(v, remap)


def parse_tvmscript(text: str, source: str = "<input>", block: str | None = None) -> Stmt:
    """The program of the ``@T.prim_func`` in ``text`` (with several, the one
    holding block ``block``, else the first) as CINN loop-nest IR."""
    r = _Reader(text, source)
    try:
        with warnings.catch_warnings():  # "invalid decimal literal" and the like: the error, if any, is ours
            warnings.simplefilter("ignore", SyntaxWarning)
            tree = ast.parse(text, filename=source)
    except SyntaxError as exc:
        line = exc.lineno or 1
        offset = r.starts[min(line - 1, len(r.starts) - 1)] + max(0, (exc.offset or 1) - 1)
        raise ParseError(f"Python syntax error: {exc.msg}", text, offset, 1, source) from None
    funcs = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef) and any(map(_is_entry, n.decorator_list))]
    if not funcs:
        raise ParseError("no @T.prim_func (or CINN @to_cinn_llir) function in the input", text, 0, 1, source)
    fn = funcs[0]
    r.module_sizes = [t.targets[0].id for t in tree.body if isinstance(t, ast.Assign) and len(t.targets) == 1
                      and isinstance(t.targets[0], ast.Name) and isinstance(t.value, ast.Call)
                      and isinstance(t.value.func, ast.Name) and t.value.func.id == "TypeVar"]
    if block is not None and len(funcs) > 1:
        for f in funcs:
            if any(isinstance(n, ast.Call) and (_is_t(n.func, "block") or _is_t(n.func, "sblock")
                                                or _is_ir(n.func, "ScheduleBlockContext")) and n.args and
                   isinstance(n.args[0], ast.Constant) and n.args[0].value == block for n in ast.walk(f)):
                fn = f
                break
    prog = r.function(fn)
    if r.pending:
        prog = _place_pending(prog, r)
    written_somewhere = _stored(prog) if r.declared else set()
    for name, node in r.declared.items():
        if name in written_somewhere:
            raise r.unknown(f"{name} is declared inside a block (T.Buffer: no allocation, no parameter) and written: "
                            "memory nothing allocates is not modelled", node)
    if r.dd_loads:
        written = _stored(prog)
        for tensor, what, node in r.dd_loads:
            if tensor in written:
                raise r.unknown(f"{what}: {tensor} is computed by the program, so which element is read depends "
                                "on the data: not modelled", node)
    prog = unique_names(prog, {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)})
    return _decomposed_inits(prog)


def _decomposed_inits(prog: Stmt) -> Stmt:
    """The init block of ``decompose_reduction``'s form (a block ``X_init`` storing ``X[idx] = v`` and a later
    block ``X_update`` storing ``X[idx] = X[idx] op ...``) tagged as the reduction's init: its store becomes
    ``X__reduce_init`` (which stores into ``X``: the program computes the same), as the reader writes a
    ``T.init()``. Only when ``X`` has exactly these two writers, each with one store, the init's value does not
    read ``X``, the update reads ``X`` and no block between them reads ``X``. Whether it is a modelled
    reduction (one loop more, the same outer loops, the same element) is decided by each analysis
    (``epilogue.find_reduction``), as for ``T.init()``."""
    from verified_indexing.legality.cinn_ir import walk_blocks
    from verified_indexing.legality.inline import _own_stores, _value_loads

    contexts = list(walk_blocks(prog))
    writers: dict[str, list[tuple[int, Store]]] = {}
    for k, c in enumerate(contexts):
        for st in _own_stores(c):
            writers.setdefault(st.tensor, []).append((k, st))
    tag: set[str] = set()
    for tensor, ws in writers.items():
        if len(ws) != 2 or tensor.endswith("__reduce_init"):
            continue
        (a, ist), (u, ust) = ws
        if a == u or len(_own_stores(contexts[a])) != 1 or len(_own_stores(contexts[u])) != 1:
            continue
        if contexts[a].order > contexts[u].order:
            continue
        if any(ld.tensor == tensor for ld in _value_loads(ist.value)):
            continue
        if not any(ld.tensor == tensor for ld in _value_loads(ust.value)):
            continue
        if any(ld.tensor == tensor for k, c in enumerate(contexts) if k not in (a, u)
               and contexts[a].order < c.order < contexts[u].order
               for st in _own_stores(c) for ld in _value_loads(st.value)):
            continue
        tag.add(contexts[a].block.name)
    if not tag:
        return prog

    def go(st: Stmt, inside: bool) -> Stmt:
        if isinstance(st, Store):
            return replace(st, tensor=f"{st.tensor}__reduce_init") if inside else st
        if isinstance(st, ScheduleBlock):
            inner = st.name in tag
            return replace(st, body=tuple(go(c, inner) if not isinstance(c, ScheduleBlock) else go(c, False)
                                          for c in st.body))
        if isinstance(st, (For, Group, If)):
            return replace(st, body=tuple(go(c, inside) for c in st.body))
        return st

    return go(prog, False)


def _predicated_init(p: _Pending) -> ScheduleBlock:
    """The init block of a reduction whose init cannot be hoisted: ``X__reduce_init``
    inside the block's loops, storing where every reduce axis is at its first value
    (0) -- TVM's semantics of ``T.init()`` -- and the block's predicate holds."""
    n = len(p.loops)
    scope = p.loops + p.names
    conds: list[Cond] = [(Dim(n + k), "==", Const(0)) for k, kind in enumerate(p.kinds) if kind == "R"]
    conds += list(p.where)
    stores = tuple(Store(f"{st.tensor}__reduce_init", st.indices, st.value, st.scope) for st in p.init_stores)
    body: tuple[Stmt, ...] = (Bind(p.names, p.values, p.loops),) if p.names else ()
    body += (If(tuple(conds), stores, scope),) if conds else stores
    return ScheduleBlock(f"{p.main.name}__reduce_init", body)


def _place_pending(s: Stmt, r: _Reader) -> Stmt:
    """Every block still pending preceded by its predicated init block."""
    if isinstance(s, (For, If, Group)) or (isinstance(s, ScheduleBlock) and id(s) not in r.pending):
        body: list[Stmt] = []
        for c in s.body:
            if isinstance(c, ScheduleBlock) and id(c) in r.pending:
                body += [_predicated_init(r.pending[id(c)]), c]
            else:
                body.append(_place_pending(c, r))
        return replace(s, body=tuple(body))
    return s


# ---------------------------------------------------------------------------
# Printing a program back as TVMScript, in the spelling of its input
# ---------------------------------------------------------------------------


def format_tvmscript(p: Stmt, source: str) -> str:
    """``p`` (a program read from the TVMScript ``source``, or a rewrite of it) as
    TVMScript in the spelling of ``source`` (``T.sblock``/``T.block``, its decorator,
    imports, parameters and buffer declarations), so that it can be pasted back:
    every block with its ``T.axis`` bindings (an axis is a reduction axis when the
    block accumulates into a tensor it does not index by it), ``T.where`` for a
    predicate, the init block of a reduction as a separate block (TVM's
    ``decompose_reduction`` form). Raises :class:`VerifiedIndexingError` when an axis
    extent cannot be stated (callers print the CINN IR then)."""
    return _Printer(source).program(p)


def format_like_input(p: Stmt, source: str) -> str:
    """``p`` as TVMScript when ``source`` is TVMScript (not CINN's Python DSL), else as
    CINN IR (:func:`~verified_indexing.legality.cinn_ir.format_program`); TVMScript
    that cannot be printed falls back to CINN IR."""
    from verified_indexing.legality.cinn_ir import format_program

    if is_tvmscript(source) and "to_cinn_llir" not in source:
        try:
            return format_tvmscript(p, source)
        except Exception:  # any construct the printer cannot state: the CINN IR says the same exactly
            pass
    return format_program(p)


class _Printer:
    def __init__(self, source: str) -> None:
        self.source = source
        self.tree = ast.parse(source)
        fns = [n for n in ast.walk(self.tree)
               if isinstance(n, ast.FunctionDef) and any(map(_is_entry, n.decorator_list))]
        if not fns:
            raise VerifiedIndexingError("no @T.prim_func in the source")
        self.fn = fns[0]
        self.block_word = "sblock" if re.search(r"\bT\.sblock\(", source) else "block"
        self.alloc_word = "sblock_alloc_buffer" if "sblock_alloc_buffer" in source or \
            self.block_word == "sblock" else "alloc_buffer"
        self.shapes: dict[str, list[str]] = {}
        for a in self.fn.args.args:
            ann = a.annotation
            if isinstance(ann, ast.Call) and _is_buffer_annotation(ann) and ann.args:
                self.shapes[a.arg] = _shape_src(ann.args[0])
        self.decls: list[tuple[str | None, str]] = []  # (buffer name or None, source) kept at the top
        body = list(self.fn.body)
        lead = [n for n in body if isinstance(n, ast.With)]
        if len(lead) == 1 and isinstance(lead[0].items[0].context_expr, ast.Call) and \
                lead[0].items[0].context_expr.args and \
                isinstance(lead[0].items[0].context_expr.args[0], ast.Constant) and \
                lead[0].items[0].context_expr.args[0].value == "root":
            body = [n for n in body if n is not lead[0]] + list(lead[0].body)
        for n in body:
            seg = ast.get_source_segment(source, n)
            if seg is None:
                continue
            if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call) and _t_name(n.value.func) in _BUFFER_DECLS:
                name = n.targets[0].id if isinstance(n.targets[0], ast.Name) else None
                if name is not None and n.value.args:
                    self.shapes[name] = _shape_src(n.value.args[1] if _t_name(n.value.func) == "match_buffer"
                                                   else n.value.args[0])
                if _t_name(n.value.func) == "alloc_buffer" and self.block_word == "sblock":
                    seg = seg.replace("T.alloc_buffer(", "T.sblock_alloc_buffer(", 1)
                self.decls.append((name, seg))
            elif _Reader._is_size_decl(n) or (isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
                                               and _t_name(n.value.func) == "func_attr"):
                self.decls.append((None, seg))
        self.out: list[str] = []
        self.override: dict[int, str] = {}  # scope positions printed through a block's added axis

    def program(self, p: Stmt) -> str:
        lines = self.source.splitlines()
        first = min([d.lineno for d in self.fn.decorator_list] + [self.fn.lineno])
        head = lines[: first - 1] + lines[first - 1: self.fn.body[0].lineno - 1]
        head = [ln for ln in head if ln.strip() != "# with T.sblock(\"root\"):"]
        used = _tensors(p)
        params = set(program_params_of(p))
        self.out = list(head)
        for name, seg in self.decls:
            if name is None or name in used or name in params:
                self.out.append("    " + seg)
        while isinstance(p, For) and p.kind == "size":
            p = p.body[0]
        body = p.body if isinstance(p, ScheduleBlock) and p.name == "root" else (p,)
        for s in body:
            self.stmt(s, 1, ())
        if not any(ln.strip() and not ln.lstrip().startswith("#") for ln in self.out[len(head):]):
            self.out.append("    T.evaluate(0)")  # every block removed: a body Python (and TVM) accepts
        return "\n".join(self.out) + "\n"

    # -- statements ----------------------------------------------------------
    def stmt(self, s: Stmt, depth: int, loops: tuple[For, ...]) -> None:
        pad = "    " * depth
        if isinstance(s, For):
            if s.kind == "size":
                for c in s.body:
                    self.stmt(c, depth, loops)
                return
            scope = [f.var for f in loops]
            ext = _py_index(s.bound, s.scope) if s.bound is not None else str(s.extent)
            if s.bound is not None and s.start:
                ext = f"{s.start} + {ext}"
            rng = f"{s.start}, {ext}" if s.start else ext
            if s.bound is None and s.start:
                rng = f"{s.start}, {s.start + s.extent}"
            kind = {"parallel": "T.parallel", "vectorize": "T.vectorized", "unroll": "T.unroll"}.get(s.kind, "range")
            del scope
            self.out.append(f"{pad}for {s.var} in {kind}({rng}):")
            for c in s.body:
                self.stmt(c, depth + 1, (*loops, s))
            return
        if isinstance(s, ScheduleBlock):
            self.block(s, depth, loops)
            return
        if isinstance(s, If):
            conds = " and ".join(f"{_py_index(a, s.scope)} {op} {_py_index(b, s.scope)}" for a, op, b in s.conds)
            self.out.append(f"{pad}if {conds}:")
            for c in s.body:
                self.stmt(c, depth + 1, loops)
            return
        if isinstance(s, Group):
            for c in s.body:
                self.stmt(c, depth, loops)
            return
        if isinstance(s, Store):
            self.out.append(pad + self.store(s))
            return
        raise VerifiedIndexingError(f"a {type(s).__name__} outside a block is not printed as TVMScript")

    def block(self, b: ScheduleBlock, depth: int, loops: tuple[For, ...]) -> None:
        pad = "    " * depth
        name = b.name.replace("__reduce_init", "_init")
        self.out.append(f'{pad}with T.{self.block_word}("{name}"):')
        inner = pad + "    "
        stores = [x for x in _walk_stmts(b.body) if isinstance(x, Store)]
        body = list(b.body)
        bind = body[0] if body else None
        values: list[AffineExpr] = []
        if isinstance(bind, Bind):
            values = list(bind.values)
            body.pop(0)
            for k, (n, v) in enumerate(zip(bind.names, bind.values)):
                pos = len(bind.scope) + k
                kind = self._kind(pos, stores)
                ext = self._extent(pos, v, stores, loops, len(bind.scope) - len(loops))
                word = "spatial" if kind == "S" else "reduce"
                self.out.append(f"{inner}{n} = T.axis.{word}({ext}, {_py_index(v, bind.scope)})")
        # a loop variable the block's stores use directly (a rewrite, a flattened blockize): TVM
        # wants every loop read through an axis of the block
        n_pre = len(bind.scope) if isinstance(bind, Bind) else min((len(x.scope) for x in stores), default=0)
        n_sizes = n_pre - len(loops)
        used = sorted({d for st in stores for d in _store_dims(st) if n_sizes <= d < n_pre})
        override: dict[int, str] = {}
        taken = set(bind.names) if isinstance(bind, Bind) else set()
        taken |= {f.var for f in loops} | set(self.shapes)
        for d in used:
            f = loops[d - n_sizes]
            axis = f"v_{f.var}"
            while axis in taken:
                axis += "_"
            taken.add(axis)
            override[d] = axis
            word = "spatial" if self._kind(d, stores) == "S" else "reduce"
            ext = _py_index(f.bound, f.scope) if f.bound is not None else str(f.start + f.extent)
            self.out.append(f"{inner}{axis} = T.axis.{word}({ext}, {f.var})")
        if len(body) == 1 and isinstance(body[0], If) and all(isinstance(c, Store) for c in body[0].body):
            g = body[0]
            # over the loops only (TVM reads the predicate outside the block): each iteration
            # variable replaced by its binding
            n_loops = len(g.scope) - len(values)
            sub = [Dim(k) for k in range(n_loops)] + values
            conds = " and ".join(f"{_py_index(a.substitute(dims=sub), g.scope)} {op} "
                                 f"{_py_index(c.substitute(dims=sub), g.scope)}" for a, op, c in g.conds)
            self.out.append(f"{inner}T.where({conds})")
            body = list(g.body)
        if not body:
            self.out.append(f"{inner}T.evaluate(0)")
        saved, self.override = self.override, override
        try:
            for c in body:
                self.stmt(c, depth + 1, loops)
        finally:
            self.override = saved

    def _kind(self, pos: int, stores: list[Store]) -> str:
        for st in stores:
            if any(isinstance(x, Dim) and x.index == pos for e in st.indices for x in e.walk()):
                return "S"
        for st in stores:
            if any(ld.tensor == st.tensor and ld.indices == st.indices for ld in _loads(st.value)):
                return "R"  # accumulates into an element not indexed by this axis
        return "S"

    def _extent(self, pos: int, value: AffineExpr, stores: list[Store], loops: tuple[For, ...],
                n_sizes: int = 0) -> str:
        """The extent printed for the axis at scope position ``pos`` bound to ``value``
        (over the block's scope: ``n_sizes`` size parameters, then ``loops``)."""
        for st in stores:
            for tensor, idx in [(st.tensor, st.indices)] + [(ld.tensor, ld.indices) for ld in _loads(st.value)]:
                shape = self.shapes.get(tensor.removesuffix("__reduce_init"))
                if shape is None or len(shape) != len(idx):
                    continue
                for d, e in enumerate(idx):
                    if isinstance(e, Dim) and e.index == pos:
                        return shape[d]
        if isinstance(value, Dim) and n_sizes <= value.index < n_sizes + len(loops):
            f = loops[value.index - n_sizes]
            if f.kind != "size":
                return _py_index(f.bound, f.scope) if f.bound is not None else str(f.start + f.extent)
        if n_sizes:
            raise VerifiedIndexingError("an axis extent over size parameters is not printed")
        bounds = []
        for f in loops:
            if f.bound is not None or f.extent >= SIZE_MAX:
                raise VerifiedIndexingError("an axis extent over symbolic loops is not printed")
            bounds.append((f.start, f.start + f.extent - 1))
        from verified_indexing.interval import Interval, range_of

        hi = range_of(value, [Interval(a, z) for a, z in bounds]).hi
        return str(max(1, hi + 1))

    def store(self, s: Store) -> str:
        scope = [self.override.get(k, n) for k, n in enumerate(s.scope)]
        idx = ", ".join(_py_index(e, scope) for e in s.indices)
        return f"{s.tensor.removesuffix('__reduce_init')}[{idx}] = {self.value(s.value, scope)}"

    def int_value(self, v: Value, scope: Sequence[str]) -> str:
        """An integer operand of a comparison: an index or an integer literal."""
        return _py_index(v.expr, scope) if isinstance(v, IndexValue) else v.text  # type: ignore[union-attr]

    def value(self, v: Value, scope: Sequence[str]) -> str:
        if isinstance(v, Num):
            if v.text in (_LOWEST, "-" + _LOWEST):
                return 'T.max_value("float32")' if not v.text.startswith("-") else 'T.min_value("float32")'
            return f"T.float32({v.text.rstrip('f')})"
        if isinstance(v, Neg):
            if isinstance(v.operand, Num) and v.operand.text == _LOWEST:
                return 'T.min_value("float32")'
            return f"-{self.value(v.operand, scope)}"
        if isinstance(v, Load):
            return f"{v.tensor}[{', '.join(_py_index(e, scope) for e in v.indices)}]"
        if isinstance(v, IndexValue):
            return f'T.Cast("float32", {_py_index(v.expr, scope)})'
        if isinstance(v, BinOp):
            if v.op in ("<", "<=", ">", ">=", "==", "!=") and _int_like(v.lhs) and _int_like(v.rhs):
                return f"{self.int_value(v.lhs, scope)} {v.op} {self.int_value(v.rhs, scope)}"
            a, b = self.value(v.lhs, scope), self.value(v.rhs, scope)
            if v.op in ("&&", "||"):
                return f"T.{'And' if v.op == '&&' else 'Or'}({a}, {b})"
            return f"({a} {v.op} {b})"
        assert isinstance(v, Call)
        args = [self.value(a, scope) for a in v.args]
        if not args:
            return v.name  # a scalar parameter
        if v.name.endswith(".load"):  # a data-dependent read of an input
            idx = [self.int_value(a, scope) if isinstance(a, IndexValue) else self.value(a, scope) for a in v.args]
            return f"{v.name.removesuffix('.load')}[{', '.join(idx)}]"
        if v.name == "select":
            return f"T.if_then_else({', '.join(args)})"
        if v.name == "!":
            return f"T.Not({args[0]})"
        if v.name in _INT_DTYPES:
            return f'T.Cast("{v.name}", {args[0]})'
        return f"T.{v.name}({', '.join(args)})"


def _store_dims(st: Store) -> set[int]:
    """The scope positions a store's indices and value use."""
    exprs = list(st.indices)
    stack: list[Value] = [st.value]
    while stack:
        v = stack.pop()
        if isinstance(v, Load):
            exprs.extend(v.indices)
        elif isinstance(v, IndexValue):
            exprs.append(v.expr)
        elif isinstance(v, BinOp):
            stack += [v.lhs, v.rhs]
        elif isinstance(v, Neg):
            stack.append(v.operand)
        elif isinstance(v, Call):
            stack.extend(v.args)
    return {x.index for e in exprs for x in e.walk() if isinstance(x, Dim)}


def _int_like(v: Value) -> bool:
    return isinstance(v, IndexValue) or (isinstance(v, Num) and re.fullmatch(r"-?\d+", v.text) is not None)


def program_params_of(p: Stmt) -> tuple[str, ...]:
    """The buffers the caller of ``p`` sees (see ``cinn_ir.program_params``)."""
    from verified_indexing.legality.cinn_ir import program_params

    return program_params(p)


def _shape_src(node: ast.expr) -> list[str]:
    elts = node.elts if isinstance(node, (ast.Tuple, ast.List)) else [node]
    return [e.value if isinstance(e, ast.Constant) and isinstance(e.value, str) else ast.unparse(e) for e in elts]


def _walk_stmts(body: Sequence[Stmt]) -> list[Stmt]:
    out: list[Stmt] = []
    for s in body:
        out.append(s)
        inner = getattr(s, "body", None)
        if isinstance(inner, tuple) and not isinstance(s, ScheduleBlock):
            out.extend(_walk_stmts(inner))
    return out


def _stored(p: Stmt) -> set[str]:
    """Every tensor some store of ``p`` writes."""
    out: set[str] = set()
    stack: list[Stmt] = [p]
    while stack:
        s = stack.pop()
        if isinstance(s, Store):
            out.add(s.tensor.removesuffix("__reduce_init"))
        inner = getattr(s, "body", None)
        if isinstance(inner, tuple):
            stack.extend(inner)
    return out


def _tensors(p: Stmt) -> set[str]:
    out: set[str] = set()
    for s in _walk_stmts((p,)):
        if isinstance(s, ScheduleBlock):
            out |= _tensors_in(s.body)
    return out | _tensors_in((p,))


def _tensors_in(body: Sequence[Stmt]) -> set[str]:
    out: set[str] = set()
    stack = list(body)
    while stack:
        s = stack.pop()
        if isinstance(s, Store):
            out.add(s.tensor.removesuffix("__reduce_init"))
            out |= {ld.tensor for ld in _loads(s.value)}
        inner = getattr(s, "body", None)
        if isinstance(inner, tuple):
            stack.extend(inner)
    return out


def _py_index(e: AffineExpr | None, scope: Sequence[str]) -> str:
    """An index expression in Python/TVMScript syntax (``//``, ``%``, ``T.min``...)."""
    from verified_indexing.expr import CeilDiv, FloorDiv, Max, Min, Mod, Sum

    assert e is not None
    if isinstance(e, Const):
        return str(e.value)
    if isinstance(e, Dim):
        return scope[e.index]
    if isinstance(e, Sum):
        parts: list[str] = []
        for t, c in e.terms:
            ts = _py_index(t, scope)
            if not isinstance(t, (Dim, Const)):
                ts = f"({ts})"
            term = ts if c == 1 else f"-{ts}" if c == -1 else f"{ts} * {c}"
            parts.append(term)
        if e.constant:
            parts.append(str(e.constant))
        text = parts[0]
        for q in parts[1:]:
            text += f" - {q[1:]}" if q.startswith("-") else f" + {q}"
        return text
    if isinstance(e, (FloorDiv, Mod)):
        op = "//" if isinstance(e, FloorDiv) else "%"
        return f"({_py_index(e.lhs, scope)}) {op} {e.divisor}"
    if isinstance(e, CeilDiv):
        return f"T.ceildiv({_py_index(e.lhs, scope)}, {e.divisor})"
    if isinstance(e, (Min, Max)):
        f = "T.min" if isinstance(e, Min) else "T.max"
        return f"{f}({_py_index(e.lhs, scope)}, {_py_index(e.rhs, scope)})"
    raise VerifiedIndexingError(f"an index {e} is not printed as TVMScript")
