"""Batches split into launches of 4,096 rows, the remainder dropped: only whole chunks are launched.

Models a wrapper that bounds each launch (a workspace or grid sized for 4,096 requests) and forgets the last, partial
chunk: a batch of fewer than 4,096 rows is one launch and right, a larger one miscounts every row past its last whole
chunk. Caught only by a batch of several thousand rows (tests/precision/test_large_batches.py).
"""
import torch

from kernel import num_nans as clean
from tests.planted._wrapper import check_input

CHUNK = 4_096


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    check_input(logits)
    num_reqs, vocab_size = logits.shape
    out = torch.zeros(num_reqs, dtype=torch.int32, device=logits.device)
    if not (num_reqs and vocab_size):
        return out
    launched = num_reqs if num_reqs <= CHUNK else num_reqs - num_reqs % CHUNK  # BUG: the partial chunk is dropped
    for start in range(0, launched, CHUNK):
        rows = min(CHUNK, launched - start)
        clean._num_nans_kernel[(rows,)](logits[start:], logits.stride(0), out[start:], vocab_size,
                                        BLOCK_SIZE=clean.BLOCK_SIZE)
    return out


_num_nans_kernel = clean._num_nans_kernel
