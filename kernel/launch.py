"""How get_num_nans launches for one input: the pure planning half, so tests can pin every switch point.

Work is cut into items, one item = one (row, vocabulary chunk). On NPU and under the interpreter every item's count
is stored once by the one program that computed it (no atomics, no pre-zeroed buffer); on CUDA a split adds each
item's count into a zeroed output with an int32 atomic add, in one launch. Integer sums are exact and
order-independent, so either way the same input gives the same counts on every call.

Variants (the plan's `variant`):
  rows        one program per row (grid = rows): the anchor's own kernel, `_num_nans_kernel`, with a block of
              `row_block_bytes` (capped at the row's next power of two) and a block-wide sum per step; it stores
              the row's count directly (one launch). Chosen when the batch alone fills the device, and on CUDA
              for an uncaptured call of short rows (`eager_row_bytes`), where one launch with no zeroed output
              is what an eager step pays least for. With at most `cores` rows each program has a core to itself
              and takes `few_row_block_bytes` per step over `few_row_warps` (more bytes in flight per core);
              a 16-bit row longer than `paired_over_bytes` is then read two elements per int32 load
              (`_count_rows_paired_kernel`, `paired_warps`, rows of at most PAIRED_MAX_STEPS steps) when every
              row starts 4-byte aligned: one core is bound by per-element work there, which this halves.
  rows-loop   whole rows with the grid capped at `row_programs` (NPU, interpreter): `_count_items_kernel`,
              each program loops over rows `pid, pid + grid, ...` with a per-lane accumulator.
  split       rows are cut into `num_chunks` chunks so that rows * chunks <= `split_items` items; with
              `atomics` (CUDA) each item's count is atomically added into a zeroed int32 output (one launch);
              otherwise stage 1 writes a partial count per item into an int32 [rows, chunks] buffer and stage 2
              sums each row's partials in a fixed order. Chosen for short batches.
  split-loop  the same with stage 1's grid capped at `max_programs`.

Switch points (with the device's tuning `t`, `blocks = cdiv(vocab, t.block(element_size, split=True))`):
  split when   rows < t.split_rows and chunks = min(blocks, t.split_items // rows) >= 2, unless the call is
               not being captured into a graph and rows <= t.cores and vocab * element_size <= t.eager_row_bytes
  rows when    rows >= t.split_rows, or fewer than 2 chunks fit (one split block of vocabulary, or
               rows > t.split_items / 2), or the eager exception above
  -loop when   split items > t.max_programs, or rows > t.row_programs for whole rows

Warps of a whole-row launch: enough for 16 bytes per thread per step, at most `row_warps` (`few_row_warps`), so
a narrow row does not spread one small block over 512 threads.

Captured or not: a call recorded into a CUDA graph is replayed for device time only, so it gets the plan with the
least device time (the split); an eager call pays host launch cost plus device time, so short rows run whole.

Backends: CUDA sizes `split_rows`, `split_items` and `max_programs` from the SM count and launches whole rows on a
grid of `rows` programs (the 1-D grid's x axis takes up to 2^31 - 1, so batches past the 65,535 limit of axes 1
and 2 launch fine). triton-ascend (NPU) maps a grid onto physical vector cores, so there `max_programs` and
`row_programs` equal the vector-core count (every variant loops instead of queuing extra grid batches), blocks
stay small for the 192 KB unified buffer, and no atomics are used.
"""
from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import torch

