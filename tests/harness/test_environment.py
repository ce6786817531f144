"""The run's environment names a kernel's commit only when a checkout tracks the kernel's file."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harness.environment import git_commit, kernel_origin

pytestmark = pytest.mark.nan_harness


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)


def test_commit_only_for_a_tracked_file(tmp_path: Path) -> None:
    """A kernel in a virtualenv inside a checkout (untracked) is not the checkout's commit."""
    _git(tmp_path, "init", "-q")
    (tmp_path / "tracked.py").write_text("x = 1\n")
    _git(tmp_path, "add", "tracked.py")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    (tmp_path / "venv").mkdir()
    (tmp_path / "venv" / "kernel.py").write_text("y = 2\n")
    commit = git_commit(str(tmp_path / "tracked.py"))
    assert commit and len(commit.split()[0]) == 40  # (+ local changes: the untracked venv folder)
    assert git_commit(str(tmp_path / "venv" / "kernel.py")) is None


def test_a_kernel_without_a_commit_says_why_and_what_is_installed(tmp_path: Path) -> None:
    """No commit is no "?": the run records why (no checkout, or an untracked file) and the distribution that ships
    the file, which reports.compare prints (issue 40, item 10)."""
    loose = tmp_path / "my_kernel.py"
    loose.write_text("x = 1\n")
    assert kernel_origin(str(loose), "my_kernel") == {"Kernel origin": "no commit: the kernel file is not in a git "
                                                                       "checkout"}
    installed = kernel_origin(pytest.__file__, "pytest")["Kernel origin"]
    assert installed.startswith("no commit: the kernel file is ") and installed.endswith(f"; installed pytest "
                                                                                           f"{pytest.__version__}")
