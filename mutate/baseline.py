"""The original's own run, before any mutant: per-test coverage and times, and the tests it already fails.

Family cases run in warm workers (every case, traced, dealt out over `parts` workers); the suite's other tests run
as one pytest (traced by mutate.coverage) at the same time. A test the original fails is deselected for
every mutant and listed in the report.
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from mutate import classify, coverage
from mutate.pool import WorkerProcess
from mutate.run import Runner, Settings, Stage, Target, other_tests, run_env


@dataclass
class Baseline:
    """What the original showed: per-test coverage and times, tests it fails (deselected), the case table."""

    cases: list[str]  # warm case node ids, in table order
    fast: set[str]  # node ids of the fast families
    times: dict[str, float]
    coverage: dict[str, dict[str, list[int]]]  # node id -> file -> lines (warm cases and pytest tests)
    rest: list[str]  # pytest node ids outside the warm cases, in run order
    failed: list[str] = field(default_factory=list)
    launches: dict[str, list[str]] = field(default_factory=dict)  # "file::qualname" -> Spec JSON of each launch
    skipped: set[str] = field(default_factory=set)  # cases the original's run skipped (not run, or not placed)

    def reaching(self, files: Sequence[str], lines: Sequence[int]) -> tuple[list[str], list[str]]:
        """(warm cases, pytest tests) whose coverage holds any changed line of the mutant's file."""
        hit = [n for n in self.coverage if any(coverage.reaches(self.coverage[n], f, lines) for f in files)]
        hits = set(hit) - set(self.failed)
        return [c for c in self.cases if c in hits], [t for t in self.rest if t in hits]



class BaselineError(RuntimeError):
    """The original cannot be judged: nothing about its mutants could be."""


def warm_cases(device: str, module: str, folder: Path, files: list[str], out: Path,
               select: Callable[[list[str]], bool] | None = None, families: tuple[str, ...] = (),
               parts: int = 1) -> dict[str, Any]:
    """Every family case on the original, traced, in `parts` workers of their own (cases dealt out in turn); a case
    that ends or hangs a worker is one the original fails (deselected), and a fresh worker goes on after it."""
    threads = max(1, (os.cpu_count() or 1) // (parts + 1))  # the other tests' pytest runs beside them

    def worker(log: str) -> WorkerProcess:
        return WorkerProcess(device, run_env(device, 0 if device != "cpu" else None, None), out / log, families,
                             threads=threads)

    first = worker("warm.log")
    problem = first.started()
    if problem:
        first.close()
        raise BaselineError(problem)
    todo = [c for c in first.cases if select is None or select(first.markers.get(c, []))]
    result: dict[str, Any] = {"cases": list(todo), "fast": [c for c in first.fast if c in todo], "times": {},
                              "coverage": {}, "failed": [], "skipped": [], "launches": {}}
    chunks = [todo[i::parts] for i in range(max(1, parts)) if todo[i::parts]] or [[]]
    with ThreadPoolExecutor(len(chunks)) as pool:
        done = list(pool.map(lambda i: _warm_chunk(chunks[i], module, folder, files, first if i == 0 else None,
                                                   lambda: worker(f"warm{i}.log")), range(len(chunks))))
    for part in done:
        result["times"].update(part["times"])
        result["coverage"].update(part["coverage"])
        result["failed"] += part["failed"]
        result["skipped"] += part["skipped"]
        _add_launches(result["launches"], part["launches"])
    return result


def _warm_chunk(todo: list[str], module: str, folder: Path, files: list[str], started: WorkerProcess | None,
                fresh: Callable[[], WorkerProcess]) -> dict[str, Any]:
    """One worker's share of the original's cases (a fresh worker after one that ends in a case)."""
    result: dict[str, Any] = {"times": {}, "coverage": {}, "failed": [], "skipped": [], "launches": {}}
    while todo:
        worker, problem = (started, "") if started is not None else (fresh(), None)
        started = None
        try:
            problem = worker.started() if problem is None else problem  # the first worker has started already
            if problem:
                raise BaselineError(problem)
            answer = worker.ask({"op": "judge", "module": module, "paths": [str(folder)], "cases": todo,
                                 "trace": files, "all": True}, {}, 3600.0)
        finally:
            worker.close()
        for case, ran in answer.ran.items():
            result["times"][case] = ran["seconds"]
            result["coverage"][case] = ran["coverage"]
            _add_launches(result["launches"], ran.get("launches", {}))
        if answer.ended:
            if not answer.case:
                raise BaselineError(f"the original's worker {answer.ended}: {answer.detail}")
            print(f"mutate: the original's worker {answer.ended} in {answer.case}: deselected", flush=True)
            result["failed"].append(answer.case)
            todo = todo[todo.index(answer.case) + 1:]
            continue
        reply = answer.reply
        if reply.get("status") not in ("passed", "failed"):
            why = reply.get("device_fault") or reply.get("message", "")[:500]
            raise BaselineError(f"the original does not run: {why}")
        result["failed"] += [f["nodeid"] for f in reply["failed"]]
        result["skipped"] += reply["skipped"]
        todo = []
    return result


def _add_launches(into: dict[str, list[str]], launches: dict[str, list[str]]) -> None:
    """Each kernel's launch specs from `launches` joined into `into` (sorted, once each)."""
    for kernel, specs in launches.items():
        into[kernel] = sorted(set(into.get(kernel, [])) | set(specs))


def pytest_tests(settings: Settings, module: str, folder: Path, files: list[str], out: Path) -> dict[str, Any]:
    """The suite's other tests on the original, traced; every test's node id in run order."""
    cov = out / "coverage"
    cov.mkdir(parents=True, exist_ok=True)
    for old in cov.glob("*.jsonl"):
        old.unlink()
    traced = replace(settings, jobs=1, deselect=(), extra=(*settings.extra, "-p", coverage.__name__),
                     env=((coverage.FILES_VAR, os.pathsep.join(files)), (coverage.OUT_VAR, str(cov))))
    runner = Runner(traced, (), deadline=float("inf"))
    outcome = runner.run(Target(module, (folder,)), out / "pytest", first_failure=False,
                         stages=(Stage("rest", tuple(other_tests())),))
    status = outcome.stages[0] if outcome.stages else classify.StageResult(classify.NOT_RUN, why="no run")
    if status.outcome not in (classify.STAGE_PASSED, classify.KILLED):
        raise BaselineError(f"the original's pytest run did not finish: {status.why}")
    lines = coverage.read(cov)
    return {"tests": list(lines), "coverage": lines, "failed": outcome.failed_ids, "seconds": outcome.seconds}


def combine(warm: dict[str, Any], tests: dict[str, Any] | None) -> Baseline:
    """One Baseline from the two runs."""
    lines = dict(warm["coverage"])
    failed = list(warm["failed"])
    rest: list[str] = []
    if tests is not None:
        lines.update(tests["coverage"])
        failed += tests["failed"]
        rest = list(tests["tests"])
    return Baseline(warm["cases"], set(warm["fast"]), warm["times"], lines, rest, failed,
                    dict(warm.get("launches", {})), {case for case, _ in warm.get("skipped", [])})
