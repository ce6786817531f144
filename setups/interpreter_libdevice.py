"""A stand-in for a vendor libdevice under the Triton interpreter, which runs no extern (libdevice) calls.

Only `isnan` exists, because that is all the NaN-count kernels call. It returns int1 like the vendor functions
(CUDA `__nv_isnanf`, CANN `__hmf_isnan`), so a kernel's own `.to(tl.int1)` and `tl.sum` behave as on hardware:
upstream Triton widens an int1 sum, triton-ascend does not. Import it only after TRITON_INTERPRET is set.
"""
from __future__ import annotations

import triton
import triton.language as tl

__all__ = ["isnan"]


@triton.jit
def isnan(x):
    """NaN when the fp32 pattern, sign dropped, is above +Inf's: exponent all ones and a non-zero mantissa."""
    bits = x.to(tl.float32).to(tl.int32, bitcast=True)
    return (bits & 0x7FFFFFFF) > 0x7F800000
