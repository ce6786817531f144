"""One row per count magnitude up to 70,001: narrow or float accumulators lose counts past their range."""
from __future__ import annotations

from dataclasses import dataclass

from cases.anchor import ANCHOR_SEED, DTYPES
from cases.families import LAYOUTS
from cases.family import Built, Family, params_of
from cases.formats import fmt_of, from_bits
from cases.random_bits import generator, randn, randperm, random_nan_bits
from reference import expected_counts, sealed
from verdict.record import CaseParams

VOCAB = 70_001
COUNTS: tuple[int, ...] = (
    0, 1, 2, 3, 127, 128, 255, 256, 257, 2047, 2048, 2049, 4097, 8193, 32767, 32768, 65535, 65536, 65537,
    VOCAB - 1, VOCAB,
)


@dataclass(frozen=True)
class MagnitudeCase:
    """Row i holds exactly counts[i] NaNs of random patterns at random positions."""

    dtype: str
    vocab: int
    counts: tuple[int, ...]
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-magnitudes-{len(self.counts)}x{self.vocab}"


def build(case: MagnitudeCase) -> Built:
    fmt = fmt_of(case.dtype)
    gen = generator(case.seed)
    x = randn(len(case.counts), case.vocab, gen).to(fmt.dtype)
    for row, n in enumerate(case.counts):
        x[row, randperm(case.vocab, gen)[:n]] = from_bits(random_nan_bits(n, fmt, gen), fmt)
    expected = expected_counts(x)
    if sealed.int_list(expected) != list(case.counts):
        raise AssertionError("magnitude rows were built wrong")
    return Built(x, expected, [f"{n} NaNs in {case.vocab}" for n in case.counts])


def params(case: MagnitudeCase) -> CaseParams:
    return params_of(case, (len(case.counts), case.vocab), "counts", layout="magnitudes")


FAMILY = Family(
    "magnitudes", "nan_layout",
    "one row per NaN count up to 70,001: a narrow or float accumulator loses counts past its range",
    lambda context: tuple(MagnitudeCase(d, VOCAB, COUNTS) for d in DTYPES), build, params,
    marker_help=LAYOUTS, order=60,
)
