"""The get_num_nans contract, judged by behaviour: what any correct kernel must do, whatever its API's wording.

Input outside the documented domain (rank other than 2, other dtypes, an inner stride, a host tensor on an
accelerator) passes when the kernel refuses it (any exception, recorded as "refused: ...") or counts it exactly.
In-domain input must be counted, without side effects. Our own kernel's stricter messages are tested in
tests/ours, which --kernel does not redirect.
"""
from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from cases.formats import fmt_of, from_bits, to_bits
from cases.ieee import canonical_nan
from cases.random_bits import generator, randn, random_nan_bits
from harness import skips
from harness.compare import assert_check, refusal
from harness.fixtures import CheckCounts, LaunchAndCheck, record
from harness.target import GUARD, PATHS, POISON, KernelUnderTest, bits_snapshot, run_direct
from reference import expected_counts
from verdict.problem import COPIED, INPUT_MODIFIED, MALFORMED, PADDING_MODIFIED, Problem
from verdict.record import CaseParams

pytestmark = pytest.mark.nan_contract


def nan_rows(rows: int, vocab: int, dtype: torch.dtype, seed: int = 7) -> torch.Tensor:
    """Random rows where about a third of the entries are canonical NaNs, built from bits."""
    gen = generator(seed)
    fmt = fmt_of(dtype)
    x = randn(rows, vocab, gen).to(dtype)
    mask = torch.rand(rows, vocab, generator=gen, device="cpu") < 0.33
    x[mask] = from_bits([canonical_nan(fmt)], fmt)
    return x


def params(case_id: str, dtype: str, shape: tuple[int, ...], layout: str = "random", seed: int | None = 7,
           in_domain: bool = True) -> CaseParams:
    return CaseParams("contract", case_id, dtype, layout, shape, "0.33", seed, in_domain=in_domain)


def _any_nan_input(kind: str) -> torch.Tensor:
    """Inputs outside the domain, each holding NaNs where its dtype can, so a silent count is checkable."""
    if kind == "rank-1d":
        return nan_rows(1, 7, torch.float32)[0]
    if kind == "rank-3d":
        return nan_rows(6, 4, torch.float32).reshape(2, 3, 4)
    if kind == "rank-0d":
        return torch.tensor(float("nan"))
    if kind == "dtype-float64":
        return nan_rows(2, 8, torch.float64)
    if kind == "transposed":  # a column view: stride(1) != 1; a kernel that assumes unit stride reads other rows
        return nan_rows(16, 4, torch.float32).t()
    dtype = {"dtype-int32": torch.int32, "dtype-int8": torch.int8, "dtype-bool": torch.bool}[kind]
    return torch.arange(16).reshape(2, 8).remainder(3).to(dtype)


def _raw_bits(x: torch.Tensor) -> torch.Tensor:
    """A copy of x's bits as integers: NaN payloads compare equal to themselves (torch.equal on floats does not)."""
    copy = x.detach().clone().reshape(-1)
    return copy.view({8: torch.int64, 4: torch.int32, 2: torch.int16}[x.element_size()]) if x.is_floating_point() else copy


OUTSIDE = ("rank-1d", "rank-3d", "rank-0d", "dtype-float64", "dtype-int32", "dtype-int8", "dtype-bool", "transposed")


@pytest.mark.parametrize("kind", OUTSIDE)
def test_outside_domain_refused_or_counted(
    kind: str, target: KernelUnderTest, device: str, check_counts: CheckCounts, request: pytest.FixtureRequest
) -> None:
    """Refusing is fine, any exception; returning counts is fine when they are exactly the reference's."""
    host = _any_nan_input(kind)
    logits = host.to(device) if kind != "transposed" else host.t().contiguous().to(device).t()
    info = params(f"outside-{kind}", str(host.dtype).removeprefix("torch."), tuple(host.shape), kind, in_domain=False)
    before = bits_snapshot(logits) if logits.dim() == 2 else _raw_bits(logits)
    try:
        got = target.get_num_nans(logits)
    except Exception as exc:  # noqa: BLE001 - any refusal passes; it is recorded with its type and text
        refused = refusal(exc, info, "wrapper", logits)
        record(request, refused)
        assert_check(refused)
        return
    after = bits_snapshot(logits) if logits.dim() == 2 else _raw_bits(logits)
    effects = [] if torch.equal(before.reshape(-1), after.reshape(-1)) else [Problem(INPUT_MODIFIED, "input modified")]
    check_counts(got, expected_counts(host), info, "wrapper", side_effects=effects, logits=logits)


