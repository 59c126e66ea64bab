"""Layout-aware bitcast indexing: transpose, reshape, transpose.

An HLO ``bitcast`` reinterprets the physical buffer: the element at logical index
``x`` of the output is the element at the same *physical* position of the input.
With layouts (minor-to-major), the physical order of a shape is its dimensions
listed major to minor, so every bitcast between shapes with the same element
count and element width is exactly

    output logical --transpose--> output physical --reshape--> input physical
    --transpose--> input logical

(the decomposition XLA's ``ShapeUtil::DecomposeBitcast`` describes). Bitcasts that
change the element width (or the element count) have no such decomposition and
raise :class:`~verified_indexing.errors.UnsupportedError`; so do bitcasts between
tiled layouts (``{1,0:T(8,128)}``: the buffer holds tiles, not the minor-to-major
order) unless both sides have the same dims and the same layout (the identity).
"""

from __future__ import annotations

from verified_indexing.errors import UnsupportedError
from verified_indexing.expr import AffineExpr, Dim
from verified_indexing.hlo.ir import Shape
from verified_indexing.hlo.reshape import reshape_exprs

__all__ = ["ELEMENT_BITS", "bitcast_exprs", "physical_order"]

ELEMENT_BITS: dict[str, int] = {
    "pred": 8, "s2": 2, "u2": 2, "s4": 4, "u4": 4, "s8": 8, "u8": 8, "s16": 16, "u16": 16,
    "s32": 32, "u32": 32, "s64": 64, "u64": 64, "f16": 16, "bf16": 16, "f32": 32, "f64": 64,
    "c64": 64, "c128": 128, "f8e5m2": 8, "f8e4m3fn": 8, "f8e4m3b11fnuz": 8, "f8e5m2fnuz": 8,
    "f8e4m3fnuz": 8, "f8e4m3": 8, "f8e3m4": 8, "f4e2m1fn": 4, "f8e8m0fnu": 8, "tf32": 32,
}


def physical_order(shape: Shape) -> list[int]:
    """The logical dimension ids from the most major to the most minor."""
    m2m = shape.minor_to_major()
    if sorted(m2m) != list(range(shape.rank)):
        raise UnsupportedError(f"bitcast: layout {{{','.join(map(str, m2m))}}} is not a permutation of {shape}")
    return list(reversed(m2m))


def bitcast_exprs(src: Shape, dst: Shape) -> list[AffineExpr]:
    """The logical index of ``src`` (one expression per dimension) in terms of the
    logical index ``d0, d1, ...`` of ``dst``, where ``dst`` is a bitcast of ``src``
    (either direction of a bitcast: pass the shapes accordingly)."""
    if src.is_tuple or dst.is_tuple:
        raise UnsupportedError("bitcast of a tuple shape")
    bits_s, bits_d = ELEMENT_BITS.get(src.element_type), ELEMENT_BITS.get(dst.element_type)
    if bits_s is None or bits_d is None or bits_s != bits_d:
        raise UnsupportedError(
            f"bitcast {src} -> {dst}: element widths differ or are unknown (no transpose-reshape-transpose)"
        )
    if src.num_elements() != dst.num_elements():
        raise UnsupportedError(f"bitcast {src} -> {dst}: element counts differ")
    if (src.is_tiled or dst.is_tiled) and not (
        src.dims == dst.dims
        and src.minor_to_major() == dst.minor_to_major()
        and src.layout_annotations == dst.layout_annotations
    ):
        # A tiled layout (TPU's T(8,128)) stores the elements tile by tile: the
        # physical order is not the minor-to-major order, and not modeled.
        raise UnsupportedError(
            f"bitcast {src} -> {dst}: tiled layouts (the buffer holds tiles, not the minor-to-major order)"
        )
    src_phys, dst_phys = physical_order(src), physical_order(dst)
    phys = reshape_exprs([src.dims[k] for k in src_phys], [dst.dims[k] for k in dst_phys])
    # Physical dst dimension j is logical dst dimension dst_phys[j].
    to_logical: list[AffineExpr] = [Dim(k) for k in dst_phys]
    phys = [e.substitute(dims=to_logical) for e in phys]
    out: list[AffineExpr] = [Dim(0)] * src.rank
    for pos, k in enumerate(src_phys):
        out[k] = phys[pos]
    return out
