"""The partial-block class with the block read from the shapes (issue 40, item 6): kernels of other block sizes and
designs get the class first, with their block per path, whatever the anchor's 8,192.

Records are simulated as the suite's cases leave them: each row's NaN positions are drawn (a prefix, scattered, all
NaN, none), a design's kernel counts some of them, and the case records expected and got per row on each path.
"""
from __future__ import annotations

import bisect
import functools
import json
import random
from collections.abc import Callable, Sequence

import pytest

from reports import markdown
from reports.diagnosis import Diagnosis, diagnose
from reports.results import Results, document
from reports.tables import diagnosis_block
from tests.reports.test_diagnosis import _row, case
from verdict.record import TestRecord

pytestmark = pytest.mark.nan_reports
TAIL = "the last, partial block of a row"
Kernel = Callable[[Sequence[int], int], int]  # (NaN positions of a row, vocab) -> the count it returns


def right(nans: Sequence[int], vocab: int) -> int:
    return len(nans)


def dropped(block: int) -> Kernel:
    """Whole blocks (or chunks) only: the last, partial one is never read (NANS sorted)."""
    return lambda nans, vocab: bisect.bisect_left(nans, vocab - vocab % block)


def masked(block: int) -> Kernel:
    """Masked lanes read as NaN: every row counts the lanes of its last block past the vocab too."""
    return lambda nans, vocab: len(nans) + -vocab % block


def _rows(rows: int, vocab: int, layout: str, frac: float, rng: random.Random) -> list[list[int]]:
    """Each row's NaN positions, sorted, as the families place them."""
    n = round(vocab * frac)
    if layout == "prefix":
        return [list(range(n))] * rows
    return [sorted(rng.sample(range(vocab), n)) for _ in range(rows)]


# (family, rows, vocab, layout, fraction): the suite's vocab sizes, none of them tuned to a block but the anchor's
SUITE: tuple[tuple[str, int, int, str, float], ...] = (
    *(("matrix", r, v, layout, f) for r, v in ((1, 128), (2, 5000), (4, 8192), (8, 10000), (2, 16384))
      for layout in ("prefix", "scatter") for f in (0.1, 0.5, 1.0)),
    *(("shapes", 3, v, "random", 0.25) for v in (1, 8191, 8192, 8193, 16385)),
    ("magnitudes", 4, 70001, "random", 0.03), ("sweep", 16, 4096, "random", 0.5),
    ("special", 2, 1024, "random", 0.02), ("ieee", 6, 1000, "prefix", 1.0),
    *(("contract", 4, v, "random", 0.25) for v in (3000, 9000)),
)


@functools.cache
def _placed(seed: int) -> tuple[tuple[str, int, int, str, float, list[list[int]]], ...]:
    """The suite's cases with their rows' NaN positions, drawn once per seed."""
    rng = random.Random(seed)
    return tuple((*spec, _rows(*spec[1:], rng)) for spec in SUITE)


def run(wrapper: Kernel, direct: Kernel, seed: int = 5) -> list[TestRecord]:
    """The suite's cases through both paths, each path counted by its kernel."""
    records = []
    for family, rows, vocab, layout, frac, nans in _placed(seed):
        case_id = f"fp32-{family}-{layout}-{rows}x{vocab}-nan{frac}"
        for path, kernel in (("wrapper", wrapper), ("direct", direct)):
            counts = [_row(len(row), kernel(row, vocab)) for row in nans]
            records.append(case(family, case_id, (rows, vocab), counts, path))
    return records


def summary_md(records: Sequence[TestRecord], found: Sequence[Diagnosis]) -> str:
    """summary.md of a run with this diagnosis, read back from its results.json document as every reader does."""
    doc = document(records, {}, 1, collected=len(records), finished=True, ended="tests failed",
                   extra={"kernel": "k", "backend": "cpu", "diagnosis": [d.to_dict() for d in found]})
    return markdown.run_summary(Results.from_doc(json.loads(json.dumps(doc))))


BLOCKS = (512, 1024, 2048, 3000, 4096, 16384)
DESIGNS: dict[str, Callable[[int], tuple[Kernel, Kernel, dict[str, int]]]] = {
    # a split-row wrapper (its own chunk kernel, partial counts summed by torch) over a right anchor kernel
    "chunked wrapper": lambda b: (dropped(b), right, {"wrapper": b}),
    "one kernel, one block": lambda b: (dropped(b), dropped(b), {"wrapper": b, "direct": b}),
    "the wrapper's own block": lambda b: (dropped(b), dropped(8192), {"wrapper": b, "direct": 8192}),
    "masked lanes counted": lambda b: (masked(b), masked(b), {"wrapper": b, "direct": b}),
}


