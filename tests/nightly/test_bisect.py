"""python -m nightly.bisect: the step judge's mapping of a run to good/bad/skip, the git orchestration (a stand-in
suite over a throwaway repository: the first bad commit, skipped commits, the refusals and the repository left as
it was), and the whole thing end to end with the real suite on a kernel repository with a planted bug and a commit
that cannot be imported."""
from __future__ import annotations

import json
import subprocess
import sys
import signal
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

from nightly import bisect, bisect_run
from reports.results import SCHEMA
from tests.nightly.test_nightly import results_doc as nightly_doc
from tests.support.limits import hang_limit
from tests.support.subrun import ROOT, clean_env

A = "tests/precision/test_families.py::test_case[fp32-special-2x1024-wrapper]"
B = "tests/precision/test_families.py::test_case[fp16-special-2x1024-direct]"


# -- the judge -------------------------------------------------------------------------------------------------------

def results_doc(outcomes: dict[str, str], **fields: Any) -> dict[str, Any]:
    return nightly_doc(outcomes, **{"run_id": "r1", **fields})


UNFINISHED = {"schema": SCHEMA, "environment": {}, "exitstatus": None, "finished": False,
              "ended": "not finished (started 2026-07-01T00:00:00+00:00)", "collected": 0, "counts": {},
              "verdicts": {}, "run_id": "r1", "cases": []}

JUDGED = [  # (pytest exit status, results.json or None, selection, expected code, words in the reason)
    (0, results_doc({A: "passed", B: "passed"}), [A, B], bisect.GOOD, "all 2 selected"),
    (1, results_doc({A: "failed", B: "passed"}), [A, B], bisect.BAD, "1 of 2"),
    (1, results_doc({A: "error"}), [A], bisect.BAD, "1 of 1"),
    (0, results_doc({A: "passed", B: "skipped"}), None, bisect.GOOD, "no test failed"),  # a first, whole run
    (2, results_doc({A: "failed"}), [A], bisect.SKIP, "interrupted"),  # the exit status wins over any record
    (3, results_doc({A: "failed"}), [A], bisect.SKIP, "internal error"),
    (4, UNFINISHED, [A], bisect.SKIP, "usage error"),  # a module that does not import
    (5, UNFINISHED, [A], bisect.SKIP, "no tests collected"),
    (-9, None, [A], bisect.SKIP, "signal 9"),
    (1, None, [A], bisect.SKIP, "wrote no results.json"),
    (0, UNFINISHED, [A], bisect.SKIP, "did not finish"),
    (1, results_doc({A: "failed"}, finished=False, ended="stopped early: 1 of 2 tests ran", exitstatus=2), [A],
     bisect.SKIP, "did not finish"),
    (1, results_doc({A: "failed"}, run_id="other"), [A], bisect.SKIP, "not this run's"),
    (1, results_doc({A: "passed"}, exitstatus=0), [A], bisect.SKIP, "no failing test"),
    (0, results_doc({A: "passed", B: "skipped"}), [A, B], bisect.SKIP, "did not pass or fail"),
    (0, results_doc({A: "passed"}), [A, B], bisect.SKIP, "not in the run"),
    (0, "not json", [A], bisect.SKIP, "cannot be read"),
]


@pytest.mark.parametrize(("exitstatus", "doc", "selection", "code", "words"), JUDGED)
def test_a_step_is_good_bad_or_skip_from_the_exit_status_and_results_json(
        tmp_path: Path, exitstatus: int, doc: Any, selection: list[str] | None, code: int, words: str) -> None:
    path = tmp_path / "results.json"
    if doc is not None:
        path.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    verdict = bisect_run.judge(exitstatus, path, "r1", selection)
    assert (verdict.code, verdict.word) == (code, bisect_run.WORDS[code]), verdict
    assert words in verdict.why
    assert verdict.failing == (tuple(n for n, o in doc_outcomes(doc).items() if o in ("failed", "error"))
                               if code == bisect.BAD else ())


