"""The anchor's 120-case matrix, through the wrapper and through a direct launch of the kernel."""
from __future__ import annotations

import pytest

from cases.anchor import MATRIX
from cases.build import build_matrix
from cases.records import MatrixCase
from harness.plugin import CaseInfo
from harness.target import PATHS
from reference import expected_counts

pytestmark = pytest.mark.nan_matrix


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", MATRIX, ids=str)
def test_matrix(case: MatrixCase, path: str, device: str, run_case) -> None:  # type: ignore[no-untyped-def]
    host = build_matrix(case)
    info = CaseInfo(str(case), "matrix", case.dtype, case.layout, (case.rows, case.vocab), f"{case.frac}", path, case.seed)
    run_case(path, host.to(device), expected_counts(host), info)
