"""The pytest sub-run: what the suite runs on a mutant (stages, each a pytest selection over the suite, harness.cli)
and running it, one pytest per target and stage, in parallel, within one time budget.

A target runs stage after stage and stops at its first failure (-x): the fast stage (matrix, specials, IEEE,
layouts) kills most mutants in seconds; the rest runs only for those it leaves alive, contract tests first.
Each slot runs one target at a time; on an accelerator slot k sees only card k mod cards, through the backend's
card-visibility variable (harness.backends). A run is stopped at the per-mutant limit (status timeout) or at the
budget's end (not run): neither is ever a kill or a survival.
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

from harness import cli, processes
from mutate import classify
from mutate.classify import StageResult
from verdict.record import CRASH, DEVICE_FAULT, FAILED_OUTCOMES, TIMEOUT

# an outer pytest's variables never reach a stage
_DROP_PREFIXES = (*processes.PYTEST_VARS, "COV_", "GITHUB_STEP_SUMMARY")
STOP_GRACE_S = 20.0  # a stopped stage's pytest: SIGTERM, then this long to write its reports before SIGKILL
INTERNAL_ERROR = 3  # pytest's exit status when it fails before or around the tests
UNSTABLE = frozenset({CRASH, DEVICE_FAULT, TIMEOUT})  # verdicts a flaky original could also give: kills confirmed
CONFIRM_RERUNS = 2  # stage reruns after a kill the original does not confirm
ROOT = Path(__file__).resolve().parents[1]  # the folder above the packages: the checkout, or site-packages
FOLDER = cli.suite()  # tests/precision in a checkout, the package harness.suite installed
SUITE = cli.suite_id(FOLDER)  # the folder as node ids begin (they are relative to the folder above it)
FAST_FAMILY_MARKERS = ("nan_matrix", "nan_special", "nan_ieee", "nan_layout")  # families that kill most mutants
FAST_MARKERS = " or ".join(FAST_FAMILY_MARKERS)
FAMILY_FILE = "test_families.py"  # the one test every family case runs in (mutation workers run those in-process)
FAMILY_TEST = f"{SUITE}/{FAMILY_FILE}::test_case"  # its node id, less the case's parameters
# files of the rest, cheapest and most wrapper-judging first; any other file of the suite follows in name order
REST_ORDER = ("test_wrapper_contract.py", "test_aliasing.py", "test_aggregate.py", "test_families.py",
              "test_generated_property.py", "test_sweeps.py", "test_execution_semantics.py")
UNPLACED = "cannot place the input"  # a warm worker skipped the case for memory: the mutant is not judged on it
CASES_DIR_VAR = "MUTATE_CASES_DIR"  # where a run's workers share built cases (set by mutate.cli per suite revision)
LAUNCH_MEMO_VAR = "MUTATE_LAUNCH_MEMO"  # "0": every interpreted launch runs (mutate.launch_memo off)


def nodeid(case_id: str, path: str) -> str:
    """The pytest node id of one family case through one path: warm judge and pytest name a killer alike."""
    return f"{FAMILY_TEST}[{case_id}-{path}]"


@dataclass(frozen=True)
class Stage:
    """One pytest selection: a name for reports, the tests (node ids or files, as node ids name them) and options
    that narrow them (e.g. -m)."""

    name: str
    tests: tuple[str, ...]
    options: tuple[str, ...] = ()


def suite_files() -> list[str]:
    """The suite's test files, in REST_ORDER first, then the others by name."""
    files = sorted(p.name for p in FOLDER.glob("test_*.py"))
    ordered = [f for f in REST_ORDER if f in files] + [f for f in files if f not in REST_ORDER]
    return [f"{SUITE}/{f}" for f in ordered]


def other_tests() -> list[str]:
    """The suite's files other than the family test, in REST_ORDER: what pytest runs for a mutant the warm
    workers leave alive."""
    return [f for f in suite_files() if not f.endswith("/" + FAMILY_FILE)]


def full_suite() -> tuple[Stage, ...]:
    """The whole suite in two stages: the fast families, then everything else for the survivors."""
    return (Stage("fast", (SUITE,), ("-m", FAST_MARKERS)),
            Stage("rest", tuple(suite_files()), ("-m", f"not ({FAST_MARKERS})")))


def selected_suite(marker_expr: str) -> tuple[Stage, ...]:
    """A one-stage suite narrowed by a marker expression (e.g. a deliberately weakened `nan_matrix`)."""
    return (Stage("selected", (SUITE,), ("-m", marker_expr)),)