def test_a_run_of_a_kernel_imported_from_outside_the_checkout_is_skipped(tmp_path: Path) -> None:
    """An installed copy of the module, found before the checkout's, would judge every commit the same."""
    checkout = tmp_path / "checkout"
    doc = results_doc({A: "failed"})
    for where, code in ((tmp_path / "site-packages" / "k.py", bisect.SKIP), (checkout / "src" / "k.py", bisect.BAD)):
        doc["environment"] = {"Kernel file": str(where)}
        (tmp_path / "results.json").write_text(json.dumps(doc))
        verdict = bisect_run.judge(1, tmp_path / "results.json", "r1", [A], checkout)
        assert verdict.code == code, verdict
    assert "imported the kernel from" in bisect_run.judge(1, tmp_path / "results.json", "r1", [A], tmp_path / "x").why


def doc_outcomes(doc: Any) -> dict[str, str]:
    return {c["nodeid"]: c["outcome"] for c in doc["cases"]} if isinstance(doc, dict) else {}


# -- a throwaway repository ------------------------------------------------------------------------------------------

class Repo:
    """A git repository in tmp_path whose commits are made one file change at a time, at distinct fixed dates (git
    bisect's choice of commit is then the same on every run)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.n = 0
        path.mkdir()
        self.git("init", "-q", "-b", "main")
        self.git("config", "user.email", "bisect@example.com")
        self.git("config", "user.name", "bisect test")

    def git(self, *args: str) -> str:
        env = {**clean_env(), "GIT_AUTHOR_DATE": f"2026-01-01T00:{self.n:02d}:00Z",
               "GIT_COMMITTER_DATE": f"2026-01-01T00:{self.n:02d}:00Z"}
        return subprocess.run(["git", *args], cwd=self.path, env=env, check=True, capture_output=True,
                              text=True).stdout.strip()

    def commit(self, message: str, files: dict[str, str]) -> str:
        self.n += 1
        for name, text in files.items():
            target = self.path / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
            self.git("add", name)
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD")

    def snapshot(self) -> dict[str, Any]:
        """What the bisect must leave as it found it: HEAD, branch, working tree, worktrees, refs, bisect state."""
        return {"head": self.git("rev-parse", "HEAD"), "branch": self.git("symbolic-ref", "HEAD"),
                "status": self.git("status", "--porcelain", "--ignored"), "worktrees": self.git("worktree", "list"),
                "refs": self.git("for-each-ref"), "bisecting": (self.path / ".git" / "BISECT_LOG").exists(),
                "files": sorted(str(p.relative_to(self.path)) for p in self.path.rglob("*") if ".git" not in p.parts)}


# the stand-in suite: reads the checkout's verdict.txt (pass, fail, usage or hang) and writes what the harness would
FAKE_SUITE = textwrap.dedent('''
    import json, sys
    from pathlib import Path
    from reports.results import SCHEMA
    args = sys.argv[1:]
    opt = lambda name: next(a.split("=", 1)[1] for a in args if a.startswith(name + "="))
    state = (Path(opt("--kernel-path")) / "verdict.txt").read_text().split()[0]
    ids = [a for a in args if "::" in a] or %r
    out, run_id = Path(opt("--nan-json")), opt("--nan-run-id")
    if state == "hang":  # until it is stopped: says so first, with its pid
        import os, time
        (out.parent / "hanging.pid").write_text(str(os.getpid()))
        time.sleep(600)
    if state == "usage":
        out.write_text(json.dumps({"schema": SCHEMA, "environment": {}, "exitstatus": None, "finished": False,
                                   "ended": "not finished", "collected": 0, "counts": {}, "verdicts": {},
                                   "run_id": run_id, "cases": []}))
        sys.exit(4)
    outcome = "failed" if state == "fail" else "passed"
    cases = [{"nodeid": n, "outcome": outcome if n == ids[0] else "passed",
              "verdict": "wrong_counts" if outcome == "failed" and n == ids[0] else "pass"} for n in ids]
    diagnosis = [{"category": "predicate", "name": "planted diagnosis", "evidence": "Inf counted",
                  "cases": [ids[0]], "weight": 1}] if outcome == "failed" else []
    out.write_text(json.dumps({"schema": SCHEMA, "environment": {}, "exitstatus": int(outcome == "failed"),
                               "finished": True, "ended": "done", "collected": len(ids), "counts": {},
                               "verdicts": {}, "run_id": run_id, "diagnosis": diagnosis, "cases": cases}))
    sys.exit(int(outcome == "failed"))
''' % ([A, B],))


def fake_suite(tmp_path: Path) -> list[str]:
    script = tmp_path / "fake_suite.py"
    script.write_text(FAKE_SUITE)
    return [sys.executable, str(script)]


def history(repo: Repo, verdicts: list[str]) -> list[str]:
    """One commit per verdict ('pass', 'fail', 'usage'); the checkout's verdict.txt says how the suite goes there."""
    return [repo.commit(f"c{i} {v}", {"verdict.txt": f"{v}\n", "notes.txt": f"change {i}\n"})
            for i, v in enumerate(verdicts)]


