"""float64 accepted and miscounted: the wrapper admits float64, and the kernel's bit-pattern predicate is
widened to "the integer of the value's width" but keeps fp32's masks, so a 64-bit NaN is tested on its low
word (`(bits & 0x7FFFFFFF) > 0x7F800000` on an int64) and the canonical NaN 0x7FF8000000000000 counts 0.

Models the reconsidered dtype contract: accepting float64 is fine when it is counted right (upcasting, or
the fp64 masks), as upstream vLLM and vllm-ascend do; a port that generalises the predicate by width only
counts wrong. fp32, bf16 and fp16 take the fp32 path and are counted right.
"""
import torch
import triton
import triton.language as tl

from kernel import num_nans as clean
from tests.planted._wrapper import kernel_with, make_get_num_nans


@triton.jit
def _is_nan_by_width(x):
    if x.dtype == tl.float64:
        wide = x.to(tl.int64, bitcast=True)
        return ((wide & 0x7FFFFFFF) > 0x7F800000).to(tl.int32)  # BUG: fp32 masks on a 64-bit pattern
    bits = x.to(tl.float32).to(tl.int32, bitcast=True)
    return ((bits & 0x7FFFFFFF) > 0x7F800000).to(tl.int32)


_num_nans_kernel = kernel_with(is_nan_i32=_is_nan_by_width)
get_num_nans = make_get_num_nans(_num_nans_kernel, dtypes=(*clean.SUPPORTED_DTYPES, torch.float64))
