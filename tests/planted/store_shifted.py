"""Output shifted by one: counts stored at `req_idx + 1`, so row 0 is never written and one slot past the end is.

Models a 1-based index (or a header slot) carried over from a host-side layout. The self-test runs it on
direct launches only, where the slot past the end is the harness's guard, not someone else's heap.
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
    num_nans = tl.zeros((), dtype=tl.int32)
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        x = tl.load(row_ptr + block, mask=mask, other=0)
        num_nans += tl.sum(is_nan_i32(x), axis=0).to(tl.int32)
    tl.store(num_nans_ptr + req_idx + 1, num_nans)  # BUG: off by one


# the wrapper gives it one more slot, so the production path itself is safe to run
get_num_nans = make_get_num_nans(
    _num_nans_kernel, alloc=lambda n, dev: torch.empty(n + 1, dtype=torch.int32, device=dev)
)
