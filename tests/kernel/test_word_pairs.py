"""16-bit rows read as int32 words of two elements (`pairs`): exact on every bit pattern, planned only where every
row is whole words, and every planted twin of the kernel caught (tests/kernel/pair_plants.py)."""
from __future__ import annotations

from dataclasses import replace

import pytest
import torch

import kernel.num_nans as num_nans
from kernel import launch
from kernel.launch import plan_launch
from tests.kernel.pair_plants import PLANTS
from tests.kernel.tunings import SMALL, plan_as_compiled

PAIRS = replace(SMALL, split_rows=0, pair_block_bytes=64, pair_warps=4)  # never split; 16 words a step
INF_BITS = {torch.bfloat16: 0x7F80, torch.float16: 0x7C00}
CASES = [  # (dtype, rows, vocab, stride): one word to several steps and a partial one, padded
    (torch.bfloat16, 1, 2, 2), (torch.bfloat16, 4, 68, 70), (torch.bfloat16, 3, 200, 202),
    (torch.float16, 3, 64, 64), (torch.float16, 2, 130, 136), (torch.float16, 4, 30, 32)]
IDS = [f"{str(d).removeprefix('torch.')}-{r}x{v}" + (f"-stride{s}" if s != v else "") for d, r, v, s in CASES]


def _bits(dtype: torch.dtype, rows: int, vocab: int, stride: int, seed: int) -> torch.Tensor:
    """int16 raw bits: random halves, half of them IEEE edge patterns (signalling, quiet and negative NaNs, the
    largest payload, both infinities, the largest finite), NaN patterns in the padding (never to be counted)."""
    gen = torch.Generator().manual_seed(seed)
    inf = INF_BITS[dtype]
    edges = torch.tensor([inf + 1, inf | 0x0200 if dtype == torch.float16 else inf | 0x40, 0x7FFF, inf - 1, inf,
                          inf | 0x8000, (inf + 1) | 0x8000, 0xFFFF, 0], dtype=torch.int32)
    bits = torch.randint(0, 1 << 16, (rows, stride), generator=gen, dtype=torch.int32)
    pick = torch.rand(rows, stride, generator=gen) < 0.5
    bits[pick] = edges[torch.randint(0, len(edges), (int(pick.sum()),), generator=gen)]
    bits[:, vocab:] = 0x7FFF
    return torch.where(bits >= 1 << 15, bits - (1 << 16), bits).to(torch.int16)


def _run(dtype: torch.dtype, rows: int, vocab: int, stride: int, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    """(got, expected) for one case through the word-pair plan; expected from the raw bits alone."""
    bits = _bits(dtype, rows, vocab, stride, seed=rows * 1009 + vocab)
    expected = ((bits[:, :vocab].to(torch.int32) & 0x7FFF) > INF_BITS[dtype]).sum(-1).to(torch.int32)
    plan = plan_launch(rows, vocab, 2, PAIRS, words=True)
    assert plan.variant == "pairs", plan
    got = num_nans.run_plan(bits.to(device).view(dtype)[:, :vocab], plan)
    return got, expected


@pytest.mark.parametrize("dtype, rows, vocab, stride", CASES, ids=IDS)
def test_word_pairs_count_exactly(dtype: torch.dtype, rows: int, vocab: int, stride: int, device: str) -> None:
    got, expected = _run(dtype, rows, vocab, stride, device)
    assert got.dtype == torch.int32 and got.shape == (rows,) and got.device.type == torch.device(device).type
    assert torch.equal(got.cpu(), expected), f"got {got.tolist()}, expected {expected.tolist()}"


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_every_planted_pair_kernel_is_caught(plant: str, device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cases above, run against each planted twin: at least one must miscount."""
    monkeypatch.setattr(num_nans, "_count_pairs_kernel", PLANTS[plant])
    wrong = [case for case in CASES if not torch.equal((r := _run(*case, device))[0].cpu(), r[1])]
    assert wrong, f"{plant}: no case caught it"


@pytest.mark.parametrize("rows, vocab, element_size, aligned, captured, variant, block, warps", [
    (1, 152064, 2, True, False, "pairs", 4096, 32),  # decode: a core per row, 16 KB of words a step, 32 warps
    (16, 262144, 2, True, False, "pairs", 4096, 32),
    (132, 152064, 2, True, False, "pairs", 4096, 32),  # a core each
    (1, 65538, 2, True, False, "pairs", 4096, 32),  # past one 128 KB whole-row step
    (1, 65536, 2, True, False, "rows", 65536, 32),  # one whole-row step: elements
    (1, 152064, 2, False, False, "rows", 65536, 32),  # not whole words (a row starting mid-word, or odd): elements
    (1, 152064, 4, True, False, "rows", 32768, 32),  # fp32: elements
    (133, 152064, 2, True, False, "rows", 16384, 16),  # more rows than cores: the batch fills the device
    (1, 152064, 2, True, True, "split", 2048, 8),  # captured: split over the device
    (4, 300, 2, True, False, "rows", 512, 2)])  # a narrow row: elements
def test_cuda_plans_word_pairs_for_a_few_aligned_16_bit_rows(
        monkeypatch: pytest.MonkeyPatch, rows: int, vocab: int, element_size: int, aligned: bool, captured: bool,
        variant: str, block: int, warps: int) -> None:
    plan_as_compiled(monkeypatch)
    tuning = launch.tuning_for(torch.device("cuda"), cores=132)
    plan = plan_launch(rows, vocab, element_size, tuning, captured, words=aligned)
    assert (plan.variant, plan.block, plan.num_warps) == (variant, block, warps), plan


@pytest.mark.parametrize("start, pad, trim, whole_words", [
    (0, 2, 0, True), (2, 2, 0, True), (1, 2, 0, False), (0, 1, 0, False), (0, 2, 1, False)])
def test_wrapper_pairs_only_rows_of_whole_words(start: int, pad: int, trim: int, whole_words: bool,
                                                device: str) -> None:
    """An input 2 bytes into its storage, an odd row stride or an odd row length: not whole words, elements there.
    Rows are one element pair longer than the device's whole-row step, the shortest rows pairs pay on."""
    tuning = launch.tuning_for(torch.device(device))
    even = max(998, tuning.few_row_block_bytes // 2 + 2)
    rows, vocab, stride = 3, even - trim, even + pad
    variant = "pairs" if whole_words and tuning.pair_block_bytes else "rows"
    bits = _bits(torch.bfloat16, rows, vocab, stride, seed=start + stride)
    storage = torch.zeros(rows * stride + 8, dtype=torch.int16)
    storage[start : start + rows * stride] = bits.flatten()
    view = storage.to(device).view(torch.bfloat16)[start : start + rows * stride].view(rows, stride)[:, :vocab]
    assert num_nans.plan_for(view).variant == variant
    expected = ((bits[:, :vocab].to(torch.int32) & 0x7FFF) > 0x7F80).sum(-1).to(torch.int32)
    assert torch.equal(num_nans.get_num_nans(view).cpu(), expected)
