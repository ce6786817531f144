"""The wrapper path's output, pre-poisoned: a row that get_num_nans never writes shows the harness's poison.

The direct launch writes into the harness's own output, filled with POISON. The wrapper allocates its own, which
holds whatever memory held: zeros in a fresh process (a NaN-free row's expected count: a false pass), an earlier
case's counts in a long-lived one. So before each wrapper call a block of the output's size, dtype and device is
taken from the same allocator, filled with the poison and freed: torch's CUDA caching allocator, and glibc for blocks
past its per-thread cache, hand that block to the next request of the same size. A probe request tells which block
comes back and which of its slots the allocator itself overwrites while the block is free (glibc keeps its free-list
links in a free block's first 32 bytes and, for sizes not a multiple of 16, its last bytes). After the call, a
result whose storage is that block shows an unwritten row as POISON, except in those slots; any other result
(another block, size, a copy) cannot tell, and says so.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

COUNT_DTYPE = torch.int32
ATTEMPTS = 3  # free-and-request rounds before saying the allocator hands out another block


@dataclass(frozen=True)
class Unwritten:
    """Whether a row the wrapper never wrote reads as POISON in its result: the evidence "never written" needs."""

    observable: bool
    blind_rows: tuple[int, ...] = ()  # slots the allocator overwrites while the block is free: not observable there
    why: str = ""  # why it cannot be told, when it cannot

    def describe(self) -> str:
        """One line for a reader of the check."""
        if not self.observable:
            return f"never written: cannot be told on this check ({self.why})"
        blind = f", except rows {list(self.blind_rows)}" if self.blind_rows else ""
        return f"never written: observable (an unwritten row holds the poison{blind})"


@dataclass(frozen=True)
class Poisoned:
    """The block the next output request gets, filled with the poison before it was freed."""

    address: int
    nbytes: int
    lost: torch.Tensor  # bool per slot: the poison was gone when the block came back (the allocator's own writes)
    value: torch.Tensor  # the poison as a tensor, kept alive: freed before the call it could be the block handed out

    def blind_rows(self) -> tuple[int, ...]:
        return tuple(int(i) for i in torch.nonzero(self.lost.cpu()).reshape(-1).tolist())


def poison_next_block(rows: int, device: torch.device, poison: int) -> Poisoned | None:
    """Fill and free a block of `rows` counts until the same request gets it back (glibc settles within a couple of
    rounds when it does at all); None when it never does. Nothing is allocated or freed after the block's last free,
    so the wrapper's request finds the allocator as the probe left it."""
    lost = torch.empty(rows, dtype=torch.bool, device=device)
    value = torch.tensor(poison, dtype=COUNT_DTYPE, device=device)  # a tensor: comparing with it allocates nothing
    block = torch.full((rows,), poison, dtype=COUNT_DTYPE, device=device)
    for _ in range(ATTEMPTS):
        address = block.data_ptr()
        del block
        block = torch.empty(rows, dtype=COUNT_DTYPE, device=device)
        if block.data_ptr() == address:
            torch.ne(block, value, out=lost)
            return Poisoned(address, rows * COUNT_DTYPE.itemsize, lost, value)  # block: freed as this frame ends
        block.fill_(poison)
    return None


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


def observed(result: object, poisoned: Poisoned | None) -> Unwritten:
    """Whether the result is the poisoned block, so that a row still holding POISON was never written."""
    if poisoned is None:
        return Unwritten(False, why="the allocator hands the next request of the output's size another block")
    if _storage(result) != (poisoned.address, poisoned.nbytes):
        return Unwritten(False, why="the result is not the block the harness poisoned (allocated otherwise, "
                         "another size, or a copy)")
    return Unwritten(True, poisoned.blind_rows())


def call_prepoisoned(wrapper: Callable[[torch.Tensor], object], logits: torch.Tensor,
                     poison: int) -> tuple[object, Unwritten]:
    """get_num_nans(logits) with its output's block pre-poisoned (harness.target.POISON); the input is untouched."""
    if logits.dim() != 2 or logits.shape[0] == 0:
        return wrapper(logits), Unwritten(False, why="no rows to count")
    poisoned = poison_next_block(logits.shape[0], logits.device, poison)
    result = wrapper(logits)
    return result, observed(result, poisoned)
