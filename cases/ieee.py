"""IEEE value classes (TestFloat style: sign x exponent x significand) as raw bit patterns."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cases.formats import FloatFormat
from verdict.record import ValueClass


@dataclass(frozen=True)
class IeeeClass:
    """One class of values; `unsigned(fmt)` gives its pattern with the sign bit clear."""

    name: str
    is_nan: bool
    unsigned: Callable[[FloatFormat], int]

    def bits(self, fmt: FloatFormat, negative: bool) -> int:
        return self.unsigned(fmt) | (fmt.sign_bit if negative else 0)


IEEE_CLASSES: tuple[IeeeClass, ...] = (
    IeeeClass("zero", False, lambda f: 0),
    IeeeClass("min_subnormal", False, lambda f: 1),
    IeeeClass("max_subnormal", False, lambda f: f.mantissa_mask),
    IeeeClass("min_normal", False, lambda f: 1 << f.mantissa_bits),
    IeeeClass("one", False, lambda f: ((1 << (f.exponent_bits - 1)) - 1) << f.mantissa_bits),
    IeeeClass("max_finite", False, lambda f: f.exponent_mask - 1),
    IeeeClass("inf", False, lambda f: f.exponent_mask),
    IeeeClass("quiet_nan", True, lambda f: f.exponent_mask | f.quiet_bit),
    IeeeClass("signaling_nan", True, lambda f: f.exponent_mask | (f.quiet_bit >> 1)),
    IeeeClass("nan_low_payload", True, lambda f: f.exponent_mask | 1),
    IeeeClass("nan_all_payload", True, lambda f: f.exponent_mask | f.mantissa_mask),
)

CLASS_BY_NAME: dict[str, IeeeClass] = {c.name: c for c in IEEE_CLASSES}
OTHER_NAN = "nan_other_payload"  # a NaN whose payload is none of the classes' patterns


def value_class(bits: int, fmt: FloatFormat) -> ValueClass:
    """The record's data for one bit pattern: which class and sign it is, so no reader parses a label for it."""
    unsigned = bits & fmt.abs_mask
    is_nan = unsigned & fmt.exponent_mask == fmt.exponent_mask and bool(unsigned & fmt.mantissa_mask)
    named = next((c.name for c in IEEE_CLASSES if c.unsigned(fmt) == unsigned), None)
    name = named or (OTHER_NAN if is_nan else "finite")
    return ValueClass(name, bool(bits & fmt.sign_bit), fmt.name, bits & ((1 << fmt.width) - 1), is_nan)


def canonical_nan(fmt: FloatFormat) -> int:
    """The quiet NaN torch itself would write (0x7FC00000 / 0x7FC0 / 0x7E00), as bits."""
    return fmt.exponent_mask | fmt.quiet_bit


def anchor_special_bits(fmt: FloatFormat) -> list[int]:
    """The anchor's eight specials: inf, -inf, 0, -0, max, -max, tiny (min normal), tiny/2 (subnormal)."""
    inf = fmt.exponent_mask
    max_finite = fmt.exponent_mask - 1
    tiny = 1 << fmt.mantissa_bits
    half_tiny = 1 << (fmt.mantissa_bits - 1)
    return [inf, inf | fmt.sign_bit, 0, fmt.sign_bit, max_finite, max_finite | fmt.sign_bit, tiny, half_tiny]
