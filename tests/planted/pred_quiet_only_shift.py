"""Signaling NaNs missed, tested with shifts: `(bits >> 22) & 0x1FF == 0x1FF`, the exponent's eight ones and the
quiet bit, in a kernel of its own whose wrapper launches 2,048-element blocks.

Models a port that takes "the top ten bits of a NaN are ones" (true of every NaN torch writes) for the test, so
it passes each case built from float('nan') while a NaN with the quiet bit clear goes uncounted.
"""
import triton
import triton.language as tl

from tests.planted._wrapper import zeroed_wrapper

WRAPPER_BLOCK = 2048


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * logits_stride
    count = tl.zeros((), dtype=tl.int32)
    for start in range(0, vocab_size, BLOCK_SIZE):
        index = start + tl.arange(0, BLOCK_SIZE)
        bits = tl.load(base + index, mask=index < vocab_size, other=0).to(tl.float32).to(tl.int32, bitcast=True)
        count += tl.sum((((bits >> 22) & 0x1FF) == 0x1FF).to(tl.int32), axis=0)  # BUG: the quiet bit required
    tl.store(num_nans_ptr + row, count)


get_num_nans = zeroed_wrapper(_num_nans_kernel, WRAPPER_BLOCK)
