"""Failed tests rerun in fresh processes: flaky or deterministic labels in every output, bounds, known flakes.

Sub-runs are narrow (the two fp32 special cases, a matrix case): a flaky planted kernel (tests.reports.flaky_kernel,
wrong on its first call across processes) and a deterministic one (tests.reports.planted_kernel).
"""
from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from reports import flaky, markdown, results, summary
from tests.support.forkserver import ForkServer
from tests.support.subrun import SUITE, SubRun, run_pytest
from verdict.record import TestRecord

pytestmark = [pytest.mark.nan_reports]

FAMILIES = f"{SUITE}/test_families.py"
SPECIAL_WRAPPER = f"{FAMILIES}::test_case[fp32-special-2x1024-wrapper]"
MATRIX = "fp32 and nan0.5 and prefix and (2x5000 or 4x8192) and wrapper"  # the deterministic kernel fails both
MATRIX_IDS = [f"{FAMILIES}::test_case[fp32-prefix-{shape}-nan0.5-wrapper]" for shape in ("2x5000", "4x8192")]


def junit_properties(run: SubRun, nodeid: str) -> dict[str, str]:
    name = nodeid.rsplit("::", 1)[-1]
    case = next(c for c in ET.parse(run.junit).getroot().iter("testcase") if c.get("name") == name)
    return {p.get("name"): p.get("value") for p in case.iter("property")}


@pytest.mark.usefixtures("cpu_subruns")
def test_a_flaky_failure_stays_a_failure_labelled_flaky_in_every_output(tmp_path: Path,
                                                                        forks: ForkServer | None) -> None:
    counter = tmp_path / "counter"
    counter.mkdir()
    run = run_pytest(tmp_path / "run", [SUITE, "--kernel", "tests.reports.flaky_kernel", "-k", "fp32-special",
                                        "--nan-reruns=2"], env={"NAN_FLAKY_DIR": str(counter)}, server=forks)
    assert run.returncode == 1 and run.completed, run.describe()
    record = run.record(SPECIAL_WRAPPER)
    assert record.outcome == "failed" and record.verdict == "wrong_counts", run.describe()
    assert record.flaky == "flaky" and [r["outcome"] for r in record.reruns] == ["passed", "passed"], record
    assert run.doc["exitstatus"] == 1 and run.doc["counts"].get("failed") == 1
    results.validate(run.doc, "results.json")
    assert junit_properties(run, SPECIAL_WRAPPER)["nan_flaky"] == "flaky"
    assert "flaky (passed 2 of 2 reruns)" in (run.folder / "summary.md").read_text()
    assert 'data-flaky="flaky">[flaky (passed 2 of 2 reruns)]' in run.html.read_text()
    assert "failed tests rerun in a fresh process: 1 flaky (still failures)" in run.output
    assert "nan-harness: FAIL" in run.output


@pytest.mark.usefixtures("cpu_subruns")
def test_a_crash_is_rerun_too(tmp_path: Path, forks: ForkServer | None) -> None:
    counter = tmp_path / "counter"
    counter.mkdir()
    run = run_pytest(tmp_path / "run", [SUITE, "--kernel", "tests.reports.flaky_kernel", "-k", "fp32-special-2x1024-w",
                                        "--nan-reruns=1"],
                     env={"NAN_FLAKY_DIR": str(counter), "NAN_FLAKY_HOW": "crash"}, server=forks)
    assert run.returncode == 1 and run.completed, run.describe()
    record = run.record(SPECIAL_WRAPPER)
    assert record.failed and record.verdict == "crash", run.describe()
    assert record.flaky == "flaky" and [(r["outcome"], r["verdict"]) for r in record.reruns] == [("passed", "pass")]


