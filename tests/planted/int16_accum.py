"""int16 accumulator: block counts are added in int16, so a row with more than 32767 NaNs wraps negative.

Models a port that narrows the per-row counter to save registers / unified-buffer space (fine for the anchor's
rows, at most 16384 wide); real vocabularies (152k, 256k) overflow it.
"""
import triton
import triton.language as tl

from kernel.predicate import is_nan_i32
from tests.planted._wrapper import make_get_num_nans


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    req_idx = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + req_idx * logits_stride
    num_nans = tl.zeros((), dtype=tl.int16)  # BUG: 16-bit counter
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        x = tl.load(row_ptr + block, mask=mask, other=0)
        num_nans += tl.sum(is_nan_i32(x), axis=0).to(tl.int16)
    tl.store(num_nans_ptr + req_idx, num_nans.to(tl.int32))


get_num_nans = make_get_num_nans(_num_nans_kernel)
