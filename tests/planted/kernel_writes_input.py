"""Input modified in the kernel: NaNs are overwritten with 0 in place while being counted.

Models a port that fuses the sampler's nan_to_num into the counting kernel "to save a pass", so the caller's
logits change under it.
"""
import triton
import triton.language as tl

from kernel.predicate import is_nan_i32
from tests.planted._wrapper import make_get_num_nans


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    req_idx = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + req_idx * logits_stride
    num_nans = tl.zeros((), dtype=tl.int32)
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        x = tl.load(row_ptr + block, mask=mask, other=0)
        is_nan = is_nan_i32(x)
        num_nans += tl.sum(is_nan, axis=0).to(tl.int32)
        tl.store(row_ptr + block, tl.zeros_like(x), mask=mask & (is_nan != 0))  # BUG: writes the input
    tl.store(num_nans_ptr + req_idx, num_nans)


get_num_nans = make_get_num_nans(_num_nans_kernel)
