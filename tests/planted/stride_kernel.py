"""Row stride ignored in the kernel: rows start at `req_idx * vocab_size`, wrong for padded rows.

Models a port that assumes contiguous logits (true in most unit tests) and drops the logits_stride argument's use.
"""
import triton
import triton.language as tl

from kernel.predicate import is_nan_i32
from tests.planted._wrapper import make_get_num_nans


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    req_idx = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + req_idx * vocab_size  # BUG: vocab_size as the row stride
    num_nans = tl.zeros((), dtype=tl.int32)
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        x = tl.load(row_ptr + block, mask=mask, other=0)
        num_nans += tl.sum(is_nan_i32(x), axis=0).to(tl.int32)
    tl.store(num_nans_ptr + req_idx, num_nans)


get_num_nans = make_get_num_nans(_num_nans_kernel)
