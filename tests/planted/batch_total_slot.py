"""Writes outside its output: each program also adds its count to a batch total at `num_nans_ptr[num_programs]`.

Models a port that adds a "total NaNs in the batch" slot after the per-row counts and sizes its own wrapper's
buffer for it (num_reqs + 1), so the wrapper path counts right while any caller that allocates exactly
num_reqs (vLLM does) gets its neighbouring memory clobbered: only a guarded direct launch sees it.
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
    tl.store(num_nans_ptr + req_idx, num_nans)
    tl.atomic_add(num_nans_ptr + tl.num_programs(0), num_nans)  # BUG: one slot past the output


get_num_nans = make_get_num_nans(
    _num_nans_kernel, alloc=lambda n, dev: torch.zeros(n + 1, dtype=torch.int32, device=dev)
)
