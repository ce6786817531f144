"""Warm workers seen from the deciding process: a job in flight at the run's deadline is ended there."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import torch

from mutate.baseline import Baseline
from mutate.engine import Engine, Job
from mutate.generate import Mutant
from mutate.pool import Answer, Session, WorkerProcess
from mutate.run import ROOT, run_env
from mutate.warm import UNPLACED, _shared_build

FAMILY = "tests/precision/test_families.py::test_case"


def test_a_job_in_flight_at_the_deadline_ends_there(tmp_path: Path) -> None:
    worker = WorkerProcess(Session("cpu", ("kernel", ROOT)), run_env("cpu", None, None), tmp_path / "worker.log")
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
    base = Baseline(cases, set(), {}, {c: {"k.py": [3]} for c in cases})
    engine = Engine(Session("cpu", ("orig", tmp_path)), 1, tmp_path, base)
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
    base = Baseline(cases, set(), {}, {c: {"k.py": [3]} for c in cases})
    engine = Engine(Session("cuda", ("orig", tmp_path)), 1, tmp_path, base)
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


def _report(outcome: str, when: str, properties: list[tuple[str, object]], longrepr: object = None
            ) -> pytest.TestReport:
    return pytest.TestReport(f"{FAMILY}[x-wrapper]", ("t", 0, "t"), {}, outcome, longrepr, when,
                             user_properties=properties)


def test_the_warm_judge_skips_for_memory_only() -> None:
    """In the worker: a test skipped because its input could not be placed (skips.too_large) is UNPLACED, any other
    skip is not; a failure whose check says the device faulted ends the job as a device fault, so the engine
    retires the worker instead of calling tests unplaced."""
    import io

    from harness import skips
    from mutate.warm import Serve
    from verdict.not_run import NOT_RUN_PROPERTY
    from verdict.record import CHECK_PROPERTY, DEVICE_FAULT, CaseParams, Check

    serve = Serve(io.StringIO(), io.StringIO(), "cuda")
    item = type("Item", (), {"nodeid": f"{FAMILY}[x-wrapper]"})()
    too_large = [(NOT_RUN_PROPERTY, skips.too_large("cuda").to_json())]
    for properties, unplaced in ((too_large, True), ([], False)):
        out: dict[str, Any] = {"failed": [], "skipped": [], "ran": 0}
        assert not serve._note(item, [_report("skipped", "setup", properties, ("t", 1, "Skipped: why"))], out)
        assert out["skipped"][0][1].startswith(UNPLACED) is unplaced and out["ran"] == 0, out
    check = Check(CaseParams("matrix", "x"), "wrapper", DEVICE_FAULT, refusal="CUDA error: illegal address")
    out = {"failed": [], "skipped": [], "ran": 0}
    assert serve._note(item, [_report("passed", "setup", []), _report("failed", "call", [
        (CHECK_PROPERTY, check.to_json())], "RuntimeError: CUDA error: an illegal memory access")], out)
    assert out["failed"][0]["verdict"] == DEVICE_FAULT and "illegal memory access" in out["device_fault"], out


def test_a_worker_judges_each_module_afresh(tmp_path: Path) -> None:
    """A test's record holds only its own run: a module that fails a test and the original after it in the same
    worker, and the original passes (the item is reused; what the failure recorded on it is not)."""
    from mutate.package import find_unit, write_copy

    unit = find_unit("tests.designs.upstream_vllm")
    original = write_copy(unit, tmp_path / "original", "mut_original")[0]
    source = unit.modules[0].source.replace("BLOCK_SIZE = 8192", "BLOCK_SIZE = 0")
    assert source != unit.modules[0].source
    broken = write_copy(unit, tmp_path / "broken", "mut_broken", {unit.modules[0].name: source})[0]
    worker = WorkerProcess(Session("cpu", (original, tmp_path / "original"), select="nan_special"),
                           run_env("cpu", None, None), tmp_path / "worker.log")
    try:
        assert worker.started() == ""
        case = worker.cases[:1]
        first = worker.ask({"op": "judge", "module": broken, "paths": [str(tmp_path / "broken")], "cases": case},
                           {}, 120.0)
        again = worker.ask({"op": "judge", "module": original, "paths": [str(tmp_path / "original")],
                            "cases": case}, {}, 120.0)
    finally:
        worker.close()
    assert first.reply["status"] == "failed", first
    assert again.reply["status"] == "passed" and again.reply["ran"] == 1, again


def test_the_baseline_deals_cases_over_workers_and_loses_none(tmp_path: Path) -> None:
    """The original's tests over 2 workers give the same tests, coverage and failures as over 1, each worker ran
    its own share (both logs written), and each is left running for the mutants' slots."""
    from mutate import baseline
    from mutate.package import find_unit, write_copy

    folder = tmp_path / "original"
    module, copied = write_copy(find_unit("tests.designs.upstream_vllm"), folder, "mut_original")
    files = [str(p) for p in copied.values()]

    session = Session("cpu", (module, folder), select="nan_special")

    def start(run: Path) -> Any:
        return lambda log: WorkerProcess(session, run_env("cpu", None, None), run / log)

    runs = []
    for parts in (1, 2):
        doc, warm = baseline.run(start(tmp_path / f"run{parts}"), module, folder, files, parts)
        alive = [w.proc.poll() is None for w in warm]
        for worker in warm:
            worker.close()
        assert alive == [True] * parts  # each still warm, for the mutants' slots to adopt
        runs.append(doc)
    one, two = runs
    assert one["tests"] == two["tests"] and len(one["tests"]) >= 4
    assert set(one["coverage"]) == set(two["coverage"]) == set(one["tests"])
    for case in one["tests"]:  # a worker's first case also holds the lines its import ran (0: the module itself)
        for path, lines in one["coverage"][case].items():
            assert set(lines) ^ set(two["coverage"][case][path]) <= {0}, (case, path)
    assert sorted(one["failed"]) == sorted(two["failed"])
    assert (tmp_path / "run2" / "warm.log").exists() and (tmp_path / "run2" / "warm1.log").exists()


