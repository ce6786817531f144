"""The anchor test's constants and parameter lists, exactly as vllm-ascend's nightly runs them."""
from __future__ import annotations

ANCHOR_SEED = 42
ANCHOR_BLOCK_SIZE = 8192  # the anchor wrapper's BLOCK_SIZE; the direct launch uses it and edge vocabs sit around it
DTYPES: tuple[str, ...] = ("fp32", "bf16", "fp16")
LAYOUTS: tuple[str, ...] = ("prefix", "scatter")
SHAPES: tuple[tuple[int, int], ...] = ((1, 128), (2, 5000), (4, 8192), (8, 10000), (2, 16384))
NAN_FRACS: tuple[float, ...] = (0.0, 0.1, 0.5, 1.0)
