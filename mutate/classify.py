"""A mutant's status from what its runs left: results.json read through verdict.record, never terminal text.

killed       a run ended on its own (exit 1) with results.json of this run id holding a failed test that is a
             detection; a worker crash is a kill too, named as one ("killed (crash)")
survived     every stage finished (results.json `finished`, exit 0) with no failing test
not_viable   the mutant does not import (exit 4, usage error) or its first failure is a build error
             (CompilationError or the interpreter's InterpreterError, SyntaxError, NameError, ImportError):
             excluded from the score
timeout      the run was stopped by our time limit, or its failing test timed out: neither kill nor survival
not_run      never started within the budget, or ended in a way that decides nothing (interrupted, internal
             error, no results of this run): neither kill nor survival
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reports.results import OtherRun, Results, ResultsError, load_run
from verdict.record import CRASH, TIMEOUT

KILLED, SURVIVED, NOT_VIABLE, TIMED_OUT, NOT_RUN = "killed", "survived", "not_viable", "timeout", "not_run"
NO_COVERAGE = "no_coverage"  # no test reaches the change on this backend: scored as a survivor
EQUIVALENT = "equivalent"  # compiles to the original's code (proved): not scored
DUPLICATE = "duplicate"  # compiles to another mutant's code: takes that mutant's status, counted once
# report order: survivors first
STATUSES: tuple[str, ...] = (SURVIVED, NO_COVERAGE, KILLED, TIMED_OUT, NOT_RUN, NOT_VIABLE, EQUIVALENT, DUPLICATE)
SCORED: tuple[str, ...] = (KILLED, SURVIVED, NO_COVERAGE)
UNJUDGED: tuple[str, ...] = (TIMED_OUT, NOT_RUN)  # any of these makes a run INCOMPLETE
# a failure with one of these is the mutant not building, not the suite detecting it; the interpreter raises
# InterpreterError where compiled Triton raises CompilationError (e.g. a bitcast between widths)
BUILD_ERRORS: tuple[str, ...] = ("CompilationError", "InterpreterError", "SyntaxError", "NameError", "ImportError",
                                 "ModuleNotFoundError")
USAGE_ERROR = 4
STOPPED_AT_FIRST_FAILURE = 2  # xdist's -x: "Interrupted: stopping after 1 failures"
STAGE_PASSED = "passed"  # a stage outcome that sends the mutant on to the next stage


@dataclass(frozen=True)
class StageResult:
    """One stage's outcome: passed (go on), or a final status with the test that decided it and why."""

    outcome: str  # passed, killed, not_viable, timeout, not_run
    nodeid: str = ""
    family: str = ""
    verdict: str = ""
    crash: bool = False
    why: str = ""


def is_build_error(*texts: str) -> bool:
    """Whether a failure's texts name a build error (the mutant not building, not the suite detecting it)."""
    return any(marker in text for text in texts for marker in BUILD_ERRORS)


def read_results(folder: Path, run_id: str) -> tuple[Results | None, str]:
    """results.json of this run (validated, matching run id: reports.results.load_run), or None and why not."""
    path = folder / "results.json"
    if not path.is_file():
        return None, "no results.json"
    try:
        return load_run(path, run_id), ""
    except OtherRun as exc:
        return None, f"results.json is not this run's (run id {exc.found!r}, expected {run_id!r})"
    except ResultsError as exc:
        return None, f"results.json unreadable ({exc})"


def classify_stage(folder: Path, run_id: str, returncode: int | None, timed_out: bool = False,
                   first_failure: bool = True) -> StageResult:
    """What one stage's run says about the mutant (returncode None: it never ran). Under xdist, -x ends a run with
    exit 2 ("interrupted") right after its first failure: with first_failure that exit is the -x stop, since our
    runs sit in their own session where no terminal signal reaches them; without it only exit 1 counts."""
    if timed_out:
        return StageResult(TIMED_OUT, why="stopped at the per-mutant time limit")
    if returncode is None:
        return StageResult(NOT_RUN, why="not started within the budget")
    if returncode == USAGE_ERROR:
        return StageResult(NOT_VIABLE, why="usage error: the mutant does not import (exit 4)")
    run, why = read_results(folder, run_id)
    if run is None:
        return StageResult(NOT_RUN, why=f"exit {returncode}: {why}")
    records = list(run.records)
    failed = [r for r in records if r.failed]
    if failed:
        first = failed[0]
        if returncode not in ((1, STOPPED_AT_FIRST_FAILURE) if first_failure else (1,)):
            return StageResult(NOT_RUN, first.nodeid, why=f"exit {returncode} ({run.ended}): did not end on "
                                                          "its own after a failure")
        if is_build_error(first.message, *(c.refusal for c in first.checks)):
            return StageResult(NOT_VIABLE, first.nodeid, first.family, first.verdict,
                               why=f"build error: {first.message.splitlines()[0] if first.message else ''}")
        if first.verdict == TIMEOUT:
            return StageResult(TIMED_OUT, first.nodeid, first.family, first.verdict, why="the failing test timed out")
        return StageResult(KILLED, first.nodeid, first.family, first.verdict, crash=first.verdict == CRASH,
                           why=first.message.splitlines()[0] if first.message else first.verdict)
    if returncode == 0 and run.finished:
        return StageResult(STAGE_PASSED, why=f"{len(records)} tests passed")
    return StageResult(NOT_RUN, why=f"exit {returncode}: {run.ended}, no failing test")


def final_status(stages: list[StageResult]) -> StageResult:
    """The mutant's status over its stages: the first stage that did not pass decides; all passed is survival."""
    for stage in stages:
        if stage.outcome != STAGE_PASSED:
            return stage
    if not stages:
        return StageResult(NOT_RUN, why="no stage ran")
    return StageResult(SURVIVED, why="; ".join(s.why for s in stages))


@dataclass
class Verdict:
    """One mutant's status and what decided it."""

    status: str
    why: str = ""
    killer: dict[str, Any] | None = None
    stage: str = ""
    seconds: float = 0.0
    cases_run: int = 0
    crash: bool = False
    twin: str = ""  # a duplicate's twin: the mutant with the same compiled code
    spent: dict[str, float] = field(default_factory=dict)  # seconds by stage: compile, warm, pytest
