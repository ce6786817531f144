"""The gate never reads green on a run that did not test what it says (issue 16), each as a user meets it: a kernel
module put under test with --kernel, the command, and the files the run leaves behind."""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
import torch

from reports import compare
from reports.plugin import ended
from tests.support.forkserver import ForkServer
from tests.support.forkworkers import REAL_WORKERS
from tests.support.subrun import SubRun, run_pytest
from verdict.record import PASS, REFUSED, SIDE_EFFECT, WRONG_COUNTS, CaseParams, Check

pytestmark = [pytest.mark.nan_harness, pytest.mark.usefixtures("cpu_only")]
SPECIALS = ["tests/precision/test_families.py", "-k", "special-2x1024"]  # 3 dtypes x 2 paths, NaNs in row 1


@pytest.fixture
def cpu_only(device: str) -> None:
    if device != "cpu":
        pytest.skip("these sub-runs use --device cpu")


def _stale(folder: Path) -> None:
    """What a previous, passing run left in the folder."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps({"schema": "nan-harness-results/2", "finished": True,
                                                     "exitstatus": 0, "collected": 1, "ended": "passed",
                                                     "cases": [{"nodeid": "a::b", "outcome": "passed"}]}))
    (folder / "precision.html").write_text("<html>an old, green report</html>")
    (folder / "junit.xml").write_text('<testsuites><testsuite tests="8" failures="0" errors="0"/></testsuites>')


def _junit_errors(run: SubRun) -> int:
    suite = ET.parse(run.junit).getroot()
    suite = suite if suite.tag == "testsuite" else suite.find("testsuite")
    return int(suite.get("errors", "0")) + int(suite.get("failures", "0"))


def _not_stale(run: SubRun) -> None:
    assert "an old, green report" not in run.html.read_text(), run.output[-2000:]
    assert _junit_errors(run) >= 1, run.junit.read_text()[:500]


# what each of tests.hostile.raises_outcome's raisers shows as, in the record's message ("KernelRaised: <type>:")
RAISED = {"skiptest": "SkipTest", "skip": "Skipped", "xfail": "XFailed", "exit": "Exit", "systemexit": "SystemExit",
          "keyboardinterrupt": "KeyboardInterrupt"}
# 48 small cases, 8 of them bf16 through the wrapper: the kernel raises each of the six in turn there (NAN_HOSTILE=each)
RAISES_CASES = ["tests/precision/test_families.py", "-m", "nan_matrix", "-k", "prefix and (1x128 or 2x5000)"]


@pytest.fixture(scope="module")
def raises_run(tmp_path_factory: pytest.TempPathFactory, device: str, forks: ForkServer | None) -> SubRun:
    """One run in which the kernel raises every outcome exception, one per bf16 call: the run must go on after each."""
    if device != "cpu":
        pytest.skip("these sub-runs use --device cpu")
    return run_pytest(tmp_path_factory.mktemp("raises"), [*RAISES_CASES, "--kernel", "tests.hostile.raises_outcome"],
                      env={"NAN_HOSTILE": "each"}, server=forks)


def test_a_kernel_raising_outcomes_leaves_a_finished_failed_run(raises_run: SubRun) -> None:
    """Item 1: nothing the kernel raised stopped the run, skipped or waived a case, or left the report green."""
    run = raises_run
    assert run.returncode == 1 and run.doc["finished"] and len(run.records) == 48, run.describe()
    assert not [r for r in run.records if r.outcome in ("skipped", "xfailed")], run.describe()
    assert '<span class="nan-verdict-fail">FAIL</span>' in run.html.read_text(), run.describe()
    bf16 = [r for r in run.records if "bf16" in r.nodeid and "wrapper" in r.nodeid]
    assert len(bf16) == 8 and not [r for r in run.records if r.failed and r not in bf16], run.describe()


@pytest.mark.parametrize("raised", list(RAISED))
def test_kernel_cannot_skip_waive_or_stop_its_cases(raises_run: SubRun, raised: str) -> None:
    """Item 1: whatever the kernel raises is a verdict about it; only a waiver file waives."""
    hit = [r for r in raises_run.records if f"KernelRaised: {RAISED[raised]}:" in r.message]
    assert hit, f"no case met {raised}\n{raises_run.describe()}"
    assert all("bf16" in r.nodeid and "wrapper" in r.nodeid for r in hit), [r.nodeid for r in hit]
    assert {(r.verdict, r.outcome) for r in hit} == {(REFUSED, "failed")}, raises_run.describe()


def test_refusal_by_pytest_skip_outside_the_domain_fails(tmp_path: Path) -> None:
    """Outside the domain a refusal passes only as an Exception: pytest.skip there steers the runner and fails."""
    from harness.compare import refusal
    from harness.guard import KernelRaised

    params = CaseParams("contract", "outside-rank-1d")
    assert refusal(KernelRaised(ValueError("rank 1")), params, "wrapper", None).verdict == PASS
    assert refusal(KernelRaised(pytest.skip.Exception("no")), params, "wrapper", None).verdict == REFUSED
    assert refusal(KernelRaised(SystemExit(0)), params, "wrapper", None).verdict == REFUSED


def test_a_real_interrupt_still_stops_the_run() -> None:
    """The guard converts a KeyboardInterrupt the kernel raises, never one a signal delivered during the call."""
    import signal

    from harness import guard

    # Python's own Ctrl-C handler, whatever an earlier test in this worker left installed (a worker's handler may
    # be ignored or already wrapped); the guard wraps it as the plugin does at start-up
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        guard.watch_signals()

        def interrupted() -> None:
            signal.raise_signal(signal.SIGINT)

        with pytest.raises(KeyboardInterrupt):
            guard.call(interrupted)
        with pytest.raises(guard.KernelRaised):
            guard.call(lambda: (_ for _ in ()).throw(KeyboardInterrupt()))
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.mark.parametrize("args", [["--", "--nan-gen-cases=abc"], ["--no-such-option"], ["--device", "tpu"],
                                  ["--nan-hypothesis-examples", "-5"], ["--nan-gen-cases", "-3"]],
                         ids=["bad-int", "unknown-option", "unknown-device", "negative-examples", "negative-cases"])
def test_rejected_arguments_leave_no_earlier_reports(tmp_path: Path, args: list[str], forks: ForkServer | None) -> None:
    """Items 2 and 7: an argument pytest or the harness rejects is a usage error, and the reports say not finished."""
    _stale(tmp_path)
    args = [a for a in args if a != "--"]
    run = run_pytest(tmp_path, [*SPECIALS, *args], server=forks)
    assert run.returncode == 4 and "Traceback" not in run.output, run.output[-2000:]
    assert run.doc.get("finished") is False and run.doc.get("cases") == [], run.doc
    _not_stale(run)
    assert compare.main([str(run.json_path), str(run.json_path)]) == 2


@pytest.mark.parametrize("option, value, expect", [("--nan-hypothesis-examples", "-5", "1..1000000"),
                                                   ("--nan-gen-cases", "-3", "1..100000"),
                                                   ("--nan-gen-seed", "x", "not an integer")])
def test_numeric_options_have_ranges(tmp_path: Path, option: str, value: str, expect: str,
                                     forks: ForkServer | None) -> None:
    run = run_pytest(tmp_path, [*SPECIALS, option, value], server=forks)
    assert run.returncode == 4 and option in run.output and expect in run.output, run.output[-2000:]


@pytest.mark.parametrize("where, extra, env", [
    ("call", [], {}),
    ("import", [], {"NAN_HOSTILE": "import"}),
    ("setup", ["--kernel-setup", "tests.hostile.setup_exits:install"], {}),
], ids=["at-call", "at-import", "in-kernel-setup"])
def test_a_kernel_that_exits_0_never_ends_the_run_green(tmp_path: Path, where: str, extra: list[str],
                                                        env: dict[str, str], forks: ForkServer | None) -> None:
    """Item 3: a plain (serial) run; the kernel ends its process with status 0. The deciding process survives."""
    _stale(tmp_path)
    run = run_pytest(tmp_path, [*SPECIALS, "--kernel", "tests.hostile.exits_zero", *extra], env=env, server=forks)
    assert run.returncode != 0, run.describe()
    _not_stale(run)
    if where == "call":
        crashed = [r for r in run.records if "bf16" in r.nodeid and "wrapper" in r.nodeid]
        assert [r.verdict for r in crashed] == ["crash"], run.describe()
        assert run.doc["finished"] and run.returncode == 1, run.describe()
    else:
        assert run.returncode == 4 and "ended (exit status 0)" in run.output, run.output[-2000:]


def test_the_kernel_cannot_bend_the_expected_counts(tmp_path: Path, forks: ForkServer | None) -> None:
    """Item 4: a wrong kernel (all zeros) that patches torch so a torch-computed reference agrees with it."""
    run = run_pytest(tmp_path, [*SPECIALS, "--kernel", "tests.hostile.patches_torch"], server=forks)
    assert run.returncode == 1, run.describe()
    assert {r.verdict for r in run.records if "wrapper" in r.nodeid} == {WRONG_COUNTS}, run.describe()
    assert all(r.expected_total == 37 for r in run.records if "wrapper" in r.nodeid), run.describe()


def test_the_matrix_reference_matches_its_construction() -> None:
    """Item 4: every matrix case's expected counts are the int(V * frac) NaNs per row it placed."""
    from cases.families.matrix import MATRIX, build

    for case in MATRIX:
        assert build(case).expected.tolist() == [case.nans_per_row] * case.rows, case


