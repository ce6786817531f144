"""Large batches of narrow rows, each row holding 1 to VOCAB NaNs: a row the wrapper's launch never reaches is wrong.

Not a family (families run on both paths): the direct path launches the anchor's grid itself, so only the wrapper's
launch can cap, split or truncate a batch. On the CPU interpreter a batch costs about 2 ms a row (one program each),
so these run there only on request (`--nan-large-batches`); on accelerators always.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from cases.anchor import ANCHOR_SEED
from cases.family import Built
from cases.formats import fmt_of, from_bits
from cases.random_bits import generator, randn, random_nan_bits
from reference import expected_counts, sealed
from verdict.record import CaseParams

VOCAB = 7
# several thousand rows (past a 4,096-row split), and past CUDA's 65,535 limit of a grid's y/z axis
BATCH_ROWS: tuple[int, ...] = (5_000, 70_001)


@dataclass(frozen=True)
class BatchCase:
    """`rows` x VOCAB; row i holds 1 + (3 i mod VOCAB) NaNs of random patterns at random positions (never 0, so an
    unwritten zero is wrong too)."""

    rows: int
    dtype: str = "fp32"
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-batch-{self.rows}x{VOCAB}"


CASES: tuple[BatchCase, ...] = tuple(BatchCase(rows) for rows in BATCH_ROWS)


def nan_counts(rows: int) -> list[int]:
    return [1 + (3 * i) % VOCAB for i in range(rows)]


def build(case: BatchCase) -> Built:
    fmt = fmt_of(case.dtype)
    gen = generator(case.seed)
    x = randn(case.rows, VOCAB, gen).to(fmt.dtype)
    want = nan_counts(case.rows)
    ranks = torch.rand(case.rows, VOCAB, generator=gen, dtype=torch.float32, device="cpu").argsort(dim=1)
    mask = ranks < torch.tensor(want, dtype=torch.int64)[:, None]  # want[i] random positions of row i
    x[mask] = from_bits(random_nan_bits(int(mask.sum()), fmt, gen), fmt)
    expected = expected_counts(x)
    if sealed.int_list(expected) != want:
        raise AssertionError("batch rows were built wrong")
    return Built(x, expected)


def params(case: BatchCase) -> CaseParams:
    return CaseParams("batches", str(case), case.dtype, "batch", (case.rows, VOCAB), f"1..{VOCAB} NaNs a row",
                      case.seed)
