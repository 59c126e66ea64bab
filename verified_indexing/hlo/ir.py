"""The HLO module as the analysis sees it: shapes, instructions, computations.

The text parser (:mod:`verified_indexing.hlo.parser`) builds these values; the
per-op indexing (:mod:`verified_indexing.hlo.ops`) reads them. Attributes are
kept as their raw text (unknown ones too); the typed accessors below parse the
forms the analysis needs and raise :class:`~verified_indexing.errors.ParseError`
(with the instruction's position when known) on malformed text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from verified_indexing.errors import ParseError

__all__ = [
    "Shape",
    "Instruction",
    "Computation",
    "Module",
    "SliceDim",
    "PadDim",
    "WindowDim",
    "DotDims",
    "GatherDims",
    "parse_int_list",
]


@dataclass(frozen=True)
class Shape:
    """An array shape ``f32[4,8]{1,0}`` (``layout`` minor-to-major, or None when
    not printed) or a tuple shape (``element_type == "tuple"``, ``tuple_shapes``).

    ``dynamic`` flags the dynamic dimensions (empty when none): ``f32[<=4,8]``
    has ``dims == (4, 8)`` (the bound) and ``dynamic == (True, False)``; an
    unbounded ``f32[?,8]`` has ``dims == (-1, 8)``. The analysis reports every
    instruction touching a dynamic shape as unsupported (its maps would hold for
    the bound, not for the size the program runs with)."""

    element_type: str
    dims: tuple[int, ...] = ()
    layout: tuple[int, ...] | None = None
    tuple_shapes: tuple[Shape, ...] = ()
    dynamic: tuple[bool, ...] = ()
    #: The layout's annotations after ``:`` (``T(8,128)(2,1)S(1)``), kept raw; not part of equality.
    layout_annotations: str = field(default="", compare=False)

    @property
    def is_tiled(self) -> bool:
        """True when the layout has a tiling ``T(...)``: the physical order is then
        tile by tile, not the plain minor-to-major order."""
        return "T(" in self.layout_annotations

    @property
    def is_dynamic(self) -> bool:
        """True when a dimension (of any tuple element) is dynamic."""
        return any(self.dynamic) or any(s.is_dynamic for s in self.tuple_shapes)

    @property
    def is_tuple(self) -> bool:
        return self.element_type == "tuple"

    @property
    def rank(self) -> int:
        return len(self.dims)

    def num_elements(self) -> int:
        n = 1
        for d in self.dims:
            n *= d
        return n

    def minor_to_major(self) -> tuple[int, ...]:
        """The layout, defaulting to the row-major ``{rank-1, ..., 0}``."""
        return self.layout if self.layout is not None else tuple(range(self.rank - 1, -1, -1))

    def __str__(self) -> str:
        if self.is_tuple:
            return "(" + ", ".join(str(s) for s in self.tuple_shapes) + ")"
        flags = self.dynamic or (False,) * len(self.dims)
        sizes = ("?" if d < 0 else f"<={d}" if dyn else str(d) for d, dyn in zip(self.dims, flags))
        text = f"{self.element_type}[{','.join(sizes)}]"
        if self.layout is not None:
            annotations = f":{self.layout_annotations}" if self.layout_annotations else ""
            text += "{" + ",".join(str(d) for d in self.layout) + annotations + "}"
        return text


@dataclass(frozen=True)
class SliceDim:
    start: int
    limit: int
    stride: int = 1


@dataclass(frozen=True)
class PadDim:
    low: int
    high: int
    interior: int = 0


@dataclass(frozen=True)
class WindowDim:
    size: int
    stride: int = 1
    pad_low: int = 0
    pad_high: int = 0
    base_dilation: int = 1  # lhs_dilate
    window_dilation: int = 1  # rhs_dilate
    reversal: bool = False


@dataclass(frozen=True)
class DotDims:
    lhs_batch: tuple[int, ...]
    rhs_batch: tuple[int, ...]
    lhs_contracting: tuple[int, ...]
    rhs_contracting: tuple[int, ...]


@dataclass(frozen=True)
class GatherDims:
    offset_dims: tuple[int, ...]
    collapsed_slice_dims: tuple[int, ...]
    start_index_map: tuple[int, ...]
    index_vector_dim: int
    slice_sizes: tuple[int, ...]
    operand_batching_dims: tuple[int, ...] = ()
    start_indices_batching_dims: tuple[int, ...] = ()


@dataclass
class Instruction:
    """One HLO instruction. ``operands`` are instruction names in the same
    computation; ``attributes`` maps each attribute name to its raw text
    (``"dimensions": "{1,0}"``); ``literal`` is a constant's raw literal text;
    ``offset`` is the position of the instruction in the module text."""

    name: str
    opcode: str
    shape: Shape
    operands: list[str] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)
    literal: str | None = None
    parameter_number: int | None = None
    tuple_index: int | None = None  # for get-tuple-element (the 'index' attribute)
    iota_dimension: int | None = None
    is_root: bool = False
    offset: int = 0
    source_text: str = field(default="", repr=False)  # the whole module text, for positioned errors
    source_name: str = field(default="<input>", repr=False)  # the file (or other source) it came from

    # -- typed attributes -------------------------------------------------
    def _error(self, message: str) -> ParseError:
        return self.error(message)

    def error(self, message: str) -> ParseError:
        """A :class:`ParseError` about this instruction, positioned at it in its source."""
        return ParseError(f"{self.name} ({self.opcode}): {message}", self.source_text, self.offset, 1, self.source_name)

    def attr(self, key: str) -> str | None:
        return self.attributes.get(key)

    def ints(self, key: str, default: tuple[int, ...] | None = None) -> tuple[int, ...]:
        """An attribute of the form ``{1,2,3}`` (or ``1x2x3``)."""
        raw = self.attributes.get(key)
        if raw is None:
            if default is not None:
                return default
            raise self._error(f"missing attribute {key}=")
        try:
            return parse_int_list(raw)
        except ValueError as exc:
            raise self._error(f"malformed {key}={raw}: {exc}") from None

    def dimensions(self) -> tuple[int, ...]:
        return self.ints("dimensions", ())

    def slice_dims(self) -> list[SliceDim]:
        """``slice={[5:10:1], [3:20:7]}``."""
        raw = self.attributes.get("slice")
        if raw is None:
            raise self._error("missing attribute slice=")
        out = []
        for m in re.finditer(r"\[\s*(-?\d+)\s*:\s*(-?\d+)\s*(?::\s*(-?\d+)\s*)?\]", raw):
            out.append(SliceDim(int(m.group(1)), int(m.group(2)), int(m.group(3) or 1)))
        if len(out) != self.shape.rank and self.shape.rank:
            raise self._error(f"malformed slice={raw}")
        return out

    def padding(self) -> list[PadDim]:
        """``padding=1_4_1x4_8_0`` (low_high[_interior] per dimension)."""
        raw = self.attributes.get("padding")
        if raw is None:
            raise self._error("missing attribute padding=")
        out = []
        for part in raw.split("x"):
            nums = part.split("_")
            try:
                vals = [int(v) for v in nums]
            except ValueError:
                raise self._error(f"malformed padding={raw}") from None
            if len(vals) not in (2, 3):
                raise self._error(f"malformed padding={raw}")
            out.append(PadDim(*vals))
        return out

    def window(self) -> list[WindowDim]:
        """``window={size=1x512 stride=1x32 pad=0_0x0_0 lhs_dilate=1x1 rhs_dilate=1x1}``."""
        raw = self.attributes.get("window")
        if raw is None:
            raise self._error("missing attribute window=")
        fields: dict[str, list[str]] = {}
        for m in re.finditer(r"(\w+)=([-\w]+)", raw.strip("{}")):
            fields[m.group(1)] = m.group(2).split("x")
        if "size" not in fields:
            raise self._error(f"window without size: {raw}")
        n = len(fields["size"])

        def get(key: str, default: str) -> list[str]:
            vals = fields.get(key, [default] * n)
            if len(vals) != n:
                raise self._error(f"window {key} has {len(vals)} entries, size has {n}")
            return vals

        try:
            sizes = [int(v) for v in get("size", "1")]
            strides = [int(v) for v in get("stride", "1")]
            pads = [tuple(int(x) for x in p.split("_")) for p in get("pad", "0_0")]
            lhs = [int(v) for v in get("lhs_dilate", "1")]
            rhs = [int(v) for v in get("rhs_dilate", "1")]
            rev = [v == "1" for v in get("rhs_reversal", "0")]
        except ValueError:
            raise self._error(f"malformed window={raw}") from None
        return [
            WindowDim(sizes[i], strides[i], pads[i][0], pads[i][1], lhs[i], rhs[i], rev[i]) for i in range(n)
        ]

    def dot_dims(self) -> DotDims:
        return DotDims(
            self.ints("lhs_batch_dims", ()),
            self.ints("rhs_batch_dims", ()),
            self.ints("lhs_contracting_dims", ()),
            self.ints("rhs_contracting_dims", ()),
        )

    def gather_dims(self) -> GatherDims:
        ivd = self.attributes.get("index_vector_dim")
        if ivd is None:
            raise self._error("missing attribute index_vector_dim=")
        if not re.fullmatch(r"\s*-?\d+\s*", ivd):
            raise self._error(f"malformed index_vector_dim={ivd}")
        return GatherDims(
            self.ints("offset_dims", ()),
            self.ints("collapsed_slice_dims", ()),
            self.ints("start_index_map", ()),
            int(ivd),
            self.ints("slice_sizes"),
            self.ints("operand_batching_dims", ()),
            self.ints("start_indices_batching_dims", ()),
        )

    def called_computation(self) -> str | None:
        """The name in ``calls=`` or ``to_apply=`` (without ``%``)."""
        raw = self.attributes.get("calls") or self.attributes.get("to_apply")
        return raw.lstrip("%") if raw else None


@dataclass
class Computation:
    """A computation: instructions in text order, the root, parameters by number."""

    name: str
    instructions: list[Instruction]
    is_entry: bool = False
    offset: int = 0

    def __post_init__(self) -> None:
        self.by_name: dict[str, Instruction] = {i.name: i for i in self.instructions}

    @property
    def root(self) -> Instruction:
        for inst in self.instructions:
            if inst.is_root:
                return inst
        return self.instructions[-1]

    def parameters(self) -> list[Instruction]:
        """The parameter instructions ordered by parameter number."""
        params = [i for i in self.instructions if i.opcode == "parameter"]
        return sorted(params, key=lambda i: i.parameter_number if i.parameter_number is not None else 0)

    def operand(self, inst: Instruction, k: int) -> Instruction:
        return self.by_name[inst.operands[k]]

    def __repr__(self) -> str:
        from verified_indexing._repr import short

        return short("Computation", f"{self.name}: {len(self.instructions)} instructions, "
                     f"{len(self.parameters())} parameters{', entry' if self.is_entry else ''}")


@dataclass
class Module:
    name: str
    computations: dict[str, Computation]
    entry_name: str
    attributes: dict[str, str] = field(default_factory=dict)
    text: str = ""

    @property
    def entry(self) -> Computation:
        return self.computations[self.entry_name]

    def __repr__(self) -> str:
        from verified_indexing._repr import short

        return short("Module", f"{self.name}: {len(self.computations)} computations, {len(self.fusions())} fusions, "
                     f"entry {self.entry_name}")

    def fusions(self) -> list[tuple[Instruction, Computation]]:
        """Every fusion instruction (in any computation) with its fused computation."""
        out = []
        for comp in self.computations.values():
            for inst in comp.instructions:
                if inst.opcode == "fusion":
                    called = inst.called_computation()
                    if called is not None and called in self.computations:
                        out.append((inst, self.computations[called]))
        return out


def parse_int_list(raw: str) -> tuple[int, ...]:
    """``{1,2,3}``, ``{}``, ``1x2x3`` or ``[1,2]`` as a tuple of ints."""
    text = raw.strip().strip("{}[]").strip()
    if not text:
        return ()
    parts = re.split(r"[,x]", text)
    return tuple(int(p.strip()) for p in parts)
