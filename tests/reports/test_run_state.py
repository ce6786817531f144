"""reports.run_state: one object holds a run's reporting state, registered for the hooks that get no config, gone
with its run, so a second run in the same process (mutate's warm workers, an in-process sub-run) starts clean."""
from __future__ import annotations

from types import SimpleNamespace

import pluggy
import pytest

from harness.environment_failures import ENVIRONMENT_EXIT
from reports import run_state

pytestmark = pytest.mark.nan_reports


def _config() -> SimpleNamespace:
    return SimpleNamespace(stash=pytest.Stash(), pluginmanager=pluggy.PluginManager("pytest"))


def _interrupt(manager: pluggy.PluginManager, exc: BaseException) -> None:
    """What pytest does on Ctrl-C or SIGTERM: call every registered pytest_keyboard_interrupt."""
    for plugin in manager.get_plugins():
        hook = getattr(plugin, "pytest_keyboard_interrupt", None)
        if hook is not None:
            try:
                raise exc
            except BaseException:  # noqa: BLE001 - the hook's argument is the exception being handled
                hook(pytest.ExceptionInfo.from_current())


def test_one_state_per_run_registered_once_and_gone_with_it() -> None:
    config = _config()
    state = run_state.start(config, "r1", "2026-12-05T00:00:00+00:00")  # type: ignore[arg-type]
    again = run_state.start(config, "other", "later")  # type: ignore[arg-type]
    assert again is state and state.run_id == "r1" and run_state.state_of(config) is state  # type: ignore[arg-type]
    assert config.pluginmanager.get_plugins() == {state}
    run_state.finish(config)  # type: ignore[arg-type]
    assert not config.pluginmanager.get_plugins()


def test_interrupts_belong_to_their_run() -> None:
    first, second = _config(), _config()
    state = run_state.start(first, "r1", "t")  # type: ignore[arg-type]
    _interrupt(first.pluginmanager, KeyboardInterrupt("signal 15 (SIGTERM)"))
    _interrupt(first.pluginmanager, pytest.exit.Exception("environment", returncode=ENVIRONMENT_EXIT))
    assert state.interrupted == ["signal 15 (SIGTERM)"]  # the harness's own environment stop is no interrupt
    run_state.finish(first)  # type: ignore[arg-type]
    later = run_state.start(second, "r2", "t")  # type: ignore[arg-type]
    assert later.interrupted == [] and later.end is None and later.diagnosis is None
