"""One way to run pytest on another kernel from a test: own basetemp and report paths, a clean environment,
and the parsed results.json (real node ids, outcomes and verdicts) back.

The fork server (tests.support.forkserver) saves the torch and plugin imports per sub-run; it is used when passed in,
unless the sub-run sets a variable only a starting interpreter reads (PYTHONPATH, TRITON_INTERPRET, ...).
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import processes
from harness.activation import IN_PROCESS, IN_PROCESS_CALLER
from tests.support.forkserver import ForkServer
from tests.support.forkworkers import startup_vars
from tests.support.limits import hang_limit
from verdict.record import TestRecord

ROOT = Path(__file__).resolve().parents[2]
SUITE = "tests/precision"
TIMEOUT_S = hang_limit(slowest_s=111.5)  # the slowest test of sub-runs (tests/nightly/test_merge.py's shards)
# a sub-run must not inherit the outer pytest's (or its xdist worker's) variables, nor write into the CI job's summary
_DROP_PREFIXES = ("PYTEST_", "COV_", "_PYTEST", "GITHUB_STEP_SUMMARY")
# failed tests are not rerun in sub-runs (each rerun is another pytest process); a test of the reruns passes its own
RERUNS_OFF: tuple[str, ...] = ("--nan-reruns=0",)
# a planted variant that does not compile or import is a broken plant, not a caught bug
NOT_A_CATCH: tuple[str, ...] = ("CompilationError", "SyntaxError", "NameError", "ImportError", "ModuleNotFoundError")


def clean_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = processes.child_env(_DROP_PREFIXES)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return {**env, **(extra or {})}


@dataclass
class SubRun:
    """What one sub-run left behind: status, output, report paths and its records."""

    argv: list[str]
    folder: Path
    returncode: int
    seconds: float
    output: str
    records: list[TestRecord] = field(default_factory=list)
    doc: dict[str, Any] = field(default_factory=dict)

    @property
    def html(self) -> Path:
        return self.folder / "precision.html"

    @property
    def json_path(self) -> Path:
        return self.folder / "results.json"

    @property
    def junit(self) -> Path:
        return self.folder / "junit.xml"

    @property
    def completed(self) -> bool:
        """The run got to the end: exit 0 or 1, reports written, and results.json says it finished."""
        return (self.returncode in (0, 1) and self.html.is_file() and self.json_path.is_file()
                and bool(self.doc.get("finished")))

    @property
    def outcomes(self) -> dict[str, str]:
        return {r.nodeid: r.outcome for r in self.records}

    @property
    def messages(self) -> dict[str, str]:
        return {r.nodeid: r.message for r in self.records}

    @property
    def failed(self) -> list[str]:
        return [r.nodeid for r in self.records if r.failed]

    @property
    def passed(self) -> list[str]:
        return [r.nodeid for r in self.records if r.outcome == "passed"]

    @property
    def detected(self) -> list[str]:
        """Failed ids whose failure is the suite detecting a wrong result, not the variant failing to build."""
        return [r.nodeid for r in self.records if r.failed and not any(m in r.message for m in NOT_A_CATCH)
                and not any(m in c.refusal for c in r.checks for m in NOT_A_CATCH)]

    def record(self, nodeid: str) -> TestRecord:
        return next(r for r in self.records if r.nodeid == nodeid)

    def case(self, nodeid: str) -> dict[str, Any]:
        return next(c for c in self.doc["cases"] if c["nodeid"] == nodeid)

    def results(self) -> dict[str, Any]:
        return self.doc

    @staticmethod
    def matching(patterns: Iterable[str], ids: Iterable[str]) -> list[str]:
        """The ids among `ids` that any of the regexes finds."""
        compiled = [re.compile(p) for p in patterns]
        return [nid for nid in ids if any(c.search(nid) for c in compiled)]

    def describe(self) -> str:
        """What a failing test prints: the command, status, outcomes and the tail of the output."""
        failed = "\n  ".join(f"{r.nodeid}: {r.verdict}: {r.message.splitlines()[0] if r.message else ''}"
                             for r in self.records if r.failed) or "(none)"
        return (f"sub-run: {' '.join(self.argv)}\nexit {self.returncode} after {self.seconds:.1f}s, "
                f"{len(self.passed)} passed, {len(self.failed)} failed\nfailed:\n  {failed}\n"
                f"--- output tail ---\n{self.output[-3000:]}")


def run_pytest(
    folder: Path,
    args: Sequence[str],
    *,
    device: str = "cpu",
    env: dict[str, str] | None = None,
    server: ForkServer | None = None,
    timeout: float = TIMEOUT_S,
    in_process: bool = False,
) -> SubRun:
    """pytest ARGS from the repo root, every report and the basetemp inside `folder`.

    in_process: the sub-run's own process runs the kernel (--nan-in-process, no xdist worker nor probe child), with
    this test as the caller that isolates it: a kernel that ends that process shows as a negative returncode or a
    run without its reports, never as a verdict."""
    folder.mkdir(parents=True, exist_ok=True)
    if in_process:
        args = [*args, IN_PROCESS]
        env = {**(env or {}), IN_PROCESS_CALLER: "tests.support.subrun"}
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--device", device, "-q",
            f"--basetemp={folder / 'tmp'}", f"--html={folder / 'precision.html'}",
            f"--junitxml={folder / 'junit.xml'}", f"--nan-json={folder / 'results.json'}", *RERUNS_OFF, *args]
    start = time.monotonic()
    if server is not None and not startup_vars(env or {}):
        log = folder / "output.txt"
        code = server.run(argv[3:], ROOT, clean_env(env), log, timeout)
        output = log.read_text(errors="replace") if log.is_file() else ""
    else:
        try:
            done = subprocess.run(argv, cwd=ROOT, env=clean_env(env), capture_output=True, text=True,
                                  timeout=timeout, check=False)
            code, output = done.returncode, done.stdout + done.stderr
        except subprocess.TimeoutExpired as exc:
            code, output = -9, f"timed out after {timeout}s\n{exc.stdout or ''}{exc.stderr or ''}"
        (folder / "output.txt").write_text(output, encoding="utf-8")
    return load_run(folder, argv, code, time.monotonic() - start, output)


def load_run(folder: Path, argv: list[str], code: int | None = None, seconds: float = 0.0,
             output: str | None = None) -> SubRun:
    """A SubRun from what a run left in its folder (its exit status is kept in `returncode`)."""
    if output is None:
        log = folder / "output.txt"
        output = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
    if code is None:
        code = int((folder / "returncode").read_text()) if (folder / "returncode").is_file() else -1
    else:
        (folder / "returncode").write_text(str(code))
    run = SubRun(argv, folder, code, seconds, output)
    if run.json_path.is_file():
        try:
            run.doc = json.loads(run.json_path.read_text(encoding="utf-8"))
            run.records = [TestRecord.from_dict(c) for c in run.doc.get("cases", [])]
        except (ValueError, KeyError):
            pass
    return run


def run_suite(kernel: str, select: str, folder: Path, *, workers: int = 0, extra: Sequence[str] = (),
              server: ForkServer | None = None, device: str = "cpu", env: dict[str, str] | None = None,
              in_process: bool = False) -> SubRun:
    """The precision suite on KERNEL narrowed with -k SELECT; workers=1 isolates crashes in an xdist worker,
    in_process judges in the sub-run's own process (run_pytest)."""
    args = [SUITE, "--kernel", kernel, "-k", select]
    if workers:
        args += ["-n", str(workers), "--max-worker-restart", "8"]
    return run_pytest(folder, [*args, *extra], device=device, server=server, env=env, in_process=in_process)


def run_expected_clean(folder: Path, args: Sequence[str], *, server: ForkServer | None, device: str = "cpu") -> SubRun:
    """A run of a kernel meant to pass: judged in its own process (run_pytest's in_process); one that does not
    complete there (the kernel ended the process) runs again under one xdist worker, whose report names the case."""
    run = run_pytest(folder / "in-process", args, server=server, device=device, in_process=True)
    if run.completed:
        return run
    return run_pytest(folder / "isolated", [*args, "-n", "1", "--max-worker-restart", "12"], server=server,
                      device=device)
