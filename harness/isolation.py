"""Keep one kernel's device fault from poisoning the rest of the run.

A fault such as CUDA's "illegal memory access" leaves the device context unusable: every later case in that
process would fail for the wrong reason. After the faulting case has reported, an xdist worker exits so that
xdist blames that case and starts a fresh worker; a serial run stops cleanly, keeping its reports.
Segfaults (the interpreter reading a wild address) already kill the worker; xdist reports them the same way.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Generator

import pytest

from harness.backends import any_fault

FATAL_KEY = pytest.StashKey[str]()


def is_fatal_device_error(exc: BaseException) -> bool:
    """True when the exception text names a fault that corrupts a device context (any backend's markers)."""
    return any_fault(f"{type(exc).__name__}: {exc}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    report = yield
    if call.excinfo is not None and is_fatal_device_error(call.excinfo.value):
        item.stash[FATAL_KEY] = str(call.excinfo.value).splitlines()[0]
    return report


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    result = yield
    fault = item.stash.get(FATAL_KEY, None)
    if fault is not None:
        message = f"device fault in {item.nodeid}: {fault}; the device context is lost"
        if hasattr(item.config, "workerinput"):
            sys.stderr.write(message + "; restarting this xdist worker\n")
            sys.stderr.flush()
            os._exit(3)
        pytest.exit(message + " (run with -n 1 or more to isolate faults and go on)", returncode=1)
    return result
