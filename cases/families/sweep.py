"""Exhaustive sweeps: every fp16 and bf16 pattern in four layouts, and an fp32 sample of every sign x exponent."""
from __future__ import annotations

from dataclasses import dataclass

import torch

from cases.anchor import ANCHOR_BLOCK_SIZE, ANCHOR_SEED
from cases.family import Built, Context, Family, Totals, params_of
from cases.formats import FloatFormat, fmt_of, from_bits, hex_bits
from cases.random_bits import generator, randperm
from reference import bits_reference, sealed
from verdict.record import CaseParams

LAYOUTS: tuple[str, ...] = ("ordered", "shuffled", "straddle", "ragged")


@dataclass(frozen=True)
class SweepCase:
    """Every bit pattern of a 16-bit dtype (or a deterministic fp32 sample) in one layout."""

    dtype: str
    layout: str
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-sweep-{self.layout}"


def _range_labels(patterns: torch.Tensor, fmt: FloatFormat) -> list[str]:
    """For rows of consecutive patterns, name the range each row covers."""
    return [f"patterns {hex_bits(int(row[0]), fmt)}..{hex_bits(int(row[-1]), fmt)}" for row in patterns]


def _fp32_sample(fmt: FloatFormat, gen: torch.Generator) -> torch.Tensor:
    """Every sign x exponent, each with the boundary mantissas and a few random ones: 512 x 16 patterns."""
    q = fmt.quiet_bit
    boundary = [0, 1, 2, q - 1, q, q + 1, q | 1, fmt.mantissa_mask - 1, fmt.mantissa_mask]
    out = []
    for sign in (0, fmt.sign_bit):
        for exponent in range(1 << fmt.exponent_bits):
            head = sign | (exponent << fmt.mantissa_bits)
            extra = torch.randint(0, fmt.mantissa_mask + 1, (16 - len(boundary),), generator=gen).tolist()
            out.extend(head | m for m in boundary + extra)
    return torch.tensor(out, dtype=torch.int64).reshape(64, 128)


def _patterns(case: SweepCase, fmt: FloatFormat) -> tuple[torch.Tensor, bool]:
    """The bit patterns laid out as rows, and whether rows hold consecutive patterns (so they get labels)."""
    gen = generator(case.seed)
    if case.layout == "sample":
        return _fp32_sample(fmt, gen), True
    every = torch.arange(1 << 16, dtype=torch.int64)
    if case.layout == "ordered":
        return every.reshape(16, 4096), True
    if case.layout == "shuffled":
        return every[randperm(every.numel(), gen)].reshape(16, 4096), False
    if case.layout == "straddle":
        # the first NaN run across the first block boundary; the negative run lands 2^15 later, across another
        shift = ANCHOR_BLOCK_SIZE - fmt.mantissa_mask // 2 - (fmt.exponent_mask + 1)
        return torch.roll(every, shift).reshape(2, 1 << 15), False
    if case.layout == "ragged":
        rows, vocab = 7, 10_007  # vocab not a multiple of the block; patterns wrap around
        return torch.arange(rows * vocab, dtype=torch.int64).remainder(1 << 16).reshape(rows, vocab), True
    raise ValueError(f"unknown sweep layout {case.layout!r}")


def build(case: SweepCase) -> Built:
    fmt = fmt_of(case.dtype)
    patterns, labelled = _patterns(case, fmt)
    x = from_bits(patterns.reshape(-1), fmt).reshape(patterns.shape)
    expected = bits_reference(x)
    if case.layout != "sample" and sum(sealed.int_list(expected)) != fmt.nan_count:
        raise AssertionError(f"sweep lost patterns: {sum(sealed.int_list(expected))} NaNs, not {fmt.nan_count}")
    return Built(x, expected, _range_labels(patterns, fmt) if labelled else None)


def params(case: SweepCase) -> CaseParams:
    shape = {"sample": (64, 128), "ordered": (16, 4096), "shuffled": (16, 4096), "straddle": (2, 1 << 15),
             "ragged": (7, 10_007)}.get(case.layout, ())
    return params_of(case, shape, case.layout)


def cases(context: Context) -> tuple[SweepCase, ...]:
    return tuple(SweepCase(d, layout) for d in ("fp16", "bf16") for layout in LAYOUTS) + (SweepCase("fp32", "sample"),)


FAMILY = Family(
    "sweep", "nan_sweep", "exhaustive bit-pattern sweeps (fp16, bf16; fp32 sample)", cases, build, params,
    summary=Totals(), order=40,
)
