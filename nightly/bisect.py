"""`python -m nightly.bisect`: the first bad commit of a kernel's repository, with the harness as the judge.

    python -m nightly.bisect --repo ../vllm-ascend --good v0.9.0 --bad main --device npu \\
        --kernel vllm_ascend.ops.triton.v2.metrics.num_nans [--kernel-path SUBDIR] [-- PYTEST_ARGS]

The harness stays as it is; the kernel's repository is checked out, commit by commit, in a temporary `git worktree`
(the repository's own working tree, HEAD, branch and bisect state are never touched). The suite runs first at --bad
(its selection: PYTEST_ARGS); the tests that fail there are the selection every other run judges (as node ids), first
at --good, which must pass them, then at each commit `git bisect run` picks. The judge of a step is
`python -m nightly.bisect --step STATE`: it runs the suite with the kernel imported from that checkout
(`--kernel-path WORKTREE/SUBDIR`) and decides from the results.json that run wrote (`--nan-json`, `--nan-run-id`)
and pytest's exit status: 0 good (the run finished, every selected test passed), 1 bad (a selected test failed),
125 skip (pytest exit 2-5 or a signal, no results.json or one from another run, a run that did not finish, a selected
test that did not run: the commit cannot be judged, e.g. its module does not import here), 128 abort (the judge
itself failed: git stops the bisect). It ends with the first bad commit (sha, subject, `git diff --stat` against its
first parent) and the diagnosis at that commit (from the results.json of its run), in the terminal and as Markdown
(--markdown, default OUT/bisect.md; also appended to $GITHUB_STEP_SUMMARY when the runner sets it). Every run's
reports stay under OUT/runs/<sha>/. `git bisect reset` and the worktree's removal happen on every way out.

Exit status: 0 found the first bad commit; 1 the bisect could not decide: only skipped commits are left between the
last good and the first bad one (it names them); 2 usage error (arguments, not a git repository, a revision that does
not resolve, --good not older than --bad); 3 the revisions do not bracket a regression: no test fails at --bad, or
--good fails the selection; 4 nothing could be judged: the run at --bad or --good did not finish (environment, usage,
interrupt), or the bisect stopped (a step aborted, git failed); 130 interrupted (SIGINT or SIGTERM).
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness import cli, processes
from nightly.bisect_run import (
    BAD, EXIT_FOUND, EXIT_INTERRUPTED, EXIT_NOT_BRACKETED, EXIT_NOT_JUDGED, EXIT_UNDECIDED, EXIT_USAGE, GOOD, SKIP,
    STOP_GRACE_S, BisectError, State, child_env, git, git_run, run_here, step_main, subject,
)
from reports import markdown
from reports.results import Results, ResultsError, load, write_text_atomic

DEFAULT_OUT = Path("out") / "bisect"  # under the checkout; installed, under the calling folder (harness.cli.home)
DIFFSTAT_FILES = 25  # files named in the diff stat (git --stat-count)


# -- the bisect ------------------------------------------------------------------------------------------------------

@dataclass
class Outcome:
    code: int
    headline: str
    first_bad: str | None = None
    subject: str = ""
    candidates: list[str] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)
    diffstat: str = ""
    run: Results | None = None
    run_folder: str | None = None


def parse(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[str]]:
    first = " ".join(__doc__.split("\n\n")[0].split()).replace("`", "")
    parser = argparse.ArgumentParser(prog="python -m nightly.bisect", description=first,
                                     epilog="Arguments after -- go to pytest, at every revision (e.g. -- -m "
                                            "nan_special -n 2). Exit 0 found, 1 undecided (only skipped commits left), "
                                            "2 usage, 3 --bad does not fail or --good does not pass, 4 not judged, 130 "
                                            "interrupted.")
    parser.add_argument("--repo", type=Path, help="the kernel's git repository (its working tree is not touched)")
    parser.add_argument("--good", help="a revision where the selected tests pass")
    parser.add_argument("--bad", help="a revision where tests fail")
    parser.add_argument("--kernel", help="the module under test, imported from the checkout (e.g. my_pkg.num_nans)")
    parser.add_argument("--device", choices=("npu", "cuda", "cpu"), default="cpu", help="backend (default cpu)")
    parser.add_argument("--kernel-path", default=".", metavar="SUBDIR",
                        help="folder of the checkout that --kernel is imported from (default: its root)")
    parser.add_argument("--out", type=Path, default=None,
                        help="where each revision's reports go (OUT/runs/<sha>/) (default out/bisect of the checkout; "
                             "installed, of the calling folder)")
    parser.add_argument("--markdown", type=Path, default=None, help="the Markdown report (default OUT/bisect.md)")
    parser.add_argument("--step", type=Path, default=None, metavar="STATE", help=argparse.SUPPRESS)
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args, extra = parser.parse_args(argv[:cut]), argv[cut + 1:]
    if args.step is None:
        missing = [f"--{name}" for name in ("repo", "good", "bad", "kernel") if getattr(args, name) is None]
        if missing:
            parser.error(f"the following arguments are required: {', '.join(missing)}")
        if Path(args.kernel_path).is_absolute() or ".." in Path(args.kernel_path).parts:
            parser.error(f"--kernel-path {args.kernel_path}: a folder inside the repository, relative to its root")
    args.out = args.out or cli.home() / DEFAULT_OUT
    return args, extra


def resolve(repo: Path, good: str, bad: str) -> tuple[Path, str, str]:
    """The repository's top folder and both revisions as commits; BisectError(EXIT_USAGE) when they are not."""
    if not repo.is_dir():
        raise BisectError(f"--repo {repo}: not a folder", EXIT_USAGE)
    done = git_run(repo, "rev-parse", "--show-toplevel")
    if done.returncode != 0:
        raise BisectError(f"--repo {repo}: not a git working tree ({done.stderr.strip()})", EXIT_USAGE)
    top = Path(done.stdout.strip())
    shas = []
    for flag, rev in (("--good", good), ("--bad", bad)):
        done = git_run(top, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}")
        if done.returncode != 0:
            raise BisectError(f"{flag} {rev}: not a commit of {top}", EXIT_USAGE)
        shas.append(done.stdout.strip())
    if shas[0] == shas[1]:
        raise BisectError(f"--good {good} and --bad {bad} are the same commit", EXIT_USAGE)
    if git_run(top, "merge-base", "--is-ancestor", shas[1], shas[0]).returncode == 0:
        raise BisectError(f"--bad {bad} is an ancestor of --good {good}: give the older revision as --good",
                          EXIT_USAGE)
    return top, shas[0], shas[1]


