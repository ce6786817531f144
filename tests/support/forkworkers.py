"""Forks the xdist workers of every pytest a self-test session starts, from a Python with torch, pytest's plugins
and (under the interpreter) Triton imported.

A pytest controller starts each xdist worker (and each replacement after a crash) as a fresh `python -u -c
<execnet bootstrap>`, which spends about 3 s importing torch and the plugins before its first case; most runs the
self-test starts (its own sub-runs, the nightly's, mutate's, the harness's reruns) are a few cases, so that start
was most of their time. Under a session that started this server (tests/conftest.py sets NAN_SELFTEST_WORKERS to its
socket), `point_at_launcher` sets the `python=` of xdist's popen specs to tests/support/worker_launch.py, which
hands its streams to this server; the server forks a child that becomes that interpreter (streams, directory,
environment, `sys.argv`, a fresh `__main__`) and runs the bootstrap, and it reports the child's exit status back.

Declined, so the launcher runs the real interpreter: another interpreter, another working directory (the
repository's own modules are already imported here), start-up variables other than the server's (STARTUP_VARS),
interpreter options other than xdist's `-u -c`, or NAN_SELFTEST_FORK=runs in the worker's environment.
"""
from __future__ import annotations

import atexit
import gc
import importlib
import json
import os
import select
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import types
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

LAUNCHER = Path(__file__).with_name("worker_launch.py")
ROOT = Path(__file__).resolve().parents[2]  # where the server runs: the folder whose modules it imports
# NAN_SELFTEST_FORK=runs: the sub-runs are forked, their workers are real interpreters (set by a sub-run whose
# subject is the process tree below its controller: a forked worker is the server's child, not the controller's)
SWITCH, RUNS_ONLY = "NAN_SELFTEST_FORK", "runs"
REAL_WORKERS = {SWITCH: RUNS_ONLY}  # a sub-run's env for that
WORKERS_VAR = "NAN_SELFTEST_WORKERS"  # the server's socket, for every pytest the self-test starts (tests/conftest.py)
INTERPRET_VAR = "TRITON_INTERPRET"
# read when an interpreter, a library or Triton starts: a run whose environment gives one another value than the
# server's gets a fresh Python, not a fork
STARTUP_VARS = ("PYTHON", INTERPRET_VAR, "OMP_", "MKL_", "TORCH_", "LD_")
# ...except this one, which a fork takes on as the interpreter would (sys.dont_write_bytecode): the sub-runs read the
# bytecode the outer run wrote and write none, their workers forked all the same
BYTECODE_VAR = "PYTHONDONTWRITEBYTECODE"
_WAKE_BYTES = 512


# what every sub-run imports and nothing of this repository: a module imported here is read once for all of them
PRELOAD = ("torch", "pytest", "numpy", "hypothesis", "hypothesis.strategies", "_hypothesis_pytestplugin",
           "xdist.dsession", "xdist.looponfail", "pytest_html.plugin", "pytest_metadata.plugin", "pytest_timeout")
# Triton too where this process runs the interpreter (the outer run's harness set TRITON_INTERPRET=1): it builds
# triton.language in the mode the variable gives at import (0.95 s -> 0.83 s per forked one-case sub-run, 2 cores)
INTERPRETED_PRELOAD = ("triton", "triton.language")


def preload() -> None:
    interpreted = os.environ.get(INTERPRET_VAR) == "1"
    for name in (*PRELOAD, *(INTERPRETED_PRELOAD if interpreted else ())):
        try:
            importlib.import_module(name)
        except Exception:  # noqa: BLE001 - one without it (or whose import fails): its sub-runs import it themselves
            pass
    # what was imported lives as long as every child: out of the collector's sight, so each child's collections
    # (pytest runs gc.collect twice as it ends) walk their own objects, not torch's (0.74 s -> 0.40 s per forked
    # one-case sub-run, 2 cores); a process that ends the usual way gives them back first, or the interpreter's
    # last collection skips them and Triton's bindings report them leaked
    gc.freeze()
    atexit.register(gc.unfreeze)


def startup_vars(env: dict[str, str]) -> dict[str, str]:
    """The variables of env that a fork cannot take on: another value than the server's needs a fresh Python."""
    return {k: v for k, v in env.items() if k.startswith(STARTUP_VARS) and k != BYTECODE_VAR}


def writes_bytecode(env: dict[str, str]) -> bool:
    """What a Python started with env does with bytecode: it writes none when PYTHONDONTWRITEBYTECODE is non-empty."""
    return not env.get(BYTECODE_VAR)


def point_at_launcher(specs: list[Any], socket_path: str) -> None:
    """xdist's popen specs of this controller start their workers through the launcher (pytest_xdist_setupnodes)."""
    python = shlex.join([sys.executable, "-S", str(LAUNCHER), socket_path])
    for spec in specs:
        if spec.popen and not spec.python and not spec.via:
            spec.python = python


