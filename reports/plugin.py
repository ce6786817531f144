"""Report and gate options (--nan-json, --nan-waivers), result collection, and results.json on the controller.

A run's reports never pretend: at start-up the previous results.json is replaced by one that says the run has
not finished (so a usage error, Ctrl-C, SIGTERM or a killed run leaves that behind, which compare refuses), and
the final one records how many tests were collected, how many ran and how the session ended.
"""
from __future__ import annotations

import datetime
import hashlib
import signal
from pathlib import Path
from types import FrameType

import pytest

from reports import results
from reports.collector import ResultCollector
from reports.waivers import WaiverError, WaiverPlugin, load_waivers
from verdict.run import RUN_INFO_KEY

DEFAULT_JSON = "reports/results.json"
COLLECTOR_KEY = pytest.StashKey[ResultCollector]()
STARTED_KEY = pytest.StashKey[str]()
EXIT_WORDS = {0: "passed", 1: "tests failed", 2: "interrupted", 3: "internal error", 4: "usage error",
              5: "no tests collected"}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("nan-harness")
    group.addoption("--nan-json", default=DEFAULT_JSON, metavar="PATH",
                    help=f"machine-readable results, one record per test (default {DEFAULT_JSON}; '' turns it off)")
    group.addoption("--nan-waivers", default=None, metavar="PATH",
                    help="TOML waiver file: [[waiver]] entries with id (node id), reason, link; waived tests "
                         "become strict xfails")


def is_controller(config: pytest.Config) -> bool:
    """True in a serial run and in xdist's controller; False in xdist workers."""
    return not hasattr(config, "workerinput")


def json_path(config: pytest.Config) -> Path | None:
    """Where results.json goes, relative to the invocation directory; None when turned off."""
    value = config.getoption("--nan-json", None)
    return Path(config.invocation_params.dir, value) if value else None


def shard_of(config: pytest.Config) -> dict | None:
    """This run's place among pytest-split shards (--splits N --group i), with what shards of one suite share:
    the splitting algorithm, the durations file's digest and the selection. None when the run is not split."""
    splits, group = config.getoption("splits", None), config.getoption("group", None)
    if not splits or not group:
        return None
    durations = config.getoption("durations_path", None)
    try:
        digest = hashlib.sha256(Path(durations).read_bytes()).hexdigest() if durations else None
    except OSError:
        digest = None
    return {"group": int(group), "splits": int(splits), "algorithm": config.getoption("splitting_algorithm", None),
            "durations_sha256": digest,
            "selection": {"args": [str(a) for a in config.args], "markexpr": config.option.markexpr or "",
                          "keyword": config.option.keyword or ""}}


def _check_writable(path: Path, option: str) -> None:
    """Refuse a report path that can never be written, before any test runs."""
    if path.is_dir():
        raise pytest.UsageError(f"{option} {path}: is a folder; give a file path")
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise pytest.UsageError(f"{option} {path}: {parent} is not a folder")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Before anything can fail: mark the previous results as stale, so no old report passes for this run."""
    config.addinivalue_line("markers", "nan_reports: tests of the reports and gates (HTML, results.json, compare, waivers)")
    if config.option.help or config.option.version or config.option.collectonly:
        return
    waivers = {}
    source = config.getoption("--nan-waivers")
    if source:
        waiver_path = Path(config.invocation_params.dir, source)
        try:
            waivers = load_waivers(waiver_path)
        except WaiverError as exc:
            raise pytest.UsageError(str(exc)) from exc
        config.pluginmanager.register(WaiverPlugin(waivers, waiver_path), "nan-waivers")
    if not is_controller(config):
        return
    timeout = config.getoption("timeout", None) if config.pluginmanager.hasplugin("timeout") else None
    collector = ResultCollector({k: w.as_dict() for k, w in waivers.items()}, float(timeout) if timeout else None)
    config.stash[COLLECTOR_KEY] = collector
    config.pluginmanager.register(collector, "nan-results")
    config.stash[STARTED_KEY] = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    path = json_path(config)
    if path is not None:
        _check_writable(path, "--nan-json")
        shard = shard_of(config)
        results.write(path, results.document([], {}, None, collected=0, finished=False,
                                             ended=f"not finished (started {config.stash[STARTED_KEY]})",
                                             extra={"shard": shard} if shard else None))
    from reports.html import write_placeholder

    write_placeholder(config)
    signal.signal(signal.SIGTERM, _terminate)


def _terminate(signum: int, frame: FrameType | None) -> None:
    """SIGTERM (a CI timeout) ends the run like Ctrl-C, so the reports are written and say it was interrupted."""
    raise KeyboardInterrupt(f"signal {signum} (SIGTERM)")


def ended(exitstatus: int, ran: int, collected: int) -> tuple[bool, str]:
    """Whether the session finished (every collected test reported, exit 0 or 1) and a word for how it ended."""
    word = EXIT_WORDS.get(int(exitstatus), f"exit status {int(exitstatus)}")
    if int(exitstatus) in (0, 1) and ran < collected:
        return False, f"stopped early: {ran} of {collected} tests ran"
    return int(exitstatus) in (0, 1) and collected > 0, word


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    path = json_path(config)
    if not is_controller(config) or COLLECTOR_KEY not in config.stash or path is None or config.option.collectonly:
        return
    collector = config.stash[COLLECTOR_KEY]
    records = collector.results()
    ran = sum(1 for r in records if r.outcome != "pending" and "::" in r.nodeid)
    finished, how = ended(exitstatus, ran, collector.collected)
    info = config.stash.get(RUN_INFO_KEY, None)
    from reports.diagnosis import diagnose

    extra = {"diagnosis": [d.to_dict() for d in diagnose(records)],
             "kernel": info.kernel_module if info else None, "backend": info.backend if info else None,
             "coverage_gaps": list(info.coverage_gaps) if info else [],
             "started": config.stash.get(STARTED_KEY, None), "ran": ran}
    shard = shard_of(config)
    if shard:
        extra["shard"] = shard
    doc = results.document(records, info.environment if info else {}, int(exitstatus),
                           collected=collector.collected, finished=finished, ended=how, extra=extra)
    if int(exitstatus) == 1 and records and finished and not any(r.failed for r in records):
        session.exitstatus = pytest.ExitCode.OK  # every failure was a waived case that crashed its worker
    try:
        results.write(path, doc)
    except OSError as exc:  # never lose the HTML report because this one failed
        tr = config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.write_line(f"nan-harness: could not write {path}: {exc}", red=True)
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    path = json_path(config)
    if is_controller(config) and path is not None and path.is_file() and not config.option.collectonly:
        terminalreporter.write_sep("-", f"Generated results file: {path}")
