"""The two ways vllm-ascend has patched vLLM's NaN count at worker start, reproduced for --kernel-setup.

(a) `rebind_libdevice`: the later `patch_v2/patch_triton.py` style. Upstream's logits module stays, only its
    module-level `libdevice` is rebound to the vendor's (CANN's on an NPU). Upstream's kernel keeps its int1 flags,
    so under triton-ascend an int1 `tl.sum` can come back 0/1 (REFERENCE.md sections 3 and 9). On the CPU the vendor
    functions cannot run, so the interpreter gets `setups.interpreter_libdevice`, which returns int1 the same way.
(b) `replace_get_num_nans`: the seed design. vLLM's `get_num_nans` is replaced by another module's (vllm-ascend's
    `vllm_ascend/ops/triton/v2/metrics/num_nans.py`, int32 flags), in the logits module and in every caller that
    imported the function by name. Here the replacement is REPLACEMENT_MODULE (our `kernel` package, int32 flags);
    the logits module's `_num_nans_kernel` is replaced too, so the harness's direct launch runs the kernel that the
    replacement wrapper launches.
`replace_in_logits_only` is the mistake (b) must avoid, kept as a planted case for the call-site check: rebinding
only the defining module leaves the sampler and rejection sampler calling the old function.

Usage: `--kernel-setup setups.ascend_patch:rebind_libdevice --kernel vllm.v1.worker.gpu.metrics.logits`.
"""
from __future__ import annotations

import importlib
from types import ModuleType

from harness.call_sites import VLLM_CALL_SITES
from setups.vllm_interpreter import LOGITS_MODULE, interpreter_libdevice, interpreting, use_real_triton

__all__ = ["REPLACEMENT_MODULE", "rebind_libdevice", "replace_get_num_nans", "replace_in_logits_only"]

REPLACEMENT_MODULE = "kernel"
VENDOR_LIBDEVICES: tuple[str, ...] = (
    "triton.language.extra.cann.libdevice",  # triton-ascend from source, what the patch names
    "triton.language.extra.ascend.libdevice",  # triton-ascend 3.2.0 on PyPI
)


def _logits_module() -> ModuleType:
    """vLLM's logits module, importable on the CPU too (vLLM's Triton placeholders replaced first)."""
    if interpreting():
        use_real_triton()
    return importlib.import_module(LOGITS_MODULE)


def _vendor_libdevice() -> ModuleType:
    """CANN's libdevice on an NPU; the int1 stand-in under the interpreter, which runs no extern calls."""
    if interpreting():
        return interpreter_libdevice()
    for name in VENDOR_LIBDEVICES:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    tried = ", ".join(VENDOR_LIBDEVICES)
    raise RuntimeError(f"no Ascend libdevice importable (tried {tried}): is triton-ascend installed?")


def rebind_libdevice() -> None:
    """Style (a): keep upstream's kernel (int1 flags), swap only the libdevice its module holds."""
    _logits_module().libdevice = _vendor_libdevice()  # type: ignore[attr-defined]


def _replace_in_logits(replacement: ModuleType) -> ModuleType:
    """Rebind the defining module's get_num_nans and _num_nans_kernel to the replacement's."""
    logits = _logits_module()
    logits.get_num_nans = replacement.get_num_nans  # type: ignore[attr-defined]
    logits._num_nans_kernel = replacement._num_nans_kernel  # type: ignore[attr-defined]
    return logits


def replace_get_num_nans() -> None:
    """Style (b): the replacement's get_num_nans in the logits module and in every caller's namespace."""
    replacement = importlib.import_module(REPLACEMENT_MODULE)
    _replace_in_logits(replacement)
    for site in VLLM_CALL_SITES:
        setattr(importlib.import_module(site.module), site.attribute, replacement.get_num_nans)


def replace_in_logits_only() -> None:
    """Planted mistake: only the defining module is patched, so callers that imported by name keep upstream's."""
    _logits_module()  # on the CPU the placeholders go first, else the callers would import a dead module
    for site in VLLM_CALL_SITES:
        importlib.import_module(site.module)  # callers bind the name at import, as in a worker
    _replace_in_logits(importlib.import_module(REPLACEMENT_MODULE))
