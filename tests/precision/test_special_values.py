"""The anchor's special values per dtype, built from raw bits: only the 37 injected NaNs count."""
from __future__ import annotations

import pytest

from cases.anchor import SPECIALS
from cases.build import build_special
from cases.records import SpecialCase
from harness.plugin import CaseInfo
from harness.target import PATHS
from reference import expected_counts

pytestmark = pytest.mark.nan_special


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", SPECIALS, ids=str)
def test_special_values(case: SpecialCase, path: str, device: str, run_case) -> None:  # type: ignore[no-untyped-def]
    host = build_special(case)
    expected = expected_counts(host)
    assert expected.tolist() == [0, case.nans], "special-value rows were built wrong"
    info = CaseInfo(str(case), "special", case.dtype, "special", (case.rows, case.vocab), "special", path, case.seed)
    run_case(path, host.to(device), expected, info)
