"""Payload NaNs missed: only the canonical pattern counts, `(bits & 0x7FFFFFFF) == 0x7FC00000`.

Models a port that compares against the one NaN constant it knows (torch's float('nan')), as a
`x == NAN_BITS` test does: NaNs carrying a payload (hardware-generated, other conversions) are missed.
"""
import triton
import triton.language as tl

from tests.planted._wrapper import kernel_with, make_get_num_nans


@triton.jit
def _is_nan(x):
    bits = x.to(tl.float32).to(tl.int32, bitcast=True)
    return ((bits & 0x7FFFFFFF) == 0x7FC00000).to(tl.int32)


_num_nans_kernel = kernel_with(is_nan_i32=_is_nan)
get_num_nans = make_get_num_nans(_num_nans_kernel)
