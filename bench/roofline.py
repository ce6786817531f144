"""What the numbers are measured against: the read roofline (two readers, the faster counts) and the launch floor.

Read roofline: the same logical bytes (padding excluded) read once, by whichever is faster on this shape:
`torch`  - torch's amax over the rows viewed as same-width integers (`x.view(int).amax(-1)`), and
`triton` - a plain Triton streaming read: below one row per core, max of the bits per (row, chunk) item on a
           grid filling the device (16-byte loads per thread, up to 8 programs per core); from one row per core,
           one program per row with 32 KB steps on 16 warps and a max per step (the fastest whole-row read found
           in an H200 sweep of grid, block and warps).
Launch floor: an empty Triton kernel, grid (1,).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

INT_VIEW = {1: torch.int8, 2: torch.int16, 4: torch.int32}


@triton.jit
def _empty_kernel():
    """Does nothing: its time is the launch floor."""
    pass


@triton.jit
def _read_kernel(x_ptr, row_stride, out_ptr, vocab_size, num_items, num_chunks, chunk, BLOCK: tl.constexpr):
    """Read every element of items pid, pid+grid, ... once; store one max per item so nothing is elided."""
    pid = tl.program_id(0)
    for item in range(pid, num_items, tl.num_programs(0)):
        row = (item // num_chunks).to(tl.int64)
        start = (item % num_chunks) * chunk
        end = tl.minimum(start + chunk, vocab_size)
        acc = tl.zeros((BLOCK,), dtype=tl.int32)
        for col in range(start, end, BLOCK):
            offs = col + tl.arange(0, BLOCK)
            bits = tl.load(x_ptr + row * row_stride + offs, mask=offs < end, other=0)
            acc = tl.maximum(acc, bits.to(tl.int32))
        tl.store(out_ptr + item, tl.max(acc, axis=0))


@triton.jit
def _read_rows_kernel(x_ptr, row_stride, out_ptr, vocab_size, BLOCK: tl.constexpr):
    """Read one row per program, a block-wide max per step; store the row's max so nothing is elided."""
    row = tl.program_id(0).to(tl.int64)
    acc = tl.full((), -2147483648, dtype=tl.int32)
    for col in range(0, vocab_size, BLOCK):
        offs = col + tl.arange(0, BLOCK)
        bits = tl.load(x_ptr + row * row_stride + offs, mask=offs < vocab_size, other=0)
        acc = tl.maximum(acc, tl.max(bits.to(tl.int32), axis=0))
    tl.store(out_ptr + row, acc)


def launch_floor() -> None:
    """One empty launch."""
    _empty_kernel[(1,)]()


def torch_read(x: torch.Tensor) -> torch.Tensor:
    """torch's fastest plain read of the rows: integer amax along the vocabulary."""
    return x.view(INT_VIEW[x.element_size()]).amax(-1)


def triton_read(x: torch.Tensor, cores: int) -> torch.Tensor:
    """A streaming Triton read: rows cut into ~8 items per core when rows < cores, else one program per row."""
    rows, vocab = x.shape
    xi = x.view(INT_VIEW[x.element_size()])
    if rows >= cores:
        out = torch.empty(rows, dtype=torch.int32, device=x.device)
        block = min(32768 // x.element_size(), triton.next_power_of_2(vocab))
        _read_rows_kernel[(rows,)](xi, xi.stride(0), out, vocab, BLOCK=block, num_warps=16)
        return out
    block = max(16, 4096 // x.element_size())
    blocks = triton.cdiv(vocab, block)
    chunks = max(1, min(blocks, triton.cdiv(8 * cores, rows)))
    chunk = triton.cdiv(blocks, chunks) * block
    chunks = triton.cdiv(vocab, chunk)
    items = rows * chunks
    out = torch.empty(items, dtype=torch.int32, device=x.device)
    _read_kernel[(min(items, 8 * cores),)](
        xi, xi.stride(0), out, vocab, items, chunks, chunk, BLOCK=block, num_warps=8
    )
    return out
