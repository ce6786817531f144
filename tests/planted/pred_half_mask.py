"""16-bit inputs tested on their raw pattern with fp16's masks, so bf16 Inf and finite values >= 2^121 count.

Models a port that skips the fp32 widening for half types (to save a conversion on the vector unit) and
writes `(bits & 0x7FFF) > 0x7C00` for "the 16-bit case", right for fp16 and wrong for bf16's 8-bit exponent.
"""
import triton
import triton.language as tl

from tests.planted._wrapper import kernel_with, make_get_num_nans


@triton.jit
def _is_nan(x):
    if x.dtype.primitive_bitwidth == 16:
        half = x.to(tl.int16, bitcast=True).to(tl.int32) & 0x7FFF
        return (half > 0x7C00).to(tl.int32)
    bits = x.to(tl.float32).to(tl.int32, bitcast=True)
    return ((bits & 0x7FFFFFFF) > 0x7F800000).to(tl.int32)


_num_nans_kernel = kernel_with(is_nan_i32=_is_nan)
get_num_nans = make_get_num_nans(_num_nans_kernel)
