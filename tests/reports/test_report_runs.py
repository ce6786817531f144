"""Sub-runs against the planted kernel: results.json, JUnit, waivers, xdist == serial, compare, raw escaping."""
from __future__ import annotations

import json
import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from html import unescape

import fastjsonschema
import pytest

from reports import flaky, results
from reports.results import SCHEMA
from verdict.record import VALUE_KINDS, VERDICTS
from tests.reports import runs
from tests.support.records import comparable
from tests.reports.planted_kernel import PLANTED_MARKUP
from tests.support.limits import hang_limit

pytestmark = [pytest.mark.nan_reports, pytest.mark.usefixtures("cpu_subruns")]

M = runs.MATRIX + "::test_case"
CRASH = runs.PLANTED_CASES + "::test_planted_worker_crash"


@pytest.fixture
def planted(tmp_path_factory: pytest.TempPathFactory) -> runs.SubRun:
    return runs.planted_xdist(tmp_path_factory)


def test_the_shipped_json_schema_accepts_a_real_run_with_any_validator(planted: runs.SubRun) -> None:
    """results.schema.json is what a user's own CI validates with: a run's file passes it as the file is, and its
    closed sets are the words the harness writes (a new verdict or outcome must reach the schema)."""
    schema = json.loads(results.SCHEMA_FILE.read_text(encoding="utf-8"))
    fastjsonschema.compile(schema)(planted.results())
    words = schema["definitions"]
    assert words["verdict"]["enum"] == list(VERDICTS) and words["outcome"]["enum"] == list(results.OUTCOMES)
    assert schema["properties"]["schema"]["const"] == SCHEMA
    assert all(f"|{kind}" in words["held"]["items"][0]["pattern"] or f"({kind}" in words["held"]["items"][0]["pattern"]
               for kind in VALUE_KINDS)
    assert all(kind in words["flaky_label"]["pattern"] for kind in flaky.KINDS)


def test_results_json_schema(planted: runs.SubRun) -> None:
    doc = planted.results()
    assert doc["schema"] == SCHEMA and doc["exitstatus"] == 1
    assert doc["environment"]["Kernel module"] == runs.PLANTED_KERNEL
    assert doc["environment"]["Seed"] == "42" and doc["environment"]["Backend"] == "cpu"
    assert {"Torch", "Triton", "Device", "NaN predicate", "Kernel file"} <= doc["environment"].keys()
    assert len(doc["cases"]) == 35 and sum(doc["counts"].values()) == 35 == doc["collected"]
    assert doc["finished"] is True and doc["ended"] == "tests failed"
    keys = {"id", "nodeid", "family", "parameters", "path", "outcome", "verdict", "duration", "expected_total",
            "got_total", "wrong_rows", "cards", "message", "waiver", "checks"}
    assert all(keys <= c.keys() for c in doc["cases"])
    case = planted.case(f"{M}[fp32-scatter-4x8192-nan0.5-wrapper]")
    assert case["id"] == "test_case[fp32-scatter-4x8192-nan0.5-wrapper]"
    assert case["parameters"] == {"family": "matrix", "case_id": "fp32-scatter-4x8192-nan0.5", "dtype": "fp32",
                                  "layout": "scatter", "shape": [4, 8192], "detail": "0.5", "seed": 42,
                                  "row_classes": [],  # the matrix plants the canonical quiet NaN, as data
                                  "nan_patterns": [{"name": "quiet_nan", "dtype": "fp32", "bits": 0x7FC00000,
                                                    "is_nan": True, "negative": False}],
                                  "in_domain": True, "buffer_step": None}
    assert case["verdict"] == "wrong_counts"
    assert (case["path"], case["outcome"], case["expected_total"], case["got_total"]) == ("wrapper", "failed", 16384, 16385)
    assert case["wrong_rows"] == [{"case_id": "fp32-scatter-4x8192-nan0.5", "row": 1, "expected": 4096, "got": 4097,
                                   "label": ""}]
    assert case["duration"] > 0
    direct = planted.case(f"{M}[fp32-scatter-8x10000-nan0.5-direct]")  # the planted kernel stops after one block
    assert direct["outcome"] == "failed" and len(direct["wrong_rows"]) == 8
    assert planted.case(f"{M}[fp32-prefix-1x128-nan0.5-direct]")["outcome"] == "passed"


