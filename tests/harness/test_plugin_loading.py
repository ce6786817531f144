"""The plugins load once: by `-p` (a checkout's pyproject addopts), by the pytest11 entry point (an install), or both.

An install is stood in for by the dist-info pip writes, made from pyproject.toml's [project] table in a temporary
folder on PYTHONPATH (no build, no network); tests/harness/test_packaging.py builds the real wheel.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.activation import PLUGINS
from tests.support.limits import hang_limit
from tests.support.subrun import clean_env

tomllib = pytest.importorskip("tomllib")

pytestmark = pytest.mark.nan_harness

ROOT = Path(__file__).resolve().parents[2]
HOOKS = ("pytest_addoption", "pytest_configure", "pytest_cmdline_main", "pytest_load_initial_conftests",
         "pytest_unconfigure", "pytest_runtest_makereport")
SPY = f'''
import json, os
from importlib.metadata import entry_points
from pathlib import Path

def pytest_configure(config):
    pm = config.pluginmanager
    names = {{name: getattr(plugin, "__name__", "") for name, plugin in pm.list_name_plugin() if plugin is not None}}
    impls = [f"{{impl.function.__module__}}.{{impl.function.__qualname__}}"
             for hook in {HOOKS!r} for impl in getattr(pm.hook, hook).get_hookimpls()]
    dists = {{getattr(plugin, "__name__", "") : dist.project_name for plugin, dist in pm.list_plugin_distinfo()}}
    eps = sorted(ep.name for ep in entry_points(group="pytest11"))
    Path(os.environ["NAN_SPY_OUT"]).write_text(json.dumps({{"names": names, "impls": impls, "dists": dists,
                                                           "entry_points": eps, "inipath": str(config.inipath),
                                                           "waivers": config.getoption("--nan-waivers", None)}}))
'''


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def entry_points() -> dict[str, str]:
    return pyproject()["project"]["entry-points"]["pytest11"]


def addopts_plugins() -> list[str]:
    opts = pyproject()["tool"]["pytest"]["ini_options"]["addopts"]
    return [opts[i + 1] for i, opt in enumerate(opts) if opt == "-p"]


def fake_install(folder: Path) -> Path:
    """What pip install leaves for the entry points: a dist-info with METADATA and entry_points.txt."""
    project = pyproject()["project"]
    dist = folder / f"{project['name'].replace('-', '_')}-{project['version']}.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {project['version']}\n")
    lines = "".join(f"{name} = {value}\n" for name, value in entry_points().items())
    (dist / "entry_points.txt").write_text(f"[pytest11]\n{lines}")
    (folder / "nan_spy.py").write_text(SPY)
    return folder


def spy_run(site: Path, cwd: Path, args: list[str]) -> tuple[subprocess.CompletedProcess[str], dict]:
    """pytest ARGS in CWD with `site` (the stand-in install) and the checkout importable; what the spy saw."""
    out = site / f"spy-{len(list(site.glob('spy-*')))}.json"
    env = clean_env({"PYTHONPATH": os.pathsep.join((str(site), str(ROOT))), "NAN_SPY_OUT": str(out)})
    done = subprocess.run([sys.executable, "-m", "pytest", "-p", "nan_spy", "-p", "no:cacheprovider", *args],
                          cwd=cwd, env=env, capture_output=True, text=True, check=False,
                          timeout=hang_limit(slowest_s=6.5))  # the slowest test of this file
    seen = json.loads(out.read_text()) if out.is_file() else {}
    return done, seen


def assert_once(seen: dict, done: subprocess.CompletedProcess[str]) -> None:
    """Every plugin registered under its module's name, and each of its hooks registered once."""
    assert seen, f"pytest ended before configure (exit {done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-2000:]}"
    for name in (*PLUGINS, "harness.isolation"):
        assert seen["names"].get(name) == name, f"{name} is not registered under its own name: {seen['names']}"
        registered_as = [key for key, module in seen["names"].items() if module == name]
        assert registered_as == [name], f"{name} registered as {registered_as}"
    twice = {impl for impl in seen["impls"] if seen["impls"].count(impl) > 1}
    assert not twice, f"hooks registered more than once: {sorted(twice)}"


def test_entry_points_name_their_modules() -> None:
    """pytest skips an entry point whose name is already a registered plugin: the names must be the module names
    that addopts' `-p` registers, or both would load (and pluggy refuses one module under two names)."""
    assert entry_points() == {name: name for name in PLUGINS}
    assert addopts_plugins() == list(PLUGINS)
    assert pyproject()["project"]["scripts"] == {"nan-harness": "harness.cli:main"}


