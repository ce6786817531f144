"""Counts accumulated in fp16: exact only up to 2048, then rounded to fp16's spacing (4 near 5000).

Models a port that keeps the accumulator in the logits' half type (or a vector unit's fp16 reduce).
"""
import triton
import triton.language as tl

from kernel.predicate import is_nan_i32
from tests.planted._wrapper import make_get_num_nans


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    req_idx = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + req_idx * logits_stride
    num_nans = tl.zeros((), dtype=tl.float16)  # BUG: half-precision accumulator
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        x = tl.load(row_ptr + block, mask=mask, other=0)
        num_nans += tl.sum(is_nan_i32(x).to(tl.float16), axis=0)
    tl.store(num_nans_ptr + req_idx, num_nans.to(tl.int32))


get_num_nans = make_get_num_nans(_num_nans_kernel)
