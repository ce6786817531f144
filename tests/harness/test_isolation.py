"""A kernel that faults or crashes shows up as failed cases with their ids; the run and its report survive."""
from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path
from types import SimpleNamespace

import pytest

from harness.activation import IN_PROCESS_CALLER
from harness.isolation import Storms, signature
from harness.isolation import CrashStormWatch, is_fatal_device_error
from harness.reruns import child_argv
from tests.support.limits import hang_limit
from tests.support.forkserver import ForkServer
from tests.support.subrun import SubRun, run_suite
from verdict.crash_storm import GROUP_PROPERTY, RERUN_WITHOUT, STORM_PROPERTY, CrashGroup, CrashStorm

pytestmark = pytest.mark.nan_harness

# the faulting case first (matrix order), then four cases that must still run
SELECT = "fp32-prefix and wrapper and (2x5000-nan0.5 or 4x8192)"
FAULTING = "fp32-prefix-2x5000-nan0.5"


def run(kernel: str, device: str, tmp_path: Path, workers: int, *extra: str, server: ForkServer | None) -> SubRun:
    return run_suite(f"tests.harness.fixtures.{kernel}", SELECT, tmp_path, workers=workers, device=device,
                     extra=extra, server=server)


@pytest.mark.parametrize("kernel", ["faulting_kernel", "segfault_kernel"])
def test_crash_is_a_failed_case_and_the_run_goes_on(kernel: str, device: str, tmp_path: Path,
                                                    forks: ForkServer | None) -> None:
    result = run(kernel, device, tmp_path, workers=1, server=forks)
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


def test_hanging_kernel_is_a_failed_case(device: str, tmp_path: Path, forks: ForkServer | None) -> None:
    """pytest-timeout (tox passes --timeout) ends the hung worker; xdist blames the case and goes on."""
    pytest.importorskip("pytest_timeout")
    # pytest-timeout's limit is per case: the slowest passing case of SELECT took 0.11 s beside a tox run
    limit = hang_limit(slowest_s=0.11)
    result = run("hanging_kernel", device, tmp_path, 1, f"--timeout={limit:.0f}", "--timeout-method=thread",
                 server=forks)
    assert result.completed and result.returncode == 1, result.describe()
    assert result.failed and all(FAULTING in n for n in result.failed), result.describe()
    assert sum("4x8192" in n for n in result.passed) == 4, result.describe()
    assert result.record(result.failed[0]).verdict == "timeout", result.describe()


@pytest.mark.parametrize("kernel", ["faulting_kernel", "segfault_kernel"])
def test_plain_run_isolates_the_fault_in_its_worker(kernel: str, device: str, tmp_path: Path,
                                                   forks: ForkServer | None) -> None:
    """Without -n the kernel still runs in one xdist worker: a fault ends that worker, never the run."""
    result = run(kernel, device, tmp_path, workers=0, server=forks)
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


def test_in_process_refuses_workers(device: str, tmp_path: Path, forks: ForkServer | None) -> None:
    result = run_suite("kernel", "1x128", tmp_path, workers=2, device=device, extra=("--nan-in-process",),
                       env={IN_PROCESS_CALLER: "this test"}, server=forks)
    assert result.returncode == 4 and "--nan-in-process runs every test in this process: drop -n" in result.output


def test_in_process_needs_a_caller_that_isolates_it(device: str, tmp_path: Path, forks: ForkServer | None) -> None:
    """A user passing --nan-in-process for speed gets a usage error: a kernel calling os._exit(0) would be green."""
    result = run_suite("tests.hostile.exits_zero", "1x128", tmp_path, device=device, extra=("--nan-in-process",),
                       server=forks)
    assert result.returncode == 4 and f"sets {IN_PROCESS_CALLER}" in result.output, result.output


