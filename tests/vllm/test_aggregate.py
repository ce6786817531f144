"""The per-request aggregation reference on hand-computed examples (each example shown to catch a planted wrong
aggregator), and the case builders: deterministic, private RNG, explicit dtypes, the layout each id promises."""
from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from cases.aggregate import AGGREGATE_CASES, INT32_MAX, AggregateCase, build_aggregate
from reference.aggregate import aggregate_reference, exact_request_sums

pytestmark = pytest.mark.nan_reference

I32 = torch.int32

# (counts, ends, expected): worked by hand.
EXAMPLES: tuple[tuple[list[int], list[int], list[int]], ...] = (
    ([1, 2, 3, 4, 5], [2, 3, 5], [3, 3, 9]),  # ragged: rows 0-1, 2, 3-4
    ([1, 2, 3], [2, 2, 3], [3, 0, 3]),  # an empty request in the middle
    ([7, 0, 5], [0, 0, 3], [0, 0, 12]),  # empty requests first
    ([4, 4, 4, 4], [4], [16]),  # a single request owning every row
    ([9], [1], [9]),  # one row, one request
    ([], [], []),  # no requests
    ([1 << 30, (1 << 30) - 1, INT32_MAX, 1], [2, 3, 4], [INT32_MAX, INT32_MAX, 1]),  # running total past 2^32
)


