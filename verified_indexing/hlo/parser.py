"""HLO text parser: modules as XLA and JAX print them, and the spec's fragments.

:func:`parse_module` reads a whole module (``HloModule`` header with its
attributes, the stack-frame tables of optimized dumps, computations with or
without ``%`` names and signatures, ``ENTRY``, ``ROOT``). :func:`parse_hlo_snippet`
also reads the fragments of the indexing-analysis document: bare instruction
lines, typed operands (``concatenate(f32[2, 5, 7] p0, ...)``), instructions
spanning several lines and ``f { ... }`` blocks.

Promises:

* every instruction keeps every attribute as its raw text (unknown ones too);
  ``parameter(N)``, ``get-tuple-element ... index=N`` and ``iota ...
  iota_dimension=N`` also fill the typed fields of
  :class:`~verified_indexing.hlo.ir.Instruction`;
* shapes keep the minor-to-major part of a layout (``{1,0:T(8,128)}`` gives
  ``(1, 0)``);
* operands name instructions of the same computation (checked), and a
  ``calls=`` of a fusion names a computation of the module (checked);
* malformed text raises :class:`~verified_indexing.errors.ParseError` with the
  line, column and a caret; ``Instruction.offset`` is the position of the
  instruction's name and ``Instruction.source_text`` the whole text.
"""

from __future__ import annotations

import re

from verified_indexing.errors import ParseError
from verified_indexing.hlo.ir import Computation, Instruction, Module, Shape
from verified_indexing.hlo.loader import not_hlo_reason, split_modules
from verified_indexing.hlo.ops import ELEMENTWISE_OPCODES
from verified_indexing.syntax.limits import check_limits

__all__ = ["parse_module", "parse_modules", "parse_hlo_snippet", "parse_shape"]

_NAME_RE = re.compile(r"%?([A-Za-z_][\w.\-]*)")
_OPCODE_RE = re.compile(r"[a-z][a-z0-9\-_]*")
_ELEMENT_RE = re.compile(r"([a-z][a-z0-9]*)\[")
_ATTR_KEY_RE = re.compile(r"[A-Za-z_][\w\-.]*")
_INT_RE = re.compile(r"-?\d+")
_BUFFER_RE = re.compile(r"b\(\s*[a-z][a-z0-9]*\[")
# Blanks or line breaks, then a layout ``{1,0}`` / ``{1,0:T(8,128)}`` / ``{}``.
_SPACED_LAYOUT_RE = re.compile(r"\s+(\{[\d\s,]*(?::[^{}\n]*)?\})")
_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_OPEN = {"{": "}", "(": ")", "[": "]"}


