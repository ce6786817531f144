"""Signaling NaNs missed: a NaN must have the quiet bit, `(bits & 0x7FC00000) == 0x7FC00000`.

Models a port that tests for the quiet-NaN pattern torch writes (0x7FC00000 and its widened fp16/bf16
forms) and so passes every test built from float('nan'), while sNaNs (quiet bit clear) go uncounted.
"""
import triton
import triton.language as tl

from tests.planted._wrapper import kernel_with, make_get_num_nans


@triton.jit
def _is_nan(x):
    bits = x.to(tl.float32).to(tl.int32, bitcast=True)
    return ((bits & 0x7FC00000) == 0x7FC00000).to(tl.int32)


_num_nans_kernel = kernel_with(is_nan_i32=_is_nan)
get_num_nans = make_get_num_nans(_num_nans_kernel)
