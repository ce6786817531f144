"""Every way a run can end leaves reports that say what happened, or none and a clear message; never a stale one."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reports import compare
from tests.support.limits import hang_limit
from tests.support.forkserver import ForkServer
from tests.support.subrun import ROOT, clean_env, run_pytest

pytestmark = [pytest.mark.nan_reports, pytest.mark.usefixtures("cpu_subruns")]
SUITE = "tests/precision/test_families.py"


def _stale(folder: Path) -> None:
    """What a previous, passing run left behind."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps({"schema": "nan-harness-results/2", "finished": True,
                                                      "collected": 1, "cases": [{"nodeid": "a::b",
                                                                                 "outcome": "passed"}]}))
    (folder / "precision.html").write_text("<html>an old, green report</html>")


@pytest.mark.parametrize("kernel, expect", [("no.such.module", "No module named"),
                                            ("tests.harness.fixtures.import_raises", "RuntimeError")])
def test_usage_errors_leave_no_stale_report(tmp_path: Path, kernel: str, expect: str, forks: ForkServer | None) -> None:
    _stale(tmp_path)
    run = run_pytest(tmp_path, [SUITE, "--kernel", kernel], server=forks)
    assert run.returncode == 4 and expect in run.output and "INTERNALERROR" not in run.output, run.output
    doc = json.loads(run.json_path.read_text())
    assert doc["finished"] is False and doc["cases"] == []
    assert "an old, green report" not in run.html.read_text() and "INCOMPLETE (usage error)" in run.html.read_text()
    assert compare.main([str(run.json_path), str(run.json_path)]) == 2  # compare refuses it


def test_report_path_that_is_a_folder_is_a_usage_error(tmp_path: Path, forks: ForkServer | None) -> None:
    folder = tmp_path / "results.json"
    folder.mkdir()
    run = run_pytest(tmp_path / "run", [SUITE, "-k", "fp32-special", f"--nan-json={folder}"], server=forks)
    assert run.returncode == 4 and "is a folder" in run.output, run.output
    assert not list(tmp_path.glob("**/*.tmp"))


def test_non_utf8_waivers_are_a_usage_error(tmp_path: Path, forks: ForkServer | None) -> None:
    waivers = tmp_path / "w.toml"
    waivers.write_bytes(b"[[waiver]]\nid = '\xff\xfe'\n")
    run = run_pytest(tmp_path / "run", [SUITE, "-k", "fp32-special", f"--nan-waivers={waivers}"], server=forks)
    assert run.returncode == 4 and "not UTF-8" in run.output and "INTERNALERROR" not in run.output, run.output


def test_sigterm_leaves_an_interrupted_report(tmp_path: Path) -> None:
    """What a CI timeout sends: the run stops, and its reports say it was interrupted. The signal goes while the
    kernel is inside a case (a hanging kernel marks the moment), so no machine is too fast or too slow for it."""
    _stale(tmp_path)
    mark = tmp_path / "inside-a-case"
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--device", "cpu", "-q", SUITE,
            f"--basetemp={tmp_path / 'tmp'}", f"--html={tmp_path / 'precision.html'}",
            f"--junitxml={tmp_path / 'junit.xml'}", f"--nan-json={tmp_path / 'results.json'}",
            "--kernel", "tests.harness.fixtures.hanging_kernel", "-k", "fp32-prefix-2x5000-nan0.5-wrapper"]
    proc = subprocess.Popen(argv, cwd=ROOT, env=clean_env({"HANGING_KERNEL_MARK": str(mark)}),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    limit = hang_limit(slowest_s=23.1)  # this whole test, beside a tox run
    deadline = time.monotonic() + limit
    while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert mark.exists(), "the hanging case never started"
    proc.send_signal(signal.SIGTERM)
    output, _ = proc.communicate(timeout=limit)
    doc = json.loads((tmp_path / "results.json").read_text())
    assert doc["finished"] is False and doc["ended"] == "interrupted", (doc["ended"], output[-2000:])
    assert "INCOMPLETE" in _read(tmp_path / "precision.html"), output[-2000:]


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return ""


def test_chatty_kernel_makes_a_small_report(tmp_path: Path, forks: ForkServer | None) -> None:
    run = run_pytest(tmp_path, [SUITE, "--kernel", "tests.harness.fixtures.chatty_kernel", "-k", "fp32-special",
                                "-rA"], server=forks)
    assert run.returncode == 0, run.output[-3000:]
    assert run.html.stat().st_size < 2_000_000 and "cut by nan-harness" in run.html.read_text()


def test_results_json_mode_matches_other_reports(tmp_path: Path, forks: ForkServer | None) -> None:
    run = run_pytest(tmp_path, [SUITE, "-k", "fp32-special-2x1024-wrapper"], server=forks)
    assert run.returncode == 0, run.output
    assert oct(run.json_path.stat().st_mode & 0o777) == oct(0o644)
    assert os.access(run.html, os.R_OK)


def test_the_terminal_ends_with_the_verdict_and_the_diagnosis(tmp_path: Path, forks: ForkServer | None) -> None:
    """A failing run's last lines are the verdict, the tally and the diagnosis, after pytest's own listing."""
    run = run_pytest(tmp_path, [SUITE, "-k", "special-2x1024", "--kernel", "tests.planted.tail_dropped"], server=forks)
    tail = run.output.strip().splitlines()[-3:]
    assert run.returncode == 1 and "nan-harness: FAIL" in tail[0], run.output[-2000:]
    assert "6 tests: 6 wrong counts" in tail[1] and tail[2].startswith("  1. ["), tail
