"""Large batches through the wrapper (cases/batches.py): a launch that caps its grid, splits a batch and drops the
remainder, or stops at an index miscounts every row from there on, whatever the rows hold."""
from __future__ import annotations

import pytest

from cases import batches
from harness import skips
from harness.fixtures import LaunchAndCheck

LARGE_BATCHES = "--nan-large-batches"


@pytest.mark.nan_batches
@pytest.mark.parametrize("case", batches.CASES, ids=str)
def test_large_batch(case: batches.BatchCase, device: str, launch: LaunchAndCheck,
                     request: pytest.FixtureRequest) -> None:
    if device == "cpu" and not request.config.getoption(LARGE_BATCHES):
        skips.skip(request.node, skips.large_batches())
    built = batches.build(case)
    launch("wrapper", built.input_on(device), built.expected, batches.params(case), built.labels)
