"""Upstream vLLM's design (vllm/v1/worker/gpu/metrics/logits.py), in our words: one program per row, flags
`isnan(x).to(tl.int1)` summed per block, the row offset `tl.program_id(0) * logits_stride` in 32 bits, and a
wrapper that checks nothing (`num_reqs, vocab_size = logits.shape`).

Under the interpreter libdevice has no isnan; like the project's vLLM setup (setups.interpreter_libdevice) the
stand-in tests the fp32 bit pattern and returns int1, as CUDA's and CANN's isnan do, so the flags stay int1.
Upstream Triton widens an int1 sum and counts right; triton-ascend sums int1 as int1 (a per-block OR).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def isnan(x):
    """int1: exponent all ones and a non-zero mantissa, on the fp32 bits."""
    bits = x.to(tl.int32, bitcast=True)
    return (bits & 0x7FFFFFFF) > 0x7F800000


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    req_idx = tl.program_id(0)
    num_nans = 0
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        logits = tl.load(logits_ptr + req_idx * logits_stride + block, mask=mask, other=0).to(tl.float32)
        is_nan = isnan(logits).to(tl.int1)
        num_nans += tl.sum(is_nan).to(tl.int32)
    tl.store(num_nans_ptr + req_idx, num_nans)


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    num_reqs, vocab_size = logits.shape
    BLOCK_SIZE = 8192
    num_nans = torch.empty(num_reqs, dtype=torch.int32, device=logits.device)
    _num_nans_kernel[(num_reqs,)](logits, logits.stride(0), num_nans, vocab_size, BLOCK_SIZE=BLOCK_SIZE)
    return num_nans
