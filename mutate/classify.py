"""A mutant's statuses, what each means for the score, and its verdict record.

killed       a test that reaches the change failed (wrong counts, a refusal, a side effect, ...); a worker crash
             or hang the original does not show is a kill too, named as one ("killed (crash)")
survived     every test that reaches the change passed
not_viable   the mutant does not import, or its first failure is a build error (CompilationError or the
             interpreter's InterpreterError, SyntaxError, NameError, ImportError): excluded from the score
timeout      its tests were stopped at the per-mutant limit: neither kill nor survival
not_run      never judged within the budget, or ended in a way that decides nothing: neither kill nor survival
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

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
STAGE_PASSED = "passed"  # a worker's answer that decides nothing yet: every test it ran passed


def is_build_error(*texts: str) -> bool:
    """Whether a failure's texts name a build error (the mutant not building, not the suite detecting it)."""
    return any(marker in text for text in texts for marker in BUILD_ERRORS)


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
