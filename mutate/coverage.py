"""Which lines of the module under test each test reaches, recorded once on the original (per-test coverage).

A mutant changes one place; a test that never reaches that place behaves as on the original, so it cannot kill the
mutant and is not run for it (Stryker's per-test coverage, PIT's coverage-ordered tests). A mutant no test reaches
is `no_coverage`: nothing on this backend could notice it.

Python lines are recorded by a trace function. Under the Triton interpreter a `@triton.jit` body runs as Python
and its lines are recorded like any other; compiled kernels run on the device, so there a launch of a kernel marks
every line of it as reached (`JITFunction.run`, observed by the same trace function).
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import CodeType, FrameType
from typing import Any

Lines = dict[str, set[int]]  # file -> line numbers reached


def _jit_run_code() -> CodeType | None:
    """The code object of Triton's compiled-kernel launch (None when Triton is missing or laid out otherwise)."""
    try:
        from triton.runtime.jit import JITFunction
    except ImportError:
        return None
    return getattr(getattr(JITFunction, "run", None), "__code__", None)


def _function_lines(code: CodeType) -> set[int]:
    """Every line of a function, nested code included."""
    lines = {line for _, _, line in code.co_lines() if line is not None}
    for const in code.co_consts:
        if isinstance(const, CodeType):
            lines |= _function_lines(const)
    return lines


class Recorder:
    """A trace function recording the lines of `files` that run, and the whole of every kernel of them launched."""

    def __init__(self, files: Iterable[str]) -> None:
        self.files = frozenset(files)
        self.lines: Lines = {}
        self._jit_run = _jit_run_code()

    def __call__(self, frame: FrameType, event: str, arg: object) -> Any:
        code = frame.f_code
        if code.co_filename in self.files:
            self.lines.setdefault(code.co_filename, set()).add(frame.f_lineno)
            return self._local
        if code is self._jit_run and event == "call":
            fn = getattr(frame.f_locals.get("self"), "fn", None)
            fn_code = getattr(fn, "__code__", None)
            if fn_code is not None and fn_code.co_filename in self.files:
                self.lines.setdefault(fn_code.co_filename, set()).update(_function_lines(fn_code))
        return None

    def _local(self, frame: FrameType, event: str, arg: object) -> Any:
        if event == "line":
            self.lines.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
        return self._local

    def take(self) -> Lines:
        """What was recorded since the last take, and start afresh."""
        lines, self.lines = self.lines, {}
        return lines


@contextmanager
def recording(recorder: Recorder) -> Iterator[Recorder]:
    """Trace this thread and threads started meanwhile; the previous trace functions come back afterwards."""
    before, before_threads = sys.gettrace(), threading.gettrace()
    sys.settrace(recorder)
    threading.settrace(recorder)
    try:
        yield recorder
    finally:
        sys.settrace(before)
        threading.settrace(before_threads)  # type: ignore[arg-type]


def to_json(lines: Lines) -> dict[str, list[int]]:
    return {file: sorted(found) for file, found in lines.items()}


def reaches(covered: dict[str, list[int]] | dict[str, set[int]], file: str, lines: Iterable[int]) -> bool:
    """Whether a test's coverage holds any of `lines` of `file`."""
    found = covered.get(file)
    return bool(found) and any(line in found for line in lines)  # type: ignore[operator]
