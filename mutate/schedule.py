"""The order mutants start in: the longest expected first, so no slot starts a long mutant while the others idle.

A run's wall time is at least its longest mutant's time plus when it started. On one H200 (2026-12-03) a mutant
that hung in a case started 220 s into the run and ended it 251 s later, while seven slots had been idle for
minutes. Longest-processing-time-first (Graham, 1969) bounds the wall time by 4/3 of the best packing. A mutant's
expected seconds are what it took the last time it was judged (any source version: the cache keeps them by id);
a mutant never judged is expected to cost what a survivor costs, every test that reaches it (from the
original's per-test times), which puts mutants of widely reached lines first.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from mutate.engine import Baseline, Job

UNKNOWN_TEST_S = 1.0  # a test the baseline has no time for (it did not record one)


def expected_seconds(job: Job, base: Baseline, last_seconds: Mapping[str, float]) -> float:
    """The job's last judged seconds, or the original's time over every test that reaches its change."""
    known = last_seconds.get(job.mutant.id)
    if known is not None:
        return float(known)
    cases, rest = base.reaching(job.files, job.mutant.original_lines)
    return sum(base.times.get(n, UNKNOWN_TEST_S) for n in (*cases, *rest))


def longest_first(jobs: Sequence[Job], base: Baseline, last_seconds: Mapping[str, float]) -> list[Job]:
    """The jobs by expected seconds, longest first; equal estimates keep their order (generation order)."""
    expected = {id(j): expected_seconds(j, base, last_seconds) for j in jobs}
    return sorted(jobs, key=lambda j: -expected[id(j)])
