"""`nan-harness` (or `python -m harness`): the precision suite on a module, from any folder, reports in that folder.

pytest runs the suite that ships with the harness (the package `harness.suite` when installed, `tests/precision`
in a checkout) with none of the caller's pytest configuration (their addopts or testpaths are not the suite's):
this project's settings instead, which tests/harness/test_packaging.py holds equal to pyproject.toml's. The folder
it is called from comes first on sys.path, as with `python -m pytest`, so `--kernel my_module` finds a module there.
Every other argument is pytest's or the harness's (`--device`, `--kernel`, `-n 2`, `-k`, `-m`, `--html=...`);
the caller's come last, so theirs win. `command` is the same suite in a child process, the one way every tool
starts it (mutate, nightly, bisect, the drop-in); `child` starts pytest itself (reruns: their run's own configuration).
"""
from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness.activation import PLUGINS

SUITE_PACKAGE = "harness.suite"
# pyproject.toml's [tool.pytest.ini_options], less what only a checkout needs (testpaths, pythonpath, report paths)
SETTINGS: tuple[str, ...] = (
    "--strict-markers", "--strict-config", "-ra", "--self-contained-html",
    "-o", "xfail_strict=true",
    "-o", "filterwarnings=ignore:Conversion of an array with ndim > 0 to a scalar:DeprecationWarning",
)
DEFAULTS: tuple[str, ...] = ("--timeout=900", "--timeout-method=thread")  # as tox.ini: a hung kernel fails its case
REPORTS: tuple[str, ...] = ("--html=precision.html", "--junitxml=junit.xml", "--nan-json=results.json")
# pytest rewrites asserts in every module of a pytest11 distribution; `harness` itself was imported to start this
# command (it holds no test asserts): pytest's warning that it cannot rewrite it says nothing to the caller
QUIET: tuple[str, ...] = ("-W", "ignore:Module already imported so cannot be rewritten; harness:"
                                "pytest.PytestAssertRewriteWarning")


def suite() -> Path:
    """The suite's folder: the installed package, else the checkout's tests/precision."""
    spec = importlib.util.find_spec(SUITE_PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))).resolve()
    checkout = Path(__file__).resolve().parents[1] / "tests" / "precision"
    if checkout.is_dir():
        return checkout
    raise SystemExit(f"nan-harness: no precision suite beside this harness (neither {SUITE_PACKAGE} nor {checkout})")


def checkout() -> Path | None:
    """This project's checkout when the harness runs from one (not installed): its tools keep their outputs there."""
    root = Path(__file__).resolve().parents[1]
    return root if (root / "pyproject.toml").is_file() and (root / "tests" / "precision").is_dir() else None


def home() -> Path:
    """Where a tool (nightly, mutate, bisect) starts the suite and puts relative outputs: the checkout it runs from;
    installed, the calling folder, as `nan-harness` does."""
    return checkout() or Path.cwd()


def importable(env: dict[str, str]) -> dict[str, str]:
    """env with the checkout first on PYTHONPATH when the harness runs from one, so a child started in another
    folder imports this same harness (installed, the child's Python finds it already)."""
    root = checkout()
    if root is None:
        return env
    return {**env, "PYTHONPATH": os.pathsep.join([str(root), *filter(None, [env.get("PYTHONPATH")])])}


def suite_id(folder: Path) -> str:
    """The suite's folder as its node ids begin: `tests/precision` in a checkout, `harness/suite` installed."""
    return folder.relative_to(folder.parents[1]).as_posix()


def arguments(user_args: Sequence[str], folder: Path, tests: Sequence[str] = ()) -> list[str]:
    """pytest's command line: no configuration file, our plugins and settings, the caller's arguments, the suite.

    The rootdir is the folder above the suite's package, so node ids read `harness/suite/test_x.py::...` installed
    and `tests/precision/test_x.py::...` in a checkout, whatever the calling folder. tests: node ids or files as
    those ids name them (e.g. from a results.json), run instead of the whole suite from any folder."""
    plugins = [arg for name in PLUGINS for arg in ("-p", name)]
    rootdir = folder.parents[1]
    paths = [f"{rootdir}{os.sep}{test}" for test in tests] or [str(folder)]  # no Path(): a node id keeps its text
    return [f"--config-file={os.devnull}", f"--rootdir={rootdir}", "-p", "no:cacheprovider", *plugins,
            *SETTINGS, *QUIET, *DEFAULTS, *REPORTS, *user_args, *paths]


def child(args: Sequence[str]) -> list[str]:
    """pytest in a child process with these arguments: the one place a tool's command starts pytest."""
    return [sys.executable, "-m", "pytest", *args]


def command(user_args: Sequence[str], tests: Sequence[str] = (), folder: Path | None = None) -> list[str]:
    """The suite in a child (reruns, mutate, nightly, bisect, the drop-in): `nan-harness`'s pytest command, from
    any folder; folder: the suite's (default: suite())."""
    return child(arguments(user_args, suite() if folder is None else folder, tests))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the suite with the caller's arguments; the exit status is pytest's."""
    here = os.getcwd()
    if here not in sys.path:
        sys.path.insert(0, here)  # as `python -m pytest` does; the probe and the xdist workers inherit sys.path
    return int(pytest.main(arguments(sys.argv[1:] if argv is None else argv, suite())))
