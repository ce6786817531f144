"""tests/designs/vendor/num_nans.py with one line planted wrong: isnan's int1 flags summed without the int32 widening
(as upstream vLLM's kernel sums them). triton-ascend sums int1 as int1, so a row of 12 NaNs counts 1 (the field
report); upstream Triton widens the sum and counts right.
"""
import torch
import triton.language.extra.cann.libdevice as libdevice
from vllm.triton_utils import tl, triton


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    count = 0
    for start in range(0, vocab_size, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        inside = cols < vocab_size
        values = tl.load(logits_ptr + row * logits_stride + cols, mask=inside, other=0).to(tl.float32)
        flags = libdevice.isnan(values)  # planted: the widening dropped, CANN's int1 flags summed as they come
        count += tl.sum(flags).to(tl.int32)
    tl.store(num_nans_ptr + row, count)


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    assert logits.ndim == 2, f"logits must be (num_reqs, vocab_size), got shape {tuple(logits.shape)}"
    num_reqs, vocab_size = logits.shape
    counts = torch.empty(num_reqs, dtype=torch.int32, device=logits.device)
    _num_nans_kernel[(num_reqs,)](logits, logits.stride(0), counts, vocab_size, BLOCK_SIZE=8192)
    return counts