def run_fake(tmp_path: Path, repo: Repo, good: str, bad: str, *extra: str) -> tuple[int, Path]:
    out = tmp_path / "out"
    code = bisect.main(["--repo", str(repo.path), "--good", good, "--bad", bad, "--kernel", "k", "--out", str(out),
                        *extra], command=fake_suite(tmp_path))
    return code, out


def steps(out: Path) -> list[tuple[str, str, str]]:
    return [(s["role"], s["sha"], s["word"]) for s in bisect.read_steps(out / "steps.jsonl")]


@pytest.fixture(autouse=True)
def no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def test_finds_the_first_bad_commit_past_a_skipped_one_and_leaves_the_repository_alone(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    repo = Repo(tmp_path / "repo")
    shas = history(repo, ["pass", "pass", "pass", "usage", "pass", "fail", "fail"])
    (repo.path / "scratch.txt").write_text("the user's uncommitted work\n")  # an untracked file stays
    before = repo.snapshot()
    summary = tmp_path / "step_summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    code, out = run_fake(tmp_path, repo, shas[0], "main")
    text = capsys.readouterr().out
    assert code == bisect.EXIT_FOUND, text
    assert f"first bad commit: {shas[5]} c5 fail" in text
    assert "could not clean up" not in text
    assert repo.snapshot() == before
    taken = steps(out)
    assert taken[:2] == [("bad", shas[6], "bad"), ("good", shas[0], "good")]
    assert ("step", shas[3], "skip") in taken  # the commit whose module does not import: skipped, not bad
    assert ("step", shas[4], "good") in taken and ("step", shas[5], "bad") in taken
    assert "verdict.txt | 2 +-" in text and "notes.txt   | 2 +-" in text  # the diff stat against its parent
    assert "[predicate] planted diagnosis (1 test(s)): Inf counted" in text
    page = (out / "bisect.md").read_text()
    assert f"First bad commit: `{shas[5]}` c5 fail" in page and "verdict.txt | 2 +-" in page
    assert "planted diagnosis" in page and "| step | `" in page
    assert summary.read_text() == page
    runs = json.loads((out / "runs" / shas[5][:12] / "results.json").read_text())
    assert [c["nodeid"] for c in runs["cases"]] == [A]  # later runs select the tests failing at --bad


def test_only_skipped_commits_left_is_undecided_and_names_them(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    repo = Repo(tmp_path / "repo")
    shas = history(repo, ["pass", "usage", "fail"])
    before = repo.snapshot()
    code, out = run_fake(tmp_path, repo, shas[0], shas[2], "--markdown", str(tmp_path / "page.md"))
    text = capsys.readouterr().out
    assert code == bisect.EXIT_UNDECIDED, text
    assert "only skipped commits are left" in text and shas[1] in text and shas[2] in text
    assert "undecided (exit 1)" in (tmp_path / "page.md").read_text()
    assert repo.snapshot() == before


@pytest.mark.parametrize(("verdicts", "code", "words"), [
    (["pass", "pass"], bisect.EXIT_NOT_BRACKETED, "does not fail"),
    (["fail", "fail"], bisect.EXIT_NOT_BRACKETED, "does not pass the selection"),
    (["pass", "usage"], bisect.EXIT_NOT_JUDGED, "cannot be judged: pytest exited 4 (usage error)"),
    (["usage", "fail"], bisect.EXIT_NOT_JUDGED, "cannot be judged: pytest exited 4 (usage error)"),
])
def test_revisions_that_do_not_bracket_a_regression_stop_it(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            verdicts: list[str], code: int, words: str) -> None:
    repo = Repo(tmp_path / "repo")
    shas = history(repo, verdicts)
    before = repo.snapshot()
    assert run_fake(tmp_path, repo, shas[0], shas[1])[0] == code
    assert words in capsys.readouterr().err
    assert repo.snapshot() == before


def test_sigterm_mid_bisect_stops_every_process_and_leaves_the_repository_alone(tmp_path: Path) -> None:
    repo = Repo(tmp_path / "repo")
    shas = history(repo, ["pass", "hang", "hang", "hang", "fail"])
    before = repo.snapshot()
    out, scratch = tmp_path / "out", tmp_path / "tmp"
    scratch.mkdir()
    code = ("import sys; from nightly import bisect; "
            f"sys.exit(bisect.main(sys.argv[1:], command={fake_suite(tmp_path)!r}))")
    proc = subprocess.Popen([sys.executable, "-c", code, "--repo", str(repo.path), "--good", shas[0], "--bad",
                             shas[-1], "--kernel", "k", "--out", str(out)], cwd=ROOT,
                            env={**clean_env(), "TMPDIR": str(scratch)}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + hang_limit(slowest_s=2.0)  # the runs before the hanging step: 1.6 s
    while not list(out.glob("runs/*/hanging.pid")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    pid_file = next(iter(out.glob("runs/*/hanging.pid")), None)
    assert pid_file is not None, proc.communicate(timeout=60)[0] if proc.poll() is not None else "no step hangs"
    proc.send_signal(signal.SIGTERM)
    text = proc.communicate(timeout=hang_limit(slowest_s=2.0))[0]
    assert proc.returncode == bisect.EXIT_INTERRUPTED, text
    assert "could not clean up" not in text and "interrupted (exit 130)" in (out / "bisect.md").read_text()
    assert repo.snapshot() == before
    assert list(scratch.iterdir()) == []  # the worktree's folder is gone
    assert not alive(int(pid_file.read_text()))  # the suite the step ran was stopped too


def alive(pid: int) -> bool:
    """A process that runs (a zombie nobody reaped in a container does not)."""
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False


def test_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = Repo(tmp_path / "repo")
    shas = history(repo, ["pass", "fail"])
    assert run_fake(tmp_path, repo, shas[0], "no-such-rev")[0] == bisect.EXIT_USAGE
    assert run_fake(tmp_path, repo, shas[0], shas[0])[0] == bisect.EXIT_USAGE
    assert run_fake(tmp_path, repo, shas[1], shas[0])[0] == bisect.EXIT_USAGE  # good newer than bad
    plain = tmp_path / "plain"
    plain.mkdir()
    assert bisect.main(["--repo", str(plain), "--good", "a", "--bad", "b", "--kernel", "k"]) == bisect.EXIT_USAGE
    with pytest.raises(SystemExit) as exc:
        bisect.main(["--repo", str(repo.path), "--good", shas[0]])
    assert exc.value.code == bisect.EXIT_USAGE
    err = capsys.readouterr().err
    assert "no-such-rev: not a commit" in err and "same commit" in err and "ancestor" in err
    assert "not a git working tree" in err and "--bad, --kernel" in err
    assert not (tmp_path / "out" / "runs").exists()


def test_the_step_selects_the_failing_node_ids_of_the_suite(tmp_path: Path) -> None:
    """The step's pytest command is nan-harness's, less the suite folder, plus the selected tests' paths."""
    from harness import cli

    state = bisect_run.State(worktree=str(tmp_path), kernel_path=str(tmp_path / "pkg"), device="cpu", kernel="k.m",
                         extra=["-m", "nan_special"], out=str(tmp_path))
    whole = bisect_run.suite_command(state, tmp_path, "r1", None)
    chosen = bisect_run.suite_command(state, tmp_path, "r1", [A, B])
    suite = cli.suite()
    assert whole[-1] == str(suite) and str(suite) not in chosen
    assert chosen[-2:] == [str(suite.parents[1] / A), str(suite.parents[1] / B)]
    assert chosen[:-2] == whole[:-1]
    assert f"--kernel-path={tmp_path / 'pkg'}" in whole and "--nan-run-id=r1" in whole
    assert "--nan-reruns=0" in whole  # reruns never change the exit status that judges a step: no time spent on them
    assert whole.index("nan_special") > whole.index("--kernel=k.m")  # the caller's arguments after ours


# -- end to end: the real suite on a kernel repository -----------------------------------------------------------

DESIGN = (ROOT / "tests" / "designs" / "independent.py").read_text()  # a correct kernel written apart from ours
CORRECT_TEST = "lanes += (value != value).to(tl.int32)"
# tests/planted/pred_inf.py's bug in this kernel: Inf counted as NaN
PLANTED = "lanes += ((value.to(tl.int32, bitcast=True) & 0x7FFFFFFF) >= 0x7F800000).to(tl.int32)"
E2E_SLOWEST_S = 75.0  # 6 suite runs on 2 cores beside a second pytest -n 2 (51 s alone); see below
MISSING_IMPORT = "import nan_bisect_missing_dependency  # an environment this machine does not have\n"


def test_end_to_end_names_the_planted_bug_skips_the_unimportable_commit(tmp_path: Path) -> None:
    assert CORRECT_TEST in DESIGN
    repo = Repo(tmp_path / "repo")
    path = "src/numnans.py"
    good = repo.commit("add the kernel", {path: DESIGN})
    repo.commit("docs", {"README.md": "a NaN counter\n"})
    repo.commit("depend on a package", {path: MISSING_IMPORT + DESIGN})
    repo.commit("drop the dependency", {path: DESIGN})
    first_bad = repo.commit("faster NaN test", {path: DESIGN.replace(CORRECT_TEST, PLANTED)})
    repo.commit("docs again", {"README.md": "a faster NaN counter\n"})
    before = repo.snapshot()
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "nightly.bisect", "--repo", str(repo.path), "--good", good, "--bad", "HEAD",
         "--kernel", "numnans", "--kernel-path", "src", "--device", "cpu", "--out", str(out), "--",
         "-m", "nan_special", "-k", "fp32"],
        cwd=ROOT, env=clean_env(), capture_output=True, text=True,
        timeout=hang_limit(slowest_s=E2E_SLOWEST_S))
    text = done.stdout + done.stderr
    assert done.returncode == bisect.EXIT_FOUND, text
    assert f"first bad commit: {first_bad} faster NaN test" in text
    assert "src/numnans.py | 2 +-" in text and "could not clean up" not in text
    assert "[predicate] the NaN predicate (2 test(s)): non-NaN values counted: special values fp32" in text
    taken = {s["subject"]: s for s in bisect.read_steps(out / "steps.jsonl")}
    assert taken["depend on a package"]["word"] == "skip"
    assert "usage error" in taken["depend on a package"]["why"]
    assert taken["drop the dependency"]["word"] == "good" and taken["faster NaN test"]["word"] == "bad"
    page = (out / "bisect.md").read_text()
    assert f"`{first_bad}` faster NaN test" in page and "the NaN predicate" in page
    results = json.loads((out / "runs" / first_bad[:12] / "results.json").read_text())
    assert results["environment"]["Kernel commit"] == first_bad  # the run judged that commit, clean
    assert repo.snapshot() == before
