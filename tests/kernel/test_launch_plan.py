"""Launch planning: each variant is chosen exactly at its switch point (pure arithmetic, no kernel launched)."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from kernel import launch
from kernel.launch import LaunchPlan, plan_launch
from tests.kernel.tunings import SMALL, plan_as_compiled


@pytest.mark.parametrize(
    "rows, vocab, variant, chunks",
    [
        (1, 16, "rows", 1),  # one split block: nothing to split
        (1, 17, "split", 2),  # a second block appears: split
        (1, 64, "split", 4),  # 4 items fill the 4 programs
        (1, 65, "split-loop", 5),  # the 5th item makes programs loop
        (7, 32, "split-loop", 2),  # 7 rows < split_rows: still split, 14 items over 4 programs
        (8, 32, "rows-loop", 1),  # split_rows reached: whole rows, 8 items over 4 programs
        (7, 64, "split-loop", 2),  # 3 chunks asked, 4 blocks round up to 2 per chunk: 2 chunks
        (8, 64, "rows-loop", 1),
        (4, 10_000, "split-loop", 4),
        (4, 16, "rows", 1),  # 4 items, 4 programs
        (5, 16, "rows-loop", 1),
    ],
)
def test_switch_points(rows: int, vocab: int, variant: str, chunks: int) -> None:
    plan = plan_launch(rows, vocab, 4, SMALL)
    assert (plan.variant, plan.num_chunks) == (variant, chunks), plan
    assert plan.grid == min(plan.num_items, SMALL.max_programs)


@pytest.mark.parametrize("rows, vocab", [(1, 17), (3, 1000), (7, 65), (1, 4096 + 1), (2, 7)])
def test_chunks_tile_the_row(rows: int, vocab: int) -> None:
    """Chunks are whole blocks, cover the row, and none is empty (an empty chunk is wasted work)."""
    plan = plan_launch(rows, vocab, 4, SMALL)
    assert plan.chunk % plan.block == 0
    assert plan.num_chunks * plan.chunk >= vocab > (plan.num_chunks - 1) * plan.chunk


def test_block_bytes_are_per_dtype() -> None:
    assert plan_launch(1, 10_000, 4, SMALL).block == 16
    assert plan_launch(1, 10_000, 2, SMALL).block == 32


def test_empty_input_has_no_plan() -> None:
    with pytest.raises(ValueError):
        plan_launch(0, 10, 4, SMALL)


@pytest.mark.parametrize(
    "rows, vocab, variant, chunks",
    [(1, 152064, "split", 149), (16, 262144, "split", 64), (131, 152064, "split", 8), (131, 8192, "split", 8),
     (132, 152064, "rows", 1), (1056, 32000, "rows", 1), (1057, 32000, "rows", 1), (70_001, 128, "rows", 1)],
)
def test_cuda_switch_points_on_an_h200(monkeypatch: pytest.MonkeyPatch, rows: int, vocab: int, variant: str,
                                       chunks: int) -> None:
    """Captured into a graph on 132 SMs: split below 132 rows into at most 8 items per SM on at most 8 programs per
    SM; from 132 rows one program per row, on a 1-D grid of any size (70,001 rows is past the 65,535 limit of grid
    axes 1 and 2)."""
    plan_as_compiled(monkeypatch)
    plan: LaunchPlan = plan_launch(rows, vocab, 4, launch.tuning_for(torch.device("cuda"), cores=132), True)
    assert (plan.variant, plan.num_chunks) == (variant, chunks), plan
    assert plan.grid == (rows if variant == "rows" else min(plan.num_items, 8 * 132))
    assert plan.cores_from == "given"


@pytest.mark.parametrize(
    "rows, vocab, element_size, variant, block, warps",
    [(1, 152064, 4, "rows", 32768, 32),  # 608 KB rows: whole, 128 KB steps over 32 warps
     (16, 262144, 4, "rows", 32768, 32),  # 1 MB: the last size that runs whole
     (1, 262145, 4, "split", 1024, 8),  # one element more: split
     (16, 300000, 4, "split", 1024, 8), (1, 262144, 2, "rows", 65536, 32), (131, 152064, 2, "rows", 65536, 32),
     (132, 152064, 4, "rows", 32768, 32),  # a core each: still the few-rows block
     (133, 152064, 4, "rows", 8192, 16),  # more rows than cores: the batch fills the device, 32 KB steps
     (4, 3000, 4, "rows", 4096, 32)],  # a narrow row: its next power of two, 16 bytes per thread
)
def test_cuda_eager_calls_run_short_rows_whole(monkeypatch: pytest.MonkeyPatch, rows: int, vocab: int,
                                               element_size: int, variant: str, block: int, warps: int) -> None:
    """Uncaptured on 132 SMs: up to 132 rows of at most 1 MB run one program per row (one launch, no zeroed
    output); longer rows split as a captured call would."""
    plan_as_compiled(monkeypatch)
    tuning = launch.tuning_for(torch.device("cuda"), cores=132)
    plan = plan_launch(rows, vocab, element_size, tuning)
    assert (plan.variant, plan.block, plan.num_warps) == (variant, block, warps), plan
    if variant == "split":
        assert plan == plan_launch(rows, vocab, element_size, tuning, True)


@pytest.mark.parametrize(
    "vocab, element_size, block, warps",
    [(152064, 4, 8192, 16), (152064, 2, 16384, 16), (3000, 4, 4096, 16), (300, 2, 512, 2), (128, 4, 128, 1),
     (5, 4, 16, 1)],
)
def test_cuda_whole_rows_block_and_warps(monkeypatch: pytest.MonkeyPatch, vocab: int, element_size: int, block: int,
                                         warps: int) -> None:
    """32 KB steps on 16 warps; a narrow row gets a block of its next power of two and 16 bytes per thread."""
    plan_as_compiled(monkeypatch)
    plan = plan_launch(200, vocab, element_size, launch.tuning_for(torch.device("cuda"), cores=132))
    assert (plan.variant, plan.block, plan.num_warps) == ("rows", block, warps), plan


@pytest.mark.parametrize("rows", [1, 16, 20, 21, 40, 70_001])
def test_npu_grid_never_exceeds_vector_cores(monkeypatch: pytest.MonkeyPatch, rows: int) -> None:
    """triton-ascend maps programs onto physical cores: every variant loops instead of over-subscribing."""
    plan_as_compiled(monkeypatch)
    npu = SimpleNamespace(type="npu", index=0)  # torch.device("npu") needs torch_npu
    plan = plan_launch(rows, 152064, 2, launch.tuning_for(npu, cores=40))  # type: ignore[arg-type]
    assert plan.grid <= 40
    assert plan.variant.startswith("split" if rows <= 20 else "rows")  # one wave: split while 2+ chunks fit


def test_interpreter_cores_are_small_and_fixed() -> None:
    assert launch.tuning_for(torch.device("cpu")).cores == launch.INTERPRETER_CORES
    assert plan_launch(1, 10, 4, launch.tuning_for(torch.device("cpu"))).cores_from == "fixed for the interpreter"


@pytest.mark.parametrize("answers, cores, source", [
    ((48, 24), 48, "triton-ascend num_vectorcore"), ((0, 24), 24, "torch_npu vector_core_num"),
    ((None, None), 40, "fallback 40: neither triton-ascend nor torch_npu answered")])
def test_npu_cores_say_where_they_came_from(monkeypatch: pytest.MonkeyPatch, answers: tuple[int | None, ...],
                                            cores: int, source: str) -> None:
    """The vector-core count comes from triton-ascend's driver, then torch_npu, then the stated fallback; the
    plan carries which (faked here: no NPU on this machine)."""
    import triton

    if not hasattr(triton.runtime.driver, "_active"):
        pytest.skip(f"Triton {triton.__version__}: no driver config to fake (the query path is triton-ascend's own)")

    def ask(value: int | None) -> object:
        if value is None:
            raise RuntimeError("no NPU")
        return value

    props = SimpleNamespace(get_device_properties=lambda index: {"num_vectorcore": ask(answers[0])})
    monkeypatch.setattr(triton.runtime.driver, "_active", SimpleNamespace(utils=props), raising=False)
    monkeypatch.setattr(torch, "npu", SimpleNamespace(
        get_device_properties=lambda index: SimpleNamespace(vector_core_num=ask(answers[1]))), raising=False)
    assert launch.npu_vector_cores(0) == (cores, source)
