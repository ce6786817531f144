"""Grid capped at 65,535 programs: the wrapper launches `min(num_reqs, 65535)` programs and nothing else.

Models a port that clamps the grid to CUDA's limit of a grid's y/z axis (65,535) instead of looping over the rest:
every row from 65,535 on is never counted (the wrapper's torch.empty output holds whatever was there). Caught only
by a batch past 65,535 rows (tests/precision/test_large_batches.py; on the CPU with --nan-large-batches).
"""
import torch

from kernel import num_nans as clean
from tests.planted._wrapper import check_input

GRID_LIMIT = 65_535


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    check_input(logits)
    num_reqs, vocab_size = logits.shape
    out = torch.empty(num_reqs, dtype=torch.int32, device=logits.device)
    if num_reqs and vocab_size:
        grid = (min(num_reqs, GRID_LIMIT),)  # BUG: rows past the limit get no program
        clean._num_nans_kernel[grid](logits, logits.stride(0), out, vocab_size, BLOCK_SIZE=clean.BLOCK_SIZE)
    elif num_reqs:
        out.zero_()
    return out


_num_nans_kernel = clean._num_nans_kernel
