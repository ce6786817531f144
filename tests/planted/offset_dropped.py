"""Storage offset dropped: the wrapper hands the kernel a view at the start of the logits' storage
(`as_strided(..., storage_offset=0)`), so a view that starts inside a larger buffer is read from its base.

Models a port that builds the kernel's pointer from `logits.untyped_storage().data_ptr()` (for a raw-pointer
custom op, or an address kept stable for CUDA graphs) instead of `logits.data_ptr()`. Every tensor that starts
at its storage's first element, as each anchor case does, is counted right.
"""
from kernel.num_nans import _num_nans_kernel
from tests.planted._wrapper import make_get_num_nans


def _storage_base(logits):
    if logits.dim() != 2:
        return logits
    return logits.as_strided(logits.shape, logits.stride(), 0)  # BUG: storage_offset() dropped


get_num_nans = make_get_num_nans(prepare=_storage_base)

__all__ = ["_num_nans_kernel", "get_num_nans"]
