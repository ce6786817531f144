"""Keep one kernel's device fault, or a storm of crashes, from poisoning the rest of the run.

A fault such as CUDA's "illegal memory access" leaves the device context unusable: every later case in that
process would fail for the wrong reason. After the faulting case has reported, the xdist worker exits so that
xdist blames that case and starts a fresh worker (the kernel always runs in a worker: harness.plugin).
Segfaults (the interpreter reading a wild address) already kill the worker; xdist reports them the same way.

Crash storms: each crashed test costs a worker start (about 12 s on an H200: torch, Triton, the device, collection),
so a kernel that ends its process on every bf16 input cost a run ~100 of them. The controller counts crashes by the
test's group (test function, family, path, dtype: attached at collection) and signature (how the worker ended); at
`--nan-crash-storm` crashes the group storms, and once as many more crashes with its signature hit other groups of
its dtype and path, every test of that dtype through that path (or naming no path) storms. Every worker skips the
tests a storm covers from its next test on (judged `not_run`, never passed, each naming the storm); every crashed
test stays a failure, rerun in a fresh process as any other.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Generator, Mapping
from pathlib import Path

import pytest
import torch

from cases.formats import BY_DTYPE, FORMATS
from harness import skips
from harness.activation import GROUP, active, in_process, is_worker
from harness.backends import any_fault
from harness.options import Numeric, OptionError
from verdict.crash_storm import GROUP_PROPERTY, RERUN_WITHOUT, STORM_PROPERTY, CrashGroup, CrashStorm
from verdict.not_run import NotRun
from verdict.record import PARAMS_PROPERTY, CaseParams

THRESHOLD = Numeric("--nan-crash-storm", 3, 0, 100_000, "N",
                    "after N crashes with one signature (exit status, signal, timeout, device fault) in one group "
                    "of tests (test, family, path, dtype) the group's other tests are not run, each judged not_run "
                    "naming the storm; once one group stormed and N more such crashes hit other groups of its path "
                    "and dtype, no other test of that dtype through that path (or naming none) runs either. 0: every "
                    "test runs in a worker however many crash. Default: 3")
WORKER_INPUT = "nan_crash_storms"  # the path of the run's StormFile, handed to each worker xdist starts
FATAL_KEY = pytest.StashKey[str]()
STORMS_KEY = pytest.StashKey["StormFile"]()  # a worker: the run's storms, as its controller writes them
GROUP_KEY = pytest.StashKey[CrashGroup]()


def dtype_name(value: object) -> str:
    """A test parameter as a dtype's short name ('bf16'), or '' when it is none."""
    if isinstance(value, str):
        return value if value in FORMATS else ""
    found = BY_DTYPE.get(value) if isinstance(value, torch.dtype) else None
    return found.name if found else ""


def group_of(item: pytest.Item) -> CrashGroup:
    """The item's group, from its case parameters (family cases) and its `path` and `dtype` test parameters."""
    params: Mapping[str, object] = getattr(getattr(item, "callspec", None), "params", {})
    case = next((CaseParams.from_json(str(v)) for k, v in item.user_properties if k == PARAMS_PROPERTY), None)
    path = params.get("path")
    return CrashGroup(str(getattr(item, "originalname", "") or item.name), case.family if case else "",
                      path if isinstance(path, str) else "", case.dtype if case else dtype_name(params.get("dtype")))


def signature(status: int | None, *, fault: bool = False, timed_out: bool = False) -> str:
    """How a worker ended, as a storm counts it: a device fault, a timeout, a signal or an exit status."""
    if fault:
        return "device fault"
    if timed_out:
        return "timeout"
    if status is None:
        return "a lost worker (exit status unknown)"
    if status < 0:
        try:
            return f"signal {signal.Signals(-status).name}"
        except ValueError:
            return f"signal {-status}"
    return f"exit status {status}"


def exit_status(node: object, wait_s: float = 5.0) -> int | None:
    """A dead xdist worker's exit status, where execnet's popen gateway holds its process; None elsewhere."""
    process = getattr(getattr(getattr(node, "gateway", None), "_io", None), "popen", None)
    try:
        return None if process is None else int(process.wait(timeout=wait_s))
    except Exception:  # still running past wait_s, or not a Popen: the signature says unknown
        return None


class Storms:
    """The controller's crashes by group and signature, and the storms they confirmed (in order)."""

    def __init__(self, threshold: int) -> None:
        self.threshold = threshold
        self.crashes: dict[tuple[CrashGroup, str], list[str]] = {}
        self.storms: list[CrashStorm] = []

    def covering(self, group: CrashGroup) -> CrashStorm | None:
        """The first storm whose scope holds the group (a group's own before a wide one)."""
        return next((s for s in self.storms if s.scope.covers(group)), None)

    def crashed(self, nodeid: str, group: CrashGroup, sign: str) -> list[CrashStorm]:
        """Count one crash; the storms it confirms (its group's, then a wide one), none below the threshold, in a
        group a storm already covers (a worker started before it) or with storms off (threshold 0)."""
        if self.threshold <= 0 or self.covering(group) is not None:
            return []
        ids = self.crashes.setdefault((group, sign), [])
        ids.append(nodeid)
        new = [CrashStorm(sign, group, tuple(ids), self.threshold)] if len(ids) >= self.threshold else []
        self.storms += new
        wide = self.wide(group, sign)
        self.storms += [wide] if wide is not None else []
        return new + ([wide] if wide is not None else [])

    def wide(self, group: CrashGroup, sign: str) -> CrashStorm | None:
        """A storm over the group's dtype and path once one group of them stormed with this signature and the
        threshold's count of crashes with it hit other groups of them too; None before."""
        existing, scope = self.covering(group), group.wide()
        if not group.dtype or (existing is not None and not existing.scope.test):
            return None
        alike = {g: ids for (g, s), ids in self.crashes.items() if s == sign and scope.covers(g)}
        stormed = next((g for g in alike if any(st.scope == g and st.signature == sign for st in self.storms)), None)
        others = [n for g, ids in alike.items() if g != stormed for n in ids]
        if stormed is None or len(others) < self.threshold:
            return None
        return CrashStorm(sign, scope, (*alike[stormed], *others), self.threshold,
                          (stormed, *(g for g in alike if g != stormed)))

    def confirmed(self, storm: CrashStorm) -> bool:
        """True for a storm this controller confirmed (a worker's report naming any other was forged there)."""
        return storm in self.storms


class StormFile:
    """The storms so far, in a file the controller rewrites at each storm and every worker re-reads before a test
    when it changed: a worker started before a storm skips its tests from then on, without crashing first."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seen: tuple[int, int] | None = None
        self.storms = Storms(0)

    def write(self, storms: Storms) -> None:
        """Replace the file whole (a worker never reads half of it)."""
        part = self.path.with_name(f"{self.path.name}.part")
        part.write_text(json.dumps([s.to_dict() for s in storms.storms]), encoding="utf-8")
        os.replace(part, self.path)

    def current(self) -> Storms:
        """The storms as the file holds them now (read again only when it changed; unreadable: none known)."""
        try:
            stat = self.path.stat()
            if (stat.st_mtime_ns, stat.st_size) != self.seen:
                self.storms.storms = [CrashStorm.from_dict(d) for d in json.loads(self.path.read_text("utf-8"))]
                self.seen = (stat.st_mtime_ns, stat.st_size)
        except (OSError, ValueError, TypeError, AttributeError):
            pass
        return self.storms


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