def pytest_argv(stage: Stage, *, kernel: str, kernel_paths: Sequence[Path], device: str, folder: Path,
                first_failure: bool, run_id: str, deselect: Sequence[str] = (), extra: Sequence[str] = (),
                in_process: bool = False) -> list[str]:
    """One stage as a command (`nan-harness`'s pytest command, harness.cli, from any folder): its own reports,
    basetemp and one xdist worker (the kernel never runs in the deciding process); -x stops at the first failure.
    in_process: the arguments of pytest.main in a warm worker (no interpreter in front, no xdist worker: the
    worker's caller isolates it)."""
    isolation = ["--nan-in-process"] if in_process else ["-n", "1", "--max-worker-restart", "4"]
    pages = [f"--html={folder / 'precision.html'}", f"--junitxml={folder / 'junit.xml'}"]
    argv = ["--device", device, "-q", *isolation, f"--basetemp={folder / 'tmp'}", *pages,
            f"--nan-json={folder / 'results.json'}", f"--nan-run-id={run_id}", "--nan-reruns=0",  # a kill is a kill
            "--kernel", kernel, *stage.options]
    for path in kernel_paths:
        argv += ["--kernel-path", str(path)]
    if first_failure:
        argv.append("-x")
    for test in deselect:
        argv += ["--deselect", test]
    if in_process:
        return cli.arguments([*argv, *extra], FOLDER, stage.tests)
    return cli.command([*argv, *extra], stage.tests, FOLDER)


@dataclass(frozen=True)
class Target:
    """What to put under test: a module name and the folders to import it from (a mutant's own folder first)."""

    kernel: str
    paths: tuple[Path, ...] = ()


@dataclass
class Outcome:
    """What the stages of one target said, and how long they took."""

    stages: list[StageResult] = field(default_factory=list)
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


def run_stage(argv: list[str], folder: Path, env: dict[str, str], limit_s: float) -> tuple[int | None, bool]:
    """Run one stage's pytest with output into folder/output.txt; (exit status, stopped at the limit)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "command.txt").write_text(" ".join(argv) + "\n", encoding="utf-8")
    with open(folder / "output.txt", "wb") as log:
        proc = processes.spawn(argv, cwd=cli.home(), env=env, grace_s=STOP_GRACE_S, stdout=log,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        try:
            code = proc.wait(timeout=max(1.0, limit_s))
        except subprocess.TimeoutExpired:
            return None, True
        finally:
            processes.stop(proc)
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
        if code == INTERNAL_ERROR and not getattr(classify.read_results(sub, run_id)[0], "records", ()):
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
        outcome = Outcome(card=card)
        start = time.monotonic()
        try:
            for stage in (self.stages if stages is None else stages):
                if self.left() <= 5:
                    outcome.stages.append(StageResult(classify.NOT_RUN, why="the budget ran out before this stage"))
                    break
                for attempt in range(CONFIRM_RERUNS + 1):
                    deselect = (*s.deselect, *sorted(self.flaky))
                    sub = folder / (stage.name if attempt == 0 else f"{stage.name}-rerun{attempt}")
                    result, run_id = self._stage(stage, target, sub, card, first_failure, deselect)
                    if not (first_failure and result.outcome == classify.KILLED and result.verdict in UNSTABLE
                            and self.confirm is not None) or self.original_passes(result.nodeid):
                        break
                outcome.stages.append(result)
                if not first_failure:
                    outcome.failed_ids += failing_ids(sub, run_id)
                if result.outcome != classify.STAGE_PASSED and first_failure:
                    break
        finally:
            outcome.seconds = time.monotonic() - start
            self.slots.put(slot)
        return outcome

    def run_many(self, targets: Sequence[tuple[Target, Path]]) -> list[Outcome]:
        """Targets in parallel, one per slot, in the order given; those the budget leaves out are not run."""
        def one(item: tuple[Target, Path]) -> Outcome:
            if self.left() <= 5:
                return Outcome([StageResult(classify.NOT_RUN, why="not started within the budget")])
            return self.run(*item)

        pool = ThreadPoolExecutor(max_workers=max(1, self.settings.jobs))
        try:
            return [f.result() for f in [pool.submit(one, t) for t in targets]]
        except BaseException:  # Ctrl-C, SIGTERM: nothing new starts, the runs in flight end
            self.deadline = 0.0
            processes.stop_all()
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def confirm_with(settings: Settings, original: Target, folder: Path) -> Callable[[str], bool]:
    """A confirmer: the original runs one test twice (card 0); True when it passes both times."""
    def confirm(nodeid: str) -> bool:
        for k in range(2):
            run_id = uuid.uuid4().hex
            sub = folder / f"{uuid.uuid5(uuid.NAMESPACE_URL, nodeid).hex[:10]}-{k}"
            argv = pytest_argv(Stage("confirm", (nodeid,)), kernel=original.kernel, kernel_paths=original.paths,
                               device=settings.device, folder=sub, first_failure=False, run_id=run_id,
                               extra=settings.extra)
            env = run_env(settings.device, 0 if settings.cards else None, settings.visibility_var)
            code, stopped = run_stage(argv, sub, env, settings.per_run_s)
            if classify.classify_stage(sub, run_id, code, stopped, first_failure=False).outcome \
                    != classify.STAGE_PASSED:
                print(f"mutate: the original fails {nodeid} too (run {k + 1}): deselected from now on", flush=True)
                return False
        return True

    return confirm


def failing_ids(folder: Path, run_id: str) -> list[str]:
    """Node ids of every failing test of a finished run (the original's own failures are not the mutants')."""
    run, _ = classify.read_results(folder, run_id)
    return [] if run is None else [r.nodeid for r in run.records if r.outcome in FAILED_OUTCOMES]
