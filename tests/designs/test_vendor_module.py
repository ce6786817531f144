"""vllm-ascend's module as a kernel team ships it (tests/designs/vendor/num_nans.py: CANN's libdevice and vLLM's
triton_utils imported as shipped), judged through the interpreter of the env this runs in (upstream Triton's in
selftest, triton-ascend's in ascend-cpu) with setups.vendor_interpreter standing in for both imports.

The correct module passes; a copy with its mask one column short fails on both interpreters; a copy that sums
isnan's int1 flags unwidened fails on triton-ascend's (upstream Triton widens an int1 sum: there it passes, not
judged). Without the setup the run ends ENVIRONMENT on the missing CANN package, as it did before the setup existed.
One slice of the anchor's matrix (fp32, NaNs at the head of a row: 1x128 and 2x5000, 16 tests, about a second a
sub-run) catches both plants and its diagnosis tells them apart (1x128 alone reads 127 of 128 as a 7-bit counter).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.backends import triton_flavour
from harness.environment_failures import ENVIRONMENT_EXIT
from tests.support.forkserver import ForkServer
from tests.support.subrun import SubRun, run_suite
from verdict.record import WRONG_COUNTS

pytestmark = pytest.mark.nan_selftest

FOLDER = Path(__file__).resolve().parent / "vendor"
SETUP = "setups.vendor_interpreter:install"
SELECT = "fp32-prefix-1x128 or fp32-prefix-2x5000"
ASCEND = triton_flavour().startswith("triton-ascend")


@dataclass(frozen=True)
class Shipped:
    """A module of the shipped shape and what the suite must say of it here: the failing cases' NaN fraction
    (None: it passes) and the words of its first diagnosis."""

    module: str
    fails_at: tuple[str, ...] | None = None
    diagnosis: str = ""

    def __str__(self) -> str:
        return self.module


SHIPPED = (
    pytest.param(Shipped("num_nans"), id="num_nans"),
    pytest.param(Shipped("num_nans_off_by_one", ("nan1.0",), "elements of each row never read"),
                 id="num_nans_off_by_one"),
    pytest.param(Shipped("num_nans_int1", ("nan0.1", "nan0.5", "nan1.0"), "flags summed as int1"), id="num_nans_int1",
                 marks=pytest.mark.skipif(not ASCEND, reason="upstream Triton widens an int1 sum: this plant counts "
                                                             "right there; the ascend-cpu env judges it")),
)


def run_shipped(module: str, folder: Path, server: ForkServer | None, setup: bool = True) -> SubRun:
    """The suite's slice on a module of tests/designs/vendor, imported as a kernel team's CI imports it."""
    extra = ["--kernel-path", str(FOLDER), *(["--kernel-setup", SETUP] if setup else [])]
    return run_suite(module, SELECT, folder, extra=extra, server=server, in_process=True)


@pytest.fixture(autouse=True)
def _interpreter_only(device: str) -> None:
    if device != "cpu":
        pytest.skip("the setup is for the CPU interpreters; on an NPU the module imports CANN and vLLM itself")


@pytest.mark.parametrize("shipped", SHIPPED)
def test_shipped_module_through_this_interpreter(shipped: Shipped, tmp_path: Path, forks: ForkServer | None) -> None:
    run = run_shipped(shipped.module, tmp_path, forks)
    assert run.completed and len(run.records) == 16, run.describe()
    assert run.doc["environment"]["NaN predicate"] == "libdevice from setups.interpreter_libdevice", run.describe()
    if shipped.fails_at is None:
        assert run.returncode == 0 and not run.failed, run.describe()
        return
    failed = {r.id: r.verdict for r in run.records if r.failed}
    expected = {r.id for r in run.records if any(f"-{frac}-" in r.id for frac in shipped.fails_at)}
    assert run.returncode == 1 and set(failed) == expected and set(failed.values()) == {WRONG_COUNTS}, run.describe()
    assert shipped.diagnosis in run.doc["diagnosis"][0]["name"], run.doc["diagnosis"]


def test_without_the_setup_the_run_ends_environment(tmp_path: Path, forks: ForkServer | None) -> None:
    """The setup is what makes the difference: the same module alone stops at its CANN import, before any case."""
    run = run_shipped("num_nans", tmp_path, forks, setup=False)
    assert run.returncode == ENVIRONMENT_EXIT and not run.records, run.describe()
    assert "No module named 'triton.language.extra.cann'" in run.output, run.describe()
