"""A gate never reads a malformed results.json as a run: reports.compare, reports.merge, nightly.trend and the
nightly's baseline search refuse it with the reason (exit 2, or the night shown or skipped as unusable), never a
traceback and never "OK". Each file is a real run's results.json with one thing broken, as a careless script, a
hand edit or an old writer leaves it."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import Any

import pytest

from nightly import nights, trend
from reports import merge
from tests.support.limits import hang_limit
from tests.support.subrun import ROOT, SubRun, clean_env, run_pytest

pytestmark = [pytest.mark.nan_reports, pytest.mark.usefixtures("cpu_subruns")]
SELECTION = ["tests/precision/test_families.py", "-k", "fp32-special-2x1024-wrapper"]
ONE_SHARD = ["--splits", "1", "--group", "1", "--durations-path", str(ROOT / ".test_durations")]
Change = Callable[[dict[str, Any]], None]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, device: str) -> SubRun:
    """One real, passing run, split as one shard so that merge reads it too: the valid file every test breaks a
    copy of (passing, so that a broken current case is a regression that compare must describe)."""
    if device != "cpu":
        pytest.skip("report sub-runs use --device cpu: run tests/reports with --device cpu")
    done = run_pytest(tmp_path_factory.mktemp("gate") / "run", [*SELECTION, *ONE_SHARD])
    assert done.completed and done.returncode == 0 and len(done.passed) == 1 == len(done.doc["cases"]), done.describe()
    assert done.doc.get("shard"), done.describe()
    return done


def _set(changes: dict[str, Any]) -> Change:
    """A change setting each dotted path ("cases.0.outcome") to its value."""
    def change(doc: dict[str, Any]) -> None:
        for dotted, value in changes.items():
            *parents, last = dotted.split(".")
            target: Any = doc
            for key in parents:
                target = target[int(key)] if isinstance(target, list) else target[key]
            target[int(last) if isinstance(target, list) else last] = value
    return change


def _wrong_row_without_expected(doc: dict[str, Any]) -> None:
    """The case failed, and its wrong row lost its expected count."""
    case = doc["cases"][0]
    case.update(outcome="failed", verdict="wrong_counts",
                wrong_rows=[{"case_id": case["parameters"]["case_id"], "row": 1, "got": 0, "label": ""}])
    doc["exitstatus"] = 1


def _old_writer(doc: dict[str, Any]) -> None:
    """What a nan-harness-results/1 writer left: no word on how the run ended."""
    doc["schema"] = "nan-harness-results/1"
    for key in ("finished", "ended", "exitstatus"):
        del doc[key]


def _case_twice(doc: dict[str, Any]) -> None:
    doc["cases"].append(dict(doc["cases"][0]))


MALFORMED = [
    pytest.param(_set({"cases.0.nodeid": ["tests/precision/test_families.py", "test_case"]}),
                 "cases[0].nodeid must be string", id="nodeid-is-a-list"),
    pytest.param(_set({"cases.0.nodeid": ""}), "cases[0].nodeid must be longer than or equal to 1 characters",
                 id="nodeid-empty"),
    pytest.param(_wrong_row_without_expected, "cases[0].wrong_rows[0] must contain ['expected'] properties",
                 id="wrong-row-without-expected"),
    pytest.param(_set({"cases.0.outcome": None}), "cases[0].outcome must be one of ['passed'", id="outcome-null"),
    pytest.param(_set({"cases.0.outcome": "PASSED"}), "cases[0].outcome must be one of ['passed'",
                 id="outcome-PASSED"),
    pytest.param(_set({"finished": "false"}), "finished must be boolean", id="finished-is-a-string"),
    pytest.param(_set({"cases.0.duration": float("inf")}), "Infinity is not a JSON number", id="duration-infinite"),
    pytest.param(_set({"exitstatus": 2}), "finished is true but exitstatus is 2", id="finished-with-exit-2"),
    pytest.param(_old_writer, "schema nan-harness-results/1 does not record whether its run finished",
                 id="schema-1"),
    pytest.param(_case_twice, "duplicate nodeid in cases", id="duplicate-nodeid"),
    pytest.param(_set({"collected": 0, "ran": 0}), "finished is true but collected is 0",
                 id="finished-collecting-nothing"),
]


def _copy(run: SubRun, folder: Path, change: Change | None = None) -> Path:
    """The run's folder (results.json and junit.xml) copied, its results.json changed."""
    folder.mkdir(parents=True)
    doc = json.loads(run.json_path.read_text(encoding="utf-8"))
    if change is not None:
        change(doc)
    (folder / "results.json").write_text(json.dumps(doc, indent=1), encoding="utf-8")
    shutil.copyfile(run.junit, folder / "junit.xml")
    return folder


