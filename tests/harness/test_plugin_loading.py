"""The plugins load one way in a checkout (pyproject's addopts `-p`) and one way installed (the pytest11 entry
points), once when both apply; an option value pytest took for a test path never runs without the configuration.

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
                                                           "waivers": config.getoption("--nan-waivers", None),
                                                           "kernel_path": config.getoption("--kernel-path", None)}}))
'''


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def entry_points() -> dict[str, str]:
    return pyproject()["project"]["entry-points"]["pytest11"]


def addopts_plugins() -> list[str]:
    opts = pyproject()["tool"]["pytest"]["ini_options"]["addopts"]
    return [opts[i + 1] for i, opt in enumerate(opts) if opt == "-p"]


def reports(folder: Path) -> list[str]:
    """Every report of a run in FOLDER (a run that parses its command line writes placeholders first)."""
    return [f"--html={folder / 'p.html'}", f"--junitxml={folder / 'j.xml'}", f"--nan-json={folder / 'r.json'}"]


def spy_only(folder: Path) -> Path:
    """The spy on PYTHONPATH and no install: the checkout as it is."""
    folder.mkdir(parents=True)
    (folder / "nan_spy.py").write_text(SPY)
    return folder


def assert_usage_error(done: subprocess.CompletedProcess[str], seen: dict, first: str, last: str) -> None:
    """Exit 4 before configure (nothing ran), with one line of error that begins and ends so."""
    lines = [line for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    assert done.returncode == 4 and not seen, f"exit {done.returncode}, spy {seen}:\n" + "\n".join(lines[-20:])
    assert len(lines) == 1 and lines[0].startswith(first) and lines[0].endswith(last), lines


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


def spy_run(site: Path, cwd: Path, args: list[str], tool: str = "pytest"
            ) -> tuple[subprocess.CompletedProcess[str], dict]:
    """`python -m TOOL` ARGS in CWD with `site` (the stand-in install, or the spy alone) and the checkout importable;
    what the spy saw ({} when pytest ended before configure)."""
    out = site / f"spy-{len(list(site.glob('spy-*')))}.json"
    env = clean_env({"PYTHONPATH": os.pathsep.join((str(site), str(ROOT))), "NAN_SPY_OUT": str(out)})
    done = subprocess.run([sys.executable, "-m", tool, "-p", "nan_spy", "-p", "no:cacheprovider", *args],
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


def test_the_checkout_loads_the_plugins_one_way(tmp_path: Path) -> None:
    """Not installed, only pyproject's addopts name the plugins: no pytest11 entry point of the checkout (a dist-info
    folder on the path) and no root conftest load them, so a run that drops the addopts has no harness options."""
    site = spy_only(tmp_path / "site")
    done, seen = spy_run(site, ROOT, ["--markers", "--device", "cpu", *reports(tmp_path)])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert_once(seen, done)
    assert not set(PLUGINS) & set(seen["entry_points"]), f"entry points of the checkout: {seen['entry_points']}"
    done, seen = spy_run(site, ROOT, ["-o", "addopts=", "--markers", "--device", "cpu"])
    assert done.returncode == 4 and "unrecognized arguments: --device" in done.stderr, done.stderr[-3000:]


def test_a_run_that_drops_the_addopts_names_the_plugins_itself(tmp_path: Path) -> None:
    """`-o addopts=` (no HTML or JUnit files) with the plugins named by `-p`: each registered once."""
    plugins = [arg for name in PLUGINS for arg in ("-p", name)]
    done, seen = spy_run(spy_only(tmp_path / "site"), ROOT, ["-o", "addopts=", *plugins, "-m", "nan_special",
                                                             "--markers", "--device", "cpu", *reports(tmp_path)])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert_once(seen, done)


@pytest.mark.parametrize("where, option, kind", [("checkout", "--nan-waivers", "file"),
                                                 ("elsewhere", "--kernel-path", "folder"),
                                                 ("checkout", "--nan-json", "new")])
def test_installed_a_path_after_a_space_is_a_usage_error(tmp_path: Path, where: str, option: str, kind: str) -> None:
    """Installed (the entry points load the plugins whatever pytest read), `OPTION /abs/path` moves pytest's rootdir
    off the configuration before any plugin loads (pytest-dev/pytest#8846): one line names the `=` form, and nothing
    runs. A file the run writes (`--nan-json`) counts too: the run's xdist workers parse the same command line once
    it exists, and a second run of the same command would be refused."""
    site, elsewhere = fake_install(tmp_path / "site"), tmp_path / "elsewhere"
    elsewhere.mkdir()
    value = tmp_path / "abs" / {"file": "w.toml", "folder": "mine", "new": "results.json"}[kind]
    value.parent.mkdir()
    if kind == "file":
        value.write_text("")
    elif kind == "folder":
        value.mkdir()
    done, seen = spy_run(site, ROOT if where == "checkout" else elsewhere,
                         ["-m", "nan_special", "--markers", "--device", "cpu", option, str(value)])
    assert_usage_error(done, seen, f"ERROR: {option} {value}: pytest ", f"write {option}={value}")
    assert ("once the run has written that file" in done.stderr) == (kind == "new")
    if kind == "new":  # refused before the reports' placeholders
        assert not value.exists() and not value.with_name("summary.md").exists()


@pytest.mark.parametrize("exists", [False, True], ids=["new-file", "existing-file"])
def test_a_path_after_a_space_never_runs_without_the_configuration(tmp_path: Path, exists: bool) -> None:
    """From the checkout, not installed: `python -m pytest --nan-json /abs/r.json` with no test path. An existing
    file roots pytest at /abs before any plugin loads; nothing of ours loads (the configuration was not read), and
    pytest's own usage error refuses the harness's options. A new file: the addopts load the plugins, and the harness
    refuses the command, which its xdist workers (or its next run) would read once the file exists."""
    results = tmp_path / "abs" / "results.json"
    results.parent.mkdir()
    if exists:
        results.write_text("{}")
    done, seen = spy_run(spy_only(tmp_path / "site"), ROOT, ["-m", "nan_special", "--markers", "--device", "cpu",
                                                             "--nan-json", str(results)])
    if exists:
        assert done.returncode == 4 and not seen, done.stdout[-3000:] + done.stderr[-3000:]
        assert "unrecognized arguments: --device --nan-json" in done.stderr, done.stderr[-3000:]
        assert results.read_text() == "{}"
    else:
        assert_usage_error(done, seen, f"ERROR: --nan-json {results}: pytest ", f"write --nan-json={results}")
        assert not results.exists()


@pytest.mark.parametrize("tool", ["pytest -c pyproject.toml", "harness"])
def test_a_named_configuration_takes_paths_after_a_space(tmp_path: Path, tool: str) -> None:
    """tox's `pytest -c pyproject.toml ...` and `nan-harness` (its own configuration and rootdir) root where they
    say whatever the paths: `--kernel-path /path/to/folder` (the README's command) is that option's value."""
    waivers, folder = tmp_path / "abs" / "w.toml", tmp_path / "abs" / "mine"
    folder.mkdir(parents=True)
    waivers.write_text("")
    module, *head = tool.split()
    done, seen = spy_run(spy_only(tmp_path / "site"), ROOT, [*head, "--markers", "--device", "cpu",
                                                             "--nan-waivers", str(waivers), "--kernel-path",
                                                             str(folder), *reports(tmp_path)], tool=module)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert_once(seen, done)
    assert seen["waivers"] == str(waivers) and seen["kernel_path"] == [str(folder)]


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
