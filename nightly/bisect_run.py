"""One step of `python -m nightly.bisect`: the suite at the worktree's HEAD, judged good, bad or skip for `git bisect
run` (`python -m nightly.bisect --step STATE`), and the git and exit-status vocabulary the bisect shares with it."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from harness import cli, processes
from reports import markdown
from reports.results import OtherRun, ResultsError, load_run

STATE_SCHEMA = "nan-harness-bisect-state/1"

EXIT_FOUND = 0
EXIT_UNDECIDED = 1
EXIT_USAGE = 2
EXIT_NOT_BRACKETED = 3
EXIT_NOT_JUDGED = 4
EXIT_INTERRUPTED = 130

# what a step tells `git bisect run`
GOOD, BAD, SKIP, ABORT = 0, 1, 125, 128
WORDS = {GOOD: "good", BAD: "bad", SKIP: "skip", ABORT: "abort"}
PYTEST_EXITS = {2: "interrupted", 3: "internal error", 4: "usage error", 5: "no tests collected"}
REPORTS = ("results.json", "precision.html", "junit.xml", "summary.md", "harness.log")
STOP_GRACE_S = 60.0  # a child stopped on the way out: SIGTERM, then this long to end before SIGKILL
# what `git bisect run` exports to its command (GIT_DIR: the worktree's git folder, with no work tree): with them, git
# in a sub-folder of the checkout, e.g. the suite asking for the kernel file's commit, finds no commit
GIT_LOCATING = ("GIT_DIR", "GIT_WORK_TREE", "GIT_PREFIX", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_OBJECT_DIRECTORY")


class BisectError(RuntimeError):
    """Something that stops the bisect, with its exit status."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


# -- the judge ----------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Judgement:
    """One run judged: GOOD, BAD or SKIP, why, and the failing node ids (a bad run's selection for the others)."""

    code: int
    why: str
    failing: tuple[str, ...] = ()

    @property
    def word(self) -> str:
        return WORDS[self.code]


def judge(exitstatus: int, results_path: Path, run_id: str | None, selection: Sequence[str] | None,
          checkout: Path | None = None) -> Judgement:
    """A run's verdict for the bisect, from pytest's exit status and the results.json the run wrote.

    selection: the node ids the run was asked for (None: the whole selection of a first run, where tests that were
    not run, e.g. not_run on this backend, are normal). checkout: where the kernel must have been imported from
    (the run's environment "Kernel file"). Anything that is not a finished run with an answer is SKIP."""
    if exitstatus not in (0, 1):
        how = PYTEST_EXITS.get(exitstatus) or (f"killed by signal {-exitstatus}" if exitstatus < 0 else "")
        return Judgement(SKIP, f"pytest exited {exitstatus}" + (f" ({how})" if how else "") + ": not judged")
    if not results_path.is_file():
        return Judgement(SKIP, f"the run wrote no {results_path.name}")
    try:
        run = load_run(results_path, run_id)
    except OtherRun as exc:
        return Judgement(SKIP, f"{results_path.name} holds run {exc.found!r}, not this run's {run_id!r}")
    except ResultsError as exc:
        return Judgement(SKIP, f"{results_path.name} cannot be read: {str(exc).replace(f'{results_path}: ', '')}")
    if not run.finished:
        return Judgement(SKIP, f"the run did not finish ({run.ended})")
    imported = run.environment.get("Kernel file")
    if checkout is not None and imported and not Path(imported).resolve().is_relative_to(checkout.resolve()):
        return Judgement(SKIP, f"the suite imported the kernel from {imported}, not from the checkout {checkout}")
    failing = tuple(r.nodeid for r in run.failing())
    if failing:
        of = len(selection) if selection is not None else len(run.records)
        return Judgement(BAD, f"{len(failing)} of {of} test(s) failed", failing)
    if exitstatus != 0:
        return Judgement(SKIP, "pytest exited 1 but results.json holds no failing test")
    if not run.records:
        return Judgement(SKIP, "the run recorded no tests")
    if selection is not None:
        outcomes = {r.nodeid: r.outcome for r in run.records}
        missing = [n for n in selection if outcomes.get(n) != "passed"]
        if missing:
            first = missing[0]
            return Judgement(SKIP, f"{len(missing)} selected test(s) did not pass or fail, e.g. {first} "
                                   f"({outcomes.get(first, 'not in the run')})")
        return Judgement(GOOD, f"all {len(selection)} selected test(s) passed")
    return Judgement(GOOD, f"no test failed ({len(run.records)} test(s))")


# -- one run of the suite at the worktree's HEAD --------------------------------------------------------------------

@dataclass
class State:
    """What every run of one bisect shares: written to OUT/state.json for the step processes."""

    worktree: str
    kernel_path: str  # absolute, inside the worktree
    device: str
    kernel: str
    extra: list[str]
    out: str
    selection: list[str] = field(default_factory=list)
    command: list[str] | None = None  # a stand-in for the suite (tests); None: pytest on the harness's suite

    @property
    def steps(self) -> Path:
        return Path(self.out) / "steps.jsonl"

    def save(self) -> Path:
        path = Path(self.out) / "state.json"
        path.write_text(json.dumps({"schema": STATE_SCHEMA, **asdict(self)}, indent=1) + "\n", encoding="utf-8")
        return path

    @classmethod
    def read(cls, path: Path) -> State:
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.pop("schema", None) != STATE_SCHEMA:
            raise ValueError(f"{path}: not a {STATE_SCHEMA} file")
        return cls(**doc)


