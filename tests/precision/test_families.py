"""Every case of every family (cases/families, --nan-family) through both paths: wrapper and direct launch."""
from __future__ import annotations

import pytest

from cases.family import Built
from cases.registry import FamilyCase
from harness import backends, skips
from harness.fixtures import CASE_BUILDER, LaunchAndCheck

_LAST_BUILT: dict[tuple[str, str], Built] = {}  # the case just built: its other path usually runs next, here


def _built(family_case: FamilyCase) -> Built:
    """family.build(case), kept for the case's next path in this worker (the kernel only ever gets a copy: on())."""
    key = (family_case.family.name, str(family_case.case))
    if key not in _LAST_BUILT:
        _LAST_BUILT.clear()  # before building: one case's storage in memory at a time
        _LAST_BUILT[key] = family_case.family.build(family_case.case)
    return _LAST_BUILT[key]


def test_case(family_case: FamilyCase, path: str, device: str, launch: LaunchAndCheck,
              request: pytest.FixtureRequest) -> None:
    """Build the case on the CPU, place it on the device as its family says, and compare bit-exactly."""
    family, case = family_case.family, family_case.case
    built = request.config.stash.get(CASE_BUILDER, _built)(family_case)
    try:
        logits = built.input_on(device)
    except (RuntimeError, MemoryError) as exc:  # a device too small for a huge virtual allocation
        if not backends.is_memory_error(exc):
            raise  # a device left faulted by an earlier launch is an error, never a skipped case
        skips.skip(request.node, skips.too_large(device))
    launch(path, logits, built.expected, family.params(case), built.labels)
