"""The setups on a fake vLLM-shaped tree (no vLLM needed): placeholders replaced before import, libdevice rebound,
int1 flags kept, and both vllm-ascend patch styles; plus the int1 isnan stand-in on every 16-bit pattern."""
from __future__ import annotations

import importlib
import os
from importlib import metadata

import pytest
import torch
import triton
import triton.language as tl

from cases.formats import FORMATS, from_bits
from cases.ieee import IEEE_CLASSES
from harness.call_sites import CallSite, check_call_sites, mismatches
from setups import ascend_patch, vllm_interpreter
from setups.interpreter_libdevice import isnan
from tests.vllm.fakes import FakeModules

pytestmark = pytest.mark.nan_harness

_INTERPRETING = os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")
needs_interpreter = pytest.mark.skipif(not _INTERPRETING, reason="the setups are for the CPU interpreter")


@triton.jit
def _flags_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """Store the stand-in's flag per element; its result must be int1, as a vendor isnan's is."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    flags = isnan(tl.load(x_ptr + offsets, mask=mask, other=0))
    tl.static_assert(flags.dtype == tl.int1, "isnan must return int1 like libdevice")
    tl.store(out_ptr + offsets, flags.to(tl.int8), mask=mask)


def _flags(x: torch.Tensor, device: str) -> torch.Tensor:
    """The stand-in's verdict on each element of a 1-D tensor."""
    x = x.to(device)
    out = torch.full(x.shape, -1, dtype=torch.int8, device=device)
    block = 1024
    _flags_kernel[(triton.cdiv(x.numel(), block),)](x, out, x.numel(), BLOCK=block)
    return out.cpu().bool()


@pytest.mark.parametrize("name", ["bf16", "fp16"])
def test_interpreter_isnan_on_every_16_bit_pattern(name: str, device: str) -> None:
    x = from_bits(torch.arange(1 << 16), FORMATS[name])
    got = _flags(x, device)
    assert torch.equal(got, torch.isnan(x)), f"{int((got != torch.isnan(x)).sum())} {name} patterns misjudged"


def test_interpreter_isnan_on_fp32_classes(device: str) -> None:
    fmt = FORMATS["fp32"]
    bits = [c.bits(fmt, negative) for c in IEEE_CLASSES for negative in (False, True)]
    expected = torch.tensor([c.is_nan for c in IEEE_CLASSES for _ in (False, True)])
    assert torch.equal(_flags(from_bits(bits, fmt), device), expected)


_PLACEHOLDERS = """
class _Placeholder:
    '''What vLLM hands out without a Triton driver: jit decorates nothing.'''
    constexpr = None
    int1 = int32 = float32 = None

    def jit(self, fn=None, **kwargs):
        return fn if fn is not None else (lambda f: f)


triton = _Placeholder()
tl = _Placeholder()
"""

# Upstream's kernel shape, in our own words: int1 flags summed, 32-bit row offset, no checks.
_LOGITS = """
import torch
from torch._inductor.runtime.triton_helpers import libdevice

from {utils} import tl, triton


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    row = tl.program_id(0)
    total = 0
    for start in range(0, vocab_size, BLOCK_SIZE):
        cols = start + tl.arange(0, BLOCK_SIZE)
        x = tl.load(logits_ptr + row * logits_stride + cols, mask=cols < vocab_size, other=0)
        total += tl.sum(libdevice.isnan(x.to(tl.float32)).to(tl.int1)).to(tl.int32)
    tl.store(num_nans_ptr + row, total)


def get_num_nans(logits):
    out = torch.empty(logits.shape[0], dtype=torch.int32, device=logits.device)
    _num_nans_kernel[(logits.shape[0],)](logits, logits.stride(0), out, logits.shape[1], BLOCK_SIZE=8192)
    return out
"""


@pytest.fixture
def fake_vllm(fakes: FakeModules, monkeypatch: pytest.MonkeyPatch) -> tuple[str, tuple[CallSite, ...]]:
    """A vLLM-shaped tree under a unique name, with the setups pointed at it."""
    utils = fakes.write("fakevllm.triton_utils", _PLACEHOLDERS)
    logits = fakes.write("fakevllm.metrics.logits", _LOGITS.format(utils=utils))
    sites = tuple(
        CallSite(name, fakes.write(f"fakevllm.{module}", f"from {logits} import get_num_nans\n"))
        for name, module in (("sampler", "sample.sampler"), ("rejection sampler", "spec_decode.rejection_sampler"))
    )
    monkeypatch.setattr(vllm_interpreter, "LOGITS_MODULE", logits)
    monkeypatch.setattr(vllm_interpreter, "TRITON_UTILS_MODULE", utils)
    monkeypatch.setattr(ascend_patch, "LOGITS_MODULE", logits)
    monkeypatch.setattr(ascend_patch, "VLLM_CALL_SITES", sites)
    return logits, sites


