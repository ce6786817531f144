"""Load the module under test in a child process, so the process that decides verdicts never imports it.

The controller of a run needs to know, before any test, that the module imports (a bad --kernel is a usage error)
and what it is (file, NaN predicate, what it exposes, what a --kernel-setup resolved it to). Importing it there
would let its import (or a setup) kill, patch or exit the deciding process: `os._exit(0)` at import would end the
run "green". So a child (on the CPU interpreters a fork of the controller, on an accelerator a fresh interpreter)
does what every worker does at start (backend, --kernel-path, --kernel-setup, import) and reports back as JSON; a child
that dies, hangs or writes nothing is a usage error naming how it ended.
"""
from __future__ import annotations

import faulthandler
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness import backends
from harness.environment import collect
from harness.kernel_setup import describe_resolution, parse_specs, run_setups
from harness.target import load

PROBE_TIMEOUT_S = 300


class ProbeError(RuntimeError):
    """The module under test could not be loaded in the child; the message says why, for a usage error."""


@dataclass(frozen=True)
class Probe:
    """What the controller knows of the module under test, learnt from the child."""

    module_name: str
    file: str
    predicate_source: str
    kernel_skip_reason: str | None
    has_aggregate: bool
    environment: dict[str, str] = field(default_factory=dict)
    resolution: dict[str, Any] | None = None


def run(kernel: str, device: str, kernel_paths: list[str], setups: list[str], cwd: Path,
        timeout: float = PROBE_TIMEOUT_S) -> Probe:
    """Load `kernel` in a child as a worker would; ProbeError with the reason when that fails."""
    with tempfile.TemporaryDirectory(prefix="nan-probe-") as folder:
        out = Path(folder, "probe.json")
        request = {"kernel": kernel, "device": device, "kernel_paths": kernel_paths, "setups": setups,
                   "out": str(out)}
        child = _forked if device == "cpu" and hasattr(os, "fork") else _spawned
        returncode, stdout, stderr = child(request, cwd, Path(folder), timeout)
        if returncode is None:
            raise ProbeError(f"--kernel {kernel}: loading it did not finish in {timeout:.0f} s")
        tail = (stderr.strip() or stdout.strip()).splitlines()[-1:] or [""]
        if not out.is_file():
            how = f"exit status {returncode}" if returncode >= 0 else f"signal {-returncode}"
            after = f" (after --kernel-setup {', '.join(setups)})" if setups else ""
            raise ProbeError(f"--kernel {kernel}: the process loading it{after} ended ({how}) before it was loaded"
                             + (f": {tail[0]}" if tail[0] else ""))
        answer = json.loads(out.read_text(encoding="utf-8"))
    if answer.get("error"):
        raise ProbeError(str(answer["error"]))
    return Probe(**answer["probe"])


Ended = tuple[int | None, str, str]  # return code (None: timed out, killed), stdout, stderr


def _spawned(request: dict[str, Any], cwd: Path, folder: Path, timeout: float) -> Ended:
    """A fresh interpreter: the accelerators, whose device runtime a forked process must not inherit."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    try:
        done = subprocess.run([sys.executable, "-m", "harness.probe", json.dumps(request)], cwd=cwd, env=env,
                              capture_output=True, text=True, errors="replace", timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, "", ""
    return done.returncode, done.stdout, done.stderr


def _forked(request: dict[str, Any], cwd: Path, folder: Path, timeout: float) -> Ended:
    """The CPU interpreters: a fork of this process, which has torch, Triton and the backend loaded and no kernel
    yet (a fresh interpreter spent about 1.5 s of CPU importing torch again, in every run)."""
    logs = folder / "stdout.txt", folder / "stderr.txt"
    pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's pytest
        code = 3
        try:
            _redirect(*logs)
            os.chdir(cwd)
            _answer(request)
            code = 0
        finally:
            os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return None, "", ""
        time.sleep(0.01)
    stdout, stderr = (log.read_text(encoding="utf-8", errors="replace") if log.is_file() else "" for log in logs)
    return os.waitstatus_to_exitcode(status), stdout, stderr


def _redirect(stdout: Path, stderr: Path) -> None:
    """The forked child's output into its own files, past pytest's capture of the parent's descriptors (and its
    faulthandler, which writes to the run's terminal: a fresh interpreter had none)."""
    faulthandler.disable()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    for fd, path in ((1, stdout), (2, stderr)):
        os.dup2(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), fd)
    sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115 - the child ends with os._exit
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115


def _load(request: dict[str, Any]) -> Probe:
    """In the child: what a worker does before its first test, then what the controller needs to know."""
    backend = backends.resolve(request["device"])
    backend.prepare()
    sys.path[:0] = request["kernel_paths"]
    run_setups(parse_specs(request["setups"]))
    return describe(load(request["kernel"]), backend, bool(request["setups"]))


def describe(target: Any, backend: Any, setups: bool) -> Probe:
    """What the controller needs to know of a loaded module under test (the child's answer; an in-process run's)."""
    return Probe(target.module_name, target.file, target.predicate_source, target.kernel_skip_reason,
                 target.aggregate is not None, collect(target, backend),
                 describe_resolution(target.module) if setups else None)


def _answer(request: dict[str, Any]) -> None:
    """In the child: load, and write the probe or the error to request["out"]."""
    try:
        answer: dict[str, Any] = {"probe": asdict(_load(request))}
    except BaseException as exc:  # noqa: BLE001 - every way loading fails is reported, as a usage error
        answer = {"error": str(exc) or type(exc).__name__}
    Path(request["out"]).write_text(json.dumps(answer, default=str), encoding="utf-8")
    sys.stdout.flush()


def main() -> None:
    _answer(json.loads(sys.argv[1]))
    os._exit(0)  # the module under test may have left threads or atexit handlers behind: they are not ours


if __name__ == "__main__":
    main()
