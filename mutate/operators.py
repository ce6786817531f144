"""The mutation operators, in one table: each models a real port mistake and says which, in one line.

An operator looks at one AST node (inside a function of the module under test) and yields (what it did,
replacement). A replacement is an expression or statement node, or a list of statements that takes the place of one
statement. `scope` says where it applies: "jit" (inside @triton.jit), "python" (the wrapper) or "any".
Anchors: mutmut / cosmic-ray (operators on the AST), Zhu & Zaidman, ICST 2020 (GPU-specific operators).
"""
from __future__ import annotations

import ast
import copy
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

Replacement = ast.AST | list[ast.stmt]


@dataclass(frozen=True)
class Site:
    """Where a node sits: in a @triton.jit function or not, which function, directly in its body or not, and for
    the first statement of a Python function the tensor parameters it receives."""

    jit: bool
    function: str
    top: bool = False
    entry_params: tuple[str, ...] = ()


Finder = Callable[[ast.AST, Site], Iterator[tuple[str, Replacement]]]

_SIZE_LIKE = re.compile(r"stride|size|vocab|num_|rows|cols|chunk|items|^n$|^n_|len", re.IGNORECASE)
_SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is",
           ast.IsNot: "is not"}
_STORES = ("store", "atomic_add", "atomic_max", "atomic_xchg", "atomic_cas")


def _is_tl_attr(node: ast.AST, names: tuple[str, ...]) -> bool:
    """`tl.<name>` or `triton.language.<name>` (the attribute's last part in `names`)."""
    return isinstance(node, ast.Attribute) and node.attr in names and isinstance(node.value, (ast.Name, ast.Attribute))


def _call_of(node: ast.AST, names: tuple[str, ...]) -> bool:
    return isinstance(node, ast.Call) and _is_tl_attr(node.func, names)


def _with_keywords(call: ast.Call, keywords: list[ast.keyword]) -> ast.Call:
    new = copy.deepcopy(call)
    new.keywords = keywords
    return new


def _compare_swapped(swap: dict[type[ast.cmpop], type[ast.cmpop]]) -> Finder:
    """A finder replacing each comparison operator found in `swap` by its counterpart."""
    def find(node: ast.AST, site: Site) -> Iterator[tuple[str, Replacement]]:
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in swap:
                    new = copy.deepcopy(node)
                    new.ops[i] = swap[type(op)]()
                    yield f"{_SYMBOL[type(op)]} -> {_SYMBOL[swap[type(op)]]}", new
    return find


