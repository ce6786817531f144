"""Every launch variant counts exactly, at and around its chunk and block boundaries, on the backend under test."""
from __future__ import annotations

import pytest
import torch

import kernel.num_nans as num_nans
from kernel.launch import Tuning, plan_launch, tuning_for
from tests.kernel.tunings import SMALL, plan_as_compiled

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def _logits(rows: int, vocab: int, dtype: torch.dtype, stride: int, plan_chunk: int, seed: int) -> torch.Tensor:
    """Random rows with ~30% NaNs, NaNs at every chunk edge, and NaN padding past vocab (never to be counted)."""
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, stride, generator=gen)
    x[torch.rand(rows, stride, generator=gen) < 0.3] = float("nan")
    edges = [c + d for c in range(0, vocab + 1, plan_chunk) for d in (-1, 0)] + [vocab - 1]
    for i, col in enumerate(e for e in edges if 0 <= e < vocab):
        x[i % rows, col] = float("nan")
    x[:, vocab:] = float("nan")
    return x.to(dtype)[:, :vocab]


CASES = [  # (variant, rows, vocab, dtype, stride)
    ("rows", 4, 16, "fp32", 16),
    ("rows", 1, 16, "fp32", 16),
    ("rows-loop", 5, 16, "fp32", 16),
    ("rows-loop", 9, 1000, "bf16", 1000),
    ("rows-loop", 11, 47, "fp16", 64),  # padded
    ("split", 1, 17, "fp32", 17),
    ("split", 1, 64, "fp32", 64),
    ("split", 2, 33, "bf16", 40),  # padded
    ("split-loop", 1, 65, "fp32", 65),
    ("split-loop", 7, 64, "fp16", 64),
    ("split-loop", 3, 8193, "fp32", 8200),  # padded
]


@pytest.mark.parametrize("variant, rows, vocab, dtype, stride", CASES, ids=[
    f"{v}-{d}-{r}x{c}" + (f"-stride{s}" if s != c else "") for v, r, c, d, s in CASES])
def test_variant_counts_exactly(variant: str, rows: int, vocab: int, dtype: str, stride: int, device: str) -> None:
    plan = plan_launch(rows, vocab, DTYPES[dtype].itemsize, SMALL)
    assert plan.variant == variant, plan
    host = _logits(rows, vocab, DTYPES[dtype], stride, plan.chunk, seed=rows * 100003 + vocab)
    expected = torch.isnan(host).sum(-1).to(torch.int32)
    got = num_nans.run_plan(host.to(device), plan)
    assert got.dtype == torch.int32 and got.shape == (rows,)
    assert torch.equal(got.cpu(), expected), f"{plan}: got {got.tolist()}, expected {expected.tolist()}"


SPLITS = [c for c in CASES if c[0].startswith("split")]


@pytest.mark.parametrize("variant, rows, vocab, dtype, stride", SPLITS, ids=[
    f"{v}-{d}-{r}x{c}" + (f"-stride{s}" if s != c else "") for v, r, c, d, s in SPLITS])
def test_split_in_one_launch_counts_exactly(variant: str, rows: int, vocab: int, dtype: str, stride: int,
                                            device: str) -> None:
    """Every item atomically adds its count into a zeroed output, one launch; a second call starts from zero."""
    plan = plan_launch(rows, vocab, DTYPES[dtype].itemsize, SMALL)
    assert plan.variant == variant and plan.num_chunks > 1, plan
    host = _logits(rows, vocab, DTYPES[dtype], stride, plan.chunk, seed=rows * 7 + vocab)
    expected = torch.isnan(host).sum(-1).to(torch.int32)
    for _ in range(2):  # a second call gets a fresh zeroed output, not the first call's sums
        got = num_nans.run_plan(host.to(device), plan)
        assert got.dtype == torch.int32 and torch.equal(got.cpu(), expected), f"{plan}: got {got.tolist()}"


@pytest.mark.parametrize("rows, vocab, dtype, stride", [(140, 300, "bf16", 300), (133, 3000, "fp32", 3007),
                                                       (132, 7, "fp16", 9)])
