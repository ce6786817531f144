"""A planted-bug kernel module for the report tests: the wrapper adds 1 to row 1, the kernel stops after one block.

The NaN predicate source carries markup, so the environment table's escaping is under test too.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from kernel.predicate import is_nan_i32

NAN_PREDICATE_SOURCE = 'portable <b class="planted-markup">planted</b>'
PLANTED_MARKUP = '<b class="planted-markup">'


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    """Planted bug: counts only the first BLOCK_SIZE columns of each row (the loop is missing)."""
    req_idx = tl.program_id(0).to(tl.int64)
    block = tl.arange(0, BLOCK_SIZE)
    x = tl.load(logits_ptr + req_idx * logits_stride + block, mask=block < vocab_size, other=0)
    tl.store(num_nans_ptr + req_idx, tl.sum(is_nan_i32(x), axis=0).to(tl.int32))


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    """Planted bug: the right counts (from the good kernel package), plus 1 on row 1."""
    from kernel import get_num_nans as good

    counts = good(logits)
    if counts.numel() > 1:
        counts[1] += 1
    return counts
