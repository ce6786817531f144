"""The anchor's special values per dtype, built from raw bits: only the 37 injected NaNs count."""
from __future__ import annotations

import pytest

from cases.anchor import SPECIALS
from cases.build import build_special
from cases.records import SpecialCase
from harness.plugin import CaseInfo, Checker
from harness.target import PATHS, KernelUnderTest
from reference import expected_counts
from tests.precision.test_matrix import launch

pytestmark = pytest.mark.nan_special


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", SPECIALS, ids=str)
def test_special_values(case: SpecialCase, path: str, target: KernelUnderTest, device: str, check: Checker) -> None:
    host = build_special(case)
    expected = expected_counts(host)
    assert expected.tolist() == [0, case.nans], "special-value rows were built wrong"
    got = launch(target, path, host.to(device))
    info = CaseInfo(str(case), "special", case.dtype, "special", (case.rows, case.vocab), "special", path, case.seed)
    check(got, expected, info)
