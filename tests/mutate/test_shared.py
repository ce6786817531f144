"""mutate.shared: a copy's jit function is replaced by the original's only where its compiled code cannot differ."""
from __future__ import annotations

import importlib
import os
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

from mutate.shared import share_kernels

HELPERS = '''
import triton
import triton.language as tl

SHIFT = 1

@triton.jit
def twice(x):
    return x * 2

@triton.jit
def shifted(x):
    return x + SHIFT
'''

KERNELS = '''
import triton
import triton.language as tl
from {top}.helpers import twice, shifted
from {top} import helpers

BLOCK = 16

@triton.jit
def plain(x_ptr, n, B: tl.constexpr):
    tl.store(x_ptr + tl.arange(0, B), tl.load(x_ptr + tl.arange(0, B)) + 1)

@triton.jit
def uses_block(x_ptr):
    tl.store(x_ptr + tl.arange(0, BLOCK), tl.zeros([BLOCK], tl.int32))

@triton.jit
def calls_twice(x_ptr):
    tl.store(x_ptr, twice(tl.load(x_ptr)))

@triton.jit
def calls_shifted(x_ptr):
    tl.store(x_ptr, shifted(tl.load(x_ptr)))

@triton.jit
def through_module(x_ptr):
    tl.store(x_ptr, helpers.twice(tl.load(x_ptr)))

@triton.jit
def with_default(x_ptr, B: tl.constexpr = BLOCK):
    tl.store(x_ptr, B)

tuned = triton.heuristics({{"B": lambda args: 16}})(plain)
'''


def _write(root: Path, top: str, helpers: str, kernels: str) -> None:
    (root / top).mkdir()
    (root / top / "__init__.py").write_text("")
    (root / top / "helpers.py").write_text(textwrap.dedent(helpers))
    (root / top / "kernels.py").write_text(textwrap.dedent(kernels.format(top=top)))


@pytest.fixture
def packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, list[str]]]:
    """A folder on sys.path for an original and its copies, compiled-Triton objects (no interpreter); cleaned up."""
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    pytest.importorskip("triton")
    monkeypatch.syspath_prepend(str(tmp_path))
    tops: list[str] = []
    yield tmp_path, tops
    for name in [n for n in sys.modules if n.split(".")[0] in tops]:
        del sys.modules[name]


def _pair(packages: tuple[Path, list[str]], helpers: str = HELPERS, kernels: str = KERNELS,
          ) -> tuple[ModuleType, ModuleType, int]:
    """(original's kernels module, copy's kernels module, how many were shared) for a copy of the given text."""
    root, tops = packages
    n = len(tops)
    original, copy = f"orig_shared_{os.getpid()}_{n}", f"mut_shared_{os.getpid()}_{n}"
    tops += [original, copy]
    _write(root, original, HELPERS, KERNELS)
    _write(root, copy, helpers, kernels)
    old, new = importlib.import_module(f"{original}.kernels"), importlib.import_module(f"{copy}.kernels")
    return old, new, share_kernels(copy, original)


def test_unchanged_copy_shares_every_kernel(packages: tuple[Path, list[str]]) -> None:
    old, new, shared = _pair(packages)
    for name in ("plain", "uses_block", "calls_twice", "calls_shifted", "with_default"):
        assert getattr(new, name) is getattr(old, name), name
    assert new.tuned.fn is old.plain  # the wrapper keeps its own state around the warm kernel
    assert new.through_module is not old.through_module  # it names a module of the unit: not shown equal
    assert sys.modules[new.__name__.replace("kernels", "helpers")].twice is old.twice
    assert shared >= 8


def test_changed_body_is_not_shared(packages: tuple[Path, list[str]]) -> None:
    old, new, _ = _pair(packages, kernels=KERNELS.replace("tl.load(x_ptr + tl.arange(0, B)) + 1",
                                                          "tl.load(x_ptr + tl.arange(0, B)) + 2"))
    assert new.plain is not old.plain
    assert new.uses_block is old.uses_block


def test_changed_global_is_not_shared(packages: tuple[Path, list[str]]) -> None:
    """A constant the body reads (and a default evaluated from it) is part of the compiled code."""
    old, new, _ = _pair(packages, kernels=KERNELS.replace("BLOCK = 16", "BLOCK = 32"))
    assert new.uses_block is not old.uses_block
    assert new.with_default is not old.with_default
    assert new.plain is old.plain


def test_changed_callee_is_not_shared(packages: tuple[Path, list[str]]) -> None:
    """A jit callee changed in another module, or a global only the callee reads, keeps the caller's own copy."""
    old, new, _ = _pair(packages, helpers=HELPERS.replace("x * 2", "x * 3"))
    assert new.calls_twice is not old.calls_twice
    assert new.calls_shifted is old.calls_shifted
    old, new, _ = _pair(packages, helpers=HELPERS.replace("SHIFT = 1", "SHIFT = 2"))
    assert new.calls_shifted is not old.calls_shifted
    assert new.calls_twice is old.calls_twice


def test_changed_option_is_not_shared(packages: tuple[Path, list[str]]) -> None:
    old, new, _ = _pair(packages, kernels=KERNELS.replace("@triton.jit\ndef plain",
                                                          "@triton.jit(do_not_specialize=['n'])\ndef plain"))
    assert new.plain is not old.plain


def test_a_kernel_missing_a_field_is_not_shared() -> None:
    """A Triton whose JITFunction lacks a field the comparison reads: the copy keeps its own kernel, nothing raises."""
    from mutate.shared import _Same

    class Bare:  # a jit function type with no `src`, `fn` or options
        pass

    assert _Same(Bare).kernels(Bare(), Bare()) is False
