"""Wall-clock limits in our tests: each exists only to stop a hang, never to decide a pass (issue 25).

A limit is HANG_FACTOR times the slowest run of its step measured on the 2-core CI machine while a second CPU-heavy
job ran beside it, and never below HANG_FLOOR_S (a loaded 2-core machine stalls a process for seconds). Each call
site states its measured figure; docs/suite.md ("The self-test's time limits") says how they were taken. A test
whose sub-run has a fixed cost keeps that sub-run small (a few cases, one call per timing) rather than trusting a
clock.
"""
from __future__ import annotations

HANG_FACTOR = 10
HANG_FLOOR_S = 10.0


def hang_limit(slowest_s: float) -> float:
    """The limit for a step whose slowest measured run (2 cores, under load) took `slowest_s` seconds."""
    return max(HANG_FACTOR * slowest_s, HANG_FLOOR_S)
