"""The wrapper path's output, pre-poisoned: a row that get_num_nans never writes shows the harness's poison.

The direct launch writes into the harness's own output, filled with POISON. The wrapper allocates its own, which
holds whatever memory held: zeros in a fresh process (a NaN-free row's expected count: a false pass), an earlier
case's counts in a long-lived one. So before each wrapper call, blocks of the output's size, dtype and device are
taken from the same allocator, filled with the poison and freed, so that the wrapper's own request gets one of them:
on a device, the block its caching allocator hands back (fill and request again until it does); on the CPU, one of
a few blocks freed together (glibc usually hands out one of them for outputs past about 1 KiB, never for smaller
ones). After the call, a result whose storage is a poisoned block shows an unwritten row as the poison, except in
the slots glibc itself writes into a free block; any other result (another block, size, a copy) cannot tell, and
says so.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from verdict.record import Unwritten

COUNT_DTYPE = torch.int32
BLOCKS = 4  # glibc: blocks poisoned at once
ATTEMPTS = 3  # a caching allocator: free-and-request rounds


@dataclass(frozen=True)
class Poisoned:
    """The blocks the next output request may get, each filled with the poison before it was freed."""

    addresses: tuple[int, ...]
    nbytes: int
    blind_rows: tuple[int, ...]


def allocator_blind_rows(rows: int, device: torch.device) -> tuple[int, ...]:
    """Slots the allocator writes into a free block: none for a device's caching allocator; glibc keeps its
    free-list links in the first 32 bytes and, when the size is not a multiple of 16, the next chunk's header in the
    last 8 (measured: outputs of 257, 1,000, 5,000 and 70,001 rows). Reading them instead would allocate, and that
    moves what glibc hands out next."""
    if device.type != "cpu":
        return ()
    tail = (rows - 1,) if (rows * COUNT_DTYPE.itemsize) % 16 else ()
    return tuple(sorted({*range(min(rows, 8)), *tail}))


def _poison_several(rows: int, device: torch.device, poison: int) -> tuple[int, ...]:
    """glibc: fill BLOCKS blocks of the size at once, then free them; the next request usually gets one of them (it
    does not reliably hand back the block freed last, and a probe's own allocations move what it hands out)."""
    blocks = [torch.full((rows,), poison, dtype=COUNT_DTYPE, device=device) for _ in range(BLOCKS)]
    addresses = tuple(b.data_ptr() for b in blocks)
    while blocks:
        blocks.pop()
    return addresses


def _poison_until_back(rows: int, device: torch.device, poison: int) -> tuple[int, ...]:
    """A caching allocator: fill and free a block until the same request gets it back, poisoning each block the
    request got instead (it hands out the best-fitting free block, not always the one freed last)."""
    block = torch.full((rows,), poison, dtype=COUNT_DTYPE, device=device)
    seen = [block.data_ptr()]
    for _ in range(ATTEMPTS):
        del block
        block = torch.empty(rows, dtype=COUNT_DTYPE, device=device)
        if block.data_ptr() in seen:
            break
        block.fill_(poison)
        seen.append(block.data_ptr())
    return tuple(seen)  # the block in hand is freed as this frame ends: the last free before the call


def poison_next_block(rows: int, device: torch.device, poison: int) -> Poisoned:
    """Every block the wrapper's request of `rows` counts is likely to get, filled with the poison and freed;
    nothing is allocated or freed after the last free."""
    fill = _poison_several if device.type == "cpu" else _poison_until_back
    return Poisoned(fill(rows, device, poison), rows * COUNT_DTYPE.itemsize, allocator_blind_rows(rows, device))


def _storage(result: object) -> tuple[int, int] | None:
    """The address and size of a plain tensor's storage; None for anything else (read through torch's own methods,
    so a subclass cannot claim the block)."""
    if type(result) is not torch.Tensor:
        return None
    try:
        storage = torch.Tensor.untyped_storage(result)
        return storage.data_ptr(), storage.nbytes()
    except Exception:  # noqa: BLE001 - a result whose storage cannot be read cannot be told
        return None


def observed(result: object, poisoned: Poisoned) -> Unwritten:
    """Whether the result is a poisoned block, so that a row still holding the poison was never written."""
    storage = _storage(result)
    if storage is None or storage[0] not in poisoned.addresses or storage[1] != poisoned.nbytes:
        return Unwritten(False, why="the result is not a block the harness poisoned (allocated otherwise, "
                         "another size, or a copy)")
    return Unwritten(True, poisoned.blind_rows)


def call_prepoisoned(wrapper: Callable[[torch.Tensor], object], logits: torch.Tensor,
                     poison: int) -> tuple[object, Unwritten]:
    """get_num_nans(logits) with its output's block pre-poisoned (harness.target.POISON); the input is untouched."""
    if logits.dim() != 2 or logits.shape[0] == 0:
        return wrapper(logits), Unwritten(False, why="no rows to count")
    poisoned = poison_next_block(logits.shape[0], logits.device, poison)
    result = wrapper(logits)
    return result, observed(result, poisoned)
