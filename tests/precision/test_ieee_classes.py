"""IEEE classes from raw bits: one class and sign per row (a wrong row names its class), and mixed rows."""
from __future__ import annotations

import pytest

from cases.build_conformance import build_ieee
from cases.conformance import IEEE_CASES
from cases.records import IeeeCase
from harness.plugin import CaseInfo
from harness.target import PATHS
from reference import bits_reference

pytestmark = pytest.mark.nan_ieee


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", IEEE_CASES, ids=str)
def test_ieee_classes(case: IeeeCase, path: str, device: str, run_case) -> None:  # type: ignore[no-untyped-def]
    host, labels = build_ieee(case)
    info = CaseInfo(str(case), "ieee", case.dtype, case.arrangement, tuple(host.shape), case.arrangement, path, case.seed)
    run_case(path, host.to(device), bits_reference(host), info, row_labels=labels)