@pytest.mark.parametrize("design", DESIGNS)
@pytest.mark.parametrize("block", BLOCKS)
def test_the_block_is_read_from_the_shapes(block: int, design: str) -> None:
    wrapper, direct, blocks = DESIGNS[design](block)
    found = diagnose(run(wrapper, direct))
    first = found[0]
    assert (first.category, first.name.startswith(TAIL)) == ("traversal", True), [d.name for d in found]
    assert f"B={block}" in first.evidence or f"{block}-block too" in first.evidence, first.evidence
    assert dict(first.blocks) == blocks, first.evidence
    assert bool(first.demoted) == (design == "chunked wrapper")


def test_a_chunked_kernel_dropping_its_partial_chunk() -> None:
    """The issue's kernel: 2,048 columns a program, partial counts summed by torch, `vocab // CHUNK` chunks. A
    generated 1x2049 all-NaN row counts 2,048 (a value fp16 holds: a float accumulator's reading, on one check):
    it came first, the partial block second with "not a multiple of 8192", and the wrapper hint was not shown."""
    records = run(dropped(2048), right)
    row = list(range(2049))
    for path, got in (("wrapper", dropped(2048)(row, 2049)), ("direct", 2049)):
        records.append(case("generated", "gen-s7-fp32-1x2049-nan1.0", (1, 2049), [_row(2049, got)], path))
    found = diagnose(records)
    first = found[0]
    assert first.name.startswith(TAIL), [d.name for d in found]
    assert "rows whose vocab is not a multiple of B=2048 fail" in first.evidence, first.evidence
    assert dict(first.blocks) == {"wrapper": 2048}
    assert first.demoted and "not the kernel body" in first.demoted
    assert any(name.startswith("narrow or float accumulator") for name in first.absorbed), first.absorbed
    assert [d.name for d in found].count(first.name) == 1 and len(found) == 1, [d.name for d in found]
    html = diagnosis_block(found)
    summary = summary_md(records, found)
    for shown in (html, summary.replace("\\", "")):
        assert "not the kernel body" in shown and "block 2048 (wrapper path)" in shown, shown


def test_near_miss_every_vocab_fails_alike() -> None:
    """Rows short by a fixed share whatever their vocab (multiples too): no block to name, no partial-block item."""
    def share(nans: Sequence[int], vocab: int) -> int:
        return len(nans) * 3 // 4

    found = diagnose(run(share, share))
    assert all(not d.name.startswith(TAIL) for d in found), [(d.name, d.blocks) for d in found]


def test_near_miss_a_lone_vocab_names_no_masked_block() -> None:
    """One failing vocab over by one: any block of vocab + 1 would give that; no multiple passes to say which."""
    records = [case("shapes", f"fp32-shape-{r}x100", (r, 100), [_row(10, 11)] * r) for r in (2, 3)]
    assert all(not d.name.startswith(TAIL) for d in diagnose(records))


def one_past(block: int) -> Kernel:
    """A mask one lane too wide (`offs <= vocab`): a row off the block also counts the element after it, when that
    is a NaN (here: every third row's)."""
    return lambda nans, vocab: len(nans) + (vocab % block != 0 and len(nans) % 3 == 0)


def test_counts_that_name_no_block_claim_none() -> None:
    """Near miss for the block, not the class: rows over by one element fit many blocks (and masked lanes of a
    2-block); the first item is a traversal and no item claims a block."""
    found = diagnose(run(one_past(2048), right))
    assert found[0].category == "traversal" and all(d.blocks == () for d in found), [(d.name, d.blocks) for d in found]
    tail = next((d for d in found if d.name.startswith(TAIL)), None)
    assert tail is None or "the counts name no block" in tail.evidence


def test_garbage_counts_far_below_the_truth_name_no_block() -> None:
    """An unwritten row holds whatever was in memory: a count thousands below the truth beside one over by more than
    a lane must neither raise (it did: divisors of a negative number) nor claim a block."""
    records = [case("matrix", "fp32-matrix-prefix-2x5000-nan0.5", (2, 5000), [_row(2500, 2500), _row(2500, -7000)]),
               case("shapes", "fp32-shape-3x8193", (3, 8193), [_row(2048, 2053)] * 3)]
    found = diagnose(records)
    assert found and all(d.blocks == () for d in found), [(d.name, d.blocks) for d in found]
