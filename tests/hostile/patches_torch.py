"""A wrong kernel (every count 0) that patches torch on import, as a careless vendor plugin might, so that any
reference computed with torch in this process agrees with it: a bool tensor sums to zeros and isnan is all False."""
import torch

_sum = torch.Tensor.sum
_isnan = torch.isnan


def _bool_sums_to_zero(self, *args, **kwargs):
    out = _sum(self, *args, **kwargs)
    return torch.zeros_like(out) if self.dtype == torch.bool else out


torch.Tensor.sum = _bool_sums_to_zero
torch.isnan = lambda x: torch.zeros_like(_isnan(x))
torch.Tensor.isnan = lambda self: torch.zeros_like(_isnan(self))


def get_num_nans(logits):
    assert logits.dim() == 2
    return torch.zeros(logits.shape[0], dtype=torch.int32, device=logits.device)
