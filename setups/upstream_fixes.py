"""The minimal fixes the suite proves for upstream vLLM's NaN-count module, as edits of the module installed here.

No upstream code is kept in this project: each fix finds its pattern in the syntax tree of the module the user has
installed and rewrites only that span, so the diff is the few lines a maintainer reviews (docs/upstream.md).

    python -m setups.upstream_fixes --kernel MODULE --out DIR   the fixed module and its unified diff, in DIR
    --kernel-setup setups.upstream_fixes:install                the suite imports the fixed module, as vLLM would
                                                                (before setups.vllm_interpreter:install on the CPU)
"""
from __future__ import annotations

import argparse
import ast
import difflib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from cases.anchor import ANCHOR_BLOCK_SIZE
from harness.source_file import SourceError, find_source
from verdict.record import TestRecord

DEFAULT_MODULE = "vllm.v1.worker.gpu.metrics.logits"
MODULE_ENV = "NAN_UPSTREAM_FIX_MODULE"  # the module install() rewrites (default: vLLM's logits module)
FIXES_ENV = "NAN_UPSTREAM_FIXES"  # comma list of fix names install() applies (default: all)


@dataclass(frozen=True)
class Edit:
    """Replace the source between two (line, column) positions (1-based lines, UTF-8 byte columns, as ast gives)."""

    line: int
    col: int
    end_line: int
    end_col: int
    text: str


@dataclass(frozen=True)
class Fix:
    """One bug class and its smallest fix: what goes wrong, what the edit does, the cases it turns green."""

    name: str
    bug: str
    change: str
    turns_green: str  # the cases, in words (docs/upstream.md); `names` says it as data
    find: Callable[[ast.Module], list[Edit]]
    names: Callable[[TestRecord], bool]  # a failing record of the unfixed module that this fix turns green


def _is_jit(decorator: ast.expr) -> bool:
    """`@triton.jit`, `@jit`, `@triton.jit(...)`."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Attribute) and target.attr == "jit") or (
        isinstance(target, ast.Name) and target.id == "jit")


def _jit_functions(tree: ast.Module) -> Iterator[ast.FunctionDef]:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and any(_is_jit(d) for d in node.decorator_list):
            yield node


def _segment_prefix(node: ast.Attribute) -> str:
    """`tl` of `tl.int1`, `triton.language` of `triton.language.int1`: the module the dtype was named through."""
    return ast.unparse(node.value)


def _int32_flags(tree: ast.Module) -> list[Edit]:
    """`.to(tl.int1)` in a kernel becomes `.to(tl.int32)`: a sum over int1 flags may be lowered as an OR."""
    edits = []
    for fn in _jit_functions(tree):
        for node in ast.walk(fn):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to"
                    and node.args and isinstance(node.args[0], ast.Attribute) and node.args[0].attr == "int1"):
                arg = node.args[0]
                edits.append(Edit(arg.lineno, arg.col_offset, arg.end_lineno or arg.lineno, arg.end_col_offset or 0,
                                  f"{_segment_prefix(arg)}.int32"))
    return edits


def _multiplied(fn: ast.FunctionDef) -> tuple[set[int], set[str]]:
    """The nodes and the names that are an operand of a `*` in FN (a row index times a stride)."""
    nodes: set[int] = set()
    names: set[str] = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for side in (node.left, node.right):
                nodes.add(id(side))
                if isinstance(side, ast.Name):
                    names.add(side.id)
    return nodes, names


def _row_offset_64(tree: ast.Module) -> list[Edit]:
    """A `tl.program_id(k)` not cast, that is multiplied (directly, or as the name it is assigned to), becomes
    `tl.program_id(k).to(tl.int64)`: the row index times the row stride is then computed in 64 bits."""
    edits = []
    for fn in _jit_functions(tree):
        cast = {id(node.func.value) for node in ast.walk(fn) if isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute) and node.func.attr == "to"}
        product_nodes, product_names = _multiplied(fn)
        assigned = {id(node.value): node.targets[0].id for node in ast.walk(fn) if isinstance(node, ast.Assign)
                    and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)}
        for node in ast.walk(fn):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr == "program_id" and id(node) not in cast
                    and (id(node) in product_nodes or assigned.get(id(node)) in product_names)):
                end_line, end_col = node.end_lineno or node.lineno, node.end_col_offset or 0
                edits.append(Edit(end_line, end_col, end_line, end_col,
                                  f".to({_segment_prefix(node.func)}.int64)"))
    return edits


def _reads_column_layout(tree: ast.Module) -> bool:
    """Whether the module looks at an input's column layout anywhere (a stride other than 0, contiguity)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in ("contiguous", "is_contiguous"):
                return True
            if node.func.attr == "stride" and not (
                    node.args and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0):
                return True
    return False