def test_checkout_with_the_package_installed_registers_each_plugin_once(tmp_path: Path) -> None:
    """A checkout run (addopts' -p) in an environment where the package is installed too (the entry points)."""
    site = fake_install(tmp_path / "site")
    done, seen = spy_run(site, ROOT, ["--help"])
    assert done.returncode == 0, done.stderr[-3000:]
    assert set(PLUGINS) <= set(seen["entry_points"]), "the stand-in install's entry points are not visible"
    assert_once(seen, done)


def test_installed_plugin_loads_from_any_folder(tmp_path: Path) -> None:
    """From a folder with no configuration of ours, the entry points alone bring the plugins and their options."""
    site, elsewhere = fake_install(tmp_path / "site"), tmp_path / "elsewhere"
    elsewhere.mkdir()
    done, seen = spy_run(site, elsewhere, ["--help"])
    assert done.returncode == 0, done.stderr[-3000:]
    assert_once(seen, done)
    assert {seen["dists"].get(name) for name in PLUGINS} == {pyproject()["project"]["name"]}
    assert "--nan-waivers" in done.stdout and "--kernel" in done.stdout


def test_absolute_option_value_keeps_the_options(tmp_path: Path) -> None:
    """Issue 19's case, installed: an absolute path after a space moves pytest's rootdir off pyproject.toml; the
    entry points, not the rootdir's addopts, load the plugins, and they restart the command with the value joined
    by `=`, so the checkout's configuration is read after all. (`--markers` parses the whole command line, as a
    run does; `--help` would stop before the unknown options are refused.)"""
    site = fake_install(tmp_path / "site")
    waivers = tmp_path / "w.toml"
    waivers.write_text("")
    done, seen = spy_run(site, ROOT, ["-m", "nan_special", "--nan-waivers", str(waivers), "--markers",
                                      "--device", "cpu", f"--nan-json={tmp_path / 'results.json'}"])
    assert "unrecognized arguments" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert_once(seen, done)
    assert seen["inipath"].endswith("pyproject.toml"), seen
    assert seen["waivers"] == str(waivers)


def test_root_conftest_keeps_the_plugins_without_the_addopts(tmp_path: Path) -> None:
    """A checkout run that replaces pyproject's addopts (`-o addopts=`, no HTML or JUnit) still has the suite's
    options: the root conftest.py names the same plugins, and each is registered once."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "nan_spy.py").write_text(SPY)
    done, seen = spy_run(site, ROOT, ["-o", "addopts=", "-m", "nan_special", "--markers", "--device", "cpu",
                                      f"--nan-json={tmp_path / 'results.json'}"])
    assert "unrecognized arguments" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert_once(seen, done)


@pytest.mark.parametrize("exists", [False, True], ids=["new-file", "existing-file"])
def test_an_absolute_path_after_a_space_keeps_the_configuration(tmp_path: Path, exists: bool) -> None:
    """From the checkout, not installed: `python -m pytest --nan-json /abs/r.json` is an option value, never a test
    path. A new file: the addopts `-p` load the plugins before the command line is parsed. An existing file moves
    pytest's rootdir before any plugin loads (pytest-dev/pytest#8846): the checkout's dist-info loads the plugins
    and they restart the command as `--nan-json=/abs/r.json` (harness/activation.py), so pyproject.toml is read."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "nan_spy.py").write_text(SPY)
    results = tmp_path / "abs" / "results.json"
    if exists:
        results.parent.mkdir()
        results.write_text("{}")
    done, seen = spy_run(site, ROOT, ["-m", "nan_special", "--markers", "--device", "cpu", "--nan-json", str(results)])
    assert "unrecognized arguments" not in done.stderr, done.stderr[-3000:]
    assert done.returncode == 0 and seen["inipath"].endswith("pyproject.toml"), done.stdout[-3000:] + str(seen)
    assert_once(seen, done)


def test_other_projects_runs_are_left_alone(tmp_path: Path) -> None:
    """Installed, the plugins load in every pytest of the environment; a run that did not ask for the harness
    runs in its own process (no forced xdist worker) and leaves no reports behind."""
    site, project = fake_install(tmp_path / "site"), tmp_path / "project"
    project.mkdir()
    (project / "test_mine.py").write_text(
        "import os\n\ndef test_in_this_process():\n    assert 'PYTEST_XDIST_WORKER' not in os.environ\n")
    done, seen = spy_run(site, project, ["-q", "test_mine.py"])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "1 passed" in done.stdout
    assert_once(seen, done)
    assert sorted(p.name for p in project.iterdir()) == ["test_mine.py"], "the harness wrote into another project"
