"""Running the suite on mutants: one pytest per mutant and stage, in parallel, within one time budget.

Each worker slot runs one mutant at a time; on an accelerator slot k sees only card k mod cards, through the
backend's card-visibility variable (harness.backends), as the suite pins its own workers. A run is stopped at the
per-mutant limit (status timeout) or at the budget's end (not run): neither is ever a kill or a survival.
"""
from __future__ import annotations

import queue
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from harness import processes
from harness.cli import home
from mutate import classify
from mutate.classify import StageResult
from mutate.suite import Stage, pytest_argv
from verdict.record import CRASH, DEVICE_FAULT, FAILED_OUTCOMES, TIMEOUT

# an outer pytest's variables never reach a stage
_DROP_PREFIXES = (*processes.PYTEST_VARS, "COV_", "GITHUB_STEP_SUMMARY")
STOP_GRACE_S = 20.0  # a stopped stage's pytest: SIGTERM, then this long to write its reports before SIGKILL
INTERNAL_ERROR = 3  # pytest's exit status when it fails before or around the tests
UNSTABLE = frozenset({CRASH, DEVICE_FAULT, TIMEOUT})  # verdicts a flaky original could also give: kills confirmed
CONFIRM_RERUNS = 2  # stage reruns after a kill the original does not confirm


@dataclass(frozen=True)
class Target:
    """What to put under test: a module name and the folders to import it from (a mutant's own folder first)."""

    kernel: str
    paths: tuple[Path, ...] = ()
    label: str = ""  # a mutant id, or "original"


@dataclass
class Outcome:
    """What the stages of one target said, and how long they took."""

    target: Target
    stages: list[StageResult] = field(default_factory=list)
    stage_names: list[str] = field(default_factory=list)
    seconds: float = 0.0
    card: int | None = None
    failed_ids: list[str] = field(default_factory=list)  # every failing test (baseline runs without -x)

    @property
    def status(self) -> StageResult:
        return classify.final_status(self.stages)


@dataclass(frozen=True)
class Settings:
    """How runs are made: device, slots, pinning, limits, and what every run deselects."""

    device: str
    out: Path
    jobs: int = 1
    cards: int = 0  # accelerator cards to spread slots over (0: no pinning)
    visibility_var: str | None = None
    per_run_s: float = 900.0
    deselect: tuple[str, ...] = ()
    extra: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()  # variables every run also gets (e.g. where coverage is written)


def run_env(device: str, card: int | None, visibility_var: str | None) -> dict[str, str]:
    """A clean environment for one sub-run: no outer pytest variables; pinned to one card; compiled kernels on an
    accelerator (no interpreter variable left over)."""
    env = processes.child_env(_DROP_PREFIXES)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if device != "cpu":
        env.pop("TRITON_INTERPRET", None)
    if card is not None and visibility_var:
        env[visibility_var] = str(card)
    return env


_LIVE: set[subprocess.Popen[bytes]] = set()  # runs in flight, ended by stop_all when this tool is interrupted
_LIVE_LOCK = threading.Lock()


def stop_all() -> None:
    """End every run this process started and has not reaped (each by its own process group)."""
    with _LIVE_LOCK:
        live = list(_LIVE)
    for proc in live:
        processes.stop_group(proc, STOP_GRACE_S)


