"""The per-request aggregation of newer upstream vLLM, as a second kernel under the same harness, where the module
under test has it: `aggregate_num_nans_per_request(num_nans, cumulative_row_ends)` compared exactly on every case."""
from __future__ import annotations

import pytest
import torch

from cases.aggregate import AGGREGATE_CASES, AggregateCase, build_aggregate
from harness import skips
from harness.fixtures import CheckCounts
from harness.target import KernelUnderTest
from reference.aggregate import aggregate_reference
from verdict.problem import INPUT_MODIFIED, Problem
from verdict.record import CaseParams

pytestmark = pytest.mark.nan_aggregate


@pytest.mark.parametrize("case", AGGREGATE_CASES, ids=str)
def test_aggregate_per_request(case: AggregateCase, target: KernelUnderTest, device: str,
                               check_counts: CheckCounts, request: pytest.FixtureRequest) -> None:
    aggregate = target.aggregate
    if aggregate is None:
        skips.skip(request.node, skips.aggregate(target.module_name))
    inputs = build_aggregate(case, device)
    host_counts, host_ends = inputs.num_nans.cpu().clone(), inputs.cumulative_row_ends.cpu().clone()
    expected = aggregate_reference(host_counts, host_ends)
    got = aggregate(inputs.num_nans, inputs.cumulative_row_ends)
    changed = not torch.equal(inputs.num_nans.cpu(), host_counts)
    effects = [Problem(INPUT_MODIFIED, "num_nans was modified")] if changed else []
    params = CaseParams("aggregate", str(case), "int32", case.layout, (int(host_counts.numel()), case.requests),
                        f"ends {case.ends_dtype}", case.seed)
    check_counts(got, expected, params, "wrapper", [f"request {i}" for i in range(case.requests)], effects)
