"""The self-test's forked xdist workers (tests.support.forkworkers) behave as the interpreter they stand in for:
streams, arguments and exit status (a signal included) pass through; a request it must not fork runs the real
interpreter; a launcher killed outright takes its worker with it; a pytest the session starts gets them."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.forkworkers import BYTECODE_VAR, LAUNCHER, REAL_WORKERS, WORKERS_VAR, worker_server
from tests.support.limits import hang_limit

ROOT = Path(__file__).resolve().parents[2]
# a forked worker prints who it is: its pid, its parent's, its argv and the line it read from stdin
WHOAMI = ("import os, sys; "
          "print(os.getpid(), os.getppid(), sys.argv[1:], sys.stdin.readline().strip(), sep='|', flush=True)")
START_S = hang_limit(slowest_s=3.0)  # the server's torch import beside a tox run


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """A worker server of this module's own (the session's may be off): its socket, once it listens."""
    with worker_server() as path:
        deadline = time.monotonic() + START_S
        while not os.path.exists(path) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert os.path.exists(path), "the worker server did not start"
        yield path


def _cmdline(pid: int) -> list[str]:
    return Path(f"/proc/{pid}/cmdline").read_text().split("\0")


def _launch(path: str, code: str, *, cwd: Path = ROOT, env: dict[str, str] | None = None,
            stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-S", str(LAUNCHER), path, "-u", "-c", code, "an-arg"], cwd=cwd,
                          env={**os.environ, **(env or {})}, input=stdin, capture_output=True, text=True,
                          timeout=START_S, check=False)


def test_a_forked_worker_gets_the_streams_the_arguments_and_its_status(server: str) -> None:
    done = _launch(server, WHOAMI + "; sys.stderr.write('to stderr'); sys.exit(3)", stdin="a line\n")
    pid, parent, argv, line = done.stdout.strip().split("|")
    assert (done.returncode, argv, line, done.stderr) == (3, "['an-arg']", "a line", "to stderr")
    assert server in _cmdline(int(parent)), "the worker's parent is not this module's server"
    assert not Path(f"/proc/{pid}").exists()


def test_a_forked_worker_leaves_what_the_server_imported_to_no_collection(server: str) -> None:
    """The server's imports (torch's objects) are frozen: a child's collections walk its own objects only, and an
    exit the usual way (stderr checked above: no binding reports leaks) gives them back first."""
    done = _launch(server, "import gc, sys; print(gc.get_freeze_count()); sys.exit(0)")
    assert done.returncode == 0 and int(done.stdout) > 100_000, (done.stdout, done.stderr)


def test_a_worker_ended_by_a_signal_ends_its_launcher_by_it(server: str) -> None:
    done = _launch(server, "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")
    assert done.returncode == -signal.SIGSEGV


OTHER_MODE = {"TRITON_INTERPRET": "0" if os.environ.get("TRITON_INTERPRET") == "1" else "1"}


BASE_PYTHON = str(Path(sys.base_prefix) / "bin" / "python3")  # the interpreter this environment was made from


@pytest.mark.parametrize("where", ["other-directory", "real-workers", "other-triton-mode", "other-interpreter"])
def test_what_the_server_must_not_fork_runs_the_real_interpreter(server: str,
                                                                 tmp_path: Path, where: str) -> None:
    cwd, env, python = {"other-directory": (tmp_path, None, sys.executable),
                        "real-workers": (ROOT, REAL_WORKERS, sys.executable),
                        "other-triton-mode": (ROOT, OTHER_MODE, sys.executable),
                        "other-interpreter": (ROOT, None, BASE_PYTHON)}[where]
    if python == BASE_PYTHON and (sys.prefix == sys.base_prefix or not Path(python).is_file()):
        pytest.skip("no other interpreter than this one here")
    done = subprocess.Popen([python, "-S", str(LAUNCHER), server, "-u", "-c", WHOAMI], cwd=cwd,
                            env={**os.environ, **(env or {})}, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    out, _ = done.communicate("x\n", timeout=START_S)
    assert (done.returncode, int(out.split("|")[0])) == (0, done.pid)  # the launcher became the interpreter


@pytest.mark.parametrize("value", ["1", None], ids=["no-bytecode", "bytecode"])
def test_a_worker_writes_bytecode_as_its_environment_says(server: str, value: str | None) -> None:
    """PYTHONDONTWRITEBYTECODE set or not, the worker is forked and does what an interpreter started so would (the
    sub-runs read the outer run's bytecode, write none, and still get forked workers)."""
    env = {k: v for k, v in os.environ.items() if k != BYTECODE_VAR} | ({BYTECODE_VAR: value} if value else {})
    done = subprocess.run([sys.executable, "-S", str(LAUNCHER), server, "-u", "-c",
                           WHOAMI + "; print(sys.dont_write_bytecode)"], cwd=ROOT, env=env, input="x\n",
                          capture_output=True, text=True, timeout=START_S, check=False)
    who, flag = done.stdout.strip().splitlines()
    assert server in _cmdline(int(who.split("|")[1])), f"not forked by the server: {done.stdout}{done.stderr}"
    assert flag == str(value is not None)


def test_a_killed_launcher_takes_its_worker_with_it(server: str,
                                                    tmp_path: Path) -> None:
    pidfile = tmp_path / "pid"
    launcher = subprocess.Popen([sys.executable, "-S", str(LAUNCHER), server, "-u", "-c",
                                 f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); "
                                 "time.sleep(600)"], cwd=ROOT)
    deadline = time.monotonic() + START_S
    while not (pidfile.is_file() and pidfile.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    worker = int(pidfile.read_text())
    assert worker != launcher.pid
    launcher.kill()
    launcher.wait(timeout=START_S)
    while Path(f"/proc/{worker}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{worker}").exists(), "the worker outlived its launcher"


def test_a_pytest_this_session_starts_gets_forked_workers(tmp_path: Path) -> None:
    """The session's server reaches a pytest started as any tool starts one (here: a plain subprocess)."""
    if WORKERS_VAR not in os.environ:
        pytest.skip("NAN_SELFTEST_FORK is 0 or runs: every worker is a fresh interpreter")
    probe, parent = tmp_path / "test_probe.py", tmp_path / "parent.txt"
    probe.write_text("import os\n\ndef test_parent():\n"
                     f"    open({str(parent)!r}, 'w').write(open(f'/proc/{{os.getppid()}}/cmdline').read())\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "1", "-q",
                           "--rootdir", str(tmp_path), "-c", os.devnull, "-p", "tests.conftest", str(probe)],
                          cwd=ROOT, capture_output=True, text=True, timeout=START_S * 3, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert os.environ[WORKERS_VAR] in parent.read_text().split("\0"), parent.read_text()
