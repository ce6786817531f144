"""Last row never written by the wrapper: it launches `num_reqs - 1` programs; its `_num_nans_kernel` is ours.

Models an off-by-one in a port's grid (`num_reqs - 1`, or a grid computed from the last row's index): the last row
of the wrapper's torch.empty output keeps whatever memory held. In a fresh process that is often 0, a NaN-free row's
expected count, so only the harness's pre-poisoned output block (harness/prepoison.py) makes it fail every time;
the direct launch, into the harness's own poisoned output, counts right.
"""
import torch

from kernel import num_nans as clean
from tests.planted._wrapper import check_input


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    check_input(logits)
    num_reqs, vocab_size = logits.shape
    out = torch.empty(num_reqs, dtype=torch.int32, device=logits.device)
    if num_reqs > 1 and vocab_size:
        grid = (num_reqs - 1,)  # BUG: one program short, the last row gets none
        clean._num_nans_kernel[grid](logits, logits.stride(0), out, vocab_size, BLOCK_SIZE=clean.BLOCK_SIZE)
    elif num_reqs and not vocab_size:
        out.zero_()
    return out


_num_nans_kernel = clean._num_nans_kernel
