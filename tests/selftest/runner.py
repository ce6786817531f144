"""Run the precision suite in a subprocess against one kernel package and read back what failed."""
from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tests.selftest.forkserver import ForkServer

ROOT = Path(__file__).resolve().parents[2]
SUITE = "tests/precision"
TIMEOUT_S = 300
# environment a sub-run must not inherit from the outer pytest (or its xdist worker)
_DROP_ENV = ("PYTEST_ADDOPTS", "PYTEST_PLUGINS", "PYTEST_CURRENT_TEST", "PYTEST_XDIST_WORKER",
             "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID")


# A planted variant that does not compile or import is a broken plant, not a caught bug.
NOT_A_CATCH: tuple[str, ...] = ("CompilationError", "SyntaxError", "NameError", "ImportError", "ModuleNotFoundError")


@dataclass
class SubRun:
    """One `pytest tests/precision --kernel MODULE` run: exit status and per-test outcomes from its JUnit XML."""

    kernel: str
    argv: list[str]
    returncode: int
    seconds: float
    output: str
    junit: Path
    html: Path
    json: Path | None
    outcomes: dict[str, str] = field(default_factory=dict)  # node id -> passed/failed/error/skipped
    messages: dict[str, str] = field(default_factory=dict)  # node id -> failure message (first line)

    @property
    def completed(self) -> bool:
        """The run got to the end: exit code 0 or 1 (tests failed), JUnit and HTML written."""
        return self.returncode in (0, 1) and self.junit.is_file() and self.html.is_file()

    @property
    def failed(self) -> list[str]:
        return [nid for nid, outcome in self.outcomes.items() if outcome in ("failed", "error")]

    @property
    def passed(self) -> list[str]:
        return [nid for nid, outcome in self.outcomes.items() if outcome == "passed"]

    @property
    def detected(self) -> list[str]:
        """Failed ids whose failure is the suite detecting a wrong result, not the variant failing to build."""
        return [nid for nid in self.failed if not any(m in self.messages.get(nid, "") for m in NOT_A_CATCH)]

    def matching(self, patterns: Iterable[str], ids: Iterable[str]) -> list[str]:
        """The ids among `ids` that any of the regexes finds."""
        compiled = [re.compile(p) for p in patterns]
        return [nid for nid in ids if any(c.search(nid) for c in compiled)]

    def describe(self) -> str:
        """What a failing self-test prints: the command, status, outcomes and the tail of the output."""
        failed = "\n  ".join(f"{nid}: {self.messages.get(nid, '')}" for nid in self.failed) or "(none)"
        return (
            f"sub-run: {' '.join(self.argv)}\nexit {self.returncode} after {self.seconds:.1f}s, "
            f"{len(self.passed)} passed, {len(self.failed)} failed\nfailed:\n  {failed}\n"
            f"--- output tail ---\n{self.output[-3000:]}"
        )


def node_id(case: ET.Element) -> str:
    """JUnit testcase -> pytest node id (tests/precision/test_x.py::test_y[params])."""
    classname, name = case.get("classname", ""), case.get("name", "")
    return f"{classname.replace('.', '/')}.py::{name}" if classname else name


def read_junit(path: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Outcome and first message line of every testcase in a JUnit XML file."""
    outcomes: dict[str, str] = {}
    messages: dict[str, str] = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        nid = node_id(case)
        outcome = "passed"
        for tag in ("failure", "error", "skipped"):
            child = case.find(tag)
            if child is not None:
                outcome = "failed" if tag == "failure" else tag
                text = (child.get("message") or child.text or "").strip()
                messages[nid] = text.splitlines()[0][:300] if text else ""
                break
        # a test whose setup passed but call failed appears once per phase; the worst outcome wins
        if outcomes.get(nid) in ("failed", "error"):
            continue
        outcomes[nid] = outcome
    return outcomes, messages


def sub_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _DROP_ENV}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def run_suite(
    kernel: str,
    select: str,
    tmp: Path,
    *,
    workers: int = 0,
    json_option: bool = False,
    extra: Sequence[str] = (),
    server: ForkServer | None = None,
    device: str = "cpu",
) -> SubRun:
    """pytest tests/precision --device DEVICE --kernel KERNEL -k SELECT, reports under tmp.

    server: run it as a fork of that pre-started Python (torch already imported) instead of a fresh one.
    workers=1 runs the tests in one pytest-xdist worker: a test that kills the worker (SIGSEGV, abort) is
    reported as a failed case with its id, xdist starts a fresh worker, and the run and its reports go on.
    """
    tmp.mkdir(parents=True, exist_ok=True)
    junit, html = tmp / "junit.xml", tmp / "report.html"
    json_path = tmp / "results.json" if json_option else None
    argv = [sys.executable, "-m", "pytest", SUITE, "--device", device, "--kernel", kernel,
            "-p", "no:cacheprovider", "-q", "-k", select, f"--junitxml={junit}", f"--html={html}"]
    if json_path is not None:
        argv.append(f"--nan-json={json_path}")
    if workers:
        argv += ["-n", str(workers), "--max-worker-restart", "8"]
    argv += list(extra)
    start = time.monotonic()
    if server is not None:
        log = tmp / "output.txt"
        code = server.run(argv[3:], ROOT, sub_env(), log, TIMEOUT_S)
        output = log.read_text(errors="replace") if log.is_file() else ""
    else:
        try:
            proc = subprocess.run(argv, cwd=ROOT, env=sub_env(), capture_output=True, text=True, timeout=TIMEOUT_S)
            code, output = proc.returncode, proc.stdout + proc.stderr
        except subprocess.TimeoutExpired as exc:
            code, output = -9, f"timed out after {TIMEOUT_S}s\n{exc.stdout or ''}{exc.stderr or ''}"
    run = SubRun(kernel, argv, code, time.monotonic() - start, output, junit, html, json_path)
    if junit.is_file():
        run.outcomes, run.messages = read_junit(junit)
    return run
