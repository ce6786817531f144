"""Negative NaNs missed: `bits > 0x7F800000` on the signed int32 view, without the 0x7FFFFFFF abs mask.

Models the hand-written bit test that forgets the sign: every NaN with the sign bit set (x86 makes them,
see the conversion table in the project notes) is a negative int32 and never compares above 0x7F800000.
"""
import triton
import triton.language as tl

from tests.planted._wrapper import kernel_with, make_get_num_nans


@triton.jit
def _is_nan(x):
    bits = x.to(tl.float32).to(tl.int32, bitcast=True)
    return (bits > 0x7F800000).to(tl.int32)


_num_nans_kernel = kernel_with(is_nan_i32=_is_nan)
get_num_nans = make_get_num_nans(_num_nans_kernel)
