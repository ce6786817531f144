"""The anchor's design, kept as the baseline: one program per row, BLOCK 8192, grid (num_reqs,).

A copy of vllm-ascend's kernel (REFERENCE.md section 1) with two portability fixes that do not change its
speed: the NaN predicate comes from kernel.predicate (the interpreter has no libdevice) and the row offset is
int64 (the anchor's int32 offset faults past 2^31 elements, which the large benchmark shapes approach).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from kernel.predicate import is_nan_i32

ANCHOR_BLOCK_SIZE = 8192


@triton.jit
def _anchor_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    """One program per row, a block-sized reduction per loop step."""
    req_idx = tl.program_id(0).to(tl.int64)
    num_nans = tl.zeros((), dtype=tl.int32)
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        x = tl.load(logits_ptr + req_idx * logits_stride + block, mask=mask, other=0)
        num_nans += tl.sum(is_nan_i32(x), axis=0).to(tl.int32)
    tl.store(num_nans_ptr + req_idx, num_nans)


def anchor_num_nans(logits: torch.Tensor) -> torch.Tensor:
    """The anchor wrapper: int32 [num_reqs], grid (num_reqs,), BLOCK_SIZE 8192."""
    num_reqs, vocab_size = logits.shape
    out = torch.empty(num_reqs, dtype=torch.int32, device=logits.device)
    _anchor_kernel[(num_reqs,)](logits, logits.stride(0), out, vocab_size, BLOCK_SIZE=ANCHOR_BLOCK_SIZE)
    return out
