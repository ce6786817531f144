"""Pick the NaN predicate once per process, per backend, and say which one was picked."""
from __future__ import annotations

import importlib

import torch
import triton
import triton.language as tl

from kernel.launch import interpreting


def _load_libdevice() -> tuple[object | None, str]:
    """(libdevice module, source name): triton-ascend's, else CUDA's where torch sees a GPU; (None, 'portable')
    under the interpreter (no extern support) or where no usable libdevice exists."""
    candidates = [("triton.language.extra.cann.libdevice", "cann"),
                  ("triton.language.extra.ascend.libdevice", "ascend")]
    if torch.cuda.is_available():  # the CUDA libdevice links only where torch sees an NVIDIA (or ROCm) device
        candidates.append(("triton.language.extra.cuda.libdevice", "cuda"))
    for module_name, source in candidates if not interpreting() else ():
        try:
            return importlib.import_module(module_name), source
        except ImportError:
            continue
    return None, "portable"


libdevice, NAN_PREDICATE_SOURCE = _load_libdevice()


@triton.jit
def _is_nan_portable(x):
    """IEEE NaN test on the fp32 bit pattern: exponent all ones and a non-zero mantissa, any sign."""
    bits = x.to(tl.float32).to(tl.int32, bitcast=True)
    return ((bits & 0x7FFFFFFF) > 0x7F800000).to(tl.int32)


@triton.jit
def _is_nan_libdevice(x):
    """Vendor isnan on fp32, widened to int32 so tl.sum counts instead of OR-ing (triton-ascend)."""
    return libdevice.isnan(x.to(tl.float32)).to(tl.int32)


is_nan_i32 = _is_nan_portable if libdevice is None else _is_nan_libdevice

# 0x7FFF minus the infinity's magnitude bits: added to a half's magnitude, it carries past bit 15 iff that is a NaN
PAIR_CARRY: dict[torch.dtype, int] = {torch.bfloat16: 0x7FFF - 0x7F80, torch.float16: 0x7FFF - 0x7C00}


@triton.jit
def nan_pair_count(words, CARRY: tl.constexpr):
    """NaNs among the two 16-bit floats of each int32 word (0, 1 or 2), from raw bits, any sign or payload."""
    t = (words.to(tl.uint32, bitcast=True) & 0x7FFF7FFF) + CARRY * 0x10001  # no carry crosses into the high half
    return (((t >> 15) & 1) + (t >> 31)).to(tl.int32)
