"""Payload NaNs missed, in the float style: `x != x` on the fp32 value, and only where the payload below the quiet
bit is zero (`bits & 0x3FFFFF == 0`), i.e. torch's canonical NaN of either sign; 4,096-element blocks.

Models a port that pairs the self-compare with a check that the value "is the NaN constant" (to skip what it takes
for garbage), so NaNs carrying a payload (hardware-made, other conversions, signaling ones) are missed.
"""
import triton
import triton.language as tl

from tests.planted._wrapper import zeroed_wrapper

WRAPPER_BLOCK = 4096


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * logits_stride
    lanes = tl.zeros((BLOCK_SIZE,), dtype=tl.int32)
    for start in range(0, vocab_size, BLOCK_SIZE):
        index = start + tl.arange(0, BLOCK_SIZE)
        value = tl.load(base + index, mask=index < vocab_size, other=0.0).to(tl.float32)
        payload = value.to(tl.int32, bitcast=True) & 0x3FFFFF
        lanes += ((value != value) & (payload == 0)).to(tl.int32)  # BUG: payload NaNs are NaNs too
    tl.store(num_nans_ptr + row, tl.sum(lanes, axis=0))


get_num_nans = zeroed_wrapper(_num_nans_kernel, WRAPPER_BLOCK)
