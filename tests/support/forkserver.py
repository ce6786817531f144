"""A Python with torch already imported that forks one pytest run per request.

Every sub-run of the self-test would otherwise spend about 1.5 s of its 2.5 s importing torch. The server
imports torch and pytest's plugins once (tests.support.forkworkers.preload), nothing of this repository but the
tests' own support modules, and forks a child per run:
the child sets the run's cwd, environment and output file, calls pytest.main, and exits with its status. A child
killed by a signal reports a negative return code, like subprocess does. Protocol, one JSON object per line:
request {"args", "cwd", "env", "log"}, then replies {"pid"} and {"returncode"}.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import traceback
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from tests.support.forkworkers import SWITCH, preload, writes_bytecode
from tests.support.limits import hang_limit


def _child(job: dict) -> None:
    code = 3
    try:
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        log = os.open(job["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        os.chdir(job["cwd"])
        os.environ.clear()
        os.environ.update(job["env"])
        sys.dont_write_bytecode = not writes_bytecode(job["env"])
        # PRELOAD's plugins were imported before pytest could mark them for assertion rewriting; it says so, once
        # per plugin, in every run (they are third-party plugins: their own asserts are all that goes unrewritten)
        args = [*job["args"], "-W", "ignore::pytest.PytestAssertRewriteWarning"]
        sys.argv = ["pytest", *args]
        sys.path.insert(0, job["cwd"])  # what `python -m pytest` does
        import pytest

        code = int(pytest.main(args))
    except BaseException:  # noqa: BLE001 - report anything, then leave without the parent's atexit handlers
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve() -> None:
    preload()
    out = sys.stdout
    for line in sys.stdin:
        job = json.loads(line)
        out.flush()
        pid = os.fork()
        if pid == 0:
            _child(job)
        out.write(json.dumps({"pid": pid}) + "\n")
        out.flush()
        _, status = os.waitpid(pid, 0)
        out.write(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}) + "\n")
        out.flush()


class ForkServer:
    """Client side: start the server once, then run(args, cwd, env, log, timeout) -> return code."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.forkserver"],
            cwd=Path(__file__).resolve().parents[2],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )

    def _reply(self, timeout: float) -> dict | None:
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not ready:
            return None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("fork server exited")
        return json.loads(line)

    def run(self, args: Sequence[str], cwd: Path, env: dict[str, str], log: Path, timeout: float) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"args": list(args), "cwd": str(cwd), "env": env, "log": str(log)}) + "\n")
        self.proc.stdin.flush()
        started = self._reply(hang_limit(slowest_s=3.0))  # the server's torch import, 2.3 s beside a tox run
        if started is None:
            raise RuntimeError("fork server did not start the run")
        done = self._reply(timeout)
        if done is None:
            os.kill(started["pid"], signal.SIGKILL)
            self._reply(hang_limit(slowest_s=0.1))  # waitpid on a killed child
            return -signal.SIGKILL
        return int(done["returncode"])

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=hang_limit(slowest_s=0.7))  # measured beside a tox run
            except subprocess.TimeoutExpired:
                self.proc.kill()


@contextmanager
def fork_server() -> Iterator[ForkServer | None]:
    """A server for a fixture's sub-runs, one at a time (NAN_SELFTEST_FORK=0: None, plain subprocesses)."""
    if os.environ.get(SWITCH, "1") == "0" or not hasattr(os, "fork"):
        yield None
        return
    forks = ForkServer()
    try:
        yield forks
    finally:
        forks.close()


if __name__ == "__main__":
    serve()
