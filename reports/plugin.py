"""Report and gate options (--nan-json, --nan-waivers), result collection, and results.json on the controller."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.plugin import DEVICE_KEY, TARGET_KEY
from reports import environment, results
from reports.collector import ResultCollector
from reports.waivers import WaiverError, WaiverPlugin, load_waivers

DEFAULT_JSON = "reports/results.json"
COLLECTOR_KEY = pytest.StashKey[ResultCollector]()
ENVIRONMENT_KEY = pytest.StashKey[dict[str, str]]()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("nan-harness")
    group.addoption(
        "--nan-json",
        default=DEFAULT_JSON,
        metavar="PATH",
        help=f"machine-readable results, one record per test (default {DEFAULT_JSON}; '' turns it off)",
    )
    group.addoption(
        "--nan-waivers",
        default=None,
        metavar="PATH",
        help="TOML waiver file: [[waiver]] entries with id (node id), reason, link; waived tests become strict xfails",
    )


def is_controller(config: pytest.Config) -> bool:
    """True in a serial run and in xdist's controller; False in xdist workers."""
    return not hasattr(config, "workerinput")


def run_environment(config: pytest.Config) -> dict[str, str]:
    """The environment of this run, computed once (controller side)."""
    if ENVIRONMENT_KEY not in config.stash:
        if TARGET_KEY in config.stash:
            config.stash[ENVIRONMENT_KEY] = environment.collect(config.stash[TARGET_KEY], config.stash[DEVICE_KEY])
        else:
            config.stash[ENVIRONMENT_KEY] = {}
    return config.stash[ENVIRONMENT_KEY]


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "nan_reports: tests of the reports and gates (HTML, results.json, compare, waivers)")
    if config.option.help or config.option.version:
        return
    waivers = {}
    source = config.getoption("--nan-waivers")
    if source:
        path = Path(config.invocation_params.dir, source)
        try:
            waivers = load_waivers(path)
        except WaiverError as exc:
            raise pytest.UsageError(str(exc)) from exc
        config.pluginmanager.register(WaiverPlugin(waivers, path), "nan-waivers")
    if is_controller(config):
        collector = ResultCollector({k: w.as_dict() for k, w in waivers.items()})
        config.stash[COLLECTOR_KEY] = collector
        config.pluginmanager.register(collector, "nan-results")


def json_path(config: pytest.Config) -> Path | None:
    """Where results.json goes, relative to the invocation directory; None when turned off."""
    value = config.getoption("--nan-json")
    return Path(config.invocation_params.dir, value) if value else None


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    path = json_path(config)
    if not is_controller(config) or COLLECTOR_KEY not in config.stash or path is None or config.option.collectonly:
        return
    doc = results.document(config.stash[COLLECTOR_KEY].results(), run_environment(config), int(exitstatus))
    results.write(path, doc)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    path = json_path(config)
    if is_controller(config) and path is not None and path.is_file() and not config.option.collectonly:
        terminalreporter.write_sep("-", f"Generated results file: {path}")