class _Cursor:
    """A position in the text with the scanning primitives of the HLO syntax."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.pos = 0
        #: Where the last attribute value continued over lines started (for the
        #: error of a computation left open by it).
        self.multiline_value: int | None = None
        #: Computations written inline as attribute values (``to_apply=\n{ ... }``, XLA's canonical printer).
        self.inline: list[Computation] = []

    # -- errors and peeking ------------------------------------------------
    def error(self, message: str, offset: int | None = None, length: int = 1) -> ParseError:
        return ParseError(message, self.text, self.pos if offset is None else offset, length, self.source)

    def at_end(self) -> bool:
        return self.pos >= len(self.text)

    def peek(self, n: int = 1) -> str:
        return self.text[self.pos : self.pos + n]

    def describe_here(self) -> str:
        if self.at_end():
            return "end of input"
        m = re.compile(r"\S+").match(self.text, self.pos)
        return repr(m.group(0)[:20]) if m else "end of line"

    # -- whitespace and comments ----------------------------------------------
    def skip(self, newlines: bool = True) -> None:
        """Skip blanks and ``/* */`` comments (and newlines and ``//`` comments
        when ``newlines``)."""
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in " \t\r" or (newlines and ch == "\n"):
                self.pos += 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.error("unterminated /* comment", length=2)
                self.pos = end + 2
            elif newlines and text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end + 1
            else:
                return

    def accept(self, token: str) -> bool:
        if self.text.startswith(token, self.pos):
            self.pos += len(token)
            return True
        return False

    def expect(self, token: str, what: str | None = None) -> None:
        if not self.accept(token):
            raise self.error(f"expected {what or repr(token)}, found {self.describe_here()}")

    def match(self, regex: re.Pattern[str]) -> re.Match[str] | None:
        m = regex.match(self.text, self.pos)
        if m:
            self.pos = m.end()
        return m

    def at_line_end(self) -> bool:
        return self.at_end() or self.text[self.pos] == "\n" or self.text.startswith("//", self.pos)

    # -- balanced text -----------------------------------------------------------
    def balanced(self, single_line: bool = False) -> str:
        """The text of a bracketed group starting here (``{...}``, ``(...)``,
        ``[...]``), quoted strings respected; the cursor moves past it. With
        ``single_line`` the group must close on its line."""
        start = self.pos
        stack: list[str] = []
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch == "\n" and single_line:
                break
            if ch == '"':
                self.string()
                continue
            if ch in _OPEN:
                stack.append(_OPEN[ch])
            elif ch in ")]}":
                if not stack or ch != stack[-1]:
                    raise self.error(f"unbalanced {ch!r}")
                stack.pop()
                if not stack:
                    self.pos += 1
                    return text[start : self.pos]
            self.pos += 1
        raise self.error(f"unclosed {text[start]!r}", offset=start)

    def string(self) -> str:
        """A double-quoted string with backslash escapes (returned with its quotes)."""
        start = self.pos
        self.pos += 1
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch == "\\":
                self.pos += 2
                continue
            if ch == "\n":
                break
            self.pos += 1
            if ch == '"':
                return text[start : self.pos]
        raise self.error("unterminated string", offset=start)

    def value(self) -> str:
        """An attribute value: everything up to a top-level ``,``, the end of the
        line, or a ``}`` that closes the enclosing computation."""
        start = self.pos
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in ",\n}":
                break
            if ch == '"':
                self.string()
            elif ch in _OPEN:
                at = self.pos
                if "\n" in self.balanced():  # XLA continues {...} values over lines
                    self.multiline_value = at
            elif ch in ")]":
                raise self.error(f"unbalanced {ch!r}")
            else:
                self.pos += 1
        raw = text[start : self.pos].strip()
        if not raw:
            raise self.error("expected an attribute value", offset=start)
        return raw

    # -- names and shapes ------------------------------------------------------------
    def name(self, what: str = "a name") -> tuple[str, int]:
        start = self.pos
        m = self.match(_NAME_RE)
        if not m:
            raise self.error(f"expected {what}, found {self.describe_here()}")
        return m.group(1), start

    def at_shape(self) -> bool:
        if self.peek() == "(":
            return True
        return _ELEMENT_RE.match(self.text, self.pos) is not None or _BUFFER_RE.match(self.text, self.pos) is not None

    def shape(self, spaced_layout: bool = True) -> Shape:
        """A shape. With ``spaced_layout`` the layout may follow after blanks or a
        line break (``f32[2,4] {1,0}``), as XLA's parser allows; the computation
        signature's result shape is read without, its ``{`` opens the body."""
        if _BUFFER_RE.match(self.text, self.pos):  # a buffer shape b(f32[2,4]): its array's elements
            self.expect("b")
            self.skip()
            self.expect("(")
            self.skip()
            inner = self.shape()
            self.skip()
            self.expect(")", "')' closing the buffer shape")
            return inner
        if self.accept("("):
            elements: list[Shape] = []
            self.skip()
            if not self.accept(")"):
                while True:
                    self.skip()
                    elements.append(self.shape())
                    self.skip()
                    if self.accept(")"):
                        break
                    self.expect(",", "',' or ')' in a tuple shape")
            return Shape("tuple", (), None, tuple(elements))
        m = self.match(_ELEMENT_RE)
        if not m:
            raise self.error(f"expected a shape such as f32[4,8], found {self.describe_here()}")
        element = m.group(1)
        dims: list[int] = []
        dynamic: list[bool] = []
        self.skip()
        if not self.accept("]"):
            while True:
                self.skip()
                if self.accept("?"):  # an unbounded dynamic dimension
                    dims.append(-1)
                    dynamic.append(True)
                else:
                    dynamic.append(self.accept("<="))  # a bounded dynamic dimension: its bound
                    d = self.match(_INT_RE)
                    if d is None:
                        raise self.error(f"expected a dimension size, found {self.describe_here()}")
                    if int(d.group(0)) < 0:
                        raise self.error("negative dimension size", offset=d.start(), length=len(d.group(0)))
                    dims.append(int(d.group(0)))
                self.skip()
                if self.accept("]"):
                    break
                self.expect(",", "',' or ']' in a shape")
        layout: tuple[int, ...] | None = None
        annotations = ""
        if spaced_layout and self.peek() != "{":
            m = _SPACED_LAYOUT_RE.match(self.text, self.pos)
            if m:
                self.pos = m.start(1)
        if self.peek() == "{":
            layout_start = self.pos
            raw = self.balanced()[1:-1]
            minor_to_major, _, annotations = (part.strip() for part in raw.partition(":"))
            try:
                layout = tuple(int(p) for p in minor_to_major.split(",")) if minor_to_major else ()
            except ValueError:
                raise self.error(f"malformed layout {{{raw}}}", offset=layout_start, length=len(raw) + 2) from None
            if sorted(layout) != list(range(len(dims))):
                raise self.error(
                    f"layout {{{minor_to_major}}} is not a permutation of the {len(dims)} dimensions",
                    offset=layout_start,
                    length=len(raw) + 2,
                )
        return Shape(element, tuple(dims), layout, (), tuple(dynamic) if any(dynamic) else (), annotations)


