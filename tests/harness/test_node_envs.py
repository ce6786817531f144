"""The node's own tox environments (`system_site_packages = true`: cuda, npu, bench-*, nightly-*), built the way a
node builds them: tox over a Python that already holds torch, triton and pytest (tests/support/node.py), the env's
requirements on top, its command as tox.ini says. On this machine each must reach its tool and end with the
machine's verdict (the device is not here), never a tox or pip error: the suite and `python -m bench` ENVIRONMENT
(exit 6), `python -m nightly` no card visible and its merge no shards (exit 2, nothing judged).

The posargs only move each tool's files out of the checkout's out/. pip runs without an index: the node holds
every requirement already, which is the point (pip then installs no `pytest` script into the env).
"""
from __future__ import annotations

import configparser
import json
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness import backends
from harness.environment_failures import ENVIRONMENT_EXIT
from tests.support.limits import hang_limit
from tests.support.node import base_python, shell_env
from tests.support.subrun import ROOT

pytestmark = pytest.mark.nan_harness

TOX_INI = ROOT / "tox.ini"
NOTHING_JUDGED = 2  # python -m nightly: no card visible, no shards to merge (docs/nightly.md)
ENV_SLOWEST_S = 30.0  # one env (tox, virtualenv, pip with nothing to install, the tool up to its device check):
# 4-6 s alone (3.7 s of CPU), 29.6 s on 2 cores at load 7


@dataclass(frozen=True)
class Ending:
    """How a tool must end on a machine without the env's device: its arguments (files into a folder), exit
    status, and the evidence, read from what the run left (`folder`, tox's output of the command), that the tool
    itself stopped it."""

    args: Callable[[Path], list[str]]
    exit: int
    reached: Callable[[Path, str], bool]


def _suite_environment(folder: Path, _: str) -> bool:
    doc = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    return doc["ended"] == "environment" and doc["environment_failure"]["kind"] == "device"


ENDINGS: dict[str, Ending] = {
    "pytest": Ending(lambda d: [f"--html={d / 'precision.html'}", f"--junitxml={d / 'junit.xml'}",
                                f"--nan-json={d / 'results.json'}", f"--nan-markdown={d / 'summary.md'}"],
                     ENVIRONMENT_EXIT, _suite_environment),
    "bench": Ending(lambda d: ["--out", str(d / "bench.json")], ENVIRONMENT_EXIT,
                    lambda d, out: "python -m bench: ENVIRONMENT: --device" in out and not (d / "bench.json").exists()),
    "nightly": Ending(lambda d: ["--root", str(d / "nightly"), "--night", "2026-01-01"], NOTHING_JUDGED,
                      lambda d, out: "no card visible here" in out or "no shard folders under" in out),
}


def node_envs() -> dict[str, list[str]]:
    """Every env of tox.ini that runs on the node's own packages, and its command's words."""
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(TOX_INI, encoding="utf-8")
    return {name.split(":", 1)[1]: shlex.split(ini[name]["commands"].replace("\\\n", " ").splitlines()[0])
            for name in ini.sections() if name.startswith("testenv:")
            and ini[name].getboolean("system_site_packages", fallback=False)}


def tool(words: list[str]) -> str:
    """The tool a command runs: `python -m X`'s X, else the program's name."""
    return words[2] if words[:2] == ["python", "-m"] else Path(words[0]).name


def tox() -> list[str]:
    """tox as CI runs it: the interpreter this env was built from (tox's own), else `tox` on PATH."""
    base = getattr(sys, "_base_executable", sys.executable)
    if subprocess.run([base, "-c", "import tox"], capture_output=True, check=False).returncode == 0:
        return [base, "-m", "tox"]
    found = shutil.which("tox")
    if found is None:
        pytest.skip("tox is not installed here: these are tox's environments")
    return [found]


def test_every_node_env_runs_its_tool_in_the_envs_python() -> None:
    """`pytest` alone is the base's script when the base has pytest (tox refuses it); `python -m` is the env's."""
    envs = node_envs()
    assert {"cuda", "npu", "bench-cuda", "nightly-cuda", "nightly-merge"} <= set(envs)
    assert {name: words[:3] for name, words in envs.items() if words[:2] != ["python", "-m"]} == {}
    assert {tool(words) for words in envs.values()} <= set(ENDINGS)


@pytest.mark.parametrize("env", sorted(node_envs()))
def test_node_env_reaches_its_tool(env: str, tmp_path: Path) -> None:
    words = node_envs()[env]
    device = words[words.index("--device") + 1] if "--device" in words else None
    if device is not None and backends.BACKENDS[device].available():
        pytest.skip(f"this machine has a {device} device: {env} would run for real")
    ending = ENDINGS[tool(words)]
    node = base_python(tmp_path / "node")
    folder, work = tmp_path / "files", tmp_path / "tox"
    argv = [*tox(), "-c", str(TOX_INI), "--workdir", str(work), "-e", env, "-x", f"testenv:{env}.base_python={node}",
            "--", *ending.args(folder)]
    done = subprocess.run(argv, cwd=tmp_path, env=shell_env(node), capture_output=True, text=True, check=False,
                          timeout=hang_limit(slowest_s=ENV_SLOWEST_S))
    text = done.stdout + done.stderr
    assert done.returncode == ending.exit, text  # one env: tox exits with its command's status
    assert ending.reached(folder, text), text
    venv = (work / env / "pyvenv.cfg").read_text(encoding="utf-8")
    assert f"home = {node.parent}" in venv.splitlines() and "include-system-site-packages = true" in venv, venv
    assert not (work / env / "bin" / "pytest").exists(), "pip put pytest into the env: its base was not a node's"
