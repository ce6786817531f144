"""Planted twins of `_count_pairs_kernel`, one bug each: the word-pair tests must catch every one of them."""
from __future__ import annotations

import triton
import triton.language as tl

from kernel.predicate import is_nan_i32, nan_pair_count


@triton.jit
def low_half_only(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK: tl.constexpr, CARRY: tl.constexpr):
    """Counts only the low element of each word: NaNs at odd columns are missed."""
    row_ptr = logits_ptr + tl.program_id(0).to(tl.int64) * logits_stride
    words_ptr = row_ptr.to(tl.pointer_type(tl.int32))
    num_words = vocab_size // 2
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, num_words, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        words = tl.load(words_ptr + offs, mask=offs < num_words, other=0).to(tl.uint32, bitcast=True)
        acc += ((((words & 0x7FFF7FFF) + CARRY * 0x10001) >> 15) & 1).to(tl.int32)
    last = tl.load(row_ptr + (vocab_size - 1), mask=vocab_size % 2 == 1, other=0)
    tl.store(num_nans_ptr + tl.program_id(0), tl.sum(acc, axis=0) + is_nan_i32(last))


@triton.jit
def odd_tail_dropped(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK: tl.constexpr, CARRY: tl.constexpr):
    """Never reads the last element of an odd-length row."""
    row_ptr = logits_ptr + tl.program_id(0).to(tl.int64) * logits_stride
    words_ptr = row_ptr.to(tl.pointer_type(tl.int32))
    num_words = vocab_size // 2
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, num_words, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += nan_pair_count(tl.load(words_ptr + offs, mask=offs < num_words, other=0), CARRY)
    tl.store(num_nans_ptr + tl.program_id(0), tl.sum(acc, axis=0))


@triton.jit
def carry_one_high(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK: tl.constexpr, CARRY: tl.constexpr):
    """The carry one too large: infinities count as NaNs."""
    row_ptr = logits_ptr + tl.program_id(0).to(tl.int64) * logits_stride
    words_ptr = row_ptr.to(tl.pointer_type(tl.int32))
    num_words = vocab_size // 2
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, num_words, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += nan_pair_count(tl.load(words_ptr + offs, mask=offs < num_words, other=0), CARRY + 1)
    last = tl.load(row_ptr + (vocab_size - 1), mask=vocab_size % 2 == 1, other=0)
    tl.store(num_nans_ptr + tl.program_id(0), tl.sum(acc, axis=0) + is_nan_i32(last))


@triton.jit
def signed_high_bit(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK: tl.constexpr, CARRY: tl.constexpr):
    """The high half's carry read with an arithmetic shift of a signed word: a NaN there counts -1."""
    row_ptr = logits_ptr + tl.program_id(0).to(tl.int64) * logits_stride
    words_ptr = row_ptr.to(tl.pointer_type(tl.int32))
    num_words = vocab_size // 2
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, num_words, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        t = (tl.load(words_ptr + offs, mask=offs < num_words, other=0) & 0x7FFF7FFF) + CARRY * 0x10001
        acc += ((t >> 15) & 1) + (t >> 31)
    last = tl.load(row_ptr + (vocab_size - 1), mask=vocab_size % 2 == 1, other=0)
    tl.store(num_nans_ptr + tl.program_id(0), tl.sum(acc, axis=0) + is_nan_i32(last))


@triton.jit
def dense_rows(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK: tl.constexpr, CARRY: tl.constexpr):
    """Rows taken to be vocab_size elements apart: a padded batch reads the wrong words from row 1 on."""
    row_ptr = logits_ptr + tl.program_id(0).to(tl.int64) * vocab_size
    words_ptr = row_ptr.to(tl.pointer_type(tl.int32))
    num_words = vocab_size // 2
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, num_words, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += nan_pair_count(tl.load(words_ptr + offs, mask=offs < num_words, other=0), CARRY)
    last = tl.load(row_ptr + (vocab_size - 1), mask=vocab_size % 2 == 1, other=0)
    tl.store(num_nans_ptr + tl.program_id(0), tl.sum(acc, axis=0) + is_nan_i32(last))


PLANTS = {"low_half_only": low_half_only, "odd_tail_dropped": odd_tail_dropped, "carry_one_high": carry_one_high,
          "signed_high_bit": signed_high_bit, "dense_rows": dense_rows}
