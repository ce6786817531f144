"""Load the module under test in a child process, so the process that decides verdicts never imports it.

The controller of a run needs to know, before any test, that the module imports (a bad --kernel is a usage error)
and what it is (file, NaN predicate, what it exposes, what a --kernel-setup resolved it to). Importing it there
would let its import (or a setup) kill, patch or exit the deciding process: `os._exit(0)` at import would end the
run "green". So a child does what every worker does at start (backend, --kernel-path, --kernel-setup, import) and
reports back as JSON; a child that dies, hangs or writes nothing is a usage error naming how it ended.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

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
    """Load `kernel` in a fresh interpreter as a worker would; ProbeError with the reason when that fails."""
    with tempfile.TemporaryDirectory(prefix="nan-probe-") as folder:
        out = Path(folder, "probe.json")
        request = {"kernel": kernel, "device": device, "kernel_paths": kernel_paths, "setups": setups,
                   "out": str(out)}
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        try:
            done = subprocess.run([sys.executable, "-m", "harness.probe", json.dumps(request)], cwd=cwd, env=env,
                                  capture_output=True, text=True, errors="replace", timeout=timeout, check=False)
        except subprocess.TimeoutExpired:
            raise ProbeError(f"--kernel {kernel}: loading it did not finish in {timeout:.0f} s") from None
        tail = (done.stderr.strip() or done.stdout.strip()).splitlines()[-1:] or [""]
        if not out.is_file():
            how = f"exit status {done.returncode}" if done.returncode >= 0 else f"signal {-done.returncode}"
            after = f" (after --kernel-setup {', '.join(setups)})" if setups else ""
            raise ProbeError(f"--kernel {kernel}: the process loading it{after} ended ({how}) before it was loaded"
                             + (f": {tail[0]}" if tail[0] else ""))
        answer = json.loads(out.read_text(encoding="utf-8"))
    if answer.get("error"):
        raise ProbeError(str(answer["error"]))
    return Probe(**answer["probe"])


def _load(request: dict[str, Any]) -> Probe:
    """In the child: what a worker does before its first test, then what the controller needs to know."""
    from harness import backends
    from harness.kernel_setup import parse_specs, run_setups
    from harness.target import load

    backend = backends.resolve(request["device"])
    backend.prepare()
    for folder in reversed(request["kernel_paths"]):
        sys.path.insert(0, folder)
    run_setups(parse_specs(request["setups"]))
    return describe(load(request["kernel"]), backend, bool(request["setups"]))


def describe(target: Any, backend: Any, setups: bool) -> Probe:
    """What the controller needs to know of a loaded module under test (the child's answer; an in-process run's)."""
    from harness.environment import collect
    from harness.kernel_setup import describe_resolution

    return Probe(target.module_name, target.file, target.predicate_source, target.kernel_skip_reason,
                 target.aggregate is not None, collect(target, backend),
                 describe_resolution(target.module) if setups else None)


def main() -> None:
    request = json.loads(sys.argv[1])
    try:
        answer: dict[str, Any] = {"probe": asdict(_load(request))}
    except BaseException as exc:  # noqa: BLE001 - every way loading fails is reported, as a usage error
        answer = {"error": str(exc) or type(exc).__name__}
    Path(request["out"]).write_text(json.dumps(answer, default=str), encoding="utf-8")
    sys.stdout.flush()
    os._exit(0)  # the module under test may have left threads or atexit handlers behind: they are not ours


if __name__ == "__main__":
    main()
