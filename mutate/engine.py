"""Judging mutants: one judge, the suite's own tests in a warm worker's pytest session (mutate.warm).

Per mutant, only the tests that reach its change (per-test coverage), until the first failing one. A worker death
or hang is a kill once the original passes that test again; otherwise the test is flaky and deselected
(docs/mutate.md, How a mutant is judged).
"""
from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import processes
from mutate import classify
from mutate.baseline import Baseline
from mutate.classify import NO_COVERAGE, Verdict
from mutate.generate import Mutant
from mutate.pool import DIED, HUNG, Answer, Session, WorkerProcess
from mutate.run import UNPLACED
from mutate.tce import COMPILE_LIMIT_S, Copy, Prover

CASE_FLOOR_S = {"cpu": 10.0}  # a case's limit: 10x the original's time on it, plus this (compiles on accelerators)
ACCELERATOR_FLOOR_S = 30.0  # a first launch compiles its kernels: 0.3-7 s on the H200 with 8 slots compiling


@dataclass
class Job:
    """One mutant and where its copy is."""

    mutant: Mutant
    module: str  # the --kernel name of its copy
    folder: Path  # put on sys.path
    files: tuple[str, ...]  # the original snapshot's file(s) the change is in, as coverage names them


def _killed(why: str, stage: str, killer: dict[str, Any], crash: bool = False) -> Verdict:
    """A kill by the test `killer` names (nodeid, family, verdict); a crash when the worker or device ended in it."""
    return Verdict(classify.KILLED, why, {**killer, "crash": crash}, stage, crash=crash)


def _unreached() -> Verdict:
    """A change no test reaches: decided from the baseline's coverage alone, whatever the budget."""
    return Verdict(NO_COVERAGE, why="no test reaches the changed line(s) on this backend")


@dataclass
class _Judging:
    """One mutant being judged in a slot: its warm worker (None: started when needed), its deadline, time spent."""

    job: Job
    slot: int
    worker: WorkerProcess | None
    deadline: float
    spent: dict[str, float] = field(default_factory=dict)  # seconds by stage: compile, warm, pytest, ...

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        start = time.monotonic()
        try:
            yield
        finally:
            self.spent[stage] = self.spent.get(stage, 0.0) + time.monotonic() - start


