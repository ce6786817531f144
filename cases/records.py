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
