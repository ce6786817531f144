"""The default kernel package under test: same API as vllm-ascend's num_nans module."""
from __future__ import annotations

from kernel.num_nans import BLOCK_SIZE, SUPPORTED_DTYPES, _num_nans_kernel, get_num_nans
from kernel.predicate import NAN_PREDICATE_SOURCE

__all__ = ["BLOCK_SIZE", "NAN_PREDICATE_SOURCE", "SUPPORTED_DTYPES", "_num_nans_kernel", "get_num_nans"]