def test_expected_counts_ignore_a_patched_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    from reference import expected_counts

    x = torch.full((2, 5), float("nan"))
    monkeypatch.setattr(torch.Tensor, "sum", lambda self, *a, **k: torch.zeros(()))
    monkeypatch.setattr(torch, "isnan", lambda t: torch.zeros(t.shape, dtype=torch.bool))
    assert expected_counts(x).tolist() == [5, 5]


def test_outputs_that_lie_about_themselves_fail(tmp_path: Path, forks: ForkServer | None) -> None:
    """Item 5: a tensor subclass whose comparisons all say "equal" is judged by its data."""
    run = run_pytest(tmp_path, [*SPECIALS, "--kernel", "tests.hostile.lying_tensor"], server=forks)
    wrapper = [r for r in run.records if "wrapper" in r.nodeid]
    assert run.returncode == 1 and wrapper and {r.verdict for r in wrapper} == {WRONG_COUNTS}, run.describe()
    assert all(r.got_total == 0 and r.expected_total == 37 for r in wrapper)


def test_a_pass_that_contradicts_its_totals_is_not_a_pass() -> None:
    """Item 5: the controller re-reads each check's own totals (a forged pass record fails)."""
    forged = Check(CaseParams("matrix", "x"), "wrapper", PASS, expected_total=5000, got_total=0)
    assert forged.audited().verdict == WRONG_COUNTS
    honest = Check(CaseParams("matrix", "x"), "wrapper", PASS, expected_total=5000, got_total=5000)
    assert honest.audited() == honest


