"""The runner with a fake pytest: stages in order, -x, card pinning per slot, the budget and the time limit."""
from __future__ import annotations

import threading
import time
from pathlib import Path

from mutate import classify
from mutate.run import FOLDER, Runner, Settings, Stage, Target, full_suite, pytest_argv, run_env
from tests.support.results_file import write_results

STAGES = (Stage("fast", ("tests/precision",), ("-m", "nan_matrix")), Stage("rest", ("tests/precision",)))


def _write(folder: Path, argv: list[str], failing: bool) -> None:
    run_id = next(a.split("=", 1)[1] for a in argv if a.startswith("--nan-run-id="))
    case = {"nodeid": "t::test_case[x]", "outcome": "failed" if failing else "passed",
            "verdict": "wrong_counts" if failing else "pass", "message": "", "parameters": {"family": "matrix"}}
    write_results(folder, [case], run_id=run_id)


class FakePytest:
    """Stands in for run_stage: records argv and env, kills in the stages named in `kill_in`."""

    def __init__(self, kill_in: tuple[str, ...] = (), sleep_s: float = 0.0, hang: bool = False) -> None:
        self.kill_in, self.sleep_s, self.hang = kill_in, sleep_s, hang
        self.calls: list[tuple[list[str], dict[str, str]]] = []
        self.lock = threading.Lock()

    def __call__(self, argv: list[str], folder: Path, env: dict[str, str], limit_s: float) -> tuple[int | None, bool]:
        with self.lock:
            self.calls.append((argv, env))
        if self.hang:
            return None, True
        time.sleep(self.sleep_s)
        folder.mkdir(parents=True, exist_ok=True)
        failing = folder.name in self.kill_in
        _write(folder, argv, failing)
        return (1 if failing else 0), False


def _settings(tmp_path: Path, **kw) -> Settings:  # type: ignore[no-untyped-def]
    return Settings("cpu", **kw)


def test_a_mutant_killed_in_the_fast_stage_never_runs_the_rest(tmp_path: Path) -> None:
    fake = FakePytest(kill_in=("fast",))
    out = Runner(_settings(tmp_path), STAGES, time.monotonic() + 60, fake).run(Target("m"), tmp_path / "m")
    assert out.status.outcome == classify.KILLED and len(fake.calls) == 1 and "-x" in fake.calls[0][0]


def test_a_survivor_runs_every_stage(tmp_path: Path) -> None:
    fake = FakePytest()
    out = Runner(_settings(tmp_path), STAGES, time.monotonic() + 60, fake).run(Target("m"), tmp_path / "m")
    assert out.status.outcome == classify.SURVIVED and ["-x" in c[0] for c in fake.calls] == [True, True]


def test_mutants_past_the_budget_are_not_run(tmp_path: Path) -> None:
    fake = FakePytest(sleep_s=0.0)
    runner = Runner(_settings(tmp_path, jobs=2), STAGES, time.monotonic() + 3, fake)  # under the 5 s floor
    outs = runner.run_many([(Target(f"m{i}"), tmp_path / f"m{i}") for i in range(3)])
    assert [o.status.outcome for o in outs] == [classify.NOT_RUN] * 3 and not fake.calls


def test_a_run_stopped_at_the_per_mutant_limit_is_a_timeout_and_at_the_budget_not_run(tmp_path: Path) -> None:
    fake = FakePytest(hang=True)
    limited = Runner(_settings(tmp_path, per_run_s=10), STAGES, time.monotonic() + 600, fake)
    assert limited.run(Target("m"), tmp_path / "a").status.outcome == classify.TIMED_OUT
    budget = Runner(_settings(tmp_path, per_run_s=900), STAGES, time.monotonic() + 60, fake)
    assert budget.run(Target("m"), tmp_path / "b").status.outcome == classify.NOT_RUN


def test_each_slot_pins_one_card_through_the_backends_variable(tmp_path: Path) -> None:
    fake = FakePytest(kill_in=("fast",), sleep_s=0.3)
    settings = Settings("cuda", jobs=2, cards=2, visibility_var="CUDA_VISIBLE_DEVICES")
    outs = Runner(settings, STAGES, time.monotonic() + 60, fake).run_many(
        [(Target(f"m{i}"), tmp_path / f"m{i}") for i in range(4)])
    assert {o.card for o in outs} == {0, 1}
    for (argv, env), o in zip(sorted(fake.calls, key=lambda c: c[0][c[0].index("--kernel") + 1]), outs):
        assert env["CUDA_VISIBLE_DEVICES"] in ("0", "1") and "TRITON_INTERPRET" not in env
        assert argv[argv.index("--device") + 1] == "cuda"


