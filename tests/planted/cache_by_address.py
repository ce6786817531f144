"""Counts cached by address: the wrapper keeps the result per `(data_ptr(), shape, dtype)` and skips the launch
when it sees the same tensor again.

Models a port that memoises "the same logits" across the sampler and the rejection sampler within one step,
keyed on the address: vLLM refills one persistent logits buffer in place every step, so every step after the
first gets the first step's counts (and the same output tensor).
"""
import torch

from kernel.num_nans import _num_nans_kernel
from tests.planted._wrapper import make_get_num_nans

_count = make_get_num_nans()
_CACHE: dict[tuple, torch.Tensor] = {}


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    key = (logits.data_ptr(), tuple(logits.shape), tuple(logits.stride()), logits.dtype, str(logits.device))
    if key not in _CACHE:  # BUG: the address says nothing about the contents
        _CACHE[key] = _count(logits)
    return _CACHE[key]


__all__ = ["_num_nans_kernel", "get_num_nans"]
