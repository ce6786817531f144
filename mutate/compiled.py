"""Trivial Compiler Equivalence: a `@triton.jit` function compiled for a Spec, its IR text at one level hashed once
source locations, debug metadata, the kernel's and the module's names (and MLIR's SSA names, taken from Python
variables) are stripped. Equal digests prove a mutant equivalent or a duplicate; unequal ones prove nothing.

We compare ttgir by default: after Triton's own passes (inlining, canonicalisation, CSE, dead code) and the target's
layouts, before LLVM, whose text depends on the LLVM and ptxas versions. A process that set TRITON_INTERPRET=1
before importing Triton cannot compile (NotCompilableHere): Spec.to_json/from_json carry specs to one that can.
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
import re
from collections.abc import Iterator
from typing import Any

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

@functools.cache
def cpu_target() -> tuple[Any, str]:
    """(GPUTarget cuda sm90 warp 32, "") where this Triton compiles for it without a device (a CUDA backend that
    takes the target and finds its ptxas, checked once); else (None, why)."""
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


# --- compile, hash -------------------------------------------------------------------------------------

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


# --- IR text made comparable: locations, debug metadata, the kernel's and module's names, MLIR SSA names ---

# never in IR text (ASCII), so the replacement cannot merge two different texts
_PLACEHOLDER_KERNEL, _PLACEHOLDER_MODULE = "\u00abkernel\u00bb", "\u00abmodule\u00bb"


def normalize(text: str, level: str, kernel_name: str, module: str = "") -> str:
    """IR text without source locations, debug info, the kernel's and module's names (and SSA names in MLIR)."""
    if level in ("ttir", "ttgir"):
        text = _rename_ssa(strip_mlir_locations(text))
    elif level == "llir":
        text = strip_llvm_debug(text)
    else:
        text = strip_ptx_debug(text)
    return _anonymise(text, level, kernel_name, module)


_PAREN_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[()]')
_SSA_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|%[A-Za-z0-9_$.\-]+')


def strip_mlir_locations(text: str) -> str:
    """MLIR without `#locN = ...` definitions and inline `loc(...)` (nested parentheses, quoted file names)."""
    lines = [line for line in text.splitlines() if not re.match(r"\s*#loc\d*\s*=", line)]
    return "\n".join(_drop_loc_calls(line).rstrip() for line in lines)


def _drop_loc_calls(line: str) -> str:
    """One line without its ` loc(...)` references."""
    out, i = [], 0
    while (j := line.find("loc(", i)) >= 0:
        if j > 0 and (line[j - 1].isalnum() or line[j - 1] in "_#."):  # part of another identifier
            out.append(line[i:j + 4])
            i = j + 4
            continue
        out.append(line[i:j].rstrip(" "))
        i = _after_parens(line, j + 3)
    out.append(line[i:])
    return "".join(out)


def _after_parens(line: str, start: int) -> int:
    """The index after the parenthesis that closes the one at start (quoted strings skipped)."""
    depth = 0
    for token in _PAREN_TOKENS.finditer(line, start):
        depth += {"(": 1, ")": -1}.get(token.group(), 0)
        if depth == 0:
            return token.end()
    return len(line)


def _rename_ssa(text: str) -> str:
    """MLIR SSA values renamed %0, %1, ... by first use, outside strings: Triton names them after variables."""
    names: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        token = match.group()
        return token if token.startswith('"') else names.setdefault(token, f"%{len(names)}")

    return _SSA_OR_STRING.sub(rename, text)


def strip_llvm_debug(text: str) -> str:
    """LLVM IR without `!dbg` attachments, debug records and debug metadata; metadata renumbered by first use."""
    text = re.sub(r",?\s*!dbg !\d+", "", text)
    keep = [line for line in text.splitlines()
            if not re.match(r"\s*(#dbg_|!llvm\.dbg\.|!\d+ = (distinct )?!DI)", line)
            and "Debug Info Version" not in line]
    numbers: dict[str, str] = {}
    renumbered = re.sub(r"!\d+\b", lambda m: numbers.setdefault(m.group(), f"!{len(numbers)}"), "\n".join(keep))
    return "\n".join(line.rstrip() for line in renumbered.splitlines())


def strip_ptx_debug(text: str) -> str:
    """PTX without comments, `.loc`/`.file` lines, debug labels and `.section .debug_*` blocks."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r"^\s*\.section\s+\.debug\w*\s*\{[^}]*\}", "", text, flags=re.M)
    drop = re.compile(r"\s*(\.loc|\.file)\b|\$L__(tmp|func_begin|func_end)\d+:$")
    return "\n".join(line.rstrip() for line in text.splitlines() if line.strip() and not drop.match(line))


def _anonymise(text: str, level: str, kernel_name: str, module: str) -> str:
    """The kernel's name and its module's prefix on helpers' mangled names replaced by placeholders.

    Only where they name symbols (after `@` in MLIR and LLVM IR, whole identifiers in PTX), never in strings.
    """
    start = r"(?<![\w$.%])" if level == "ptx" else r"(?:(?<=@)|(?<=@\"))"
    if module:  # NVPTX spells '.' as '_$_'
        prefixes = "|".join(re.escape(m) for m in (module + ".", module.replace(".", "_$_") + "_$_"))
        text = re.sub(f"{start}(?:{prefixes})", _PLACEHOLDER_MODULE + ".", text)
    if kernel_name:
        text = re.sub(f"{start}{re.escape(kernel_name)}(?=_param_\\d|[^\\w$.]|$)", _PLACEHOLDER_KERNEL, text)
    return text
