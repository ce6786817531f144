"""Traversal rules beside the partial block (reports.diagnosis_blocks): blocks lost, lanes never read, half of each
row, padding or a column stride read, square inputs transposed."""
from __future__ import annotations

from collections.abc import Sequence

from cases.anchor import ANCHOR_BLOCK_SIZE
from reports.diagnosis_base import Diagnosis, anchor_blocks, example, found, passing_checks, vocab, wrong_checks
from verdict.record import Check, TestRecord, WrongRow


def block_sums(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Rows longer than one block lose or repeat whole blocks, while rows within one block pass."""
    wrong = [(r, c) for r, c in wrong_checks(records) if r.family in ("matrix", "shapes")]
    long = [(r, c) for r, c in wrong if vocab(c) > ANCHOR_BLOCK_SIZE]
    short_pass = [c for c in passing_checks(records) if c.params.family in ("matrix", "shapes")
                  and 1 < vocab(c) <= ANCHOR_BLOCK_SIZE]
    if not long or len(long) != len(wrong) or not short_pass:
        return None
    return found("traversal", "multi-block rows: blocks lost, overwritten or stepped wrong",
                 f"only rows longer than one {ANCHOR_BLOCK_SIZE}-block miscount ({len(long)} checks), "
                 f"e.g. {example(long[0][1])}; "
                 f"{short_pass[0].params.case_id} passes", long,
                 control=f"{len(short_pass)} check(s) of rows within one block pass")


def unread_lanes(records: Sequence[TestRecord]) -> Diagnosis | None:
    """A row of nothing but NaNs counts fewer than its length (more than a per-block OR would): lanes never read."""
    hits = [(r, c, w) for r, c in wrong_checks(records) if vocab(c) and r.family != "magnitudes"
            for w in c.wrong_rows
            if w.expected == vocab(c) and anchor_blocks(vocab(c)) < w.got < w.expected]
    if not hits:
        return None
    r, c, w = hits[0]
    return found("traversal", "elements of each row never read (loop step, tile width or mask)",
                 f"all-NaN rows count fewer than their length, e.g. {c.params.case_id} ({c.path}) row {w.row}: "
                 f"{w.got} of {w.expected}", [(r, c) for r, c, _ in hits])


def _all_nan_rows(records: Sequence[TestRecord]) -> list[tuple[TestRecord, Check, WrongRow]]:
    """Wrong rows that hold nothing but NaNs (they expect their whole length), of at least 4 elements."""
    return [(r, c, w) for r, c in wrong_checks(records) if vocab(c) >= 4 and r.family != "magnitudes"
            for w in c.wrong_rows if w.expected == vocab(c)]


def half_the_elements(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Every wrong all-NaN row counts exactly half its length: half of each row's elements are never tested (one
    half of every two-element load, every other element, or half the row); it explains every undercounting check."""
    full = _all_nan_rows(records)
    if not full or any(w.got not in (vocab(c) // 2, (vocab(c) + 1) // 2) for _, c, w in full):
        return None
    hits = [(r, c) for r, c in wrong_checks(records) if all(0 <= w.got < w.expected for w in c.wrong_rows)]
    r, c, w = full[0]
    return found("traversal", "half of each row's elements never tested (every other element, one half of each "
                 "two-element load, or half the row)",
                 f"every wrong all-NaN row counts exactly half its length ({len(full)} rows), e.g. "
                 f"{c.params.case_id} ({c.path}) row {w.row}: {w.got} of {w.expected}; other wrong rows undercount",
                 hits)


def padding(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Padded rows (NaN padding) count more than their vocab holds: the padding is read (row stride)."""
    hits = [(r, c) for r, c in wrong_checks(records) if (r.family == "padded" or c.params.layout == "padded")
            and any(w.got > w.expected for w in c.wrong_rows)]
    if not hits:
        return None
    return found("traversal", "row stride (padding counted)",
                 f"rows whose stride exceeds vocab count their NaN padding ({len(hits)} checks), e.g. "
                 f"{example(hits[0][1])}", hits)


def column_stride(records: Sequence[TestRecord]) -> Diagnosis | None:
    hits = [(r, c) for r, c in wrong_checks(records) if c.params.layout == "transposed"]
    if not hits:
        return None
    return found("traversal", "column stride ignored (a non-unit inner stride read as contiguous)",
                 f"a transposed view was counted, wrongly, instead of refused: {example(hits[0][1])}", hits)



def square(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Only square inputs miscount while other shapes pass: rows and columns swapped when they cannot be told apart."""
    wrong = wrong_checks(records)
    sq = [(r, c) for r, c in wrong if len(c.params.shape) == 2 and c.params.shape[0] == c.params.shape[1] > 1]
    others_pass = [c for c in passing_checks(records) if len(c.params.shape) == 2
                   and c.params.shape[0] != c.params.shape[1]]
    if not sq or len(sq) != len(wrong) or not others_pass:
        return None
    return found("traversal", "square inputs: rows and columns swapped (the layout guessed from the shape)",
                 f"only square inputs miscount ({len(sq)} checks), e.g. {example(sq[0][1])}; "
                 f"{others_pass[0].params.case_id} passes", sq,
                 control=f"{len(others_pass)} check(s) of non-square inputs pass")