def test_host_tensor_on_accelerator_refused_or_counted(
    target: KernelUnderTest, device: str, check_counts: CheckCounts, request: pytest.FixtureRequest
) -> None:
    """A CPU tensor on an accelerator backend: refused, or counted right (never a wild read); counting it on the
    host, into host counts, is what the contract allows (the result lives on the input's device)."""
    if device == "cpu":
        skips.skip(request.node, skips.host_tensor(device))
    host = nan_rows(2, 8, torch.float32)
    info = params("outside-host-tensor", "float32", (2, 8), "host", in_domain=False)
    try:
        got = target.get_num_nans(host)
    except Exception as exc:  # noqa: BLE001
        refused = refusal(exc, info, "wrapper", host)
        record(request, refused)
        assert_check(refused)
        return
    on_host = isinstance(got, torch.Tensor) and got.device.type == "cpu"  # counts on the host or on the card: both fine
    check_counts(got, expected_counts(host), info, "wrapper", logits=host if on_host else None)


@pytest.mark.parametrize("vocab", [0, 1, 5000])
def test_empty_batch(vocab: int, device: str, launch: LaunchAndCheck) -> None:
    """No rows: an empty int32 result on the input's device (judged like any case: dtype, shape, device)."""
    host = torch.empty(0, vocab, dtype=torch.float32)
    launch("wrapper", host.to(device), expected_counts(host), params(f"empty-batch-0x{vocab}", "float32", (0, vocab),
                                                                     "empty", seed=None))


@pytest.mark.parametrize("rows", [1, 3])
def test_zero_vocab_gives_zeros(rows: int, device: str, launch: LaunchAndCheck) -> None:
    """No vocab: one zero per row (there is nothing to count)."""
    host = torch.empty(rows, 0, dtype=torch.float32)
    launch("wrapper", host.to(device), expected_counts(host), params(f"zero-vocab-{rows}x0", "float32", (rows, 0),
                                                                     "empty", seed=None))


class _CopyWatch(TorchDispatchMode):
    """Records torch ops that copy the watched storage into a new tensor (clone, to, contiguous, copy_ from it)."""

    def __init__(self, storage_ptr: int) -> None:
        super().__init__()
        self.ptr = storage_ptr
        self.copies: list[str] = []

    def _aliases(self, value: object) -> bool:
        return isinstance(value, torch.Tensor) and value.untyped_storage().data_ptr() == self.ptr

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        name = str(func)
        copying = any(k in name for k in ("clone", "_to_copy", "contiguous"))
        if (copying and args and self._aliases(args[0])) or (
            "copy_" in name and len(args) > 1 and self._aliases(args[1]) and not self._aliases(args[0])
        ):
            self.copies.append(name)
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("dtype", ["fp32", "bf16", "fp16"])
def test_padded_rows_read_in_place(dtype: str, target: KernelUnderTest, device: str, check_counts: CheckCounts) -> None:
    """stride(0) > vocab: the padding holds NaNs that must not be counted, and the input is never copied. The
    geometry is this test's own (no family uses it): a kernel that plans once per input kind and copies while
    planning copies only for the first test that meets the kind in a process."""
    fmt = fmt_of(dtype)
    rows, vocab, padded = 5, 3002, 3002 + 76
    storage = from_bits([canonical_nan(fmt)], fmt).repeat(rows * padded).reshape(rows, padded)
    storage[:, :vocab] = nan_rows(rows, vocab, fmt.dtype)
    reference_copy = to_bits(storage)
    view = storage.to(device, copy=True)[:, :vocab]
    assert view.stride(0) == padded
    with _CopyWatch(view.untyped_storage().data_ptr()) as watch:
        got = target.get_num_nans(view)
    effects = [Problem(COPIED, f"padded input copied ({', '.join(sorted(set(watch.copies)))})")] if watch.copies else []
    whole = view.as_strided((rows, padded), (padded, 1), view.storage_offset())
    if not torch.equal(to_bits(whole), reference_copy):
        effects.append(Problem(PADDING_MODIFIED, "the padded storage was modified"))
    check_counts(got, expected_counts(storage[:, :vocab]),
                 params(f"{dtype}-padded-{rows}x{vocab}", dtype, (rows, vocab), "padded"), "wrapper",
                 side_effects=effects, logits=view)


