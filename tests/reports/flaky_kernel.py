"""A flaky planted kernel for the rerun tests: get_num_nans adds 1 to row 0 (or, with NAN_FLAKY_HOW=crash, ends its
process as a segfault would) on its first NAN_FLAKY_FAILS calls (default 1) counted across processes in the file
$NAN_FLAKY_DIR/calls, then counts right.

The run's first call fails; a rerun in a fresh process (a later call) passes: the harness must label it flaky.
Without NAN_FLAKY_DIR it always counts right.
"""
from __future__ import annotations

import fcntl
import os
from pathlib import Path

import torch

from kernel import _num_nans_kernel  # noqa: F401  (the direct path is the good kernel's: it always passes)
from kernel import get_num_nans as _good

NAN_PREDICATE_SOURCE = "the good kernel's (tests.reports.flaky_kernel plants a miscount in the wrapper)"


def _call_number() -> int:
    """This call's number across every process (0 first), from a counter file under $NAN_FLAKY_DIR."""
    folder = os.environ.get("NAN_FLAKY_DIR")
    if not folder:
        return 1 << 30
    path = Path(folder) / "calls"
    with open(path, "a+", encoding="utf-8") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        f.seek(0)
        number = len(f.read())
        f.write("x")
    return number


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    wrong = _call_number() < int(os.environ.get("NAN_FLAKY_FAILS", "1"))
    if wrong and os.environ.get("NAN_FLAKY_HOW") == "crash":
        os._exit(139)  # the worker dies mid-test: xdist reports a crash
    counts = _good(logits)
    if wrong:
        counts[0] += 1
    return counts
