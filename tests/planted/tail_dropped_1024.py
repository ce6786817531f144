"""Tail dropped at a 1,024 block: tail_dropped's kernel (whole blocks only), launched by its wrapper with
BLOCK_SIZE 1024; the direct path launches the same kernel with the anchor's 8,192.

Models a port tuned to a smaller block that forgets the remainder: on the wrapper path every vocab off a multiple
of 1,024 loses its last partial block, on the direct path every vocab off a multiple of 8,192.
"""
from tests.planted._wrapper import make_get_num_nans
from tests.planted.tail_dropped import _num_nans_kernel

BLOCK = 1024

get_num_nans = make_get_num_nans(_num_nans_kernel, block_size=lambda vocab: BLOCK)

__all__ = ["_num_nans_kernel", "get_num_nans"]
