"""Counts right, on a side stream of its own, without making it wait for the caller's stream or the caller's
stream wait for it: it reads logits before the caller's writes land, and its counts land after the caller reads."""
import torch

from tests.designs.independent import _num_nans_kernel, get_num_nans as _count  # noqa: F401


def get_num_nans(logits):
    side = torch.cuda.Stream(device=logits.device) if logits.is_cuda else None
    if side is None:
        return _count(logits)
    with torch.cuda.stream(side):
        return _count(logits)
