"""Backend choice and the spread of xdist workers over the cards of a node."""
from __future__ import annotations

import pytest

from harness import device as backend

pytestmark = pytest.mark.nan_harness


@pytest.mark.parametrize(
    "worker, count, card",
    [("gw0", 8, 0), ("gw7", 8, 7), ("gw9", 8, 1), ("gw3", 2, 1), (None, 8, None), ("master", 8, None), ("gw1", 0, None)],
)
def test_worker_card(worker: str | None, count: int, card: int | None) -> None:
    assert backend.worker_card(worker, count) == card


def test_this_worker_runs_on_its_card(device: str, request: pytest.FixtureRequest) -> None:
    worker = getattr(request.config, "workerinput", {}).get("workerid")
    expected = backend.worker_card(worker, backend.card_count(device))
    if expected is None:
        pytest.skip("not an xdist worker on an accelerator backend")
    assert backend.current_card(device) == expected


def test_unknown_or_missing_backend_is_refused() -> None:
    with pytest.raises(RuntimeError, match="choose one of"):
        backend.resolve("tpu")
    if backend.npu_available():
        pytest.skip("this machine has an NPU")
    with pytest.raises(RuntimeError, match="torch_npu"):
        backend.resolve("npu")