def read_steps(path: Path) -> list[dict[str, Any]]:
    """Every run of this bisect, in order, as its judge logged it (steps.jsonl)."""
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def bisect(args: argparse.Namespace, extra: list[str], command: Sequence[str] | None, cleanup: ExitStack) -> Outcome:
    """Everything between resolving the revisions and the report; cleanup gets what the caller's exit undoes (in
    reverse: git bisect reset, the worktree removed, the scratch folder deleted)."""
    top, good, bad = resolve(args.repo, args.good, args.bad)
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    (out / "steps.jsonl").unlink(missing_ok=True)  # this bisect's runs only
    scratch = Path(tempfile.mkdtemp(prefix="nan-bisect-"))
    cleanup.callback(shutil.rmtree, scratch, ignore_errors=True)
    worktree = scratch / "checkout"
    git(top, "worktree", "add", "--detach", "--quiet", str(worktree), bad)
    cleanup.callback(undo, top, "worktree", "prune")
    cleanup.callback(undo, top, "worktree", "remove", "--force", str(worktree))
    state = State(worktree=str(worktree), kernel_path=str((worktree / args.kernel_path).resolve()),
                  device=args.device, kernel=args.kernel, extra=list(extra), out=str(out),
                  command=list(command) if command is not None else None)
    print(f"bisect: {top}: good {good[:12]}, bad {bad[:12]}; checkout {worktree}; reports {out}", flush=True)

    first = run_here(state, "bad", None, new_session=True)
    if first["code"] == SKIP:
        raise BisectError(f"--bad {args.bad} ({bad[:12]}) cannot be judged: {first['why']}; see "
                          f"{first['folder']}/harness.log", EXIT_NOT_JUDGED)
    if first["code"] == GOOD:
        raise BisectError(f"--bad {args.bad} ({bad[:12]}) does not fail: {first['why']}", EXIT_NOT_BRACKETED)
    state.selection = list(first["failing"])
    git(worktree, "checkout", "--detach", "--quiet", good)
    base = run_here(state, "good", state.selection, new_session=True)
    if base["code"] == SKIP:
        raise BisectError(f"--good {args.good} ({good[:12]}) cannot be judged: {base['why']}; see "
                          f"{base['folder']}/harness.log", EXIT_NOT_JUDGED)
    if base["code"] == BAD:
        raise BisectError(f"--good {args.good} ({good[:12]}) does not pass the selection: {base['why']}, e.g. "
                          f"{base['failing'][0]}", EXIT_NOT_BRACKETED)
    state_path = state.save()

    cleanup.callback(undo, worktree, "bisect", "reset")
    git(worktree, "bisect", "start", bad, good)
    step = [sys.executable, *(["-P"] if sys.version_info >= (3, 11) else []), "-m", "nightly.bisect",
            "--step", str(state_path)]  # -P: the checkout (git runs the step there) is not on sys.path
    print("$ git bisect run " + " ".join(step), flush=True)
    proc = subprocess.Popen(["git", "bisect", "run", *step], cwd=worktree, env=child_env(), start_new_session=True)
    try:
        code = proc.wait()
    finally:
        processes.stop_group(proc, STOP_GRACE_S)
    return conclude(state, good, bad, code)


