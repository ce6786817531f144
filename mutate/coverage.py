"""Which lines of the module under test each test reaches, recorded once on the original (per-test coverage).

A test that never reaches a mutant's change cannot kill it and is not run for it (Stryker's per-test coverage,
PIT's coverage-ordered tests). A trace function records Python lines (under the Triton interpreter a jit body runs
as Python); a compiled kernel's launch marks every line of it and its jit callees as reached. The same observation
records each launch's specialization (mutate.specs.Spec), the specs mutate.tce compiles mutants for. The original's
warm workers (mutate.warm) trace each test's body with it.
"""
from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from types import CodeType, FrameType
from typing import Any

from mutate.specs import named_jit_functions, specs_from_call

Lines = dict[str, set[int]]  # file -> line numbers reached
Launches = dict[str, set[str]]  # "file::qualname" of a kernel -> the Spec JSON of each launch


def _launch_code(module: str, owner: str) -> CodeType | None:
    """The code object of Triton's `module.owner.run`, a kernel launch (None where this Triton lacks it)."""
    try:
        run = getattr(getattr(importlib.import_module(module), owner), "run", None)
    except (ImportError, AttributeError):
        return None
    return getattr(run, "__code__", None)


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
        self._jit_run = _launch_code("triton.runtime.jit", "JITFunction")
        interpreted = _launch_code("triton.runtime.interpreter", "InterpretedFunction")
        self._launch_codes = {c for c in (self._jit_run, interpreted) if c is not None}

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
