"""Find a module's source file without importing it: the deciding process never runs the kernel under test."""
from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path


class SourceError(RuntimeError):
    """The module's source cannot be found or parsed (a usage error for the tools that read it)."""


def find_source(module: str, paths: Sequence[Path] = ()) -> Path:
    """The .py file of dotted `module`, searched in `paths` and then sys.path, as `import` would (no code runs)."""
    parts = module.split(".")
    for base in [*map(Path, paths), *(Path(p or ".") for p in sys.path)]:
        stem = base.joinpath(*parts)
        for candidate in (stem.with_suffix(".py"), stem / "__init__.py"):
            if candidate.is_file():
                return candidate.resolve()
    raise SourceError(f"--kernel {module}: no {'/'.join(parts)}.py (or package) on --kernel-path or sys.path")
