"""A correct fallback with no Triton kernel: torch ops only, on whatever device the logits live (a host tensor
is counted on the host, into host counts)."""
import torch


def get_num_nans(logits):
    if not isinstance(logits, torch.Tensor) or logits.dim() != 2:
        raise ValueError("get_num_nans expects a 2-D tensor [num_reqs, vocab_size]")
    if not logits.is_floating_point():
        raise TypeError(f"get_num_nans counts NaNs of floating logits, got {logits.dtype}")
    return torch.isnan(logits).sum(dim=-1, dtype=torch.int32)
