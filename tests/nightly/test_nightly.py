"""python -m nightly: where a night goes, what it runs on which backend, how it is judged against the previous
night, and the sharded flow (one command per node, one merge command) end to end on the CPU."""
from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from nightly import cli, nights, steps
from reports import markdown
from reports.results import SCHEMA
from tests.support.limits import hang_limit
from tests.support.subrun import ROOT, clean_env

A = "tests/precision/test_families.py::test_case[fp32-prefix-1x128-nan0.5-wrapper]"
B = "tests/precision/test_families.py::test_case[fp16-special-2x1024-direct]"


def results_doc(outcomes: dict[str, str], *, finished: bool = True, kernel: str = "kernel", backend: str = "cuda",
                commit: str = "abc", **fields: Any) -> dict[str, Any]:
    """A finished (or interrupted) run's results.json with these outcomes; `fields` replace top-level keys."""
    cases = [{"nodeid": n, "id": n.rsplit("::", 1)[-1], "outcome": o,
              "verdict": {"passed": "pass", "skipped": "not_run"}.get(o, "wrong_counts"), "duration": 0.25,
              "checks": [], "wrong_rows": [], "message": ""} for n, o in outcomes.items()]
    failed = any(o in ("failed", "error") for o in outcomes.values())
    return {"schema": SCHEMA, "environment": {"Kernel commit": commit}, "exitstatus": int(failed),
            "finished": finished, "ended": ("tests failed" if failed else "passed") if finished else "interrupted",
            "collected": len(cases), "counts": {}, "verdicts": {}, "diagnosis": [], "kernel": kernel,
            "backend": backend, "coverage_gaps": [], "ran": len(cases), "cases": cases, **fields}


def put_night(root: Path, name: str, doc: dict[str, Any], bench: bool = False) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps(doc))
    if bench:
        (folder / "bench.json").write_text(json.dumps({"schema": "nan-harness-bench/1", "rows": []}))
    return folder


class FakeRunner:
    """Stands in for the suite and the benchmark; reports.compare runs for real."""

    def __init__(self, doc: dict[str, Any] | None, *, pytest_code: int = 0, bench_code: int = 0,
                 bench_compare_code: int = 0) -> None:
        self.doc, self.pytest_code = doc, pytest_code
        self.bench_code, self.bench_compare_code = bench_code, bench_compare_code
        self.commands: list[list[str]] = []

    def __call__(self, argv: Sequence[str], log: Path | None) -> int:
        argv = list(argv)
        self.commands.append(argv)
        module = argv[2]
        if module == "pytest":
            path = Path([a for a in argv if a.startswith("--nan-json=")][-1].split("=", 1)[1])  # the last wins
            path.parent.mkdir(parents=True, exist_ok=True)
            run_id = next((a.split("=", 1)[1] for a in argv if a.startswith("--nan-run-id=")), None)
            if self.doc is not None:  # what the suite writes: its results, carrying the id it was given
                path.write_text(json.dumps({**self.doc, "run_id": run_id}))
            return self.pytest_code
        if module == "bench":
            out = Path(argv[argv.index("--out") + 1])
            out.write_text(json.dumps({"schema": "nan-harness-bench/1", "rows": []}))
            return self.bench_code
        if module == "bench.compare":
            return self.bench_compare_code
        if module == "mutate":
            return 0  # its command is what the tests read
        return steps.run_streaming(argv, log)  # reports.compare, for real

    def find(self, module: str) -> list[str]:
        return next(c for c in self.commands if c[2] == module)


def bench_here() -> tuple[bool, str]:
    return True, ""


def no_bench() -> tuple[bool, str]:
    return False, "ModuleNotFoundError: No module named 'bench'"


def run(argv: list[str], runner: FakeRunner, cards: int = 2, available: Any = bench_here) -> int:
    return cli.main(argv, runner=runner, cards=lambda device: cards, available=available)


