"""Rows padded past vocab with NaNs: only the vocab part counts, and the padding must survive untouched."""
from __future__ import annotations

from dataclasses import dataclass

from cases.anchor import ANCHOR_BLOCK_SIZE, ANCHOR_SEED, DTYPES
from cases.families import LAYOUTS
from cases.family import Built, Family, params_of
from cases.formats import fmt_of, from_bits
from cases.random_bits import generator, randn_with_nans, random_nan_bits
from reference import bits_reference
from verdict.record import CaseParams

GEOMETRIES: tuple[tuple[int, int, int], ...] = (
    (5, 3000, 3077), (3, ANCHOR_BLOCK_SIZE + 1, 2 * ANCHOR_BLOCK_SIZE), (4, 100, 3 * ANCHOR_BLOCK_SIZE + 5))


@dataclass(frozen=True)
class PaddedCase:
    """`rows` rows of `vocab` values at row stride `stride`; the padding is all NaN."""

    dtype: str
    rows: int
    vocab: int
    stride: int
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-padded-{self.rows}x{self.vocab}-stride{self.stride}"


def build(case: PaddedCase) -> Built:
    """The whole padded storage: NaN patterns everywhere, then `vocab` random entries (some NaN) per row."""
    fmt = fmt_of(case.dtype)
    gen = generator(case.seed)
    storage = from_bits(random_nan_bits(case.rows * case.stride, fmt, gen), fmt).reshape(case.rows, case.stride)
    storage[:, : case.vocab] = randn_with_nans(case.rows, case.vocab, fmt, gen, 0.2)
    view = storage[:, : case.vocab]
    return Built(view, bits_reference(view), storage=storage)


def params(case: PaddedCase) -> CaseParams:
    return params_of(case, (case.rows, case.vocab), "0.2", layout="padded")


FAMILY = Family(
    "padded", "nan_layout",
    "rows padded past vocab with NaNs: only the vocab part counts, and the padding must survive untouched",
    lambda context: tuple(PaddedCase(d, r, v, s) for d in DTYPES for r, v, s in GEOMETRIES), build, params,
    marker_help=LAYOUTS, order=70,
)