def test_right_counts_in_float32_are_a_side_effect(tmp_path: Path, forks: ForkServer | None) -> None:
    """Also noticed: a float32 result holding the right counts is a wrong dtype (side_effect), not wrong counts."""
    run = run_pytest(tmp_path, [*SPECIALS, "--kernel", "tests.hostile.float_counts"], server=forks)
    wrapper = [r for r in run.records if "wrapper" in r.nodeid]
    assert run.returncode == 1 and {r.verdict for r in wrapper} == {SIDE_EFFECT}, run.describe()


@pytest.mark.parametrize("exitstatus, ran, collected, interrupted", [
    (0, 0, 0, True), (0, 0, 0, False), (0, 3, 8, False), (2, 8, 8, False), (1, 8, 8, True)])
def test_an_unfinished_run_never_says_passed(exitstatus: int, ran: int, collected: int, interrupted: bool) -> None:
    """Item 8: after SIGINT during xdist start-up results.json read `ended: passed` with `finished: false`."""
    finished, how = ended(exitstatus, ran, collected, interrupted)
    assert not finished and "passed" not in how


@pytest.mark.parametrize("hostile", ["", "exit"], ids=["worker-ends", "worker-dies"])
def test_processes_the_kernel_starts_end_with_the_run(tmp_path: Path, hostile: str, forks: ForkServer | None) -> None:
    """Also noticed: a kernel's child processes outlived the run (also when its worker died under them). Real xdist
    workers: the controller adopts a dead worker's orphans only when the worker is its own descendant."""
    pidfile = tmp_path / "pids.txt"
    run = run_pytest(tmp_path, [*SPECIALS, "--kernel", "tests.hostile.spawns_child"],
                     env={"NAN_HOSTILE_PIDFILE": str(pidfile), "NAN_HOSTILE": hostile, **REAL_WORKERS}, server=forks)
    pids = [int(p) for p in pidfile.read_text().split()]
    assert pids, run.describe()
    alive = [pid for pid in pids if Path(f"/proc/{pid}").exists() and "Z" not in _state(pid)]
    assert not alive, f"still running after the run: {alive}\n{run.describe()}"


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except OSError:
        return "Z"
