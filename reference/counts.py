"""The CPU references: torch's isnan, and an independent one that reads raw bit patterns."""
from __future__ import annotations

import torch

from cases.formats import fmt_of


def torch_reference(x: torch.Tensor) -> torch.Tensor:
    """The anchor's reference, on the CPU: isnan(x).sum(-1) as int32."""
    return torch.isnan(x.detach().cpu()).sum(dim=-1).to(torch.int32)


def bits_reference(x: torch.Tensor) -> torch.Tensor:
    """Counts from the integer view: |bits| above the exponent mask is a NaN, whatever sign or payload."""
    fmt = fmt_of(x.dtype)
    ints = x.detach().cpu().contiguous().view(fmt.int_dtype).to(torch.int64) & fmt.abs_mask
    return (ints > fmt.exponent_mask).sum(dim=-1).to(torch.int32)


REFERENCES = {"torch": torch_reference, "bits": bits_reference}
