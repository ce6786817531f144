"""Hypothesis strategies for generated cases (`cases.families.generated.GenCase`): the property test draws these.

Every parameter is its own draw, so hypothesis shrinks each towards its simplest value (one row, the smallest
failing vocab, no padding, offset 0, fp32, all-NaN rows, seed 0) and the minimal record prints as its id. Kept
apart from the family module so that only the property test needs hypothesis.
"""
from __future__ import annotations

from hypothesis import strategies as st

from cases.anchor import ANCHOR_BLOCK_SIZE, DTYPES
from cases.families.generated import (
    BACKGROUNDS, CPU_BUDGET, FRACS, MAX_OFFSET, MAX_SEED, MAX_TAIL, MAX_VOCAB, NAN_KINDS, ROW_ALIGNMENTS,
    VOCAB_BOUNDARIES, Budget, GenCase, budget_for, max_rows, padding_for,
)


# four tiers, so that production sizes and beyond are drawn often (hypothesis favours small integers): boundaries up
# to 2^16, anything up to three blocks, boundaries past 2^16 (Llama 3, Qwen, Gemma, 2^18 + 1), anything up to 300,000
vocabs = st.one_of(
    st.sampled_from([v for v in VOCAB_BOUNDARIES if v <= 1 << 16]),
    st.integers(1, 3 * ANCHOR_BLOCK_SIZE),
    st.sampled_from([v for v in VOCAB_BOUNDARIES if v > 1 << 16]),
    st.integers(1, MAX_VOCAB),
)


def paddings(vocab: int) -> st.SearchStrategy[int]:
    """No padding, a few elements, or the row rounded up to an alignment (as vLLM pads 151936 to 152064)."""
    return st.one_of(st.just(0), st.integers(1, 16),
                     st.sampled_from(ROW_ALIGNMENTS).map(lambda a: padding_for(vocab, a)))


def row_counts(cap: int) -> st.SearchStrategy[int]:
    """1 to `cap` rows, weighted small: decode batches are small, but some draws reach the cap."""
    return st.one_of(st.integers(1, min(4, cap)), st.integers(1, min(64, cap)), st.integers(1, cap))


@st.composite
def gen_cases(draw: st.DrawFn, budget: Budget = CPU_BUDGET) -> GenCase:
    """One generated case whose cost fits `budget` (rows are drawn after the columns, up to what fits)."""
    dtype = draw(st.sampled_from(DTYPES))
    vocab = draw(vocabs)
    pad = draw(paddings(vocab))
    offset = draw(st.integers(0, MAX_OFFSET))
    tail = draw(st.integers(0, MAX_TAIL))
    rows = draw(row_counts(max_rows(vocab, pad, offset, tail, budget)))
    frac = draw(st.sampled_from(FRACS))
    nans = draw(st.sampled_from(NAN_KINDS))
    background = draw(st.sampled_from(BACKGROUNDS))
    seed = draw(st.integers(0, MAX_SEED))
    return GenCase(seed, dtype, rows, vocab, pad, offset, tail, frac, nans, background)


PROPERTY_CPU_BUDGET = Budget(64, 1 << 20)  # per example on the interpreter: about 0.3 s per path at most


def property_budget(device: str) -> Budget:
    """What one property example may cost: small on the CPU interpreter, the family's device budget elsewhere."""
    return PROPERTY_CPU_BUDGET if device == "cpu" else budget_for(device)
