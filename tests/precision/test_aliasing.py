"""Two calls, two outputs: get_num_nans never hands back a buffer that a later call writes again."""
from __future__ import annotations

import pytest
import torch

from harness.plugin import CaseInfo, Checker
from harness.target import KernelUnderTest
from reference import expected_counts
from tests.precision.test_wrapper_contract import nan_rows

pytestmark = pytest.mark.nan_contract


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["fp32", "bf16"])
def test_outputs_not_reused_across_calls(
    dtype: torch.dtype, target: KernelUnderTest, device: str, check: Checker
) -> None:
    """The first call's counts must survive a second call of the same shape (a cached output would not)."""
    first_host = nan_rows(4, 3000, dtype, seed=11)
    second_host = torch.zeros(4, 3000, dtype=dtype)  # no NaNs: a shared buffer would read all zeros
    first = target.get_num_nans(first_host.to(device))
    second = target.get_num_nans(second_host.to(device))
    assert isinstance(first, torch.Tensor) and isinstance(second, torch.Tensor)
    shared = first.untyped_storage().data_ptr() == second.untyped_storage().data_ptr()
    assert not shared, "get_num_nans returned the same output buffer for two calls"
    assert torch.equal(second.cpu(), expected_counts(second_host)), "second call counted wrong"
    name = str(dtype).removeprefix("torch.").replace("float32", "fp32").replace("bfloat16", "bf16")
    info = CaseInfo(f"{name}-two-calls-4x3000", "contract", name, "random", (4, 3000), "0.33", "wrapper", 11)
    check(first, expected_counts(first_host), info)
