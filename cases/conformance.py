"""Case lists beyond the anchor: IEEE classes, exhaustive sweeps, edge shapes, padding, huge offsets."""
from __future__ import annotations

from cases.anchor import DTYPES
from cases.records import IeeeCase, MagnitudeCase, OffsetCase, PaddedCase, ShapeCase, SweepCase

BLOCK_SIZE = 8192  # the anchor's; edge vocab sizes sit around it

IEEE_CASES: tuple[IeeeCase, ...] = tuple(
    IeeeCase(dtype, arrangement, vocab)
    for dtype in DTYPES
    for arrangement, vocab in (("rows", 1000), ("mixed", 3 * BLOCK_SIZE + 77))
)

SWEEP_LAYOUTS: tuple[str, ...] = ("ordered", "shuffled", "straddle", "ragged")
SWEEP_CASES: tuple[SweepCase, ...] = tuple(
    SweepCase(dtype, layout) for dtype in ("fp16", "bf16") for layout in SWEEP_LAYOUTS
) + (SweepCase("fp32", "sample"),)

EDGE_VOCABS: tuple[int, ...] = (1, 2, BLOCK_SIZE - 1, BLOCK_SIZE, BLOCK_SIZE + 1, 2 * BLOCK_SIZE + 1)
SHAPE_CASES: tuple[ShapeCase, ...] = tuple(
    ShapeCase(dtype, rows, vocab) for dtype in DTYPES for rows in (1, 3) for vocab in EDGE_VOCABS
)

# Large batches: the interpreter spends ~2 ms per program, so the CPU gets a modest one; accelerators get
# more rows than CUDA allows in a grid's y/z dimension (65,535).
BATCH_ROWS: dict[str, int] = {"cpu": 257, "cuda": 70_001, "npu": 70_001}
BATCH_VOCAB = 33


def batch_cases(device: str) -> tuple[ShapeCase, ...]:
    """The large-batch cases for one backend; the rows are in the id, so each stays reproducible."""
    return tuple(ShapeCase(dtype, BATCH_ROWS[device], BATCH_VOCAB) for dtype in DTYPES)

MAGNITUDE_VOCAB = 70_001
MAGNITUDE_COUNTS: tuple[int, ...] = (
    0, 1, 2, 3, 127, 128, 255, 256, 257, 2047, 2048, 2049, 4097, 8193, 32767, 32768, 65535, 65536, 65537,
    MAGNITUDE_VOCAB - 1, MAGNITUDE_VOCAB,
)
MAGNITUDE_CASES: tuple[MagnitudeCase, ...] = tuple(
    MagnitudeCase(dtype, MAGNITUDE_VOCAB, MAGNITUDE_COUNTS) for dtype in DTYPES
)

PADDED_CASES: tuple[PaddedCase, ...] = tuple(
    PaddedCase(dtype, rows, vocab, stride)
    for dtype in DTYPES
    for rows, vocab, stride in ((5, 3000, 3077), (3, BLOCK_SIZE + 1, 2 * BLOCK_SIZE), (4, 100, 8192 * 3 + 5))
)

OFFSET_STRIDE = (1 << 30) + 4096  # row 2 starts at 2^31 + 8192 elements
OFFSET_CASES: tuple[OffsetCase, ...] = tuple(OffsetCase(dtype, 4096 + 3, OFFSET_STRIDE) for dtype in DTYPES)
