"""The anchor test's parameter lists and their 120-case cross product, exactly as vllm-ascend runs it."""
from __future__ import annotations

import itertools

from cases.records import MatrixCase, SpecialCase

DTYPES: tuple[str, ...] = ("fp32", "bf16", "fp16")
LAYOUTS: tuple[str, ...] = ("prefix", "scatter")
SHAPES: tuple[tuple[int, int], ...] = ((1, 128), (2, 5000), (4, 8192), (8, 10000), (2, 16384))
NAN_FRACS: tuple[float, ...] = (0.0, 0.1, 0.5, 1.0)

MATRIX: tuple[MatrixCase, ...] = tuple(
    MatrixCase(dtype, layout, rows, vocab, frac)
    for dtype, layout, (rows, vocab), frac in itertools.product(DTYPES, LAYOUTS, SHAPES, NAN_FRACS)
)

SPECIALS: tuple[SpecialCase, ...] = tuple(SpecialCase(dtype) for dtype in DTYPES)
