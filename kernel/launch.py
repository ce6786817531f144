"""How get_num_nans launches for one input: the pure planning half, so tests can pin every switch point.

Items = (row, vocabulary chunk); every plan is one launch (docs/bench.md: the table, the measurements behind it):
  rows        one program per row (grid = rows): `_num_nans_kernel` itself at the plan's block and warps;
  pairs       `rows` for at most `cores` 16-bit rows of whole words, longer than one step: two elements a word.
  rows-loop   whole rows on a grid capped at `row_programs` (NPU, interpreter): programs loop over rows.
  split       short batches: rows cut into chunks; `split-loop` on a grid capped at `max_programs`.
All but `rows` and `pairs` add each item's count into its row of a zeroed output (int32 atomics: exact, order-free).
"""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

import torch
import triton

INTERPRETER_CORES = 4  # small and fixed, so the CPU suite reaches every variant
NPU_FALLBACK_CORES = 40  # vector cores of a 910B-class card when neither triton-ascend nor torch_npu says
ROW_BYTES_PER_WARP = 32 * 16  # a whole-row step gives each of a warp's 32 threads at least one 16-byte load
# CUDA, uncaptured: <= cores rows of up to this size run whole, no zeroed output (an eager step's cost, docs/bench.md)
EAGER_ROW_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Tuning:
    """Per-device launch knobs; block sizes in bytes, so every dtype loads the same bytes per step."""

    cores: int
    split_rows: int  # batches with fewer rows than this are split
    split_items: int  # a split aims at this many (row, chunk) items
    max_programs: int  # grid cap of a split
    row_programs: int  # grid cap of a whole-row launch
    row_block_bytes: int
    row_warps: int
    split_block_bytes: int
    split_warps: int
    eager_row_bytes: int = 0  # see EAGER_ROW_BYTES
    few_row_block_bytes: int = 0  # whole rows when rows <= cores (a core each): bytes per step, 0 = row_block_bytes
    few_row_warps: int = 0  # ... and warps, 0 = row_warps
    pair_block_bytes: int = 0  # > 0: a `rows` plan of <= cores 16-bit rows of whole words reads pairs, these bytes
    pair_warps: int = 0  # per step over these warps
    cores_from: str = "fixed"  # where `cores` came from: a device query, or the fallback and why


