"""Relaunch a compiled kernel through its launcher's positional protocol, skipping `fn[grid](...)`'s per-call
binding (what an eager decode step pays, docs/bench.md), for a caller whose key fixes all Triton specializes on:
only on a Triton in VERIFIED, on CUDA outside graph capture, for a kernel whose first relaunch reproduced Triton's
own launch of the same call (`verified`); launch hooks (a profiler's) go through Triton's runner, which calls them."""
from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import torch
import triton

# Triton version -> the run that verified the relaunch on it (counts compared, eager host time measured)
VERIFIED: dict[str, str] = {"3.6.0": "H200, torch 2.11: tests/kernel and python -m bench (docs/bench.md)"}


def enabled(version: str | None = None) -> bool:
    """The relaunch may be used with this Triton (default: the installed one)."""
    return (version or triton.__version__) in VERIFIED


def relaunch(compiled: Any, grid: int, args: Sequence[object]) -> object:
    """Launch `compiled` again with `args` (every parameter in order, constexprs included) on the current stream."""
    hooks = (triton.knobs.runtime.launch_enter_hook, triton.knobs.runtime.launch_exit_hook)
    if any(hook is not None and getattr(hook, "calls", True) for hook in hooks):  # None, or an empty HookChain
        return compiled[(grid, 1, 1)](*args)
    driver = triton.runtime.driver.active
    stream = driver.get_current_stream(driver.get_current_device())
    compiled.run(grid, 1, 1, stream, compiled.function, compiled.packed_metadata, None, None, None, *args)


def verified(compiled: Any, grid: int, args: Sequence[object], out: torch.Tensor) -> Any | None:
    """`compiled` if relaunching it with a zeroed output in place of `out` (args[2]) reproduces `out`, which
    Triton's own launch just wrote; else None, with a warning (the caller keeps Triton's own path for that key)."""
    check = torch.zeros_like(out)
    try:
        relaunch(compiled, grid, (*args[:2], check, *args[3:]))
        same, why = torch.equal(check, out), "its output differed from Triton's own launch"
    except Exception as error:  # a runner this module does not know: Triton's own path from now on
        same, why = False, f"{type(error).__name__}: {error}"
    if same:
        return compiled
    warnings.warn(f"kernel.fastlaunch: relaunching {getattr(compiled, 'name', 'a kernel')} on Triton "
                  f"{triton.__version__} was refused ({why}); Triton's own launch is used", RuntimeWarning,
                  stacklevel=3)
    return None
