"""The comparison catches every way a count tensor can be wrong, and says which rows."""
from __future__ import annotations

import pytest
import torch

from harness.compare import assert_check as assert_comparison
from harness.compare import compare_counts, message
from verdict.record import CaseParams

PARAMS = CaseParams("matrix", "fp16-x-3x8-nan0.5", "fp16", "prefix", (3, 8), "0.5", 42)

pytestmark = pytest.mark.nan_harness

EXPECTED = torch.tensor([0, 37, 5], dtype=torch.int32)


def _cmp(got: object):  # type: ignore[no-untyped-def]
    return compare_counts(got, EXPECTED, params=PARAMS, path="wrapper", device_type="cpu")


def test_equal_passes() -> None:
    result = _cmp(EXPECTED.clone())
    assert result.ok
    assert_comparison(result)


@pytest.mark.parametrize(
    "got, problem",
    [
        (EXPECTED.to(torch.int64), "dtype"),
        (EXPECTED.reshape(3, 1), "shape"),
        (EXPECTED.to(torch.float32), "dtype"),
        (EXPECTED[:2], "shape"),
        ([0, 37, 5], "not a tensor"),
    ],
    ids=["int64", "2d", "float", "short", "list"],
)
def test_malformed_results_fail(got: object, problem: str) -> None:
    result = _cmp(got)
    assert not result.ok
    with pytest.raises(AssertionError, match=problem):
        assert_comparison(result)


def test_device_mismatch_fails() -> None:
    result = compare_counts(EXPECTED.clone(), EXPECTED, params=PARAMS, path="wrapper", device_type="cuda")
    assert not result.ok and "device" in message(result) and result.verdict == "side_effect"


def test_meta_output_is_reported_not_raised() -> None:
    result = _cmp(torch.empty(3, dtype=torch.int32, device="meta"))
    assert not result.ok and "meta" in message(result)


def test_wrong_rows_are_listed_with_case_and_seed() -> None:
    result = _cmp(torch.tensor([0, 1, 6], dtype=torch.int32))
    msg = message(result)
    assert result.verdict == "wrong_counts"
    assert [w.row for w in result.wrong_rows] == [1, 2]
    assert "row 1: expected 37, got 1" in msg and "row 2: expected 5, got 6" in msg
    assert "fp16-x-3x8-nan0.5" in msg and "seed 42" in msg
    assert result.expected_total == 42 and result.got_total == 7


@pytest.mark.parametrize("raised", [torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 MiB"),
                                    MemoryError(), ValueError("vocab must be even")])
def test_a_failed_allocation_is_recorded_as_data(raised: BaseException) -> None:
    """The allocator's error on in-domain input stays a failure, with OUT_OF_MEMORY beside it (the diagnosis reads
    the kind, never the words); any other exception is a plain refusal."""
    from harness.compare import failed_launch
    from harness.guard import KernelRaised
    from verdict.problem import OUT_OF_MEMORY

    check = failed_launch(KernelRaised(raised), PARAMS, "wrapper", torch.zeros(3, dtype=torch.int32),
                          torch.zeros(3, 8), None)
    memory = isinstance(raised, (torch.OutOfMemoryError, MemoryError))
    assert check.verdict == "refused" and not check.ok
    assert [p.kind for p in check.problems] == ([OUT_OF_MEMORY] if memory else [])
