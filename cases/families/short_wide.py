"""A short batch of wide rows holding more NaNs than 2^15 and 2^16: the path a short batch takes must sum past 16 bits.

Found by `python -m mutate` on our kernel: the `magnitudes` family holds its large counts in a 21-row batch, which
launches one program per row; a short batch instead cuts each row into chunks whose partial counts a second stage
sums, and with that sum narrowed to int16 every other case still passed. Three rows (a short batch on every
backend: fewer rows than the interpreter's 8, an NPU's vector cores or a GPU's SMs), 70,001 wide.
"""
from __future__ import annotations

from dataclasses import dataclass

from cases.anchor import DTYPES
from cases.families import LAYOUTS
from cases.families.magnitudes import MagnitudeCase, build
from cases.family import Family, params_of
from verdict.record import CaseParams

VOCAB = 70_001
COUNTS: tuple[int, ...] = (32_768, 65_537, VOCAB)  # past int16, past uint16, every element


@dataclass(frozen=True)
class ShortWideCase(MagnitudeCase):
    """A magnitudes case (row i holds exactly counts[i] NaNs, built by its builder) in a batch of few rows."""

    def __str__(self) -> str:
        return f"{self.dtype}-shortwide-{len(self.counts)}x{self.vocab}"


def params(case: ShortWideCase) -> CaseParams:
    return params_of(case, (len(case.counts), case.vocab), "counts", layout="shortwide")


FAMILY = Family(
    "short_wide", "nan_layout",
    "three 70,001-wide rows with more than 2^15 and 2^16 NaNs: a short batch's chunk sum must pass 16 bits",
    lambda context: tuple(ShortWideCase(d, VOCAB, COUNTS) for d in DTYPES), build, params,
    marker_help=LAYOUTS, order=62,
)