@dataclass(frozen=True)
class LaunchPlan:
    """One input's launch: items = rows * num_chunks, `grid` programs over them, `chunk` elements per item."""

    variant: str
    num_reqs: int
    vocab_size: int
    num_chunks: int
    num_items: int  # num_reqs * num_chunks
    chunk: int
    block: int
    grid: int
    num_warps: int
    cores_from: str = "fixed"


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def plan_launch(num_reqs: int, vocab_size: int, element_size: int, tuning: Tuning, captured: bool = False,
                words: bool = False) -> LaunchPlan:
    """The variant for a non-empty input; `captured`: recorded into a graph, whose replays pay device time only;
    `words`: every row is whole int32 words (4-byte aligned start, even length): 16-bit rows may be read in pairs."""
    if num_reqs < 1 or vocab_size < 1:
        raise ValueError(f"plan_launch needs a non-empty input, got {num_reqs} x {vocab_size}")
    split_block = max(16, tuning.split_block_bytes // element_size)  # elements per step: a power of two
    blocks = _cdiv(vocab_size, split_block)
    few_rows = num_reqs <= tuning.cores
    eager_rows = not captured and few_rows and vocab_size * element_size <= tuning.eager_row_bytes
    chunks = min(blocks, max(1, tuning.split_items // num_reqs)) if num_reqs < tuning.split_rows else 1
    if chunks >= 2 and not eager_rows:
        chunk = _cdiv(blocks, chunks) * split_block
        block, warps, variant = split_block, tuning.split_warps, "split"
        num_chunks = _cdiv(vocab_size, chunk)
    else:
        block_bytes, max_warps = tuning.row_block_bytes, tuning.row_warps
        if few_rows and tuning.few_row_block_bytes:
            block_bytes, max_warps = tuning.few_row_block_bytes, tuning.few_row_warps
        block = min(max(16, block_bytes // element_size), max(16, 1 << (vocab_size - 1).bit_length()))
        warps = max(1, min(max_warps, block * element_size // ROW_BYTES_PER_WARP))
        chunk, num_chunks, variant = _cdiv(vocab_size, block) * block, 1, "rows"
    items = num_reqs * num_chunks
    grid = min(items, tuning.max_programs if num_chunks > 1 else tuning.row_programs)
    if grid < items:
        variant += "-loop"
    elif (variant == "rows" and few_rows and element_size == 2 and words and tuning.pair_block_bytes
          and vocab_size * element_size > tuning.few_row_block_bytes):  # pairs pay past one whole-row step
        block = min(tuning.pair_block_bytes // 4, max(16, 1 << (vocab_size // 2 - 1).bit_length()))  # int32 words
        variant, warps = "pairs", max(1, min(tuning.pair_warps, block * 4 // ROW_BYTES_PER_WARP))
    return LaunchPlan(variant, num_reqs, vocab_size, num_chunks, items, chunk, block, grid, warps, tuning.cores_from)


def interpreting() -> bool:
    """True under TRITON_INTERPRET (the CPU backend)."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def npu_vector_cores(index: int) -> tuple[int, str]:
    """Vector cores of an Ascend card and who said so: triton-ascend's driver, torch_npu, else the fallback."""
    queries = {"triton-ascend num_vectorcore": lambda: triton.runtime.driver.active.utils.get_device_properties(index)
               .get("num_vectorcore", 0), "torch_npu vector_core_num": lambda: torch.npu.get_device_properties(index)
               .vector_core_num}
    for source, query in queries.items():
        with contextlib.suppress(Exception):  # a driver without that property, or no NPU runtime active
            if (cores := int(query())) > 0:
                return cores, source
    return NPU_FALLBACK_CORES, f"fallback {NPU_FALLBACK_CORES}: neither triton-ascend nor torch_npu answered"


def tuning_for(device: torch.device, cores: int | None = None) -> Tuning:
    """The knobs for a backend (values from sweeps on an H200, docs/bench.md); `cores` overrides the device query of
    the card `device` names (the current one without an index): SMs on CUDA, vector cores on NPU."""
    kind = "interpreter" if interpreting() or device.type not in ("cuda", "npu") else device.type
    n, source = (cores, "given") if cores is not None else (INTERPRETER_CORES, "fixed for the interpreter")
    if cores is None and kind != "interpreter":
        index = getattr(torch, device.type).current_device() if device.index is None else device.index
        n, source = ((torch.cuda.get_device_properties(index).multi_processor_count, "SM count") if kind == "cuda"
                     else npu_vector_cores(index))
    if kind == "interpreter":  # small blocks and a 4-program cap: the CPU suite runs every variant, loops included
        return Tuning(n, 2 * n, 4 * n, n, n, row_block_bytes=4096, row_warps=4, split_block_bytes=4096,
                      split_warps=4, pair_block_bytes=256, pair_warps=4, cores_from=source)
    if kind == "npu":  # grid <= vector cores (extra programs would queue), 8 KB steps for the 192 KB unified buffer
        return Tuning(n, n, n, n, n, row_block_bytes=8192, row_warps=4, split_block_bytes=8192, split_warps=4,
                      cores_from=source)
    # CUDA: a split gives up to 8 items per SM in 4 KB steps over 8 warps; whole rows take 32 KB steps over 16
    # warps with a sum per step (a core each: 128 KB over 32 warps, 16-bit rows as word pairs in 16 KB steps over
    # 32 warps); the 1-D grid takes 2^31 - 1 programs
    return Tuning(n, n, 8 * n, 8 * n, 2**31 - 1, row_block_bytes=32768, row_warps=16, split_block_bytes=4096,
                  split_warps=8, eager_row_bytes=EAGER_ROW_BYTES, few_row_block_bytes=131072, few_row_warps=32,
                  pair_block_bytes=16384, pair_warps=32, cores_from=source)
