"""Processes the kernel under test starts do not outlive the run.

A kernel (or a library it loads) may start helper processes and never stop them. The run's processes become
child subreapers (Linux), so such a process is adopted by the nearest one of them when its parent dies, and each
kills what is left below it when it unconfigures: the controller last, after its workers are gone.
"""
from __future__ import annotations

import ctypes
import os
import signal
import sys
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def adopt_orphans() -> bool:
    """Make this process the reaper of its descendants' orphans; False where the platform cannot."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def children(pid: int) -> list[int]:
    """Direct children of pid, from /proc (empty where /proc has no children files)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(p) for p in (task / "children").read_text().split()]
        except (OSError, ValueError):
            continue
    return found


def descendants(pid: int) -> list[int]:
    """Every process below pid, parents before their children."""
    out: list[int] = []
    todo = children(pid)
    while todo:
        child = todo.pop(0)
        out.append(child)
        todo += children(child)
    return out


def kill_descendants(spare: frozenset[int] = frozenset()) -> list[int]:
    """SIGKILL every process still below this one (except the children in `spare`, which were there before the
    run, and theirs) and reap it; returns the pids killed."""
    killed = []
    targets = [pid for child in children(os.getpid()) if child not in spare for pid in (child, *descendants(child))]
    for pid in targets:
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except OSError:
            continue
    for pid in killed:
        try:
            os.waitpid(pid, 0)
        except OSError:  # not our child (a grandchild reaped by its own parent)
            continue
    return killed
