"""The wrapper path's pre-poisoned output (harness/prepoison.py): a row get_num_nans never writes reads as POISON,
not as whatever memory held; a result that is not the poisoned block says it cannot tell."""
from __future__ import annotations

import torch

from harness.prepoison import call_prepoisoned
from verdict.record import Unwritten
from harness.target import POISON, load, run_path

# a multiple of 4 rows past glibc's per-thread cache: on the CPU the last slot is not one glibc overwrites when free
ROWS = 512
# glibc hands the poisoned block back usually, not always (what else the process freed decides: 4 calls all missed
# once in an xdist worker of a whole tox run); CUDA's caching allocator always. Calls until one is observable
CALLS = 12


def _zeros_freed(rows: int, device: str) -> None:
    """Leave a freed block of zeros where the next output of that size goes: what a fresh process's memory holds,
    and a NaN-free row's expected count."""
    torch.zeros(rows, dtype=torch.int32, device=device)


def _tells_last_row(unwritten: Unwritten) -> bool:
    """The result is a poisoned block and its last row is no slot glibc writes into: that row shows the poison."""
    return unwritten.observable and ROWS - 1 not in unwritten.blind_rows


def test_a_row_the_wrapper_never_writes_reads_as_poison(device: str) -> None:
    planted = load("tests.planted.grid_one_short")  # launches ROWS - 1 programs: the last row is never written
    logits = torch.zeros(ROWS, 4, dtype=torch.float32, device=device)  # no NaNs: every expected count is 0
    seen: list[tuple[Unwritten, int]] = []
    for _ in range(CALLS):
        _zeros_freed(ROWS, device)
        done = run_path(planted, "wrapper", logits)
        counts = done.counts.cpu().tolist()  # type: ignore[union-attr]
        assert all(c == 0 for c in counts[:-1]) and not done.side_effects
        seen.append((done.unwritten, counts[-1]))
        if _tells_last_row(done.unwritten):
            break
    last = [got for _, got in seen]
    assert POISON in last, f"the unwritten last row never read as the poison: {last} (0 is a false pass)"
    told = [got for u, got in seen if _tells_last_row(u)]
    assert told and all(got == POISON for got in told), seen  # observable: the poison, every time


def test_our_wrapper_writes_every_row_of_the_poisoned_block(device: str) -> None:
    logits = torch.zeros(ROWS, 4, dtype=torch.float32, device=device)
    logits[::3, 1] = float("nan")
    done = run_path(load("kernel"), "wrapper", logits)
    assert done.counts.cpu().tolist() == [1 if r % 3 == 0 else 0 for r in range(ROWS)]  # type: ignore[union-attr]
    assert isinstance(done.unwritten, Unwritten) and not done.side_effects


def test_a_result_that_is_not_a_poisoned_block_cannot_tell(device: str) -> None:
    logits = torch.zeros(ROWS, 4, dtype=torch.float32, device=device)
    copied, unwritten = call_prepoisoned(lambda x: torch.zeros(ROWS + 1, dtype=torch.int32, device=x.device)[:ROWS],
                                         logits, POISON)
    assert not unwritten.observable and "not a block" in unwritten.why
    assert "cannot be told" in unwritten.describe() and copied.shape == (ROWS,)  # type: ignore[union-attr]
    _, none = call_prepoisoned(lambda x: x[:0, 0].to(torch.int32), logits[:0], POISON)
    assert not none.observable and none.why == "no rows to count"
