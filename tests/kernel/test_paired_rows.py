"""The word-pair kernel for whole 16-bit rows: every bit pattern, both halves of a word, odd tails, long rows, the
step bound and the alignment it needs, on the backend under test; each check also runs on planted twins
(tests/kernel/paired_plants.py) and must fail there."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import pytest
import torch

import kernel.num_nans as num_nans
from kernel.launch import PAIRED_MAX_STEPS, LaunchPlan, plan_launch, tuning_for
from kernel.predicate import half_nan_add
from tests.kernel.paired_plants import PLANTS
from tests.kernel.tunings import plan_as_compiled

HALVES = {"bf16": torch.bfloat16, "fp16": torch.float16}
Kernel = object  # a @triton.jit function with _count_rows_paired_kernel's signature


def _plan(rows: int, vocab: int, block: int) -> LaunchPlan:
    """A whole-row plan on the word-pair kernel, `block` elements (block // 2 words) per step."""
    return LaunchPlan("rows", rows, vocab, 1, -(-vocab // block) * block, block, rows, 4, paired_warps=4)


def _count(kernel: Kernel, host: torch.Tensor, device: str, block: int) -> torch.Tensor:
    """Counts of `kernel` over `host` (on `device`, in rows of an even stride), launched as run_plan launches the
    real one."""
    rows, vocab = host.shape
    x = torch.empty(rows, vocab + vocab % 2, dtype=host.dtype, device=device)[:, :vocab]  # rows 4-byte aligned
    x.copy_(host)
    out = torch.empty(rows, dtype=torch.int32, device=x.device)
    kernel[(rows,)](x, x.stride(0), out, vocab, BLOCK=block // 2, HALF_ADD=half_nan_add(x.dtype),  # type: ignore
                    num_warps=4)
    return out.cpu()


def _patterns(dtype: torch.dtype, rows: int, vocab: int, seed: int) -> torch.Tensor:
    """rows x vocab distinct 16-bit patterns (all 65,536 when rows * vocab is), in a seeded order, so NaNs of
    every class land in low and high halves of words alike."""
    order = torch.randperm(65536, generator=torch.Generator().manual_seed(seed))[: rows * vocab]
    return (order - 32768).to(torch.int16).view(dtype).reshape(rows, vocab)


def _nan_bits(dtype: torch.dtype) -> list[int]:
    """Raw NaN patterns of every class: quiet, signaling, payload, negative (as int16 values)."""
    if dtype == torch.bfloat16:
        return [0x7FC0, 0x7F81, 0x7FFF, 0x7FA5, -0x0001, -0x003F, -0x007F]  # 0xFFFF, 0xFFC1, 0xFF81
    return [0x7E00, 0x7C01, 0x7FFF, 0x7D55, -0x0001, -0x01FF, -0x0200]  # fp16: 0xFFFF, 0xFE01, 0xFE00


def _columns(dtype: torch.dtype, rows: int, vocab: int, where: str, seed: int) -> torch.Tensor:
    """Finite values (with Infs beside them) and NaNs of every class in the columns `where` names."""
    gen = torch.Generator().manual_seed(seed)
    host = torch.randn(rows, vocab, generator=gen).to(dtype)
    host[:, ::3] = float("inf")  # the largest non-NaN pattern sits next to the NaNs
    bits = host.view(torch.int16)
    cols = {"even": range(0, vocab, 2), "odd": range(1, vocab, 2), "last": [vocab - 1]}[where]
    nans = _nan_bits(dtype)
    for r in range(rows):
        for i, c in enumerate(cols):
            if (r + i) % 3 != 2:
                bits[r, c] = nans[(r + i) % len(nans)]
    return host


def _all_nan(dtype: torch.dtype, rows: int, vocab: int) -> torch.Tensor:
    return torch.full((rows, vocab), float("nan"), dtype=dtype)


CHECKS: dict[str, Callable[[str], tuple[torch.Tensor, int]]] = {  # name -> (host input, block) for a dtype name
    "every-pattern-4x16384": lambda d: (_patterns(HALVES[d], 4, 16384, seed=1), 64),
    "every-pattern-odd-3x21845": lambda d: (_patterns(HALVES[d], 3, 21845, seed=2), 64),
    **{f"{where}-columns-{v}": (lambda d, where=where, v=v: (_columns(HALVES[d], 3, v, where, seed=v), 32))
       for where in ("even", "odd", "last") for v in (1, 2, 3, 5, 31, 32, 33, 65)},
    "all-nan-300-steps": lambda d: (_all_nan(HALVES[d], 2, 300 * 32 + 1), 32),
}


@pytest.mark.parametrize("dtype", list(HALVES))
@pytest.mark.parametrize("check", list(CHECKS))
def test_paired_kernel_counts_exactly(check: str, dtype: str, device: str) -> None:
    __tracebackhide__ = True
    host, block = CHECKS[check](dtype)
    expected = torch.isnan(host).sum(-1).to(torch.int32)
    got = _count(num_nans._count_rows_paired_kernel, host, device, block)
    assert torch.equal(got, expected), f"{check} {dtype}: got {got.tolist()}, expected {expected.tolist()}"


@pytest.mark.parametrize("plant", list(PLANTS))
def test_checks_catch_planted_twin(plant: str, device: str) -> None:
    """Every planted twin miscounts in at least one of the checks above."""
    caught = []
    for dtype in HALVES:
        for name, make in CHECKS.items():
            host, block = make(dtype)
            if not torch.equal(_count(PLANTS[plant], host, device, block), torch.isnan(host).sum(-1).to(torch.int32)):
                caught.append(f"{name}-{dtype}")
    assert caught, f"no check catches the planted {plant}"


def test_step_bound_is_tight(device: str) -> None:
    """An all-NaN row of exactly PAIRED_MAX_STEPS steps per lane counts right, one step more does not: the bound
    plan_launch keeps is the kernel's real limit."""
    if device != "cuda":
        pytest.skip("65,535 steps take minutes in the interpreter; run on compiled Triton")
    block = 32
    for steps, exact in ((PAIRED_MAX_STEPS, True), (PAIRED_MAX_STEPS + 1, False)):
        host = _all_nan(torch.bfloat16, 1, steps * block)
        got = num_nans.run_plan(host.to(device), _plan(1, steps * block, block)).cpu()
        assert (got.item() == steps * block) == exact, (steps, got.item())


class _Spy:
    """Wraps a FastLauncher and records each launch (both of the ways num_nans._launch calls it)."""

    def __init__(self, launcher: object, calls: list[str], name: str) -> None:
        self.launcher, self.calls, self.name = launcher, calls, name

    def __call__(self, *args: object, **kwargs: object) -> None:
        self.calls.append(self.name)
        self.launcher(*args, **kwargs)  # type: ignore[operator]

    def launch_keyed(self, *args: object) -> None:
        self.calls.append(self.name)
        self.launcher.launch_keyed(*args)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:  # the compiled-kernel cache and the rest, as the launcher has them
        return getattr(self.launcher, name)


@pytest.fixture
def kernels(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Which whole-row kernel each launch during the test used: 'pairs' or 'rows'."""
    calls: list[str] = []
    monkeypatch.setattr(num_nans, "_launch_pairs", _Spy(num_nans._launch_pairs, calls, "pairs"))
    monkeypatch.setattr(num_nans, "_launch_rows", _Spy(num_nans._launch_rows, calls, "rows"))
    monkeypatch.setattr(num_nans, "_REPLAYS", {})  # no CUDA replay of a kind an earlier test launched
    return calls


@pytest.mark.parametrize("layout", ["aligned", "offset-1", "odd-stride"])
def test_rows_not_on_4_byte_boundaries_fall_back(layout: str, device: str, kernels: list[str]) -> None:
    """A paired plan reads words only where every row starts 4-byte aligned; other views run the element kernel."""
    storage = _columns(torch.bfloat16, 3, 1004, "odd", seed=7).to(device)
    x = {"aligned": storage[:, :1000], "offset-1": storage[:, 1:1001],
         "odd-stride": storage.flatten()[: 3 * 1001].view(3, 1001)[:, :999]}[layout]
    got = num_nans.run_plan(x, _plan(3, x.shape[1], 64))
    assert torch.equal(got.cpu(), torch.isnan(x.cpu()).sum(-1).to(torch.int32)), layout
    assert kernels == ["pairs" if layout == "aligned" else "rows"], kernels


@pytest.mark.parametrize("dtype", list(HALVES))
def test_get_num_nans_pairs_few_long_16bit_rows(dtype: str, device: str, kernels: list[str]) -> None:
    """The wrapper's own plan reads word pairs for a few long 16-bit rows here (interpreter: any few rows; CUDA:
    rows past one 128 KB step), and counts exactly."""
    vocab = 2001 if device == "cpu" else 152063  # odd, in padded rows of an even stride
    host = _columns(HALVES[dtype], 2, vocab + 1, "odd", seed=3)[:, :vocab]
    x = torch.empty(2, vocab + 1, dtype=host.dtype, device=device)[:, :vocab]  # .to() would make it contiguous
    x.copy_(host)
    assert num_nans.plan_for(x).paired_warps > 0, num_nans.plan_for(x)
    assert torch.equal(num_nans.get_num_nans(x).cpu(), torch.isnan(host).sum(-1).to(torch.int32))
    assert kernels == ["pairs"], kernels


@pytest.mark.parametrize(
    "rows, vocab, element_size, captured, warps",
    [(1, 152064, 2, False, 16), (16, 128256, 2, False, 16), (132, 262144, 2, False, 16),  # 1-132 long rows
     (1, 65536, 2, False, 0),  # one 128 KB step: launch-bound, the element kernel
     (1, 65537, 2, False, 16), (1, 152064, 4, False, 0),  # fp32 never
     (1, 152064, 2, True, 0),  # captured: the split
     (133, 152064, 2, False, 0),  # more rows than cores: the batch fills the device
     (1, 524288, 2, False, 16), (1, 524289, 2, False, 0)],  # past 1 MB an eager call splits
)
def test_cuda_pairs_few_long_16bit_rows(monkeypatch: pytest.MonkeyPatch, rows: int, vocab: int, element_size: int,
                                        captured: bool, warps: int) -> None:
    plan_as_compiled(monkeypatch)
    plan = plan_launch(rows, vocab, element_size, tuning_for(torch.device("cuda"), cores=132), captured)
    assert plan.paired_warps == warps, plan


def test_plans_never_pair_past_the_step_bound() -> None:
    """Word pairs only while a lane's 16-bit counts cannot carry: at most PAIRED_MAX_STEPS steps per row."""
    tuning = tuning_for(torch.device("cpu"))  # the interpreter pairs every few-row 16-bit whole-row plan
    tiny = replace(tuning, split_rows=1, row_block_bytes=64)  # whole rows, 32 elements (16 words) per step
    assert plan_launch(1, 32 * PAIRED_MAX_STEPS, 2, tiny).paired_warps > 0
    assert plan_launch(1, 32 * PAIRED_MAX_STEPS + 2, 2, tiny).paired_warps == 0
