"""Square N x N inputs whose NaN counts are not symmetric: a wrapper that transposes (or counts columns) fails.

Row r holds r + 1 NaNs in its first columns (a staircase), so column c holds N - c: every row but the middle one
of an odd N gets another count when rows and columns are swapped. Before this family the only square case was
1 x 1, where a transposing wrapper is invisible.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from cases.anchor import ANCHOR_BLOCK_SIZE, ANCHOR_SEED, DTYPES
from cases.family import Built, Context, Family, params_of
from cases.formats import fmt_of, from_bits
from cases.random_bits import generator, randn, random_nan_bits
from reference import expected_counts, sealed
from verdict.record import CaseParams

# The interpreter pays per row (one 8192-lane block each at these sizes: a 257 x 257 case costs seconds), so the
# CPU keeps the sizes small; an accelerator also gets 257, 1024 and a multi-block square past the anchor's block.
CPU_SIZES: tuple[int, ...] = (2, 3, 64)
DEVICE_SIZES: tuple[int, ...] = (2, 3, 64, 257, 1024, ANCHOR_BLOCK_SIZE + 1)


@dataclass(frozen=True)
class SquareCase:
    """An n x n input: random values, row r holds r + 1 NaNs of random patterns in columns 0..r."""

    dtype: str
    n: int
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-square-{self.n}x{self.n}"


def build(case: SquareCase) -> Built:
    fmt = fmt_of(case.dtype)
    gen = generator(case.seed)
    n = case.n
    x = randn(n, n, gen).to(fmt.dtype)
    index = torch.arange(n, dtype=torch.int64, device="cpu")
    staircase = index.unsqueeze(0) <= index.unsqueeze(1)  # [r, c]: c <= r
    x[staircase] = from_bits(random_nan_bits(n * (n + 1) // 2, fmt, gen), fmt)
    expected = expected_counts(x)
    if sealed.int_list(expected) != list(range(1, n + 1)):
        raise AssertionError(f"{case}: staircase built wrong")
    labels = [f"{r + 1} NaNs in columns 0..{r} (column {r} holds {n - r}: a transposed read counts that)"
              for r in range(n)]
    return Built(x, expected, labels)


def params(case: SquareCase) -> CaseParams:
    return params_of(case, (case.n, case.n), "staircase", layout="square")


def cases(context: Context) -> tuple[SquareCase, ...]:
    sizes = CPU_SIZES if context.device == "cpu" else DEVICE_SIZES
    return tuple(SquareCase(d, n) for d in DTYPES for n in sizes)


FAMILY = Family(
    "square", "nan_square", "square N x N inputs with non-symmetric NaN counts (a transposed read fails)",
    cases, build, params, extra_markers=("nan_layout",), order=72,
)
