"""What `--kernel` names as code to mutate, and how a changed copy of it is put under test under a new name.

The unit is the module (or package) and the same-package modules it imports, transitively, found by reading
imports, never by importing (docs/mutate.md, What is mutated). A mutant (or the original's snapshot) is written as
a package of its own, `mut_<id>`, with imports of the unit's package renamed to it.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from harness.source_file import SourceError, find_source


@dataclass(frozen=True)
class Module:
    """One module of the unit: its dotted name, its file, its text as read (mutants are made from it, so their
    ids and locations are the file's own), and that text unparsed with imports made absolute (what copies hold)."""

    name: str
    path: Path
    is_package: bool
    text: str
    source: str

    def rel(self, package: str) -> str:
        """Its file inside a copy of the package: `num_nans.py`, `__init__.py`, `sub/__init__.py`."""
        inner = self.name[len(package):].lstrip(".").split(".") if self.name != package else []
        return "/".join(inner + ["__init__"]) + ".py" if self.is_package else "/".join(inner) + ".py"


@dataclass(frozen=True)
class Unit:
    """The modules `--kernel` is made of: its package (None for a top-level module) and the modules, root first."""

    kernel: str
    package: str | None
    modules: tuple[Module, ...]

    def under_test(self, top: str) -> str:
        """The --kernel name of a copy written as `top`."""
        if self.package is None:
            return top
        return top + self.kernel[len(self.package):]


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


def _imported(tree: ast.Module) -> set[str]:
    """Dotted names an (absolute-import) module imports, with `from a import b` also giving `a.b`."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _parsed(name: str, path: Path) -> tuple[ast.Module, str, str]:
    is_package = path.name == "__init__.py"
    text = path.read_text(encoding="utf-8")
    try:
        tree = absolute_imports(ast.parse(text, filename=str(path)), name, is_package)
    except SyntaxError as exc:
        raise SourceError(f"{path}: {exc}") from exc
    return tree, text, ast.unparse(tree) + "\n"


def find_unit(kernel: str, paths: list[Path] | tuple[Path, ...] = ()) -> Unit:
    """The unit of `kernel`: its file, and the same-package modules reached through imports."""
    root = find_source(kernel, paths)
    package = kernel if root.name == "__init__.py" else (kernel.rpartition(".")[0] or None)
    pending = [kernel]
    found: dict[str, Module] = {}
    while pending:
        name = pending.pop(0)
        if name in found:
            continue
        try:
            path = find_source(name, paths)
        except SourceError:
            continue  # `from pkg import CONSTANT`: a name, not a module
        tree, text, source = _parsed(name, path)
        found[name] = Module(name, path, path.name == "__init__.py", text, source)
        if package is not None:
            pending += sorted(n for n in _imported(tree) if n == package or n.startswith(package + "."))
    return Unit(kernel, package, tuple(found.values()))


def _renamed(source: str, package: str | None, top: str) -> str:
    """`source` with imports of `package` (and its modules) renamed to `top`; line structure is kept."""
    if package is None:
        return source
    tree = ast.parse(source)

    def rename(name: str) -> str:
        return top + name[len(package):] if name == package or name.startswith(package + ".") else name

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                new = rename(alias.name)
                if new != alias.name and alias.asname is None and "." in alias.name:
                    raise SourceError(f"`import {alias.name}` binds the package name itself: write "
                                      f"`from {alias.name.rpartition('.')[0]} import {alias.name.rpartition('.')[2]}`")
                alias.name = new
        elif isinstance(node, ast.ImportFrom) and node.module:
            node.module = rename(node.module)
    return ast.unparse(tree) + "\n"


def write_copy(unit: Unit, folder: Path, top: str,
               changed: dict[str, str] | None = None) -> tuple[str, dict[str, Path]]:
    """Write the unit as `top` in `folder` (`changed`: module name -> its new source); (module under test, the
    file of each module in the copy)."""
    changed = changed or {}
    files: dict[str, Path] = {}
    for module in unit.modules:
        source = _renamed(changed.get(module.name, module.source), unit.package, top)
        path = folder / (f"{top}.py" if unit.package is None else f"{top}/{module.rel(unit.package)}")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(source, encoding="utf-8")
        files[module.name] = path
    if unit.package is not None:  # every package level of the copy must import: an __init__ the kernel does not
        for module in unit.modules:  # import itself is copied empty (its imports would reach modules not copied)
            parent = files[module.name].parent
            while parent != folder and not (parent / "__init__.py").exists():
                (parent / "__init__.py").write_text("", encoding="utf-8")
                parent = parent.parent
    return unit.under_test(top), files