def test_cases_without_check_records(planted: runs.SubRun) -> None:
    crash = planted.case(CRASH)
    assert crash["outcome"] == "failed" and "crashed while running" in crash["message"]
    assert crash["verdict"] == "crash"
    raised = planted.case(runs.PLANTED_CASES + "::test_planted_raises")
    assert raised["outcome"] == "failed" and raised["message"].startswith("RuntimeError: kernel said <b class=")
    assert raised["checks"] == [] and raised["expected_total"] is None
    two = planted.case(runs.PLANTED_CASES + "::test_planted_two_checks")
    assert [c["params"]["case_id"] for c in two["checks"]] == ["fp32-two-a", "fp32-two-b"]
    assert [c["ok"] for c in two["checks"]] == [True, False]
    assert (two["expected_total"], two["got_total"]) == (48, 49)


def test_junit_xml(planted: runs.SubRun) -> None:
    suite = ET.parse(planted.junit).getroot()
    cases = {f"{c.get('classname')}::{c.get('name')}": c for c in suite.iter("testcase")}
    failing = next(c for k, c in cases.items() if k.endswith("test_case[fp32-scatter-4x8192-nan0.5-wrapper]"))
    assert failing.find("failure") is not None
    props = [p.get("value") for p in failing.iter("property") if p.get("name") == "nan_case"]
    assert props and '"got_total": 16385' in props[0]


def test_waivers_become_strict_xfails(planted: runs.SubRun) -> None:
    waived = planted.case(runs.MATRIX_WAIVED)
    assert waived["outcome"] == "xfailed" and waived["waiver"]["link"] == "https://example.invalid/issues/1"
    stale = planted.case(runs.MATRIX_STALE)
    assert stale["outcome"] == "failed" and "[XPASS(strict)] waived: planted: stale" in stale["message"]
    assert "XFAIL tests/precision/test_families.py::test_case[fp32-prefix-2x5000-nan0.5-wrapper]" in planted.output


@pytest.mark.parametrize("workers", [[], ["-n", "1"]], ids=["plain", "xdist"])
def test_unknown_waiver_id_is_an_error(tmp_path: pytest.TempPathFactory, workers: list[str]) -> None:
    typo = runs.MATRIX + "::test_case[fp32-prefix-1x128-nan0.7-wrapper]"
    waivers = runs.waiver_file(tmp_path, f'[[waiver]]\nid = "{typo}"\nreason = "r"\nlink = "l"\n')
    args = [runs.MATRIX, "-k", "fp32-prefix-1x128-nan0.0", f"--nan-waivers={waivers}"]
    run = runs.run_pytest(tmp_path / "run", [*args, *workers])
    assert run.returncode == 1, run.output  # collection runs in the worker: a collection error
    assert f"id(s) match no collected test:\n  {typo}" in run.output
    assert "INTERNALERROR" not in run.output


def _summary(html: str) -> str:
    """The summary block, minus the crash case's line (it crashes only under xdist)."""
    block = re.search(r'<div class="nan-summary">.*?</div>', html, re.S)
    assert block
    # the failure list folds after a fixed number of items: flatten it so one more failure does not move the fold
    flat = re.sub(r'</ul><details id="nan-more-failures"><summary>\d+ more failed test\(s\)</summary><ul>', "",
                  block.group(0)).replace("</ul></details>", "</ul>")
    flat = re.sub(r"(, )?test_planted_worker_crash 1(, )?", lambda m: ", " if m[1] and m[2] else "", flat)
    without_crash = re.sub(r"<li><b>crash</b> <code>test_planted_worker_crash</code>.*?</li>", "", flat)
    without_crash = re.sub(r'<p id="nan-tally">.*?</p>', "", without_crash)
    without_crash = re.sub(r'<h3>Diagnosis</h3><ol id="nan-diagnosis">.*?</ol>', "", without_crash)
    without_crash = re.sub(r'<p id="nan-not-run-head">.*?</p><ul id="nan-gaps">.*?</ul>', "", without_crash)
    return re.sub(r"Failed tests \((\d+)\)", lambda m: f"{int(m[1]) - ('crashed while' in block.group(0))} failed",
                  without_crash)


