"""Wrong output dtype: the wrapper allocates int64 counts (torch's `.sum()` dtype) instead of int32.

Models a port that allocates the output "like torch.isnan(x).sum(-1)" for its fallback; the values are right.
"""
import torch

from kernel.num_nans import _num_nans_kernel
from tests.planted._wrapper import make_get_num_nans

get_num_nans = make_get_num_nans(alloc=lambda n, dev: torch.empty(n, dtype=torch.int64, device=dev))

__all__ = ["_num_nans_kernel", "get_num_nans"]
