"""Keep one kernel's device fault from poisoning the rest of the run.

A fault such as CUDA's "illegal memory access" leaves the device context unusable: every later case in that
process would fail for the wrong reason. After the faulting case has reported, the xdist worker exits so that
xdist blames that case and starts a fresh worker (the kernel always runs in a worker: harness.plugin).
Segfaults (the interpreter reading a wild address) already kill the worker; xdist reports them the same way.
A crash storm (harness.crash_storm) spares the worker starts: every worker skips the tests it covers from then on.
"""
from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from collections.abc import Generator
from pathlib import Path

import pytest

from harness import skips
from harness.activation import GROUP, active, in_process, is_worker
from harness.backends import any_fault
from harness.crash_storm import THRESHOLD, WORKER_INPUT, StormFile, Storms, exit_status, group_of, signature
from harness.options import OptionError
from verdict.crash_storm import GROUP_PROPERTY, RERUN_WITHOUT, STORM_PROPERTY, CrashGroup, CrashStorm
from verdict.not_run import NotRun

FATAL_KEY = pytest.StashKey[str]()
STORMS_KEY = pytest.StashKey[StormFile]()  # a worker: the run's storms, as its controller writes them
GROUP_KEY = pytest.StashKey[CrashGroup]()


def is_fatal_device_error(exc: BaseException) -> bool:
    """True when the exception text names a fault that corrupts a device context (any backend's markers)."""
    return any_fault(f"{type(exc).__name__}: {exc}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]
                              ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if call.excinfo is not None and active(item.config) and is_fatal_device_error(call.excinfo.value):
        item.stash[FATAL_KEY] = str(call.excinfo.value).splitlines()[0]
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    result = yield
    fault = item.stash.get(FATAL_KEY, None)
    if fault is not None:
        sys.stderr.write(f"device fault in {item.nodeid}: {fault}; the device context is lost; restarting this "
                         "xdist worker\n")
        sys.stderr.flush()
        os._exit(3)
    return result


class FaultDeduplicator:
    """Controller side: after a device fault the worker exits on purpose, and xdist reports the same item again
    as 'crashed'. That second report carries no news; it becomes a silent passed setup so the case is listed once,
    with its root cause, in the terminal, JUnit and HTML."""

    def __init__(self) -> None:
        self.faulted: set[str] = set()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" and report.failed and any_fault(str(report.longrepr)):
            self.faulted.add(report.nodeid)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: object) -> None:
        if crashitem in self.faulted:
            report.outcome = "passed"
            report.when = "setup"  # type: ignore[assignment]
            report.longrepr = None


class CrashStormWatch:
    """Controller side: counts each crashed worker by its test's group and how it ended; a storm it confirms is
    said in the terminal and written to the run's StormFile, which every worker reads before its next test."""

    def __init__(self, config: pytest.Config, storms: Storms, faulted: set[str]) -> None:
        self.config = config
        self.storms = storms
        self.faulted = faulted  # tests whose worker exited on purpose after a device fault (FaultDeduplicator)
        self.file = StormFile(Path(tempfile.mkdtemp(prefix="nan-storms-")) / "storms.json")
        self.file.write(storms)
        self.groups: dict[str, CrashGroup] = {}
        self.waived: set[str] = set()  # a waived (xfail) test's crash is the known failure: no storm from it
        self.started: dict[str, float] = {}
        timeout = config.getoption("timeout", None) if config.pluginmanager.hasplugin("timeout") else None
        self.timeout = float(timeout) if timeout else None

    def pytest_runtest_logstart(self, nodeid: str) -> None:
        self.started[nodeid] = time.monotonic()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> Generator[None, object, object]:
        self.note(report)  # before any report reads it
        return (yield)

    def note(self, report: pytest.TestReport) -> None:
        """Note each test's group; a skip naming a storm this controller never confirmed fails: only the
        controller decides a storm, never the process the kernel runs in."""
        for name, value in report.user_properties:
            if name == GROUP_PROPERTY and report.when == "setup":
                self.groups[report.nodeid] = CrashGroup.from_json(str(value))
            elif name == STORM_PROPERTY and not self.storms.confirmed(CrashStorm.from_json(str(value))):
                report.outcome = "failed"
                report.longrepr = f"skipped for a crash storm this run never confirmed: {value}"
        if report.when == "setup" and "xfail" in report.keywords:
            self.waived.add(report.nodeid)

    @pytest.hookimpl(optionalhook=True)
    def pytest_handlecrashitem(self, crashitem: str, report: pytest.TestReport, sched: object) -> None:
        group = self.groups.get(crashitem)
        if group is None or crashitem in self.waived:
            return
        elapsed = time.monotonic() - self.started.get(crashitem, time.monotonic())
        sign = signature(exit_status(getattr(report, "node", None)), fault=crashitem in self.faulted,
                         timed_out=self.timeout is not None and elapsed >= self.timeout)
        found = self.storms.crashed(crashitem, group, sign)
        if found:
            self.file.write(self.storms)
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        for storm in found if reporter is not None else ():
            reporter.ensure_newline()
            reporter.write_line(f"nan-harness: crash storm in {storm.scope.describe()}: {len(storm.crashes)} crashes "
                                f"with {sign}; its other tests are not run ({RERUN_WITHOUT} runs each)", yellow=True)

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: object) -> None:
        node.workerinput[WORKER_INPUT] = str(self.file.path)  # type: ignore[attr-defined]

    def pytest_unconfigure(self) -> None:
        shutil.rmtree(self.file.path.parent, ignore_errors=True)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup(GROUP).addoption(THRESHOLD.flag, default=THRESHOLD.default, metavar=THRESHOLD.metavar,
                                     help=THRESHOLD.help)


def pytest_configure(config: pytest.Config) -> None:
    if config.option.help or config.option.version or not active(config):
        return
    try:
        threshold = THRESHOLD.parse(getattr(config.option, THRESHOLD.dest, THRESHOLD.default))
    except OptionError as exc:
        raise pytest.UsageError(str(exc)) from exc
    setattr(config.option, THRESHOLD.dest, threshold)
    if is_worker(config):
        handed = config.workerinput.get(WORKER_INPUT)  # type: ignore[attr-defined]
        if handed:
            config.stash[STORMS_KEY] = StormFile(Path(str(handed)))
        return
    dedup = FaultDeduplicator()
    config.pluginmanager.register(dedup, "nan-fault-dedup")
    if threshold and not in_process(config):
        config.pluginmanager.register(CrashStormWatch(config, Storms(threshold), dedup.faulted), "nan-crash-storm")


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """A worker's items carry their group, so the controller can count a crash by it (after the case parameters)."""
    if STORMS_KEY not in config.stash:
        return
    for item in items:
        item.stash[GROUP_KEY] = group_of(item)
        item.user_properties.append((GROUP_PROPERTY, item.stash[GROUP_KEY].to_json()))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test a storm covers is not run: it says which storm, and the option that runs it."""
    channel, group = item.config.stash.get(STORMS_KEY, None), item.stash.get(GROUP_KEY, None)
    storm = channel.current().covering(group) if channel is not None and group is not None else None
    if storm is not None:
        item.user_properties.append((STORM_PROPERTY, storm.to_json()))
        skips.skip(item, NotRun(storm.scope.describe(), storm.reason(), commands=(RERUN_WITHOUT,)))
