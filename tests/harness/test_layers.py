"""The arrows the README promises, checked from the code's own imports (function-level ones included).

Layers, lowest first: what a package may import is only what sits below it. The kernel package under test and the
references import none of ours; verdict holds the result record every layer speaks; cases build inputs and their
expected counts; the harness runs them; reports read what the harness records; bench, nightly and setups sit on top.
"""
from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.nan_harness

ROOT = Path(__file__).resolve().parents[2]
LAYERS: dict[str, int] = {"kernel": 0, "reference": 0, "verdict": 0, "cases": 1, "harness": 2, "reports": 3,
                          "bench": 4, "nightly": 4, "setups": 4, "mutate": 4}


def _modules() -> dict[str, Path]:
    found = {}
    for package in LAYERS:
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
            found[name] = path
    return found


def _imports(path: Path, modules: dict[str, Path]) -> Iterator[str]:
    """Our modules that `path` imports anywhere in its body; `from pkg import sub` counts as importing pkg.sub."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules]
            if subs:
                yield from subs
            elif node.module in modules:
                yield node.module


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: set(_imports(path, modules)) - {name} for name, path in modules.items()}


def test_no_package_imports_one_above_it() -> None:
    upward = sorted(f"{a} imports {b}" for a, targets in _graph().items() for b in targets
                    if a.split(".")[0] != b.split(".")[0] and LAYERS[b.split(".")[0]] >= LAYERS[a.split(".")[0]])
    assert not upward, "imports that run up or sideways:\n  " + "\n  ".join(upward)


def test_no_two_modules_import_each_other() -> None:
    graph = _graph()
    mutual = sorted(f"{a} <-> {b}" for a, targets in graph.items() for b in targets if a < b and a in graph.get(b, ()))
    assert not mutual, "modules that import each other:\n  " + "\n  ".join(mutual)


def test_the_check_sees_a_planted_upward_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The check itself: a verdict module importing reports is reported."""
    fake = tmp_path / "verdict"
    fake.mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "bad.py").write_text("def f():\n    from reports import results\n")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "__init__.py").write_text("")
    (tmp_path / "reports" / "results.py").write_text("from verdict import bad\n")
    for package in set(LAYERS) - {"verdict", "reports"}:
        (tmp_path / package).mkdir()
    monkeypatch.setattr(__import__(__name__, fromlist=["ROOT"]), "ROOT", tmp_path)
    with pytest.raises(AssertionError, match="verdict.bad imports reports.results"):
        test_no_package_imports_one_above_it()
    with pytest.raises(AssertionError, match="reports.results <-> verdict.bad"):
        test_no_two_modules_import_each_other()
