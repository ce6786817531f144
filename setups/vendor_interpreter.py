"""--kernel-setup setups.vendor_interpreter:install runs a vendor's kernel module as shipped through a CPU interpreter.

vllm-ascend ships its NaN count (vllm_ascend/ops/triton/v2/metrics/num_nans.py) with two imports a CPU CI lacks:
`triton.language.extra.cann.libdevice` (triton-ascend >= 3.2.1 only: 3.2.0 names it `.ascend`, upstream Triton has
neither) and `from vllm.triton_utils import tl, triton`. Unedited, the module then ends the run ENVIRONMENT ("No
module named 'triton.language.extra.cann'"). Under the interpreter this setup gives both names something to import:

- `triton.language.extra.cann.libdevice` becomes `setups.interpreter_libdevice` (its `isnan` tests the fp32 bits and
  returns int1 like CANN's `__hmf_isnan`, so the module's own widening, or its lack, decides the count). Missing
  parent packages are created empty; a real CANN libdevice (triton-ascend >= 3.2.1) is replaced for this process
  too, since the interpreter cannot run its extern calls (triton-ascend 3.2.0's `extra.ascend.libdevice.isnan`
  under its interpreter: "Did you forget to add @triton.jit ?", measured).
- `vllm.triton_utils`: with vLLM installed, its `triton`/`tl` placeholders become the real packages (the one
  place that does it: `setups.vllm_interpreter.use_real_triton`); without vLLM, an in-memory `vllm` package holding
  only `triton_utils` (the real `triton` and `triton.language`) stands in. It has no file, so
  `harness.call_sites.vllm_installed()` still says no vLLM and the call-site tests still skip.

Outside the interpreter (an NPU or GPU run, TRITON_INTERPRET unset) it changes nothing and raises: there the
module imports the real CANN libdevice and vLLM itself, so the run must not name this setup.
"""
from __future__ import annotations

import importlib
import importlib.machinery
import sys
from types import ModuleType

from harness.call_sites import vllm_installed
from setups.vllm_interpreter import TRITON_UTILS_MODULE, interpreter_libdevice, interpreting, use_real_triton

__all__ = ["CANN_LIBDEVICE", "install", "stand_in"]

CANN_LIBDEVICE = "triton.language.extra.cann.libdevice"


def _empty_package(name: str, doc: str) -> ModuleType:
    """A package with no file and no search path: only what a stand-in puts in it can be imported from it."""
    package = ModuleType(name, doc)
    package.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
    package.__path__ = []
    return package


def _parent(name: str) -> ModuleType:
    """The package `name`: the installed one when it imports, else an empty stand-in registered in its place."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not f"{name}.".startswith(f"{exc.name}."):
            raise  # the package exists but fails inside: that is its error, not a missing name
    head, _, leaf = name.rpartition(".")
    package = _empty_package(name, f"stand-in package made by {__name__} (interpreter runs only)")
    sys.modules[name] = package
    if head:
        setattr(_parent(head), leaf, package)
    return package


def stand_in(name: str, module: ModuleType) -> None:
    """Make `import name` (and `from name import x`) give `module`, creating the missing parent packages."""
    head, _, leaf = name.rpartition(".")
    sys.modules[name] = module
    setattr(_parent(head), leaf, module)


def _triton_utils() -> ModuleType:
    """What `from vllm.triton_utils import tl, triton` needs where vLLM is absent: the real triton and tl."""
    import triton
    import triton.language as tl

    utils = ModuleType(TRITON_UTILS_MODULE, f"stand-in for vLLM's triton_utils made by {__name__} (vLLM absent)")
    utils.triton = triton  # type: ignore[attr-defined]
    utils.tl = tl  # type: ignore[attr-defined]
    return utils


def install() -> None:
    """Under the interpreter: the int1 isnan stand-in at CANN's libdevice, and vLLM's triton_utils importable."""
    if not interpreting():
        raise RuntimeError(
            f"{__name__} stands in for CANN's libdevice and vLLM's triton_utils under the CPU Triton interpreter "
            "only (--device cpu sets TRITON_INTERPRET=1); on an NPU the module imports the real ones itself: "
            "drop --kernel-setup there (nothing was replaced)"
        )
    stand_in(CANN_LIBDEVICE, interpreter_libdevice())
    if vllm_installed():
        use_real_triton()
    else:
        stand_in(TRITON_UTILS_MODULE, _triton_utils())
