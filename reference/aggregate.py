"""CPU reference for vLLM's per-request NaN aggregation (speculative decoding: several logits rows per request).

`aggregate_num_nans_per_request(num_nans, cumulative_row_ends)` in newer upstream vLLM: request i owns rows
[ends[i-1], ends[i]) with ends[-1] taken as 0, so a request with no rows gets 0; the result has one entry per request
and num_nans' dtype (int32). Counted here in Python integers, row by row, not through a prefix sum.
"""
from __future__ import annotations

import torch

__all__ = ["aggregate_reference", "exact_request_sums"]


def _check_ends(num_rows: int, ends: list[int]) -> None:
    """Refuse row ends that do not describe consecutive, non-overlapping requests inside the rows."""
    previous = 0
    for index, end in enumerate(ends):
        if end < previous:
            raise ValueError(f"cumulative_row_ends[{index}] = {end} is below the previous end {previous}")
        previous = end
    if previous > num_rows:
        raise ValueError(f"cumulative_row_ends ends at row {previous}, past the {num_rows} rows of num_nans")


def exact_request_sums(num_nans: torch.Tensor, cumulative_row_ends: torch.Tensor) -> list[int]:
    """Each request's total as an exact Python int (no wrap-around, whatever the input dtypes)."""
    if num_nans.dim() != 1 or cumulative_row_ends.dim() != 1:
        raise ValueError(
            f"expected 1-D num_nans and cumulative_row_ends, got shapes {tuple(num_nans.shape)} "
            f"and {tuple(cumulative_row_ends.shape)}"
        )
    counts = [int(c) for c in num_nans.detach().cpu().tolist()]
    ends = [int(e) for e in cumulative_row_ends.detach().cpu().tolist()]
    _check_ends(len(counts), ends)
    sums: list[int] = []
    start = 0
    for end in ends:
        total = 0
        for row in range(start, end):
            total += counts[row]
        sums.append(total)
        start = end
    return sums


def aggregate_reference(num_nans: torch.Tensor, cumulative_row_ends: torch.Tensor) -> torch.Tensor:
    """The expected result on the CPU, in num_nans' dtype; OverflowError when an exact sum does not fit it."""
    sums = exact_request_sums(num_nans, cumulative_row_ends)
    info = torch.iinfo(num_nans.dtype)
    for index, total in enumerate(sums):
        if not info.min <= total <= info.max:
            raise OverflowError(f"request {index} sums to {total}, outside {num_nans.dtype} [{info.min}, {info.max}]")
    return torch.tensor(sums, dtype=num_nans.dtype)