INTERPRETER_CORES = 4  # small and fixed: the interpreter runs programs one after another
NPU_FALLBACK_CORES = 40  # vector cores of a 910B-class card when neither torch_npu nor the driver says
ROW_BYTES_PER_WARP = 32 * 16  # a whole-row step gives each of a warp's 32 threads at least one 16-byte load
CUDA_GRID_X = 2**31 - 1  # CUDA's limit on grid axis 0
PAIRED_MAX_STEPS = 0xFFFF  # a word-pair lane counts each half in 16 bits: at most this many loop steps per row
# CUDA, uncaptured: rows up to this size run whole (one program per row, one launch, no zeroed output). An eager
# step pays the larger of host and device time, and a split's memset is a second driver call: on an H200 a 1 MB
# fp32 row costs an eager call 12-16 µs whole (17.7 µs cold on device) against 16-22 µs split (6.2 µs on device);
# past that the whole row's device time outgrows the split's host cost (docs/bench.md, "What a decode step pays")
EAGER_ROW_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Tuning:
    """Per-device launch knobs; block sizes are in bytes, so every dtype loads the same bytes per step."""

    cores: int
    split_rows: int  # batches with fewer rows than this are split
    split_items: int  # a split aims at this many (row, chunk) items
    max_programs: int  # grid cap of a split; programs loop over the items beyond it
    row_programs: int  # grid cap of a whole-row launch; beyond it programs loop over rows (rows-loop)
    row_block_bytes: int
    row_warps: int
    split_block_bytes: int
    split_warps: int
    pdl: bool = False  # launch stage 2 as a programmatic dependent of stage 1 (CUDA sm_90+)
    atomics: bool = False  # a split in one launch: int32 atomic adds of partial counts into a zeroed output
    eager_row_bytes: int = 0  # an uncaptured call of <= cores rows of <= this many bytes runs whole rows (see below)
    few_row_block_bytes: int = 0  # whole rows when rows <= cores (a core each): bytes per step, 0 = row_block_bytes
    few_row_warps: int = 0  # ... and warps, 0 = row_warps
    paired_over_bytes: int | None = None  # <= cores whole 16-bit rows longer than this: two elements per int32
    # load (_count_rows_paired_kernel); None = never
    paired_warps: int = 0  # ... over these warps, 0 = the whole-row plan's

    def block(self, element_size: int, split: bool) -> int:
        """Elements per loop step for this dtype (a power of two)."""
        return max(16, (self.split_block_bytes if split else self.row_block_bytes) // element_size)


@dataclass(frozen=True)
class LaunchPlan:
    """One input's launch: items = rows * num_chunks, `grid` programs over them, `chunk` elements per item."""

    variant: str
    num_reqs: int
    vocab_size: int
    num_chunks: int
    chunk: int
    block: int
    grid: int
    num_warps: int
    pdl: bool = False
    atomics: bool = False  # split only: one launch adding into a zeroed output instead of two stages
    paired_warps: int = 0  # rows only: > 0 = 16-bit rows read two elements per int32 load over these warps where
    # every row is 4-byte aligned (else `_num_nans_kernel` at num_warps)

    @property
    def num_items(self) -> int:
        return self.num_reqs * self.num_chunks


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _next_power_of_2(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


@functools.lru_cache(maxsize=4096)  # a pure function of hashable arguments: decode loops repeat the same shapes
def plan_launch(num_reqs: int, vocab_size: int, element_size: int, tuning: Tuning, captured: bool = False
                ) -> LaunchPlan:
    """Choose the variant for a non-empty [num_reqs, vocab_size] input (see the module docstring); `captured`:
    the call is being recorded into a graph, whose replays pay device time only."""
    if num_reqs < 1 or vocab_size < 1:
        raise ValueError(f"plan_launch needs a non-empty input, got {num_reqs} x {vocab_size}")
    split_block = tuning.block(element_size, split=True)
    blocks = _cdiv(vocab_size, split_block)
    few_rows = num_reqs <= tuning.cores
    eager_rows = not captured and few_rows and vocab_size * element_size <= tuning.eager_row_bytes
    chunks = min(blocks, max(1, tuning.split_items // num_reqs)) if num_reqs < tuning.split_rows else 1
    if chunks >= 2 and not eager_rows:
        chunk = _cdiv(blocks, chunks) * split_block
        num_chunks = _cdiv(vocab_size, chunk)
        block, warps, variant = split_block, tuning.split_warps, "split"
    else:
        block_bytes, max_warps = tuning.row_block_bytes, tuning.row_warps
        if few_rows and tuning.few_row_block_bytes:
            block_bytes, max_warps = tuning.few_row_block_bytes, tuning.few_row_warps
        block = min(max(16, block_bytes // element_size), max(16, _next_power_of_2(vocab_size)))
        warps = max(1, min(max_warps, block * element_size // ROW_BYTES_PER_WARP))
        chunk, num_chunks, variant = _cdiv(vocab_size, block) * block, 1, "rows"
    items = num_reqs * num_chunks
    grid = min(items, tuning.max_programs if num_chunks > 1 else tuning.row_programs)
    if grid < items:
        variant += "-loop"
    atomics = tuning.atomics and num_chunks > 1
    paired = (tuning.paired_over_bytes is not None and variant == "rows" and few_rows and element_size == 2
              and vocab_size * element_size > tuning.paired_over_bytes
              and _cdiv(vocab_size // 2, block // 2) <= PAIRED_MAX_STEPS)
    return LaunchPlan(variant, num_reqs, vocab_size, num_chunks, chunk, block, grid, warps,
                      tuning.pdl and num_chunks > 1 and not atomics, atomics,
                      max(1, tuning.paired_warps or warps) if paired else 0)


def interpreting() -> bool:
    """True under TRITON_INTERPRET (the CPU backend)."""
    return os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def npu_vector_cores(index: int) -> int:
    """Vector cores of an Ascend card: triton-ascend's driver first, then torch_npu, else a documented fallback."""
    try:
        import triton

        cores = int(triton.runtime.driver.active.utils.get_device_properties(index).get("num_vectorcore", 0))
        if cores > 0:
            return cores
    except Exception:  # a driver without that property, or no NPU driver active
        pass
    try:
        cores = int(getattr(torch.npu.get_device_properties(index), "vector_core_num", 0))
        if cores > 0:
            return cores
    except Exception:
        pass
    return NPU_FALLBACK_CORES


def backend_kind(device: torch.device) -> str:
    """'interpreter', 'cuda' or 'npu': which tuning table applies."""
    if interpreting() or device.type not in ("cuda", "npu"):
        return "interpreter"
    return device.type


def _has_gdc() -> bool:
    """Triton exposes griddepcontrol (programmatic dependent launch) for NVIDIA."""
    try:
        from triton.language.extra.cuda import gdc_wait  # noqa: F401
    except ImportError:
        return False
    return True


@functools.lru_cache(maxsize=64)
def _card(kind: str, index: int) -> tuple[int, bool]:
    """(cores, programmatic dependent launch) of one card: device facts, queried once per card."""
    if kind == "cuda":
        props = torch.cuda.get_device_properties(index)
        return int(props.multi_processor_count), props.major >= 9 and _has_gdc()
    if kind == "npu":
        return npu_vector_cores(index), False
    return INTERPRETER_CORES, False


def _index(device: torch.device) -> int:
    if device.index is not None:
        return device.index
    return int(torch.cuda.current_device() if device.type == "cuda" else torch.npu.current_device())


def device_cores(device: torch.device) -> int:
    """Cores a grid should be sized to: SMs on CUDA, vector cores on NPU, a small constant in the interpreter."""
    kind = backend_kind(device)
    return _card(kind, 0 if kind == "interpreter" else _index(device))[0]


def tuning_for(device: torch.device, cores: int | None = None) -> Tuning:
    """The knobs for a backend; `cores` overrides the device query (and turns dependent launch off)."""
    kind = backend_kind(device)
    if cores is None:
        cores, pdl = _card(kind, 0 if kind == "interpreter" else _index(device))
    else:
        pdl = False
    return _tuning(kind, cores, pdl)


@functools.lru_cache(maxsize=64)
def _tuning(kind: str, n: int, pdl: bool) -> Tuning:
    """The tuning table; values from sweeps on an H200 (docs/bench.md)."""
    if kind == "interpreter":
        # small blocks and a 4-program cap, so the CPU suite runs every variant, loops included
        # word pairs for every few-row 16-bit whole-row plan, so the CPU suite runs that kernel too
        return Tuning(n, split_rows=2 * n, split_items=4 * n, max_programs=n, row_programs=n, row_block_bytes=4096,
                      row_warps=4, split_block_bytes=4096, split_warps=4, paired_over_bytes=0)
    if kind == "npu":
        # grid <= vector cores (extra programs queue in batches), modest blocks for the 192 KB unified buffer;
        # one wave, so a split pays only while 2+ chunks per row fit (rows <= cores / 2); no word pairs (unmeasured)
        return Tuning(n, split_rows=n, split_items=n, max_programs=n, row_programs=n, row_block_bytes=8192,
                      row_warps=4, split_block_bytes=8192, split_warps=4)
    # CUDA: a split gives up to 8 items per SM, one 16-byte load per thread per step, grid <= 8 programs per SM,
    # in one launch adding int32 partial counts into a zeroed output (exact and order-free; a second launch cost
    # a decode step 20-40 µs of host time on an H200, docs/bench.md "What a decode step pays"). Whole rows: one
    # program per row, 32 KB steps over 16 warps with a sum per step (the anchor's kernel at 2-4x its block and
    # warps: at 256-4096 rows on an H200 it beat the anchor in every dtype, and the per-lane accumulator in
    # bf16/fp16, tying it in fp32; docs/launch-sweep-h200.json). A few 16-bit rows past one 128 KB step: word
    # pairs over 16 warps, 256 bytes per thread per step (bf16 1x152064 cold: 8.9 µs against 11.0 for elements
    # over 32 warps; 32 warps or any in-kernel fold of the lanes' counts lost the gain; docs/bench.md)
    return Tuning(n, split_rows=n, split_items=8 * n, max_programs=8 * n, row_programs=CUDA_GRID_X,
                  row_block_bytes=32768, row_warps=16, split_block_bytes=4096, split_warps=8, pdl=pdl, atomics=True,
                  eager_row_bytes=EAGER_ROW_BYTES, few_row_block_bytes=131072, few_row_warps=32,
                  paired_over_bytes=131072, paired_warps=16)
