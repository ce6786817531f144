"""Trivial Compiler Equivalence: the original's and a mutant's `@triton.jit` function compiled alike, IR compared.

Both are compiled for the same specializations (Spec: argument types, constexpr values, divisibility attributes,
launch options) and the IR text at one level is hashed once source locations, the kernel's name and the module's
name are stripped (at ttir and ttgir the SSA names too, which Triton takes from Python variable names). Equal
digests prove the mutant equivalent ("same compiled code"); a digest equal to another mutant's makes it that one's
duplicate. Unequal digests prove nothing.

LEVELS, from the front end down: ttir, ttgir, llir, ptx. We compare ttgir by default: it comes after Triton's
target-independent passes (inlining, canonicalisation, CSE, dead-code removal) and the target's layout passes,
before LLVM. A lower level (llir, ptx) proves more mutants equivalent, since LLVM folds further, but its text
depends on the LLVM and ptxas versions and carries more noise (debug metadata numbering, register numbering).

Under TRITON_INTERPRET=1 (set before Triton was imported, as the harness does for --device cpu) Triton's own
language functions are interpreted and the code generator cannot compile anything in that process (it would call
them and leave triton.language patched): mutate.specs.specs_from_call still works there (it re-makes a JITFunction
from the interpreted function's Python function), while compile_spec, ir_text and ir_digest raise NotCompilableHere.
Compile in a worker started without TRITON_INTERPRET; Spec.to_json/from_json carry the specs to it.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
from collections.abc import Iterator
from typing import Any

from mutate.ir_text import normalize
from mutate.specs import Spec, as_jit_function, as_triton_type, interpreted_here, param_path, unplain

LEVELS: tuple[str, ...] = ("ttir", "ttgir", "llir", "ptx")
DEFAULT_LEVEL = "ttgir"
CPU_ARCH, CPU_WARP_SIZE = 90, 32  # an H100/H200: the GPU the suite's CUDA runs use


class NotCompilableHere(RuntimeError):
    """This process cannot compile (an interpreter process, no GPU for target None): never the mutant's fault."""


class CompileFailed(Exception):
    """The compiler refused this function for this Spec: the caller counts the mutant as not viable."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@contextlib.contextmanager
def _compiler_mode() -> Iterator[None]:
    """The interpreter knob off for the duration (a no-op where Triton has no knobs module)."""
    try:
        from triton import knobs

        runtime = knobs.runtime
        was = runtime.interpret
    except (ImportError, AttributeError):
        yield
        return
    runtime.interpret = False
    try:
        yield
    finally:
        runtime.interpret = was


# --- targets --------------------------------------------------------------------------------------------------

def cpu_target() -> tuple[Any, str]:
    """(GPUTarget cuda sm90 warp 32, "") where this Triton compiles for it without a device; else (None, why)."""
    return _cpu_target()


@functools.cache
def _cpu_target() -> tuple[Any, str]:
    """cpu_target, checked once: a CUDA backend that takes the target and finds its ptxas (no compile)."""
    try:
        from triton.backends.compiler import GPUTarget
        from triton.compiler.compiler import make_backend
    except ImportError as e:
        return None, f"Triton has no compiler API here ({e})"
    target = GPUTarget("cuda", CPU_ARCH, CPU_WARP_SIZE)
    try:
        make_backend(target).hash()  # the CUDA backend's hash runs `ptxas --version`
    except Exception as e:  # noqa: BLE001 - triton-ascend: no CUDA backend; a CUDA backend without its ptxas
        return None, f"this Triton cannot compile for {target}: {type(e).__name__}: {e}"
    return target, ""


def _current_target() -> Any:
    """The current device's target (needs a GPU driver)."""
    from triton.runtime.driver import driver

    try:
        return driver.active.get_current_target()
    except Exception as e:  # noqa: BLE001 - no driver: "0 active drivers", a CPU-only torch...
        raise NotCompilableHere(f"no current device to compile for (pass target=cpu_target()[0]): {e}") from e


# --- compile, strip, hash -------------------------------------------------------------------------------------

def compile_spec(jit_fn: Any, spec: Spec, target: Any = None) -> Any:
    """triton.compile of jit_fn for spec (target None: the current device's); CompileFailed on any refusal."""
    import triton
    from triton.compiler import ASTSource

    if interpreted_here(jit_fn):  # the code generator would call interpreted tl functions and corrupt tl
        raise NotCompilableHere("Triton was set up with TRITON_INTERPRET=1 in this process: compile in a process "
                                "without it (Spec.to_json/from_json carry the specs there)")
    jit = as_jit_function(jit_fn)
    target = _current_target() if target is None else target
    names = list(jit.arg_names)
    src = ASTSource(fn=jit, signature={k: as_triton_type(v) for k, v in spec.signature.items()},
                    constexprs={param_path(names, k): unplain(v) for k, v in spec.constexprs.items()},
                    attrs={param_path(names, k): v for k, v in spec.attrs.items()})
    try:
        with _compiler_mode():
            return triton.compile(src, target=target, options=dict(spec.options))
    except Exception as e:  # noqa: BLE001 - CompilationError, MLIR pass failures (RuntimeError), ptxas errors...
        raise CompileFailed(f"{type(e).__name__}: {e}") from e


def ir_text(jit_fn: Any, spec: Spec, target: Any = None, level: str = DEFAULT_LEVEL) -> str:
    """The IR at level, stripped of locations and names: what ir_digest hashes (diff two to see why unequal)."""
    if level not in LEVELS:
        raise ValueError(f"level {level!r} is not one of {LEVELS}")
    kernel = compile_spec(jit_fn, spec, target)
    module = getattr(as_jit_function(jit_fn).fn, "__module__", "") or ""
    return normalize(kernel.asm[level], level, kernel.name, module)


def ir_digest(jit_fn: Any, spec: Spec, target: Any = None, level: str = DEFAULT_LEVEL) -> str:
    """sha256 of ir_text: equal for the original and a mutant proves the mutant equivalent."""
    return hashlib.sha256(ir_text(jit_fn, spec, target, level).encode()).hexdigest()