def parse_shape(text: str, source: str = "<input>") -> Shape:
    """One shape (``f32[4,8]{1,0}``, ``(f32[], s32[2])``, ``pred[]``)."""
    cur = _Cursor(text, source)
    cur.skip()
    shape = cur.shape()
    cur.skip()
    if not cur.at_end():
        raise cur.error(f"unexpected {cur.describe_here()} after the shape")
    return shape


# -- instructions ---------------------------------------------------------------------


_ATTR_START_RE = re.compile(r"[A-Za-z_][\w\-.]*[ \t]*=")
_NESTED_RE = re.compile(r"[a-z][a-z0-9\-_]*[ \t]*\(")
# Opcodes whose result has the shape (element type included) of their first array operand.
_SAME_SHAPE_OPCODES = ELEMENTWISE_OPCODES - {"compare", "convert", "is-finite", "real", "imag", "complex",
                                             "stochastic-convert", "rng", "select", "clamp", "map",
                                             "bitcast-convert"}


class _Instructions:
    """The instructions of one computation as they are read: nested operands
    (``exponential(f32[] parameter(0))``) become instructions of their own, placed
    before their user; ``known`` gives the shapes of the ones read so far (to infer
    an omitted shape)."""

    def __init__(self) -> None:
        self.instructions: list[Instruction] = []
        self.positions: dict[str, list[int]] = {}
        self.known: dict[str, Instruction] = {}
        self.nested = 0

    def add(self, inst: Instruction, where: list[int]) -> None:
        self.instructions.append(inst)
        self.positions[inst.name] = where
        self.known.setdefault(inst.name, inst)


def _instruction(cur: _Cursor, sink: _Instructions) -> None:
    """``[ROOT] [%]name = [SHAPE] opcode(operands)[, key=value]*`` (the cursor is at
    its first character; it ends at the end of the instruction's last line). Any
    blanks and line breaks XLA's parser allows are allowed: between the shape and
    the opcode, inside shapes and attribute values, before a ``,``."""
    is_root = False
    if re.compile(r"ROOT\b").match(cur.text, cur.pos):
        cur.pos += 4
        cur.skip()
        is_root = True
    name, name_at = cur.name("an instruction name")
    cur.skip()
    cur.expect("=", f"'=' after the instruction name {name!r}")
    cur.skip()
    _instruction_rhs(cur, sink, name, name_at, is_root, nested=False)