def test_a_change_no_test_reaches_is_no_coverage_even_past_the_budget(tmp_path: Path) -> None:
    """No worker is needed to say that no test reaches a change: the budget leaves such a mutant no_coverage, never
    not_run (the longest-first order starts them last, when the budget may be gone)."""
    base = Baseline(["t::a"], set(), {}, {"t::a": {"k.py": [3]}})
    engine = Engine(Session("cpu", ("orig", tmp_path)), 1, tmp_path, base)
    reached = Mutant("m1", "int_constant", "f", 3, 0, "1 -> 2", "", "", (3,), (3,), "k")
    unreached = Mutant("m2", "int_constant", "f", 9, 0, "1 -> 2", "", "", (9,), (9,), "k")
    verdicts = engine.run_all([Job(m, f"mut_{m.id}", tmp_path, ("k.py",)) for m in (reached, unreached)],
                              deadline=time.monotonic() - 1)
    assert verdicts["m1"].status == "not_run" and verdicts["m2"].status == "no_coverage", verdicts


def test_a_job_the_harness_fails_on_is_said_and_the_worker_goes_on(tmp_path: Path) -> None:
    """Either worker (here the CPU's compile-only one): a job that raises in the harness gets an error reply, and
    the same worker answers the next job (it is not lost to one bad job)."""
    worker = WorkerProcess(Session("cpu", ("unused", tmp_path)), run_env("cpu", None, None), tmp_path / "c.log",
                           compile_only=True)
    try:
        assert worker.started() == ""
        for _ in range(2):
            answer = worker.ask({"op": "compile"}, {}, 60.0)  # no module named: the harness raises KeyError
            assert not answer.ended and answer.reply["status"] == "error", answer
    finally:
        worker.close()
