"""A zeroed int32 output for a launch that adds into it, at the least host cost the platform allows.

`torch.zeros` is `torch.empty` plus a fill kernel launched through torch's dispatcher: about 7.5 µs of host time per
call on an H200 host, against 4.6 µs for `torch.empty` plus the CUDA driver's own `cuMemsetD32Async` on the current
stream (docs/bench.md, "What a decode step pays"). The memset is an ordinary stream-ordered operation, so it runs
before the launch that follows it on the same stream and is recorded by CUDA graph capture like a kernel.
Anywhere else (CPU, NPU, ROCm, a driver library that cannot be loaded) this is `torch.zeros`.
"""
from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable

import torch


@functools.lru_cache(maxsize=1)
def driver_memset() -> Callable[..., int] | None:
    """cuMemsetD32Async from the CUDA driver library, or None where there is none (looked up once)."""
    if torch.version.hip is not None:
        return None
    try:
        function = ctypes.CDLL("libcuda.so.1").cuMemsetD32Async
    except (OSError, AttributeError):
        return None
    function.argtypes = [ctypes.c_uint64, ctypes.c_uint, ctypes.c_size_t, ctypes.c_void_p]
    function.restype = ctypes.c_int
    return function


def zeroed_int32(size: int, device: torch.device) -> torch.Tensor:
    """A fresh int32 [size] tensor of zeros on `device`, zeroed in stream order on the current stream."""
    memset = driver_memset() if device.type == "cuda" else None
    if memset is None:
        return torch.zeros(size, dtype=torch.int32, device=device)
    out = torch.empty(size, dtype=torch.int32, device=device)
    status = memset(out.data_ptr(), 0, size, torch._C._cuda_getCurrentRawStream(device.index))
    if status != 0:
        raise RuntimeError(f"cuMemsetD32Async of {size} int32 on {device} failed with CUresult {status}")
    return out
