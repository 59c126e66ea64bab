"""Review: ``arith.uitofp``/``sitofp`` from i64 to f32 round once, as MLIR (LLVM) and numpy do.

The interpreter converted the integer to a Python float (a double: rounded to 53 bits) and then to f32 (24 bits):
rounded twice. 2**63 + 2**39 + 1 as an unsigned i64 is 9223373136366403584.0 in f32 (the nearest); the double
2**63 + 2**39 is a tie between two f32 values and went to the even one, 2**63. Oracle: numpy's casts.
"""

from __future__ import annotations

import random

import pytest

from verified_indexing.legality.linalg_interpreter import int_cast

np = pytest.importorskip("numpy")


def test_the_double_rounding_case() -> None:
    u = 2**63 + 2**39 + 1
    assert int_cast("arith.uitofp", u - 2**64, "i64", "f32") == float(np.uint64(u).astype(np.float32)) == 2**63 + 2**40
    s = 2**62 + 2**38 + 1
    assert int_cast("arith.sitofp", s, "i64", "f32") == float(np.int64(s).astype(np.float32))
    assert int_cast("arith.sitofp", -s, "i64", "f32") == float(np.int64(-s).astype(np.float32))


@pytest.mark.parametrize("dst", ["f32", "f64"])
def test_random_64_bit_integers_against_numpy(dst: str) -> None:
    rng = random.Random(7)
    ft = np.float32 if dst == "f32" else np.float64
    for _ in range(3000):
        width = rng.randint(1, 64)
        u = rng.getrandbits(width)
        if rng.random() < 0.5:  # near a tie: the bits below the 24th after the leading one are 100...0 (+ a little)
            lead = max(u.bit_length(), 26)
            u = (u >> (lead - 25) << (lead - 25)) | (1 << (lead - 26)) | rng.getrandbits(2)
            u %= 1 << 64
        signed = u - (1 << 64) if u >= 1 << 63 else u
        assert int_cast("arith.uitofp", signed, "i64", dst) == float(np.uint64(u).astype(ft)), u
        assert int_cast("arith.sitofp", signed, "i64", dst) == float(np.int64(signed).astype(ft)), signed


def test_small_widths_unchanged() -> None:
    for v in range(-128, 128):
        assert int_cast("arith.uitofp", v, "i8", "f32") == float(v % 256)
        assert int_cast("arith.sitofp", v, "i8", "f16") == float(v)
    assert int_cast("arith.uitofp", 2049, "i32", "f16") == float(np.float16(2049))