def run_stage(argv: list[str], folder: Path, env: dict[str, str], limit_s: float) -> tuple[int | None, bool]:
    """Run one stage's pytest with output into folder/output.txt; (exit status, stopped at the limit)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "command.txt").write_text(" ".join(argv) + "\n", encoding="utf-8")
    with open(folder / "output.txt", "wb") as log:
        proc = subprocess.Popen(argv, cwd=home(), env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
        with _LIVE_LOCK:
            _LIVE.add(proc)
        try:
            code = proc.wait(timeout=max(1.0, limit_s))
        except subprocess.TimeoutExpired:
            processes.stop_group(proc, STOP_GRACE_S)
            return None, True
        finally:
            with _LIVE_LOCK:
                _LIVE.discard(proc)
    (folder / "returncode").write_text(str(code), encoding="utf-8")
    return code, False


class Runner:
    """Runs targets through the stages with a shared deadline; slots pin cards."""

    def __init__(self, settings: Settings, stages: Sequence[Stage], deadline: float,
                 stage_runner: Callable[[list[str], Path, dict[str, str], float], tuple[int | None, bool]] = run_stage,
                 confirm: Callable[[str], bool] | None = None):
        self.settings, self.stages, self.deadline, self.stage_runner = settings, tuple(stages), deadline, stage_runner
        self.confirm = confirm  # nodeid -> the original passes it again (None: kills are not confirmed)
        self.confirmed: dict[str, bool] = {}
        self.flaky: set[str] = set()  # tests the original failed on confirmation: deselected for later runs
        self.confirm_lock = threading.Lock()
        self.slots: queue.Queue[int] = queue.Queue()
        for k in range(max(1, settings.jobs)):
            self.slots.put(k)
        self.lock = threading.Lock()

    def left(self) -> float:
        return self.deadline - time.monotonic()

    def _stage(self, stage: Stage, target: Target, sub: Path, card: int | None, first_failure: bool,
               deselect: Sequence[str]) -> tuple[StageResult, str]:
        """One stage's run and what it says; (result, run id)."""
        s = self.settings
        run_id = uuid.uuid4().hex
        argv = pytest_argv(stage, kernel=target.kernel, kernel_paths=target.paths, device=s.device, folder=sub,
                           first_failure=first_failure, run_id=run_id, deselect=deselect, extra=s.extra)
        limit = min(s.per_run_s, self.left())
        env = {**run_env(s.device, card, s.visibility_var), **dict(s.env)}
        code, stopped = self.stage_runner(argv, sub, env, limit)
        if code == INTERNAL_ERROR and not (classify.read_results(sub, run_id)[0] or {}).get("cases"):
            # pytest failed before it ran anything (e.g. a plugin tripping over a package being installed next
            # to us): once more, then it stays not run
            code, stopped = self.stage_runner(argv, sub, env, min(s.per_run_s, self.left()))
        budget_stop = stopped and limit < s.per_run_s
        result = classify.classify_stage(sub, run_id, code, timed_out=stopped and not budget_stop,
                                         first_failure=first_failure)
        if budget_stop:
            result = StageResult(classify.NOT_RUN, why="the budget ran out during its run")
        return result, run_id

    def original_passes(self, nodeid: str) -> bool:
        """Whether the original passes `nodeid` on every confirmation run (asked once per test, then remembered)."""
        with self.confirm_lock:
            if nodeid not in self.confirmed:
                self.confirmed[nodeid] = self.confirm(nodeid) if self.confirm else True
                if not self.confirmed[nodeid]:
                    self.flaky.add(nodeid)
            return self.confirmed[nodeid]

    def run(self, target: Target, folder: Path, *, first_failure: bool = True,
            stages: Sequence[Stage] | None = None) -> Outcome:
        """Every stage in order until one does not pass (with first_failure, each stops at its first failure).
        A kill by a crash, fault or timeout-like verdict is confirmed: the original must pass that test again;
        if it does not, the test is flaky for the original, it is deselected from then on and the stage reruns."""
        slot = self.slots.get()
        s = self.settings
        card = slot % s.cards if s.cards else None
        outcome = Outcome(target, card=card)
        start = time.monotonic()
        try:
            for stage in (self.stages if stages is None else stages):
                if self.left() <= 5:
                    outcome.stages.append(StageResult(classify.NOT_RUN, why="the budget ran out before this stage"))
                    outcome.stage_names.append(stage.name)
                    break
                for attempt in range(CONFIRM_RERUNS + 1):
                    deselect = (*s.deselect, *sorted(self.flaky))
                    sub = folder / (stage.name if attempt == 0 else f"{stage.name}-rerun{attempt}")
                    result, run_id = self._stage(stage, target, sub, card, first_failure, deselect)
                    if not (first_failure and result.outcome == classify.KILLED and result.verdict in UNSTABLE
                            and self.confirm is not None) or self.original_passes(result.nodeid):
                        break
                outcome.stages.append(result)
                outcome.stage_names.append(stage.name)
                if not first_failure:
                    outcome.failed_ids += failing_ids(sub, run_id)
                if result.outcome != classify.STAGE_PASSED and first_failure:
                    break
        finally:
            outcome.seconds = time.monotonic() - start
            self.slots.put(slot)
        return outcome

    def run_many(self, targets: Sequence[tuple[Target, Path]],
                 done: Callable[[Outcome], None] | None = None) -> list[Outcome]:
        """Targets in parallel, one per slot, in the order given; those the budget leaves out are not run."""
        def one(item: tuple[Target, Path]) -> Outcome:
            target, folder = item
            if self.left() <= 5:
                result = Outcome(target, [StageResult(classify.NOT_RUN, why="not started within the budget")],
                                 ["-"])
            else:
                result = self.run(target, folder)
            if done is not None:
                with self.lock:
                    done(result)
            return result

        pool = ThreadPoolExecutor(max_workers=max(1, self.settings.jobs))
        try:
            futures = [pool.submit(one, t) for t in targets]
            return [f.result() for f in futures]
        except BaseException:  # Ctrl-C, SIGTERM: nothing new starts, the runs in flight end
            self.deadline = 0.0
            stop_all()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def confirm_with(settings: Settings, original: Target, folder: Path, times: int = 2,
                 stage_runner: Callable[[list[str], Path, dict[str, str], float], tuple[int | None, bool]] = run_stage
                 ) -> Callable[[str], bool]:
    """A confirmer: the original runs one test `times` times (card 0); True when it passes every time."""
    def confirm(nodeid: str) -> bool:
        for k in range(times):
            run_id = uuid.uuid4().hex
            sub = folder / f"{uuid.uuid5(uuid.NAMESPACE_URL, nodeid).hex[:10]}-{k}"
            argv = pytest_argv(Stage("confirm", (nodeid,)), kernel=original.kernel, kernel_paths=original.paths,
                               device=settings.device, folder=sub, first_failure=False, run_id=run_id,
                               extra=settings.extra)
            card = 0 if settings.cards else None
            code, stopped = stage_runner(argv, sub, run_env(settings.device, card, settings.visibility_var),
                                         settings.per_run_s)
            if classify.classify_stage(sub, run_id, code, stopped, first_failure=False).outcome \
                    != classify.STAGE_PASSED:
                print(f"mutate: the original fails {nodeid} too (run {k + 1}): deselected from now on", flush=True)
                return False
        return True

    return confirm


def failing_ids(folder: Path, run_id: str) -> list[str]:
    """Node ids of every failing test of a finished run (the original's own failures are not the mutants')."""
    doc, _ = classify.read_results(folder, run_id)
    if doc is None:
        return []
    return [c["nodeid"] for c in doc.get("cases", []) if c.get("outcome") in FAILED_OUTCOMES]
