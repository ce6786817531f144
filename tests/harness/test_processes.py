"""harness.processes, the one way the tools end their children: a stopped child leaves nothing behind, a SIGTERM
reaches only whom it should, SIGTERM raises KeyboardInterrupt inside the block only, and cards are counted in a
child."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from harness import processes

pytestmark = pytest.mark.nan_harness

ROOT = Path(__file__).resolve().parents[2]
# a leader that starts a child in its group, says both pids, and sleeps; each notes a SIGTERM in its own file unless
# told to ignore it
FAMILY = r"""
import os, signal, subprocess, sys, time
folder, ignore = sys.argv[1], sys.argv[2] == "ignore"
def note(name):
    def handler(signum, frame):
        open(os.path.join(folder, name), "w").close()
        if not ignore:
            os._exit(0)
    return handler
if len(sys.argv) > 3:
    signal.signal(signal.SIGTERM, note("child-term"))
    print("ready", flush=True)
    time.sleep(120)
signal.signal(signal.SIGTERM, note("leader-term"))
child = subprocess.Popen([sys.executable, __file__, folder, sys.argv[2], "child"], stdout=subprocess.PIPE, text=True)
child.stdout.readline()
print(os.getpid(), child.pid, flush=True)
time.sleep(120)
"""


def _gone(pid: int) -> bool:
    """Ended: no such process, or a zombie nobody reaped yet (a container's init may not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def _family(tmp_path: Path, ignore: bool) -> tuple[subprocess.Popen[str], int]:
    script = tmp_path / "family.py"
    script.write_text(FAMILY)
    proc = subprocess.Popen([sys.executable, str(script), str(tmp_path), "ignore" if ignore else "obey"],
                            stdout=subprocess.PIPE, text=True, start_new_session=True)
    child = int(proc.stdout.readline().split()[1])  # type: ignore[union-attr]
    return proc, child


def _wait_gone(pid: int, limit_s: float = 10.0) -> bool:
    end = time.monotonic() + limit_s
    while not _gone(pid) and time.monotonic() < end:
        time.sleep(0.05)
    return _gone(pid)


@pytest.mark.parametrize("leader_only", [False, True], ids=["group", "leader-only"])
def test_stop_group_leaves_nothing_and_terms_whom_it_should(tmp_path: Path, leader_only: bool) -> None:
    proc, child = _family(tmp_path, ignore=True)  # both ignore SIGTERM: only the SIGKILL after the grace ends them
    start = time.monotonic()
    processes.stop_group(proc, grace_s=1.0, leader_only=leader_only)
    assert proc.returncode == -signal.SIGKILL and 1.0 <= time.monotonic() - start < 10
    assert _wait_gone(child), "the leader's child outlived the stop"
    assert (tmp_path / "leader-term").is_file()
    assert (tmp_path / "child-term").is_file() is not leader_only  # leader-only: the child got SIGKILL alone


def test_stop_group_does_not_wait_for_a_leader_that_obeys(tmp_path: Path) -> None:
    proc, child = _family(tmp_path, ignore=False)
    start = time.monotonic()
    processes.stop_group(proc, grace_s=30.0)
    assert proc.returncode == 0 and time.monotonic() - start < 10 and _wait_gone(child)


def test_stop_group_ends_what_a_finished_leader_left_behind(tmp_path: Path) -> None:
    proc, child = _family(tmp_path, ignore=False)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not _gone(child)
    processes.stop_group(proc, grace_s=30.0)
    assert _wait_gone(child)


def test_stop_process_spares_the_group(tmp_path: Path) -> None:
    proc, child = _family(tmp_path, ignore=True)
    try:
        processes.stop_process(proc, grace_s=0.5)
        assert proc.returncode == -signal.SIGKILL and (tmp_path / "leader-term").is_file()
        assert not (tmp_path / "child-term").is_file() and not _gone(child)
    finally:
        os.kill(child, signal.SIGKILL)


def test_sigterm_is_an_interrupt_inside_the_block_only() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(KeyboardInterrupt, match=r"signal 15 \(SIGTERM\)"):
        with processes.sigterm_as_interrupt():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(5)  # the handler runs between bytecodes: this sleep is interrupted at once
    assert signal.getsignal(signal.SIGTERM) is before


def test_child_env_drops_the_named_prefixes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYTEST_ADDOPTS", "-x")
    monkeypatch.setenv("_PYTEST_RAISE", "1")
    monkeypatch.setenv("NAN_KEPT", "1")
    env = processes.child_env()
    assert "PYTEST_ADDOPTS" not in env and "_PYTEST_RAISE" not in env and env["NAN_KEPT"] == "1"
    assert "PYTEST_ADDOPTS" in processes.child_env(("NOTHING_",))


def test_cards_are_counted_in_a_child(tmp_path: Path) -> None:
    assert processes.count_cards("cpu", ROOT) == (0, None)
    count, var = processes.count_cards("cuda", ROOT)
    assert var == "CUDA_VISIBLE_DEVICES" and count >= 0
    if not torch.cuda.is_available():
        assert count == 0  # no CUDA here: no card, never an error
    bare = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}  # the harness is not importable there
    with pytest.raises(processes.CardCountError, match=r"(?s)cannot count cuda cards: .*ModuleNotFoundError"):
        processes.count_cards("cuda", tmp_path, bare)