def _tensors(counts: list[int], ends: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.tensor(counts, dtype=I32), torch.tensor(ends, dtype=I32)


@pytest.mark.parametrize("counts, ends, expected", EXAMPLES, ids=[str(e[1]) for e in EXAMPLES])
def test_reference_on_hand_computed_examples(counts: list[int], ends: list[int], expected: list[int]) -> None:
    got = aggregate_reference(*_tensors(counts, ends))
    assert got.dtype == I32 and got.device.type == "cpu" and got.shape == (len(ends),)
    assert got.tolist() == expected


def test_reference_takes_int64_ends_and_keeps_the_counts_dtype() -> None:
    got = aggregate_reference(torch.tensor([1, 2, 3, 4, 5], dtype=I32), torch.tensor([2, 3, 5], dtype=torch.int64))
    assert got.dtype == I32 and got.tolist() == [3, 3, 9]


def _prefix_from_request_zero(counts: list[int], ends: list[int]) -> list[int]:
    """Planted: every request summed from row 0 (cumulative, not per request)."""
    return [sum(counts[:end]) for end in ends]


def _empty_gets_a_row(counts: list[int], ends: list[int]) -> list[int]:
    """Planted: a loop that runs at least once, so an empty request reads the row at its start."""
    out, start = [], 0
    for end in ends:
        out.append(sum(counts[start : max(end, start + 1)]))
        start = end
    return out


def _last_to_end_of_rows(counts: list[int], ends: list[int]) -> list[int]:
    """Planted: the last request runs to the end of num_nans and the first start is 1 (off by one)."""
    starts = [1] + ends[:-1]
    return [sum(counts[s:e]) for s, e in zip(starts, ends[:-1] + [len(counts)])]


def _fp32_accumulator(counts: list[int], ends: list[int]) -> list[int]:
    """Planted: sums in float32, which cannot hold 2^31 - 1."""
    out, start = [], 0
    for end in ends:
        out.append(int(torch.tensor(counts[start:end], dtype=torch.float32).sum().item()) if end > start else 0)
        start = end
    return out


PLANTED = (_prefix_from_request_zero, _empty_gets_a_row, _last_to_end_of_rows, _fp32_accumulator)


@pytest.mark.parametrize("planted", PLANTED, ids=lambda f: f.__name__)
def test_examples_catch_a_planted_aggregator(planted: Callable[[list[int], list[int]], list[int]]) -> None:
    wrong = [ends for counts, ends, expected in EXAMPLES if planted(counts, ends) != expected]
    assert wrong, f"no example tells {planted.__name__} from the reference"


@pytest.mark.parametrize(
    "counts, ends, message",
    [
        ([1, 2, 3], [2, 1, 3], r"cumulative_row_ends\[1\] = 1 is below the previous end 2"),
        ([1, 2, 3], [-1, 3], r"cumulative_row_ends\[0\] = -1 is below the previous end 0"),
        ([1, 2, 3], [2, 4], "ends at row 4, past the 3 rows"),
    ],
)
def test_reference_refuses_malformed_ends(counts: list[int], ends: list[int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        aggregate_reference(*_tensors(counts, ends))


def test_reference_refuses_2d_inputs() -> None:
    with pytest.raises(ValueError, match="expected 1-D"):
        aggregate_reference(torch.zeros(2, 2, dtype=I32), torch.tensor([1, 2], dtype=I32))


def test_reference_says_when_a_total_does_not_fit_int32() -> None:
    counts, ends = _tensors([INT32_MAX, 1, 5], [2, 3])
    assert exact_request_sums(counts, ends) == [INT32_MAX + 1, 5]
    with pytest.raises(OverflowError, match="request 0 sums to 2147483648"):
        aggregate_reference(counts, ends)


def test_case_ids_are_unique() -> None:
    ids = [str(case) for case in AGGREGATE_CASES]
    assert len(set(ids)) == len(ids)
    assert {case.layout for case in AGGREGATE_CASES} == {"ragged", "empty", "single", "summed", "int32", "none"}


@pytest.mark.parametrize("case", AGGREGATE_CASES, ids=str)
def test_builder_is_deterministic_and_leaves_global_rng_alone(case: AggregateCase) -> None:
    state = torch.get_rng_state()
    first, second = build_aggregate(case), build_aggregate(case)
    assert torch.equal(torch.get_rng_state(), state)
    assert torch.equal(first.num_nans, second.num_nans)
    assert torch.equal(first.cumulative_row_ends, second.cumulative_row_ends)
    assert first.num_nans.dtype == I32 and str(first.cumulative_row_ends.dtype) == f"torch.{case.ends_dtype}"
    assert first.num_nans.device.type == "cpu"


@pytest.mark.parametrize("case", AGGREGATE_CASES, ids=str)
def test_built_case_has_its_layout(case: AggregateCase) -> None:
    inputs = build_aggregate(case)
    ends = inputs.cumulative_row_ends.tolist()
    rows = [end - start for start, end in zip([0] + ends[:-1], ends)]
    assert len(ends) == case.requests and (not ends or ends[-1] == inputs.num_nans.numel())
    assert all(r >= 0 for r in rows) and bool((inputs.num_nans >= 0).all())
    if case.layout == "empty":
        assert rows[0] == 0 and rows[-1] == 0 and 0 in rows[1:-1] and any(r > 0 for r in rows)
    if case.layout == "summed":
        assert rows == [case.max_rows] * case.requests and case.max_rows > 1
    if case.layout == "ragged":
        assert len(set(rows)) > 1 and min(rows) >= 1
    sums = exact_request_sums(inputs.num_nans, inputs.cumulative_row_ends)
    if case.layout == "int32":
        assert sums.count(INT32_MAX) == 4 and sum(sums) > 2 * INT32_MAX
    # an independent route to the same totals: int64 prefix sums
    prefix = torch.cat([torch.zeros(1, dtype=torch.int64), inputs.num_nans.to(torch.int64).cumsum(0)])
    starts = torch.cat([torch.zeros(1, dtype=torch.int64), inputs.cumulative_row_ends.to(torch.int64)[:-1]])
    ends64 = inputs.cumulative_row_ends.to(torch.int64)
    assert sums == (prefix[ends64] - prefix[starts]).tolist()[: len(ends)]
    assert aggregate_reference(inputs.num_nans, inputs.cumulative_row_ends).tolist() == sums


def test_builder_places_tensors_on_the_device_asked(device: str) -> None:
    inputs = build_aggregate(AGGREGATE_CASES[0], device)
    assert inputs.num_nans.device.type == device and inputs.cumulative_row_ends.device.type == device