def _instruction_rhs(
    cur: _Cursor, sink: _Instructions, name: str, name_at: int, is_root: bool, nested: bool
) -> Instruction:
    shape: Shape | None = None
    if cur.at_shape() and not _at_nested(cur):
        shape = cur.shape()
        cur.skip()
    opcode_at = cur.pos
    m = cur.match(_OPCODE_RE)
    if not m:
        raise cur.error(f"expected an opcode, found {cur.describe_here()}")
    opcode = m.group(0)
    cur.skip()
    if cur.peek() != "(":
        raise cur.error(f"expected '(' after the opcode {opcode!r}, found {cur.describe_here()}")
    inst = Instruction(
        name, opcode, shape or Shape("tuple"), is_root=is_root, offset=name_at, source_text=cur.text,
        source_name=cur.source,
    )
    operand_positions: list[int] = []
    if opcode == "constant":
        inst.literal = cur.balanced()[1:-1].strip()
    elif opcode == "parameter":
        raw_at = cur.pos
        raw = cur.balanced()[1:-1].strip()
        if not re.fullmatch(r"\d+", raw):
            raise cur.error(f"parameter number must be a non-negative integer, got {raw!r}", offset=raw_at + 1)
        inst.parameter_number = int(raw)
    else:
        cur.expect("(")
        cur.skip()
        if not cur.accept(")"):
            while True:
                cur.skip()
                at = cur.pos
                if cur.at_shape() or _at_nested(cur):
                    typed = cur.shape() if cur.at_shape() and not _at_nested(cur) else None
                    cur.skip()
                    if _at_nested(cur):
                        # A nested instruction as the operand: an instruction of its own.
                        sink.nested += 1
                        cur.pos = at
                        sub = _instruction_rhs(cur, sink, f"{name}.operand{sink.nested}", at, False, nested=True)
                        inst.operands.append(sub.name)
                        operand_positions.append(at)
                        cur.skip()
                        if cur.accept(")"):
                            break
                        cur.expect(",", "',' or ')' in the operand list")
                        continue
                    del typed  # a typed operand: the type is the operand's own shape
                operand, at = cur.name("an operand name")
                inst.operands.append(operand)
                operand_positions.append(at)
                cur.skip()
                if cur.accept(")"):
                    break
                cur.expect(",", "',' or ')' in the operand list")
    # attributes: ", key=value" (a ',' may start the next line; inside a nested
    # operand a ',' followed by no 'key=' belongs to the enclosing operand list)
    while True:
        save = cur.pos
        cur.skip()
        if cur.peek() != "," or (nested and not _ATTR_START_RE.match(cur.text, _after_blanks(cur, cur.pos + 1))):
            cur.pos = save
            break
        cur.expect(",")
        cur.skip()
        key_at = cur.pos
        km = cur.match(_ATTR_KEY_RE)
        if not km:
            raise cur.error(f"expected an attribute name, found {cur.describe_here()}")
        cur.skip()
        cur.expect("=", f"'=' after the attribute name {km.group(0)!r}")
        cur.skip()
        key = km.group(0)
        if key in inst.attributes:
            raise cur.error(f"attribute {key!r} given twice", offset=key_at, length=len(key))
        if key in _CALLED_KEYS and _INLINE_RE.match(cur.text, cur.pos):
            inst.attributes[key] = _inline_computations(cur, f"{name}.{key}.inline")
        else:
            inst.attributes[key] = cur.value()
    if not nested:
        cur.skip(newlines=False)
        if not (cur.at_line_end() or cur.peek() == "}"):
            raise cur.error(f"expected ',' or the end of the instruction, found {cur.describe_here()}")
    if shape is None:
        inst.shape = _infer_shape(cur, inst, sink, opcode_at)
    _typed_fields(cur, inst)
    sink.add(inst, operand_positions)
    return inst


_CALLED_KEYS = frozenset({"calls", "to_apply", "condition", "body", "branch_computations", "true_computation",
                          "false_computation", "called_computations", "select", "scatter"})
"""Attributes whose value names computations (or, in XLA's canonical printing, holds them inline)."""
_INLINE_RE = re.compile(r"\{\s*(\{\s*)?(ROOT\s+)?%?[A-Za-z_][\w.\-]*\s*=")


