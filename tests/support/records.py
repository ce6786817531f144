"""What two runs of the same cases must agree on: their records, less what depends on the process, not the case."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

# duration: the machine's speed; a check's unwritten: whether the allocator handed the wrapper a block the harness
# poisoned (harness.prepoison), which on the CPU varies with what ran before in the same worker
PER_PROCESS = frozenset({"duration"})
PER_PROCESS_CHECK = frozenset({"unwritten"})


def comparable(cases: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """results.json cases without their per-process observations, in the order given."""
    def check(c: dict[str, Any]) -> dict[str, Any]:
        return {k: v for k, v in c.items() if k not in PER_PROCESS_CHECK}
    return [{k: ([check(x) for x in v] if k == "checks" else v) for k, v in case.items() if k not in PER_PROCESS}
            for case in cases]
