"""Square inputs transposed: the wrapper guesses the layout from the shape and, when both dimensions are equal,
takes dim 0 for the vocab (`logits.t().contiguous()`), so a square batch gets one count per column.

Models a port that accepts vocab-major logits too (`[vocab, num_reqs]`, as a sampler that keeps logits
transposed for its top-k kernel does) and tells the layouts apart by which dimension is the longer: right for
every anchor shape, none of which is square, and wrong only when num_reqs == vocab_size.
"""
from kernel.num_nans import _num_nans_kernel
from tests.planted._wrapper import make_get_num_nans


def _guess_layout(logits):
    if logits.dim() == 2 and logits.shape[0] > 1 and logits.shape[0] == logits.shape[1]:
        return logits.t().contiguous()  # BUG: a tie is read as vocab-major
    return logits


get_num_nans = make_get_num_nans(prepare=_guess_layout)

__all__ = ["_num_nans_kernel", "get_num_nans"]
