"""CPU reference for vLLM's per-request NaN aggregation (speculative decoding: several logits rows per request).

`aggregate_num_nans_per_request(num_nans, cumulative_row_ends)` in newer upstream vLLM: request i owns rows
[ends[i-1], ends[i]) with ends[-1] taken as 0, so a request with no rows gets 0; the result has one entry per request
and num_nans' dtype (int32). Counted here in Python integers, row by row, not through a prefix sum.
"""
from __future__ import annotations

import torch


def exact_request_sums(num_nans: torch.Tensor, cumulative_row_ends: torch.Tensor) -> list[int]:
    """Each request's total as an exact Python int (no wrap-around, whatever the input dtypes); row ends that do not
    describe consecutive, non-overlapping requests inside the rows are refused."""
    if num_nans.dim() != 1 or cumulative_row_ends.dim() != 1:
        raise ValueError(
            f"expected 1-D num_nans and cumulative_row_ends, got shapes {tuple(num_nans.shape)} "
            f"and {tuple(cumulative_row_ends.shape)}"
        )
    counts = [int(c) for c in num_nans.detach().cpu().tolist()]
    ends = [int(e) for e in cumulative_row_ends.detach().cpu().tolist()]
    starts = [0, *ends[:-1]]
    for index, (start, end) in enumerate(zip(starts, ends)):
        if end < start:
            raise ValueError(f"cumulative_row_ends[{index}] = {end} is below the previous end {start}")
    if ends and ends[-1] > len(counts):
        raise ValueError(f"cumulative_row_ends ends at row {ends[-1]}, past the {len(counts)} rows of num_nans")
    return [sum(counts[start:end]) for start, end in zip(starts, ends)]


def aggregate_reference(num_nans: torch.Tensor, cumulative_row_ends: torch.Tensor) -> torch.Tensor:
    """The expected result on the CPU, in num_nans' dtype; OverflowError when an exact sum does not fit it."""
    sums = exact_request_sums(num_nans, cumulative_row_ends)
    info = torch.iinfo(num_nans.dtype)
    for index, total in enumerate(sums):
        if not info.min <= total <= info.max:
            raise OverflowError(f"request {index} sums to {total}, outside {num_nans.dtype} [{info.min}, {info.max}]")
    return torch.tensor(sums, dtype=num_nans.dtype)
