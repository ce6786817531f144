"""Planted twins of `_count_rows_paired_kernel`, one bug each, so tests/kernel/test_paired_rows.py shows that its
checks fail on the mistakes a word-pair reader invites (same signature as the real kernel)."""
from __future__ import annotations

import triton
import triton.language as tl

from kernel.predicate import is_nan_half_bits, nan_pair_flags


@triton.jit
def low_half_only(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK: tl.constexpr, HALF_ADD: tl.constexpr):
    """Counts bit 0 of each word's flags only: NaNs at odd columns (the high halves) are missed."""
    row = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + row * logits_stride
    words_ptr = row_ptr.to(tl.pointer_type(tl.int32))
    pairs = vocab_size // 2
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, pairs, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += nan_pair_flags(tl.load(words_ptr + offs, mask=offs < pairs, other=0), HALF_ADD) & 1  # BUG
    num_nans = tl.sum(acc, axis=0)
    last = tl.load(row_ptr + (vocab_size - 1), mask=vocab_size % 2 == 1, other=0)
    num_nans += is_nan_half_bits(last, HALF_ADD)
    tl.store(num_nans_ptr + row, num_nans)


@triton.jit
def odd_tail_dropped(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK: tl.constexpr,
                     HALF_ADD: tl.constexpr):
    """Reads whole words only: an odd row's last element is never tested."""
    row = tl.program_id(0).to(tl.int64)
    words_ptr = (logits_ptr + row * logits_stride).to(tl.pointer_type(tl.int32))
    pairs = vocab_size // 2
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, pairs, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += nan_pair_flags(tl.load(words_ptr + offs, mask=offs < pairs, other=0), HALF_ADD)
    tl.store(num_nans_ptr + row, tl.sum((acc & 0xFFFF) + ((acc >> 16) & 0xFFFF), axis=0))  # BUG: no tail


@triton.jit
def fp16_addend_always(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK: tl.constexpr,
                       HALF_ADD: tl.constexpr):
    """Tests every 16-bit dtype against fp16's Inf: bf16 Inf and finite values from 2^121 on are counted."""
    row = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + row * logits_stride
    words_ptr = row_ptr.to(tl.pointer_type(tl.int32))
    pairs = vocab_size // 2
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, pairs, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += nan_pair_flags(tl.load(words_ptr + offs, mask=offs < pairs, other=0), 0x3FF)  # BUG: fp16's addend
    num_nans = tl.sum((acc & 0xFFFF) + ((acc >> 16) & 0xFFFF), axis=0)
    last = tl.load(row_ptr + (vocab_size - 1), mask=vocab_size % 2 == 1, other=0)
    num_nans += is_nan_half_bits(last, 0x3FF)
    tl.store(num_nans_ptr + row, num_nans)


@triton.jit
def lane_fields_narrowed(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK: tl.constexpr,
                         HALF_ADD: tl.constexpr):
    """Folds a lane's two counts as 8-bit fields: right until a lane has counted 256 NaNs in one half."""
    row = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + row * logits_stride
    words_ptr = row_ptr.to(tl.pointer_type(tl.int32))
    pairs = vocab_size // 2
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, pairs, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += nan_pair_flags(tl.load(words_ptr + offs, mask=offs < pairs, other=0), HALF_ADD)
    num_nans = tl.sum((acc & 0xFF) + ((acc >> 16) & 0xFF), axis=0)  # BUG: 8 of each field's 16 bits
    last = tl.load(row_ptr + (vocab_size - 1), mask=vocab_size % 2 == 1, other=0)
    num_nans += is_nan_half_bits(last, HALF_ADD)
    tl.store(num_nans_ptr + row, num_nans)


PLANTS = {"low_half_only": low_half_only, "odd_tail_dropped": odd_tail_dropped,
          "fp16_addend_always": fp16_addend_always, "lane_fields_narrowed": lane_fields_narrowed}
