"""Negative NaNs missed: NaN taken as the unsigned range (0x7F800000, 0x80000000), the positive NaNs only, in a
kernel of its own launched with 1,024-element blocks.

Models a port that writes the NaN test as a range on the unsigned bit view and stops at the sign bit: NaNs with
the sign bit set (0xFF800001..0xFFFFFFFF, which x86's bf16 cast of float('nan') makes) are never counted.
"""
import triton
import triton.language as tl

from tests.planted._wrapper import zeroed_wrapper

WRAPPER_BLOCK = 1024


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * logits_stride
    count = tl.zeros((), dtype=tl.int32)
    for start in range(0, vocab_size, BLOCK_SIZE):
        index = start + tl.arange(0, BLOCK_SIZE)
        value = tl.load(base + index, mask=index < vocab_size, other=0).to(tl.float32)
        bits = value.to(tl.uint32, bitcast=True)
        count += tl.sum(((bits > 0x7F800000) & (bits < 0x80000000)).to(tl.int32), axis=0)  # BUG: + NaNs only
    tl.store(num_nans_ptr + row, count)


get_num_nans = zeroed_wrapper(_num_nans_kernel, WRAPPER_BLOCK)
