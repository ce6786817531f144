"""Counts right, but synchronizes the device inside every call (a plan read back to the host): correct when
eager, and impossible to capture in a device graph."""
import torch

from tests.designs.independent import _num_nans_kernel, get_num_nans as _count  # noqa: F401


def get_num_nans(logits):
    counts = _count(logits)
    if logits.is_cuda:
        torch.cuda.synchronize(logits.device)
    return counts