def conclude(state: State, good: str, bad: str, run_code: int) -> Outcome:
    """What the bisect found, read from its refs: the first bad commit when it is the only candidate left."""
    worktree = Path(state.worktree)
    steps = read_steps(state.steps)
    first_bad = git(worktree, "rev-parse", "--verify", "--quiet", "refs/bisect/bad", check=False) or bad
    goods = git(worktree, "for-each-ref", "--format=%(objectname)", "refs/bisect/good-*").split() or [good]
    skipped = set(git(worktree, "for-each-ref", "--format=%(objectname)", "refs/bisect/skip-*").split())
    candidates = git(worktree, "rev-list", first_bad, "--not", *goods).split()
    if candidates == [first_bad]:
        title = subject(worktree, first_bad)
        outcome = Outcome(EXIT_FOUND, f"first bad commit: {first_bad} {title}", first_bad, title, candidates, steps)
        parents = git(worktree, "rev-list", "--parents", "-n", "1", first_bad).split()[1:]
        stat = ["diff", "--stat", f"--stat-count={DIFFSTAT_FILES}", parents[0], first_bad] if parents else \
            ["show", "--stat", f"--stat-count={DIFFSTAT_FILES}", "--format=", first_bad]
        outcome.diffstat = git(worktree, *stat, strip=False)
        entry = next((s for s in reversed(steps) if s["sha"] == first_bad and s["code"] == BAD), None)
        if entry is not None:
            try:
                run = load(Path(entry["folder"]) / "results.json")
                if run.run_id == entry["run_id"]:
                    outcome.run, outcome.run_folder = run, entry["folder"]
            except ResultsError:
                pass
        return outcome
    if len(candidates) > 1 and all(c in skipped for c in candidates if c != first_bad):
        return Outcome(EXIT_UNDECIDED, f"could not decide: only skipped commits are left; the first bad commit is "
                                       f"one of {len(candidates)}", None, "", candidates, steps)
    last = steps[-1] if steps else None
    why = f"the last step ({last['sha'][:12]}) said {last['word']}: {last['why']}" if last else "no step ran"
    return Outcome(EXIT_NOT_JUDGED, f"the bisect stopped (git bisect run exited {run_code}; {why})", None, "",
                   candidates, steps)


def undo(cwd: Path, *args: str) -> None:
    """One git command that undoes what the bisect did; a failure is said, never raised (the rest is undone too)."""
    done = git_run(cwd, *args)
    if done.returncode != 0:
        print(f"bisect: could not clean up: git {' '.join(args)}: {done.stderr.strip()}", file=sys.stderr, flush=True)


# -- the report -------------------------------------------------------------------------------------------------------

def fence(text: str) -> str:
    """A fenced block that holds any text."""
    longest = max((len(run) for run in text.split("\n") if set(run) == {"`"}), default=0)
    return "`" * max(3, longest + 1)


