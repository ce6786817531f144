"""Per-row NaN count of a 2-D logits tensor: the anchor kernel, hardened, and its wrapper."""
from __future__ import annotations

import os

import torch
import triton
import triton.language as tl

from kernel.predicate import is_nan_i32

BLOCK_SIZE = 8192
SUPPORTED_DTYPES: tuple[torch.dtype, ...] = (torch.float32, torch.bfloat16, torch.float16)


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    """One program per row; int64 row offset so batches past 2^31 elements stay in bounds."""
    req_idx = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + req_idx * logits_stride
    num_nans = tl.zeros((), dtype=tl.int32)
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        x = tl.load(row_ptr + block, mask=mask, other=0)
        is_nan = is_nan_i32(x)
        num_nans += tl.sum(is_nan, axis=0).to(tl.int32)
    tl.store(num_nans_ptr + req_idx, num_nans)


def _check_input(logits: torch.Tensor) -> None:
    """Refuse what the kernel cannot count correctly, with a message that names the problem."""
    if not isinstance(logits, torch.Tensor):
        raise TypeError(f"get_num_nans expects a torch.Tensor, got {type(logits).__name__}")
    if logits.dim() != 2:
        raise ValueError(
            f"get_num_nans expects 2-D logits [num_reqs, vocab_size], got shape {tuple(logits.shape)}"
        )
    if logits.dtype not in SUPPORTED_DTYPES:
        names = ", ".join(str(d).removeprefix("torch.") for d in SUPPORTED_DTYPES)
        raise TypeError(f"get_num_nans supports {names}; got {str(logits.dtype).removeprefix('torch.')}")
    num_reqs, vocab_size = logits.shape
    if vocab_size > 1 and logits.stride(1) != 1:
        raise ValueError(
            "get_num_nans needs unit stride along the vocab dimension (padded rows are fine); "
            f"got strides {tuple(logits.stride())}: call .contiguous() first"
        )
    if logits.device.type == "cpu" and os.environ.get("TRITON_INTERPRET", "0") in ("", "0"):
        raise ValueError(
            "get_num_nans got a CPU tensor but Triton is not in interpreter mode "
            "(set TRITON_INTERPRET=1 before importing triton, or move logits to the accelerator)"
        )


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    """Count NaNs per row; int32 [num_reqs] on logits' device. Rows may be padded (stride(0) >= vocab)."""
    _check_input(logits)
    num_reqs, vocab_size = logits.shape
    if num_reqs == 0 or vocab_size == 0:
        return torch.zeros(num_reqs, dtype=torch.int32, device=logits.device)
    num_nans = torch.empty(num_reqs, dtype=torch.int32, device=logits.device)
    _num_nans_kernel[(num_reqs,)](logits, logits.stride(0), num_nans, vocab_size, BLOCK_SIZE=BLOCK_SIZE)
    return num_nans
