"""Both CPU references agree on every case, so a kernel failure is never a reference artefact."""
from __future__ import annotations

import pytest
import torch

from cases.anchor import MATRIX, SPECIALS
from cases.build import build_matrix, build_special
from cases.formats import FORMATS, from_bits
from reference import bits_reference, torch_reference

pytestmark = pytest.mark.nan_reference


@pytest.mark.parametrize("case", MATRIX + SPECIALS, ids=str)
def test_references_agree(case) -> None:  # type: ignore[no-untyped-def]
    x = build_special(case) if "special" in str(case) else build_matrix(case)
    assert torch.equal(torch_reference(x), bits_reference(x)), f"references disagree on {case}"


@pytest.mark.parametrize("name", ["bf16", "fp16"])
def test_references_agree_on_every_16_bit_pattern(name: str) -> None:
    fmt = FORMATS[name]
    x = from_bits(torch.arange(1 << 16), fmt).reshape(256, 256)
    assert torch.equal(torch_reference(x), bits_reference(x))
    assert int(bits_reference(x).sum()) == fmt.nan_count


def _conformance_tensors():  # type: ignore[no-untyped-def]
    """Every conformance case's tensor (CPU), with its id."""
    from cases import build_conformance as b
    from cases import conformance as c

    for case in c.IEEE_CASES:
        yield str(case), b.build_ieee(case)[0]
    for case in c.SWEEP_CASES:
        yield str(case), b.build_sweep(case)[0]
    for case in c.SHAPE_CASES + c.batch_cases("cpu"):
        yield str(case), b.build_shape(case)
    for case in c.MAGNITUDE_CASES:
        yield str(case), b.build_magnitudes(case)
    for case in c.PADDED_CASES:
        yield str(case), b.build_padded(case)  # the whole storage: padding NaNs included
    for case in c.OFFSET_CASES:
        yield str(case), b.build_offset_rows(case)


def test_references_agree_on_every_conformance_case() -> None:
    for case_id, x in _conformance_tensors():
        assert torch.equal(torch_reference(x), bits_reference(x)), f"references disagree on {case_id}"