def _tool(*args: str) -> subprocess.CompletedProcess[str]:
    """A gate tool as a user runs it: python -m TOOL ARGS from the repo root."""
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=clean_env(), capture_output=True, text=True,
                          timeout=hang_limit(slowest_s=6.2), check=False)  # the slowest test calling it


@pytest.mark.parametrize("extra", [{}, {"run_id": "night-42"}, {"run_id": None}], ids=["as-written", "run-id",
                                                                                         "run-id-null"])
def test_the_untouched_run_compares_ok(run: SubRun, tmp_path: Path, extra: dict[str, Any]) -> None:
    current = _copy(run, tmp_path / "current", _set(extra)) / "results.json"
    done = _tool("reports.compare", str(run.json_path), str(current))
    assert done.returncode == 0 and "OK: no regressions" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("side", ["current", "baseline"])
@pytest.mark.parametrize("change, words", MALFORMED)
def test_compare_refuses_a_malformed_file(run: SubRun, tmp_path: Path, change: Change, words: str,
                                          side: str) -> None:
    broken = _copy(run, tmp_path / "broken", change) / "results.json"
    files = [str(run.json_path), str(broken)] if side == "current" else [str(broken), str(run.json_path)]
    done = _tool("reports.compare", *files)
    assert done.returncode == 2, done.stdout + done.stderr
    assert words in done.stderr and str(broken) in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and "OK" not in done.stdout


@pytest.mark.parametrize("change, words", MALFORMED)
def test_merge_refuses_a_malformed_shard(run: SubRun, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                         change: Change, words: str) -> None:
    shard = _copy(run, tmp_path / "shard", change)
    assert merge.main([str(tmp_path / "out"), str(shard)]) == 2
    assert words in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("change, words", MALFORMED)
def test_trend_shows_a_malformed_night_as_no_results(run: SubRun, tmp_path: Path, change: Change,
                                                     words: str) -> None:
    _copy(run, tmp_path / "2026-01-01")
    _copy(run, tmp_path / "2026-01-02", change)
    assert trend.main([str(tmp_path)]) == 0
    page = (tmp_path / "trend" / "trend.html").read_text(encoding="utf-8")
    row = page[page.index('<tr data-night="2026-01-02">'):]
    assert row[:row.index("</tr>")].count(f"no results: {escape(words)}") == 1, row[:2000]


@pytest.mark.parametrize("change, words", MALFORMED)
def test_the_nightly_never_takes_a_malformed_night_as_baseline(run: SubRun, tmp_path: Path, change: Change,
                                                               words: str) -> None:
    _copy(run, tmp_path / "2026-01-01")
    _copy(run, tmp_path / "2026-01-02", change)
    doc, why = nights.read_results(tmp_path / "2026-01-02")
    assert doc is None and words in why
    base = nights.previous(tmp_path, "2026-01-03", kernel=run.doc["kernel"], backend=run.doc["backend"])
    assert base.folder == tmp_path / "2026-01-01" and base.passed_over == (("2026-01-02", why),)


def test_merge_into_a_file_exits_2(run: SubRun, tmp_path: Path) -> None:
    shard = _copy(run, tmp_path / "shard")
    out = tmp_path / "merged.json"
    out.write_text("mine", encoding="utf-8")
    done = _tool("reports.merge", str(out), str(shard))
    assert done.returncode == 2 and f"{out}: {out} exists and is not a folder" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and out.read_text(encoding="utf-8") == "mine"
    assert _tool("reports.merge", str(tmp_path / "merged"), str(shard)).returncode == 0  # the shard itself is fine


def test_trend_into_a_file_exits_2(run: SubRun, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _copy(run, tmp_path / "2026-01-01")
    out = tmp_path / "trend.html"
    out.write_text("mine", encoding="utf-8")
    assert trend.main([str(tmp_path), "--out", str(out)]) == 2
    assert str(out) in capsys.readouterr().err and out.read_text(encoding="utf-8") == "mine"