class Engine:
    """Slots of warm workers judging mutants in parallel within a deadline; killers remembered for ordering."""

    def __init__(self, session: Session, jobs: int, out: Path, baseline: Baseline, cards: int = 0,
                 visibility_var: str | None = None, last_killers: dict[str, str] | None = None,
                 prover: Prover | None = None, per_mutant_s: float = 900.0) -> None:
        self.session, self.device, self.original = session, session.device, session.original
        self.jobs, self.out, self.base, self.per_mutant_s = max(1, jobs), out, baseline, per_mutant_s
        self.cards, self.visibility_var = cards, visibility_var
        self.killers: dict[str, str] = dict(last_killers or {})  # "operator@location" -> node id
        self.confirmed: dict[str, bool] = {}
        self.flaky: set[str] = set()
        self.lock = threading.Lock()
        self.floor = CASE_FLOOR_S.get(self.device, ACCELERATOR_FLOOR_S)
        self.prover = prover
        self.deadline = float("inf")  # run_all's; an interrupt brings it forward to now
        self.interrupted = False
        self.compile_in_slot = self.device != "cpu"  # mutate.tce: the slot's worker compiles; the CPU's interprets
        self.compilers: dict[int, WorkerProcess] = {}  # the CPU's compile-only worker of each slot

    # -- ordering -------------------------------------------------------------------------------------------
    def ordered(self, job: Job, tests: list[str]) -> list[str]:
        """Killers of this place and operator first, then the fast families (in collection order), then the rest,
        cheapest first (the original's time on each)."""
        first = self.killers.get(f"{job.mutant.operator}@{job.mutant.module}:{job.mutant.location}")
        head = [first] if first in tests else []
        fast = [c for c in tests if c in self.base.fast and c not in head]
        rest = sorted((c for c in tests if c not in self.base.fast and c not in head),
                      key=lambda c: self.base.times.get(c, 1.0))
        return head + fast + rest

    def limits(self, cases: Sequence[str]) -> dict[str, float]:
        return {c: 10 * self.base.times.get(c, 1.0) + self.floor for c in cases}

    # -- one slot -------------------------------------------------------------------------------------------
    def _worker(self, slot: int, compile_only: bool = False) -> WorkerProcess:
        card = slot % self.cards if self.cards else None
        log = self.out / "workers" / f"slot{slot}{'-compile' if compile_only else ''}.log"
        return self.session.start(log, card, self.visibility_var, self.jobs, compile_only)

    def _proof(self, j: _Judging) -> Verdict | None:
        """Compiled code's verdict on a mutant that changed a jit function (mutate.tce), asked of the slot's worker
        on a device, of its compile-only worker on the CPU; None: the tests decide. Asked after the tests passed:
        a kill needs no proof, and a kernel-body mutant's first failing test compiles one specialization, not all."""
        if self.prover is None or not j.job.mutant.jit:
            return None
        held = {"w": j.worker if self.compile_in_slot else self.compilers.pop(j.slot, None)}

        def ask(message: dict[str, Any]) -> dict[str, Any]:
            if held["w"] is None:
                fresh = self._worker(j.slot, compile_only=not self.compile_in_slot)
                problem = fresh.started()
                if problem:
                    return {"status": "error", "message": problem}
                held["w"] = fresh
            answer = held["w"].ask(message, {}, COMPILE_LIMIT_S, until=self.deadline)
            if not answer.ended:
                return answer.reply
            held["w"] = None
            if answer.budget or self.interrupted:
                return {"status": "budget", "message": "the budget ran out while compiling"}
            return {"status": "ended", "message": f"the worker {answer.ended} compiling: {answer.detail}"}

        with j.timed("compile"):
            proof = self.prover.prove(Copy(j.job.mutant.id, j.job.module, str(j.job.folder), j.job.mutant.module_name),
                                      ask)
        if self.compile_in_slot:
            j.worker = held["w"]
        elif held["w"] is not None:
            self.compilers[j.slot] = held["w"]
        return None if proof is None else Verdict(proof.status, proof.why, stage="compile", twin=proof.twin)

    def _original_passes(self, case: str, slot: int) -> bool:
        """The original passes `case` twice in one fresh worker (asked once per case): a death or hang is the
        mutant's, not a flaky case's. One worker, not two: starting one costs more than the case on a device."""
        with self.lock:
            if case in self.confirmed:
                return self.confirmed[case]
        worker = self._worker(slot)
        ok = not worker.started()
        if ok:
            answer = worker.ask({"op": "judge", "module": self.original[0], "paths": [str(self.original[1])],
                                 "cases": [case, case], "all": True}, self.limits([case]), 600.0, until=self.deadline)
            ok = not answer.ended and answer.reply.get("status") == "passed" and answer.reply.get("ran") == 2
        worker.close()
        with self.lock:
            self.confirmed[case] = ok
            if not ok:
                self.flaky.add(case)
        return ok

    def judge(self, job: Job, slot: int, worker: WorkerProcess | None, deadline: float,
              ) -> tuple[Verdict, WorkerProcess | None]:
        """One mutant through the tests that reach it, with its seconds and where they went (compile, tests)."""
        start = time.monotonic()
        j = _Judging(job, slot, worker, min(deadline, start + self.per_mutant_s))
        verdict = self._judge(j)
        verdict.seconds = time.monotonic() - start
        verdict.spent = {k: round(v, 2) for k, v in j.spent.items()}
        return verdict, j.worker

    def _judge(self, j: _Judging) -> Verdict:
        """The mutant's verdict: the tests reaching it in a warm worker, then, when they all pass, a compile proof."""
        tests = self.base.reaching(j.job.files, j.job.mutant.original_lines)
        if not tests:
            return _unreached()
        verdict = self._tests(j, tests)
        if verdict is None:
            verdict = self._proof(j)
        return verdict or Verdict(classify.SURVIVED, why=f"{len(tests)} test(s) reach it and pass", stage="tests",
                                  cases_run=len(tests))

    def _started(self, j: _Judging) -> str:
        """'' once the slot has a warm worker (started here if it had none), else why none could start."""
        if j.worker is None:
            j.worker = self._worker(j.slot)
            problem = j.worker.started()
            if problem:
                j.worker = None
                return problem
        return ""

    def _tests(self, j: _Judging, cases: list[str]) -> Verdict | None:
        """The tests reaching the change, in a warm worker (a fresh one after a death or a device fault); None when
        every test passed."""
        faults = 0
        while True:
            run = [c for c in self.ordered(j.job, cases) if c not in self.flaky]
            if not run:
                return None
            problem = self._started(j)
            if problem:
                return Verdict(classify.NOT_RUN, why=problem)
            left = j.deadline - time.monotonic()
            if left <= 5:
                return Verdict(classify.NOT_RUN, why="the budget ran out before it was judged")
            with j.timed("tests"):
                answer = j.worker.ask({"op": "judge", "module": j.job.module, "paths": [str(j.job.folder)],
                                       "cases": run}, self.limits(run), left, until=j.deadline)
            if answer.ended:
                j.worker = None
                ended = self._worker_ended(answer, j.slot, j.deadline)
                if ended is not None:
                    return ended
                continue  # the case is flaky for the original too: judged again without it
            fault = answer.reply.get("device_fault")
            if fault:  # the device context is lost: this worker judges nothing more
                j.worker.close()
                j.worker, faults = None, faults + 1
                faulted = self._device_faulted(answer, fault, faults, j.slot)
                if faulted is not None:
                    return faulted
                continue  # faulted before any case of its own failed: judged again in a fresh worker
            verdict = self._from_reply(answer)
            unplaced = [c for c, why in answer.reply.get("skipped", []) if why.startswith(UNPLACED)
                        and c not in self.base.skipped]
            if verdict.status == classify.STAGE_PASSED and unplaced:
                return Verdict(classify.NOT_RUN, why=f"{len(unplaced)} case(s) the original ran could not be placed "
                                                     f"for it (device or host memory), e.g. {unplaced[0]}")
            if verdict.status != classify.STAGE_PASSED:
                self._remember(j.job, verdict)
                return verdict
            return None

    def _worker_ended(self, answer: Answer, slot: int, deadline: float) -> Verdict | None:
        """The verdict when the worker died or hung during the cases; None when the original fails that case too."""
        if answer.budget and not self.interrupted and time.monotonic() < self.deadline - 1:
            return Verdict(classify.TIMED_OUT, why=f"stopped at the per-mutant limit ({self.per_mutant_s:.0f} s)")
        if answer.budget or self.interrupted:
            return Verdict(classify.NOT_RUN, why="the budget ran out during its run"
                           if not self.interrupted else "interrupted during its run")
        if not answer.case:
            return Verdict(classify.NOT_RUN, why=f"worker {answer.ended}: {answer.detail}")
        if answer.ended == HUNG and time.monotonic() >= deadline - 1:
            return Verdict(classify.NOT_RUN, why="the budget ran out during its run")
        if not self._original_passes(answer.case, slot):
            return None
        return _killed(f"the worker {answer.ended} in this case: {answer.detail}", "tests",
                       {"nodeid": answer.case, "family": "", "verdict": "crash" if answer.ended == DIED else "hang"},
                       crash=True)

    def _device_faulted(self, answer: Answer, fault: str, faults: int, slot: int) -> Verdict | None:
        """The verdict after a device fault in the cases; None: judged again in a fresh worker."""
        failed = answer.reply.get("failed") or []
        if failed and self._original_passes(failed[0]["nodeid"], slot):
            return _killed(f"the device faulted in this case: {fault}", "tests", {
                "nodeid": failed[0]["nodeid"], "family": failed[0].get("family", ""), "verdict": "fault"}, crash=True)
        if faults >= 2:
            return Verdict(classify.NOT_RUN, why=f"the device faulted twice during its cases: {fault}")
        return None

    def _from_reply(self, answer: Answer) -> Verdict:
        reply = answer.reply
        status = reply.get("status")
        if status == "load_error":
            return Verdict(classify.NOT_VIABLE, why=f"does not import: {reply.get('message', '')[:300]}",
                           stage="tests")
        if status == "error":
            return Verdict(classify.NOT_RUN, why=f"the worker failed: {reply.get('message', '')[-300:]}")
        if status == "passed":
            return Verdict(classify.STAGE_PASSED, cases_run=reply.get("ran", 0))
        first = reply["failed"][0]
        text = first.get("message", "")
        if classify.is_build_error(text, first.get("refusal") or ""):
            return Verdict(classify.NOT_VIABLE, why=f"build error: {(first.get('refusal') or text)[:300]}",
                           stage="tests", cases_run=reply.get("ran", 0))
        verdict = _killed(text.splitlines()[0][:300] if text else first["verdict"], "tests", {
            "nodeid": first["nodeid"], "family": first.get("family", ""), "verdict": first["verdict"]})
        verdict.cases_run = reply.get("ran", 0)
        return verdict

    def _remember(self, job: Job, verdict: Verdict) -> None:
        if verdict.status == classify.KILLED and verdict.killer:
            with self.lock:
                self.killers[f"{job.mutant.operator}@{job.mutant.module}:{job.mutant.location}"] = \
                    verdict.killer["nodeid"]

    # -- all of them ----------------------------------------------------------------------------------------
    def run_all(self, jobs: Sequence[Job], deadline: float, done: Callable[[Job, Verdict], None] | None = None,
                warm: Sequence[WorkerProcess] = ()) -> dict[str, Verdict]:
        """Every job, `self.jobs` slots at a time, each slot keeping its warm worker between mutants (slot k starts
        with warm[k], a worker already started: the baseline's)."""
        self.deadline = deadline
        for extra in warm[self.jobs:]:
            extra.close()
        todo = collections.deque(jobs)  # popleft is atomic: the slots share it without a lock
        results: dict[str, Verdict] = {}

        def slot_loop(slot: int) -> None:
            worker: WorkerProcess | None = warm[slot] if slot < len(warm) else None
            try:
                while True:
                    try:
                        job = todo.popleft()
                    except IndexError:
                        return
                    if not self.base.reaching(job.files, job.mutant.original_lines):  # decided without a worker
                        verdict = _unreached()
                    elif self.interrupted:
                        verdict = Verdict(classify.NOT_RUN, why="not started: the run was interrupted")
                    elif time.monotonic() >= self.deadline - 5:
                        verdict = Verdict(classify.NOT_RUN, why="not started within the budget")
                    else:
                        try:
                            verdict, worker = self.judge(job, slot, worker, self.deadline)
                        except Exception as exc:  # noqa: BLE001 - our own failure: the mutant is not judged
                            verdict = Verdict(classify.NOT_RUN, why=f"{type(exc).__name__}: {exc}")
                    with self.lock:
                        results[job.mutant.id] = verdict
                        if done is not None:
                            done(job, verdict)
            finally:
                if worker is not None:
                    worker.close()
                compiler = self.compilers.pop(slot, None)
                if compiler is not None:
                    compiler.close()

        threads = [threading.Thread(target=slot_loop, args=(k,), daemon=True) for k in range(self.jobs)]
        for t in threads:
            t.start()
        try:
            for t in threads:
                t.join()
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: every worker and run ends now, what was judged is kept
            self.interrupted, self.deadline = True, 0.0
            processes.stop_all()
            for t in threads:
                t.join(timeout=60)
        return results
