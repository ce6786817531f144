"""Pick the NaN predicate once per process, per backend, and say which one was picked."""
from __future__ import annotations

import importlib

import triton
import triton.language as tl

from kernel.launch import interpreting

__all__ = ["NAN_PREDICATE_SOURCE", "is_nan_i32"]


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
