"""What harness.misread reads from a command line: the values pytest may take for test paths, and where they root it.

The runs themselves (a usage error, never a run without the configuration) are in tests/harness/test_plugin_loading.py.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from harness.misread import nearest_folder, setup_for, spaced

pytestmark = pytest.mark.nan_harness

NO_CONFIG = argparse.Namespace(inifilename=None, override_ini=None, rootdir=None)


def test_only_spaced_values_that_are_not_test_paths() -> None:
    """A flag's `=` form, a short option's value, and a test path after a flag that takes none are never values."""
    args = ["-m", "nan_special", "--nan-json", "/abs/r.json", "--nan-fp32-full", "tests/x.py",
            "--kernel-path=/abs/dir", "--nan-markdown", "/abs/new.md", "--nan-gen-seed", "-3", "tests/x.py"]
    assert spaced(args, ["tests/x.py", "tests/x.py"]) == [("--nan-json", "/abs/r.json"),
                                                           ("--nan-markdown", "/abs/new.md")]


def test_a_file_the_run_writes_stands_for_its_nearest_folder(tmp_path: Path) -> None:
    assert nearest_folder(tmp_path, "new/deeper/r.json") == str(tmp_path)
    (tmp_path / "new").mkdir()
    assert nearest_folder(tmp_path, "new/deeper/r.json") == str(tmp_path / "new")
    assert nearest_folder(tmp_path, "/") == "/"


def test_the_setup_is_pytests_own_choice(tmp_path: Path) -> None:
    """A project's configuration roots its tests; a path beside it, first on the line, roots the run elsewhere."""
    project, other = tmp_path / "project", tmp_path / "other"
    (project / "tests").mkdir(parents=True)
    other.mkdir()
    (project / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    (other / "r.json").write_text("{}")
    assert setup_for([], NO_CONFIG, project) == (project, project / "pyproject.toml")
    assert setup_for([str(project / "tests")], NO_CONFIG, project) == (project, project / "pyproject.toml")
    assert setup_for([str(other / "r.json")], NO_CONFIG, project) == (tmp_path, None)  # both paths' ancestor
    named = argparse.Namespace(inifilename=str(project / "pyproject.toml"), override_ini=None, rootdir=None)
    assert setup_for([str(other / "r.json")], named, project)[1] == project / "pyproject.toml"


def test_without_pytests_private_setup_the_plain_misread_is_still_refused(monkeypatch: pytest.MonkeyPatch,
                                                                          tmp_path: Path) -> None:
    """The guard around pytest's private determine_setup: a pytest that moved it still refuses a run that read no
    configuration because a spaced value existed, and lets a configured run go on."""
    from types import SimpleNamespace

    from harness import misread

    monkeypatch.setattr(misread, "determine_setup", None)
    (tmp_path / "r.json").write_text("{}")
    args = ("--nan-json", str(tmp_path / "r.json"))
    parser = SimpleNamespace(parse_known_args=lambda a: argparse.Namespace(file_or_dir=[], **vars(NO_CONFIG)))

    def config(inipath: Path | None) -> SimpleNamespace:
        return SimpleNamespace(invocation_params=SimpleNamespace(dir=tmp_path, args=args), rootpath=tmp_path,
                               inipath=inipath)
    with pytest.raises(pytest.UsageError, match=f"write --nan-json={tmp_path / 'r.json'}"):
        misread.refuse(config(None), parser, ["--nan-json"])  # type: ignore[arg-type]
    misread.refuse(config(tmp_path / "pyproject.toml"), parser, ["--nan-json"])  # type: ignore[arg-type]
