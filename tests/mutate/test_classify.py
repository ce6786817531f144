"""A mutant's status from fake run folders: only a finished detection kills; unfinished runs decide nothing."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from mutate import classify
from mutate.classify import KILLED, NOT_RUN, NOT_VIABLE, STAGE_PASSED, SURVIVED, TIMED_OUT, StageResult
from tests.support.results_file import write_results

RUN_ID = "r1"


def _case(nodeid: str, outcome: str, verdict: str, message: str = "", family: str = "matrix") -> dict[str, Any]:
    return {"nodeid": nodeid, "outcome": outcome, "verdict": verdict, "message": message,
            "parameters": {"family": family, "case_id": nodeid}, "checks": []}


def _folder(tmp_path: Path, cases: list[dict[str, Any]], *, finished: bool, run_id: str = RUN_ID,
            ended: str = "tests failed") -> Path:
    write_results(tmp_path, cases, run_id=run_id, finished=finished, ended=ended, collected=max(len(cases), 1))
    return tmp_path


WRONG = _case("t::test_case[fp32-a-wrapper]", "failed", "wrong_counts", "AssertionError: case x: wrong counts")
PASS = _case("t::test_case[fp32-b-wrapper]", "passed", "pass")


def test_a_finished_detection_kills_and_names_the_test(tmp_path: Path) -> None:
    got = classify.classify_stage(_folder(tmp_path, [PASS, WRONG], finished=True), RUN_ID, 1)
    assert got.outcome == KILLED and got.nodeid == WRONG["nodeid"] and got.family == "matrix"
    assert got.verdict == "wrong_counts" and not got.crash


def test_the_first_failure_stop_of_xdist_is_a_kill(tmp_path: Path) -> None:
    folder = _folder(tmp_path, [PASS, WRONG], finished=False, ended="interrupted")
    assert classify.classify_stage(folder, RUN_ID, 2, first_failure=True).outcome == KILLED
    # the same exit without -x is an interrupted run: it decides nothing
    assert classify.classify_stage(folder, RUN_ID, 2, first_failure=False).outcome == NOT_RUN


def test_a_worker_crash_is_a_kill_named_as_one(tmp_path: Path) -> None:
    crash = _case("t::test_case[fp32-bigoffset-direct]", "failed", "crash", "worker 'gw0' crashed", "bigoffset")
    got = classify.classify_stage(_folder(tmp_path, [crash], finished=True), RUN_ID, 1)
    assert got.outcome == KILLED and got.crash and got.family == "bigoffset"


@pytest.mark.parametrize("message", ["triton.compiler.errors.CompilationError: at 3:4", "NameError: name 'x'",
                                     "triton.runtime.errors.InterpreterError: ValueError('Cannot bitcast')"])
def test_a_build_error_is_not_viable_not_a_kill(tmp_path: Path, message: str) -> None:
    bad = _case("t::test_case[fp32-a-wrapper]", "failed", "refused", message)
    assert classify.classify_stage(_folder(tmp_path, [bad], finished=True), RUN_ID, 1).outcome == NOT_VIABLE


def test_a_mutant_that_does_not_import_is_not_viable(tmp_path: Path) -> None:
    folder = _folder(tmp_path, [], finished=False, run_id=RUN_ID, ended="not finished (started x)")
    assert classify.classify_stage(folder, RUN_ID, 4).outcome == NOT_VIABLE


def test_a_run_stopped_at_the_limit_is_a_timeout_even_with_a_failure_on_record(tmp_path: Path) -> None:
    folder = _folder(tmp_path, [WRONG], finished=False, ended="interrupted")
    assert classify.classify_stage(folder, RUN_ID, None, timed_out=True).outcome == TIMED_OUT


def test_a_failing_test_that_timed_out_is_a_timeout(tmp_path: Path) -> None:
    hung = _case("t::test_case[fp32-a-wrapper]", "failed", "timeout", "Timeout (>900.0s) from pytest-timeout")
    assert classify.classify_stage(_folder(tmp_path, [hung], finished=True), RUN_ID, 1).outcome == TIMED_OUT


@pytest.mark.parametrize("code,finished,ended", [(2, False, "interrupted"), (3, False, "internal error"),
                                                 (1, False, "stopped early: 3 of 10 tests ran"),
                                                 (-9, False, "not finished")])
def test_an_unfinished_run_without_a_failure_decides_nothing(tmp_path: Path, code: int, finished: bool,
                                                              ended: str) -> None:
    folder = _folder(tmp_path, [PASS], finished=finished, ended=ended)
    assert classify.classify_stage(folder, RUN_ID, code).outcome == NOT_RUN


def test_a_failure_in_a_run_killed_by_a_signal_is_not_a_kill(tmp_path: Path) -> None:
    folder = _folder(tmp_path, [PASS, WRONG], finished=False, ended="interrupted")
    assert classify.classify_stage(folder, RUN_ID, -9).outcome == NOT_RUN


def test_an_earlier_runs_results_are_not_read(tmp_path: Path) -> None:
    folder = _folder(tmp_path, [WRONG], finished=True, run_id="an-older-run")
    got = classify.classify_stage(folder, RUN_ID, 1)
    assert got.outcome == NOT_RUN and "not this run's" in got.why
    assert classify.classify_stage(tmp_path / "empty", RUN_ID, 1).outcome == NOT_RUN


def test_a_finished_clean_run_passes_the_stage(tmp_path: Path) -> None:
    assert classify.classify_stage(_folder(tmp_path, [PASS], finished=True, ended="passed"), RUN_ID, 0).outcome \
        == STAGE_PASSED
    assert classify.classify_stage(tmp_path, RUN_ID, None).outcome == NOT_RUN  # never started


def test_survival_needs_every_stage_to_pass() -> None:
    passed = StageResult(STAGE_PASSED, why="ok")
    assert classify.final_status([passed, passed]).outcome == SURVIVED
    assert classify.final_status([passed, StageResult(NOT_RUN)]).outcome == NOT_RUN
    assert classify.final_status([passed, StageResult(KILLED, "n")]).outcome == KILLED
    assert classify.final_status([]).outcome == NOT_RUN
