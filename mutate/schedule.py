"""The order mutants start in: the longest expected first, so no slot starts a long mutant while the others idle.

Longest-processing-time-first (Graham, 1969) bounds the wall time by 4/3 of the best packing. A mutant's expected
seconds are what it took when last judged (the cache keeps them by id), else what it costs if it survives: the
original's time over every test that reaches it (docs/mutate.md: step 6; the H200 runs that showed the need).
"""
from __future__ import annotations

import argparse
import heapq
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mutate.baseline import Baseline
from mutate.engine import Job

UNKNOWN_TEST_S = 1.0  # a test the baseline has no time for (it did not record one)


def expected_seconds(job: Job, base: Baseline, last_seconds: Mapping[str, float]) -> float:
    """The job's last judged seconds, or the original's time over every test that reaches its change."""
    known = last_seconds.get(job.mutant.id)
    if known is not None:
        return float(known)
    return sum(base.times.get(n, UNKNOWN_TEST_S) for n in base.reaching(job.files, job.mutant.original_lines))


def longest_first(jobs: Sequence[Job], base: Baseline, last_seconds: Mapping[str, float]) -> list[Job]:
    """The jobs by expected seconds, longest first; equal estimates keep their order (generation order)."""
    return sorted(jobs, key=lambda j: -expected_seconds(j, base, last_seconds))


def packed_wall(seconds: Sequence[float], slots: int) -> float:
    """Wall seconds of `slots` workers each taking the next job when free, jobs started in the given order."""
    free = [0.0] * max(1, slots)
    for s in seconds:
        heapq.heappush(free, heapq.heappop(free) + s)
    return max(free)


def packing(doc: Mapping[str, Any], slots: int) -> dict[str, float]:
    """A finished run's judging replayed from its per-mutant seconds: in the order it ran them (mutation.json
    keeps generation order; cached mutants cost 0), longest first, and the bound no order beats."""
    seconds = [float(m.get("seconds") or 0.0) for m in doc["mutants"] if not m.get("cached")]
    return {"mutants": len(seconds), "sum_s": round(sum(seconds), 1), "longest_s": round(max(seconds, default=0), 1),
            "generation_order_s": round(packed_wall(seconds, slots), 1),
            "longest_first_s": round(packed_wall(sorted(seconds, reverse=True), slots), 1),
            "bound_s": round(max(sum(seconds) / max(1, slots), max(seconds, default=0)), 1)}


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mutate.schedule",
                                description="replay a run's judging on N slots: generation order vs longest first")
    p.add_argument("mutation_json", type=Path)
    p.add_argument("--jobs", type=int, required=True, help="slots to replay on (the run's --jobs)")
    args = p.parse_args(argv)
    doc = json.loads(args.mutation_json.read_text(encoding="utf-8"))
    print(json.dumps({"jobs": args.jobs, "baseline_s": doc.get("baseline", {}).get("seconds"),
                      **packing(doc, args.jobs)}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
