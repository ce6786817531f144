"""Whole chunks only: each row is split into 2,048-column chunks, one program per (row, chunk), and torch sums the
chunks' counts; the wrapper launches `vocab // CHUNK` chunks where cdiv was due, so each row's last, partial chunk
is never read (a vocab under 2,048 counts nothing).

Models a split-row design (programs per chunk, partial counts reduced outside the kernel) whose chunk count is
rounded down. Its `_num_nans_kernel` is the anchor's, right: the direct path passes, the bug is the wrapper's.
"""
import torch
import triton
import triton.language as tl

from kernel import num_nans as clean
from kernel.predicate import is_nan_i32
from tests.planted._wrapper import check_input

CHUNK = 2048


@triton.jit
def _chunk_kernel(logits_ptr, logits_stride, partial_ptr, vocab_size, num_chunks, CHUNK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    chunk = tl.program_id(1)
    offs = chunk * CHUNK + tl.arange(0, CHUNK)
    x = tl.load(logits_ptr + row * logits_stride + offs, mask=offs < vocab_size, other=0)
    tl.store(partial_ptr + row * num_chunks + chunk, tl.sum(is_nan_i32(x), axis=0).to(tl.int32))


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    check_input(logits)
    num_reqs, vocab_size = logits.shape
    num_chunks = vocab_size // CHUNK  # BUG: triton.cdiv(vocab_size, CHUNK)
    partial = torch.zeros((num_reqs, num_chunks), dtype=torch.int32, device=logits.device)
    if num_reqs and num_chunks:
        _chunk_kernel[(num_reqs, num_chunks)](logits, logits.stride(0), partial, vocab_size, num_chunks, CHUNK=CHUNK)
    return partial.sum(dim=1, dtype=torch.int32)


_num_nans_kernel = clean._num_nans_kernel