def _inline_computations(cur: _Cursor, stem: str) -> str:
    """The computations written inline as an attribute's value (``to_apply=\\n{ tmp_0 = ... }``, or
    ``branch_computations={{...}, {...}}``): each read as a computation of its own (named after the
    instruction and the attribute, kept in ``cur.inline``); the value becomes their names."""
    def body(name: str) -> str:
        start = cur.pos
        cur.expect("{")
        sink = _Instructions()
        while True:
            cur.skip()
            if cur.at_end():
                raise cur.error(f"the inline computation of {stem} is not closed by '}}'", offset=start)
            if cur.accept("}"):
                break
            _instruction(cur, sink)
        if not sink.instructions:
            raise cur.error(f"the inline computation of {stem} has no instructions", offset=start)
        taken = {c.name for c in cur.inline}
        while name in taken:
            name += "_"
        comp = Computation(name, sink.instructions, offset=start)
        _check_operands(cur, comp, sink.positions)
        cur.inline.append(comp)
        return name

    at = cur.pos
    cur.expect("{")
    cur.skip()
    if cur.peek() != "{":  # one computation
        cur.pos = at
        return body(stem)
    names: list[str] = []
    while True:
        cur.skip()
        names.append(body(f"{stem}.{len(names)}"))
        cur.skip()
        if cur.accept("}"):
            return "{" + ", ".join(names) + "}"
        cur.expect(",", "',' or '}' between inline computations")


def _at_nested(cur: _Cursor) -> bool:
    """At ``opcode(`` (a nested instruction whose shape XLA infers), not a buffer shape ``b(f32[...])``."""
    return _NESTED_RE.match(cur.text, cur.pos) is not None and _BUFFER_RE.match(cur.text, cur.pos) is None


def _after_blanks(cur: _Cursor, pos: int) -> int:
    while pos < len(cur.text) and cur.text[pos] in " \t\r\n":
        pos += 1
    return pos


def _infer_shape(cur: _Cursor, inst: Instruction, sink: _Instructions, at: int) -> Shape:
    """The shape of an instruction written without one (``x = tuple(a, b)``), for
    the opcodes whose shape follows from their operands' alone; other opcodes
    must print it."""
    shapes: list[Shape] = []
    for operand in inst.operands:
        if operand not in sink.known:
            raise cur.error(
                f"cannot infer the shape of {inst.name!r}: its operand {operand!r} is not defined before it",
                offset=at,
            )
        shapes.append(sink.known[operand].shape)
    op = inst.opcode
    if op == "tuple":
        return Shape("tuple", (), None, tuple(shapes))
    if op == "get-tuple-element" and shapes and shapes[0].is_tuple:
        k = inst.attributes.get("index", "")
        if re.fullmatch(r"\d+", k) and int(k) < len(shapes[0].tuple_shapes):
            return shapes[0].tuple_shapes[int(k)]
    if op in _SAME_SHAPE_OPCODES | {"add-dependency", "opt-barrier"} and shapes:
        ranked = [s for s in shapes if s.is_tuple or s.rank > 0] or shapes
        return ranked[0]
    if op in ("compare", "is-finite") and shapes and not shapes[0].is_tuple:
        return Shape("pred", shapes[0].dims, shapes[0].layout, (), shapes[0].dynamic)
    if op in ("select", "clamp") and len(shapes) == 3:
        return shapes[1]
    raise cur.error(f"cannot infer the shape of {inst.name!r} ({op}): write its shape", offset=at)


def _typed_fields(cur: _Cursor, inst: Instruction) -> None:
    def int_attr(key: str) -> int | None:
        raw = inst.attributes.get(key)
        if raw is None:
            return None
        if not re.fullmatch(r"-?\d+", raw):
            raise cur.error(f"{inst.name}: {key}= must be an integer, got {raw!r}", offset=inst.offset)
        return int(raw)

    if inst.opcode == "get-tuple-element":
        inst.tuple_index = int_attr("index")
    elif inst.opcode == "iota":
        inst.iota_dimension = int_attr("iota_dimension")
        if inst.iota_dimension is None and "dimensions" in inst.attributes:
            # The indexing document writes iota's dimension as dimensions={k}.
            raw = inst.attributes["dimensions"].strip("{} ")
            if re.fullmatch(r"\d+", raw):
                inst.iota_dimension = int(raw)


