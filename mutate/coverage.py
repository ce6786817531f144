"""Which lines of the module under test each test reaches, recorded once on the original (per-test coverage).

A mutant changes one place; a test that never reaches that place behaves as on the original, so it cannot kill the
mutant and is not run for it (Stryker's per-test coverage, PIT's coverage-ordered tests). A mutant no test reaches
is `no_coverage`: nothing on this backend could notice it.

Python lines are recorded by a trace function. Under the Triton interpreter a `@triton.jit` body runs as Python
and its lines are recorded like any other; compiled kernels run on the device, so there a launch of a kernel marks
every line of it as reached (`JITFunction.run`, observed by the same trace function).

The same observation records each launch's specialization (mutate.specs.Spec) of a kernel of the unit, under
the interpreter (`InterpretedFunction.run`) as on a device: the specs mutate.tce compiles the mutants for.
"""
from __future__ import annotations

import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import CodeType, FrameType
from typing import Any

from mutate.specs import named_jit_functions, specs_from_call

Lines = dict[str, set[int]]  # file -> line numbers reached
Launches = dict[str, set[str]]  # "file::qualname" of a kernel -> the Spec JSON of each launch


def _jit_run_code() -> CodeType | None:
    """The code object of Triton's compiled-kernel launch (None when Triton is missing or laid out otherwise)."""
    try:
        from triton.runtime.jit import JITFunction
    except ImportError:
        return None
    return getattr(getattr(JITFunction, "run", None), "__code__", None)


def _interpreted_run_code() -> CodeType | None:
    """The code object of the interpreter's launch (InterpretedFunction.run), where this Triton has one."""
    try:
        from triton.runtime.interpreter import InterpretedFunction
    except ImportError:
        return None
    return getattr(getattr(InterpretedFunction, "run", None), "__code__", None)


def kernel_key(file: str, qualname: str) -> str:
    """How a kernel is named in Launches: its file and qualified name."""
    return f"{file}::{qualname}"


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
        self.launches: Launches = {}
        self._kernels: dict[int, Lines] = {}  # a launched kernel's lines, callees included, by id of its JITFunction
        self._jit_run = _jit_run_code()
        self._launch_codes = {c for c in (self._jit_run, _interpreted_run_code()) if c is not None}

    def __call__(self, frame: FrameType, event: str, arg: object) -> Any:
        code = frame.f_code
        if code.co_filename in self.files:
            self.lines.setdefault(code.co_filename, set()).add(frame.f_lineno)
            return self._local
        if code in self._launch_codes and event == "call":
            local = frame.f_locals
            fn = getattr(local.get("self"), "fn", None)
            fn_code = getattr(fn, "__code__", None)
            if fn_code is not None and fn_code.co_filename in self.files:
                if code is self._jit_run:  # compiled: the kernel's lines and its jit callees' ran on the device
                    for file, lines in self._kernel_lines(local["self"]).items():
                        self.lines.setdefault(file, set()).update(lines)
                self._launched(local, fn_code.co_filename, fn.__qualname__)
        return None

    def _kernel_lines(self, jit: Any) -> Lines:
        """Every line of a launched kernel and of the jit functions it calls, transitively, in `files` (once per
        kernel: a compiled launch runs them all, and no trace function sees inside)."""
        found = self._kernels.get(id(jit))
        if found is None:
            found, pending, seen = {}, [jit], set()
            while pending:
                current = pending.pop()
                code = getattr(getattr(current, "fn", None), "__code__", None)
                if code is None or id(current) in seen:
                    continue
                seen.add(id(current))
                if code.co_filename in self.files:
                    found.setdefault(code.co_filename, set()).update(_function_lines(code))
                pending += named_jit_functions(current)
            self._kernels[id(jit)] = found
        return found

    def _launched(self, local: dict[str, Any], file: str, qualname: str) -> None:
        """Record the launch's Spec; a launch whose Spec cannot be made is recorded without one ("")."""
        try:
            spec = specs_from_call(local["self"], local.get("args", ()), local.get("kwargs", {})).to_json()
        except Exception:  # noqa: BLE001 - an argument no rule types: the kernel cannot be compiled alike
            spec = ""
        self.launches.setdefault(kernel_key(file, qualname), set()).add(spec)

    def _local(self, frame: FrameType, event: str, arg: object) -> Any:
        if event == "line":
            self.lines.setdefault(frame.f_code.co_filename, set()).add(frame.f_lineno)
        return self._local

    def take(self) -> Lines:
        """What was recorded since the last take, and start afresh."""
        lines, self.lines = self.lines, {}
        return lines

    def take_launches(self) -> Launches:
        """The launches recorded since the last call, and start afresh."""
        launches, self.launches = self.launches, {}
        return launches


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