def _row_with_12_nans() -> torch.Tensor:
    """The field report's row: vocab 128, 12 NaNs at its head."""
    x = torch.randn(1, 128, dtype=torch.float32, generator=torch.Generator().manual_seed(0))
    x[0, :12] = float("nan")
    return x


# What an int1 sum of 12 flags gives: upstream Triton widens it, triton-ascend keeps it 1 bit (REFERENCE.md §3).
def _triton_ascend() -> bool:
    """True when the installed `triton` package is triton-ascend's."""
    try:
        metadata.version("triton-ascend")
    except metadata.PackageNotFoundError:
        return False
    return True


INT1_SUM_OF_12 = 1 if _triton_ascend() else 12


def test_without_the_setup_the_placeholders_leave_no_kernel(fake_vllm: tuple[str, tuple[CallSite, ...]]) -> None:
    """The planted failure the setup exists for: imported first, the kernel is a plain function."""
    logits = importlib.import_module(fake_vllm[0])
    with pytest.raises(TypeError, match="not subscriptable"):
        logits.get_num_nans(_row_with_12_nans())


@needs_interpreter
def test_install_runs_the_unmodified_kernel_with_int1_flags(fake_vllm: tuple[str, tuple[CallSite, ...]]) -> None:
    vllm_interpreter.install()
    logits = importlib.import_module(fake_vllm[0])
    assert logits.libdevice is importlib.import_module("setups.interpreter_libdevice")
    assert type(logits._num_nans_kernel).__module__.startswith("triton.")
    assert logits.get_num_nans(_row_with_12_nans()).tolist() == [INT1_SUM_OF_12]
    vllm_interpreter.install()  # a second run (another setup calling it) changes nothing
    assert logits.get_num_nans(_row_with_12_nans()).tolist() == [INT1_SUM_OF_12]


@needs_interpreter
def test_install_after_the_module_was_imported_is_refused(fake_vllm: tuple[str, tuple[CallSite, ...]]) -> None:
    importlib.import_module(fake_vllm[0])
    with pytest.raises(RuntimeError, match="imported before this setup ran"):
        vllm_interpreter.install()


def test_install_outside_the_interpreter_is_refused(
    fake_vllm: tuple[str, tuple[CallSite, ...]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(RuntimeError, match="CPU Triton interpreter"):
        vllm_interpreter.install()


@needs_interpreter
def test_rebind_libdevice_keeps_upstreams_kernel(fake_vllm: tuple[str, tuple[CallSite, ...]]) -> None:
    """Style (a): only libdevice changes, so callers still match and int1 flags still decide the count."""
    logits_name, sites = fake_vllm
    ascend_patch.rebind_libdevice()
    logits = importlib.import_module(logits_name)
    assert logits._num_nans_kernel.fn.__module__ == logits_name
    assert logits.libdevice is importlib.import_module("setups.interpreter_libdevice")
    assert logits.get_num_nans(_row_with_12_nans()).tolist() == [INT1_SUM_OF_12]
    assert mismatches(check_call_sites(logits.get_num_nans, sites)) == ()


@needs_interpreter
def test_replace_get_num_nans_reaches_every_caller(fake_vllm: tuple[str, tuple[CallSite, ...]]) -> None:
    """Style (b): the replacement (int32 flags) counts 12 on every backend, and the callers hold it."""
    logits_name, sites = fake_vllm
    vllm_interpreter.use_real_triton()  # the CPU's precondition; on an NPU vLLM imports the real triton itself
    for site in sites:
        importlib.import_module(site.module)  # callers already imported, as in a running worker
    ascend_patch.replace_get_num_nans()
    logits = importlib.import_module(logits_name)
    ours = importlib.import_module(ascend_patch.REPLACEMENT_MODULE)
    assert logits.get_num_nans is ours.get_num_nans and logits._num_nans_kernel is ours._num_nans_kernel
    assert logits.get_num_nans(_row_with_12_nans()).tolist() == [12]
    assert mismatches(check_call_sites(ours.get_num_nans, sites)) == ()


@needs_interpreter
def test_patching_only_the_logits_module_is_caught(fake_vllm: tuple[str, tuple[CallSite, ...]]) -> None:
    logits_name, sites = fake_vllm
    ascend_patch.replace_in_logits_only()
    ours = importlib.import_module(ascend_patch.REPLACEMENT_MODULE)
    stale = mismatches(check_call_sites(ours.get_num_nans, sites))
    assert [r.site.name for r in stale] == ["sampler", "rejection sampler"]
    assert all(f"found {logits_name}.get_num_nans" in r.message for r in stale)
