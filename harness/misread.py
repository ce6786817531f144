"""An option's value that pytest took for a test path ends the run with a usage error showing the `=` form.

pytest picks its rootdir and configuration file from the paths on its command line before any plugin loads
(pytest-dev/pytest#8846): the harness's options are unknown then, so in `--nan-json /abs/r.json` an existing
`/abs/r.json` counts as a test path, and the run roots at /abs and reads no configuration (no addopts, no strict
xfails, no HTML). `--nan-json=/abs/r.json` is pytest's own answer. The plugin sees such a run when something other
than the configuration loaded it (the `pytest11` entry points of an install, a `-p` on the command line); a checkout
run whose configuration was not read never loads it, and pytest refuses the harness's options itself
("unrecognized arguments"). Either way no run goes on without the configuration its command meant.
"""
from __future__ import annotations

import argparse
import inspect
import os
import shlex
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

try:  # pytest's own choice of rootdir: private, its keywords vary by version (pytest 8 and 9 checked)
    from _pytest.config.findpaths import determine_setup
except ImportError:  # a pytest that moved it: only the plain case below (no configuration read) is refused
    determine_setup = None

ISSUE = "pytest-dev/pytest#8846"
# files the run itself writes before its xdist workers parse the same command line (reports.plugin's placeholders):
# a value that does not exist yet moves the workers' rootdir once it does
WRITTEN: frozenset[str] = frozenset({"--nan-json", "--nan-markdown", "--html"})
Setup = tuple[Path, Path | None]  # rootdir, configuration file


def command(config: pytest.Config) -> list[str]:
    """The arguments pytest chose its rootdir from: PYTEST_ADDOPTS, then the command line (no ini addopts)."""
    return [*shlex.split(os.environ.get("PYTEST_ADDOPTS", "")), *map(str, config.invocation_params.args)]


def spaced(args: Sequence[str], paths: Iterable[str]) -> list[tuple[str, str]]:
    """Each `--flag value` written with a space, its value not one of the run's test paths (a flag's value then)."""
    left = Counter(paths)
    pairs: list[tuple[str, str]] = []
    for flag, value in zip(args, args[1:]):
        if value.startswith("-"):
            continue
        if left[value]:
            left[value] -= 1
        elif flag.startswith("--") and "=" not in flag:
            pairs.append((flag, value))
    return pairs


def nearest_folder(here: Path, value: str) -> str:
    """The folder a file the run will write stands for among test paths: its own, or the nearest one that exists."""
    folder = (here / value).parent
    while not folder.is_dir() and folder != folder.parent:
        folder = folder.parent
    return str(folder)


def setup_for(paths: Sequence[str], ns: argparse.Namespace, here: Path) -> Setup:
    """The rootdir and configuration file pytest picks for these test paths and the command's -c, --rootdir, -o."""
    given = {"inifile": ns.inifilename, "override_ini": ns.override_ini, "args": list(paths),
             "rootdir_cmd_arg": ns.rootdir or None, "invocation_dir": here}
    accepted = inspect.signature(determine_setup).parameters
    found = determine_setup(**{key: value for key, value in given.items() if key in accepted})
    return Path(found[0]), None if found[1] is None else Path(found[1])


def describe(setup: Setup) -> str:
    """A setup as the message names it."""
    return f"rootdir {setup[0]} and {setup[1] or 'no configuration file'}"


def refuse(config: pytest.Config, parser: pytest.Parser, ours: Iterable[str]) -> None:
    """Raise a one-line UsageError when a spaced option value moved pytest's rootdir or configuration file, now or
    once the run writes that file; ours: the harness's flags, named first in the message."""
    here = config.invocation_params.dir
    args = command(config)
    ns = parser.parse_known_args(args)
    paths = [str(p) for p in ns.file_or_dir]
    taken = [(flag, value) for flag, value in spaced(args, paths)
             if flag in WRITTEN or os.path.exists(here / value)]
    if not taken:
        return
    if determine_setup is None:
        if config.inipath is None and any(os.path.exists(here / value) for _, value in taken):
            raise pytest.UsageError(f"{' '.join(f'{f} {v}' for f, v in taken)}: pytest took the value for a test path "
                                    f"and read no configuration ({ISSUE}); write "
                                    f"{' '.join(f'{f}={v}' for f, v in taken)}")
        return
    meant = setup_for(paths, ns, here)
    written = {value for flag, value in taken if flag in WRITTEN}
    later = [nearest_folder(here, token) if token in written else token for token in args
             if token in written or token in paths]
    now = (config.rootpath, config.inipath)
    if now != meant:
        wrong, why = now, "pytest took the value for a test path, so the run has"
    elif (wrong := setup_for(later, ns, here)) != meant:
        why = "pytest takes the value for a test path once the run has written that file, so it would have"
    else:
        return
    named = set(ours) | WRITTEN
    shown = [pair for pair in taken if pair[0] in named] or taken
    raise pytest.UsageError(
        f"{' '.join(f'{flag} {value}' for flag, value in shown)}: {why} {describe(wrong)} instead of {describe(meant)} "
        f"({ISSUE}); write {' '.join(f'{flag}={value}' for flag, value in shown)}")
