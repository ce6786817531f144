"""Accepts any rank silently: 1-D and 3-D logits are reshaped to [-1, last dim] instead of refused.

Models a port that "helpfully" flattens leading dims (a [batch, spec_tokens, vocab] tensor then gets one
count per token row, and a 1-D tensor one count for everything), so a caller's shape bug goes unseen.
"""
from kernel.num_nans import _num_nans_kernel
from tests.planted._wrapper import make_get_num_nans


def _flatten(logits):
    return logits.reshape(-1, logits.shape[-1]) if logits.dim() else logits.reshape(1, 1)


get_num_nans = make_get_num_nans(prepare=_flatten)

__all__ = ["_num_nans_kernel", "get_num_nans"]
