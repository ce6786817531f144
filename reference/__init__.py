"""Reference counts computed on the CPU; `expected_counts` is the one switch the suite uses."""
from __future__ import annotations

from reference.counts import REFERENCES, bits_reference, torch_reference

expected_counts = torch_reference

__all__ = ["REFERENCES", "bits_reference", "expected_counts", "torch_reference"]
