"""A module's source for mutation: found without importing it (harness.source_file), relative imports made absolute."""
from __future__ import annotations

import ast

from harness.source_file import SourceError, find_source

__all__ = ["SourceError", "absolute_imports", "find_source"]


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
