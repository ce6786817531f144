"""Inf counted as NaN, written as a float compare: "not finite" is `not (|x| <= FLT_MAX)` on the fp32 value,
with its own wrapper launching 1,024-element blocks and per-lane counters reduced once per row.

Models a port that reaches for the float form of the test (no bit view) and writes "is not a finite number"
where "is NaN" was meant: every comparison with a NaN is false, and so is `|inf| <= FLT_MAX`, so both count.
"""
import triton
import triton.language as tl

from tests.planted._wrapper import zeroed_wrapper

WRAPPER_BLOCK = 1024
FLT_MAX = tl.constexpr(3.4028234663852886e38)  # a global a compiled kernel may read


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = logits_ptr + row * logits_stride
    lanes = tl.zeros((BLOCK_SIZE,), dtype=tl.int32)
    for start in range(0, vocab_size, BLOCK_SIZE):
        index = start + tl.arange(0, BLOCK_SIZE)
        value = tl.load(base + index, mask=index < vocab_size, other=0.0).to(tl.float32)
        finite = tl.abs(value) <= FLT_MAX  # BUG: false for Inf as well as NaN
        lanes += tl.where(finite, 0, 1)
    tl.store(num_nans_ptr + row, tl.sum(lanes, axis=0))


get_num_nans = zeroed_wrapper(_num_nans_kernel, WRAPPER_BLOCK)