def _column_stride(tree: ast.Module) -> list[Edit]:
    """`get_num_nans` that passes only the row stride gets its input's columns made unit-stride first."""
    for fn in tree.body:
        if isinstance(fn, ast.FunctionDef) and fn.name == "get_num_nans" and fn.args.args:
            param = fn.args.args[0].arg
            if _reads_column_layout(tree):
                return []
            first = fn.body[1] if len(fn.body) > 1 and ast.get_docstring(fn) is not None else fn.body[0]
            indent = " " * first.col_offset
            text = (f"{indent}if {param}.stride(-1) != 1:  # the kernel steps columns by 1\n"
                    f"{indent}    {param} = {param}.contiguous()\n")
            return [Edit(first.lineno, 0, first.lineno, 0, text)]
    return []


def _collapsed_rows(record: TestRecord) -> bool:
    """Every wrong row counted at least 1 and at most one per block (the anchor's 8192 elements) of a row that held
    more NaNs: the flags were ORed per block, not summed."""
    rows = [(c, w) for c in record.checks for w in c.wrong_rows]
    return bool(rows) and all(1 <= w.got < w.expected and w.got <= _blocks(c.params.shape) for c, w in rows)


def _blocks(shape: Sequence[int]) -> int:
    return max(1, -(-shape[-1] // ANCHOR_BLOCK_SIZE)) if shape else 1


def _past_2_31(record: TestRecord) -> bool:
    return record.family == "bigoffset" or "-bigoffset-" in record.id


def _column_strided(record: TestRecord) -> bool:
    return re.search(r"\[(transposed|col(umn)?[-_]?strided?)[\]-]", record.id) is not None


FIXES: tuple[Fix, ...] = (
    Fix("int32_flags",
        "the per-element NaN flags are int1; a backend may lower their sum as an OR, so each block of a row counts "
        "0 or 1",
        "cast the flags to int32 before the sum",
        "every case with a row of two or more NaNs in one block, counted once per block where the backend ORs int1 "
        "sums (triton-ascend)",
        _int32_flags, _collapsed_rows),
    Fix("row_offset_64",
        "the row offset (program id x row stride) is computed in 32 bits and wraps past 2^31 elements",
        "cast the program id to int64 before it multiplies the stride",
        "the bigoffset family: rows that start past 2^31 elements",
        _row_offset_64, _past_2_31),
    Fix("column_stride",
        "the wrapper passes only the row stride: a view whose columns are not adjacent (a transposed view) is "
        "read as if they were, and miscounted silently",
        "make the input's columns unit-stride (a copy only for such views) before the launch",
        "views whose column stride is not 1 (the wrapper contract's transposed input)",
        _column_stride, _column_strided),
)
BY_NAME = {fix.name: fix for fix in FIXES}


def _apply(source: str, edits: Sequence[Edit]) -> str:
    """SOURCE with EDITS made, last first so earlier positions stay valid (columns are UTF-8 byte offsets)."""
    lines = source.encode("utf-8").splitlines(keepends=True) + [b""]
    for edit in sorted(edits, key=lambda e: (e.line, e.col), reverse=True):
        head = lines[edit.line - 1][:edit.col]
        tail = lines[edit.end_line - 1][edit.end_col:]
        lines[edit.line - 1:edit.end_line] = [head + edit.text.encode("utf-8") + tail]
    return b"".join(lines).decode("utf-8")


@dataclass(frozen=True)
class Fixed:
    """A module's source with the fixes that applied to it, and the lines each one changed."""

    original: str
    source: str
    applied: tuple[tuple[Fix, tuple[int, ...]], ...]


def fix_source(source: str, names: Sequence[str] | None = None) -> Fixed:
    """Apply the named fixes (all by default) to SOURCE; a fix whose pattern is absent is not applied."""
    unknown = sorted(set(names or ()) - set(BY_NAME))
    if unknown:
        raise ValueError(f"unknown fix {', '.join(unknown)}; known: {', '.join(BY_NAME)}")
    tree = ast.parse(source)
    chosen = [BY_NAME[n] for n in names] if names else list(FIXES)
    edits: list[Edit] = []
    applied = []
    for fix in chosen:
        found = fix.find(tree)
        if found:
            edits += found
            applied.append((fix, tuple(sorted({e.line for e in found}))))
    fixed = _apply(source, edits)
    ast.parse(fixed)  # an edit that breaks the syntax is this module's bug: say so here, not at import
    return Fixed(source, fixed, tuple(applied))


def unified_diff(fixed: Fixed, name: str) -> str:
    """The review a maintainer reads: the installed file against the fixed one, as `git diff` names them."""
    before, after = fixed.original.splitlines(keepends=True), fixed.source.splitlines(keepends=True)
    return "".join(difflib.unified_diff(before, after, f"a/{name}", f"b/{name}"))


def chosen_fixes() -> list[str] | None:
    text = os.environ.get(FIXES_ENV, "").strip()
    return [n.strip() for n in text.split(",") if n.strip()] or None


FIXED_SUFFIX = " (fixed by setups.upstream_fixes)"


class _FixingLoader(importlib.machinery.SourceFileLoader):
    """Loads one module from its fixed source (no bytecode cache: the file on disk is not what runs).

    Triton builds a kernel from `inspect.getsource` of its function, not from the code object, so the module's code
    carries a file name that does not exist (the real path plus FIXED_SUFFIX): `linecache` then asks this loader's
    get_source, and every reader of the source (Triton's JIT and interpreter, tracebacks) sees the fixed text."""

    def __init__(self, fullname: str, path: str, names: Sequence[str] | None) -> None:
        super().__init__(fullname, path)
        self.names = names

    def get_source(self, fullname: str) -> str:
        return fix_source(Path(self.path).read_text(encoding="utf-8"), self.names).source

    def get_code(self, fullname: str):  # type: ignore[no-untyped-def]
        return compile(self.get_source(fullname), self.path + FIXED_SUFFIX, "exec", dont_inherit=True)


class _FixingFinder(importlib.abc.MetaPathFinder):
    def __init__(self, module: str, names: Sequence[str] | None) -> None:
        self.module, self.names = module, names

    def find_spec(self, fullname, path, target=None):  # type: ignore[no-untyped-def]
        if fullname != self.module:
            return None
        sys.meta_path.remove(self)  # find the real file the usual way, then come back
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or not isinstance(spec.loader, importlib.machinery.SourceFileLoader) or not spec.origin:
            return None
        return importlib.util.spec_from_file_location(fullname, spec.origin,
                                                      loader=_FixingLoader(fullname, spec.origin, self.names))


def install() -> None:
    """--kernel-setup: the module named by $NAN_UPSTREAM_FIX_MODULE (vLLM's logits module by default) is imported
    with the fixes in $NAN_UPSTREAM_FIXES (all by default), by whoever imports it first: the harness or vLLM."""
    module = os.environ.get(MODULE_ENV, DEFAULT_MODULE)
    if module in sys.modules:
        raise RuntimeError(f"{module} was imported before setups.upstream_fixes:install: name this setup first")
    names = chosen_fixes()
    fix_source("", names)  # an unknown name is an error now, not at the import
    if not any(isinstance(f, _FixingFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _FixingFinder(module, names))


def loaded_fixes(module: ModuleType) -> bool:
    """Whether MODULE came through install()'s loader (a test's guard that the setup ran first)."""
    return isinstance(getattr(module, "__loader__", None), _FixingLoader)


def table() -> str:
    """The fixes as a Markdown table: docs/upstream.md holds this text (a test keeps them equal)."""
    rows = ["| fix | the bug | the edit | the cases it turns green |", "|---|---|---|---|"]
    rows += [f"| `{fix.name}` | {fix.bug} | {fix.change} | {fix.turns_green} |" for fix in FIXES]
    return "\n".join(rows) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m setups.upstream_fixes", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kernel", default=DEFAULT_MODULE, metavar="MODULE", help=f"default: {DEFAULT_MODULE}")
    parser.add_argument("--kernel-path", action="append", default=[], metavar="DIR", type=Path)
    parser.add_argument("--fix", action="append", choices=list(BY_NAME), help="only these fixes (repeatable)")
    parser.add_argument("--out", type=Path, metavar="DIR", help="where the fixed module and diff go")
    parser.add_argument("--table", action="store_true", help="print the fixes as docs/upstream.md's table and stop")
    args = parser.parse_args(argv)
    if args.table:
        print(table(), end="")
        return 0
    if args.out is None:
        parser.error("--out DIR is required (or --table)")
    try:
        path = find_source(args.kernel, args.kernel_path)
    except SourceError as exc:
        parser.error(str(exc))
    fixed = fix_source(path.read_text(encoding="utf-8"), args.fix)
    if not fixed.applied:
        print(f"{args.kernel} ({path}): none of the fixes' patterns is there; nothing written")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    name = "/".join(args.kernel.split(".")) + ".py"
    (args.out / path.name).write_text(fixed.source, encoding="utf-8")
    (args.out / f"{path.stem}.diff").write_text(unified_diff(fixed, name), encoding="utf-8")
    print(f"{args.kernel} ({path}):")
    for fix, lines in fixed.applied:
        print(f"  {fix.name} at line {', '.join(map(str, lines))}: {fix.change}")
    print(f"wrote {args.out / path.name} and {args.out / (path.stem + '.diff')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
