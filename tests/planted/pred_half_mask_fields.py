"""16-bit inputs tested with fp16's fields, exponent `h & 0x7C00` all ones and mantissa `h & 0x3FF` non-zero,
for both half types: right for fp16; on bf16 it counts Inf and finite values from 2^121 up. Own wrapper, blocks of
2,048.

Models a port with one 16-bit path that takes fp16's field masks for "the" half format.
"""
import triton
import triton.language as tl

from tests.planted._wrapper import zeroed_wrapper

WRAPPER_BLOCK = 2048


@triton.jit
def _is_nan(x):
    if x.dtype.primitive_bitwidth == 16:
        h = x.to(tl.int16, bitcast=True).to(tl.int32)
        return ((h & 0x7C00) == 0x7C00) & ((h & 0x3FF) != 0)  # BUG: fp16's fields, bf16 too
    bits = x.to(tl.float32).to(tl.int32, bitcast=True)
    return (bits & 0x7FFFFFFF) > 0x7F800000


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * logits_stride
    lanes = tl.zeros((BLOCK_SIZE,), dtype=tl.int32)
    for start in range(0, vocab_size, BLOCK_SIZE):
        index = start + tl.arange(0, BLOCK_SIZE)
        inside = index < vocab_size
        x = tl.load(base + index, mask=inside, other=0)
        lanes += (_is_nan(x) & inside).to(tl.int32)
    tl.store(num_nans_ptr + row, tl.sum(lanes, axis=0))


get_num_nans = zeroed_wrapper(_num_nans_kernel, WRAPPER_BLOCK)
