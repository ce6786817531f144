"""Hostile layouts: edge shapes, every count magnitude, NaN-padded rows, row offsets past 2^31 elements."""
from __future__ import annotations

import pytest
import torch

from cases.build_conformance import build_magnitudes, build_offset_rows, build_padded, build_shape, place_offset_rows
from cases.conformance import MAGNITUDE_CASES, OFFSET_CASES, PADDED_CASES, SHAPE_CASES, batch_cases
from cases.formats import to_bits
from cases.records import MagnitudeCase, OffsetCase, PaddedCase, ShapeCase
from harness.plugin import CaseInfo
from harness.target import PATHS
from reference import bits_reference, expected_counts

pytestmark = pytest.mark.nan_layout


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", SHAPE_CASES, ids=str)
def test_edge_shapes(case: ShapeCase, path: str, device: str, run_case) -> None:  # type: ignore[no-untyped-def]
    host = build_shape(case)
    info = CaseInfo(str(case), "layout", case.dtype, "shape", (case.rows, case.vocab), "0.25", path, case.seed)
    run_case(path, host.to(device), expected_counts(host), info)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("index", range(3), ids=["fp32-batch", "bf16-batch", "fp16-batch"])
def test_large_batch(index: int, path: str, device: str, run_case) -> None:  # type: ignore[no-untyped-def]
    """Many rows (more than a CUDA grid's y/z limit on accelerators): every program writes its own row."""
    test_edge_shapes(batch_cases(device)[index], path, device, run_case)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", MAGNITUDE_CASES, ids=str)
def test_count_magnitudes(case: MagnitudeCase, path: str, device: str, run_case) -> None:  # type: ignore[no-untyped-def]
    host = build_magnitudes(case)
    expected = expected_counts(host)
    assert expected.tolist() == list(case.counts), "magnitude rows were built wrong"
    labels = [f"{n} NaNs in {case.vocab}" for n in case.counts]
    info = CaseInfo(str(case), "layout", case.dtype, "magnitudes", tuple(host.shape), "counts", path, case.seed)
    run_case(path, host.to(device), expected, info, row_labels=labels)


@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", PADDED_CASES, ids=str)
def test_nan_padded_rows(case: PaddedCase, path: str, device: str, run_case) -> None:  # type: ignore[no-untyped-def]
    """The row stride exceeds vocab and the padding is all NaN: counting it, or copying, is a bug."""
    storage_host = build_padded(case)
    storage = storage_host.to(device)
    view = storage[:, : case.vocab]
    assert view.stride(0) == case.stride
    info = CaseInfo(str(case), "layout", case.dtype, "padded", (case.rows, case.vocab), "0.2", path, case.seed)
    run_case(path, view, bits_reference(storage_host[:, : case.vocab]), info)
    assert torch.equal(to_bits(storage), to_bits(storage_host)), "the padding between rows was modified"


@pytest.mark.nan_bigoffset
@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("case", OFFSET_CASES, ids=str)
def test_row_offsets_past_2_31(case: OffsetCase, path: str, device: str, run_case) -> None:  # type: ignore[no-untyped-def]
    """Row 2 starts past 2^31 elements; an int32 row offset wraps and reads (or faults) elsewhere."""
    rows = build_offset_rows(case)
    try:
        view = place_offset_rows(rows, case.stride, device)
    except (RuntimeError, MemoryError) as exc:  # a device too small for ~2^31 elements
        pytest.skip(f"cannot allocate {2 * case.stride + case.vocab} elements on {device}: {exc}")
    info = CaseInfo(str(case), "layout", case.dtype, "bigoffset", (3, case.vocab), "offset", path, case.seed)
    run_case(path, view, expected_counts(rows), info)
