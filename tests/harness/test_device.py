"""The backend table: an unknown backend is an error, and xdist workers spread over the cards of a node."""
from __future__ import annotations

import pytest

from harness import backends

pytestmark = pytest.mark.nan_harness


@pytest.mark.parametrize(
    "worker, count, card",
    [("gw0", 8, 0), ("gw7", 8, 7), ("gw9", 8, 1), ("gw3", 2, 1), (None, 8, None), ("master", 8, None), ("gw1", 0, None)],
)
def test_worker_card(worker: str | None, count: int, card: int | None) -> None:
    assert backends.worker_card(worker, count) == card


def test_this_worker_runs_on_its_card(backend: backends.Backend, request: pytest.FixtureRequest) -> None:
    worker = getattr(request.config, "workerinput", {}).get("workerid")
    expected = backends.worker_card(worker, backend.card_count())
    if expected is None:
        pytest.skip("not an xdist worker on an accelerator backend")
    assert backend.current_card() == expected


def test_unknown_or_missing_backend_is_refused() -> None:
    with pytest.raises(RuntimeError, match="choose one of"):
        backends.resolve("tpu")
    with pytest.raises(RuntimeError, match="choose one of"):
        backends.get("rocm")
    if backends.BACKENDS["npu"].available():
        pytest.skip("this machine has an NPU")
    with pytest.raises(RuntimeError, match="not available"):
        backends.resolve("npu")


def test_every_backend_is_fully_described() -> None:
    for b in backends.BACKENDS.values():
        assert b.torch_type and b.description and b.batch_rows > 0
        assert b.interpreted or (b.visibility_var and b.fault_markers), b.name
    assert backends.BACKENDS["cuda"].is_fault("CUDA error: an illegal memory access was encountered")
    assert not backends.BACKENDS["cpu"].is_fault("CUDA error: an illegal memory access was encountered")
