"""Pick the NaN predicate once per process, per backend, and say which one was picked."""
from __future__ import annotations

import importlib

import torch
import triton
import triton.language as tl

from kernel.launch import interpreting

__all__ = ["HALF_INF_BITS", "NAN_PREDICATE_SOURCE", "half_nan_add", "is_nan_half_bits", "is_nan_i32", "nan_pair_flags"]


def _cuda_visible() -> bool:
    """True when torch sees an NVIDIA (or ROCm) device, the only place the CUDA libdevice links."""
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # pragma: no cover - torch always imports in this harness
        return False


def _load_libdevice() -> tuple[object | None, str]:
    """Return (libdevice module, source name); (None, 'portable') when no usable libdevice exists."""
    if interpreting():  # the interpreter has no extern (libdevice) support: always the portable predicate
        return None, "portable"
    candidates = (
        ("triton.language.extra.cann.libdevice", "cann"),
        ("triton.language.extra.ascend.libdevice", "ascend"),
    )
    for module_name, source in candidates:
        try:
            return importlib.import_module(module_name), source
        except ImportError:
            continue
    if _cuda_visible():
        try:
            return importlib.import_module("triton.language.extra.cuda.libdevice"), "cuda"
        except ImportError:
            pass
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


# 16-bit floats tested on their raw bits, two to a 32-bit word (kernel.num_nans reads 16-bit rows that way on CUDA):
# with the sign cleared a half h is a NaN iff h > the Inf pattern (exponent all ones, zero mantissa), i.e. iff
# h + (0x7FFF - Inf) reaches bit 15. h <= 0x7FFF and the addend is <= 0x3FF, so the low half never carries into the
# high one and both halves of a word are tested by the same three integer operations.
HALF_INF_BITS: dict[torch.dtype, int] = {torch.bfloat16: 0x7F80, torch.float16: 0x7C00}


def half_nan_add(dtype: torch.dtype) -> int:
    """The addend that carries a 16-bit NaN of `dtype` (sign cleared) into bit 15: 0x7F for bf16, 0x3FF for fp16."""
    return 0x7FFF - HALF_INF_BITS[dtype]


@triton.jit
def nan_pair_flags(words, HALF_ADD: tl.constexpr):
    """Per int32 word of two 16-bit floats: bit 0 set when the low half is a NaN, bit 16 when the high half is."""
    return (((words & 0x7FFF7FFF) + HALF_ADD * 0x10001) >> 15) & 0x10001


@triton.jit
def is_nan_half_bits(x, HALF_ADD: tl.constexpr):
    """1 where a 16-bit float (bf16 or fp16, per HALF_ADD) is a NaN, from its raw bits; int32."""
    bits = x.to(tl.int16, bitcast=True).to(tl.int32) & 0x7FFF
    return (bits + HALF_ADD) >> 15
