"""Output assumed zeroed: each block `tl.atomic_add`s its count into the output instead of storing the total.

Models a port of the split-vocab variant (one atomic add per block) whose own wrapper
allocates torch.zeros, so it is right there, but any caller that hands it torch.empty (the anchor does) gets
garbage plus the count: only the direct launch's poisoned output shows it.
"""
import torch
import triton
import triton.language as tl

from kernel.predicate import is_nan_i32
from tests.planted._wrapper import make_get_num_nans


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    req_idx = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + req_idx * logits_stride
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        x = tl.load(row_ptr + block, mask=mask, other=0)
        tl.atomic_add(num_nans_ptr + req_idx, tl.sum(is_nan_i32(x), axis=0).to(tl.int32))  # BUG: adds to the output


get_num_nans = make_get_num_nans(
    _num_nans_kernel, alloc=lambda n, dev: torch.zeros(n, dtype=torch.int32, device=dev)
)