def _int_constant(node: ast.AST, site: Site) -> Iterator[tuple[str, Replacement]]:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        v = node.value
        seen = {v}
        for label, new in (("+1", v + 1), ("-1", v - 1), ("*2", v * 2), ("//2", v // 2), ("0", 0)):
            if new not in seen and new >= 0:
                seen.add(new)
                yield f"{v} -> {new} ({label})", ast.Constant(new)


def _int64_cast_dropped(node: ast.AST, site: Site) -> Iterator[tuple[str, Replacement]]:
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "to"
            and node.args and _is_tl_attr(node.args[0], ("int64",))):
        yield ".to(int64) dropped", copy.deepcopy(node.func.value)


def _dtype_swapped(targets: dict[str, tuple[str, ...]], modules: tuple[str, ...]) -> Finder:
    """A finder replacing `tl.<dtype>` (the module name in `modules`) by each of its targets."""
    def find(node: ast.AST, site: Site) -> Iterator[tuple[str, Replacement]]:
        if isinstance(node, ast.Attribute) and node.attr in targets and isinstance(node.value, ast.Name) \
                and node.value.id in modules:
            for other in targets[node.attr]:
                yield f"{node.attr} -> {other}", ast.Attribute(copy.deepcopy(node.value), other, ast.Load())
    return find


def _load_other(node: ast.AST, site: Site) -> Iterator[tuple[str, Replacement]]:
    if _call_of(node, ("load",)):
        assert isinstance(node, ast.Call)
        for i, kw in enumerate(node.keywords):
            if kw.arg == "other":
                rest = [k for j, k in enumerate(node.keywords) if j != i]
                nan = ast.keyword("other", ast.parse("float('nan')", mode="eval").body)
                yield "other -> nan", _with_keywords(node, [*rest[:i], nan, *rest[i:]])
                yield "other -> 1", _with_keywords(node, [*rest[:i], ast.keyword("other", ast.Constant(1)), *rest[i:]])
                yield "other dropped", _with_keywords(node, rest)


def _mask_weakened(node: ast.AST, site: Site) -> Iterator[tuple[str, Replacement]]:
    if _call_of(node, ("load", *_STORES)):
        assert isinstance(node, ast.Call)
        for i, kw in enumerate(node.keywords):
            if kw.arg == "mask":
                yield "mask dropped", _with_keywords(node, [k for j, k in enumerate(node.keywords) if j != i])
                if isinstance(kw.value, ast.BinOp) and isinstance(kw.value.op, ast.BitAnd):
                    for side, part in (("left", kw.value.left), ("right", kw.value.right)):
                        kws = copy.deepcopy(node.keywords)
                        kws[i] = ast.keyword("mask", copy.deepcopy(part))
                        yield f"mask keeps only its {side} term", _with_keywords(node, kws)


def _sum_to_max(node: ast.AST, site: Site) -> Iterator[tuple[str, Replacement]]:
    if _is_tl_attr(node, ("sum",)):
        assert isinstance(node, ast.Attribute)
        yield "sum -> max", ast.Attribute(copy.deepcopy(node.value), "max", ast.Load())


def _program_id_axis(node: ast.AST, site: Site) -> Iterator[tuple[str, Replacement]]:
    if _call_of(node, ("program_id", "num_programs")):
        assert isinstance(node, ast.Call)
        args = node.args or [kw.value for kw in node.keywords if kw.arg == "axis"]
        if args and isinstance(args[0], ast.Constant) and args[0].value in (0, 1):
            new = copy.deepcopy(node)
            new.args, new.keywords = [ast.Constant(1 - args[0].value)], []
            yield f"axis {args[0].value} -> {1 - args[0].value}", new


def _size_like(node: ast.AST) -> bool:
    if isinstance(node, ast.Name):
        return bool(_SIZE_LIKE.search(node.id))
    if isinstance(node, ast.Attribute):
        return bool(_SIZE_LIKE.search(node.attr))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr in ("stride", "size", "numel")
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute):
        return node.value.attr == "shape"
    return False


def _sizes_swapped(node: ast.AST, site: Site) -> Iterator[tuple[str, Replacement]]:
    if isinstance(node, ast.Call):
        idx = [i for i, a in enumerate(node.args) if _size_like(a)]
        for a, i in enumerate(idx):
            for j in idx[a + 1:]:
                if ast.dump(node.args[i]) == ast.dump(node.args[j]):
                    continue
                new = copy.deepcopy(node)
                new.args[i], new.args[j] = new.args[j], new.args[i]
                yield f"arguments {i} and {j} swapped", new
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Tuple):
        elts = node.targets[0].elts
        if len(elts) == 2 and all(isinstance(e, ast.Name) for e in elts):
            new = copy.deepcopy(node)
            new.targets[0].elts.reverse()  # type: ignore[attr-defined]
            yield "unpacked names swapped", new


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _addend_dropped(node: ast.AST, site: Site) -> Iterator[tuple[str, Replacement]]:
    if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)
            and not (_is_text(node.left) or _is_text(node.right))):
        yield "left addend kept", copy.deepcopy(node.left)
        yield "right addend kept", copy.deepcopy(node.right)
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and not _is_text(node.value):
        yield "+= becomes =", ast.Assign([copy.deepcopy(node.target)], copy.deepcopy(node.value))


def _touches_memory(stmt: ast.stmt) -> bool:
    return isinstance(stmt, (ast.For, ast.While)) or any(_call_of(n, _STORES) for n in ast.walk(stmt))