@contextmanager
def worker_server() -> Iterator[str]:
    """A server for this process's session; every pytest below it finds it through WORKERS_VAR."""
    with tempfile.TemporaryDirectory(prefix="nan-workers-") as folder:
        path = os.path.join(folder, "socket")
        server = subprocess.Popen([sys.executable, "-m", "tests.support.forkworkers", path], cwd=ROOT,
                                  stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
        try:
            yield path  # a launcher that comes before the server listens runs the real interpreter
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait()


def _declined(job: dict[str, Any], startup: dict[str, str]) -> str:
    argv = job["argv"]
    if job["env"].get(SWITCH) == RUNS_ONLY:
        return f"{SWITCH}={RUNS_ONLY}"
    if job.get("executable") != sys.executable:
        return "another interpreter"
    if job["cwd"] != os.getcwd():
        return "another working directory"
    if startup_vars(job["env"]) != startup:
        return "other start-up variables"
    options = argv[:argv.index("-c")] if "-c" in argv[:-1] else argv
    if "-u" not in options or not set(options) <= {"-u", "-B"}:
        return f"interpreter options {options}"
    return ""


def _accept(listener: socket.socket, startup: dict[str, str]) -> tuple[socket.socket, dict[str, Any]] | None:
    """Read one launcher's request: its connection and the job with its streams, or None after telling it to run
    the interpreter."""
    conn, _ = listener.accept()
    try:
        message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        job = json.loads(message)
    except (OSError, ValueError):  # a launcher gone before its request: nothing to start
        conn.close()
        return None
    reason = "no streams" if len(fds) != 3 else _declined(job, startup)
    if reason:
        for fd in fds:
            os.close(fd)
        _tell(conn, {"declined": reason})
        conn.close()
        return None
    return conn, {**job, "fds": fds}


def _tell(conn: socket.socket, reply: dict[str, Any]) -> None:
    try:
        conn.send(json.dumps(reply).encode())
    except OSError:  # its launcher is gone: the select loop kills what it started
        pass


def serve(socket_path: str) -> dict[str, Any] | None:
    """Fork a worker per request until stdin closes; returns only in a forked worker, with its job."""
    startup = startup_vars(dict(os.environ))
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(socket_path)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    live: dict[socket.socket, int] = {}  # launcher connection -> its worker
    while True:
        ready, _, _ = select.select([sys.stdin, listener, wake_r, *live], [], [])
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1):
            break
        if wake_r in ready:
            os.read(wake_r, _WAKE_BYTES)
        for conn in [c for c in live if c in ready]:  # a launcher gone before its worker: nobody reads it now
            os.kill(live.pop(conn), signal.SIGKILL)
            conn.close()
        _reap(live)
        request = _accept(listener, startup) if listener in ready else None
        if request is not None:
            conn, job = request
            pid = os.fork()
            if pid == 0:
                for fd in (listener, conn, *live):
                    fd.close()
                for fd in (wake_r, wake_w):
                    os.close(fd)
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                return job
            for fd in job["fds"]:
                os.close(fd)
            _tell(conn, {"pid": pid})
            live[conn] = pid
    for pid in live.values():
        os.kill(pid, signal.SIGKILL)
    return None


def _reap(live: dict[socket.socket, int]) -> None:
    """Tell each launcher whose worker ended its status (a killed orphan is reaped here too)."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        for conn, worker in list(live.items()):
            if worker == pid:
                del live[conn]
                _tell(conn, {"status": os.waitstatus_to_exitcode(status)})
                conn.close()


def become(job: dict[str, Any]) -> str:
    """Turn this fork into `python -u -c CODE`, started in the job's directory with its streams; returns CODE."""
    for target, fd in zip((0, 1, 2), job["fds"]):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job["env"])
    sys.stdin = sys.__stdin__ = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the process's stream
    sys.stdout = sys.__stdout__ = open(1, "w", buffering=1, encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stderr = sys.__stderr__ = open(2, "w", buffering=1, encoding="utf-8", errors="backslashreplace",  # noqa: SIM115
                                       closefd=False)
    code_at = job["argv"].index("-c") + 1
    sys.argv = ["-c", *job["argv"][code_at + 1:]]
    sys.path[0] = ""  # what `python -c` puts first
    sys.dont_write_bytecode = not writes_bytecode(job["env"]) or "-B" in job["argv"][:code_at]
    sys.modules["__main__"] = types.ModuleType("__main__")
    return str(job["argv"][code_at])


if __name__ == "__main__":
    preload()
    worker = serve(sys.argv[1])
    if worker is not None:
        exec(compile(become(worker), "<string>", "exec"), vars(sys.modules["__main__"]))  # noqa: S102