def _check_operands(cur: _Cursor, comp: Computation, positions: dict[str, list[int]]) -> None:
    defined: set[str] = set()
    for inst in comp.instructions:
        if inst.name in defined:
            raise cur.error(f"instruction {inst.name!r} defined twice", offset=inst.offset, length=len(inst.name))
        defined.add(inst.name)
    for inst in comp.instructions:
        where = positions.get(inst.name, [])
        for k, operand in enumerate(inst.operands):
            if operand not in defined:
                at = where[k] if k < len(where) else inst.offset
                raise cur.error(
                    f"operand {operand!r} of {inst.name!r} is not defined in {comp.name!r}",
                    offset=at,
                    length=len(operand) + 1,
                )
    numbers: dict[int, str] = {}
    for inst in comp.instructions:
        if inst.opcode == "parameter" and inst.parameter_number is not None:
            if inst.parameter_number in numbers:
                raise cur.error(
                    f"{inst.name!r} and {numbers[inst.parameter_number]!r} are both parameter({inst.parameter_number})",
                    offset=inst.offset,
                    length=len(inst.name),
                )
            numbers[inst.parameter_number] = inst.name
    roots = [i for i in comp.instructions if i.is_root]
    if len(roots) > 1:
        raise cur.error(f"computation {comp.name!r} has two ROOT instructions", offset=roots[1].offset)


# -- computations and modules ---------------------------------------------------------------

_COMP_HEAD_RE = re.compile(r"(ENTRY\s+)?%?([A-Za-z_][\w.\-]*)\s*(?=[({])")


def _at_computation(cur: _Cursor) -> bool:
    # An instruction has '=' after its name; a computation header has '(' or '{'.
    return _COMP_HEAD_RE.match(cur.text, cur.pos) is not None


def _computation(cur: _Cursor) -> Computation:
    start = cur.pos
    is_entry = cur.accept("ENTRY")
    cur.skip(newlines=False)
    name, _ = cur.name("a computation name")
    cur.skip(newlines=False)
    if cur.peek() == "(":
        cur.balanced()  # the signature's parameters (the parameter instructions say it all)
        cur.skip()  # a long signature may continue on the next lines
        if cur.accept("->"):
            cur.skip()
            cur.shape(spaced_layout=False)
            cur.skip()
    # Anything else before '{' (execution_thread=..., etc.) is skipped.
    while not cur.at_end() and cur.peek() != "{" and cur.peek() != "\n":
        if cur.peek() == '"':
            cur.string()
        else:
            cur.pos += 1
    cur.expect("{", f"'{{' to open the computation {name!r}")
    sink = _Instructions()
    while True:
        cur.skip()
        if cur.at_end():
            if cur.multiline_value is not None and cur.multiline_value > start:
                raise cur.error(
                    f"computation {name!r} is not closed by '}}': is the {cur.text[cur.multiline_value]!r} here "
                    "unclosed? (its value continues over lines and takes the computation's '}')",
                    offset=cur.multiline_value,
                )
            raise cur.error(f"computation {name!r} is not closed by '}}'", offset=start)
        if cur.accept("}"):
            break
        _instruction(cur, sink)
    instructions, positions = sink.instructions, sink.positions
    # Attributes after the closing brace (``}, execution_thread="main"``) are skipped.
    cur.skip(newlines=False)
    while cur.accept(","):
        cur.skip(newlines=False)
        if not cur.match(_ATTR_KEY_RE):
            raise cur.error(f"expected an attribute name, found {cur.describe_here()}")
        cur.skip(newlines=False)
        cur.expect("=", "'='")
        cur.skip(newlines=False)
        cur.value()
        cur.skip(newlines=False)
    if not cur.at_line_end():
        raise cur.error(f"unexpected {cur.describe_here()} after the computation {name!r}")
    if not instructions:
        raise cur.error(f"computation {name!r} has no instructions", offset=start)
    comp = Computation(name, instructions, is_entry=is_entry, offset=start)
    _check_operands(cur, comp, positions)
    return comp


