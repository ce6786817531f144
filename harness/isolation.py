"""Keep one kernel's device fault from poisoning the rest of the run.

A fault such as CUDA's "illegal memory access" leaves the device context unusable: every later case in that
process would fail for the wrong reason. After the faulting case has reported, the xdist worker exits so that
xdist blames that case and starts a fresh worker (the kernel always runs in a worker: harness.plugin).
Segfaults (the interpreter reading a wild address) already kill the worker; xdist reports them the same way.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Generator

import pytest

from harness.activation import active, is_worker
from harness.backends import any_fault

FATAL_KEY = pytest.StashKey[str]()


def is_fatal_device_error(exc: BaseException) -> bool:
    """True when the exception text names a fault that corrupts a device context (any backend's markers)."""
    return any_fault(f"{type(exc).__name__}: {exc}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
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


def pytest_configure(config: pytest.Config) -> None:
    if active(config) and not is_worker(config):
        config.pluginmanager.register(FaultDeduplicator(), "nan-fault-dedup")
