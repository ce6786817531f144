"""Row padding written: each program zeroes its row's padding up to the vocab rounded up to 128 slots.

Models a port that fuses "clean the padding for the next kernel" into the count (the padding of a vocab
rounded up to a multiple of 128 may hold garbage, and a later full-width reduction would see it): the counts
are right, but memory the caller owns past each row's vocab changes under it. Only inputs with padded rows
(stride(0) > vocab_size) and a snapshot of the padding show it.
"""
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
    pad = vocab_size + tl.arange(0, 128)
    rounded = (vocab_size + 127) // 128 * 128
    zeros = tl.zeros((128,), dtype=tl.float32).to(logits_ptr.dtype.element_ty)
    tl.store(row_ptr + pad, zeros, mask=(pad < rounded) & (pad < logits_stride))  # BUG: the caller's padding
    tl.store(num_nans_ptr + req_idx, num_nans)


get_num_nans = make_get_num_nans(_num_nans_kernel)
