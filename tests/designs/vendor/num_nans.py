"""vllm-ascend's shipped NaN count (vllm_ascend/ops/triton/v2/metrics/num_nans.py) in our words, its import lines
exactly as shipped: CANN's libdevice and vLLM's triton_utils, neither of which a CPU CI has.

One program per row, CANN's isnan (int1) widened to int32 before `tl.sum`, the row offset in 32 bits, an `assert`
on the rank, BLOCK_SIZE 8192. On the CPU: `--kernel-path tests/designs/vendor --kernel num_nans
--kernel-setup setups.vendor_interpreter:install` (docs/backends.md, "A vendor module as shipped").
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
        flags = libdevice.isnan(values).to(tl.int32)
        count += tl.sum(flags).to(tl.int32)
    tl.store(num_nans_ptr + row, count)


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    assert logits.ndim == 2, f"logits must be (num_reqs, vocab_size), got shape {tuple(logits.shape)}"
    num_reqs, vocab_size = logits.shape
    counts = torch.empty(num_reqs, dtype=torch.int32, device=logits.device)
    _num_nans_kernel[(num_reqs,)](logits, logits.stride(0), counts, vocab_size, BLOCK_SIZE=8192)
    return counts
