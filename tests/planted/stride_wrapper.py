"""Row stride ignored in the wrapper: it passes `logits.shape[1]` (the vocab size) as logits_stride.

Models a port whose wrapper assumes contiguous logits; the kernel is right, so the direct launch passes.
"""
from kernel.num_nans import _num_nans_kernel
from tests.planted._wrapper import make_get_num_nans

get_num_nans = make_get_num_nans(row_stride=lambda logits: logits.shape[1])

__all__ = ["_num_nans_kernel", "get_num_nans"]