def terminal(outcome: Outcome) -> list[str]:
    lines = [f"bisect: {outcome.headline}"]
    if outcome.first_bad:
        lines += ["bisect: " + line for line in outcome.diffstat.splitlines()]
        run = outcome.run
        if run is None:
            lines.append("bisect: no results.json of a run at the first bad commit to diagnose")
        else:
            lines.append(f"bisect: diagnosis at {outcome.first_bad[:12]} ({outcome.run_folder}/results.json):")
            for number, d in enumerate(run.diagnosis, 1):
                lines.append(f"bisect:   {number}. [{d.get('category', '')}] {d.get('name', '')} "
                             f"({len(d.get('cases') or ())} test(s)): {d.get('evidence', '')}")
            if not run.diagnosis:
                lines.append("bisect:   (none)")
            failing = run.failing()
            lines.append(f"bisect: failing there: {len(failing)} test(s): "
                         + ", ".join(r.nodeid for r in failing[:5]) + (" ..." if len(failing) > 5 else ""))
    elif outcome.candidates:
        lines += [f"bisect:   {c}" for c in outcome.candidates]
    for s in outcome.steps:
        lines.append(f"bisect: {s['role']:>4} {s['sha'][:12]} {s['word']:>4}: {s['subject']} ({s['why']})")
    return lines


def report_markdown(outcome: Outcome, repo: Path, good: str, bad: str) -> str:
    words = {EXIT_FOUND: "found", EXIT_UNDECIDED: "undecided", EXIT_NOT_JUDGED: "not judged",
             EXIT_NOT_BRACKETED: "not a regression", EXIT_INTERRUPTED: "interrupted"}
    head = [f"### nan-harness bisect: {words.get(outcome.code, 'error')} (exit {outcome.code})", "",
            f"Repository {markdown.code(repo)}, good {markdown.code(good)}, bad {markdown.code(bad)}", ""]
    if outcome.first_bad:
        head += [f"First bad commit: {markdown.code(outcome.first_bad)} "
                 f"{markdown.text(outcome.subject)}", ""]
        if outcome.diffstat:
            mark = fence(outcome.diffstat)
            head += [f"{mark}text", outcome.diffstat, mark, ""]
    else:
        head += [markdown.text(outcome.headline), ""]
        head += [f"- {markdown.code(c)}" for c in outcome.candidates] + ([""] if outcome.candidates else [])
    if outcome.steps:
        head += ["| run | commit | verdict | subject | why |", "|---|---|---|---|---|"]
        head += [f"| {markdown.text(s['role'])} | {markdown.code(s['sha'][:12], in_table=True)} | "
                 f"{markdown.text(s['word'])} | {markdown.text(s['subject'])} | {markdown.text(s['why'])} |"
                 for s in outcome.steps]
        head.append("")
    text = "\n".join(head) + "\n"
    if outcome.run is not None:
        html = str(Path(outcome.run_folder or ".") / "precision.html")
        text += "\n" + markdown.run_summary(outcome.run, html=html,
                                            title=f"the suite at {(outcome.first_bad or '')[:12]}")
    return text


def main(argv: Sequence[str] | None = None, *, command: Sequence[str] | None = None) -> int:
    """The bisect (or, with --step, one of its steps). command: a stand-in for the suite's pytest (tests)."""
    args, extra = parse(argv)
    if args.step is not None:
        return step_main(args.step)
    outcome: Outcome | None = None
    with processes.sigterm_as_interrupt(), ExitStack() as cleanup:
        try:
            outcome = bisect(args, extra, command, cleanup)
        except BisectError as exc:
            print(f"bisect: {exc}", file=sys.stderr, flush=True)
            if exc.code == EXIT_USAGE:
                return EXIT_USAGE
            outcome = Outcome(exc.code, str(exc))
        except KeyboardInterrupt:
            print("bisect: interrupted", file=sys.stderr, flush=True)
            outcome = Outcome(EXIT_INTERRUPTED, "interrupted")
        except Exception as exc:  # noqa: BLE001 - a traceback exits 1, which means "undecided" here
            traceback.print_exc()
            outcome = Outcome(EXIT_NOT_JUDGED, f"the bisect failed: {type(exc).__name__}: {exc}")
    out = args.out.resolve()
    if not outcome.steps:
        outcome.steps = read_steps(out / "steps.jsonl")
    print(flush=True)  # git bisect run's last line has no newline
    for line in terminal(outcome):
        print(line, flush=True)
    text = report_markdown(outcome, args.repo.resolve(), args.good, args.bad)
    target = args.markdown or out / "bisect.md"
    write_text_atomic(target, text)
    markdown.append_step_summary(text)
    print(f"bisect: {target} written (exit {outcome.code})", flush=True)
    return outcome.code


if __name__ == "__main__":
    sys.exit(main())
