"""Empty batch returns the wrong dtype: the num_reqs == 0 / vocab == 0 shortcut is `logits.new_zeros(num_reqs)`.

Models the early return written with new_zeros, which inherits the logits' float dtype, on a path the
main tests never take.
"""
from kernel.num_nans import _num_nans_kernel
from tests.planted._wrapper import make_get_num_nans

get_num_nans = make_get_num_nans(empty=lambda logits: logits.new_zeros(logits.shape[0]))

__all__ = ["_num_nans_kernel", "get_num_nans"]
