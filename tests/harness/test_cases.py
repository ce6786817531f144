"""The case lists are the anchor's, and tensors are built deterministically from bits and seeds."""
from __future__ import annotations

import re

import pytest
import torch

from cases.anchor import MATRIX, SPECIALS
from cases.build import build_matrix, build_special
from cases.formats import FORMATS, from_bits, to_bits
from cases.ieee import anchor_special_bits

pytestmark = pytest.mark.nan_harness

ID_PATTERN = re.compile(r"^(fp32|bf16|fp16)-(prefix|scatter)-\d+x\d+-nan(0\.0|0\.1|0\.5|1\.0)$")


def test_matrix_is_the_anchors_120_cases() -> None:
    ids = [str(c) for c in MATRIX]
    assert len(ids) == 120 and len(set(ids)) == 120
    assert all(ID_PATTERN.match(i) for i in ids)
    assert "bf16-scatter-8x10000-nan0.5" in ids


def test_nans_per_row_truncates() -> None:
    case = next(c for c in MATRIX if str(c) == "fp32-prefix-2x5000-nan0.1")
    assert case.nans_per_row == 500
    x = build_matrix(case)
    assert torch.isnan(x).sum(-1).tolist() == [500, 500]


@pytest.mark.parametrize("case", [c for c in MATRIX if c.layout == "scatter" and c.frac == 0.5], ids=str)
def test_build_is_deterministic(case) -> None:  # type: ignore[no-untyped-def]
    a, b = build_matrix(case), build_matrix(case)
    assert torch.equal(to_bits(a), to_bits(b))
    assert (torch.isnan(a).sum(-1) == case.nans_per_row).all()


@pytest.mark.parametrize("name", list(FORMATS))
def test_from_bits_round_trips_every_pattern(name: str) -> None:
    fmt = FORMATS[name]
    bits = list(range(0, 1 << 16)) if fmt.width == 16 else [0, 1, 0x7F800001, 0xFFC00000, 0x80000000, 0xFFFFFFFF]
    assert to_bits(from_bits(bits, fmt)).tolist() == bits


@pytest.mark.parametrize("case", SPECIALS, ids=str)
def test_specials_keep_their_bits(case) -> None:  # type: ignore[no-untyped-def]
    from cases.formats import fmt_of

    x = build_special(case)
    row0 = to_bits(x[0]).tolist()
    assert row0[:8] == anchor_special_bits(fmt_of(case.dtype))
    assert int(torch.isnan(x[1]).sum()) == case.nans
