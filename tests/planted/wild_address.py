"""Faults on an illegal address on every launch: the subject of the crash-survival self-test, not a port bug.

Stands in for any kernel that kills the process (the anchor's int32 offset past 2^31 elements, a wild
pointer): the case that crashed must show up as a failed case with its id, and the run and report go on.
"""
import triton
import triton.language as tl

from kernel.predicate import is_nan_i32
from tests.planted._wrapper import make_get_num_nans


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    req_idx = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + req_idx * logits_stride + (1 << 44)  # BUG: 2^44 elements away: unmapped
    num_nans = tl.zeros((), dtype=tl.int32)
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        x = tl.load(row_ptr + block, mask=mask, other=0)
        num_nans += tl.sum(is_nan_i32(x), axis=0).to(tl.int32)
    tl.store(num_nans_ptr + req_idx, num_nans)


get_num_nans = make_get_num_nans(_num_nans_kernel)