def test_run_env_drops_outer_pytest_variables(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw3")
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    env = run_env("cuda", 1, "CUDA_VISIBLE_DEVICES")
    assert "PYTEST_XDIST_WORKER" not in env and "TRITON_INTERPRET" not in env and env["CUDA_VISIBLE_DEVICES"] == "1"
    assert run_env("cpu", None, None)["TRITON_INTERPRET"] == "1"


def test_the_argv_is_a_module_under_test_like_any_other(tmp_path: Path) -> None:
    stage = full_suite()[1]
    argv = pytest_argv(stage, kernel="mut_abc", kernel_paths=[tmp_path], device="cpu", folder=tmp_path,
                       first_failure=True, run_id="r", deselect=["t::x"])
    assert argv[argv.index("--kernel") + 1] == "mut_abc" and argv[argv.index("--kernel-path") + 1] == str(tmp_path)
    assert "-x" in argv and argv[argv.index("--deselect") + 1] == "t::x" and "-n" in argv
    assert "--nan-reruns=0" in argv  # a failed test is a kill: no rerun in fresh processes
    files = [a for a in stage.tests if a.endswith(".py")]
    assert files[0].endswith("test_wrapper_contract.py") and len(files) == len(set(files))
    assert argv[-len(files):] == [str(FOLDER.parents[1] / f) for f in files]  # found from any folder


def test_an_internal_error_before_any_test_is_retried_once(tmp_path: Path) -> None:
    calls: list[int] = []

    def flaky(argv: list[str], folder: Path, env: dict[str, str], limit_s: float) -> tuple[int | None, bool]:
        calls.append(1)
        folder.mkdir(parents=True, exist_ok=True)
        if len(calls) == 1:
            return 3, False  # INTERNALERROR while configuring: no results of this run
        _write(folder, argv, failing=True)
        return 1, False

    out = Runner(_settings(tmp_path), STAGES, time.monotonic() + 60, flaky).run(Target("m"), tmp_path / "m")
    assert out.status.outcome == classify.KILLED and len(calls) == 2


def test_a_crash_kill_the_original_also_shows_is_deselected_and_rerun(tmp_path: Path) -> None:
    """A flaky original (a crash on a case it passed in the baseline) must not make kills: confirm, then rerun."""
    runs: list[list[str]] = []

    def crashes_once(argv: list[str], folder: Path, env: dict[str, str], limit_s: float) -> tuple[int | None, bool]:
        runs.append(argv)
        folder.mkdir(parents=True, exist_ok=True)
        run_id = next(a.split("=", 1)[1] for a in argv if a.startswith("--nan-run-id="))
        crash = "t::flaky" not in argv  # crashes until that test is deselected
        case = {"nodeid": "t::flaky", "outcome": "failed" if crash else "passed", "verdict": "crash" if crash
                else "pass", "message": "worker 'gw0' crashed", "parameters": {"family": "bigoffset"}}
        write_results(folder, [case], run_id=run_id)
        return (1 if crash else 0), False

    asked: list[str] = []

    def original_fails_it_too(nodeid: str) -> bool:
        asked.append(nodeid)
        return False

    runner = Runner(_settings(tmp_path), STAGES[:1], time.monotonic() + 60, crashes_once, confirm=original_fails_it_too)
    out = runner.run(Target("m"), tmp_path / "m")
    assert asked == ["t::flaky"] and runner.flaky == {"t::flaky"}
    assert out.status.outcome == classify.SURVIVED and "--deselect" in runs[-1]
    # a crash the original does not show stands as a kill, confirmed once per test
    confirmed = Runner(_settings(tmp_path), STAGES[:1], time.monotonic() + 60,
                       lambda a, f, e, l: crashes_once([x for x in a if x != "t::flaky"], f, e, l),
                       confirm=lambda nodeid: True)
    got = confirmed.run(Target("m"), tmp_path / "n").status
    assert got.outcome == classify.KILLED and got.crash
