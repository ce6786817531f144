"""Case records: plain frozen values whose str() is the pytest id; no tensors live here."""
from __future__ import annotations

from dataclasses import dataclass

ANCHOR_SEED = 42


@dataclass(frozen=True)
class MatrixCase:
    """One cell of the anchor's 120-case matrix: `<dtype>-<layout>-<R>x<V>-nan<frac>`."""

    dtype: str
    layout: str
    rows: int
    vocab: int
    frac: float
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-{self.layout}-{self.rows}x{self.vocab}-nan{self.frac}"

    @property
    def nans_per_row(self) -> int:
        """The anchor truncates: int(V * frac) NaNs in every row."""
        return int(self.vocab * self.frac)


@dataclass(frozen=True)
class SpecialCase:
    """The anchor's special values for one dtype: 2 x 1024, row 1 also holds `nans` NaNs."""

    dtype: str
    rows: int = 2
    vocab: int = 1024
    nans: int = 37
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-special-{self.rows}x{self.vocab}"


@dataclass(frozen=True)
class IeeeCase:
    """IEEE classes of one dtype: `rows` = one class and sign per row, `mixed` = classes scattered together."""

    dtype: str
    arrangement: str
    vocab: int
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-ieee-{self.arrangement}"


@dataclass(frozen=True)
class SweepCase:
    """Every bit pattern of a 16-bit dtype (or a deterministic fp32 sample) in one layout."""

    dtype: str
    layout: str
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-sweep-{self.layout}"


@dataclass(frozen=True)
class ShapeCase:
    """Edge shapes: vocab sizes around BLOCK_SIZE, tiny and large batches; NaNs at random spots."""

    dtype: str
    rows: int
    vocab: int
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-shape-{self.rows}x{self.vocab}"


@dataclass(frozen=True)
class MagnitudeCase:
    """One row per target count (0, 1, ... 2049 ... 65537 ... V): catches narrow or float accumulators."""

    dtype: str
    vocab: int
    counts: tuple[int, ...]
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-magnitudes-{len(self.counts)}x{self.vocab}"


@dataclass(frozen=True)
class PaddedCase:
    """Rows padded to `stride` elements whose padding is all NaN; only the vocab part may be counted."""

    dtype: str
    rows: int
    vocab: int
    stride: int
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-padded-{self.rows}x{self.vocab}-stride{self.stride}"


@dataclass(frozen=True)
class OffsetCase:
    """A 3-row view whose row stride pushes row 2 past 2^31 elements: int32 offsets fault here."""

    dtype: str
    vocab: int
    stride: int
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-bigoffset-3x{self.vocab}-stride{self.stride}"
