"""One run's reporting state, owned by one object (pytest's LogXML model): made when the controller starts the run,
stashed on its config and registered as a plugin, so that a hook that gets no config (pytest_keyboard_interrupt)
reaches it too; unregistered when the run ends. Nothing of it outlives its run: a second pytest in the same process
(mutate's warm workers, a test's in-process sub-run) starts from nothing."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from harness.environment_failures import ENVIRONMENT_EXIT
from reports.collector import ResultCollector

NAME = "nan-run-state"


@dataclass(frozen=True)
class RunEnd:
    """How the session ended, decided once and read by every writer (results.json, HTML, exit status)."""

    finished: bool
    how: str
    exitstatus: int
    ran: int


@dataclass(eq=False)
class RunState:
    """What the reports of one run share: its id and start, how far it got, the collector, its interrupts, and its
    ending, diagnosis and summary once decided."""

    run_id: str
    started: str
    ending: str = ""  # "configured": unconfigure says how the run ended; "ended early": it said
    collector: ResultCollector | None = None  # the controller's, from configure on
    sigterm_saved: bool = False
    previous_sigterm: Any = None  # the SIGTERM handler before this run, restored at unconfigure
    interrupted: list[str] = field(default_factory=list)  # KeyboardInterrupts of this run (Ctrl-C, SIGTERM)
    end: RunEnd | None = None
    diagnosis: list[Any] | None = None  # the run's one diagnosis (reports.diagnosis.Diagnosis items)
    summary: Any = None  # the run's one summary model (reports.summary_model.Summary), built from the above

    def pytest_keyboard_interrupt(self, excinfo: pytest.ExceptionInfo[BaseException]) -> None:
        """Remember the interrupt: a run stopped this way ends 'interrupted', whatever exit status follows (not the
        harness's own stop for an environment failure, which pytest reports through this hook too)."""
        if isinstance(excinfo.value, pytest.exit.Exception) and excinfo.value.returncode == ENVIRONMENT_EXIT:
            return
        self.interrupted.append(str(excinfo.value) or "KeyboardInterrupt")


STATE_KEY = pytest.StashKey[RunState]()


def start(config: pytest.Config, run_id: str, started: str) -> RunState:
    """The run's state, made and registered once (the first caller's id and start time stand)."""
    state = config.stash.get(STATE_KEY, None)
    if state is None:
        state = RunState(run_id, started)
        config.stash[STATE_KEY] = state
        config.pluginmanager.register(state, NAME)
    return state


def state_of(config: pytest.Config) -> RunState | None:
    """This run's state; None where the reports do not run (a worker, --help, a run that did not ask for them)."""
    return config.stash.get(STATE_KEY, None)


def collector_of(config: pytest.Config) -> ResultCollector | None:
    state = state_of(config)
    return state.collector if state is not None else None


def finish(config: pytest.Config) -> None:
    """The run is over: its state leaves the plugin manager (the stash goes with the config)."""
    state = state_of(config)
    if state is not None and config.pluginmanager.is_registered(state):
        config.pluginmanager.unregister(state)
