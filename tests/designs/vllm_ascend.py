"""vllm-ascend's design (vllm_ascend/ops/triton/v2/metrics/num_nans.py), in our words: one program per row,
flags widened to int32 before `tl.sum`, the row offset in 32 bits, and `assert logits.dim() == 2`.

Its CANN libdevice isnan is replaced, under the interpreter, by a bit-pattern test on the fp32 bits (int1,
widened to int32 right away, as the kernel does with CANN's).
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _isnan(x):
    bits = x.to(tl.int32, bitcast=True)
    return (bits & 0x7FFFFFFF) > 0x7F800000


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    req_idx = tl.program_id(0)
    num_nans = 0
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        x = tl.load(logits_ptr + req_idx * logits_stride + block, mask=mask, other=0)
        x = x.to(tl.float32)
        is_nan = _isnan(x).to(tl.int32)
        num_nans += tl.sum(is_nan).to(tl.int32)
    tl.store(num_nans_ptr + req_idx, num_nans)


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    assert logits.dim() == 2
    num_reqs, vocab_size = logits.shape
    BLOCK_SIZE = 8192
    num_nans = torch.empty(num_reqs, dtype=torch.int32, device=logits.device)
    _num_nans_kernel[(num_reqs,)](logits, logits.stride(0), num_nans, vocab_size, BLOCK_SIZE=BLOCK_SIZE)
    return num_nans