def _skip_tables(cur: _Cursor) -> bool:
    """Skip one stack-frame table (``FileNames`` ... up to a line not starting
    with a number); True when one was skipped."""
    for table in _TABLES:
        if re.compile(table + r"[ \t]*(\n|$)").match(cur.text, cur.pos):
            cur.pos += len(table)
            while True:
                cur.skip()
                if not re.compile(r"\d+\b").match(cur.text, cur.pos):
                    return True
                end = cur.text.find("\n", cur.pos)
                cur.pos = len(cur.text) if end < 0 else end
    return False


def _header(cur: _Cursor) -> tuple[str, dict[str, str]]:
    cur.expect("HloModule")
    if cur.peek() not in (" ", "\t"):
        raise cur.error("expected a module name after HloModule")
    cur.skip(newlines=False)
    name, _ = cur.name("a module name")
    cur.accept(":")  # the legacy form ``HloModule name:``
    attributes: dict[str, str] = {}
    while True:
        save = cur.pos
        cur.skip()
        if cur.peek() != ",":  # a ',' may continue the header on the next line
            cur.pos = save
            cur.skip(newlines=False)
            if cur.at_line_end():
                break
            raise cur.error(f"expected ',' or the end of the HloModule line, found {cur.describe_here()}")
        cur.expect(",")
        cur.skip()
        km = cur.match(_ATTR_KEY_RE)
        if not km:
            raise cur.error(f"expected a module attribute name, found {cur.describe_here()}")
        cur.skip()
        cur.expect("=", f"'=' after {km.group(0)!r}")
        cur.skip()
        attributes[km.group(0)] = cur.value()
    return name, attributes


def _module_body(cur: _Cursor, name: str, attributes: dict[str, str]) -> Module:
    computations: dict[str, Computation] = {}
    entry: str | None = None
    while True:
        cur.skip()
        if cur.at_end():
            break
        if _skip_tables(cur):
            continue
        if not _at_computation(cur):
            raise cur.error(f"expected a computation (name {{ ... }}), found {cur.describe_here()}")
        comp = _computation(cur)
        if comp.name in computations:
            raise cur.error(f"computation {comp.name!r} defined twice", offset=comp.offset)
        computations[comp.name] = comp
        if comp.is_entry:
            if entry is not None:
                raise cur.error("two ENTRY computations", offset=comp.offset)
            entry = comp.name
    if not computations:
        raise cur.error("no computation in the module")
    if entry is None:
        entry = list(computations)[-1]
    for comp in cur.inline:  # computations written inline in attribute values
        if comp.name in computations:
            raise cur.error(f"the inline computation {comp.name!r} has the name of a computation of the module",
                            offset=comp.offset)
        computations[comp.name] = comp
    _desugar_async(computations)
    for comp in computations.values():
        for inst in comp.instructions:
            called = inst.attributes.get("calls")
            if inst.opcode == "fusion":
                if called is None:
                    raise cur.error(f"fusion {inst.name!r} has no calls=", offset=inst.offset)
                if called.lstrip("%") not in computations:
                    raise cur.error(
                        f"fusion {inst.name!r} calls an unknown computation {called!r}", offset=inst.offset
                    )
    return Module(name, computations, entry, attributes, cur.text)


_NATIVE_ASYNC = frozenset({"all-reduce", "all-gather", "collective-permute", "copy", "async", "call"})
"""Ops whose ``-start``/``-done`` forms are opcodes of their own (``call-start`` is read as it is too)."""
_NATIVE_DONE = _NATIVE_ASYNC | {"send", "recv"}
_SUGAR_RE = re.compile(r"([a-z][a-z0-9\-]*?)-(start|update|done)")
_ASYNC_ATTRIBUTES = ("async_execution_thread", "async_group_id")


