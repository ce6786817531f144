"""Inf counted as NaN: `(bits & 0x7FFFFFFF) >= 0x7F800000` (>= for >).

Models the port that writes the portable integer test by hand and takes the exponent-all-ones check
(Inf or NaN, i.e. `!isfinite`) for isnan.
"""
import triton
import triton.language as tl

from tests.planted._wrapper import kernel_with, make_get_num_nans


@triton.jit
def _is_nan(x):
    bits = x.to(tl.float32).to(tl.int32, bitcast=True)
    return ((bits & 0x7FFFFFFF) >= 0x7F800000).to(tl.int32)


_num_nans_kernel = kernel_with(is_nan_i32=_is_nan)
get_num_nans = make_get_num_nans(_num_nans_kernel)
