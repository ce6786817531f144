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

FATAL_KEY = pytest.StashKey[str]()

# Messages of errors after which the device context cannot be trusted (CUDA runtime, torch_npu / CANN).
FATAL_DEVICE_ERRORS: tuple[str, ...] = (
    "illegal memory access",
    "unspecified launch failure",
    "device-side assert",
    "misaligned address",
    "illegal instruction",
    "cuda error: an illegal",
    "aicore exception",
    "aivec exception",
    "ez9999",
    "acl stream synchronize failed",
    "npu function error",
)


def is_fatal_device_error(exc: BaseException) -> bool:
    """True when the exception text names a fault that corrupts the device context."""
    text = f"{type(exc).__name__}: {exc}".lower()
    return any(marker in text for marker in FATAL_DEVICE_ERRORS)


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
