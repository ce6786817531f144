"""The get_num_nans contract: bad input is refused clearly, edge shapes work, nothing is modified."""
from __future__ import annotations

import pytest
import torch

from cases.formats import fmt_of, from_bits, to_bits
from cases.ieee import canonical_nan
from harness.plugin import CaseInfo, Checker
from harness.target import GUARD, POISON, KernelUnderTest, run_direct
from reference import expected_counts

pytestmark = pytest.mark.nan_contract


def nan_rows(rows: int, vocab: int, dtype: torch.dtype, seed: int = 7) -> torch.Tensor:
    """Random rows where about a third of the entries are canonical NaNs, built from bits."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, vocab, generator=gen).to(dtype)
    fmt = fmt_of(dtype)
    mask = torch.rand(rows, vocab, generator=gen) < 0.33
    x[mask] = from_bits([canonical_nan(fmt)], fmt)
    return x


@pytest.mark.parametrize("shape", [(7,), (2, 3, 4), ()], ids=["1d", "3d", "0d"])
def test_rejects_wrong_rank(shape: tuple[int, ...], target: KernelUnderTest, device: str) -> None:
    with pytest.raises(ValueError, match=r"2-D.*" + r"\(" + ", ".join(map(str, shape))):
        target.get_num_nans(torch.zeros(shape, device=device))


@pytest.mark.parametrize("dtype", [torch.float64, torch.int32, torch.int8, torch.bool], ids=str)
def test_rejects_unsupported_dtype(dtype: torch.dtype, target: KernelUnderTest, device: str) -> None:
    with pytest.raises(TypeError, match="float32.*bfloat16.*float16"):
        target.get_num_nans(torch.zeros(2, 8, dtype=dtype, device=device))


def test_rejects_inner_stride(target: KernelUnderTest, device: str) -> None:
    """A transposed view has stride(1) != 1; the kernel indexes rows densely, so it must be refused."""
    x = torch.zeros(16, 4, device=device).t()
    with pytest.raises(ValueError, match="stride"):
        target.get_num_nans(x)


@pytest.mark.parametrize("vocab", [0, 1, 5000])
def test_empty_batch(vocab: int, target: KernelUnderTest, device: str) -> None:
    out = target.get_num_nans(torch.empty(0, vocab, device=device))
    assert out.dtype == torch.int32 and tuple(out.shape) == (0,) and out.device.type == device


@pytest.mark.parametrize("rows", [1, 3])
def test_zero_vocab_gives_zeros(rows: int, target: KernelUnderTest, device: str) -> None:
    out = target.get_num_nans(torch.empty(rows, 0, device=device))
    assert out.dtype == torch.int32 and out.device.type == device
    assert torch.equal(out.cpu(), torch.zeros(rows, dtype=torch.int32))


@pytest.mark.parametrize("dtype", ["fp32", "bf16", "fp16"])
def test_padded_rows_read_in_place(dtype: str, target: KernelUnderTest, device: str, check: Checker) -> None:
    """stride(0) > vocab: the padding holds NaNs that must not be counted, and no copy is made."""
    fmt = fmt_of(dtype)
    rows, vocab, padded = 5, 3000, 3000 + 77
    storage = from_bits([canonical_nan(fmt)], fmt).repeat(rows * padded).reshape(rows, padded)
    storage[:, :vocab] = nan_rows(rows, vocab, fmt.dtype)
    view = storage.to(device)[:, :vocab]
    assert view.stride(0) == padded
    calls: list[torch.Tensor] = []
    original = torch.Tensor.contiguous

    def spy(self: torch.Tensor, *a: object, **k: object) -> torch.Tensor:
        calls.append(self)
        return original(self, *a, **k)

    torch.Tensor.contiguous = spy  # type: ignore[method-assign]
    try:
        got = target.get_num_nans(view)
    finally:
        torch.Tensor.contiguous = original  # type: ignore[method-assign]
    assert not any(c.data_ptr() == view.data_ptr() and not c.is_contiguous() for c in calls), "padded view was copied"
    info = CaseInfo(f"{dtype}-padded-{rows}x{vocab}", "contract", dtype, "padded", (rows, vocab), "0.33", "wrapper", 7)
    check(got, expected_counts(view), info)


@pytest.mark.parametrize("dtype", ["fp32", "bf16", "fp16"])
def test_output_and_input_untouched(dtype: str, target: KernelUnderTest, device: str, check: Checker) -> None:
    """Output is int32, contiguous, on the input's device; the input is bit-identical afterwards."""
    host = nan_rows(6, 9000, fmt_of(dtype).dtype)
    before = to_bits(host)
    logits = host.to(device)
    got = target.get_num_nans(logits)
    assert isinstance(got, torch.Tensor) and got.is_contiguous()
    info = CaseInfo(f"{dtype}-untouched-6x9000", "contract", dtype, "random", (6, 9000), "0.33", "wrapper", 7)
    check(got, expected_counts(host), info)
    assert torch.equal(to_bits(logits), before), "get_num_nans modified its input"


def test_direct_launch_writes_only_its_outputs(target: KernelUnderTest, device: str, check: Checker) -> None:
    """Poisoned guard slots on both sides of the output must survive the launch unchanged."""
    if target.kernel is None:
        pytest.skip(target.kernel_skip_reason or "no _num_nans_kernel")
    host = nan_rows(9, 8193, torch.float32)
    result = run_direct(target, host.to(device))
    info = CaseInfo("fp32-guarded-9x8193", "contract", "fp32", "random", (9, 8193), "0.33", "direct", 7)
    check(result.counts, expected_counts(host), info)
    poison = torch.full((GUARD,), POISON, dtype=torch.int32)
    assert torch.equal(result.guard_before.cpu(), poison), "kernel wrote before its output"
    assert torch.equal(result.guard_after.cpu(), poison), "kernel wrote past its output"


def test_rejects_host_tensor_on_accelerator(target: KernelUnderTest, device: str) -> None:
    """Compiled kernels cannot read host memory: a CPU tensor must be refused, not dereferenced."""
    if device == "cpu":
        pytest.skip("on the CPU backend host tensors are the normal input (Triton interpreter)")
    with pytest.raises((ValueError, TypeError, RuntimeError), match="(?i)cpu|host|device"):
        target.get_num_nans(torch.zeros(2, 8))
