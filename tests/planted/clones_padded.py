"""Padded rows cloned: the wrapper calls `logits.clone()` on any input that is not contiguous.

Models a port that copies "defensively" so the kernel only ever sees dense rows (and so a later in-place
sampler step cannot race the count): the counts are right, but every step with padded rows pays a copy of the
logits. `.contiguous()` is the same mistake under another name (copies_padded).
"""
from kernel.num_nans import _num_nans_kernel
from tests.planted._wrapper import make_get_num_nans


def _dense(logits):
    return logits if logits.dim() != 2 or logits.is_contiguous() else logits.clone()  # BUG: a copy per call


get_num_nans = make_get_num_nans(prepare=_dense)

__all__ = ["_num_nans_kernel", "get_num_nans"]
