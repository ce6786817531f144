"""Turn case records into CPU tensors, deterministically from the record alone."""
from __future__ import annotations

import torch

from cases.formats import fmt_of, from_bits
from cases.ieee import anchor_special_bits, canonical_nan
from cases.records import MatrixCase, SpecialCase


def build_matrix(case: MatrixCase) -> torch.Tensor:
    """As the anchor: randn in fp32 on the CPU, NaNs injected per layout, then cast to the case dtype."""
    data_gen = torch.Generator().manual_seed(case.seed)
    x = torch.randn(case.rows, case.vocab, dtype=torch.float32, generator=data_gen)
    n = case.nans_per_row
    if n:
        if case.layout == "prefix":
            x[:, :n] = float("nan")
        elif case.layout == "scatter":
            perm_gen = torch.Generator().manual_seed(case.seed)
            for r in range(case.rows):
                x[r, torch.randperm(case.vocab, generator=perm_gen)[:n]] = float("nan")
        else:
            raise ValueError(f"unknown layout {case.layout!r}")
    return x.to(fmt_of(case.dtype).dtype)


def build_special(case: SpecialCase) -> torch.Tensor:
    """The anchor's specials tiled over the rows from raw bits; row 1 gets `nans` canonical NaNs."""
    fmt = fmt_of(case.dtype)
    specials = anchor_special_bits(fmt)
    if case.vocab % len(specials):
        raise ValueError(f"vocab {case.vocab} is not a multiple of {len(specials)} specials")
    row = from_bits(specials, fmt).repeat(case.vocab // len(specials))
    x = row.unsqueeze(0).repeat(case.rows, 1)
    gen = torch.Generator().manual_seed(case.seed)
    positions = torch.randperm(case.vocab, generator=gen)[: case.nans]
    x[1, positions] = from_bits([canonical_nan(fmt)], fmt)
    return x
