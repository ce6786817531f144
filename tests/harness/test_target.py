"""--kernel loading: the API is checked, and a missing or foreign kernel skips direct cases with a reason."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.target import ANCHOR_SIGNATURE, load

pytestmark = pytest.mark.nan_harness

ROOT = Path(__file__).resolve().parents[2]


def test_our_kernel_has_the_anchor_signature() -> None:
    target = load("kernel")
    assert target.kernel is not None and target.kernel_skip_reason is None
    assert target.predicate_source in {"portable", "cann", "ascend", "cuda"}


def test_wrapper_only_module_skips_direct_launches() -> None:
    target = load("tests.harness.fixtures.wrapper_only")
    assert target.kernel is None and "exposes no _num_nans_kernel" in (target.kernel_skip_reason or "")


def test_foreign_signature_skips_direct_launches() -> None:
    target = load("tests.harness.fixtures.renamed_kernel")
    assert target.kernel is None
    assert str(ANCHOR_SIGNATURE) in (target.kernel_skip_reason or "")


def test_module_without_wrapper_is_refused() -> None:
    with pytest.raises(AttributeError, match="get_num_nans"):
        load("tests.harness.fixtures.no_wrapper")


@pytest.mark.parametrize(
    "kernel, expect",
    [("no.such.module", "No module named"), ("tests.harness.fixtures.no_wrapper", "get_num_nans")],
)
def test_bad_kernel_option_is_a_usage_error(kernel: str, expect: str, device: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [*pytest_cmd(device, kernel, tmp_path), "--co", "-q"], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 4 and expect in proc.stderr, proc.stdout + proc.stderr


def test_skipped_direct_cases_say_why(device: str, tmp_path: Path) -> None:
    cmd = [*pytest_cmd(device, "tests.harness.fixtures.wrapper_only", tmp_path), "-k", "fp32-prefix-1x128", "-rs"]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 passed, 4 skipped" in proc.stdout and "exposes no _num_nans_kernel" in proc.stdout


def pytest_cmd(device: str, kernel: str, tmp_path: Path) -> list[str]:
    """A sub-run of the matrix whose reports all go to tmp_path, never into reports/."""
    return [
        sys.executable, "-m", "pytest", "tests/precision/test_matrix.py", "--device", device, "--kernel", kernel,
        "-p", "no:cacheprovider", f"--html={tmp_path / 'r.html'}", f"--junitxml={tmp_path / 'j.xml'}",
        f"--nan-json={tmp_path / 'r.json'}",
    ]
