"""Reference counts computed on the CPU; `expected_counts` is the one switch the suite uses.

The suite's expected counts come from raw bits read through `reference.sealed` (bound before any kernel module is
imported): nothing the module under test or a --kernel-setup patches in torch can change them.
"""
from __future__ import annotations

from reference.counts import REFERENCES, bits_reference, torch_reference

expected_counts = bits_reference

__all__ = ["REFERENCES", "bits_reference", "expected_counts", "torch_reference"]
