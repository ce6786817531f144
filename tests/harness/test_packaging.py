"""What `pip install` ships: every package of the checkout's layout, the suite as `harness.suite`, the entry points
and the `nan-harness` command, whose pytest settings are pyproject.toml's."""
from __future__ import annotations

import ast
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from harness import cli
from tests.support.limits import hang_limit
from tests.support.subrun import clean_env

tomllib = pytest.importorskip("tomllib")

pytestmark = pytest.mark.nan_harness

ROOT = Path(__file__).resolve().parents[2]
SUITE = "tests/precision"


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def shipped() -> list[str]:
    return pyproject()["tool"]["setuptools"]["packages"]


def test_every_package_of_the_checkout_is_shipped() -> None:
    """A package (mutate/) or a subpackage added under kernel/, cases/, ... without being listed would be missing
    from an install: every package of the checkout but its tests."""
    tops = {init.parent.name for init in ROOT.glob("*/__init__.py")} - {"tests"}
    assert tops <= set(shipped()), f"not shipped: {sorted(tops - set(shipped()))}"
    found = {".".join(init.parent.relative_to(ROOT).parts) for top in tops for init in (ROOT / top).rglob("__init__.py")
             if "__pycache__" not in init.parts}
    assert found == set(shipped()) - {cli.SUITE_PACKAGE}
    assert pyproject()["tool"]["setuptools"]["package-dir"] == {cli.SUITE_PACKAGE: SUITE}


def test_suite_imports_nothing_by_its_checkout_name() -> None:
    """Installed, the suite is `harness.suite`: a `tests.` import would fail there (relative imports move with it)."""
    wrong = [f"{path.name}:{node.lineno}" for path in sorted((ROOT / SUITE).glob("*.py"))
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if (isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("tests"))
             or (isinstance(node, ast.Import) and any(a.name.startswith("tests") for a in node.names))]
    assert not wrong, f"imports of tests.* in the shipped suite: {wrong}"


def test_runner_settings_are_pyprojects() -> None:
    """`nan-harness` runs without pyproject.toml: its settings must be the ones a checkout run gets from it."""
    ini = pyproject()["tool"]["pytest"]["ini_options"]
    flags = [opt for opt in ini["addopts"] if opt.startswith("-") and "=" not in opt and opt != "-p"]
    ours = list(cli.SETTINGS)
    overrides = dict(ours[i + 1].split("=", 1) for i, opt in enumerate(ours) if opt == "-o")
    assert [opt for i, opt in enumerate(ours) if opt != "-o" and (i == 0 or ours[i - 1] != "-o")] == flags
    assert overrides == {"xfail_strict": str(ini["xfail_strict"]).lower(),
                         "filterwarnings": "\n".join(ini["filterwarnings"])}


def test_runner_command_line(tmp_path: Path) -> None:
    """No configuration file of the caller's, our plugins by name, the caller's arguments after ours, suite last."""
    suite = tmp_path / "site" / "harness" / "suite"
    args = cli.arguments(["--kernel", "mine", "--html=x.html"], suite)
    assert args[:2] == [f"--config-file={cli.os.devnull}", f"--rootdir={tmp_path / 'site'}"]
    assert args[-1] == str(suite) and args.index("--html=x.html") > args.index("--html=precision.html")
    assert cli.suite() == ROOT / SUITE  # in a checkout; installed, the package harness.suite


def test_wheel_ships_the_suite_plugins_and_command(tmp_path: Path) -> None:
    """Build the wheel (setuptools, no network) from a copy of what pyproject.toml names and read what it holds."""
    pytest.importorskip("setuptools")
    source = tmp_path / "source"
    source.mkdir()
    shutil.copy(ROOT / "pyproject.toml", source)
    for top in sorted({name.split(".")[0] for name in shipped()}):
        shutil.copytree(ROOT / top, source / top, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / SUITE, source / SUITE, ignore=shutil.ignore_patterns("__pycache__"))
    build = ("import sys; from setuptools import build_meta; "
             "print(build_meta.build_wheel(sys.argv[1]))")
    done = subprocess.run([sys.executable, "-c", build, str(tmp_path / "dist")], cwd=source, env=clean_env(),
                          capture_output=True, text=True, check=False,
                          timeout=hang_limit(slowest_s=1.5))  # this whole test
    assert done.returncode == 0, done.stderr[-3000:]
    wheel = zipfile.ZipFile(tmp_path / "dist" / done.stdout.strip().splitlines()[-1])
    names = wheel.namelist()
    entry_points = wheel.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "[pytest11]" in entry_points and "[console_scripts]" in entry_points
    for name in ("harness.plugin", "reports.plugin", "reports.html"):
        assert f"{name} = {name}" in entry_points
    assert "nan-harness = harness.cli:main" in entry_points
    assert "harness/suite/test_families.py" in names and "harness/suite/__init__.py" in names
    assert "cases/families/matrix.py" in names and "kernel/num_nans.py" in names
    assert not [n for n in names if n.startswith("tests/")], "the checkout's tests/ must not install as `tests`"
