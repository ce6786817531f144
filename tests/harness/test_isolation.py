"""A kernel that faults or crashes shows up as failed cases with their ids; the run and its report survive."""
from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from harness.isolation import is_fatal_device_error

pytestmark = pytest.mark.nan_harness

ROOT = Path(__file__).resolve().parents[2]


def run_suite(kernel: str, device: str, tmp_path: Path, *extra: str) -> tuple[int, list[tuple[str, str]], str]:
    """Run five fp32 matrix cases against `kernel`, the faulting one first; return exit code, outcomes in order."""
    junit = tmp_path / "junit.xml"
    cmd = [
        sys.executable, "-m", "pytest", "tests/precision/test_matrix.py", "--device", device, "--kernel", kernel,
        "-k", "fp32-prefix and wrapper and (2x5000-nan0.5 or 4x8192)", "-p", "no:cacheprovider", "-p", "no:randomly",
        f"--junitxml={junit}", f"--html={tmp_path / 'report.html'}", *extra,
    ]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=300)
    outcomes: list[tuple[str, str]] = []
    if junit.exists():
        for case in ET.parse(junit).getroot().iter("testcase"):
            failed = case.find("failure") is not None or case.find("error") is not None
            outcomes.append((case.get("name", ""), "failed" if failed else "passed"))
    return proc.returncode, outcomes, proc.stdout + proc.stderr


@pytest.mark.parametrize("kernel", ["tests.harness.fixtures.faulting_kernel", "tests.harness.fixtures.segfault_kernel"])
def test_crash_is_a_failed_case_and_the_run_goes_on(kernel: str, device: str, tmp_path: Path) -> None:
    code, outcomes, output = run_suite(kernel, device, tmp_path, "-n", "1")
    assert code == 1, output
    failed = {n for n, o in outcomes if o == "failed"}
    assert failed and all("fp32-prefix-2x5000-nan0.5" in n for n in failed), output
    assert sum(o == "passed" and "4x8192" in n for n, o in outcomes) == 4, output  # ran after the crash
    assert (tmp_path / "report.html").exists()


def test_serial_run_stops_cleanly_after_a_device_fault(device: str, tmp_path: Path) -> None:
    code, outcomes, output = run_suite("tests.harness.fixtures.faulting_kernel", device, tmp_path)
    assert code == 1 and "device context is lost" in output, output
    assert [o for n, o in outcomes] == ["failed"], output  # stopped at the fault, nothing after it ran
    assert (tmp_path / "report.html").exists()


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