def _early_return(node: ast.AST, site: Site) -> Iterator[tuple[str, Replacement]]:
    if isinstance(node, ast.stmt) and not isinstance(node, (ast.FunctionDef, ast.Return)) \
            and site.top and _touches_memory(node):
        yield "return inserted before", [ast.Return(None), copy.deepcopy(node)]


def _guard_removed(node: ast.AST, site: Site) -> Iterator[tuple[str, Replacement]]:
    if isinstance(node, ast.Raise):
        yield "raise removed", ast.Pass()
    elif isinstance(node, ast.Assert):
        yield "assert removed", ast.Pass()
    elif isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
        if "check" in name.lower() or "validate" in name.lower():
            yield f"{name}() call removed", ast.Pass()


def _contiguous_added(node: ast.AST, site: Site) -> Iterator[tuple[str, Replacement]]:
    if isinstance(node, ast.stmt) and site.entry_params:
        for param in site.entry_params:
            line = ast.parse(f"{param} = {param}.contiguous()").body[0]
            yield f"{param}.contiguous() added", [line, copy.deepcopy(node)]


def _atomic_to_store(node: ast.AST, site: Site) -> Iterator[tuple[str, Replacement]]:
    if _call_of(node, ("atomic_add",)):
        assert isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
        new = copy.deepcopy(node)
        new.func.attr = "store"  # type: ignore[attr-defined]
        new.keywords = [k for k in new.keywords if k.arg == "mask"]
        yield "atomic_add -> store", new


@dataclass(frozen=True)
class Operator:
    """One kind of mutation: its name (in ids and reports), the mistake it models, where it applies, its finder."""

    name: str
    reason: str
    scope: str
    find: Finder


OPERATORS: tuple[Operator, ...] = (
    Operator("compare_boundary", "off by one: a mask or bound one element too far or too short (< vs <=)", "any",
             _compare_swapped({ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt})),
    Operator("compare_equality", "a test negated (== vs !=): a guard or a predicate inverted", "any",
             _compare_swapped({ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is})),
    Operator("int_constant", "a constant copied wrong (+-1, x2, /2, 0): block size, bit mask, axis, sentinel", "any",
             _int_constant),
    Operator("int64_cast_dropped", "the row offset computed in 32 bits: overflows past 2^31 elements", "jit",
             _int64_cast_dropped),
    Operator("int_narrowed", "flags or accumulator too narrow (int32 -> int16/int8/int1; int64 -> int32)", "any",
             _dtype_swapped({"int32": ("int16", "int8", "int1"), "int64": ("int32",)}, ("tl", "triton"))),
    Operator("float_cast_swapped", "the upcast goes to the wrong float format: NaN bits of the wrong width", "jit",
             _dtype_swapped({"float32": ("float16", "bfloat16"), "float16": ("bfloat16",), "bfloat16": ("float16",)},
                            ("tl",))),
    Operator("load_other", "masked lanes filled with a value the predicate counts (NaN), or left undefined", "jit",
             _load_other),
    Operator("mask_weakened", "a load or store without its mask (or half of it): reads past the row", "jit",
             _mask_weakened),
    Operator("sum_to_max", "a reduction that ORs instead of counting (tl.sum -> tl.max)", "jit", _sum_to_max),
    Operator("program_id_axis", "a grid axis swapped (program_id(0) <-> (1)): every program on one row", "jit",
             _program_id_axis),
    Operator("sizes_swapped", "strides and sizes passed in the wrong order", "any", _sizes_swapped),
    Operator("addend_dropped", "an offset term forgotten (base, row offset, block start) or += written as =", "any",
             _addend_dropped),
    Operator("early_return", "a kernel returning before its loop or store (a misplaced guard)", "jit", _early_return),
    Operator("guard_removed", "an input check dropped (raise, assert, check call): bad input counted silently",
             "python", _guard_removed),
    Operator("contiguous_added", "a .contiguous() copy on entry: padded rows copied instead of read in place",
             "python", _contiguous_added),
    Operator("atomic_to_store", "a plain store where partial counts must be added (atomicity removed)", "jit",
             _atomic_to_store),
)

BY_NAME: dict[str, Operator] = {op.name: op for op in OPERATORS}