def test_xdist_gives_the_serial_content(planted: runs.SubRun, tmp_path_factory: pytest.TempPathFactory) -> None:
    serial = runs.planted_serial(tmp_path_factory)
    xdist_cases = {c["nodeid"]: c for c in comparable(planted.results()["cases"])}
    serial_cases = {c["nodeid"]: c for c in comparable(serial.results()["cases"])}
    assert xdist_cases.pop(CRASH)["outcome"] == "failed" and serial_cases.pop(CRASH)["outcome"] == "skipped"
    assert xdist_cases == serial_cases
    xdist_summary = _summary(planted.html.read_text(encoding="utf-8"))
    assert xdist_summary == _summary(serial.html.read_text(encoding="utf-8"))
    assert "nan-grid-matrix" in xdist_summary and 'data-state="fail"' in xdist_summary


def test_the_page_opens_with_the_verdict_and_the_environment_follows(planted: runs.SubRun) -> None:
    """The first screen is the verdict: banner, tally, gaps, diagnosis and failures precede the environment, and
    pytest-html's own environment table (its template draws it above everything) is left empty."""
    html = planted.html.read_text(encoding="utf-8")
    marks = ('id="nan-verdict"', 'id="nan-tally"', 'id="nan-gaps"', 'id="nan-diagnosis"', 'id="nan-failures"',
             'id="nan-environment"', 'id="results-table"')
    where = [html.index(mark) for mark in marks]
    assert where == sorted(where), dict(zip(marks, where))
    environment = html[where[marks.index('id="nan-environment"')]:]
    assert f"<td>Kernel module</td><td>{runs.PLANTED_KERNEL}</td>" in environment[:environment.index("</table>")]
    assert '<table id="environment"></table>' in html
    blob = re.search(r'data-jsonblob="([^"]*)"', html)
    assert blob and json.loads(unescape(blob[1]))["environment"] == {}


def test_raw_html_never_carries_planted_markup(planted: runs.SubRun) -> None:
    html = planted.html.read_text(encoding="utf-8")
    assert "planted-markup" in html  # it is there, as text
    assert PLANTED_MARKUP not in html and "<script>document.title" not in html


def _compare(*paths: object) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "reports.compare", *map(str, paths)]
    return subprocess.run(cmd, cwd=runs.ROOT, capture_output=True, text=True, check=False,
                          timeout=hang_limit(slowest_s=17.3))  # the whole test, its sub-runs included


def test_compare_names_what_the_planted_kernel_broke(planted: runs.SubRun,
                                                     tmp_path_factory: pytest.TempPathFactory) -> None:
    clean = runs.clean(tmp_path_factory)
    assert clean.returncode == 1  # the planted cases fail against any kernel; the anchor's cases pass
    assert clean.case(f"{M}[fp32-scatter-4x8192-nan0.5-wrapper]")["outcome"] == "passed"
    done = _compare(clean.json_path, planted.json_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert (f"  {M}[fp32-scatter-4x8192-nan0.5-wrapper]  passed -> failed: row 1: expected 4096, got 4097"
            in done.stdout)
    assert f"  {M}[fp32-scatter-8x10000-nan0.5-direct]  passed -> failed: row 0: expected 5000, got 4095" in done.stdout
    assert f"  {runs.MATRIX_WAIVED}  passed -> xfailed" in done.stdout
    assert f"  {CRASH}  skipped -> failed" in done.stdout  # the crash is skipped in the clean run
    assert "REGRESSIONS (passed -> failed): 20" in done.stdout
    assert done.stdout.rstrip().endswith("FAIL: 20 regression(s), 0 case(s) of coverage lost")
    back = _compare(planted.json_path, clean.json_path)
    assert back.returncode == 0 and "FIXES (failed -> passed): 21" in back.stdout
    assert _compare(clean.json_path, clean.json_path).returncode == 0