@pytest.mark.usefixtures("cpu_subruns")
def test_a_deterministic_failure_the_per_family_bound_and_the_known_flaky_list(tmp_path: Path,
                                                                               forks: ForkServer | None) -> None:
    known = tmp_path / "known.toml"
    known.write_text('[[flaky]]\nid = "tests/precision/test_families.py::test_case[fp32-special-*]"\n'
                     'reason = "planted: known to flake"\nlink = "https://example.invalid/issues/9"\n')
    run = run_pytest(tmp_path / "run", [SUITE, "--kernel", "tests.reports.planted_kernel", "-k",
                                        f"fp32-special or ({MATRIX})", "--nan-reruns=1",
                                        "--nan-rerun-per-family=1", f"--nan-known-flaky={known}"], server=forks)
    assert run.returncode == 1 and run.completed, run.describe()
    first, second = (run.record(n) for n in MATRIX_IDS)
    assert first.flaky == "deterministic" and [r["outcome"] for r in first.reruns] == ["failed"], first
    assert second.flaky == ("not rerun: 1 failed test(s) of matrix rerun already (--nan-rerun-per-family)"), second
    special = run.record(SPECIAL_WRAPPER)
    assert special.failed and special.flaky == "known flaky: planted: known to flake (https://example.invalid/issues/9)"
    assert not special.reruns
    assert all(r.failed for r in (first, second, special)) and run.doc["exitstatus"] == 1
    assert junit_properties(run, MATRIX_IDS[0])["nan_flaky"] == "deterministic"
    assert "deterministic (failed 1 of 1 rerun)" in (run.folder / "summary.md").read_text()
    assert "rerunning 1 failed test(s) in a fresh process (round 1 of 1)" in run.output


@pytest.mark.usefixtures("cpu_subruns")
def test_the_time_budget_leaves_not_rerun_labels(tmp_path: Path, forks: ForkServer | None) -> None:
    run = run_pytest(tmp_path / "run", [SUITE, "--kernel", "tests.reports.planted_kernel", "-k", "fp32-special",
                                        "--nan-reruns=2", "--nan-rerun-budget-s=1"], server=forks)
    assert run.returncode == 1 and run.completed, run.describe()
    record = run.record(SPECIAL_WRAPPER)
    assert record.failed and record.flaky == ("not rerun: the rerun time budget (1 s, --nan-rerun-budget-s) was "
                                              "spent"), record
    assert "1 not rerun" in run.output


@pytest.mark.usefixtures("cpu_subruns")
def test_reruns_zero_turns_them_off_and_labels_nothing(tmp_path: Path, forks: ForkServer | None) -> None:
    counter = tmp_path / "counter"
    counter.mkdir()
    run = run_pytest(tmp_path / "run", [SUITE, "--kernel", "tests.reports.flaky_kernel", "-k", "fp32-special-2x1024-w",
                                        "--nan-reruns=0"], env={"NAN_FLAKY_DIR": str(counter)}, server=forks)
    assert run.returncode == 1 and run.completed, run.describe()
    record = run.record(SPECIAL_WRAPPER)
    assert record.failed and record.flaky is None and not record.reruns  # off: no label, as before reruns existed
    assert "rerunning" not in run.output and "nan-harness reruns" not in run.output
    assert (counter / "calls").read_text() == "x", "no rerun ran the kernel again"


# --- units: no sub-run -------------------------------------------------------------------------------------------

def _failed(nodeid: str, family: str = "") -> TestRecord:
    from verdict.record import CaseParams

    return TestRecord(nodeid, "failed", "wrong_counts", CaseParams(family, "c") if family else None)


def test_plan_bounds_per_family_and_labels_known_flakes_and_stops() -> None:
    failed = [_failed(f"t.py::test_case[m{i}]", "matrix") for i in range(4)] + [_failed("t.py::test_contract[x]")]
    known = (flaky.KnownFlaky("t.py::test_case[m3*", "r", "l"),)
    planned = flaky.plan(failed, known=known, per_family=2)
    assert planned.rerun == ("t.py::test_case[m0]", "t.py::test_case[m1]", "t.py::test_contract[x]")
    assert planned.labels["t.py::test_case[m2]"].startswith("not rerun: 2 failed test(s) of matrix")
    assert planned.labels["t.py::test_case[m3]"] == "known flaky: r (l)"
    stopped = flaky.plan(failed, per_family=2, stop="the run was interrupted")
    assert not stopped.rerun and set(stopped.labels.values()) == {"not rerun: the run was interrupted"}


def test_labels_from_reruns_and_their_words() -> None:
    assert flaky.label_of([{"outcome": "failed"}, {"outcome": "passed"}], "x") == "flaky"
    assert flaky.label_of([{"outcome": "failed"}], "x") == "deterministic"
    assert flaky.label_of([], "budget") == "not rerun: budget"
    record = _failed("t.py::t[a]").with_(flaky="flaky", reruns=({"outcome": "passed"}, {"outcome": "failed"}))
    assert flaky.describe(record) == "flaky (passed 1 of 2 reruns)"
    assert flaky.tally([record, _failed("t.py::t[b]").with_(flaky="not rerun: x")]) == "1 flaky, 1 not rerun"
    assert TestRecord.from_dict(record.to_dict()) == record


