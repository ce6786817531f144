"""A correct NaN counter as many write it first: NaN is `x != x` on the loaded value, in its own dtype.

Compiled Triton counts every NaN of fp32, fp16 and bf16 this way. The CPU interpreters (triton 3.9,
triton-ascend 3.2.0) compare bf16 as raw uint16 bits, so `x != x` is never true there and every bf16 NaN case
fails on the `cpu` backend: an interpreter defect, not a kernel bug (harness/preflight.py measures it).
Otherwise it is our wrapper's contract: int64 row offsets, masked last block, int32 counts.
"""
import os

import torch
import triton
import triton.language as tl

BLOCK_SIZE = 8192
SUPPORTED = (torch.float32, torch.float16, torch.bfloat16)


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * logits_stride
    count = tl.zeros((), dtype=tl.int32)
    for start in range(0, vocab_size, BLOCK_SIZE):
        index = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(base + index, mask=index < vocab_size, other=0.0)
        count += tl.sum((x != x).to(tl.int32), axis=0)
    tl.store(num_nans_ptr + row, count)


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    if logits.ndim != 2:
        raise ValueError(f"num_nans: logits must be 2-D, got {logits.ndim}-D")
    if logits.dtype not in SUPPORTED:
        raise TypeError(f"num_nans: {logits.dtype} is not supported")
    rows, vocab = logits.shape
    if vocab > 1 and logits.stride(1) != 1:
        raise ValueError(f"num_nans: the vocab axis must be dense (stride {logits.stride(1)} given)")
    if logits.device.type == "cpu" and os.environ.get("TRITON_INTERPRET", "0") in ("", "0"):
        raise RuntimeError("num_nans: host logits need TRITON_INTERPRET=1")
    counts = torch.zeros(rows, dtype=torch.int32, device=logits.device)
    if rows and vocab:
        _num_nans_kernel[(rows,)](logits, logits.stride(0), counts, vocab, BLOCK_SIZE=BLOCK_SIZE)
    return counts
