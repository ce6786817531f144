"""Warm workers seen from the deciding process: a job in flight at the run's deadline is ended there."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch

from mutate.engine import Baseline, Engine, Job
from mutate.generate import Mutant
from mutate.pool import Answer, WorkerProcess
from mutate.run import run_env
from mutate.warm import UNPLACED, _shared_build


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


class _PassingWorker:
    """A warm worker whose every case passes, but one case could not be placed (out of memory) for this mutant."""

    def __init__(self, unplaced: str) -> None:
        self.unplaced = unplaced

    def started(self) -> str:
        return ""

    def ask(self, job: dict[str, Any], *args: Any, **kwargs: Any) -> Answer:
        return Answer(reply={"op": "done", "status": "passed", "failed": [], "ran": len(job["cases"]) - 1,
                             "skipped": [[self.unplaced, f"{UNPLACED}: CUDA out of memory"]]})

    def close(self) -> None:
        pass


def test_a_case_not_placed_for_a_mutant_leaves_it_unjudged(tmp_path: Path) -> None:
    """A mutant that passes every case but one it never ran (memory) is not a survivor: it is not judged."""
    cases = ["t::a", "t::b"]
    base = Baseline(cases, set(), {}, {c: {"k.py": [3]} for c in cases}, [])
    engine = Engine("cpu", 1, tmp_path, base, None, ("orig", tmp_path))  # type: ignore[arg-type]
    engine._worker = lambda slot, compile_only=False: _PassingWorker("t::b")  # type: ignore[method-assign]
    mutant = Mutant("m1", "int_constant", "f", 3, 0, "1 -> 2", "", "", (3,), (3,), "k")
    verdict, _ = engine.judge(Job(mutant, "mut_m1", tmp_path, ("k.py",)), 0, None, time.monotonic() + 60)
    assert verdict.status == "not_run" and "could not be placed" in verdict.why and "t::b" in verdict.why, verdict
    base.skipped.add("t::b")  # the original could not place it either: the mutant is judged as it was
    verdict, _ = engine.judge(Job(mutant, "mut_m1", tmp_path, ("k.py",)), 0, None, time.monotonic() + 60)
    assert verdict.status == "survived", verdict


def test_workers_share_built_cases_through_the_run_folder(tmp_path: Path) -> None:
    from cases import registry
    from harness import backends
    from harness.judge import suite_context

    fc = next(fc for fc in registry.expand(registry.load([]), suite_context(backends.resolve("cpu")))
              if "padded" in str(fc))  # a view into a larger storage: the view must survive the round trip
    first = _shared_build(fc, str(tmp_path))
    saved = list(tmp_path.glob("*.pt"))
    again = _shared_build(fc, str(tmp_path))
    assert len(saved) == 1 and again is not first
    assert torch.equal(again.expected, first.expected) and again.logits.stride() == first.logits.stride()
    assert again.storage is not None and again.logits.data_ptr() - again.storage.data_ptr() == \
        first.logits.data_ptr() - first.storage.data_ptr()
    assert torch.equal(again.storage.view(torch.int32 if again.storage.element_size() == 4 else torch.int16),
                       first.storage.view(torch.int32 if first.storage.element_size() == 4 else torch.int16))
