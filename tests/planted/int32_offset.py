"""int32 row offset: `req_idx = tl.program_id(0)` is not widened, so `req_idx * logits_stride` wraps past 2^31.

Models the anchor kernel itself (vLLM / vllm-ascend): an illegal address on GPUs, a SIGSEGV in the CPU
interpreter, wrong rows elsewhere. Only row offsets past 2^31 elements show it.
"""
import triton
import triton.language as tl

from kernel.predicate import is_nan_i32
from tests.planted._wrapper import make_get_num_nans


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    req_idx = tl.program_id(0)  # BUG: int32, as the anchor
    row_ptr = logits_ptr + req_idx * logits_stride
    num_nans = tl.zeros((), dtype=tl.int32)
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        x = tl.load(row_ptr + block, mask=mask, other=0)
        num_nans += tl.sum(is_nan_i32(x), axis=0).to(tl.int32)
    tl.store(num_nans_ptr + req_idx, num_nans)


get_num_nans = make_get_num_nans(_num_nans_kernel)
