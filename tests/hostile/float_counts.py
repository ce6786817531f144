"""Right counts in the wrong dtype: float32 instead of int32 (a side effect, not wrong counts)."""
import torch

from tests.designs.independent import get_num_nans as _count


def get_num_nans(logits):
    return _count(logits).to(torch.float32)
