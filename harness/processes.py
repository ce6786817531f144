"""Child processes, one way for every tool: the environment a child gets, ending it with what it started, SIGTERM
as Ctrl-C, and the cards a backend sees.

The tools that start children (the harness's reruns, mutate's stage runs and warm workers, the nightly, its bisect
and drop-in) start each in a session of its own, so that ending the child's process group also ends what the child
started: xdist workers, whatever a kernel spawned. Processes the kernel under test starts do not outlive the run
either: the run's processes become child subreapers (Linux), so such a process is adopted by the nearest one of them
when its parent dies, and each kills what is left below it when it unconfigures (the controller last).
"""
from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

PYTEST_VARS = ("PYTEST_", "_PYTEST")  # a pytest's own variables (its addopts, its worker's id): not the child's
KILL_WAIT_S = 10.0  # after SIGKILL: how long the leader gets to be reaped
TEE_GRACE_S = 60.0  # a streamed child (the nightly's suite) stopped on the way out: SIGTERM, then this long
PR_SET_CHILD_SUBREAPER = 36


class CardCountError(RuntimeError):
    """The child that counts a backend's cards failed; the message has the end of its output."""


def child_env(drop: tuple[str, ...] = PYTEST_VARS) -> dict[str, str]:
    """This process's environment less the variables whose names start with one of `drop`."""
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)}


def signal_group(proc: subprocess.Popen[Any], signum: int) -> bool:
    """Send signum to the process group proc leads; False when the group is gone."""
    try:
        os.killpg(proc.pid, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """SIGKILL the group proc leads (what it left behind too) and reap proc."""
    signal_group(proc, signal.SIGKILL)
    try:
        proc.wait(timeout=KILL_WAIT_S)
    except subprocess.TimeoutExpired:
        pass


def stop_group(proc: subprocess.Popen[Any], grace_s: float, *, leader_only: bool = False) -> None:
    """SIGTERM (to the whole group, or to the leader only: a pytest ends its own xdist workers and writes its
    reports), up to grace_s for the leader to exit, then SIGKILL to the group: nothing it started is left."""
    if proc.poll() is None:
        try:
            if leader_only:
                proc.send_signal(signal.SIGTERM)
            else:
                signal_group(proc, signal.SIGTERM)
            proc.wait(timeout=grace_s)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            pass
    kill_group(proc)


def stop_process(proc: subprocess.Popen[Any], grace_s: float) -> None:
    """SIGTERM to proc alone (it shares its caller's group), up to grace_s to exit, then SIGKILL; reaps it."""
    if proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


_IN_FLIGHT: dict[subprocess.Popen[Any], float] = {}  # children started by `spawn`, not yet stopped -> SIGTERM grace
_IN_FLIGHT_LOCK = threading.Lock()


def spawn(argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], grace_s: float = 0.0,
          **streams: Any) -> subprocess.Popen[bytes]:
    """A child in a session of its own (stopping its group stops what it started), kept until `stop` ends it, so
    that `stop_all` can end every child still in flight on Ctrl-C or SIGTERM."""
    proc = subprocess.Popen(list(argv), cwd=cwd, env=dict(env), start_new_session=True, **streams)
    with _IN_FLIGHT_LOCK:
        _IN_FLIGHT[proc] = grace_s
    return proc


def stop(proc: subprocess.Popen[Any]) -> None:
    """End a spawned child's process group: SIGTERM and its grace first where it has one, then SIGKILL; reaps it."""
    with _IN_FLIGHT_LOCK:
        grace_s = _IN_FLIGHT.pop(proc, 0.0)
    if grace_s:
        stop_group(proc, grace_s)
    else:
        kill_group(proc)


def stop_all() -> None:
    """End every spawned child not yet stopped (this tool was interrupted)."""
    with _IN_FLIGHT_LOCK:
        live = list(_IN_FLIGHT)
    for proc in live:
        stop(proc)


def run_tee(argv: Sequence[str], cwd: Path, log: Path | None, env: Mapping[str, str]) -> int:
    """Run argv, every line of its output to stdout and to log; a child still running when this is left (an
    interrupt) is stopped. Its exit status."""
    handle = open(log, "w", encoding="utf-8") if log else None
    try:
        proc = subprocess.Popen(list(argv), cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                errors="replace", bufsize=1, env=dict(env))
        try:
            assert proc.stdout is not None
            for line in proc.stdout:
                sys.stdout.write(line)
                if handle:
                    handle.write(line)
            return proc.wait()
        finally:
            stop_process(proc, TEE_GRACE_S)  # do not leave the suite running behind us
    finally:
        sys.stdout.flush()
        if handle:
            handle.close()


def raise_interrupt(signum: int, frame: object) -> None:
    """A signal handler: SIGTERM (a CI timeout, a scheduler) ends the tool as Ctrl-C would."""
    raise KeyboardInterrupt(f"signal {signum} ({signal.Signals(signum).name})")


@contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """SIGTERM raises KeyboardInterrupt inside the block (main thread only: Python's rule); the handler before it
    comes back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def count_cards(device: str, cwd: Path, env: Mapping[str, str] | None = None) -> tuple[int, str | None]:
    """(cards the backend sees, its card-visibility variable), from a child, so this process never initializes a
    device; 0 cards when the backend is not available here, (0, None) for the CPU."""
    if device == "cpu":
        return 0, None
    code = ("from harness import backends; b = backends.get(%r); "
            "print(b.card_count() if b.available() else 0, b.visibility_var or '-')" % device)
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=None if env is None else dict(env),
                          capture_output=True, text=True, check=False, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        raise CardCountError(f"cannot count {device} cards: {(done.stdout + done.stderr).strip()[-500:]}")
    count, var = done.stdout.split()[-2:]
    return int(count), None if var == "-" else var


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
