"""Cases for the per-request NaN aggregation: frozen records whose str() is the pytest id, and a builder that makes
their tensors from the record alone (a private generator, explicit dtypes and device, no global torch state)."""
from __future__ import annotations

from dataclasses import dataclass

import torch

AGGREGATE_SEED = 42  # the anchor's seed, as every random case here
INT32_MAX = (1 << 31) - 1
MAX_ROW_COUNT = 262_144  # a large vocabulary: no row can hold more NaNs than that

AGGREGATE_LAYOUTS: dict[str, str] = {
    "ragged": "1..max_rows rows per request, random",
    "empty": "some requests own no rows (first, last, two in a row), so their end repeats the previous one",
    "single": "one request owning every row",
    "summed": "every request owns max_rows rows (1 target + drafts), counts summed across them",
    "int32": "request totals of exactly 2^31 - 1 from one or several rows; running totals pass 2^31",
    "none": "no requests and no rows",
}
_ENDS_DTYPES: dict[str, torch.dtype] = {"int32": torch.int32, "int64": torch.int64}


@dataclass(frozen=True)
class AggregateCase:
    """One aggregation input: `aggregate-<layout>-<requests>req-<max_rows>rows-ends_<dtype>`."""

    layout: str
    requests: int
    max_rows: int
    ends_dtype: str = "int32"
    seed: int = AGGREGATE_SEED

    def __str__(self) -> str:
        return f"aggregate-{self.layout}-{self.requests}req-{self.max_rows}rows-ends_{self.ends_dtype}"


@dataclass(frozen=True)
class AggregateInputs:
    """What aggregate_num_nans_per_request takes: per-row int32 counts and each request's cumulative row end."""

    num_nans: torch.Tensor
    cumulative_row_ends: torch.Tensor


def _rows_per_request(case: AggregateCase, gen: torch.Generator) -> list[int]:
    """How many logits rows each request owns, by layout."""
    if case.layout == "ragged":
        return torch.randint(1, case.max_rows + 1, (case.requests,), generator=gen).tolist()
    if case.layout == "empty":
        if case.requests < 5:
            raise ValueError(f"{case}: the empty layout needs at least 5 requests")
        rows = torch.randint(1, case.max_rows + 1, (case.requests,), generator=gen).tolist()
        middle = case.requests // 2
        for index in (0, middle, middle + 1, case.requests - 1):
            rows[index] = 0
        return rows
    if case.layout == "single":
        if case.requests != 1:
            raise ValueError(f"{case}: the single layout has exactly one request")
        return [case.max_rows]
    if case.layout == "summed":
        return [case.max_rows] * case.requests
    if case.layout == "none":
        if case.requests != 0:
            raise ValueError(f"{case}: the none layout has no requests")
        return []
    raise ValueError(f"unknown aggregate layout {case.layout!r}")


def _int32_limit_rows() -> list[list[int]]:
    """Per-request row counts whose totals hit 2^31 - 1 exactly; an fp32 or int16 accumulator cannot hold them."""
    half = 1 << 30
    return [
        [half, half - 1],  # two rows to the limit
        [INT32_MAX],  # one row at the limit (running total now 2^32 - 2)
        [0, INT32_MAX, 0],  # the limit among zero rows
        [1] * 3,  # a small total after the running total wrapped an int32 twice
        [half - 1, 1, half - 1, 0, 0],  # five rows to 2^31 - 1
    ]


def build_aggregate(case: AggregateCase, device: str | torch.device = "cpu") -> AggregateInputs:
    """The case's tensors on `device`: int32 counts, ends in the case's dtype (ends[-1] == number of rows)."""
    gen = torch.Generator().manual_seed(case.seed)
    if case.layout == "int32":
        per_request = _int32_limit_rows()
        if case.requests != len(per_request):
            raise ValueError(f"{case}: the int32 layout has {len(per_request)} requests")
        rows = [len(r) for r in per_request]
        counts = torch.tensor([c for r in per_request for c in r], dtype=torch.int32)
    else:
        rows = _rows_per_request(case, gen)
        counts = torch.randint(0, MAX_ROW_COUNT + 1, (sum(rows),), generator=gen, dtype=torch.int32)
    ends = torch.tensor(rows, dtype=torch.int64).cumsum(0).to(_ENDS_DTYPES[case.ends_dtype])
    return AggregateInputs(counts.to(device), ends.to(device))


AGGREGATE_CASES: tuple[AggregateCase, ...] = (
    AggregateCase("ragged", 7, 5),
    AggregateCase("ragged", 7, 5, ends_dtype="int64"),
    AggregateCase("ragged", 300, 8),  # more requests than a 32-wide block
    AggregateCase("empty", 9, 4),
    AggregateCase("single", 1, 1),
    AggregateCase("single", 1, 77),  # more rows than a 32-wide block in one request
    AggregateCase("summed", 16, 4),
    AggregateCase("int32", 5, 5),
    AggregateCase("none", 0, 0),
)
