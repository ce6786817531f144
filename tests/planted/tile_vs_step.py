"""Tile narrower than the loop step: each block loads `tl.arange(0, 4096)` while the loop steps by BLOCK_SIZE.

Models a port to a backend with a small on-chip buffer (Ascend's UB) that hard-codes a 4096-wide tile in the
load and forgets the loop step, so elements 4096..8191 of every 8192 block are never read.
"""
import triton
import triton.language as tl

from kernel.predicate import is_nan_i32
from tests.planted._wrapper import make_get_num_nans

TILE = tl.constexpr(4096)  # a global must be a constexpr instance for compiled Triton


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    req_idx = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + req_idx * logits_stride
    num_nans = tl.zeros((), dtype=tl.int32)
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, TILE)  # BUG: TILE wide, but the loop steps by BLOCK_SIZE
        mask = block < vocab_size
        x = tl.load(row_ptr + block, mask=mask, other=0)
        num_nans += tl.sum(is_nan_i32(x), axis=0).to(tl.int32)
    tl.store(num_nans_ptr + req_idx, num_nans)


get_num_nans = make_get_num_nans(_num_nans_kernel)
