"""A kernel that faults or crashes shows up as failed cases with their ids; the run and its report survive."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.activation import IN_PROCESS_CALLER
from harness.isolation import is_fatal_device_error
from tests.support.limits import hang_limit
from tests.support.subrun import SubRun, run_suite

pytestmark = pytest.mark.nan_harness

# the faulting case first (matrix order), then four cases that must still run
SELECT = "fp32-prefix and wrapper and (2x5000-nan0.5 or 4x8192)"
FAULTING = "fp32-prefix-2x5000-nan0.5"


def run(kernel: str, device: str, tmp_path: Path, workers: int, *extra: str) -> SubRun:
    return run_suite(f"tests.harness.fixtures.{kernel}", SELECT, tmp_path, workers=workers, device=device,
                     extra=extra)


@pytest.mark.parametrize("kernel", ["faulting_kernel", "segfault_kernel"])
def test_crash_is_a_failed_case_and_the_run_goes_on(kernel: str, device: str, tmp_path: Path) -> None:
    result = run(kernel, device, tmp_path, workers=1)
    assert result.completed and result.returncode == 1, result.describe()
    assert result.failed and all(FAULTING in n for n in result.failed), result.describe()
    assert sum("4x8192" in n for n in result.passed) == 4, result.describe()  # ran after the crash
    assert result.json_path.is_file()
    faulted = result.record(result.failed[0])
    expected = "device_fault" if kernel == "faulting_kernel" else "crash"
    assert faulted.verdict == expected, result.describe()
    if kernel == "faulting_kernel":
        assert "illegal memory access" in faulted.message, faulted.message
        assert result.output.count("FAILED tests/precision") == 1, result.output  # listed once, with its cause


def test_hanging_kernel_is_a_failed_case(device: str, tmp_path: Path) -> None:
    """pytest-timeout (tox passes --timeout) ends the hung worker; xdist blames the case and goes on."""
    pytest.importorskip("pytest_timeout")
    # pytest-timeout's limit is per case: the slowest passing case of SELECT took 0.11 s beside a tox run
    limit = hang_limit(slowest_s=0.11)
    result = run("hanging_kernel", device, tmp_path, 1, f"--timeout={limit:.0f}", "--timeout-method=thread")
    assert result.completed and result.returncode == 1, result.describe()
    assert result.failed and all(FAULTING in n for n in result.failed), result.describe()
    assert sum("4x8192" in n for n in result.passed) == 4, result.describe()
    assert result.record(result.failed[0]).verdict == "timeout", result.describe()


@pytest.mark.parametrize("kernel", ["faulting_kernel", "segfault_kernel"])
def test_plain_run_isolates_the_fault_in_its_worker(kernel: str, device: str, tmp_path: Path) -> None:
    """Without -n the kernel still runs in one xdist worker: a fault ends that worker, never the run."""
    result = run(kernel, device, tmp_path, workers=0)
    assert result.completed and result.returncode == 1, result.describe()
    assert result.failed and all(FAULTING in n for n in result.failed), result.describe()
    assert sum("4x8192" in n for n in result.passed) == 4, result.describe()


@pytest.mark.parametrize(
    "message, fatal",
    [
        ("CUDA error: an illegal memory access was encountered", True),
        ("RuntimeError: ACL stream synchronize failed, error code:507015", True),
        ("EZ9999: Inner Error! The aicore execution is abnormal", True),
        ("get_num_nans expects 2-D logits", False),
        ("triton compilation failed", False),
    ],
)
def test_fatal_error_detection(message: str, fatal: bool) -> None:
    assert is_fatal_device_error(RuntimeError(message)) is fatal


def test_in_process_run_judges_as_an_isolated_one(device: str, tmp_path: Path) -> None:
    """--nan-in-process (mutate's warm workers) runs the same tests with the same outcomes, in one process."""
    select = "fp32-prefix and wrapper and (2x5000 or 1x128)"
    kernel = "tests.planted.mask_off_by_one"
    isolated = run_suite(kernel, select, tmp_path / "isolated", workers=1, device=device)
    inside = run_suite(kernel, select, tmp_path / "inside", device=device, extra=("--nan-in-process",),
                       env={IN_PROCESS_CALLER: "this test"})
    assert isolated.completed and inside.completed, inside.describe()
    assert isolated.failed and inside.outcomes == isolated.outcomes, inside.describe()
    assert "bringing up nodes" in isolated.output and "bringing up nodes" not in inside.output, inside.output


def test_in_process_refuses_workers(device: str, tmp_path: Path) -> None:
    result = run_suite("kernel", "1x128", tmp_path, workers=2, device=device, extra=("--nan-in-process",),
                       env={IN_PROCESS_CALLER: "this test"})
    assert result.returncode == 4 and "--nan-in-process runs every test in this process: drop -n" in result.output


def test_in_process_needs_a_caller_that_isolates_it(device: str, tmp_path: Path) -> None:
    """A user passing --nan-in-process for speed gets a usage error: a kernel calling os._exit(0) would be green."""
    result = run_suite("tests.hostile.exits_zero", "1x128", tmp_path, device=device, extra=("--nan-in-process",))
    assert result.returncode == 4 and f"sets {IN_PROCESS_CALLER}" in result.output, result.output


def test_a_plain_run_survives_more_crashes_than_xdist_allows_by_default(device: str, tmp_path: Path) -> None:
    """Six cases crash one after the other (5000-wide matrix cases of 3 dtypes); xdist's default would stop a
    one-worker run after the fifth (4 restarts), leaving the run INCOMPLETE: the harness's crash budget lets it
    finish."""
    result = run_suite("tests.harness.fixtures.segfault_kernel", "prefix and 2x5000 and (nan0.5 or nan1.0)", tmp_path,
                       device=device)
    crashed = [n for n in result.failed if "2x5000" in n]
    assert result.completed and result.doc.get("finished") is True, result.describe()
    assert len(crashed) == 6, result.describe()
    assert all(result.record(n).verdict == "crash" for n in crashed), result.describe()
