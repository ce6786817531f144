"""A stray write 64 slots past the output: each program also stores its count at `num_nans_ptr + req_idx + 64`.

Models a port that keeps the previous step's counts (for a NaN-rate metric) in a 64-slot window after the
current ones and sizes its own wrapper's buffer for it (num_reqs + 64), so its own path counts right; a caller
that allocates exactly num_reqs, as vLLM does, gets memory 64 slots away overwritten, too far for a guard of a
few slots, inside the harness's two-block guards.
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
    tl.store(num_nans_ptr + req_idx + 64, num_nans)  # BUG: 64 slots on, outside an exact-size output
    tl.store(num_nans_ptr + req_idx, num_nans)


get_num_nans = make_get_num_nans(
    _num_nans_kernel, alloc=lambda n, dev: torch.empty(n + 64, dtype=torch.int32, device=dev)
)