def test_a_crash_storm_costs_a_few_workers_and_says_what_it_left_unrun(device: str, tmp_path: Path,
                                                                       forks: ForkServer | None) -> None:
    """A plain run; the kernel segfaults on every 5000-wide row. Eight fp32 cases through the wrapper (one group):
    the first 3 crash and storm, the other 5 are not run, each naming the storm; one bf16 and one fp16 case crash
    too (their groups never storm). 5 crashes: more than xdist's default of 4 restarts for one worker (it would
    stop the run INCOMPLETE), so the harness's crash budget is what lets it finish. Today's code: a worker each."""
    select = "2x5000 and (fp32 or prefix and nan1.0)"
    result = run_suite("tests.harness.fixtures.segfault_kernel", select, tmp_path, device=device, server=forks)
    crashed = [r for r in result.records if r.verdict == "crash"]
    skipped = [r for r in result.records if r.crash_storm is not None]
    assert result.completed and result.returncode == 1 and result.doc["finished"], result.describe()
    assert len(crashed) == 5 and all("2x5000" in r.nodeid and "wrapper" in r.nodeid for r in crashed), result.describe()
    fp32 = sorted(r.nodeid for r in crashed if "fp32" in r.nodeid)
    assert len(fp32) == 3 and len(skipped) == 5, result.describe()
    for r in skipped:
        storm = r.crash_storm
        assert r.verdict == "not_run" and r.outcome == "skipped" and "fp32" in r.nodeid and "wrapper" in r.nodeid, r
        assert storm.signature == "signal SIGSEGV" and sorted(storm.crashes) == fp32, storm
        assert storm.scope == CrashGroup("test_case", "matrix", "wrapper", "fp32") and storm.threshold == 3, storm
        assert r.not_run is not None and r.not_run.commands == (RERUN_WITHOUT,), r.not_run
    group = next(g for g in result.doc["not_run"] if g["group"] == "family matrix, fp32, wrapper path")
    assert group["tests"] == 5 and "crash-storm skip after 3 confirmed crashes with signal SIGSEGV" in group["reason"]
    assert "crash-storm skip" in (result.folder / "summary.md").read_text(encoding="utf-8")
    assert "crash-storm skip" in result.html.read_text(encoding="utf-8")


MATRIX_BF16 = CrashGroup("test_case", "matrix", "wrapper", "bf16")


def test_a_storm_takes_its_threshold_of_crashes_with_one_signature_in_one_group() -> None:
    storms = Storms(3)
    assert storms.crashed("a", MATRIX_BF16, "exit status 0") == []
    assert storms.crashed("b", MATRIX_BF16, "signal SIGSEGV") == []  # another signature counts apart
    assert storms.crashed("c", MATRIX_BF16, "exit status 0") == []
    [storm] = storms.crashed("d", MATRIX_BF16, "exit status 0")
    assert storm.crashes == ("a", "c", "d") and storm.scope == MATRIX_BF16 and storms.covering(MATRIX_BF16) == storm
    assert storms.crashed("e", MATRIX_BF16, "exit status 0") == []  # a worker that started before it: no new storm
    for other in (replace(MATRIX_BF16, path="direct"), replace(MATRIX_BF16, dtype="fp16"),
                  replace(MATRIX_BF16, family="shape"), CrashGroup("test_offset_views", "", "wrapper", "bf16")):
        assert storms.covering(other) is None, other
    off = Storms(0)
    assert [off.crashed(str(n), MATRIX_BF16, "exit status 0") for n in range(5)] == [[]] * 5


def test_a_storm_and_as_many_crashes_in_other_groups_of_its_dtype_and_path_cover_every_test_of_them() -> None:
    storms = Storms(2)
    shape, ieee = replace(MATRIX_BF16, family="shape"), replace(MATRIX_BF16, family="ieee")
    aliasing = CrashGroup("test_refilled_logits_buffer", "", "", "bf16")  # names no path: it calls get_num_nans
    storms.crashed("s0", shape, "exit status 0")
    storms.crashed("d0", replace(shape, path="direct"), "exit status 0")  # another path: not the storm's evidence
    storms.crashed("i0", ieee, "signal SIGSEGV")  # another signature: neither
    assert [s.scope for s in storms.crashed("m0", MATRIX_BF16, "exit status 0") +
            storms.crashed("m1", MATRIX_BF16, "exit status 0")] == [MATRIX_BF16]  # 1 crash in another group so far
    assert storms.covering(ieee) is None and storms.covering(aliasing) is None
    [wide] = storms.crashed("i1", ieee, "exit status 0")
    assert wide.scope == CrashGroup(path="wrapper", dtype="bf16") and wide.crashes == ("m0", "m1", "s0", "i1")
    assert wide.groups == (MATRIX_BF16, shape, ieee), wide
    assert storms.covering(shape) == wide and storms.covering(aliasing) == wide  # a test naming no path too
    assert storms.covering(CrashGroup("test_offset_views", "", "direct", "bf16")) is None
    assert storms.covering(CrashGroup("test_sweep", "", "wrapper", "")) is None
    assert storms.covering(replace(MATRIX_BF16, dtype="fp16")) is None
    assert wide.scope.describe() == "every bf16 test, wrapper path or none named"
    assert "4 confirmed crashes with exit status 0 in family matrix, bf16, wrapper path; family shape" in wide.reason()