def test_previous_night_skips_unfinished_and_foreign_nights_and_says_so(tmp_path: Path) -> None:
    put_night(tmp_path, "2026-07-01", results_doc({A: "passed"}))
    put_night(tmp_path, "2026-07-02", results_doc({A: "passed"}, kernel="other.kernel"))
    put_night(tmp_path, "2026-07-03", results_doc({A: "passed"}, backend="npu"))
    put_night(tmp_path, "2026-07-04", results_doc({A: "passed"}, finished=False))
    (tmp_path / "2026-07-04-120000").mkdir()  # killed before pytest wrote anything
    put_night(tmp_path, "2026-07-06", results_doc({A: "passed"}))  # later than the night judged: never a baseline
    found = nights.previous(tmp_path, "2026-07-05", kernel="kernel", backend="cuda")
    assert found.folder == tmp_path / "2026-07-01"
    lines = "\n".join(found.lines())
    assert "skipping 2026-07-04-120000: no results.json" in lines
    assert "skipping 2026-07-04: the run did not finish (interrupted)" in lines
    assert "skipping 2026-07-03: foreign run: backend npu" in lines
    assert "skipping 2026-07-02: foreign run: kernel other.kernel" in lines
    none = nights.previous(tmp_path, "2026-07-01", kernel="kernel", backend="cuda")
    assert none.folder is None and "no previous night" in none.lines()[-1]


