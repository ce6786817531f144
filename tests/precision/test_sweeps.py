"""All 2^32 fp32 patterns on demand (the 16-bit sweeps and the fp32 sample are the `sweep` family)."""
from __future__ import annotations

import time

import pytest
import torch

from cases.formats import FP32, hex_bits
from harness import skips
from harness.fixtures import CheckCounts
from harness.target import PATHS, KernelUnderTest, run_path
from reference import bits_reference
from verdict.record import CaseParams

ROW = 1 << 16  # fp32 sweep: each row holds 2^16 consecutive patterns, so its count has a closed form
CHUNK_ROWS = 1 << 12  # 2^28 patterns (1 GiB of fp32) per launch


def fp32_row_counts(first_row: int, rows: int) -> torch.Tensor:
    """Closed form: a row's top 16 bits fix sign, exponent and 7 mantissa bits; all-ones exponent means NaNs."""
    high = torch.arange(first_row, first_row + rows, dtype=torch.int64)
    nan_exponent = ((high >> 7) & 0xFF) == 0xFF
    counts = torch.where((high & 0x7F) != 0, ROW, ROW - 1)  # mantissa top bits zero: the Inf pattern is no NaN
    return torch.where(nan_exponent, counts, 0).to(torch.int32)


def test_fp32_closed_form_matches_bits_reference() -> None:
    """The closed form agrees with the integer-view reference on the rows around every NaN boundary."""
    for first in (0x7F7F, 0x7F80, 0xFF80, 0xFFFE):
        rows = min(2, 0x10000 - first)
        bits = torch.arange(first * ROW, (first + rows) * ROW, dtype=torch.int64)
        x = torch.where(bits >= 1 << 31, bits - (1 << 32), bits).to(torch.int32).view(torch.float32).reshape(rows, ROW)
        assert torch.equal(bits_reference(x), fp32_row_counts(first, rows))
    assert int(fp32_row_counts(0, 1 << 16).sum()) == FP32.nan_count


@pytest.mark.nan_sweep
@pytest.mark.nan_fp32_full
@pytest.mark.parametrize("path", PATHS)
def test_fp32_full_sweep(path: str, device: str, target: KernelUnderTest, check_counts: CheckCounts,
                         request: pytest.FixtureRequest) -> None:
    if not request.config.getoption("--nan-fp32-full"):
        skips.skip(request.node, skips.fp32_full())
    if path == "direct" and target.kernel is None:
        skips.skip(request.node, skips.direct_path(target.kernel_skip_reason or "no _num_nans_kernel"))
    started = time.perf_counter()
    counts, effects = [], []
    for first in range(0, 1 << 16, CHUNK_ROWS):
        bits = torch.arange(first * ROW, (first + CHUNK_ROWS) * ROW, dtype=torch.int64, device=device)
        x = torch.where(bits >= 1 << 31, bits - (1 << 32), bits).to(torch.int32).view(torch.float32)
        del bits
        launch = run_path(target, path, x.reshape(CHUNK_ROWS, ROW))
        effects += launch.side_effects
        counts.append(launch.counts if isinstance(launch.counts, torch.Tensor) else torch.empty(0))
    got = torch.cat(counts) if all(c.device == counts[0].device for c in counts) else counts[0]
    expected = fp32_row_counts(0, 1 << 16)
    labels = [f"patterns {hex_bits(r * ROW, FP32)}..{hex_bits(r * ROW + ROW - 1, FP32)}" for r in range(1 << 16)]
    info = CaseParams("sweep", "fp32-sweep-full", "fp32", "full", (1 << 16, ROW), "full", None)
    check_counts(got, expected, info, path, row_labels=labels, side_effects=effects)
    print(f"fp32 full sweep ({path}): {1 << 32} patterns in {time.perf_counter() - started:.1f} s")
