"""Every case of every family (cases/families, --nan-family) through both paths: wrapper and direct launch."""
from __future__ import annotations

import pytest

from cases.registry import FamilyCase
from harness.plugin import Checker


def test_case(family_case: FamilyCase, path: str, device: str, launch: Checker) -> None:
    """Build the case on the CPU, place it on the device as its family says, and compare bit-exactly."""
    family, case = family_case.family, family_case.case
    built = family.build(case)
    try:
        logits = built.on(device)
    except (RuntimeError, MemoryError) as exc:  # a device too small for a huge virtual allocation
        pytest.skip(f"{case}: cannot place the input on {device}: {exc}")
    launch(path, logits, built.expected, family.params(case), built.labels)
