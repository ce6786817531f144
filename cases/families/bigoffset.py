"""A 3-row view whose row 2 starts past 2^31 elements: 32-bit row offsets wrap there and read or fault elsewhere."""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import torch

from cases.anchor import ANCHOR_SEED, DTYPES
from cases.families import LAYOUTS
from cases.family import Built, Family, params_of
from cases.formats import fmt_of, from_bits
from cases.random_bits import generator, randn, randperm, random_nan_bits
from reference import expected_counts
from verdict.record import CaseParams

STRIDE = (1 << 30) + 4096  # row 2 starts at 2^31 + 8192 elements
VOCAB = 4096 + 3


@dataclass(frozen=True)
class OffsetCase:
    dtype: str
    vocab: int
    stride: int
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-bigoffset-3x{self.vocab}-stride{self.stride}"


def place_rows(rows: torch.Tensor, stride: int, device: str) -> torch.Tensor:
    """A [3, V] view with row stride `stride` over a mostly untouched allocation (only the rows are resident)."""
    num_rows, vocab = rows.shape
    storage = torch.empty((num_rows - 1) * stride + vocab, dtype=rows.dtype, device=device)
    view = storage.as_strided((num_rows, vocab), (stride, 1))
    for r in range(num_rows):
        view[r].copy_(rows[r])
    return view


def build(case: OffsetCase) -> Built:
    """Three logical rows; row r gets 100*(r+1)+r NaNs so each row's count is distinct."""
    fmt = fmt_of(case.dtype)
    gen = generator(case.seed)
    x = randn(3, case.vocab, gen).to(fmt.dtype)
    for row in range(3):
        n = 100 * (row + 1) + row
        x[row, randperm(case.vocab, gen)[:n]] = from_bits(random_nan_bits(n, fmt, gen), fmt)
    labels = [f"row starts at element {r * case.stride:,}" for r in range(3)]
    return Built(x, expected_counts(x), labels, build_on=partial(place_rows, x, case.stride))


def params(case: OffsetCase) -> CaseParams:
    return params_of(case, (3, case.vocab), "offset", layout="bigoffset")


FAMILY = Family(
    "bigoffset", "nan_layout",
    "a 3-row view whose row 2 starts past 2^31 elements: 32-bit row offsets wrap there",
    lambda context: tuple(OffsetCase(d, VOCAB, STRIDE) for d in DTYPES), build, params,
    extra_markers=("nan_bigoffset",), marker_help=LAYOUTS, order=80,
)