@pytest.mark.parametrize("dtype", ["fp32", "bf16", "fp16"])
def test_output_and_input_untouched(dtype: str, target: KernelUnderTest, device: str,
                                    check_counts: CheckCounts) -> None:
    """Output is int32, contiguous, on the input's device; the input is bit-identical afterwards."""
    host = nan_rows(6, 9000, fmt_of(dtype).dtype)
    before = to_bits(host)
    logits = host.to(device, copy=True)
    got = target.get_num_nans(logits)
    changed = not torch.equal(to_bits(logits), before)
    effects = [Problem(INPUT_MODIFIED, "get_num_nans modified its input")] if changed else []
    if isinstance(got, torch.Tensor) and not got.is_contiguous():
        effects.append(Problem(MALFORMED, f"output is not contiguous (strides {tuple(got.stride())})"))
    check_counts(got, expected_counts(host), params(f"{dtype}-untouched-6x9000", dtype, (6, 9000)), "wrapper",
          side_effects=effects, logits=logits)


def test_direct_launch_writes_only_its_outputs(target: KernelUnderTest, device: str, check_counts: CheckCounts,
                                               request: pytest.FixtureRequest) -> None:
    """Poisoned guard slots (two blocks wide) on both sides of the output must survive the launch unchanged."""
    if target.kernel is None:
        skips.skip(request.node, skips.direct_path(target.kernel_skip_reason or "no _num_nans_kernel"))
    host = nan_rows(9, 8193, torch.float32)
    logits = host.to(device)
    counts, effects = run_direct(target, logits)
    assert GUARD >= 8192 and POISON < 0
    check_counts(counts, expected_counts(host), params("fp32-guarded-9x8193", "fp32", (9, 8193)), "direct",
          side_effects=effects, logits=logits)


OFFSETS = (1, 3, 8192)  # element offsets into a larger buffer: unaligned for every dtype, and a block in


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("offset", OFFSETS)
@pytest.mark.parametrize("dtype", ["fp32", "bf16", "fp16"])
def test_offset_views(dtype: str, offset: int, path: str, device: str, launch: LaunchAndCheck) -> None:
    """A [4, 3000] view starting `offset` elements into a buffer of NaNs: only the view's elements count.
    A kernel or wrapper that drops storage_offset() reads from the buffer's start (NaNs) instead."""
    fmt = fmt_of(dtype)
    rows, vocab = 4, 3000
    gen = generator(9)
    buffer = from_bits(random_nan_bits(offset + rows * vocab + 64, fmt, gen), fmt)
    host = nan_rows(rows, vocab, fmt.dtype, seed=9)
    host[:, -max(OFFSETS[:2]):] = 1.0  # each row ends in numbers: a shifted read gains NaNs in row 0
    buffer[offset : offset + rows * vocab] = host.reshape(-1)
    view = buffer.to(device, copy=True)[offset : offset + rows * vocab].view(rows, vocab)
    assert view.storage_offset() == offset
    launch(path, view, expected_counts(host), params(f"{dtype}-offset{offset}-{rows}x{vocab}", dtype,
                                                     (rows, vocab), "offset", seed=9))
