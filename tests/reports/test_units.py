"""Report building blocks without sub-runs: records, summary cells and escaping, waivers, compare."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from reports import compare, summary
from reports.records import CaseResult, Check, params_from_id
from reports.results import SCHEMA
from reports.waivers import WaiverError, load_waivers, unknown_ids

pytestmark = pytest.mark.nan_reports

MATRIX_NODE = "tests/precision/test_matrix.py::test_matrix[bf16-scatter-8x10000-nan0.5-wrapper]"


def _check(case_id: str = "bf16-scatter-8x10000-nan0.5", ok: bool = False, label: str = "", **kw: object) -> str:
    record = {
        "case_id": case_id, "kind": "matrix", "dtype": "bf16", "layout": "scatter", "shape": [8, 10000],
        "nan": "0.5", "path": "wrapper", "seed": 42, "expected_total": 40000, "got_total": 40001,
        "problems": [], "wrong_rows": [] if ok else [{"row": 1, "expected": 5000, "got": 5001, "label": label}],
        "ok": ok, **kw,
    }
    return json.dumps(record)


def test_params_from_matrix_id() -> None:
    assert params_from_id(MATRIX_NODE) == {
        "path": "wrapper", "kind": "matrix", "case_id": "bf16-scatter-8x10000-nan0.5", "dtype": "bf16",
        "layout": "scatter", "shape": [8, 10000], "nan": "0.5",
    }


def test_outcomes_from_reports() -> None:
    crashed = CaseResult(MATRIX_NODE)
    crashed.absorb("setup", "passed", 0.1, (), "", False)
    crashed.absorb("???", "failed", 0.0, (), "worker 'gw0' crashed while running ...", False)
    assert (crashed.outcome, crashed.message) == ("failed", "worker 'gw0' crashed while running ...")
    teardown_error = CaseResult(MATRIX_NODE)
    for when, outcome in (("setup", "passed"), ("call", "passed"), ("teardown", "failed")):
        teardown_error.absorb(when, outcome, 0.0, (), "", False)
    assert teardown_error.outcome == "error"
    waived = CaseResult(MATRIX_NODE)
    waived.absorb("call", "skipped", 0.0, (), "", True)
    assert waived.outcome == "xfailed"


def test_every_check_is_kept() -> None:
    result = CaseResult(MATRIX_NODE)
    props = [("nan_case", _check("a", ok=True)), ("other", "x"), ("nan_case", _check("b"))]
    result.absorb("call", "failed", 0.5, props, "E   AssertionError: case b", False)
    assert [c.case_id for c in result.checks] == ["a", "b"]
    assert result.expected_total == 80000 and result.got_total == 80002
    assert result.wrong_rows == [{"case_id": "b", "row": 1, "expected": 5000, "got": 5001, "label": ""}]


@pytest.mark.parametrize(
    ("outcomes", "state"),
    [([], "absent"), (["passed", "passed"], "pass"), (["failed", "failed"], "fail"), (["passed", "failed"], "mixed"),
     (["skipped", "skipped"], "skip"), (["xfailed", "passed"], "waived"), (["passed", "skipped"], "pass"),
     (["error"], "fail")],
)
def test_cell_state(outcomes: list[str], state: str) -> None:
    assert summary.cell_state(outcomes) == state


def test_summary_escapes_everything() -> None:
    markup = '<img src=x onerror="alert(1)">'
    result = CaseResult(f"tests/x.py::test_y[{markup}]", outcome="failed", message=f"E   RuntimeError: {markup}")
    ieee = CaseResult("tests/x.py::test_ieee", outcome="failed",
                      checks=[Check.from_json(_check(markup, kind="ieee", nan=markup, label=markup))])
    sweep = CaseResult("tests/x.py::test_sweep", outcome="failed",
                       checks=[Check.from_json(_check(markup, kind="sweep", dtype=markup, nan=markup, path=markup))])
    html = summary.render([result, ieee, sweep])
    assert "<img" not in html and "&lt;img src=x" in html


def test_matrix_grid_cells() -> None:
    results = [
        CaseResult(MATRIX_NODE, outcome="failed"),
        CaseResult(MATRIX_NODE.replace("wrapper]", "direct]"), outcome="passed"),
    ]
    html = summary.matrix_grid(results)
    assert 'data-case="bf16-scatter-8x10000-nan0.5" data-state="mixed"' in html
    assert 'data-case="fp32-prefix-1x128-nan0.0" data-state="absent"' in html
    assert html.count('class="nan-cell') == 120


def test_ieee_table_names_the_miscounted_class() -> None:
    row = Check.from_json(_check("fp16-ieee-rows", kind="ieee", dtype="fp16", nan="rows", label="+inf fp16 0x7C00"))
    html = summary.ieee_table([CaseResult("t.py::test_ieee[fp16-rows]", outcome="failed", checks=[row])])
    assert 'data-case="inf fp16" data-state="fail"' in html
    assert 'data-case="quiet_nan fp16" data-state="pass"' in html


def _waivers(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "waivers.toml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[[waiver]]\nid = 'a.py::t'\nreason = 'r'\n", "lacks link"),
        ("[[waiver]]\nid = 'not-a-node-id'\nreason = 'r'\nlink = 'l'\n", "is not a node id"),
        ("[[waiver]]\nid = 'a.py::t'\nreason = 'r'\nlink = 'l'\n" * 2, "waived twice"),
        ("waiver = [", "not valid TOML"),
        ("[[waiver]]\nid = 'a.py::t'\nreason = 'r'\nlink = 'l'\nowner = 'x'\n", "unknown keys"),
    ],
)
def test_bad_waiver_files(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(WaiverError, match=message):
        load_waivers(_waivers(tmp_path, text))


def test_unknown_waiver_ids(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("")
    (tmp_path / "b.py").write_text("")
    waivers = load_waivers(_waivers(tmp_path, "".join(
        f"[[waiver]]\nid = '{i}'\nreason = 'r'\nlink = 'l'\n" for i in ("a.py::t[1]", "a.py::t[9]", "b.py::t", "c.py::t")
    )))
    collected = ["a.py::t[1]", "a.py::t[2]"]
    assert unknown_ids(waivers, collected, tmp_path, set()) == ["a.py::t[9]", "c.py::t"]  # b.py not in this run
    assert unknown_ids(waivers, collected, tmp_path, {"a.py"}) == ["c.py::t"]  # a.py only partly collected


def _doc(path: Path, outcomes: dict[str, str]) -> Path:
    cases = [{"nodeid": n, "outcome": o, "wrong_rows": [], "message": ""} for n, o in outcomes.items()]
    path.write_text(json.dumps({"schema": SCHEMA, "environment": {}, "cases": cases}), encoding="utf-8")
    return path


def test_compare_exit_codes_and_listings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = _doc(tmp_path / "base.json", {"t::a": "passed", "t::b": "failed", "t::c": "passed", "t::gone": "passed",
                                         "t::w": "passed"})
    cur = _doc(tmp_path / "cur.json", {"t::a": "failed", "t::b": "passed", "t::c": "passed", "t::new": "failed",
                                       "t::w": "xfailed"})
    assert compare.main([str(base), str(cur)]) == 1
    out = capsys.readouterr().out
    assert "REGRESSIONS (passed -> failed): 1\n  t::a  passed -> failed" in out
    assert "FIXES (failed -> passed): 1\n  t::b  failed -> passed" in out
    assert "OTHER OUTCOME CHANGES: 1\n  t::w  passed -> xfailed" in out
    assert "NEW CASES: 1\n  t::new  (failed)" in out
    assert "MISSING CASES: 1\n  t::gone  (was passed)" in out
    assert out.rstrip().endswith("FAIL: 1 regression(s)")
    fixed = _doc(tmp_path / "fixed.json", {"t::a": "passed", "t::b": "passed", "t::new": "failed"})
    assert compare.main([str(base), str(fixed)]) == 0  # fixes, new failures and missing cases do not gate
    assert compare.main([str(base), str(base)]) == 0
    assert "OK: no regressions" in capsys.readouterr().out


def test_compare_refuses_foreign_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"cases": []}', encoding="utf-8")
    assert compare.main([str(other), str(other)]) == 2
    assert compare.main([str(tmp_path / "absent.json"), str(other)]) == 2
    assert "not a nan-harness-results/1 results file" in capsys.readouterr().err


def test_planted_table_scores_and_escapes() -> None:
    from reports.records import CaseResult
    from reports.summary import planted_table

    def result(variant: str, caught: bool, applies: bool = True) -> CaseResult:
        r = CaseResult(f"tests/selftest/test_planted.py::test_planted_bug_is_caught[{variant}]")
        r.planted = {"variant": variant, "bug_class": "predicate", "caught": caught, "applies": applies,
                     "hits": ["test_matrix[<b>x</b>]"] if caught else []}
        return r

    html = planted_table([result("pred_inf", True), result("pred_neg", False), result("int1", False, applies=False)])
    assert "Planted bugs caught: 1/2" in html
    assert 'data-case="pred_neg" data-state="fail"' in html and 'data-case="int1" data-state="skip"' in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html
    assert planted_table([CaseResult("t::a")]) == ""


def test_long_failure_lists_fold_below_the_tables() -> None:
    from reports.records import CaseResult
    from reports.summary import SHOWN_FAILURES, render

    results = []
    for i in range(SHOWN_FAILURES + 5):
        r = CaseResult(f"tests/precision/test_layouts.py::test_edge_shapes[fp32-shape-1x{i}-wrapper]", outcome="failed")
        results.append(r)
    results.append(CaseResult("tests/precision/test_matrix.py::test_matrix[fp32-prefix-1x128-nan0.5-wrapper]",
                              outcome="failed"))
    html = render(results)
    assert f"{SHOWN_FAILURES + 6} failed test(s)" in html
    assert "test_edge_shapes 20, test_matrix 1" in html  # the tally, busiest first
    assert "6 more failed test(s)" in html
    assert html.index('id="nan-matrix-grid"') < html.index('id="nan-failures"')  # tables first