def test_known_flaky_ids_match_literally_but_for_stars(tmp_path: Path) -> None:
    entry = flaky.KnownFlaky("t.py::test_case[fp32-*-wrapper]", "r", "l")
    assert entry.matches("t.py::test_case[fp32-special-2x1024-wrapper]")
    assert not entry.matches("t.py::test_case[fp32-special-2x1024-direct]")
    assert not flaky.KnownFlaky("t.py::test_case[ab]", "r", "l").matches("t.py::test_case[a]")  # no [..] class
    bad = tmp_path / "bad.toml"
    for text, words in (('[[flaky]]\nid = "t.py::x"\nreason = "r"\n', "lacks link"),
                        ('[[flaky]]\nid = "x"\nreason = "r"\nlink = "l"\n', "not a node id"),
                        ('[[waiver]]\nid = "t.py::x"\n', "use [[flaky]] tables"), ("[[", "not valid TOML")):
        bad.write_text(text)
        with pytest.raises(flaky.KnownFlakyError, match=words.replace("[", r"\[")):
            flaky.load_known(bad)


def _doc(case: dict) -> dict:
    return results.document([], {}, 1, collected=1, finished=True, ended="tests failed") | {"cases": [case], "ran": 1}


def test_results_json_round_trips_labels_refuses_a_labelled_pass_and_reads_older_files() -> None:
    record = _failed("t.py::t[a]").with_(flaky="deterministic", reruns=({"outcome": "failed", "verdict": "wrong_counts",
                                                                          "seconds": 1.5, "message": "m"},))
    results.validate(_doc(record.to_dict()), "new")
    older = record.to_dict()
    del older["flaky"], older["reruns"]
    results.validate(_doc(older), "older")
    assert TestRecord.from_dict(older).flaky is None
    green = {**record.to_dict(), "outcome": "passed", "verdict": "pass"}
    with pytest.raises(results.ResultsError, match="did not fail"):
        results.validate(_doc(green), "green")
    with pytest.raises(results.ResultsError, match=r"cases\[0\].flaky"):
        results.validate(_doc({**record.to_dict(), "flaky": "maybe"}), "bad")
    with pytest.raises(results.ResultsError, match=r"cases\[0\].reruns\[0\].outcome"):
        results.validate(_doc({**record.to_dict(), "reruns": [{"outcome": "great"}]}), "bad")


def test_html_and_markdown_show_each_failed_tests_label() -> None:
    record = _failed("t.py::t[a]").with_(flaky="flaky", reruns=({"outcome": "passed"},))
    assert 'data-flaky="flaky">[flaky (passed 1 of 1 rerun)]' in summary.failure_list([record])
    run = results.Results.from_doc(_doc(record.to_dict()))
    assert "wrong counts, flaky (passed 1 of 1 rerun)" in markdown.run_summary(run)
    plain = _failed("t.py::t[b]")
    assert "nan-flaky" not in summary.failure_list([plain])
    assert json.loads(json.dumps(record.to_dict()))["flaky"] == "flaky"


class _Config:
    """What reports.reruns.Reruns reads of a config, for a run that must not rerun."""

    def __init__(self, **options: object) -> None:
        self.options = {"--nan-reruns": 2, "--nan-rerun-per-family": 3, "--nan-rerun-budget-s": 60, **options}
        self.stash: dict[object, object] = {}
        self.option = type("Option", (), {"nan_in_process": False})()
        self.pluginmanager = type("PM", (), {"get_plugin": staticmethod(lambda name: None)})()
        self.invocation_params = type("Invocation", (), {"dir": Path.cwd()})()

    def getoption(self, name: str, default: object = None) -> object:
        return self.options.get(name, default)


class _Collector:
    def __init__(self, records: list[TestRecord]) -> None:
        self.records = records
        self.flaky: dict[str, tuple[str, tuple[dict, ...]]] = {}

    def results(self) -> list[TestRecord]:
        return [r.with_(flaky=self.flaky[r.nodeid][0]) if r.nodeid in self.flaky else r for r in self.records]


