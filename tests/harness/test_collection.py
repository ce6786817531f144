"""Every env that runs part of tests/ collects all of it: `pytest -m nan_special` in the cpu env collects the
whole tree, so no test module may import at its top what only the selftest env installs (requirements/selftest.txt);
such a test takes it with `pytest.importorskip` where it needs it."""
from __future__ import annotations

import ast
import re
from importlib import metadata
from pathlib import Path

import pytest

pytestmark = pytest.mark.nan_harness

ROOT = Path(__file__).resolve().parents[2]


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def selftest_only_modules() -> set[str]:
    """The import names of requirements/selftest.txt's distributions (as installed here)."""
    lines = (ROOT / "requirements" / "selftest.txt").read_text(encoding="utf-8").splitlines()
    wanted = {_canonical(m.group(0)) for line in lines if (m := re.match(r"[A-Za-z0-9][A-Za-z0-9_.-]*", line.strip()))}
    found = {module for module, dists in metadata.packages_distributions().items()
             if any(_canonical(d) in wanted for d in dists)}
    if not wanted or not found:
        pytest.skip("requirements/selftest.txt's packages are not installed here (the selftest env runs this)")
    return found


def top_level_imports(path: Path) -> set[str]:
    """Top-level packages a module imports in its own body (what collection runs); none for a planted syntax error."""
    try:
        body = ast.parse(path.read_text(encoding="utf-8")).body
    except SyntaxError:  # tests/harness/fixtures/import_syntax.py: a kernel that does not import, on purpose
        return set()
    names = set()
    for node in body:
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_no_test_module_needs_the_selftest_env_to_be_collected() -> None:
    only = selftest_only_modules()
    wrong = {str(path.relative_to(ROOT)): sorted(top_level_imports(path) & only)
             for path in sorted((ROOT / "tests").rglob("*.py")) if top_level_imports(path) & only}
    assert not wrong, f"imported at module level, installed only in the selftest env: {wrong}"
