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


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built (setuptools, no network) from a copy of what pyproject.toml names."""
    pytest.importorskip("setuptools")
    tmp_path = tmp_path_factory.mktemp("wheel")
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
                          timeout=hang_limit(slowest_s=1.5))  # the whole build
    assert done.returncode == 0, done.stderr[-3000:]
    return tmp_path / "dist" / done.stdout.strip().splitlines()[-1]


def test_wheel_ships_the_suite_plugins_and_command(wheel: Path) -> None:
    """What the wheel holds: the suite, every package, the entry points and the command."""
    names = zipfile.ZipFile(wheel).namelist()
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/entry_points.txt")))
    assert b"[pytest11]" in entry_points and b"[console_scripts]" in entry_points
    for name in ("harness.plugin", "reports.plugin", "reports.html"):
        assert f"{name} = {name}".encode() in entry_points
    assert b"nan-harness = harness.cli:main" in entry_points
    assert "harness/suite/test_families.py" in names and "harness/suite/__init__.py" in names
    assert "cases/families/matrix.py" in names and "kernel/num_nans.py" in names
    assert not [n for n in names if n.startswith("tests/")], "the checkout's tests/ must not install as `tests`"


def test_installed_a_path_after_a_space_is_a_usage_error(wheel: Path, tmp_path: Path) -> None:
    """The wheel installed (pip --target, no network), nothing of the checkout importable: from any folder,
    `python -m pytest --kernel-path /abs/dir` (pytest roots at /abs/dir before any plugin loads) ends in one line
    naming `--kernel-path=/abs/dir`, writing nothing; `nan-harness` (its own configuration and rootdir) takes the
    same words as the option's value."""
    site, folder, here = tmp_path / "site", tmp_path / "abs" / "mine", tmp_path / "here"
    folder.mkdir(parents=True)
    here.mkdir()
    limit = hang_limit(slowest_s=4.7)  # this whole test
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index", "--target",
                           str(site), str(wheel)], env=clean_env(), capture_output=True, text=True, check=False,
                          timeout=limit)
    assert done.returncode == 0, done.stderr[-3000:]
    env = clean_env({"PYTHONPATH": str(site)})
    refused = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--device", "cpu",
                              "--kernel-path", str(folder), "--markers"], cwd=here, env=env, capture_output=True,
                             text=True, check=False, timeout=limit)
    lines = [line for line in (refused.stdout + refused.stderr).splitlines() if line.strip()]
    assert refused.returncode == 4 and len(lines) == 1, lines[-20:]
    assert lines[0].startswith(f"ERROR: --kernel-path {folder}: ") and lines[0].endswith(f"--kernel-path={folder}")
    assert not list(here.iterdir())
    ran = subprocess.run([sys.executable, "-m", "harness", "--device", "cpu", "--kernel-path", str(folder),
                          "--markers"], cwd=here, env=env, capture_output=True, text=True, check=False, timeout=limit)
    assert ran.returncode == 0 and "nan_special" in ran.stdout, ran.stdout[-3000:] + ran.stderr[-3000:]
