"""Input modified in the wrapper: after counting it runs `logits.nan_to_num_()` on the caller's tensor.

Models a port that sanitizes the logits right where it found the NaNs; the counts are right.
"""
from kernel.num_nans import _num_nans_kernel
from tests.planted._wrapper import make_get_num_nans

get_num_nans = make_get_num_nans(after=lambda logits: logits.nan_to_num_())

__all__ = ["_num_nans_kernel", "get_num_nans"]
