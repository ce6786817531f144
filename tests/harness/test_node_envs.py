"""The node's own tox environments (`node_site = true`: cuda, npu, bench-*, nightly-*), run the way each kind of
node image runs them (tests/support/node.py): tox from a plain venv holding torch, triton, pytest and tox (called by
path, and again with the venv activated), from a system-site Python, and from a Python without torch. The env's
requirements go on top, its command as tox.ini says. On this machine (no card) each must reach its tool and end
with the machine's verdict, never a tox, pip or plugin-load error:

- where torch is there: the suite and `python -m bench` ENVIRONMENT (exit 6) because no device is visible, with
  torch imported (the suite's results.json: kind `device`); `python -m nightly` ENVIRONMENT, no card visible; the
  npu envs ENVIRONMENT because torch_npu is missing (one line naming it); the merge "no shard folders" (exit 2);
- where torch is not: every env ENVIRONMENT (exit 6) with one line naming torch and the Python that looked.

The posargs only move each tool's files out of the checkout's out/. pip runs without an index: the node holds every
requirement already, which is the point (pip then installs no `pytest` script into the env).
"""
from __future__ import annotations

import configparser
import json
import shlex
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness import backends
from harness.needs import ENVIRONMENT_EXIT
from tests.support.limits import hang_limit
from tests.support.node import activated, base_python, shell_env, venv_node
from tests.support.subrun import ROOT

pytestmark = pytest.mark.nan_harness

TOX_INI = ROOT / "tox.ini"
NO_SHARDS = 2  # python -m nightly --merge with no shard folders: nothing to merge (docs/nightly.md)
ENV_SLOWEST_S = 30.0  # one env (tox, virtualenv, pip with nothing to install, the tool up to its device check):
# 4-6 s alone (3.7 s of CPU), 29.6 s on 2 cores at load 7


@dataclass(frozen=True)
class Node:
    """How a kind of node image is built and how its user calls tox: the argv (given the node's python) and the
    shell's variables."""

    build: Callable[[Path], Path]
    tox: Callable[[Path], list[str]]
    env: Callable[[Path], dict[str, str]]
    has_torch: bool = True


NODES: dict[str, Node] = {
    "venv-by-path": Node(venv_node, lambda py: [str(py.parent / "tox")], shell_env),
    "venv-activated": Node(venv_node, lambda py: ["tox"], lambda py: activated(shell_env(py), py.parent.parent)),
    "system-site": Node(base_python, lambda py: [str(py), "-m", "tox"], shell_env),
    "without-torch": Node(lambda d: venv_node(d, with_torch=False), lambda py: [str(py.parent / "tox")], shell_env,
                          has_torch=False),
}


def node_envs() -> dict[str, list[str]]:
    """Every env of tox.ini that runs on the node's own packages, and its command's words."""
    ini = configparser.ConfigParser(interpolation=None)
    ini.read(TOX_INI, encoding="utf-8")
    return {name.split(":", 1)[1]: shlex.split(ini[name]["commands"].replace("\\\n", " ").splitlines()[0])
            for name in ini.sections() if name.startswith("testenv:")
            and ini[name].getboolean("node_site", fallback=False)}


def tool(words: list[str]) -> str:
    """The tool a command runs: `python -m X`'s X, else the program's name."""
    return words[2] if words[:2] == ["python", "-m"] else Path(words[0]).name


def device_of(words: list[str]) -> str | None:
    return words[words.index("--device") + 1] if "--device" in words else None


def tool_args(name: str, folder: Path) -> list[str]:
    """Posargs that put the tool's files under folder."""
    if name == "pytest":
        return [f"--html={folder / 'precision.html'}", f"--junitxml={folder / 'junit.xml'}",
                f"--nan-json={folder / 'results.json'}", f"--nan-markdown={folder / 'summary.md'}"]
    if name == "bench":
        return ["--out", str(folder / "bench.json")]
    return ["--root", str(folder / "nightly"), "--night", "2026-01-01"]


def missing_line(text: str, package: str) -> bool:
    """The one line harness.needs prints: the package and the Python that looked."""
    return "ENVIRONMENT (missing-package): " in text and f"{package} is not importable by " in text