def child_env() -> dict[str, str]:
    """The harness importable from anywhere, no bytecode written into the checkout (its `git status` stays clean, so
    the run's "Kernel commit" has no local changes), and no run appending to the CI job page: the bisect writes one."""
    env = cli.importable({k: v for k, v in os_env().items() if k != markdown.STEP_SUMMARY_VAR})
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def os_env() -> dict[str, str]:
    """This process's environment less the variables that point git at one repository."""
    return {k: v for k, v in os.environ.items() if k not in GIT_LOCATING}


def suite_command(state: State, folder: Path, run_id: str, selection: Sequence[str] | None) -> list[str]:
    """The suite on the worktree's kernel, reports into folder; with a selection, those node ids only."""
    user = [f"--device={state.device}", f"--kernel={state.kernel}", f"--kernel-path={state.kernel_path}",
            f"--nan-json={folder / 'results.json'}", f"--html={folder / 'precision.html'}",
            f"--junitxml={folder / 'junit.xml'}", f"--nan-run-id={run_id}",
            "--nan-reruns=0", *state.extra]  # a rerun never changes the exit status that judges a commit
    if state.command is not None:
        return [*state.command, *user, *(selection or ())]
    return cli.command(user, selection or ())


def git_run(cwd: Path | str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=False, env=os_env())


def git(cwd: Path | str, *args: str, check: bool = True, strip: bool = True) -> str:
    """git's output; BisectError(EXIT_NOT_JUDGED) when it fails and check is on."""
    done = git_run(cwd, *args)
    if check and done.returncode != 0:
        raise BisectError(f"git {' '.join(args)}: {(done.stderr or done.stdout).strip()}", EXIT_NOT_JUDGED)
    return done.stdout.strip() if strip else done.stdout.rstrip("\n")


def subject(cwd: Path | str, rev: str) -> str:
    return git(cwd, "log", "-1", "--format=%s", rev)


def run_here(state: State, role: str, selection: Sequence[str] | None, *, new_session: bool) -> dict[str, Any]:
    """Run the suite at the worktree's HEAD, judge it, log it to steps.jsonl and say it in one line."""
    worktree = Path(state.worktree)
    sha = git(worktree, "rev-parse", "HEAD")
    folder = Path(state.out) / "runs" / sha[:12]
    folder.mkdir(parents=True, exist_ok=True)
    for name in REPORTS:  # an earlier bisect's reports of this commit leave first
        (folder / name).unlink(missing_ok=True)
    run_id = uuid.uuid4().hex
    argv = suite_command(state, folder, run_id, selection)
    log = folder / "harness.log"
    print(f"bisect: {role} {sha[:12]} {subject(worktree, sha)!r}: running the suite "
          f"({len(selection) if selection else 'its'} selected test(s); log {log})", flush=True)
    started = time.time()
    code = run_logged(argv, folder, log, new_session=new_session)
    verdict = judge(code, folder / "results.json", run_id, selection, worktree)
    entry = {"role": role, "sha": sha, "subject": subject(worktree, sha), "code": verdict.code,
             "word": verdict.word, "why": verdict.why, "exit": code, "failing": list(verdict.failing),
             "folder": str(folder), "run_id": run_id, "seconds": round(time.time() - started, 1)}
    with state.steps.open("a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")
    print(f"bisect: {role} {sha[:12]}: {verdict.word} ({verdict.why})", flush=True)
    return entry


def run_logged(argv: Sequence[str], cwd: Path, log: Path, *, new_session: bool) -> int:
    """Run argv with its output into log; on any way out of here (interrupt included) nothing it started is left."""
    with log.open("w", encoding="utf-8") as handle:
        handle.write("$ " + " ".join(argv) + "\n")
        handle.flush()
        proc = subprocess.Popen(list(argv), cwd=cwd, stdout=handle, stderr=subprocess.STDOUT, env=child_env(),
                                start_new_session=new_session)
        try:
            return proc.wait()
        finally:  # a child leading its own group: that group; one in ours (a step's pytest): the child alone
            if new_session:
                processes.stop_group(proc, STOP_GRACE_S)
            else:
                processes.stop_process(proc, STOP_GRACE_S)


def step_main(state_path: Path) -> int:
    """One `git bisect run` step: GOOD, BAD or SKIP for the checked-out commit; ABORT when the judge itself fails."""
    try:
        state = State.read(state_path)
        return run_here(state, "step", state.selection, new_session=False)["code"]
    except KeyboardInterrupt:
        print("bisect: step interrupted: the bisect stops", file=sys.stderr, flush=True)
        return ABORT
    except Exception:  # noqa: BLE001 - a judge that fails must stop the bisect, never read as a bad commit
        traceback.print_exc()
        print("bisect: the step's judge failed (above): the bisect stops", file=sys.stderr, flush=True)
        return ABORT
