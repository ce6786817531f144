"""Judging mutants: the warm workers first (family cases in-process), pytest for the tests no worker runs.

Per mutant: the family cases that reach its change on the original (per-test coverage), killers of its place and
operator first, then the fast families, run in a warm worker until the first failing check; if none fails, the
other tests of the suite that reach the change (contract, aliasing, property, sweeps...) run as one pytest with
those node ids. No test reaches the change: `no_coverage`. A worker that dies or hangs in a case is a kill by a
crash (or a hang) once the original passes that case again in a fresh worker; otherwise the case is deselected
as flaky and the mutant judged again without it.
"""
from __future__ import annotations

import os
import queue
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mutate import classify
from mutate.baseline import Baseline
from mutate.classify import NO_COVERAGE, Verdict
from mutate.generate import Mutant
from mutate.pool import DIED, HUNG, Answer, WorkerProcess
from mutate.pool import stop_all as stop_workers
from mutate.suite import UNPLACED
from mutate.run import UNSTABLE, Runner, Target, run_env
from mutate.run import stop_all as stop_runs
from mutate.suite import Stage, pytest_argv
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


class Engine:
    """Slots of warm workers judging mutants in parallel within a deadline; killers remembered for ordering."""

    def __init__(self, device: str, jobs: int, out: Path, baseline: Baseline, runner: Runner,
                 original: tuple[str, Path], cards: int = 0, visibility_var: str | None = None,
                 families: tuple[str, ...] = (), last_killers: dict[str, str] | None = None,
                 prover: Prover | None = None) -> None:
        self.device, self.jobs, self.out, self.base, self.runner = device, max(1, jobs), out, baseline, runner
        self.original = original
        self.cards, self.visibility_var, self.families = cards, visibility_var, families
        self.killers: dict[str, str] = dict(last_killers or {})  # "operator@location" -> node id
        self.confirmed: dict[str, bool] = {}
        self.flaky: set[str] = set()
        self.lock = threading.Lock()
        self.floor = CASE_FLOOR_S.get(device, ACCELERATOR_FLOOR_S)
        self.prover = prover
        self.deadline = float("inf")  # run_all's; an interrupt brings it forward to now
        self.interrupted = False
        self.prove_first = device != "cpu"  # see mutate.tce: compiles are free on a device, dear under the interpreter
        self.compilers: dict[int, WorkerProcess] = {}  # the CPU's compile-only worker of each slot

    # -- ordering -------------------------------------------------------------------------------------------
    def ordered(self, job: Job, cases: list[str]) -> list[str]:
        """Killers of this place and operator first, then the fast families, then the rest (each in table order)."""
        first = self.killers.get(f"{job.mutant.operator}@{job.mutant.module}:{job.mutant.location}")
        head = [first] if first in cases else []
        fast = [c for c in cases if c in self.base.fast and c not in head]
        return head + fast + [c for c in cases if c not in self.base.fast and c not in head]

    def limits(self, cases: Sequence[str]) -> dict[str, float]:
        return {c: 10 * self.base.times.get(c, 1.0) + self.floor for c in cases}

    # -- one slot -------------------------------------------------------------------------------------------
    def _worker(self, slot: int, compile_only: bool = False) -> WorkerProcess:
        card = slot % self.cards if self.cards else None
        log = self.out / "workers" / f"slot{slot}{'-compile' if compile_only else ''}.log"
        return WorkerProcess(self.device, run_env(self.device, card, self.visibility_var), log, self.families,
                             compile_only=compile_only, threads=max(1, (os.cpu_count() or 1) // self.jobs))

    def _prove(self, job: Job, slot: int, worker: WorkerProcess | None) -> tuple[Verdict | None, WorkerProcess | None]:
        """Compiled code's verdict on a kernel mutant (mutate.tce), asked of the slot's worker on a device, of its
        compile-only worker on the CPU; None: the tests decide."""
        assert self.prover is not None
        start = time.monotonic()
        holder = {"w": worker}

        def ask(message: dict[str, Any]) -> dict[str, Any]:
            w = holder["w"] if self.prove_first else self.compilers.get(slot)
            if w is None:
                w = self._worker(slot, compile_only=not self.prove_first)
                problem = w.started()
                if problem:
                    return {"status": "error", "message": problem}
            if self.prove_first:
                holder["w"] = w
            else:
                self.compilers[slot] = w
            answer = w.ask(message, {}, COMPILE_LIMIT_S, until=self.deadline)
            if answer.ended and (answer.budget or self.interrupted):
                holder["w"] = None if self.prove_first else holder["w"]
                self.compilers.pop(slot, None)
                return {"status": "budget", "message": "the budget ran out while compiling"}
            if answer.ended:
                holder["w"] = None if self.prove_first else holder["w"]
                self.compilers.pop(slot, None)
                return {"status": "ended", "message": f"the worker {answer.ended} compiling: {answer.detail}"}
            return answer.reply

        proof = self.prover.prove(Copy(job.mutant.id, job.module, str(job.folder), job.mutant.module_name), ask)
        if proof is None:
            return None, holder["w"]
        return Verdict(proof.status, proof.why, stage="compile", seconds=time.monotonic() - start,
                       twin=proof.twin), holder["w"]

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
        """One mutant through the warm stage and, if it lives, the pytest tests that reach it; with its seconds
        and where they went (compile, warm, pytest)."""
        start = time.monotonic()
        spent: dict[str, float] = {}
        verdict, worker = self._judge(job, slot, worker, deadline, spent)
        verdict.seconds = time.monotonic() - start
        verdict.spent = {k: round(v, 2) for k, v in spent.items()}
        return verdict, worker

    def _judge(self, job: Job, slot: int, worker: WorkerProcess | None, deadline: float, spent: dict[str, float],
               ) -> tuple[Verdict, WorkerProcess | None]:
        """The mutant's verdict: the family cases reaching it in a warm worker, a compile proof (before the cases on
        a device, after them under the interpreter), then the other tests reaching it."""
        start = time.monotonic()

        def lap(name: str, since: float) -> None:
            spent[name] = spent.get(name, 0.0) + time.monotonic() - since

        cases, rest = self.base.reaching(job.files, job.mutant.original_lines)
        if not cases and not rest:
            return Verdict(NO_COVERAGE, why="no test reaches the changed line(s) on this backend"), worker
        if self.prove_first:
            proved, worker = self._try_proof(job, slot, worker, lap)
            if proved is not None:
                return proved, worker
        verdict, worker = self._warm_cases(job, cases, slot, worker, deadline, start, lap)
        if verdict is not None:
            return verdict, worker
        if not self.prove_first:
            proved, worker = self._try_proof(job, slot, worker, lap)
            if proved is not None:
                return proved, worker
        return self._other_tests(job, len(cases), rest, slot, worker, deadline, start, lap)

    def _try_proof(self, job: Job, slot: int, worker: WorkerProcess | None, lap: Callable[[str, float], None]
                   ) -> tuple[Verdict | None, WorkerProcess | None]:
        """The compiled-code proof (mutate.tce) of a mutant that changed a jit function; None: nothing proved."""
        if self.prover is None or not job.mutant.jit:
            return None, worker
        t0 = time.monotonic()
        proved, worker = self._prove(job, slot, worker)
        lap("compile", t0)
        return proved, worker

    def _warm_cases(self, job: Job, cases: list[str], slot: int, worker: WorkerProcess | None, deadline: float,
                    start: float, lap: Callable[[str, float], None]) -> tuple[Verdict | None, WorkerProcess | None]:
        """The family cases reaching the change, in a warm worker (a fresh one after a death or a device fault);
        None when every case passed."""
        faults = 0
        while True:
            run = [c for c in self.ordered(job, cases) if c not in self.flaky]
            if not run:
                return None, worker
            if worker is None:
                worker = self._worker(slot)
                problem = worker.started()
                if problem:
                    return Verdict(classify.NOT_RUN, why=problem), None
            left = deadline - time.monotonic()
            if left <= 5:
                return Verdict(classify.NOT_RUN, why="the budget ran out before it was judged"), worker
            t0 = time.monotonic()
            answer = worker.ask({"op": "judge", "module": job.module, "paths": [str(job.folder)], "cases": run},
                                self.limits(run), left, until=self.deadline)
            lap("warm", t0)
            if answer.ended:
                worker = None
                ended = self._worker_ended(answer, slot, deadline, start)
                if ended is not None:
                    return ended, None
                continue  # the case is flaky for the original too: judged again without it
            fault = answer.reply.get("device_fault")
            if fault:  # the device context is lost: this worker judges nothing more
                worker.close()
                worker, faults = None, faults + 1
                faulted = self._device_faulted(answer, fault, faults, slot, start)
                if faulted is not None:
                    return faulted, None
                continue  # faulted before any case of its own failed: judged again in a fresh worker
            verdict = self._from_reply(answer)
            verdict.seconds = time.monotonic() - start
            unplaced = [c for c, why in answer.reply.get("skipped", []) if why.startswith(UNPLACED)
                        and c not in self.base.skipped]
            if verdict.status == classify.STAGE_PASSED and unplaced:
                return Verdict(classify.NOT_RUN, why=f"{len(unplaced)} case(s) the original ran could not be placed "
                                                     f"for it (device or host memory), e.g. {unplaced[0]}"), worker
            if verdict.status != classify.STAGE_PASSED:
                self._remember(job, verdict)
                return verdict, worker
            return None, worker

    def _worker_ended(self, answer: Answer, slot: int, deadline: float, start: float) -> Verdict | None:
        """The verdict when the worker died or hung during the cases; None when the original fails that case too."""
        if answer.budget or self.interrupted:
            return Verdict(classify.NOT_RUN, why="the budget ran out during its run"
                           if not self.interrupted else "interrupted during its run")
        if not answer.case:
            return Verdict(classify.NOT_RUN, why=f"worker {answer.ended}: {answer.detail}")
        if answer.ended == HUNG and time.monotonic() >= deadline - 1:
            return Verdict(classify.NOT_RUN, why="the budget ran out during its run")
        if not self._original_passes(answer.case, slot):
            return None
        how = "crash" if answer.ended == DIED else "hang"
        return Verdict(classify.KILLED, why=f"the worker {answer.ended} in this case: {answer.detail}",
                       killer={"nodeid": answer.case, "family": "", "verdict": how, "crash": True},
                       stage="warm", seconds=time.monotonic() - start, crash=True)

    def _device_faulted(self, answer: Answer, fault: str, faults: int, slot: int, start: float) -> Verdict | None:
        """The verdict after a device fault in the cases; None: judged again in a fresh worker."""
        failed = answer.reply.get("failed") or []
        if failed and self._original_passes(failed[0]["nodeid"], slot):
            return Verdict(classify.KILLED, why=f"the device faulted in this case: {fault}",
                           killer={"nodeid": failed[0]["nodeid"], "family": failed[0].get("family", ""),
                                   "verdict": "fault", "crash": True},
                           stage="warm", seconds=time.monotonic() - start, crash=True)
        if faults >= 2:
            return Verdict(classify.NOT_RUN, why=f"the device faulted twice during its cases: {fault}")
        return None

    def _other_tests(self, job: Job, n_cases: int, rest: list[str], slot: int, worker: WorkerProcess | None,
                     deadline: float, start: float, lap: Callable[[str, float], None]
                     ) -> tuple[Verdict, WorkerProcess | None]:
        """The pytest stage: the other tests reaching the change, in the warm worker, else an isolated pytest."""
        rest = [t for t in rest if t not in self.runner.flaky]
        if not rest:
            return Verdict(classify.SURVIVED, why=f"{n_cases} case(s) reach it and pass",
                           seconds=time.monotonic() - start), worker
        t0 = time.monotonic()
        status, worker = self._rest_in_worker(job, rest, slot, worker, deadline)
        lap("pytest", t0)
        if status is None:  # the isolated pytest decides
            t0 = time.monotonic()
            status = self.runner.run(Target(job.module, (job.folder,), job.mutant.id), self.out / "mutants" /
                                     job.mutant.id / "runs", stages=(Stage("rest", tuple(rest)),)).status
            lap("pytest isolated", t0)
        killer = ({"nodeid": status.nodeid, "family": status.family, "verdict": status.verdict,
                   "crash": status.crash} if status.outcome == classify.KILLED else None)
        verdict = Verdict(classify.SURVIVED if status.outcome == classify.STAGE_PASSED else status.outcome,
                          status.why, killer, "pytest", time.monotonic() - start, n_cases, status.crash)
        self._remember(job, verdict)
        return verdict, worker

    def _rest_in_worker(self, job: Job, rest: list[str], slot: int, worker: WorkerProcess | None, deadline: float
                        ) -> tuple[classify.StageResult | None, WorkerProcess | None]:
        """The other tests in the slot's warm worker (pytest.main, --nan-in-process): a kill or a pass as a
        separate pytest would say it; None (and the isolated pytest decides) when the worker ends, the run does
        not finish or its first failure is a crash, fault or timeout (those need the isolated run's confirmation)."""
        if worker is None:
            worker = self._worker(slot)
            if worker.started():
                return None, None
        s = self.runner.settings
        run_id = uuid.uuid4().hex
        folder = self.out / "mutants" / job.mutant.id / "runs" / "rest-warm"
        argv = pytest_argv(Stage("rest", tuple(rest)), kernel=job.module, kernel_paths=(job.folder,),
                           device=self.device, folder=folder, first_failure=True, run_id=run_id,
                           deselect=(*s.deselect, *sorted(self.runner.flaky)), extra=s.extra, in_process=True)
        limit = min(s.per_run_s, deadline - time.monotonic())
        answer = worker.ask({"op": "pytest", "argv": argv, "module": job.module}, {}, max(1.0, limit),
                            until=self.deadline)
        if answer.ended:
            return None, None
        if answer.reply.get("device_fault"):  # the isolated pytest decides; this worker's device is lost
            worker.close()
            return None, None
        if answer.reply.get("status") != "ran":
            return None, worker
        status = classify.classify_stage(folder, run_id, answer.reply["code"], first_failure=True)
        if status.outcome not in (classify.KILLED, classify.STAGE_PASSED) or status.verdict in UNSTABLE:
            return None, worker
        return status, worker

    def _from_reply(self, answer: Answer) -> Verdict:
        reply = answer.reply
        status = reply.get("status")
        if status == "load_error":
            return Verdict(classify.NOT_VIABLE, why=f"does not import: {reply.get('message', '')[:300]}",
                           stage="warm")
        if status == "error":
            return Verdict(classify.NOT_RUN, why=f"the worker failed: {reply.get('message', '')[-300:]}")
        if status == "passed":
            return Verdict(classify.STAGE_PASSED, cases_run=reply.get("ran", 0))
        first = reply["failed"][0]
        text = first.get("message", "")
        if classify.is_build_error(text, first.get("refusal") or ""):
            return Verdict(classify.NOT_VIABLE, why=f"build error: {(first.get('refusal') or text)[:300]}",
                           stage="warm", cases_run=reply.get("ran", 0))
        return Verdict(classify.KILLED, why=text.splitlines()[0][:300] if text else first["verdict"],
                       killer={"nodeid": first["nodeid"], "family": first.get("family", ""),
                               "verdict": first["verdict"], "crash": False},
                       stage="warm", cases_run=reply.get("ran", 0))

    def _remember(self, job: Job, verdict: Verdict) -> None:
        if verdict.status == classify.KILLED and verdict.killer:
            with self.lock:
                self.killers[f"{job.mutant.operator}@{job.mutant.module}:{job.mutant.location}"] = \
                    verdict.killer["nodeid"]

    # -- all of them ----------------------------------------------------------------------------------------
    def run_all(self, jobs: Sequence[Job], deadline: float,
                done: Callable[[Job, Verdict], None] | None = None) -> dict[str, Verdict]:
        """Every job, `self.jobs` slots at a time, each slot keeping its warm worker between mutants."""
        self.deadline = deadline
        todo: queue.Queue[Job] = queue.Queue()
        for job in jobs:
            todo.put(job)
        results: dict[str, Verdict] = {}

        def slot_loop(slot: int) -> None:
            worker: WorkerProcess | None = None
            try:
                while True:
                    try:
                        job = todo.get_nowait()
                    except queue.Empty:
                        return
                    if self.interrupted:
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
            self.interrupted, self.deadline, self.runner.deadline = True, 0.0, 0.0
            stop_workers()
            stop_runs()
            for t in threads:
                t.join(timeout=60)
        return results
