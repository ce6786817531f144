"""Throwaway modules written to a temporary directory, importable under unique names, removed afterwards."""
from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest


@dataclass(frozen=True)
class FakeModules:
    """Writes modules into a directory that is on sys.path for one test."""

    root: Path

    def write(self, name: str, source: str) -> str:
        """Create module `name` (dotted names make packages) and return its name."""
        parts = name.split(".")
        folder = self.root.joinpath(*parts[:-1])
        folder.mkdir(parents=True, exist_ok=True)
        for depth in range(1, len(parts)):
            init = self.root.joinpath(*parts[:depth], "__init__.py")
            if not init.exists():
                init.write_text("")
        (folder / f"{parts[-1]}.py").write_text(textwrap.dedent(source))
        importlib.invalidate_caches()
        return name


@pytest.fixture
def fakes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeModules]:
    """A FakeModules whose imports are forgotten after the test, so names never leak between tests."""
    root = tmp_path / "fake_modules"
    root.mkdir()
    monkeypatch.syspath_prepend(str(root))
    before = set(sys.modules)
    yield FakeModules(root)
    for name in set(sys.modules) - before:
        if getattr(sys.modules[name], "__file__", "") and str(root) in str(sys.modules[name].__file__):
            del sys.modules[name]
