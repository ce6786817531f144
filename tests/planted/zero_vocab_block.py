"""Crashes on a zero vocab: BLOCK_SIZE is sized to the vocab (next power of 2) with no empty-input shortcut.

Models a port that tunes BLOCK_SIZE from the vocab and drops the early return: `next_power_of_2(0)` is 0
and the kernel cannot be built, so `get_num_nans` raises on a [rows, 0] tensor instead of returning zeros.
"""
import triton

from kernel.num_nans import _num_nans_kernel
from tests.planted._wrapper import make_get_num_nans

get_num_nans = make_get_num_nans(empty=None, block_size=lambda vocab: min(8192, triton.next_power_of_2(vocab)))

__all__ = ["_num_nans_kernel", "get_num_nans"]