def test_cuda_whole_rows_plan_counts_exactly(rows: int, vocab: int, dtype: str, stride: int, device: str,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The CUDA tuning's one-program-per-row launch (block capped at the row, fewer warps) on this backend."""
    plan_as_compiled(monkeypatch)
    plan = plan_launch(rows, vocab, DTYPES[dtype].itemsize, tuning_for(torch.device("cuda"), cores=132))
    assert (plan.variant, plan.grid) == ("rows", rows), plan
    host = _logits(rows, vocab, DTYPES[dtype], stride, plan.chunk, seed=rows + vocab)
    got = num_nans.run_plan(host.to(device), plan)
    assert torch.equal(got.cpu(), torch.isnan(host).sum(-1).to(torch.int32)), plan


def test_many_partials_per_row(device: str) -> None:
    """Hundreds of chunks adding into one row."""
    tuning = Tuning(4, split_rows=8, split_items=300, max_programs=1 << 30, row_programs=4, row_block_bytes=64,
                    row_warps=4, split_block_bytes=64, split_warps=4)
    plan = plan_launch(1, 16 * 300 - 3, 4, tuning)
    assert (plan.variant, plan.num_chunks) == ("split", 300)
    host = _logits(1, plan.vocab_size, torch.float32, plan.vocab_size, plan.chunk, seed=5)
    assert torch.equal(num_nans.run_plan(host.to(device), plan).cpu(), torch.isnan(host).sum(-1).to(torch.int32))


@pytest.fixture
def launched(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The variant of every plan get_num_nans runs during the test, in order."""
    variants: list[str] = []
    original = num_nans._Kind

    def spy(plan, dtype):  # type: ignore[no-untyped-def]
        variants.append(plan.variant if plan is not None else "empty")
        return original(plan, dtype)

    monkeypatch.setattr(num_nans, "_Kind", spy)
    monkeypatch.setattr(num_nans, "_KINDS", {})  # every kind planned afresh in this test
    return variants


@pytest.mark.parametrize("offset, expected", [(-1, "split"), (0, "rows")])
def test_get_num_nans_switches_at_split_rows(offset: int, expected: str, device: str, launched: list[str]) -> None:
    """The wrapper launches the plan the planner chose for this device, on either side of split_rows (rows too long
    for an eager CUDA call to run whole)."""
    tuning = tuning_for(torch.device(device))
    rows, vocab = tuning.split_rows + offset, max(3000, tuning.eager_row_bytes // 4 + 1)
    host = _logits(rows, vocab, torch.float32, vocab, 3000, seed=rows)
    got = num_nans.get_num_nans(host.to(device))
    assert launched and launched[0].startswith(expected), launched
    assert torch.equal(got.cpu(), torch.isnan(host).sum(-1).to(torch.int32))


def test_cuda_eager_and_captured_calls_plan_apart(device: str, launched: list[str]) -> None:
    """A decode-sized input runs whole rows when called eagerly and splits when captured into a CUDA graph;
    both count exactly, the replay included."""
    if device != "cuda":
        pytest.skip("only CUDA plans by capture")
    host = _logits(2, 152064, torch.float32, 152064, 4096, seed=11)
    expected = torch.isnan(host).sum(-1).to(torch.int32)
    x = host.to(device)
    assert torch.equal(num_nans.get_num_nans(x).cpu(), expected) and launched == ["rows"]
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        num_nans.get_num_nans(x)  # warm-up off the capture
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = num_nans.get_num_nans(x)
    assert launched[-1] == "split", launched
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out.cpu(), expected)


def test_same_counts_every_call_in_fresh_tensors(device: str) -> None:
    host = _logits(3, 5000, torch.bfloat16, 5000, 1024, seed=9)
    x = host.to(device)
    outs = [num_nans.get_num_nans(x) for _ in range(3)]
    assert all(torch.equal(o, outs[0]) for o in outs)
    assert len({o.data_ptr() for o in outs}) == 3, "an output buffer was reused between calls"


@pytest.mark.parametrize("rows, vocab, dtype, stride", [(2, 152064, "bf16", 152064), (3, 1001, "fp16", 1002),
                                                       (4, 300000, "fp32", 300000), (600, 300, "fp32", 301)])
def test_repeat_calls_plan_once_per_input_kind(rows: int, vocab: int, dtype: str, stride: int, device: str,
                                               launched: list[str]) -> None:
    """An accelerator input kind is planned once (fresh inputs of the same kind, views 16 bytes in, count exactly);
    an input 2 bytes in is another kind (another alignment: Triton compiles for it apart). The CPU plans every
    call (the interpreter flag may change between calls): there each alignment once after a repeat shows it, not
    the accelerator's second misaligned call and return to the first kind."""
    storage = torch.empty(rows * stride + 8, dtype=DTYPES[dtype], device=device)
    calls = 0
    steps = ((1, 0, 1), (2, 0, 1), (3, 8, 1), (4, 1, 2), (5, 1, 2), (6, 0, 2))  # element offsets
    for seed, start, kinds in steps[:4] if device == "cpu" else steps:
        host = _logits(rows, vocab, DTYPES[dtype], stride, 4096, seed=seed)
        view = storage[start : start + rows * stride].view(rows, stride)[:, :vocab]
        view.copy_(host.to(device))
        got = num_nans.get_num_nans(view)
        calls += 1
        assert torch.equal(got.cpu(), torch.isnan(host).sum(-1).to(torch.int32)), (seed, start)
        assert len(launched) == (calls if device == "cpu" else kinds), (seed, start, launched)
    assert len({got.data_ptr(), num_nans.get_num_nans(view).data_ptr()}) == 2, "an output buffer was reused"