def _desugar_async(computations: dict[str, Computation]) -> None:
    """XLA prints an async pair wrapping one op as ``OP-start``/``OP-update``/``OP-done`` (``negate-start(%a),
    async_execution_thread="parallel"``) without the wrapped computation, and its parser reads that as
    ``async-start`` calling a computation of that one op: read the same way. The wrapped computation
    (parameters of the start's operand shapes, the op as root with the start's attributes) is added to
    ``computations``; a start whose shape is not an async tuple ``((operands...), result, ...)`` is left
    as it is (an op the analysis does not know, named)."""
    extra: dict[str, Computation] = {}
    started: set[str] = set()
    for comp in list(computations.values()):
        for inst in comp.instructions:
            m = _SUGAR_RE.fullmatch(inst.opcode)
            if m is None:
                continue
            op, phase = m.groups()
            if op in (_NATIVE_DONE if phase == "done" else _NATIVE_ASYNC):
                continue
            if phase != "start":
                if inst.operands and inst.operands[0] in started:
                    inst.opcode = f"async-{phase}"
                    started.add(inst.name)
                continue
            shape = inst.shape
            if not (shape.is_tuple and len(shape.tuple_shapes) >= 2 and shape.tuple_shapes[0].is_tuple
                    and len(shape.tuple_shapes[0].tuple_shapes) == len(inst.operands)):
                continue
            name = f"{inst.name}.{op}_wrapped"
            while name in computations or name in extra:
                name += "_"
            at, text, source = inst.offset, inst.source_text, inst.source_name
            params = [Instruction(f"param_{k}", "parameter", s, parameter_number=k, offset=at, source_text=text,
                                  source_name=source)
                      for k, s in enumerate(shape.tuple_shapes[0].tuple_shapes)]
            kept = {k: v for k, v in inst.attributes.items() if k not in _ASYNC_ATTRIBUTES}
            root = Instruction(f"{op}.0", op, shape.tuple_shapes[1], [p.name for p in params], kept,
                               is_root=True, offset=at, source_text=text, source_name=source)
            extra[name] = Computation(name, [*params, root], offset=comp.offset)
            inst.opcode = "async-start"
            inst.attributes = {**{k: v for k, v in inst.attributes.items() if k in _ASYNC_ATTRIBUTES}, "calls": name}
            started.add(inst.name)
    computations.update(extra)


def parse_module(text: str, source: str = "<input>") -> Module:
    """Parse an HLO module. The ``HloModule`` header may be omitted (the module is
    then named after ``source``); without ``ENTRY`` the last computation is the
    entry. Raises :class:`ParseError` on malformed text."""
    check_limits(text, source)
    _check_is_hlo(text, source)
    cur = _Cursor(text, source)
    cur.skip()
    if cur.text.startswith("HloModule", cur.pos):
        name, attributes = _header(cur)
    else:
        name, attributes = re.sub(r"\W", "_", source.rsplit("/", 1)[-1]) or "module", {}
    return _module_body(cur, name, attributes)


def _check_is_hlo(text: str, source: str) -> None:
    reason = not_hlo_reason(text)
    if reason is not None:
        raise ParseError(reason, text, len(text) - len(text.lstrip()), 1, source)


def parse_modules(text: str, source: str = "<input>") -> list[Module]:
    """Every module of a file: one, or several in a lit-test file split by
    ``// -----`` lines or holding several ``HloModule`` lines (each parsed with
    :func:`parse_module`, errors positioned in the whole file)."""
    _check_is_hlo(text, source)
    pieces = split_modules(text)
    if len(pieces) == 1:
        return [parse_module(text, source)]
    return [parse_module(piece, source) for piece in pieces]


def parse_hlo_snippet(text: str, source: str = "<input>") -> Computation:
    """Parse an HLO fragment as the indexing document writes them: bare
    instruction lines (the root is the ``ROOT`` one, else the last), one or
    more ``name { ... }`` blocks (the ``ENTRY`` one, else the last, is returned),
    or a whole module (its entry computation)."""
    check_limits(text, source)
    _check_is_hlo(text, source)
    cur = _Cursor(text, source)
    cur.skip()
    if cur.text.startswith("HloModule", cur.pos):
        return parse_module(text, source).entry
    if _at_computation(cur) or _skip_tables(cur):
        module = _module_body(cur, "snippet", {})
        return module.entry
    sink = _Instructions()
    while True:
        cur.skip()
        if cur.at_end():
            break
        _instruction(cur, sink)
    instructions, positions = sink.instructions, sink.positions
    if not instructions:
        raise cur.error("no HLO instruction in the text")
    comp = Computation("snippet", instructions, is_entry=True, offset=0)
    _check_operands(cur, comp, positions)
    return comp
