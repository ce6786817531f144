"""Warm workers seen from the deciding process: start them, send jobs, notice a death or a hang, replace them.

The deciding process never imports a kernel: it talks to `python -m mutate.warm` children over pipes. A worker
that dies during a case (a segfault, `os._exit`, a device fault that ends the process) or stays in one case past
its limit is ended and replaced; the job's answer then names that case and how the worker ended.
"""
from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import cli, processes
from mutate.run import run_env

STARTUP_S = 600.0  # a worker's start (torch, Triton, the case table): seconds on a warm machine; a hang past this
DIED, HUNG = "died", "hung"


@dataclass
class Answer:
    """A job's reply, or how the worker ended during it (`ended`: died/hung, `case`: the case it was in)."""

    reply: dict[str, Any] = field(default_factory=dict)
    ran: dict[str, dict[str, Any]] = field(default_factory=dict)  # case -> {"seconds", "coverage"} as streamed
    ended: str = ""
    case: str = ""
    detail: str = ""
    seconds: float = 0.0
    budget: bool = False  # stopped because the run's deadline came, not the case's own limit


@dataclass(frozen=True)
class Session:
    """What every warm worker of a run starts with: the backend, the original's snapshot (module, folder), the
    case families, a marker selection and the user's pytest arguments."""

    device: str
    original: tuple[str, Path]
    families: tuple[str, ...] = ()
    select: str = ""
    pytest_args: tuple[str, ...] = ()

    def start(self, log: Path, card: int | None, visibility_var: str | None, jobs: int,
              compile_only: bool = False) -> WorkerProcess:
        """One of `jobs` workers side by side (each its share of the CPU's threads), pinned to `card` through the
        backend's visibility variable."""
        return WorkerProcess(self, run_env(self.device, card, visibility_var), log, compile_only=compile_only,
                             threads=max(1, (os.cpu_count() or 1) // max(1, jobs)))

    def argv(self) -> list[str]:
        module, folder = self.original
        return [f"--device={self.device}", f"--kernel={module}", f"--kernel-path={folder}",
                *[f"--nan-family={f}" for f in self.families], *([f"--select={self.select}"] if self.select else []),
                "--", *self.pytest_args]


class WorkerProcess:
    """One `python -m mutate.warm` child: its pipes, a reader thread, its log."""

    def __init__(self, session: Session, env: dict[str, str], log: Path, compile_only: bool = False,
                 threads: int = 0) -> None:
        log.parent.mkdir(parents=True, exist_ok=True)
        self.log_path = log
        self._log = open(log, "ab")
        argv = [sys.executable, "-m", "mutate.warm", f"--log={log}", *(["--compile-only"] if compile_only else []),
                *([f"--threads={threads}"] if threads else []), *session.argv()]
        self.proc = processes.spawn(argv, cwd=cli.home(), env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=self._log)
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.cases: list[str] = []
        self.fast: list[str] = []

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self.lines.put(raw.decode("utf-8", "replace"))
        self.lines.put(None)

    def next_message(self, limit_s: float) -> dict[str, Any] | None:
        """The next reply within limit_s; None when the worker ended; raises TimeoutError past the limit."""
        try:
            line = self.lines.get(timeout=max(0.1, limit_s))
        except queue.Empty:
            raise TimeoutError from None
        if line is None:
            return None
        try:
            return json.loads(line)
        except ValueError:
            return {"op": "noise", "text": line[:200]}

    def started(self) -> str:
        """Wait for `ready`; '' when ready, else why not."""
        try:
            while True:
                message = self.next_message(STARTUP_S)
                if message is None:
                    return f"the worker ended while starting (exit {self.proc.wait()}): see {self.log_path}"
                if message.get("op") == "ready":
                    self.cases = list(message.get("cases", []))
                    self.fast = list(message.get("fast", []))
                    return ""
        except TimeoutError:
            self.stop()
            return f"the worker did not start within {STARTUP_S:.0f} s"

    def ask(self, job: dict[str, Any], limits: dict[str, float], default_limit: float,
            until: float = float("inf")) -> Answer:
        """Send one job; wait for its answer, each case within its own limit and the whole before `until` (a
        time.monotonic() deadline: past it the worker is ended and the answer says so)."""
        start = time.monotonic()
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write((json.dumps(job) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return Answer(ended=DIED, detail=f"the worker was gone (exit {self.proc.poll()})")
        case, limit = "", default_limit
        ran: dict[str, dict[str, Any]] = {}
        while True:
            waited = time.monotonic()
            try:
                message = self.next_message(min(limit, until - waited))
            except TimeoutError:
                self.stop()
                if until - waited < limit:
                    return Answer(ended=HUNG, case=case, detail="the run's budget ran out", budget=True,
                                  seconds=time.monotonic() - start, ran=ran)
                return Answer(ended=HUNG, case=case, detail=f"no answer within {limit:.0f} s",
                              seconds=time.monotonic() - start, ran=ran)
            if message is None:
                code = self.proc.wait()
                return Answer(ended=DIED, case=case, detail=f"the worker ended (exit {code}{_signal_name(code)})",
                              seconds=time.monotonic() - start, ran=ran)
            if message.get("op") == "case":
                case = message["nodeid"]
                limit = limits.get(case, default_limit)
            elif message.get("op") == "ran":
                ran[message["nodeid"]] = message
            elif message.get("op") == "done":
                return Answer(reply=message, seconds=time.monotonic() - start, ran=ran)

    def stop(self) -> None:
        """End the worker and everything it started (its own process group)."""
        processes.stop(self.proc)
        self.proc.wait()
        self._log.close()

    def close(self) -> None:
        """Let the worker finish on end of input; force it after a few seconds."""
        if self.proc.poll() is None and self.proc.stdin is not None:
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=10)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.stop()


def _signal_name(code: int) -> str:
    """The signal's name after a comma (`, SIGSEGV`) for an exit by a known signal (a negative status), else nothing."""
    names = {-sig.value: sig.name for sig in signal.Signals}
    return f", {names[code]}" if code in names else ""