def test_an_interrupted_run_or_another_ending_reruns_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness import reruns as children
    from reports import reruns, run_state

    monkeypatch.setattr(children, "run_round", lambda *a, **k: pytest.fail("a rerun started"))
    for interrupted, status, words in ((True, 1, "the run was interrupted"), (False, 2, "the run was interrupted"),
                                       (False, 3, "the run ended with exit status 3")):
        config = _Config()  # this run's interrupts are its state's, never another run's in the same process
        config.stash[run_state.STATE_KEY] = run_state.RunState("r", "t", interrupted=["Ctrl-C"] if interrupted else [])
        collector = _Collector([_failed("t.py::t[a]", "matrix")])
        reruns.Reruns(config, ()).label(collector, status)  # type: ignore[arg-type]
        assert collector.flaky == {"t.py::t[a]": (f"not rerun: {words}", ())}
    collector = _Collector([_failed("t.py::t[a]", "matrix")])
    reruns.Reruns(_Config(maxfail=1), ()).label(collector, 1)  # type: ignore[arg-type]
    assert collector.flaky["t.py::t[a]"][0] == "not rerun: the run stops at its first failures (-x, --maxfail)"
    off = _Collector([_failed("t.py::t[a]", "matrix"), _failed("t.py::t[b]", "matrix")])
    known = (flaky.KnownFlaky("t.py::t[a]", "r", "l"),)
    reruns.Reruns(_Config(**{"--nan-reruns": 0}), known).label(off, 1)  # type: ignore[arg-type]
    assert off.flaky == {"t.py::t[a]": ("known flaky: r (l)", ())}  # off: the known-flaky list still labels


def test_a_rerun_that_breaks_or_is_interrupted_still_labels_every_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    from harness import reruns as children
    from reports import reruns, run_state

    monkeypatch.setattr(children, "child_argv", lambda *a, **k: [])
    for raised, words in ((KeyboardInterrupt(), "the run was interrupted during the reruns"),
                          (OSError("no fork"), "the reruns failed (OSError: no fork)")):
        def run_round(*args: object, raised: BaseException = raised) -> None:
            raise raised

        monkeypatch.setattr(children, "run_round", run_round)
        config = _Config()
        collector = _Collector([_failed("t.py::t[a]", "matrix")])
        config.stash[run_state.STATE_KEY] = run_state.RunState("r", "t", collector=collector)  # type: ignore[arg-type]
        hook = reruns.Reruns(config, ()).pytest_sessionfinish(None, 1)  # type: ignore[arg-type]
        next(hook)  # the part before the reports' own sessionfinish: labels, then the reports are written
        assert collector.flaky == {"t.py::t[a]": (f"not rerun: {words}", ())}


def test_the_child_run_gets_this_runs_harness_options_but_its_own_reports(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from harness import reruns as children

    def option(name: str, default: object) -> SimpleNamespace:
        return SimpleNamespace(dest=name.lstrip("-").replace("-", "_"), default=default, names=lambda: [name])

    options = [option("--device", "auto"), option("--kernel", "kernel"), option("--kernel-path", []),
               option("--nan-fp32-full", False), option("--nan-gen-seed", 8), option("--nan-json", "out/results.json"),
               option("--nan-reruns", 2), option("--nan-run-id", None), option("--nan-in-process", False)]
    config = SimpleNamespace(
        option=SimpleNamespace(device="cpu", kernel="my.mod", kernel_path=["a", "b"], nan_fp32_full=True,
                               nan_gen_seed=8,
                               nan_json="/elsewhere/results.json", nan_reruns=2, nan_run_id="r1", nan_in_process=False,
                               plugins=["harness.plugin"], override_ini=["xfail_strict=true"], timeout=900,
                               timeout_method="thread"),
        inipath=tmp_path / "pyproject.toml", rootpath=tmp_path,
        pluginmanager=SimpleNamespace(hasplugin=lambda name: name in ("timeout", "html")))
    argv = children.child_argv(config, ["t.py::test_case[x]"], tmp_path / "round", options,  # type: ignore[arg-type]
                               max_crashes=2)
    assert argv[argv.index("-c") + 1] == str(tmp_path / "pyproject.toml") and f"--rootdir={tmp_path}" in argv
    assert ["--device=cpu", "--kernel=my.mod", "--kernel-path=a", "--kernel-path=b", "--nan-fp32-full"] == [
        a for a in argv if a.startswith(("--device", "--kernel", "--nan-fp32"))]
    assert "--nan-gen-seed=8" not in argv and "--nan-run-id=r1" not in argv  # a default; this run's own id
    assert [a for a in argv if a.startswith("--nan-json")] == [f"--nan-json={tmp_path / 'round' / 'results.json'}"]
    assert "--nan-reruns=0" in argv and "--nan-reruns=2" not in argv and "--nan-markdown=" in argv
    assert ["-p", "harness.plugin"] == argv[argv.index("harness.plugin") - 1:argv.index("harness.plugin") + 1]
    assert "--timeout=900" in argv and "-n" in argv and argv[-1] == str(tmp_path / "t.py::test_case[x]")
