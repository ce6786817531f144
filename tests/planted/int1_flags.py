"""int1 flags summed: the predicate returns `.to(tl.int1)`, as upstream vLLM's `libdevice.isnan(x).to(tl.int1)`.

Models the flag width of upstream vLLM's kernel: upstream Triton promotes an int1 sum to int32 and counts
right, triton-ascend keeps it at int1 and each block's count collapses to 0/1.
"""
import triton
import triton.language as tl

from tests.planted._wrapper import kernel_with, make_get_num_nans


@triton.jit
def _is_nan(x):
    bits = x.to(tl.float32).to(tl.int32, bitcast=True)
    return ((bits & 0x7FFFFFFF) > 0x7F800000).to(tl.int1)


_num_nans_kernel = kernel_with(is_nan_i32=_is_nan)
get_num_nans = make_get_num_nans(_num_nans_kernel)
