"""Views that start at a storage offset, aligned and not: a wrapper or kernel that ignores `storage_offset()` fails.

The logical rows are a view into one larger allocation starting at element 1, 3 or 7 (not 16-byte aligned in any
dtype: Triton specializes pointers on 16-byte alignment on GPUs), 8 (16-byte aligned in every dtype) or 4096,
with contiguous rows or a padded row stride. Everything around the rows (before the offset, between rows, after
the last) holds NaN patterns and must survive: `Built.input_on` places the same view on a copy of the whole storage, and
the harness compares the whole storage before and after each call. The last few values of every row are finite,
so a read shifted back to the allocation's start gains NaNs in row 0 whatever the offset.
"""
from __future__ import annotations

from dataclasses import dataclass

from cases.anchor import ANCHOR_BLOCK_SIZE, ANCHOR_SEED, DTYPES
from cases.family import Built, Context, Family, params_of
from cases.formats import fmt_of, from_bits
from cases.random_bits import generator, randn_with_nans, random_nan_bits
from reference import bits_reference
from verdict.record import CaseParams

OFFSETS: tuple[int, ...] = (1, 3, 7, 8, 4096)
TAIL = 64  # NaN patterns after the last row's padding
FINITE_END = 8  # finite values closing every row (> the largest unaligned offset)
ALIGNMENT = 16  # bytes: what Triton specializes pointer arguments on

# (rows, vocab, stride) for every offset, plus a multi-block padded row at one unaligned offset
GEOMETRIES: tuple[tuple[int, int, int], ...] = ((5, 3000, 3000), (5, 3000, 3007))
MULTI_BLOCK: tuple[tuple[int, tuple[int, int, int]], ...] = ((3, (2, ANCHOR_BLOCK_SIZE + 1, ANCHOR_BLOCK_SIZE + 8)),)


@dataclass(frozen=True)
class OffsetCase:
    """`rows` x `vocab` at row stride `stride`, starting `offset` elements into a larger allocation."""

    dtype: str
    offset: int
    rows: int
    vocab: int
    stride: int
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-offset{self.offset}-{self.rows}x{self.vocab}-stride{self.stride}"

    @property
    def storage_elements(self) -> int:
        return self.offset + self.rows * self.stride + TAIL


def aligned(element: int, element_size: int) -> bool:
    """Whether an element index of a fresh allocation (itself aligned far beyond 16 bytes) is 16-byte aligned."""
    return element * element_size % ALIGNMENT == 0


def build(case: OffsetCase) -> Built:
    """NaN patterns over the whole allocation, then the logical rows written through the offset view."""
    fmt = fmt_of(case.dtype)
    gen = generator(case.seed)
    storage = from_bits(random_nan_bits(case.storage_elements, fmt, gen), fmt)
    view = storage.as_strided((case.rows, case.vocab), (case.stride, 1), case.offset)
    values = randn_with_nans(case.rows, case.vocab, fmt, gen, 0.2)
    values[:, -FINITE_END:] = 1.0
    view.copy_(values)
    size = storage.element_size()
    labels = []
    for r in range(case.rows):
        start = case.offset + r * case.stride
        labels.append(f"row starts at element {start} (byte {start * size}, "
                      f"{'' if aligned(start, size) else 'not '}{ALIGNMENT}-byte aligned)")
    return Built(view, bits_reference(view), labels, storage=storage)


def params(case: OffsetCase) -> CaseParams:
    return params_of(case, (case.rows, case.vocab), f"offset{case.offset}", layout="offset")


def cases(context: Context) -> tuple[OffsetCase, ...]:
    out = [OffsetCase(d, off, r, v, s) for d in DTYPES for off in OFFSETS for r, v, s in GEOMETRIES]
    out += [OffsetCase(d, off, r, v, s) for d in DTYPES for off, (r, v, s) in MULTI_BLOCK]
    return tuple(out)


FAMILY = Family(
    "offset", "nan_offset", "views starting at a storage offset, 16-byte aligned and not, contiguous and padded",
    cases, build, params, extra_markers=("nan_layout",), order=75,
)
