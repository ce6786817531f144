"""Small forced tunings: every switch point lands at a few rows and a few dozen elements."""
from __future__ import annotations

import pytest

from kernel import launch
from kernel.launch import Tuning

# blocks of 64 bytes (16 fp32, 32 bf16/fp16 elements); split below 8 rows into about 16 items; 4 programs at most
SMALL = Tuning(cores=4, split_rows=8, split_items=16, max_programs=4, row_programs=4, row_block_bytes=64,
               row_warps=4, split_block_bytes=64, split_warps=4)


def plan_as_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plan as compiled Triton would (the interpreter's tuning differs on purpose)."""
    monkeypatch.setattr(launch, "interpreting", lambda: False)
