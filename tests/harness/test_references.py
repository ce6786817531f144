"""Both CPU references agree on every case of every family, so a kernel failure is never a reference artefact."""
from __future__ import annotations

import pytest
import torch

from cases import registry
from cases.family import Context
from cases.formats import FORMATS, from_bits
from reference import bits_reference, torch_reference

pytestmark = pytest.mark.nan_reference


@pytest.mark.parametrize("fc", registry.expand(registry.load(), Context()), ids=str)
def test_references_agree(fc: registry.FamilyCase) -> None:
    built = fc.family.build(fc.case)
    tensors = [built.logits] + ([built.storage] if built.storage is not None else [])  # padding NaNs included
    for x in tensors:
        assert torch.equal(torch_reference(x), bits_reference(x)), f"references disagree on {fc}"
    assert torch.equal(built.expected, bits_reference(built.logits)), f"{fc}: expected is not the reference"


@pytest.mark.parametrize("name", ["bf16", "fp16"])
def test_references_agree_on_every_16_bit_pattern(name: str) -> None:
    fmt = FORMATS[name]
    x = from_bits(torch.arange(1 << 16), fmt).reshape(256, 256)
    assert torch.equal(torch_reference(x), bits_reference(x))
    assert int(bits_reference(x).sum()) == fmt.nan_count
