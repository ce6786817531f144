"""Refuse a broken Triton interpreter up front, instead of failing every case with an obscure error.

Import this only after the cpu backend's prepare() (harness.backends): its kernel must be decorated in interpreter mode.
Known breakage: triton-ascend 3.2.0's interpreter with numpy 2, and older upstream ones with numpy 2.5, fail on a
runtime loop bound ("only 0-dimensional arrays can be converted to Python scalars").
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def _loop_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """The shape of the kernels under test: a runtime-bounded loop of masked loads and a sum."""
    acc = tl.zeros((), dtype=tl.int32)
    for i in range(0, n, BLOCK):
        offsets = i + tl.arange(0, BLOCK)
        acc += tl.sum(tl.load(x_ptr + offsets, mask=offsets < n, other=0), axis=0)
    tl.store(out_ptr, acc)


def interpreter_problem() -> str | None:
    """None when the interpreter runs a loop kernel right, else what went wrong."""
    x = torch.ones(10, dtype=torch.int32)
    out = torch.zeros(1, dtype=torch.int32)
    try:
        _loop_sum[(1,)](x, out, 10, BLOCK=4)
    except Exception as exc:  # noqa: BLE001 - any failure here means the backend is unusable
        return f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"
    return None if int(out[0]) == 10 else f"a 10-element sum came out {int(out[0])}"
