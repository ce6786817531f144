"""Warm workers seen from the deciding process: a job in flight at the run's deadline is ended there."""
from __future__ import annotations

import time
from pathlib import Path

from mutate.pool import WorkerProcess
from mutate.run import run_env


def test_a_job_in_flight_at_the_deadline_ends_there(tmp_path: Path) -> None:
    worker = WorkerProcess("cpu", run_env("cpu", None, None), tmp_path / "worker.log")
    try:
        assert worker.started() == ""
        start = time.monotonic()
        answer = worker.ask({"op": "judge", "module": "kernel", "paths": [], "cases": worker.cases, "all": True},
                            {}, 600.0, until=start + 2.0)  # every case takes ~20 s on 2 cores
        assert answer.ended == "hung" and answer.budget and answer.case, answer
        assert time.monotonic() - start < 10.0  # ended at the deadline, not at the 600 s case limit
        assert worker.proc.poll() is not None
    finally:
        worker.close()
