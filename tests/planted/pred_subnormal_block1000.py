"""Subnormals counted, on each dtype's own bits, stepping 1,000 elements at a time.

The predicate reads 16-bit inputs on their raw 16-bit pattern (no fp32 widening) and calls "exponent field all
zeros or all ones, mantissa non-zero" a NaN: the fpclassify "not normal" bucket. So fp16 subnormals count (random
fp16 logits hold a few: |x| < 2^-14), and bf16 and fp32 ones. The kernel steps 125/128 of its lanes per block:
1,000 elements on the wrapper's 1,024-lane launch, 8,000 on the direct path's 8,192.

Models a port that saves the widening on half types and takes the classifier's non-normal bucket for isnan.
"""
import torch
import triton
import triton.language as tl

from tests.planted._wrapper import check_input

LANES = 1024


@triton.jit
def _not_normal(x):
    if x.dtype == tl.float16:
        h = x.to(tl.int16, bitcast=True).to(tl.int32)
        exponent = (h >> 10) & 0x1F
        flags = ((h & 0x3FF) != 0) & ((exponent == 0) | (exponent == 0x1F))
    elif x.dtype == tl.bfloat16:
        h = x.to(tl.int16, bitcast=True).to(tl.int32)
        exponent = (h >> 7) & 0xFF
        flags = ((h & 0x7F) != 0) & ((exponent == 0) | (exponent == 0xFF))
    else:
        bits = x.to(tl.float32).to(tl.int32, bitcast=True)
        exponent = (bits >> 23) & 0xFF
        flags = ((bits & 0x7FFFFF) != 0) & ((exponent == 0) | (exponent == 0xFF))  # BUG: exponent 0 is no NaN
    return flags


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * logits_stride
    lanes = tl.arange(0, BLOCK_SIZE)
    total = tl.zeros((), dtype=tl.int32)
    for start in range(0, vocab_size, BLOCK_SIZE * 125 // 128):
        index = start + lanes
        keep = (lanes < BLOCK_SIZE * 125 // 128) & (index < vocab_size)
        x = tl.load(base + index, mask=keep, other=0)
        total += tl.sum((_not_normal(x) & keep).to(tl.int32), axis=0)
    tl.store(num_nans_ptr + row, total)


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    check_input(logits)
    rows, vocab = logits.shape
    out = torch.empty(rows, dtype=torch.int32, device=logits.device)
    if rows == 0 or vocab == 0:
        return out.zero_()
    _num_nans_kernel[(rows,)](logits, logits.stride(0), out, vocab, BLOCK_SIZE=LANES)
    return out
