"""Each operator of the table makes its change on a tiny kernel module; ids are stable; bad mutants are counted."""
from __future__ import annotations

import ast

import pytest

from mutate import generate
from mutate.operators import BY_NAME, OPERATORS, Operator, Site

TINY = '''
import torch
import triton
import triton.language as tl
from . import helpers


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    """Docstrings are never mutated: 7."""
    req_idx = tl.program_id(0).to(tl.int64)
    num_nans = tl.zeros((), dtype=tl.int32)
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = (block < vocab_size) & (block >= 0)
        x = tl.load(logits_ptr + req_idx * logits_stride + block, mask=mask, other=0).to(tl.float32)
        bits = x.to(tl.int32, bitcast=True)
        num_nans += tl.sum(((bits & 0x7FFFFFFF) > 0x7F800000).to(tl.int32), axis=0)
    tl.atomic_add(num_nans_ptr + req_idx, num_nans, sem="relaxed")


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    if logits.dim() != 2:
        raise ValueError(f"2-D only, not {logits.dim() + 1 - 1}")
    num_reqs, vocab_size = logits.shape
    out = torch.zeros(num_reqs, dtype=torch.int32, device=logits.device)
    _num_nans_kernel[(num_reqs,)](logits, logits.stride(0), out, vocab_size, BLOCK_SIZE=8192)
    return out
'''

# operator -> (a line of the original, the line it becomes in at least one mutant)
EXPECTED: dict[str, tuple[str, str]] = {
    "compare_boundary": ("mask = (block < vocab_size) & (block >= 0)", "mask = (block <= vocab_size) & (block >= 0)"),
    "compare_equality": ("if logits.dim() != 2:", "if logits.dim() == 2:"),
    "int_constant": ("BLOCK_SIZE=8192)", "BLOCK_SIZE=8191)"),
    "int64_cast_dropped": ("req_idx = tl.program_id(0).to(tl.int64)", "req_idx = tl.program_id(0)"),
    "int_narrowed": ("num_nans = tl.zeros((), dtype=tl.int32)", "num_nans = tl.zeros((), dtype=tl.int1)"),
    "float_cast_swapped": (".to(tl.float32)", ".to(tl.bfloat16)"),
    "load_other": ("mask=mask, other=0)", "mask=mask, other=float('nan'))"),
    "mask_weakened": ("mask=mask, other=0)", "req_idx * logits_stride + block, other=0)"),
    "sum_to_max": ("num_nans += tl.sum(", "num_nans += tl.max("),
    "program_id_axis": ("tl.program_id(0)", "tl.program_id(1)"),
    "sizes_swapped": ("num_reqs, vocab_size = logits.shape", "vocab_size, num_reqs = logits.shape"),
    "addend_dropped": ("block = i + tl.arange(0, BLOCK_SIZE)", "block = tl.arange(0, BLOCK_SIZE)"),
    "early_return": ("    for i in range(", "    return\n    for i in range("),
    "guard_removed": ("raise ValueError(f'2-D only, not {logits.dim() + 1 - 1}')", "pass"),
    "contiguous_added": ("    if logits.dim() != 2:", "    logits = logits.contiguous()\n    if logits.dim() != 2:"),
    "atomic_to_store": ("tl.atomic_add(num_nans_ptr + req_idx, num_nans, sem='relaxed')",
                        "tl.store(num_nans_ptr + req_idx, num_nans)"),
}


def _generate(*ops: Operator) -> generate.Generation:
    return generate.generate(TINY, "pkg/tiny.py", "pkg.tiny", operators=ops or OPERATORS)


def test_every_operator_has_an_expectation_and_a_reason() -> None:
    assert set(EXPECTED) == set(BY_NAME), "an operator without a test here, or a test without its operator"
    for op in OPERATORS:
        assert op.reason and "\n" not in op.reason and op.scope in ("jit", "python", "any")


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_operator_makes_its_change(name: str) -> None:
    before, after = EXPECTED[name]
    gen = _generate(BY_NAME[name])
    assert gen.mutants, f"{name} made no mutant of the tiny module"
    assert before in gen.original, f"the tiny module's unparse lacks {before!r}"
    assert any(after in m.source for m in gen.mutants), (
        f"{name}: no mutant holds {after!r}; changes: {[m.change for m in gen.mutants]}")
    for m in gen.mutants:
        assert m.operator == name and m.source != gen.original and m.diff.startswith("--- a/pkg/tiny.py")
        assert "Docstrings are never mutated: 7." in m.source
        ast.parse(m.source)


def test_scopes_keep_kernel_operators_out_of_the_wrapper() -> None:
    for m in _generate().mutants:
        scope = BY_NAME[m.operator].scope
        if scope != "any":
            assert (m.function == "_num_nans_kernel") == (scope == "jit"), (m.operator, m.function)


def test_ids_are_stable_and_unique() -> None:
    first, second = _generate(), _generate()
    assert [m.id for m in first.mutants] == [m.id for m in second.mutants]
    assert len({m.id for m in first.mutants}) == len(first.mutants)
    moved = generate.generate("\n\n" + TINY, "pkg/tiny.py", "pkg.tiny")
    assert {m.id for m in moved.mutants}.isdisjoint({m.id for m in first.mutants}), "ids must name the location"


def test_relative_imports_become_absolute() -> None:
    gen = _generate()
    assert "from pkg import helpers" in gen.original
    assert all("from pkg import helpers" in m.source for m in gen.mutants)


def test_mutants_that_do_not_compile_are_counted_and_skipped() -> None:
    def broken(node: ast.AST, site: Site):  # type: ignore[no-untyped-def]
        if isinstance(node, ast.Return):
            yield "return outside any function", [ast.Return(None)]  # fine
            yield "await in a plain function", ast.Expr(ast.Await(ast.Constant(1)))  # SyntaxError at compile

    gen = _generate(Operator("broken", "a test operator", "any", broken))
    assert len(gen.not_compiling) == 1 and "SyntaxError" in gen.not_compiling[0]["error"]
    assert gen.not_compiling[0]["operator"] == "broken"
    assert all("await" not in m.source for m in gen.mutants)


def test_duplicates_are_dropped() -> None:
    def twice(node: ast.AST, site: Site):  # type: ignore[no-untyped-def]
        if isinstance(node, ast.Return):
            yield "one", ast.Pass()
            yield "two", ast.Pass()

    gen = _generate(Operator("twice", "a test operator", "any", twice))
    assert len(gen.mutants) == 1 and gen.duplicates == 1


def test_error_messages_are_not_mutated() -> None:
    assert all("2-D only, not {logits.dim() + 1 - 1}" in m.source or m.operator == "guard_removed"
               for m in _generate().mutants)


def test_changed_lines_point_into_the_mutant() -> None:
    for m in _generate(BY_NAME["sum_to_max"]).mutants:
        lines = m.source.splitlines()
        assert m.changed_lines and all("tl.max" in lines[n - 1] for n in m.changed_lines)
