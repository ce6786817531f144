"""Planted twins of `_count_rows_paired_kernel`, one bug each, so tests/kernel/test_paired_rows.py shows that its
checks fail on the mistakes a word-pair reader invites. One kernel holds them all, each bug at its place under a
compile-time switch (constexpr globals, as compiled Triton requires); PLANTS launches it like the real kernel, with
that switch set."""
from __future__ import annotations

import functools
from collections.abc import Callable

import triton
import triton.language as tl

from kernel.predicate import is_nan_half_bits, nan_pair_flags

LOW_HALF_ONLY = tl.constexpr(1)  # counts bit 0 of each word's flags only: NaNs in the high halves are missed
ODD_TAIL_DROPPED = tl.constexpr(2)  # reads whole words only: an odd row's last element is never tested
FP16_ADDEND_ALWAYS = tl.constexpr(3)  # fp16's Inf for every 16-bit dtype: bf16 Inf and values from 2^121 count
LANE_FIELDS_NARROWED = tl.constexpr(4)  # a lane's two counts folded as 8-bit fields: wrong past 255 in a half


@triton.jit
def _planted_pairs(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK: tl.constexpr, HALF_ADD: tl.constexpr,
                   BUG: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + row * logits_stride
    words_ptr = row_ptr.to(tl.pointer_type(tl.int32))
    pairs = vocab_size // 2
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, pairs, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        words = tl.load(words_ptr + offs, mask=offs < pairs, other=0)
        if BUG == FP16_ADDEND_ALWAYS:
            acc += nan_pair_flags(words, 0x3FF)
        elif BUG == LOW_HALF_ONLY:
            acc += nan_pair_flags(words, HALF_ADD) & 1
        else:
            acc += nan_pair_flags(words, HALF_ADD)
    if BUG == LANE_FIELDS_NARROWED:
        num_nans = tl.sum((acc & 0xFF) + ((acc >> 16) & 0xFF), axis=0)
    else:
        num_nans = tl.sum((acc & 0xFFFF) + ((acc >> 16) & 0xFFFF), axis=0)
    if BUG != ODD_TAIL_DROPPED:
        last = tl.load(row_ptr + (vocab_size - 1), mask=vocab_size % 2 == 1, other=0)
        if BUG == FP16_ADDEND_ALWAYS:
            num_nans += is_nan_half_bits(last, 0x3FF)
        else:
            num_nans += is_nan_half_bits(last, HALF_ADD)
    tl.store(num_nans_ptr + row, num_nans)


class _Plant:
    """`plant[grid](...)` launches the planted kernel with one bug switched on, as `kernel[grid](...)` would."""

    def __init__(self, bug: tl.constexpr) -> None:
        self.bug = bug.value

    def __getitem__(self, grid: tuple[int, ...]) -> Callable[..., object]:
        return functools.partial(_planted_pairs[grid], BUG=self.bug)


PLANTS = {"low_half_only": _Plant(LOW_HALF_ONLY), "odd_tail_dropped": _Plant(ODD_TAIL_DROPPED),
          "fp16_addend_always": _Plant(FP16_ADDEND_ALWAYS), "lane_fields_narrowed": _Plant(LANE_FIELDS_NARROWED)}