def test_accelerator_night_uses_every_card_the_long_sweeps_and_the_benchmark(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    put_night(tmp_path, "2026-07-01", results_doc({A: "passed", B: "passed"}), bench=True)
    runner = FakeRunner(results_doc({A: "passed", B: "passed"}), bench_compare_code=1)
    code = run(["--device", "cuda", "--root", str(tmp_path), "--night", "2026-07-02",
                "--durations-path", str(tmp_path / "durations.json")], runner, cards=8)
    night = tmp_path / "2026-07-02"
    suite = runner.find("pytest")
    assert suite[suite.index("-n") + 1] == "8" and "--nan-fp32-full" in suite  # one worker per card
    assert suite[-1] == str(ROOT / "tests" / "precision")  # harness.cli's command, from any folder
    assert suite[suite.index("--device") + 1] == "cuda"
    for name in ("precision.html", "junit.xml", "results.json"):
        assert any(a.endswith(str(night / name)) for a in suite), name
    assert runner.find("bench") == [sys.executable, "-m", "bench", "--device", "cuda", "--quick", "--out",
                                    str(night / "bench.json"), "--kernel", "kernel"]
    assert runner.find("bench.compare") == [sys.executable, "-m", "bench.compare",
                                            str(tmp_path / "2026-07-01" / "bench.json"), str(night / "bench.json"),
                                            "--threshold", "0.1"]
    assert code == 1  # no verdict regression, but a slowdown
    out = capsys.readouterr().out
    assert "verdicts: passed (against 2026-07-01" in out and "speed: regressed" in out
    record = json.loads((night / "nightly.json").read_text())
    assert record["verdict"] == "REGRESSION" and record["baseline"] == "2026-07-01" and record["workers"] == 8
    assert json.loads((tmp_path / "durations.json").read_text()) == {A: 0.25, B: 0.25}  # refreshed on accelerators


def test_workers_option_and_cpu_defaults(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runner = FakeRunner(results_doc({A: "passed"}, backend="cpu"))
    assert run(["--device", "npu", "--workers", "3", "--root", str(tmp_path), "--night", "2026-07-01", "--no-bench",
                "--no-refresh-durations", "--", "-k", "fp32"], runner, cards=8) == 0
    suite = runner.find("pytest")
    assert suite[suite.index("-n") + 1] == "3" and suite[-3:-1] == ["-k", "fp32"]
    runner = FakeRunner(results_doc({A: "passed"}, backend="cpu"))
    assert run(["--device", "cpu", "--root", str(tmp_path), "--night", "2026-07-02"], runner, cards=0) == 0
    suite = runner.find("pytest")
    assert suite[suite.index("-n") + 1] == str(cli.CPU_WORKERS) and "--nan-fp32-full" not in suite
    assert not any(c[2] == "bench" for c in runner.commands)
    out = capsys.readouterr().out
    assert "bench: skipped (--device cpu is not an accelerator" in out
    assert "durations: skipped (not refreshed on cpu" in out
    assert "previous night: skipping 2026-07-01: foreign run: another selection" in out  # -k fp32 vs everything


def test_kernel_path_reaches_the_suite_the_benchmark_and_mutate(tmp_path: Path) -> None:
    """A kernel imported from a folder: bench and mutate import it from there too (bench exited 2 without it), both
    nightly's own --kernel-path (from the calling folder) and one among the pytest arguments."""
    runner = FakeRunner(results_doc({A: "passed"}))
    assert run(["--device", "cuda", "--root", str(tmp_path), "--night", "2026-07-01", "--kernel", "my.k",
                "--kernel-path", "src", "--mutate", "--no-refresh-durations", "--", "--kernel-path=more"],
               runner) == 0
    own = f"--kernel-path={Path('src').resolve()}"
    suite = runner.find("pytest")
    assert own in suite and suite.index(own) < suite.index("--kernel-path=more")
    for tool in ("bench", "mutate"):
        assert [a for a in runner.find(tool) if a.startswith("--kernel-path")] == [own, "--kernel-path=more"], tool


def test_benchmark_skipped_with_a_line_when_the_package_is_absent(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    runner = FakeRunner(results_doc({A: "passed"}))
    assert run(["--device", "cuda", "--root", str(tmp_path), "--night", "2026-07-01",
                "--no-refresh-durations"], runner, available=no_bench) == 0
    assert not any(c[2] == "bench" for c in runner.commands)
    assert "bench: skipped (the bench package is not importable here (ModuleNotFoundError" in capsys.readouterr().out


def test_a_failing_benchmark_fails_the_night(tmp_path: Path) -> None:
    runner = FakeRunner(results_doc({A: "passed"}), bench_code=1)
    assert run(["--device", "cuda", "--root", str(tmp_path), "--night", "2026-07-01",
                "--no-refresh-durations"], runner) == 1
    assert json.loads((tmp_path / "2026-07-01" / "nightly.json").read_text())["steps"]["bench"]["status"] == "failed"


def test_verdict_regression_against_the_previous_night_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    put_night(tmp_path, "2026-07-01", results_doc({A: "passed", B: "failed"}, backend="cpu"))
    runner = FakeRunner(results_doc({A: "failed", B: "failed"}, backend="cpu"), pytest_code=1)
    step_summary = tmp_path / "job-summary.md"
    monkeypatch.setenv(markdown.STEP_SUMMARY_VAR, str(step_summary))
    assert run(["--device", "cpu", "--root", str(tmp_path), "--night", "2026-07-02"], runner) == 1
    compare = (tmp_path / "2026-07-02" / "compare.txt").read_text()
    assert "REGRESSIONS (passed -> failed): 1" in compare and A in compare
    summary = (tmp_path / "2026-07-02" / "summary.md").read_text()
    assert summary.startswith("### nan-harness nightly 2026-07-02: REGRESSION (exit 1)")
    assert "Against: `2026-07-01`" in summary and "| verdicts | regressed |" in summary
    assert "### the suite: FAIL" in summary and len(summary.splitlines()) <= markdown.MAX_LINES
    assert step_summary.read_text() == summary  # the night's summary once; the suite inside it adds none
    monkeypatch.delenv(markdown.STEP_SUMMARY_VAR)
    # the same failures again the next night: no regression (reports.compare semantics), exit 0
    runner = FakeRunner(results_doc({A: "failed", B: "failed"}, backend="cpu"), pytest_code=1)
    assert run(["--device", "cpu", "--root", str(tmp_path), "--night", "2026-07-03"], runner) == 0


def test_without_a_previous_night_the_night_is_judged_alone(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    put_night(tmp_path, "2026-07-01", results_doc({A: "passed"}, backend="cpu", finished=False))
    runner = FakeRunner(results_doc({A: "failed"}, backend="cpu"), pytest_code=1)
    assert run(["--device", "cpu", "--root", str(tmp_path), "--night", "2026-07-02"], runner) == 1
    out = capsys.readouterr().out
    assert "skipping 2026-07-01: the run did not finish" in out and "no previous night" in out
    assert json.loads((tmp_path / "2026-07-02" / "nightly.json").read_text())["verdict"] == "FAIL"


def test_an_unfinished_night_is_not_judged(tmp_path: Path) -> None:
    runner = FakeRunner(results_doc({A: "passed"}, finished=False), pytest_code=2)
    assert run(["--device", "cuda", "--root", str(tmp_path), "--night", "2026-07-01"], runner) == 2
    assert json.loads((tmp_path / "2026-07-01" / "nightly.json").read_text())["verdict"] == "NOT JUDGED"
    assert not any(c[2] == "reports.compare" for c in runner.commands)


@pytest.mark.parametrize("code", [2, 4])
def test_a_night_is_judged_only_on_what_its_own_suite_wrote(tmp_path: Path, code: int) -> None:
    """A good night sits in the folder; it is rerun and pytest stops before writing (a rejected argument, exit 4;
    or killed): the old results.json, JUnit and HTML are gone and the night is not judged."""
    folder = put_night(tmp_path, "2026-07-01", results_doc({A: "passed"}))
    (folder / "junit.xml").write_text("<testsuites/>")
    (folder / "precision.html").write_text("<html>green</html>")
    assert run(["--device", "cuda", "--root", str(tmp_path), "--night", "2026-07-01"],
               FakeRunner(None, pytest_code=code)) == 2
    assert not any((folder / name).exists() for name in ("results.json", "junit.xml", "precision.html"))
    assert json.loads((folder / "nightly.json").read_text())["verdict"] == "NOT JUDGED"


def test_a_results_file_from_another_run_is_not_judged(tmp_path: Path) -> None:
    """A results.json that the night's suite did not write (another run id) is never judged as the night's."""
    folder = tmp_path / "2026-07-01"
    doc = {**results_doc({A: "passed"}), "run_id": "someone-else"}

    class Stale(FakeRunner):
        def __call__(self, argv: Sequence[str], log: Path | None) -> int:
            if list(argv)[2] == "pytest":
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "results.json").write_text(json.dumps(doc))
                return 0
            return super().__call__(argv, log)

    assert run(["--device", "cuda", "--root", str(tmp_path), "--night", "2026-07-01"], Stale(None)) == 2
    assert "not this night's run" in json.loads((folder / "nightly.json").read_text())["steps"]["verdicts"]["detail"]


def test_no_card_and_bad_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["--device", "cuda", "--root", str(tmp_path)], FakeRunner(None), cards=-1) == 6  # the machine's
    assert "nightly: ENVIRONMENT: --device cuda: no card visible" in capsys.readouterr().err
    for bad in (["--device", "cuda", "--splits", "2"], ["--device", "cuda", "--splits", "2", "--group", "1"],
                ["--merge"], ["--device", "cuda", "--night", "yesterday"], []):
        with pytest.raises(SystemExit):
            cli.parse(bad)


def test_default_night_name_is_the_date_then_the_time() -> None:
    import datetime

    now = datetime.datetime(2026, 7, 3, 2, 30, 5)
    assert nights.new_name(Path("/nonexistent"), now) == "2026-07-03"
    assert nights.is_night("2026-07-03-023005") and not nights.is_night("trend")


def test_committed_durations_file_is_pytest_splits(tmp_path: Path) -> None:
    durations = json.loads((ROOT / cli.DEFAULT_DURATIONS).read_text())
    assert len(durations) > 300 and all(k.startswith("tests/precision/") for k in durations)
    assert all(isinstance(v, float) and v >= 0 for v in durations.values())


@pytest.mark.skipif(importlib.util.find_spec("bench") is None, reason="the bench package is not on this branch")
def test_bench_commands_parse_with_the_bench_package() -> None:
    from bench.cli import parse

    args = parse(steps.bench_command("cuda", Path("/n"), "kernel")[3:])
    assert args.quick and args.out == "/n/bench.json" and args.device == "cuda" and args.kernel == "kernel"


def test_sharded_nodes_then_one_merge_command_end_to_end(tmp_path: Path, device: str) -> None:
    """Two shard nodes (CPU, narrow) write ROOT/NIGHT/shards/group-i/; --merge builds the night and judges it; an
    unsharded night the next day compares against the merged one."""
    if device != "cpu":
        pytest.skip("the nightly sub-runs use --device cpu")
    import subprocess

    root = tmp_path / "nightly"
    durations = tmp_path / "durations.json"
    durations.write_text((ROOT / cli.DEFAULT_DURATIONS).read_text())
    common = ["--root", str(root), "--durations-path", str(durations)]
    narrow = ["--", "-m", "nan_special"]

    def nightly(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "nightly", *args], cwd=ROOT, env=clean_env(),
                              capture_output=True, text=True, check=False,
                              timeout=hang_limit(slowest_s=60.5))  # this whole test, every nightly run

    nodes = [nightly("--device", "cpu", "--workers", "1", "--night", "2026-07-01", "--splits", "2", "--group", g,
                     *common, *narrow) for g in ("1", "2")]
    for node in nodes:
        assert node.returncode == 0, node.stdout[-3000:] + node.stderr[-3000:]
    assert "python -m nightly --merge --night 2026-07-01" in nodes[0].stdout
    night = root / "2026-07-01"
    shard_docs = [json.loads((night / "shards" / g / "results.json").read_text()) for g in ("group-1", "group-2")]
    assert [d["shard"]["group"] for d in shard_docs] == [1, 2] and all(d["collected"] for d in shard_docs)
    merged = nightly("--merge", "--night", "2026-07-01", "--refresh-durations", *common)
    assert merged.returncode == 0, merged.stdout[-3000:] + merged.stderr[-3000:]
    assert "no previous night" in merged.stdout
    doc = json.loads((night / "results.json").read_text())
    assert doc["finished"] and doc["collected"] == 6 == sum(d["collected"] for d in shard_docs)
    assert (night / "junit.xml").is_file() and 'id="nan-verdict"' in (night / "precision.html").read_text()
    assert set(json.loads(durations.read_text())) >= {c["nodeid"] for c in doc["cases"]}
    nxt = nightly("--device", "cpu", "--workers", "1", "--night", "2026-07-02", *common, *narrow)
    assert nxt.returncode == 0, nxt.stdout[-3000:] + nxt.stderr[-3000:]
    assert "previous night: 2026-07-01" in nxt.stdout and "OK: no regressions" in nxt.stdout
    assert "unchanged: 6" in (root / "2026-07-02" / "compare.txt").read_text()
    # the same night again, with an argument pytest rejects: nothing of the good run above is judged
    again = nightly("--device", "cpu", "--workers", "1", "--night", "2026-07-02", *common, "--", "--nan-gen-cases=abc")
    assert again.returncode == 2 and "not judged" in again.stdout, again.stdout[-3000:] + again.stderr[-3000:]
    # a shard rerun that stops before writing (exit 4) is never merged from its previous results
    bad = nightly("--device", "cpu", "--workers", "1", "--night", "2026-07-01", "--splits", "2", "--group", "2",
                  *common, "--", "--no-such-option")
    assert bad.returncode == 2, bad.stdout[-3000:] + bad.stderr[-3000:]
    remerged = nightly("--merge", "--night", "2026-07-01", *common)
    assert remerged.returncode == 2, remerged.stdout[-3000:] + remerged.stderr[-3000:]
