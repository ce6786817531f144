"""The anchor's 120-case matrix, through the wrapper and through a direct launch of the kernel."""
from __future__ import annotations

import pytest
import torch

from cases.anchor import MATRIX
from cases.build import build_matrix
from cases.records import MatrixCase
from harness.plugin import CaseInfo, Checker
from harness.target import PATHS, KernelUnderTest, run_direct, run_wrapper
from reference import expected_counts

pytestmark = pytest.mark.nan_matrix


def launch(target: KernelUnderTest, path: str, logits: torch.Tensor) -> torch.Tensor:
    """Run one path; the direct path's guard slots are checked by the contract tests."""
    if path == "wrapper":
        return run_wrapper(target, logits)
    if target.kernel is None:
        pytest.skip(target.kernel_skip_reason or "no _num_nans_kernel")
    return run_direct(target, logits).counts


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", MATRIX, ids=str)
def test_matrix(case: MatrixCase, path: str, target: KernelUnderTest, device: str, check: Checker) -> None:
    host = build_matrix(case)
    expected = expected_counts(host)
    got = launch(target, path, host.to(device))
    info = CaseInfo(str(case), "matrix", case.dtype, case.layout, (case.rows, case.vocab), f"{case.frac}", path, case.seed)
    check(got, expected, info)
