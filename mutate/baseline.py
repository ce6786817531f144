"""The original's own run, before any mutant: per-test coverage and times, and the tests it already fails.

Every test of the suite runs on the original's snapshot in warm workers (mutate.warm: the same pytest session that
judges the mutants), traced, the tests dealt out over `parts` workers. A test the original fails, or that ends
or hangs a worker, is deselected for every mutant and listed in the report.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mutate import coverage
from mutate.pool import WorkerProcess


@dataclass
class Baseline:
    """What the original showed: per-test coverage and times, tests it fails (deselected), the tests in order."""

    tests: list[str]  # node ids, in collection order
    fast: set[str]  # node ids of the fast families
    times: dict[str, float]
    coverage: dict[str, dict[str, list[int]]]  # node id -> file -> lines
    failed: list[str] = field(default_factory=list)
    launches: dict[str, list[str]] = field(default_factory=dict)  # "file::qualname" -> Spec JSON of each launch
    skipped: set[str] = field(default_factory=set)  # tests the original's run skipped (not run, or not placed)

    def reaching(self, files: Sequence[str], lines: Sequence[int]) -> list[str]:
        """The tests whose coverage holds any changed line of the mutant's file, the original's failures left out."""
        failed = set(self.failed)
        return [n for n in self.tests if n not in failed and n in self.coverage
                and any(coverage.reaches(self.coverage[n], f, lines) for f in files)]

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Baseline:
        """The Baseline a run (or the cache) recorded."""
        return cls(doc["tests"], set(doc["fast"]), doc["times"], doc["coverage"], doc["failed"], doc["launches"],
                   {test for test, _ in doc["skipped"]})


class BaselineError(RuntimeError):
    """The original cannot be judged: nothing about its mutants could be."""


def run(start: Callable[[str], WorkerProcess], module: str, folder: Path, files: list[str],
        parts: int = 1) -> tuple[dict[str, Any], list[WorkerProcess]]:
    """Every test on the original, traced, in `parts` workers (tests dealt out in turn); a test that ends or hangs a
    worker is one the original fails (deselected), and a fresh worker goes on after it. `start(log name)` makes
    a worker. Returns the record and the workers still running (warm: the mutants' judging may adopt them). Every
    worker starts at once (each collects the suite: seconds), the tests are dealt once the first is ready."""
    workers = [start("warm.log" if i == 0 else f"warm{i}.log") for i in range(max(1, parts))]
    problem = workers[0].started()
    if problem:
        for worker in workers:
            worker.close()
        raise BaselineError(problem)
    todo = list(workers[0].cases)
    result: dict[str, Any] = {"tests": todo, "fast": [c for c in workers[0].fast if c in todo], "times": {},
                              "coverage": {}, "failed": [], "skipped": [], "launches": {}}
    chunks = [todo[i::parts] for i in range(max(1, parts)) if todo[i::parts]] or [[]]
    for extra in workers[len(chunks):]:
        extra.close()
    with ThreadPoolExecutor(len(chunks)) as pool:
        futures = [pool.submit(_chunk, chunks[i], module, folder, files, workers[i], i == 0,
                               lambda i=i: start(f"warm{i}.log")) for i in range(len(chunks))]
    failed = [f.exception() for f in futures if f.exception() is not None]
    done = [f.result() for f in futures if f.exception() is None]
    if failed:  # no worker outlives a baseline that did not finish
        for _, worker in done:
            if worker is not None:
                worker.close()
        raise failed[0]
    for part, _ in done:
        for key in ("times", "coverage"):
            result[key].update(part[key])
        result["failed"] += part["failed"]
        result["skipped"] += part["skipped"]
        for kernel, specs in part["launches"].items():
            result["launches"][kernel] = sorted(set(result["launches"].get(kernel, [])) | set(specs))
    return result, [worker for _, worker in done if worker is not None]


def _chunk(todo: list[str], module: str, folder: Path, files: list[str], spawned: WorkerProcess | None, ready: bool,
           fresh: Callable[[], WorkerProcess]) -> tuple[dict[str, Any], WorkerProcess | None]:
    """One worker's share of the original's tests in `spawned` (`ready`: it said so already; a fresh worker after one
    that ends in a test), and the worker that ran its last part, still running."""
    result: dict[str, Any] = {"times": {}, "coverage": {}, "failed": [], "skipped": [], "launches": {}}
    worker: WorkerProcess | None = None
    while todo:
        worker, problem = (spawned, "" if ready else None) if spawned is not None else (fresh(), None)
        spawned = None
        try:
            problem = worker.started() if problem is None else problem
            if problem:
                raise BaselineError(problem)
            answer = worker.ask({"op": "judge", "module": module, "paths": [str(folder)], "cases": todo,
                                 "trace": files, "all": True}, {}, 3600.0)
        except BaseException:
            worker.close()
            raise
        for case, ran in answer.ran.items():
            result["times"][case] = ran["seconds"]
            result["coverage"][case] = ran["coverage"]
            for kernel, specs in ran.get("launches", {}).items():
                result["launches"][kernel] = sorted(set(result["launches"].get(kernel, [])) | set(specs))
        if answer.ended:
            worker.close()
            worker = None
            if not answer.case:
                raise BaselineError(f"the original's worker {answer.ended}: {answer.detail}")
            print(f"mutate: the original's worker {answer.ended} in {answer.case}: deselected", flush=True)
            result["failed"].append(answer.case)
            todo = todo[todo.index(answer.case) + 1:]
            continue
        reply = answer.reply
        if reply.get("status") not in ("passed", "failed"):
            worker.close()
            why = reply.get("device_fault") or reply.get("message", "")[:500]
            raise BaselineError(f"the original does not run: {why}")
        result["failed"] += [f["nodeid"] for f in reply["failed"]]
        result["skipped"] += reply["skipped"]
        todo = []
    return result, worker
