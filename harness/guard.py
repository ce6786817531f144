"""Every call into the module under test goes through `call`: whatever it raises becomes a verdict, never pytest's.

A kernel that raises `pytest.skip`, `pytest.xfail`, `unittest.SkipTest`, `SystemExit` or `KeyboardInterrupt` from
inside a call would otherwise decide the test's outcome (a skip, a waiver, a stopped run). Here each is wrapped
in `KernelRaised`, a plain Exception: a refusal when the input is outside the domain, a failure on input it must
count. Only a real signal (Ctrl-C, SIGTERM) seen by `watch_signals` still stops the run.
"""
from __future__ import annotations

import signal
import unittest
from collections.abc import Callable
from types import FrameType
from typing import Any, TypeVar

from _pytest.outcomes import OutcomeException

T = TypeVar("T")
_SIGNALS: list[int] = []  # signals this process received while tests ran


class KernelRaised(Exception):
    """The module under test raised `original`; its text is the original's `Type: first line`."""

    def __init__(self, original: BaseException) -> None:
        text = str(original).strip()
        first = text.splitlines()[0] if text else ""
        super().__init__(f"{type(original).__name__}: {first}")
        self.original = original

    @property
    def is_exception(self) -> bool:
        """Whether the kernel raised an Exception (a refusal may); SystemExit, KeyboardInterrupt or pytest's
        outcome exceptions are never an acceptable answer from a kernel."""
        return isinstance(self.original, Exception) and not _is_pytest_outcome(self.original)


def _is_pytest_outcome(exc: BaseException) -> bool:
    """pytest's skip/xfail/fail/exit and unittest's SkipTest: exceptions that steer the test runner."""
    return isinstance(exc, (OutcomeException, unittest.SkipTest))


def call(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Run fn from the module under test; anything it raises, of any class, comes back as KernelRaised."""
    __tracebackhide__ = True
    seen = len(_SIGNALS)
    try:
        return fn(*args, **kwargs)
    except KernelRaised:
        raise
    except BaseException as exc:  # noqa: BLE001 - the kernel must not steer pytest: everything is a verdict
        if isinstance(exc, KeyboardInterrupt) and len(_SIGNALS) > seen:
            raise  # a real Ctrl-C or SIGTERM arrived during the call: stop the run
        raise KernelRaised(exc) from exc


def guarded(fn: Callable[..., T]) -> Callable[..., T]:
    """fn, every call of which goes through `call` (the module's own function object is kept as __wrapped__)."""

    def wrapper(*args: Any, **kwargs: Any) -> T:
        __tracebackhide__ = True
        return call(fn, *args, **kwargs)

    wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
    wrapper.__name__ = getattr(fn, "__name__", "guarded")
    return wrapper


def _record(signum: int, frame: FrameType | None, previous: Callable[[int, FrameType | None], Any]) -> None:
    _SIGNALS.append(signum)
    previous(signum, frame)
    raise KeyboardInterrupt(f"signal {signum}")


def watch_signals() -> None:
    """Remember SIGINT and SIGTERM as they arrive (then handle them as before), so `call` tells a real interrupt
    from a KeyboardInterrupt the kernel raised itself. Only Python-level handlers are chained; main thread only."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            previous = signal.getsignal(signum)
        except ValueError:
            return
        if not callable(previous) or getattr(previous, "nan_guard", False):
            continue

        def handler(s: int, f: FrameType | None, previous: Any = previous) -> None:
            _record(s, f, previous)

        handler.nan_guard = True  # type: ignore[attr-defined]
        try:
            signal.signal(signum, handler)
        except ValueError:  # not the main thread
            return
