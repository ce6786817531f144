"""Find a module's source file without importing it: the deciding process never runs the kernel under test."""
from __future__ import annotations

import ast
import sys
from collections.abc import Sequence
from pathlib import Path


class SourceError(RuntimeError):
    """The module's source cannot be found or parsed (exit 2)."""


def find_source(module: str, paths: Sequence[Path] = ()) -> Path:
    """The .py file of dotted `module`, searched in `paths` and then sys.path, as `import` would (no code runs)."""
    parts = module.split(".")
    for base in [*map(Path, paths), *(Path(p or ".") for p in sys.path)]:
        stem = base.joinpath(*parts)
        for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
            if candidate.is_file():
                return candidate.resolve()
    raise SourceError(f"--kernel {module}: no {'/'.join(parts)}.py (or package) on --kernel-path or sys.path")


def absolute_imports(tree: ast.Module, module: str, is_package: bool) -> ast.Module:
    """Relative imports made absolute, so a copy under another name and folder imports the same siblings."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - (node.level - 1)] if node.level > 1 else package
            if node.level - 1 > len(package):
                raise SourceError(f"{module}: relative import beyond its package")
            node.module = ".".join([*base, *([node.module] if node.module else [])])
            node.level = 0
    return tree
