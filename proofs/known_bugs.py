"""A regression corpus of rewrites that real simplifiers got wrong.

Each :class:`KnownBug` is a rewrite in the ``check-rule`` language (symbolic
constants ``c0, c1, ...``; other names are integer variables) as a simplifier once
applied it, or as it is commonly (mis)stated, together with the correct variant: the
same rewrite with the side condition that makes it true. The origins are public facts
about the pitfalls of integer-division simplifiers (XLA's indexing-map simplifier,
MLIR's affine canonicalizations, TVM's arith rewriter, Halide's simplifier, LLVM's
InstCombine div/rem folds); the statements are written here, in floor semantics
(``floordiv`` rounds toward negative infinity, ``mod`` takes the divisor's sign).

:func:`check_known_bugs` checks the whole corpus: every wrong rewrite must be
``refuted`` with a counterexample the plain evaluator confirms, and every correct
variant must be ``proved``. ``verified-indexing known-bugs`` prints the same table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from verified_indexing.engines import Verdict
from verified_indexing.proofs.user_rule import check_user_rule

__all__ = ["KnownBug", "KNOWN_BUGS", "BugCheck", "check_known_bugs", "format_known_bugs"]


@dataclass(frozen=True)
class KnownBug:
    """A wrong rewrite and its correct variant.

    Attributes:
        name: a stable identifier.
        origin: the family of simplifiers where the pitfall is known.
        wrong, wrong_where, wrong_domain: the wrong rewrite (``LHS -> RHS``), its
            side conditions and domain, as :func:`check_user_rule` takes them.
        fixed, fixed_where, fixed_domain: the correct variant.
        note: why the wrong one is wrong.
    """

    name: str
    origin: str
    wrong: str
    wrong_where: str
    wrong_domain: str
    fixed: str
    fixed_where: str
    fixed_domain: str
    note: str
    fixed_lemmas: tuple[str, ...] = ()


# Proof hints for the nonlinear div-of-mod identity (z3 gives up on it as one query):
# x = c1*q + r, q = c2*t + u, so x = (c1*c2)*t + (c1*u + r) with 0 <= c1*u + r <= c1*c2 - 1.
DIV_OF_MOD_LEMMAS = (
    "x == (c1 * c2) * ((x floordiv c1) floordiv c2) + c1 * ((x floordiv c1) mod c2) + x mod c1",
    "c1 * ((x floordiv c1) mod c2) + x mod c1 >= 0, c1 * ((x floordiv c1) mod c2) + x mod c1 <= c1 * c2 - 1",
    "x mod (c1 * c2) == c1 * ((x floordiv c1) mod c2) + x mod c1",
    "(c1 * ((x floordiv c1) mod c2) + x mod c1) floordiv c1 == (x floordiv c1) mod c2",
)

KNOWN_BUGS: tuple[KnownBug, ...] = (
    KnownBug(
        "div_div_negative_divisor", "XLA indexing maps, MLIR affine",
        "(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)", "c0 > 0, c1 != 0", "",
        "(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)", "c0 != 0, c1 > 0", "",
        "with a negative outer divisor the two roundings do not compose: "
        "(s0 floordiv 2) floordiv -7 is not s0 floordiv -14 (s0 = 15: -1 vs -2)",
    ),
    KnownBug(
        "div_div_both_negative", "MLIR affine, TVM arith",
        "(x floordiv c0) floordiv c1 -> x floordiv (c0 * c1)", "c0 < 0, c1 < 0", "",
        "(x floordiv c0) floordiv c1 -> ((-x) floordiv (-c0)) floordiv c1", "c0 < 0, c1 < 0", "",
        "two negative divisors give a positive product, but the inner rounding goes the other way",
    ),
    KnownBug(
        "mod_sign_normalized", "TVM arith, LLVM srem folds",
        "x mod (-c0) -> x mod c0", "c0 > 0", "",
        "x mod (-c0) -> -((-x) mod c0)", "c0 > 0", "",
        "a floor remainder takes the sign of the divisor; normalizing the divisor's sign changes it",
    ),
    KnownBug(
        "mod_then_div_opposite_sign", "Euclidean vs floor remainders (MLIR, TVM)",
        "(x mod c1) floordiv c0 -> 0", "c0 != 0, c1 == -c0", "",
        "(x mod c0) floordiv c0 -> 0", "c0 != 0", "",
        "(x mod c) floordiv c -> 0 holds for both signs of c in floor semantics; it fails as soon as "
        "the remainder's sign does not follow the divisor (a Euclidean or sign-normalized mod)",
    ),
    KnownBug(
        "mul_mod_distribute", "XLA indexing maps, TVM arith",
        "(x * c0) mod c1 -> (x mod c1) * c0", "c0 > 1, c1 > 1", "",
        "(x * c0) mod (c0 * c1) -> (x mod c1) * c0", "c0 != 0, c1 != 0", "",
        "a factor can only leave a mod together with the same factor of the modulus",
    ),
    KnownBug(
        "add_const_mod", "(a correct rule, for contrast)",
        "(x + c0) mod c0 -> x", "c0 > 0", "",
        "(x + c0) mod c0 -> x mod c0", "c0 != 0", "",
        "adding the modulus is harmless, but the mod itself cannot be dropped without bounds",
    ),
    KnownBug(
        "drop_term_not_in_period", "XLA indexing maps (dropping summands by range)",
        "(x * c0 + y) floordiv c0 -> x", "c0 > 0", "y in [0, c0]",
        "(x * c0 + y) floordiv c0 -> x", "c0 > 0", "y in [0, c0 - 1]",
        "a summand can be dropped only when its whole range lies within one period [0, c0 - 1]",
    ),
    KnownBug(
        "mod_nowrap_off_by_one", "XLA indexing maps (no-wrap elimination)",
        "x mod c0 -> x - c0", "c0 > 0", "x in [c0, 2 * c0]",
        "x mod c0 -> x - c0", "c0 > 0", "x in [c0, 2 * c0 - 1]",
        "the period is half-open: x = 2*c0 wraps to 0",
    ),
    KnownBug(
        "drop_non_multiple_summand", "MLIR affine, TVM arith",
        "(x * c0 + y) mod c1 -> y mod c1", "c0 > 0, c1 > 0", "",
        "(x * c0 + y) mod c1 -> y mod c1", "c1 != 0, c0 == c1 * c2", "",
        "only summands whose coefficient is a multiple of the modulus vanish",
    ),
    KnownBug(
        "neg_floordiv_truncation", "truncating-division identities applied to floor division (LLVM, C)",
        "(-x) floordiv c0 -> -(x floordiv c0)", "c0 > 0", "",
        "(-x) floordiv c0 -> -(x ceildiv c0)", "c0 != 0", "",
        "true for truncating division (-(x/c) == (-x)/c), false for floor division: (-1) floordiv 2 = -1",
    ),
    KnownBug(
        "neg_outside_floordiv", "truncating-division identities applied to floor division",
        "-(x floordiv c0) -> (-x) floordiv c0", "c0 != 0", "",
        "-(x floordiv c0) -> (-x) ceildiv c0", "c0 != 0", "",
        "negation commutes with truncation, not with floor",
    ),
    KnownBug(
        "neg_mod_truncation", "truncating remainder identities (C's %, LLVM srem)",
        "(-x) mod c0 -> -(x mod c0)", "c0 > 0", "",
        "(-x) mod c0 -> (c0 - 1) - ((x - 1) mod c0)", "c0 > 0", "",
        "srem(-x, c) = -srem(x, c) holds for truncation; a floor remainder stays in [0, c - 1]",
    ),
    KnownBug(
        "floordiv_times_divisor", "LLVM InstCombine (exact division only)",
        "(x floordiv c0) * c0 -> x", "c0 != 0", "",
        "(x floordiv c0) * c0 -> x", "c0 != 0, x mod c0 == 0", "",
        "dividing and multiplying back is the identity only on multiples (LLVM's `exact` flag)",
    ),
    KnownBug(
        "floordiv_times_divisor_recombine", "XLA indexing maps (recombination)",
        "(x floordiv c0) * c0 + x mod c1 -> x", "c0 > 0, c1 > 0", "",
        "(x floordiv c0) * c0 + x mod c0 -> x", "c0 != 0", "",
        "recombination needs the same divisor in both terms",
    ),
    KnownBug(
        "recombine_different_dividends", "XLA indexing maps (a reshape regression)",
        "x mod c0 + (y floordiv c0) * c0 -> x", "c0 > 0", "",
        "x mod c0 + (x floordiv c0) * c0 -> x", "c0 != 0", "",
        "(s0 * 128) mod 715 + ((s0 * 64) floordiv 715) * 715 is not s0 * 128: recombination needs one dividend",
    ),
    KnownBug(
        "mod_gcd_factor_negative_modulus", "XLA indexing maps (extracting a summand from a mod)",
        "(x * c0 + y) mod (c0 * c1) -> (x * c0) mod (c0 * c1) + y", "c0 > 0, c1 != 0", "y in [0, c0 - 1]",
        "(x * c0 + y) mod (c0 * c1) -> (x * c0) mod (c0 * c1) + y", "c0 > 0, c1 > 0", "y in [0, c0 - 1]",
        "with a negative modulus the remainder is in (c0 * c1, 0]: a nonnegative y cannot be pulled out",
    ),
    KnownBug(
        "mod_mod_not_divisible", "TVM arith, MLIR affine",
        "(x mod c0) mod c1 -> x mod c1", "c0 > 0, c1 > 0", "",
        "(x mod c0) mod c1 -> x mod c1", "c1 != 0, c0 == c1 * c2, c2 != 0", "",
        "the inner modulus must be a multiple of the outer one",
    ),
    KnownBug(
        "div_of_mod_not_divisible", "XLA indexing maps",
        "(x mod c0) floordiv c1 -> (x floordiv c1) mod (c0 floordiv c1)", "c1 > 0, c0 > c1", "",
        "(x mod (c1 * c2)) floordiv c1 -> (x floordiv c1) mod c2", "c1 > 0, c2 > 0", "",
        "(x mod (a*b)) floordiv a = (x floordiv a) mod b needs the modulus to be a multiple of a",
        fixed_lemmas=DIV_OF_MOD_LEMMAS,
    ),
    KnownBug(
        "mod_distributes_over_add", "a classic algebra slip",
        "(x + y) mod c0 -> x mod c0 + y mod c0", "c0 > 0", "",
        "(x + y) mod c0 -> (x mod c0 + y mod c0) mod c0", "c0 != 0", "",
        "the sum of remainders can leave [0, c0 - 1]",
    ),
    KnownBug(
        "floordiv_distributes_over_add", "a classic algebra slip",
        "(x + y) floordiv c0 -> x floordiv c0 + y floordiv c0", "c0 > 0", "",
        "(x + y) floordiv c0 -> x floordiv c0 + y floordiv c0 + (x mod c0 + y mod c0) floordiv c0", "c0 != 0", "",
        "the carry of the remainders is lost",
    ),
    KnownBug(
        "min_floordiv_negative", "Halide simplifier (monotonicity)",
        "min(x floordiv c0, y floordiv c0) -> min(x, y) floordiv c0", "c0 != 0", "",
        "min(x floordiv c0, y floordiv c0) -> min(x, y) floordiv c0", "c0 > 0", "",
        "floor division by a negative constant is decreasing: min becomes max",
    ),
    KnownBug(
        "min_scale_negative", "Halide simplifier (monotonicity)",
        "min(x * c0, y * c0) -> min(x, y) * c0", "c0 != 0", "",
        "min(x * c0, y * c0) -> max(x, y) * c0", "c0 < 0", "",
        "multiplying by a negative constant swaps min and max",
    ),
    KnownBug(
        "ceildiv_as_floordiv", "MLIR affine lowering of ceildiv",
        "x ceildiv c0 -> (x + c0 - 1) floordiv c0", "c0 != 0", "",
        "x ceildiv c0 -> (x + c0 - 1) floordiv c0", "c0 > 0", "",
        "the +(c - 1) bias is for positive divisors; a negative one needs (x + c0 + 1)",
    ),
    KnownBug(
        "mod_scale_both", "scaling out of a mod",
        "(x mod c0) * c1 -> (x * c1) mod c0", "c0 > 0, c1 > 0", "",
        "(x mod c0) * c1 -> (x * c1) mod (c0 * c1)", "c0 > 0, c1 > 0", "",
        "scaling the remainder scales the modulus too",
    ),
)


@dataclass(frozen=True)
class BugCheck:
    """The verdicts for one corpus entry: ``ok`` when the wrong rewrite is refuted
    (with a confirmed counterexample) and the correct variant is proved."""

    bug: KnownBug
    wrong: Verdict
    fixed: Verdict

    @property
    def ok(self) -> bool:
        return self.wrong.refuted and self.wrong.counterexample is not None and self.fixed.proved


def check_known_bugs(bugs: Sequence[KnownBug] = KNOWN_BUGS, *, timeout: float = 10.0) -> list[BugCheck]:
    """Check every entry with :func:`~verified_indexing.proofs.user_rule.check_user_rule`."""
    out = []
    for b in bugs:
        w = check_user_rule(b.wrong, where=b.wrong_where, domain=b.wrong_domain, timeout=timeout)
        f = check_user_rule(b.fixed, where=b.fixed_where, domain=b.fixed_domain, timeout=timeout,
                            lemmas=b.fixed_lemmas)
        out.append(BugCheck(b, w, f))
    return out


def format_known_bugs(checks: Sequence[BugCheck]) -> str:
    """One block per entry: the wrong rewrite with its verdict and counterexample,
    the correct variant with its verdict; then a summary line."""
    lines: list[str] = []
    for c in checks:
        b = c.bug
        cond = f" where {b.wrong_where}" if b.wrong_where else ""
        dom = f" on {b.wrong_domain}" if b.wrong_domain else ""
        lines.append(f"{b.name} ({b.origin})")
        lines.append(f"  wrong: {b.wrong}{cond}{dom}  [{c.wrong.status}]")
        if c.wrong.counterexample is not None:
            ce = c.wrong.counterexample
            vals = ", ".join(f"{n} = {v}" for n, v in ce.values)
            sides = f": {ce.source[0]} vs {ce.target[0]}" if ce.source and ce.target else ""
            lines.append(f"    counterexample: {vals}{sides}")
        cond = f" where {b.fixed_where}" if b.fixed_where else ""
        dom = f" on {b.fixed_domain}" if b.fixed_domain else ""
        hint = f" (with {len(b.fixed_lemmas)} lemmas)" if b.fixed_lemmas else ""
        lines.append(f"  fixed: {b.fixed}{cond}{dom}  [{c.fixed.status}{hint}]")
    good = sum(1 for c in checks if c.ok)
    lines.append("")
    lines.append(f"{len(checks)} known bugs: {good} refuted with a confirmed counterexample and fixed variant proved, "
                 f"{len(checks) - good} not")
    return "\n".join(lines)
