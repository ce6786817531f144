"""The benchmarked inputs: decode, mid and large batches, a padded-stride case, three dtypes."""
from __future__ import annotations

from dataclasses import dataclass

import torch

DTYPES: dict[str, torch.dtype] = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
DECODE_ROWS = (1, 2, 4, 8, 16)
DECODE_VOCABS = (32000, 128256, 151936, 152064, 262144)
MID_ROWS = (64, 256)
LARGE = ((1024, 152064, 152064), (1024, 152064, 155648), (2048, 152064, 152064), (4096, 32000, 32000))
NAN_FRACTION = 0.01


@dataclass(frozen=True)
class Shape:
    """One benchmarked input: rows x vocab of dtype, rows `stride` elements apart (stride > vocab: padded)."""

    group: str
    dtype: str
    rows: int
    vocab: int
    stride: int

    @property
    def key(self) -> str:
        pad = f"-stride{self.stride}" if self.stride != self.vocab else ""
        return f"{self.dtype}-{self.rows}x{self.vocab}{pad}"

    @property
    def bytes(self) -> int:
        """Bytes a single read of the logical elements moves (padding is never read)."""
        return self.rows * self.vocab * DTYPES[self.dtype].itemsize


def full_shapes() -> list[Shape]:
    """Every shape of the issue: decode (<= 16 rows), mid (64, 256 rows), large (1024-4096 rows, padded)."""
    shapes: list[Shape] = []
    for dtype in DTYPES:
        shapes += [Shape("decode", dtype, r, v, v) for r in DECODE_ROWS for v in DECODE_VOCABS]
        shapes += [Shape("mid", dtype, r, 152064, 152064) for r in MID_ROWS]
        shapes += [Shape("large", dtype, r, v, s) for r, v, s in LARGE]
    return shapes


def quick_shapes() -> list[Shape]:
    """A handful that covers each group and launch variant, for a run under a minute."""
    pick = [
        ("decode", "fp32", 1, 152064, 152064), ("decode", "fp32", 4, 152064, 152064),
        ("decode", "fp32", 16, 262144, 262144), ("decode", "bf16", 1, 152064, 152064),
        ("decode", "fp16", 8, 128256, 128256), ("mid", "fp32", 256, 152064, 152064),
        ("large", "fp32", 1024, 152064, 152064), ("large", "fp32", 1024, 152064, 155648),
        ("large", "bf16", 1024, 152064, 152064), ("large", "fp32", 4096, 32000, 32000),
    ]
    return [Shape(*p) for p in pick]


def interpreter_shapes() -> list[Shape]:
    """Tiny shapes for the CPU smoke run: one per group, padded included (timings there mean nothing)."""
    return [
        Shape("decode", "fp32", 1, 3000, 3000), Shape("decode", "bf16", 2, 2049, 2049),
        Shape("mid", "fp16", 9, 700, 700), Shape("large", "fp32", 12, 500, 512),
    ]


def build(shape: Shape, device: str, seed: int = 0) -> torch.Tensor:
    """Random normal logits with about 1% NaNs scattered, built on the device; NaN padding between rows."""
    gen = torch.Generator(device=device).manual_seed(seed)
    storage = torch.randn(shape.rows, shape.stride, generator=gen, device=device, dtype=torch.float32)
    storage[torch.rand(shape.rows, shape.stride, generator=gen, device=device) < NAN_FRACTION] = float("nan")
    storage[:, shape.vocab :] = float("nan")  # a kernel that reads the padding counts it and fails verification
    return storage.to(DTYPES[shape.dtype])[:, : shape.vocab]