def expected(env: str, words: list[str], has_torch: bool) -> tuple[int, Callable[[Path, str], bool]]:
    """The exit status and the evidence (from the tool's files, or tox's output of its command) of one env."""
    name, device = tool(words), device_of(words)
    lacking = "torch" if not has_torch else "torch_npu" if device == "npu" else None
    if name == "nightly" and device is None:  # the merge: no shards, once it may read the families
        if lacking is None:
            return NO_SHARDS, lambda d, out: "no shard folders under" in out
        return ENVIRONMENT_EXIT, lambda d, out: missing_line(out, lacking)
    if name == "pytest":
        def suite(folder: Path, out: str) -> bool:
            failure = json.loads((folder / "results.json").read_text(encoding="utf-8"))["environment_failure"]
            if lacking is None:
                return failure["kind"] == "device" and failure["name"] == "device-not-available"
            return failure["name"] == "missing-package" and f"{lacking} is not importable" in failure["message"]
        return ENVIRONMENT_EXIT, suite
    if lacking is not None:
        return ENVIRONMENT_EXIT, lambda d, out: missing_line(out, lacking) and not (d / "bench.json").exists()
    if name == "bench":
        return ENVIRONMENT_EXIT, lambda d, out: ("python -m bench: ENVIRONMENT: --device" in out
                                                 and not (d / "bench.json").exists())
    return ENVIRONMENT_EXIT, lambda d, out: "nightly: ENVIRONMENT: --device" in out and "no card visible" in out


def test_every_node_env_runs_its_tool_in_the_envs_python() -> None:
    """`pytest` alone is the base's script when the base has pytest (tox refuses it); `python -m` is the env's."""
    envs = node_envs()
    assert {"cuda", "npu", "bench-cuda", "bench-npu", "nightly-cuda", "nightly-npu", "nightly-merge"} <= set(envs)
    assert {name: words[:3] for name, words in envs.items() if words[:2] != ["python", "-m"]} == {}
    assert {tool(words) for words in envs.values()} <= {"pytest", "bench", "nightly"}


def run_env(node: Node, python: Path, env: str, work: Path, folder: Path) -> subprocess.CompletedProcess[str]:
    """`tox -e ENV -- posargs` as the node's user types it, from a folder outside the checkout."""
    argv = [*node.tox(python), "-c", str(TOX_INI), "--workdir", str(work), "-e", env, "--",
            *tool_args(tool(node_envs()[env]), folder)]
    return subprocess.run(argv, cwd=work.parent, env=node.env(python), capture_output=True, text=True,
                          check=False, timeout=hang_limit(slowest_s=ENV_SLOWEST_S))


@pytest.mark.parametrize("kind", sorted(NODES))
def test_every_node_env_ends_with_the_machines_verdict(kind: str, tmp_path: Path) -> None:
    node = NODES[kind]
    if any(b.available() for b in (backends.BACKENDS["cuda"], backends.BACKENDS["npu"])):
        pytest.skip("this machine has an accelerator: the node envs would run for real")
    python = node.build(tmp_path / "node")
    ended: dict[str, str] = {}
    for env, words in sorted(node_envs().items()):
        folder, work = tmp_path / "files" / env, tmp_path / "tox"
        done = run_env(node, python, env, work, folder)
        text = done.stdout + done.stderr
        code, reached = expected(env, words, node.has_torch)
        assert "Traceback" not in text and "Error while loading plugin" not in text, text
        assert done.returncode == code and reached(folder, text), f"{kind} {env}: exit {done.returncode}\n{text}"
        assert not (work / env / "bin" / "pytest").exists(), "pip put pytest into the env: the node's was not seen"
        ended[env] = text
    if node.has_torch and kind.startswith("venv"):  # the bridge, not the base, gave the env its torch
        assert f"node packages from {python}" in ended["cuda"], ended["cuda"]


TOOLS = {  # every command a user runs, with what it needs to reach its package check (outputs under the folder)
    "nan-harness": lambda d: ["-m", "harness", "--device", "cuda", f"--nan-json={d / 'results.json'}",
                              f"--html={d / 'precision.html'}", f"--junitxml={d / 'junit.xml'}"],
    "bench": lambda d: ["-m", "bench", "--device", "cpu", "--out", str(d / "bench.json")],
    "nightly": lambda d: ["-m", "nightly", "--device", "npu", "--root", str(d)],
    "mutate": lambda d: ["-m", "mutate", "--kernel", "kernel", "--out", str(d / "mutation")],
    "reports.merge": lambda d: ["-m", "reports.merge", str(d / "merged"), str(d / "shard")],
}


@pytest.mark.parametrize("name", sorted(TOOLS))
def test_every_tool_without_torch_ends_environment_in_one_line(name: str, tmp_path: Path) -> None:
    """Run by a Python without torch (from the checkout, as a node user would), each tool stops before anything
    imports it: ENVIRONMENT, exit 6, one line naming torch and the Python that looked; never a traceback."""
    python = venv_node(tmp_path / "node", with_torch=False)
    (tmp_path / "shard").mkdir()
    done = subprocess.run([str(python), *TOOLS[name](tmp_path)], cwd=ROOT, env=shell_env(python),
                          capture_output=True, text=True, check=False, timeout=hang_limit(slowest_s=ENV_SLOWEST_S))
    text = done.stdout + done.stderr
    assert done.returncode == ENVIRONMENT_EXIT and "Traceback" not in text, text
    assert missing_line(text, "torch") and str(python) in text, text
