"""Output buffer reused across calls: the wrapper caches one buffer per (num_reqs, device) and returns it.

Models a port that avoids an allocation per step (as CUDA-graph-friendly code does) but hands the cached
buffer itself to the caller, so the next call overwrites the counts the caller still holds.
"""
import torch

from kernel.num_nans import _num_nans_kernel
from tests.planted._wrapper import make_get_num_nans

_BUFFERS: dict[tuple[int, str], torch.Tensor] = {}


def _cached(num_reqs: int, device: torch.device) -> torch.Tensor:
    key = (num_reqs, str(device))
    if key not in _BUFFERS:
        _BUFFERS[key] = torch.empty(num_reqs, dtype=torch.int32, device=device)
    return _BUFFERS[key]  # BUG: the same tensor every call


get_num_nans = make_get_num_nans(alloc=_cached)

__all__ = ["_num_nans_kernel", "get_num_nans"]
