"""Rerun tests in a fresh pytest process: the controller decides, the kernel runs only in that process's own worker.

One round is one child `python -m pytest` of the given node ids, with this run's harness options (everything in
the nan-harness option group but the report paths and the rerun options), its configuration file, rootdir, `-p`
plugins, `-o` overrides and pytest-timeout settings, and `-n 1`: its controller probes and decides, its xdist worker
imports and runs the kernel, as in any run, but with no crash storm (each test named runs, however many crash).
Its reports go to a folder of its own (never this run's files, never the CI job summary). At the deadline it gets
SIGTERM (it ends 'interrupted' and still writes results.json with what ran), then its process group SIGKILL. What
it judged is in its results.json, which the caller reads (reports.reruns, through reports.results).
"""
from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness import cli, processes

GRACE_S = 20.0  # after SIGTERM, how long a child gets to write its results before its process group is killed
NOT_FORWARDED = frozenset({  # dests of harness options a rerun sets itself (or that make no sense in a child)
    "nan_json", "nan_markdown", "nan_run_id", "nan_reruns", "nan_rerun_per_family", "nan_rerun_budget_s",
    "nan_known_flaky", "nan_in_process", "nan_crash_storm",
})
_DROP_ENV = ("PYTEST_XDIST_", "GITHUB_STEP_SUMMARY")


def forwarded(config: pytest.Config, options: Iterable[object]) -> list[str]:
    """This run's harness options as a command line: each option whose value is not its default."""
    args: list[str] = []
    for option in options:
        dest, default = getattr(option, "dest", None), getattr(option, "default", None)
        names = [n for n in getattr(option, "names")() if n.startswith("--")]
        if not dest or not names or dest in NOT_FORWARDED:
            continue
        value = getattr(config.option, dest, default)
        if value == default or value is None:
            continue
        if isinstance(value, bool):
            args += [names[0]] if value else []
        elif isinstance(value, (list, tuple)):
            args += [f"{names[0]}={v}" for v in value]
        else:
            args.append(f"{names[0]}={value}")
    return args


def child_argv(config: pytest.Config, nodeids: Sequence[str], folder: Path, options: Iterable[object],
               max_crashes: int) -> list[str]:
    """The child's command: configuration, plugins and harness options of this run, its own reports, one worker."""
    inifile = str(config.inipath) if config.inipath else os.devnull
    argv = ["-c", inifile, f"--rootdir={config.rootpath}", "-p", "no:cacheprovider"]
    for plugin in getattr(config.option, "plugins", None) or ():
        argv += ["-p", str(plugin)]
    for override in getattr(config.option, "override_ini", None) or ():
        argv += ["-o", str(override)]
    if config.pluginmanager.hasplugin("timeout"):
        for dest, flag in (("timeout", "--timeout"), ("timeout_method", "--timeout-method")):
            value = getattr(config.option, dest, None)
            if value is not None:
                argv.append(f"{flag}={value}")
    argv += forwarded(config, options)
    argv += ["-q", "-n", "1", f"--max-worker-restart={max_crashes}", f"--basetemp={folder / 'tmp'}",
             f"--nan-json={folder / 'results.json'}", "--nan-markdown=", "--nan-reruns=0", "--nan-crash-storm=0",
             f"--junitxml={folder / 'junit.xml'}"]
    if config.pluginmanager.hasplugin("html"):
        argv.append(f"--html={folder / 'precision.html'}")
    return cli.child([*argv, *(str(config.rootpath / nodeid) for nodeid in nodeids)])


@dataclass
class Round:
    """What one child run left: its exit status, seconds, whether the deadline stopped it, its output (its
    results.json, folder/results.json, is read by the caller through the reports' validated reader)."""

    returncode: int | None
    seconds: float
    stopped: bool
    output: str = ""


def run_round(argv: Sequence[str], cwd: Path, folder: Path, deadline: float) -> Round:
    """Run one child until it ends or the deadline (monotonic) passes; a KeyboardInterrupt (Ctrl-C, SIGTERM here)
    kills the child's process group and propagates."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "output.txt"
    start = time.monotonic()
    stopped = False
    with open(log, "w", encoding="utf-8") as out:
        child = subprocess.Popen(list(argv), cwd=cwd, env=processes.child_env(_DROP_ENV), stdout=out,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        try:
            child.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            stopped = True  # SIGTERM to the child alone: its reports say 'interrupted' and keep what ran
            processes.stop_group(child, GRACE_S, leader_only=True)
        except BaseException:
            processes.kill_group(child)
            raise
        else:
            processes.kill_group(child)  # its workers and whatever the kernel started
    return Round(child.returncode, time.monotonic() - start, stopped,
                 log.read_text(encoding="utf-8", errors="replace") if log.is_file() else "")
