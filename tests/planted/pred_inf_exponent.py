"""Inf counted as NaN at a 4,096 block: the exponent field alone decides, `(bits & 0x7F800000) == 0x7F800000`.

Models a port that reads "NaN: exponent all ones" from a format table and leaves out "and a non-zero mantissa";
its wrapper launches 4,096-element blocks (the direct path gets the anchor's 8,192), so failing rows sit at
vocab sizes that look like a block's doing.
"""
import triton
import triton.language as tl

from tests.planted._wrapper import make_get_num_nans


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    req_idx = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + req_idx * logits_stride
    num_nans = tl.zeros((), dtype=tl.int32)
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        bits = tl.load(row_ptr + block, mask=block < vocab_size, other=0).to(tl.float32).to(tl.int32, bitcast=True)
        num_nans += tl.sum(((bits & 0x7F800000) == 0x7F800000).to(tl.int32), axis=0)  # BUG: Inf too
    tl.store(num_nans_ptr + req_idx, num_nans)


get_num_nans = make_get_num_nans(_num_nans_kernel, block_size=lambda vocab: 4096)
