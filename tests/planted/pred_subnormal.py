"""Subnormals counted: any non-zero mantissa under an exponent of all ones *or all zeros* is a "NaN".

Models a port that classifies "not a normal number" (the fpclassify buckets a backend exposes) instead of NaN,
so denormal logits (flushed to zero on some hardware, kept on others) are counted.
"""
import triton
import triton.language as tl

from tests.planted._wrapper import kernel_with, make_get_num_nans


@triton.jit
def _is_nan(x):
    bits = x.to(tl.float32).to(tl.int32, bitcast=True)
    exponent = (bits >> 23) & 0xFF
    mantissa = bits & 0x7FFFFF
    return ((mantissa != 0) & ((exponent == 0xFF) | (exponent == 0))).to(tl.int32)


_num_nans_kernel = kernel_with(is_nan_i32=_is_nan)
get_num_nans = make_get_num_nans(_num_nans_kernel)
