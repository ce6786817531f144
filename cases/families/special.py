"""The anchor's special values per dtype, from raw bits: only the injected NaNs count."""
from __future__ import annotations

from dataclasses import dataclass

from cases.anchor import ANCHOR_SEED, DTYPES
from cases.family import Built, Family, params_of
from cases.formats import fmt_of, from_bits, hex_bits
from cases.ieee import anchor_special_bits, canonical_nan
from cases.random_bits import generator, randperm
from reference import expected_counts, sealed
from verdict.record import CaseParams

SPECIAL_NAMES = ("+inf", "-inf", "+zero", "-zero", "+max_finite", "-max_finite", "+min_normal", "+subnormal")


@dataclass(frozen=True)
class SpecialCase:
    """The anchor's specials for one dtype: 2 x 1024, row 1 also holds `nans` NaNs."""

    dtype: str
    rows: int = 2
    vocab: int = 1024
    nans: int = 37
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-special-{self.rows}x{self.vocab}"


def build(case: SpecialCase) -> Built:
    """The eight specials tiled over each row; row 1 gets `nans` canonical NaNs at random positions."""
    fmt = fmt_of(case.dtype)
    specials = anchor_special_bits(fmt)
    if case.vocab % len(specials):
        raise ValueError(f"vocab {case.vocab} is not a multiple of {len(specials)} specials")
    x = from_bits(specials, fmt).repeat(case.vocab // len(specials)).unsqueeze(0).repeat(case.rows, 1)
    positions = randperm(case.vocab, generator(case.seed))[: case.nans]
    x[1, positions] = from_bits([canonical_nan(fmt)], fmt)
    expected = expected_counts(x)
    if sealed.int_list(expected) != [0, case.nans]:
        raise AssertionError(f"special-value rows were built wrong: {sealed.int_list(expected)}")
    held = ", ".join(f"{n} {hex_bits(b, fmt)}" for n, b in zip(SPECIAL_NAMES, specials))
    labels = [f"{case.dtype} specials only: {held}",
              f"{case.dtype} specials ({held}) + {case.nans} quiet_nan {hex_bits(canonical_nan(fmt), fmt)}"]
    return Built(x, expected, labels)


def params(case: SpecialCase) -> CaseParams:
    return params_of(case, (case.rows, case.vocab), "special", layout="special")


FAMILY = Family(
    "special", "nan_special", "IEEE special values built from raw bits (the anchor's specials)",
    lambda context: tuple(SpecialCase(d) for d in DTYPES), build, params, order=20,
)
