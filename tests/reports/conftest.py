"""Fixtures shared by the report tests."""
from __future__ import annotations

import pytest


@pytest.fixture
def cpu_subruns(device: str) -> None:
    """The report tests drive sub-runs on the CPU interpreter; on an accelerator the main run's report covers it."""
    if device != "cpu":
        pytest.skip("report sub-runs use --device cpu: run tests/reports with --device cpu")
