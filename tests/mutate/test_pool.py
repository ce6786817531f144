"""Warm workers seen from the deciding process: a job in flight at the run's deadline is ended there."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import torch

from mutate.baseline import Baseline
from mutate.engine import Engine, Job
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


class _FaultingWorker:
    """A warm worker whose device faults: `fail` names the case whose check failed when the fault surfaced (or
    None: the device was already faulted before this mutant's first case); `original` answers the confirmation."""

    made: list[_FaultingWorker] = []

    def __init__(self, fail: str | None, original_ok: bool = True) -> None:
        self.fail, self.original_ok, self.closed = fail, original_ok, False
        _FaultingWorker.made.append(self)

    def started(self) -> str:
        return ""

    def ask(self, job: dict[str, Any], *args: Any, **kwargs: Any) -> Answer:
        if job["module"] == "orig":  # the confirmation: the original on the failing case, in a fresh worker
            self.confirmed = list(job["cases"])
            return Answer(reply={"op": "done", "status": "passed" if self.original_ok else "failed", "failed": [],
                                 "ran": len(job["cases"])})
        failed = [{"nodeid": self.fail, "family": "matrix", "verdict": "error", "message": "illegal address"}]
        return Answer(reply={"op": "done", "status": "fault", "ran": 1, "skipped": [],
                             "failed": failed if self.fail else [],
                             "device_fault": "synchronize: RuntimeError: CUDA error: an illegal memory access"})

    def close(self) -> None:
        self.closed = True


def _faulting_engine(tmp_path: Path, fail: str | None, original_ok: bool = True) -> Engine:
    cases = ["t::a", "t::b"]
    base = Baseline(cases, set(), {}, {c: {"k.py": [3]} for c in cases}, [])
    engine = Engine("cuda", 1, tmp_path, base, None, ("orig", tmp_path))  # type: ignore[arg-type]
    engine._worker = lambda slot, compile_only=False: _FaultingWorker(fail, original_ok)  # type: ignore[method-assign]
    return engine


def test_a_device_fault_kills_the_mutant_and_retires_its_worker(tmp_path: Path) -> None:
    """The case whose launch left the device faulted kills the mutant once the original passes it; the worker is
    closed, never handed the next mutant (its device context is lost)."""
    _FaultingWorker.made.clear()
    mutant = Mutant("m1", "int_constant", "f", 3, 0, "1 -> 2", "", "", (3,), (3,), "k")
    verdict, worker = _faulting_engine(tmp_path, "t::a").judge(Job(mutant, "mut_m1", tmp_path, ("k.py",)), 0, None,
                                                               time.monotonic() + 60)
    assert verdict.status == "killed" and verdict.crash and verdict.killer["verdict"] == "fault", verdict
    assert worker is None and _FaultingWorker.made[0].closed
    confirming = [w for w in _FaultingWorker.made if getattr(w, "confirmed", None)]
    assert [w.confirmed for w in confirming] == [["t::a", "t::a"]] and confirming[0].closed  # twice, one worker


def test_a_device_fault_without_its_own_failure_is_judged_again_then_not_run(tmp_path: Path) -> None:
    """Faulted before any case of its own failed (or the original fails the case too): judged again in a fresh
    worker, and after a second fault not judged at all, never a survivor or a case skipped for memory."""
    mutant = Mutant("m1", "int_constant", "f", 3, 0, "1 -> 2", "", "", (3,), (3,), "k")
    for fail, original_ok in ((None, True), ("t::a", False)):
        _FaultingWorker.made.clear()
        engine = _faulting_engine(tmp_path, fail, original_ok)
        verdict, worker = engine.judge(Job(mutant, "mut_m1", tmp_path, ("k.py",)), 0, None, time.monotonic() + 60)
        assert verdict.status == "not_run" and "faulted twice" in verdict.why, verdict
        assert worker is None and all(w.closed for w in _FaultingWorker.made)


def test_only_memory_errors_count_as_an_input_not_placed() -> None:
    """Out of memory (torch's type, the allocator's messages, MemoryError) may skip a case; a faulted device's
    error may not (the warm judge and tests/precision/test_families.py decide alike)."""
    from harness.backends import is_memory_error

    assert is_memory_error(torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 16.00 GiB"))
    assert is_memory_error(MemoryError()) and is_memory_error(RuntimeError(
        "[enforce fail at alloc_cpu.cpp:121] DefaultCPUAllocator: can't allocate memory: you tried to allocate 9 GB"))
    assert not is_memory_error(RuntimeError("CUDA error: an illegal memory access was encountered"))
    assert not is_memory_error(RuntimeError("ACL stream synchronize failed, error code:507035"))


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


class _Unplaceable:
    """A built case whose placement raises what a device says (out of memory, or a fault left by a launch)."""

    expected = None
    labels = None

    def __init__(self, error: Exception) -> None:
        self.error = error

    def input_on(self, device: str) -> object:
        raise self.error


def test_the_warm_judge_skips_for_memory_only(monkeypatch: Any) -> None:
    """In the worker: an input the device has no memory for skips its case (UNPLACED); any other error while placing
    it ends the job as a device fault, so the engine retires the worker instead of calling cases unplaced."""
    import io

    from mutate.warm import Worker

    worker = Worker("cpu", [], io.StringIO())  # the built-in families
    case = next(iter(worker.table))
    for error, status in ((torch.OutOfMemoryError("CUDA out of memory"), "passed"),
                          (RuntimeError("CUDA error: an illegal memory access was encountered"), "fault")):
        monkeypatch.setattr(worker, "_built", lambda fc, error=error: _Unplaceable(error))
        reply = worker.judge({"module": "kernel", "paths": [], "cases": [case]})
        assert reply["status"] == status, reply
        if status == "fault":
            assert "illegal memory access" in reply["device_fault"] and not reply["skipped"]
        else:
            assert reply["skipped"] == [[case, f"{UNPLACED}: CUDA out of memory"]]


def test_the_baseline_deals_cases_over_workers_and_loses_none(tmp_path: Path) -> None:
    """The original's family cases over 2 workers give the same cases, coverage and failures as over 1, and each
    worker ran its own share (both logs written)."""
    from mutate import baseline
    from mutate.package import find_unit, write_copy

    folder = tmp_path / "original"
    module, copied = write_copy(find_unit("tests.designs.upstream_vllm"), folder, "mut_original")
    files = [str(p) for p in copied.values()]

    def special(markers: list[str]) -> bool:
        return "nan_special" in markers

    runs = [baseline.warm_cases("cpu", module, folder, files, tmp_path / f"run{parts}", special, (), parts)
            for parts in (1, 2) if (tmp_path / f"run{parts}").mkdir() is None]
    one, two = runs
    assert one["cases"] == two["cases"] and len(one["cases"]) >= 4
    assert set(one["coverage"]) == set(two["coverage"]) == set(one["cases"])
    for case in one["cases"]:  # a worker's first case also holds the lines its import ran (0: the module itself)
        for path, lines in one["coverage"][case].items():
            assert set(lines) ^ set(two["coverage"][case][path]) <= {0}, (case, path)
    assert sorted(one["failed"]) == sorted(two["failed"])
    assert (tmp_path / "run2" / "warm.log").exists() and (tmp_path / "run2" / "warm1.log").exists()
