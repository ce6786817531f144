"""Planted twins of `_count_pairs_kernel`, one bug each: the word-pair tests must catch every one of them."""
from __future__ import annotations

import triton
import triton.language as tl

from kernel.predicate import nan_pair_count


@triton.jit
def low_half_only(words_ptr, words_stride, num_nans_ptr, num_words, BLOCK: tl.constexpr, CARRY: tl.constexpr):
    """Counts only the low element of each word: NaNs at odd columns are missed."""
    row_ptr = words_ptr + tl.program_id(0).to(tl.int64) * words_stride
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, num_words, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        words = tl.load(row_ptr + offs, mask=offs < num_words, other=0).to(tl.uint32, bitcast=True)
        acc += ((((words & 0x7FFF7FFF) + CARRY * 0x10001) >> 15) & 1).to(tl.int32)
    tl.store(num_nans_ptr + tl.program_id(0), tl.sum(acc, axis=0))


@triton.jit
def carry_one_high(words_ptr, words_stride, num_nans_ptr, num_words, BLOCK: tl.constexpr, CARRY: tl.constexpr):
    """The carry one too large: infinities count as NaNs."""
    row_ptr = words_ptr + tl.program_id(0).to(tl.int64) * words_stride
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, num_words, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += nan_pair_count(tl.load(row_ptr + offs, mask=offs < num_words, other=0), CARRY + 1)
    tl.store(num_nans_ptr + tl.program_id(0), tl.sum(acc, axis=0))


@triton.jit
def signed_high_bit(words_ptr, words_stride, num_nans_ptr, num_words, BLOCK: tl.constexpr, CARRY: tl.constexpr):
    """The high half's carry read with an arithmetic shift of a signed word: a NaN there counts -1."""
    row_ptr = words_ptr + tl.program_id(0).to(tl.int64) * words_stride
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, num_words, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        t = (tl.load(row_ptr + offs, mask=offs < num_words, other=0) & 0x7FFF7FFF) + CARRY * 0x10001
        acc += ((t >> 15) & 1) + (t >> 31)
    tl.store(num_nans_ptr + tl.program_id(0), tl.sum(acc, axis=0))


@triton.jit
def counts_padding(words_ptr, words_stride, num_nans_ptr, num_words, BLOCK: tl.constexpr, CARRY: tl.constexpr):
    """Reads each row up to its stride: a padded batch counts its padding."""
    row_ptr = words_ptr + tl.program_id(0).to(tl.int64) * words_stride
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, words_stride, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += nan_pair_count(tl.load(row_ptr + offs, mask=offs < words_stride, other=0), CARRY)
    tl.store(num_nans_ptr + tl.program_id(0), tl.sum(acc, axis=0))


@triton.jit
def last_step_dropped(words_ptr, words_stride, num_nans_ptr, num_words, BLOCK: tl.constexpr, CARRY: tl.constexpr):
    """Loops over whole steps only: the words past the last full step of a row are never read."""
    row_ptr = words_ptr + tl.program_id(0).to(tl.int64) * words_stride
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, num_words - BLOCK + 1, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += nan_pair_count(tl.load(row_ptr + offs, mask=offs < num_words, other=0), CARRY)
    tl.store(num_nans_ptr + tl.program_id(0), tl.sum(acc, axis=0))


PLANTS = {"low_half_only": low_half_only, "carry_one_high": carry_one_high, "signed_high_bit": signed_high_bit,
          "counts_padding": counts_padding, "last_step_dropped": last_step_dropped}
