"""Mutants from a module's own source: every operator on every node of every function, one change each.

Rewriting is on the AST (ast.unparse round trip), never on text. A mutant's id is a hash of (file, operator,
location, change), so the same source gives the same ids on every run. Mutants whose source equals the original's
or an earlier mutant's are dropped as duplicates; those that do not compile are counted and skipped.
"""
from __future__ import annotations

import ast
import copy
import difflib
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from mutate.operators import OPERATORS, Operator, Replacement, Site
from mutate.package import absolute_imports

ORIGINAL = "mut_original"  # the module name of the original's snapshot


@dataclass(frozen=True)
class Mutant:
    """One single-change variant of the module: where, which operator, what changed, and its source."""

    id: str
    operator: str
    function: str
    line: int
    col: int
    change: str
    source: str = field(repr=False)
    diff: str = field(repr=False)
    changed_lines: tuple[int, ...] = ()  # lines of the mutant's own file that differ from the original's unparse
    original_lines: tuple[int, ...] = ()  # lines of the original's unparse it changes (where coverage is recorded)
    module: str = ""  # the dotted module it changes
    jit: bool = False  # the change is inside a @triton.jit function (compiled code can prove it equivalent)

    @property
    def location(self) -> str:
        return f"{self.function}:{self.line}:{self.col}"

    @property
    def module_name(self) -> str:
        return f"mut_{self.id}"


@dataclass
class Generation:
    """What generation produced: the viable mutants, and how many were skipped and why."""

    file: str
    original: str  # the unparsed original (what mutants are diffed against and written beside)
    mutants: list[Mutant]
    not_compiling: list[dict[str, str]] = field(default_factory=list)
    duplicates: int = 0


def _is_jit(fn: ast.FunctionDef) -> bool:
    """Decorated with triton.jit (or jit, or an autotune/heuristics stack ending in it)."""
    return any("jit" in ast.unparse(d) for d in fn.decorator_list)


def _tensor_params(fn: ast.FunctionDef) -> tuple[str, ...]:
    """Parameters a wrapper receives tensors in: annotated torch.Tensor/Tensor, or named like logits."""
    names = []
    for a in fn.args.args:
        ann = ast.unparse(a.annotation) if a.annotation else ""
        if ann.endswith("Tensor") or a.arg in ("logits", "x", "input"):
            names.append(a.arg)
    return tuple(names)


def _body(fn: ast.FunctionDef) -> list[ast.stmt]:
    """The function's statements without its docstring."""
    body = fn.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body


def sites(tree: ast.Module) -> Iterator[tuple[int, ast.AST, Site]]:
    """(walk index, node, site) for every node inside a function body, in a fixed order; nested defs get their own;
    f-strings (error messages) are left alone."""
    index = {id(n): i for i, n in enumerate(ast.walk(tree))}

    def inside(node: ast.AST, site: Site) -> Iterator[tuple[int, ast.AST, Site]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef):
                yield from visit(child)
            elif not isinstance(child, (ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.JoinedStr)):
                yield index[id(child)], child, site
                yield from inside(child, site)

    def visit(fn: ast.FunctionDef) -> Iterator[tuple[int, ast.AST, Site]]:
        jit = _is_jit(fn)
        params = () if jit else _tensor_params(fn)
        for k, stmt in enumerate(_body(fn)):
            yield index[id(stmt)], stmt, Site(jit, fn.name, top=True, entry_params=params if k == 0 else ())
            yield from inside(stmt, Site(jit, fn.name))

    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            yield from visit(node)
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef):
                    yield from visit(item)


def _replace(tree: ast.Module, walk_index: int, new: Replacement) -> ast.Module:
    """A copy of `tree` with the node at `walk_index` replaced (a list replaces one statement by several)."""
    tree = copy.deepcopy(tree)
    target = list(ast.walk(tree))[walk_index]
    for parent in ast.walk(tree):
        for name, value in ast.iter_fields(parent):
            if value is target:
                setattr(parent, name, new)
                return ast.fix_missing_locations(tree)
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if item is target:
                        value[i: i + 1] = new if isinstance(new, list) else [new]
                        return ast.fix_missing_locations(tree)
    raise LookupError(f"node {walk_index} has no parent")


def mutant_id(file: str, operator: str, line: int, col: int, end: tuple[int, int], change: str) -> str:
    """Stable from (file, operator, location, change): the same mutant gets the same id on every run."""
    key = f"{file}|{operator}|{line}:{col}-{end[0]}:{end[1]}|{change}"
    return hashlib.sha1(key.encode()).hexdigest()[:10]


def _changed_lines(original: str, mutated: str, side: str = "b") -> tuple[int, ...]:
    """1-based lines of `mutated` (side b) or of `original` (side a) that differ (for a pure insertion or
    deletion, the line after it on the side that has none)."""
    lines: set[int] = set()
    matcher = difflib.SequenceMatcher(a=original.splitlines(), b=mutated.splitlines(), autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            lo, hi = (j1, j2) if side == "b" else (i1, i2)
            lines.update(range(lo + 1, max(hi, lo + 1) + 1))
    return tuple(sorted(lines))


def generate(source: str, file: str, module: str, *, is_package: bool = False,
             operators: tuple[Operator, ...] = OPERATORS) -> Generation:
    """Every single-change mutant of `source` (the text of `file`, imported as `module`)."""
    tree = absolute_imports(ast.parse(source, filename=file), module, is_package)
    original = ast.unparse(tree) + "\n"
    gen = Generation(file, original, [])
    seen = {original}
    for walk_index, node, site in sites(tree):
        for op in operators:
            if op.scope != "any" and (op.scope == "jit") != site.jit:
                continue
            for change, new in op.find(node, site):
                line, col = getattr(node, "lineno", 0), getattr(node, "col_offset", 0)
                end = (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)
                mid = mutant_id(file, op.name, line, col, end, change)
                try:
                    mutated = ast.unparse(_replace(tree, walk_index, new)) + "\n"
                    compile(mutated, f"mut_{mid}.py", "exec")
                except (SyntaxError, ValueError, TypeError, LookupError) as exc:
                    gen.not_compiling.append({"id": mid, "operator": op.name, "location": f"{site.function}:{line}",
                                              "change": change, "error": f"{type(exc).__name__}: {exc}"})
                    continue
                if mutated in seen:
                    gen.duplicates += 1
                    continue
                seen.add(mutated)
                diff = "".join(difflib.unified_diff(original.splitlines(True), mutated.splitlines(True),
                                                    f"a/{file}", f"b/{file} ({mid})", n=2))
                gen.mutants.append(Mutant(mid, op.name, site.function, line, col, change, mutated, diff,
                                          _changed_lines(original, mutated),
                                          _changed_lines(original, mutated, side="a"), module, site.jit))
    return gen

