"""Issue 18's evidence: the accelerator-semantics tests catch or report each planted variant as designed, and pass
our kernel, the independent design and a torch-only fallback (accelerators only)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.subrun import SubRun, run_pytest

pytestmark = pytest.mark.nan_selftest
SEMANTICS = "tests/precision/test_execution_semantics.py"
CONTROL = "tests/precision/test_families.py::test_case[fp32-special-2x1024-wrapper]"  # read after a synchronize
NON_DEFAULT = "test_counts_follow_the_callers_stream[non-default]"


def _run(tmp_path: Path, kernel: str, device: str, *extra: str) -> SubRun:
    if device == "cpu":
        pytest.skip("stream order, cards and graphs exist only on an accelerator")
    return run_pytest(tmp_path, [SEMANTICS, CONTROL, "--kernel", kernel, *extra], device=device)


def _verdicts(run: SubRun) -> dict[str, str]:
    return {r.id: r.verdict for r in run.records}


@pytest.mark.parametrize("kernel", ["kernel", "tests.designs.independent", "tests.semantics.torch_fallback"])
def test_correct_kernels_pass_and_capture(tmp_path: Path, device: str, kernel: str) -> None:
    run = _run(tmp_path, kernel, device)
    assert run.returncode == 0 and run.doc["finished"], run.describe()
    assert run.doc["capturable"] == {"capturable": True, "why": ""}, run.doc.get("capturable")
    assert run.doc["environment"]["Capturable"] == "yes"


def test_a_side_stream_without_waits_is_wrong_counts(tmp_path: Path, device: str) -> None:
    """Under a non-default current stream (as vLLM runs) its counts are wrong; on the legacy default stream CUDA
    itself orders blocking streams around it, so there it is right (measured on an H200)."""
    run = _run(tmp_path, "tests.semantics.side_stream", device)
    assert _verdicts(run)[NON_DEFAULT] == "wrong_counts", run.describe()
    assert run.doc["diagnosis"][0]["name"].startswith("stream order"), run.doc["diagnosis"]


def test_a_host_sync_is_reported_not_capturable(tmp_path: Path, device: str) -> None:
    run = _run(tmp_path, "tests.semantics.host_sync", device)
    assert run.returncode == 0, run.describe()  # eager it is right: not capturable is a property, not a failure
    assert run.doc["capturable"]["capturable"] is False and run.doc["capturable"]["why"], run.doc["capturable"]
    assert run.doc["environment"]["Capturable"].startswith("no (")
    strict = _run(tmp_path / "strict", "tests.semantics.host_sync", device, "--require-capturable")
    assert _verdicts(strict)["test_graph_capture_replays_new_counts"] == "error", strict.describe()


def test_a_capture_that_replays_stale_counts_fails(tmp_path: Path, device: str) -> None:
    """Counts cached by the input's address: the captured call launches nothing, the replay counts nothing new."""
    run = _run(tmp_path, "tests.planted.cache_by_address", device)
    assert _verdicts(run)["test_graph_capture_replays_new_counts"] == "wrong_counts", run.describe()
    assert run.doc["diagnosis"][0]["name"].startswith("graph replay"), run.doc["diagnosis"]
