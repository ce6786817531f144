"""--kernel-setup setups.vllm_interpreter:install runs upstream vLLM's logits module, unmodified, on the CPU.

Two things stop it there. vLLM's `triton_utils` finds no active Triton driver on a CPU host and hands out
placeholders (`triton.jit` then decorates nothing), so its `triton`/`tl` must be the real package before the
logits module is imported. And the module's `libdevice` (from torch's inductor helpers) is the generic stub set,
which the interpreter cannot call, so it is rebound to `setups.interpreter_libdevice` (int1 `isnan`, like the
vendor's). The kernel itself is left exactly as shipped: int1 flags, 32-bit row offsets, no input checks.
"""
from __future__ import annotations

import importlib
import sys
from types import ModuleType

from harness.backends import interpreting  # the only mode in which these CPU stand-ins make sense

__all__ = ["LOGITS_MODULE", "TRITON_UTILS_MODULE", "install", "interpreting", "use_real_triton"]

LOGITS_MODULE = "vllm.v1.worker.gpu.metrics.logits"
TRITON_UTILS_MODULE = "vllm.triton_utils"


def use_real_triton() -> None:
    """Point vLLM's triton_utils at the real triton before any vLLM kernel module is decorated with it."""
    import triton
    import triton.language as tl

    loaded = sys.modules.get(LOGITS_MODULE)
    if loaded is not None and getattr(loaded, "triton", None) is not triton:
        raise RuntimeError(
            f"{LOGITS_MODULE} was imported before this setup ran, with vLLM's Triton placeholders; "
            "run the setup first (--kernel-setup comes before the kernel module is imported)"
        )
    utils = importlib.import_module(TRITON_UTILS_MODULE)
    utils.triton = triton  # type: ignore[attr-defined]
    utils.tl = tl  # type: ignore[attr-defined]


def interpreter_libdevice() -> ModuleType:
    """The int1 isnan stand-in, imported only now (its kernel must be decorated in interpreter mode)."""
    return importlib.import_module("setups.interpreter_libdevice")


def install() -> None:
    """Make vllm.v1.worker.gpu.metrics.logits importable and runnable under the CPU interpreter."""
    if not interpreting():
        raise RuntimeError(
            "setups.vllm_interpreter is for the CPU Triton interpreter (--device cpu sets TRITON_INTERPRET=1); "
            "on a GPU or NPU vLLM finds Triton and libdevice by itself"
        )
    use_real_triton()
    logits = importlib.import_module(LOGITS_MODULE)
    logits.libdevice = interpreter_libdevice()  # type: ignore[attr-defined]
