"""The case lists are the anchor's, tensors are built deterministically from bits and seeds, whatever torch's
global state, and every family describes itself fully."""
from __future__ import annotations

import re

import pytest
import torch

from cases import registry
from cases.family import Context
from cases.families.matrix import MATRIX, build as build_matrix
from cases.families.special import SpecialCase, build as build_special
from cases.formats import FORMATS, from_bits, to_bits
from cases.ieee import anchor_special_bits

pytestmark = pytest.mark.nan_harness
ID_PATTERN = re.compile(r"^(fp32|bf16|fp16)-(prefix|scatter)-\d+x\d+-nan(0\.0|0\.1|0\.5|1\.0)$")
FAMILIES = registry.load()


def test_matrix_is_the_anchors_120_cases() -> None:
    ids = [str(c) for c in MATRIX]
    assert len(ids) == 120 and len(set(ids)) == 120
    assert all(ID_PATTERN.match(i) for i in ids)
    assert "bf16-scatter-8x10000-nan0.5" in ids


def test_nans_per_row_truncates() -> None:
    case = next(c for c in MATRIX if str(c) == "fp32-prefix-2x5000-nan0.1")
    assert case.nans_per_row == 500
    assert torch.isnan(build_matrix(case).logits).sum(-1).tolist() == [500, 500]


@pytest.mark.parametrize("case", [c for c in MATRIX if c.layout == "scatter" and c.frac == 0.5], ids=str)
def test_build_is_deterministic(case) -> None:  # type: ignore[no-untyped-def]
    a, b = build_matrix(case).logits, build_matrix(case).logits
    assert torch.equal(to_bits(a), to_bits(b))
    assert (torch.isnan(a).sum(-1) == case.nans_per_row).all()


@pytest.mark.parametrize("name", ["fp32", "bf16", "fp16"])
def test_from_bits_round_trips_every_pattern(name: str) -> None:
    fmt = FORMATS[name]
    bits = list(range(0, 1 << 16)) if fmt.width == 16 else [0, 1, 0x7F800001, 0xFFC00000, 0x80000000, 0xFFFFFFFF]
    assert to_bits(from_bits(bits, fmt)).tolist() == bits


@pytest.mark.parametrize("dtype", ["fp32", "bf16", "fp16"])
def test_specials_keep_their_bits(dtype: str) -> None:
    from cases.formats import fmt_of

    case = SpecialCase(dtype)
    x = build_special(case).logits
    assert to_bits(x[0]).tolist()[:8] == anchor_special_bits(fmt_of(dtype))
    assert int(torch.isnan(x[1]).sum()) == case.nans


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_family_cases_are_rebuilt_from_their_id_alone(family) -> None:  # type: ignore[no-untyped-def]
    """A module under test may change torch's default dtype, seed or device: case data must not move."""
    cases = [c for c in family.cases(Context()) if family.name != "bigoffset"][:3]
    if not cases:
        pytest.skip("no cheap cases")
    clean = [to_bits(family.build(c).logits) for c in cases]
    saved = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        torch.manual_seed(1234)
        torch.rand(7)
        changed = [to_bits(family.build(c).logits) for c in cases]
    finally:
        torch.set_default_dtype(saved)
    for case, a, b in zip(cases, clean, changed):
        assert torch.equal(a, b), f"{case}: data depends on torch's global state"


def test_every_family_is_complete() -> None:
    """Each family names its marker and description, gives unique ids, and params that name the family."""
    assert {f.name for f in FAMILIES} >= {"matrix", "special", "ieee", "sweep", "shapes", "magnitudes", "padded",
                                          "bigoffset"}
    expanded = registry.expand(FAMILIES, Context())
    for fc in expanded:
        params = fc.family.params(fc.case)
        assert params.family == fc.family.name and params.case_id == str(fc.case)
        assert fc.family.marker.startswith("nan_") and fc.family.description


def test_duplicate_case_ids_are_refused() -> None:
    matrix = next(f for f in FAMILIES if f.name == "matrix")
    with pytest.raises(registry.FamilyError, match="also one of"):
        registry.expand([matrix, matrix], Context())
