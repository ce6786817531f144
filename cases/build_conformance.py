"""Tensors for the conformance cases, from raw bits and per-case seeds; labels name what each row holds."""
from __future__ import annotations

import torch

from cases.formats import FloatFormat, fmt_of, from_bits, hex_bits
from cases.ieee import IEEE_CLASSES
from cases.records import IeeeCase, MagnitudeCase, OffsetCase, PaddedCase, ShapeCase, SweepCase

BLOCK_SIZE = 8192


def random_nan_bits(n: int, fmt: FloatFormat, gen: torch.Generator) -> torch.Tensor:
    """n NaN patterns with random sign and random non-zero payload (quiet and signaling alike)."""
    payload = torch.randint(1, fmt.mantissa_mask + 1, (n,), generator=gen, dtype=torch.int64)
    sign = torch.randint(0, 2, (n,), generator=gen, dtype=torch.int64) * fmt.sign_bit
    return sign | fmt.exponent_mask | payload


def randn_with_nans(rows: int, vocab: int, fmt: FloatFormat, gen: torch.Generator, frac: float) -> torch.Tensor:
    """Normal values cast to fmt, with about `frac` of the entries replaced by random NaN patterns."""
    x = torch.randn(rows, vocab, generator=gen).to(fmt.dtype)
    mask = torch.rand(rows, vocab, generator=gen) < frac
    x[mask] = from_bits(random_nan_bits(int(mask.sum()), fmt, gen), fmt)
    return x


def build_ieee(case: IeeeCase) -> tuple[torch.Tensor, list[str]]:
    """`rows`: one class and sign per row, filled with it; `mixed`: every class scattered over each row."""
    fmt = fmt_of(case.dtype)
    patterns = [(c, neg, c.bits(fmt, neg)) for c in IEEE_CLASSES for neg in (False, True)]
    if case.arrangement == "rows":
        x = from_bits([bits for _, _, bits in patterns], fmt).unsqueeze(1).repeat(1, case.vocab)
        labels = [f"{'-' if neg else '+'}{c.name} {case.dtype} {hex_bits(bits, fmt)}" for c, neg, bits in patterns]
        return x, labels
    gen = torch.Generator().manual_seed(case.seed)
    rows = 4
    picks = torch.randint(0, len(patterns), (rows, case.vocab), generator=gen)
    table = from_bits([bits for _, _, bits in patterns], fmt)
    x = table[picks]
    labels = []
    for r in range(rows):
        present = torch.bincount(picks[r], minlength=len(patterns)).tolist()
        nan_parts = [
            f"{'-' if neg else '+'}{c.name}({hex_bits(bits, fmt)})x{n}"
            for (c, neg, bits), n in zip(patterns, present)
            if c.is_nan and n
        ]
        labels.append(f"mixed {case.dtype}: " + ", ".join(nan_parts))
    return x, labels


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


def build_sweep(case: SweepCase) -> tuple[torch.Tensor, list[str] | None]:
    """All 2^16 patterns of fp16/bf16 in one layout (or the fp32 sample); labels for ordered layouts."""
    fmt = fmt_of(case.dtype)
    gen = torch.Generator().manual_seed(case.seed)
    if case.layout == "sample":
        patterns = _fp32_sample(fmt, gen)
        return from_bits(patterns.reshape(-1), fmt).reshape(patterns.shape), _range_labels(patterns, fmt)
    every = torch.arange(1 << 16, dtype=torch.int64)
    if case.layout == "ordered":
        patterns, labels = every.reshape(16, 4096), True
    elif case.layout == "shuffled":
        patterns, labels = every[torch.randperm(every.numel(), generator=gen)].reshape(16, 4096), False
    elif case.layout == "straddle":
        # put the first NaN run across the first block boundary; the negative run lands 2^15 later, across another
        run = fmt.mantissa_mask
        shift = BLOCK_SIZE - run // 2 - (fmt.exponent_mask + 1)
        patterns, labels = torch.roll(every, shift).reshape(2, 1 << 15), False
    elif case.layout == "ragged":
        rows, vocab = 7, 10_007  # vocab not a multiple of BLOCK_SIZE; patterns wrap around
        patterns, labels = torch.arange(rows * vocab, dtype=torch.int64).remainder(1 << 16).reshape(rows, vocab), True
    else:
        raise ValueError(f"unknown sweep layout {case.layout!r}")
    x = from_bits(patterns.reshape(-1), fmt).reshape(patterns.shape)
    return x, (_range_labels(patterns, fmt) if labels else None)


def build_shape(case: ShapeCase) -> torch.Tensor:
    fmt = fmt_of(case.dtype)
    return randn_with_nans(case.rows, case.vocab, fmt, torch.Generator().manual_seed(case.seed), 0.25)


def build_magnitudes(case: MagnitudeCase) -> torch.Tensor:
    """Row i holds exactly counts[i] NaNs (random patterns) at random positions."""
    fmt = fmt_of(case.dtype)
    gen = torch.Generator().manual_seed(case.seed)
    x = torch.randn(len(case.counts), case.vocab, generator=gen).to(fmt.dtype)
    for row, n in enumerate(case.counts):
        positions = torch.randperm(case.vocab, generator=gen)[:n]
        x[row, positions] = from_bits(random_nan_bits(n, fmt, gen), fmt)
    return x


def build_padded(case: PaddedCase) -> torch.Tensor:
    """The whole padded storage [rows, stride]: NaN padding after `vocab` random entries with some NaNs."""
    fmt = fmt_of(case.dtype)
    gen = torch.Generator().manual_seed(case.seed)
    storage = from_bits(random_nan_bits(case.rows * case.stride, fmt, gen), fmt).reshape(case.rows, case.stride)
    storage[:, : case.vocab] = randn_with_nans(case.rows, case.vocab, fmt, gen, 0.2)
    return storage


def build_offset_rows(case: OffsetCase) -> torch.Tensor:
    """The three logical rows (CPU); row r gets 100*(r+1)+r NaNs so each row's count is distinct."""
    fmt = fmt_of(case.dtype)
    gen = torch.Generator().manual_seed(case.seed)
    x = torch.randn(3, case.vocab, generator=gen).to(fmt.dtype)
    for row in range(3):
        n = 100 * (row + 1) + row
        x[row, torch.randperm(case.vocab, generator=gen)[:n]] = from_bits(random_nan_bits(n, fmt, gen), fmt)
    return x


def place_offset_rows(rows: torch.Tensor, stride: int, device: str) -> torch.Tensor:
    """A [3, V] view with row stride `stride` over a mostly untouched allocation on `device`."""
    num_rows, vocab = rows.shape
    storage = torch.empty((num_rows - 1) * stride + vocab, dtype=rows.dtype, device=device)
    view = storage.as_strided((num_rows, vocab), (stride, 1))
    for r in range(num_rows):
        view[r].copy_(rows[r])
    return view