@pytest.mark.parametrize("status, fault, timed_out, words", [
    (-11, False, False, "signal SIGSEGV"), (0, False, False, "exit status 0"), (1, False, True, "timeout"),
    (3, True, False, "device fault"), (None, False, False, "a lost worker (exit status unknown)")])
def test_a_crash_signature_says_how_the_worker_ended(status: int | None, fault: bool, timed_out: bool,
                                                     words: str) -> None:
    assert signature(status, fault=fault, timed_out=timed_out) == words


def test_the_controller_counts_crashes_by_group_and_never_a_waived_one() -> None:
    """Groups come from the setup reports' property; a waived (xfail) test's crash is its known failure; a skip
    naming a storm the controller never confirmed (written from the kernel's process) fails."""
    config = SimpleNamespace(getoption=lambda *a: None, pluginmanager=SimpleNamespace(
        hasplugin=lambda name: False, get_plugin=lambda name: None))
    dead = SimpleNamespace(gateway=SimpleNamespace(_io=SimpleNamespace(popen=SimpleNamespace(wait=lambda timeout: 0))))
    group = [(GROUP_PROPERTY, json.dumps(asdict(MATRIX_BF16)))]
    for waived, storms in ((True, 0), (False, 1)):
        watch = CrashStormWatch(config, Storms(3), set())  # type: ignore[arg-type]
        try:
            for n in range(3):
                nodeid = f"t.py::test_case[{n}]"
                watch.note(pytest.TestReport(nodeid, ("t.py", 0, ""), {"xfail": 1} if waived else {}, "passed", None,
                                             "setup", user_properties=group))
                crash = pytest.TestReport(nodeid, ("t.py", 0, ""), {}, "failed", "crashed", "???")  # type: ignore
                crash.node = dead  # type: ignore[attr-defined]
                watch.pytest_handlecrashitem(nodeid, crash, None)
            found = watch.storms.storms
            assert len(found) == storms and all(s.signature == "exit status 0" for s in found), found
            assert watch.file.current().storms == found  # what every worker reads before its next test
            for storm in (*found, CrashStorm("exit status 0", MATRIX_BF16, ("t.py::x",) * 3, 3)):
                skipped = pytest.TestReport("t.py::test_case[9]", ("t.py", 0, ""), {}, "skipped", ("t.py", 0, "s"),
                                            "setup", user_properties=[(STORM_PROPERTY, storm.to_json())])
                watch.note(skipped)
                assert skipped.outcome == ("skipped" if storm in found else "failed"), storm
        finally:
            watch.pytest_unconfigure()


def test_reruns_run_every_test_they_name() -> None:
    """A rerun confirms each failed test in a fresh process: no crash storm skips one there."""
    options = [SimpleNamespace(dest="nan_crash_storm", default=3, names=lambda: ["--nan-crash-storm"])]
    config = SimpleNamespace(option=SimpleNamespace(nan_crash_storm=5), inipath=None, rootpath=Path("/r"),
                             pluginmanager=SimpleNamespace(hasplugin=lambda name: False))
    argv = child_argv(config, ["t.py::x"], Path("/r/round"), options, max_crashes=2)  # type: ignore[arg-type]
    assert [a for a in argv if a.startswith("--nan-crash-storm")] == [RERUN_WITHOUT]
