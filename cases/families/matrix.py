"""The anchor's 120-case matrix: dtype x layout x shape x NaN fraction, built exactly as the anchor builds it."""
from __future__ import annotations

import functools
import itertools
from dataclasses import dataclass, replace

import torch

from cases.anchor import ANCHOR_SEED, DTYPES, LAYOUTS, NAN_FRACS, SHAPES
from cases.family import Built, Context, Family, Grid, params_of
from cases.formats import fmt_of, to_bits
from cases.ieee import value_class
from cases.random_bits import generator, randn, randperm
from reference import expected_counts, sealed
from verdict.record import CaseParams, ValueClass


@dataclass(frozen=True)
class MatrixCase:
    """One cell: `<dtype>-<layout>-<R>x<V>-nan<frac>`."""

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


MATRIX: tuple[MatrixCase, ...] = tuple(
    MatrixCase(dtype, layout, rows, vocab, frac)
    for dtype, layout, (rows, vocab), frac in itertools.product(DTYPES, LAYOUTS, SHAPES, NAN_FRACS)
)


def build(case: MatrixCase) -> Built:
    """As the anchor: randn in fp32 on the CPU, NaNs injected per layout, cast; the reference sees the cast."""
    x = randn(case.rows, case.vocab, generator(case.seed))
    n = case.nans_per_row
    if n and case.layout == "prefix":
        x[:, :n] = float("nan")
    elif n and case.layout == "scatter":
        perm_gen = generator(case.seed)
        for r in range(case.rows):
            x[r, randperm(case.vocab, perm_gen)[:n]] = float("nan")
    elif n:
        raise ValueError(f"unknown layout {case.layout!r}")
    host = x.to(fmt_of(case.dtype).dtype)
    expected = expected_counts(host)
    if sealed.int_list(expected) != [n] * case.rows:  # what the construction placed, known without torch
        raise AssertionError(f"{case}: the reference counts {sealed.int_list(expected)}, the case placed {n} per row")
    return Built(host, expected)


@functools.cache
def _cast_nans(dtype: str, rows: int, vocab: int) -> tuple[ValueClass, ...]:
    """What float('nan') becomes in the case's dtype, cast as build casts it (fp32 of the case's shape; x86 makes
    bf16 NaNs negative): the patterns every NaN of the case is, for a diagnosis that asks which NaNs it missed.
    Cached per dtype and shape: the 4 fractions and 2 layouts of a shape cast the same NaN tensor."""
    fmt = fmt_of(dtype)
    cast = torch.full((rows, vocab), float("nan")).to(fmt.dtype)
    return tuple(value_class(int(bits), fmt) for bits in torch.unique(to_bits(cast)).tolist())


def params(case: MatrixCase) -> CaseParams:
    made = params_of(case, (case.rows, case.vocab), f"{case.frac}")
    return replace(made, nan_patterns=_cast_nans(case.dtype, case.rows, case.vocab)) if case.nans_per_row else made


def cases(context: Context) -> tuple[MatrixCase, ...]:
    return MATRIX


FAMILY = Family(
    "matrix", "nan_matrix", "the anchor's 120-case dtype x layout x shape x NaN-fraction matrix",
    cases, build, params, summary=Grid(rows=("dtype", "layout"), cols=("shape", "detail")), order=10,
)
