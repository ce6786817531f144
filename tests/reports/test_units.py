"""Report building blocks without sub-runs: records, summary cells and escaping, waivers, compare."""
from __future__ import annotations

import json
from dataclasses import replace
import subprocess
import sys
from pathlib import Path

import pytest

from cases import registry
from reports import compare, results, summary, tables
from reports.collector import _Builder
from reports.diagnosis import diagnose
from reports.markup import esc
from reports.results import SCHEMA
from reports.text import why
from reports.waivers import WaiverError, load_waivers, unknown_ids
from tests.support.limits import hang_limit
from tests.support.subrun import ROOT
from cases.formats import fmt_of
from cases.ieee import CLASS_BY_NAME, value_class
from verdict.problem import MALFORMED, OTHER, STRAY_WRITE, Problem
from verdict.record import CaseParams, Check, TestRecord, WrongRow

pytestmark = pytest.mark.nan_reports

MATRIX_NODE = "tests/precision/test_families.py::test_case[bf16-scatter-8x10000-nan0.5-wrapper]"
PARAMS = CaseParams("matrix", "bf16-scatter-8x10000-nan0.5", "bf16", "scatter", (8, 10000), "0.5", 42)
FAMILIES = registry.load()


def _check(params: CaseParams = PARAMS, ok: bool = False, label: str = "", path: str = "wrapper") -> Check:
    wrong = () if ok else (WrongRow(1, 5000, 5001, label),)
    return Check(params, path, "pass" if ok else "wrong_counts", 40000, 40000 if ok else 40001, (), wrong)


def test_record_round_trips_through_json() -> None:
    record = TestRecord(MATRIX_NODE, "failed", "wrong_counts", PARAMS, 0.5, (_check(),), "msg", None, None)
    assert TestRecord.from_json(record.to_json()) == record
    assert Check.from_json(_check().to_json()) == _check()


def _with_data() -> Check:
    """A check with the data rules read: row classes, NaN patterns and kinded problems beside a plain one."""
    fmt = fmt_of("bf16")
    nan = value_class(0xFFFF, fmt)
    params = replace(PARAMS, row_classes=(value_class(0x7FC0, fmt), nan), nan_patterns=(nan,))
    return replace(_check(params), problems=(Problem(STRAY_WRITE, "kernel wrote 1 int32 slot(s) after its output"),
                                             Problem(MALFORMED, "dtype torch.int64, expected torch.int32"), "plain"))


def test_record_data_round_trips_through_json_and_results(tmp_path: Path) -> None:
    """Row classes, NaN patterns and problem kinds survive to_json/from_json and results.json's validator."""
    check = _with_data()
    back = Check.from_json(check.to_json())
    assert back == check and back.params.row_class(1) == value_class(0xFFFF, fmt_of("bf16"))
    assert [p.kind for p in back.problems] == [STRAY_WRITE, MALFORMED, OTHER]
    assert back.params.nan_patterns[0].negative and back.params.nan_patterns[0].name == "nan_all_payload"
    record = TestRecord(MATRIX_NODE, "failed", "wrong_counts", check.params, 0.5, (check,))
    path = tmp_path / "results.json"
    doc = results.document([record], {}, 1, collected=1, finished=True, ended="tests failed")
    path.write_text(json.dumps(doc))
    assert results.load(path).records[0].checks[0] == check


def test_a_problem_is_a_value_of_kind_and_words() -> None:
    """Equal in kind and words only, so equality is transitive: two kinds of one text differ, and neither equals
    the plain string; a check given plain words holds them as a problem of no known kind."""
    stray, malformed = Problem(STRAY_WRITE, "words"), Problem(MALFORMED, "words")
    assert stray != malformed and stray != "words" and "words" != malformed
    assert len({stray, malformed, Problem(STRAY_WRITE, "words")}) == 2 and str(stray) == "words"
    assert replace(_check(), problems=("words",)).problems == (Problem(OTHER, "words"),)


def test_an_older_record_without_the_data_reads_as_not_recorded() -> None:
    """An older file lacks row_classes, nan_patterns and problem_kinds: read, with nothing recorded, no crash."""
    data = _with_data().to_dict()
    for key in ("row_classes", "nan_patterns", "in_domain", "buffer_step"):
        del data["params"][key]
    del data["problem_kinds"]
    old = Check.from_dict(data)
    assert old.params.row_classes == () and old.params.nan_patterns == () and old.params.row_class(0) is None
    assert old.params.in_domain and old.params.buffer_step is None
    data["params"]["case_id"] = "outside-rank-3d"  # an older file's outside cases: known by the id it wrote
    assert not Check.from_dict(data).params.in_domain
    assert [p.kind for p in old.problems] == [OTHER] * 3 and list(map(str, old.problems)) == data["problems"]


def _add_reports(builder: _Builder, *reports: tuple[str, str, list[tuple[str, object]], str, bool]) -> TestRecord:
    for when, outcome, props, text, xfail in reports:
        builder.add_report(when, outcome, 0.1, props, text, xfail)
    return builder.build()


def test_outcomes_and_verdicts_from_reports() -> None:
    params = [("nan_params", json.dumps(PARAMS.to_dict()))]
    crashed = _add_reports(_Builder(MATRIX_NODE), ("setup", "passed", params, "", False),
                      ("???", "failed", [], "worker 'gw0' crashed while running ...", False))
    assert (crashed.outcome, crashed.verdict) == ("failed", "crash")
    assert crashed.params == PARAMS  # from the item's parametrization, not from parsing its id
    fault = [("nan_case", Check(PARAMS, "wrapper", "device_fault", refusal="RuntimeError: CUDA error").to_json())]
    faulted = _add_reports(_Builder(MATRIX_NODE), ("call", "failed", fault, "RuntimeError: CUDA error: illegal", False),
                      ("???", "failed", [], "worker 'gw0' crashed", False))
    assert faulted.verdict == "device_fault" and faulted.message.startswith("RuntimeError: CUDA error")
    teardown = _add_reports(_Builder(MATRIX_NODE), ("setup", "passed", [], "", False), ("call", "passed", [], "", False),
                       ("teardown", "failed", [], "boom", False))
    assert (teardown.outcome, teardown.verdict) == ("error", "error")
    waived = _add_reports(_Builder(MATRIX_NODE), ("call", "skipped", [], "", True))
    assert (waived.outcome, waived.verdict) == ("xfailed", "waived")
    skipped = _add_reports(_Builder(MATRIX_NODE), ("setup", "skipped", [], "no kernel", False))
    assert skipped.verdict == "not_run"


def test_every_check_is_kept() -> None:
    b = _Builder(MATRIX_NODE)
    props = [("nan_case", _check(ok=True).to_json()), ("other", "x"), ("nan_case", _check().to_json())]
    record = _add_reports(b, ("call", "failed", props, "E   AssertionError", False))
    assert len(record.checks) == 2 and record.expected_total == 80000 and record.got_total == 80001
    assert record.verdict == "wrong_counts"


@pytest.mark.parametrize(
    ("outcomes", "state"),
    [([], "absent"), (["passed", "passed"], "pass"), (["failed", "failed"], "fail"), (["passed", "failed"], "mixed"),
     (["skipped", "skipped"], "skip"), (["xfailed", "passed"], "waived"), (["passed", "skipped"], "pass"),
     (["failed", "skipped"], "fail"), (["pending"], "skip"), (["error"], "fail")],
)
def test_cell_state(outcomes: list[str], state: str) -> None:
    """A case's word is what its paths that ran found (issue 40: a wrapper pass beside a direct path the module
    cannot run read "not run"); test_not_run.py shows the partial mark beside it."""
    assert summary.cell_state(outcomes) == state


def test_summary_escapes_everything() -> None:
    markup = '<img src=x onerror="alert(1)">'
    bad = CaseParams("ieee", markup, markup, "rows", (2, 8), markup, 1)
    records = [TestRecord(f"tests/x.py::test_y[{markup}]", "failed", "error", message=f"RuntimeError: {markup}"),
               TestRecord("tests/x.py::test_case[a]", "failed", "wrong_counts", bad, checks=(_check(bad, label=markup),))]
    html = summary.render(records, FAMILIES, kernel=markup, backend=markup)
    assert "<img" not in html and "&lt;img src=x" in html


def test_matrix_grid_cells() -> None:
    records = [TestRecord(MATRIX_NODE, "failed", "wrong_counts", PARAMS, checks=(_check(),)),
               TestRecord(MATRIX_NODE.replace("wrapper]", "direct]"), "passed", "pass", PARAMS,
                          checks=(_check(ok=True, path="direct"),))]
    html = summary.family_sections(records, FAMILIES)
    assert 'data-case="bf16-scatter-8x10000-nan0.5" data-state="mixed"' in html


def _ieee(label: str, outcome: str = "failed", layout: str = "rows", wrong_class: str = "") -> TestRecord:
    """An ieee case whose row 1 is wrong; class rows record row 0 as zero and row 1 as wrong_class (data)."""
    fmt = fmt_of("fp16")
    classes = tuple(value_class(CLASS_BY_NAME[n].bits(fmt, False), fmt) for n in ("zero", wrong_class)) \
        if wrong_class else ()
    params = CaseParams("ieee", f"fp16-ieee-{layout}", "fp16", layout, (22, 1000), layout, 42, row_classes=classes)
    return TestRecord(f"t.py::test_case[fp16-ieee-{layout}-wrapper]", outcome, "wrong_counts", params,
                      checks=(_check(params, label=label),))


def test_ieee_table_names_only_the_miscounted_class() -> None:
    html = summary.family_sections([_ieee("+inf fp16 0x7C00", wrong_class="inf"),
                                    _ieee("mixed fp16: all", layout="mixed")], FAMILIES)
    assert 'data-case="inf fp16" data-state="fail"' in html
    assert 'data-case="quiet_nan fp16" data-state="pass"' in html  # mixed rows credit no class
    assert 'data-case="mixed fp16" data-state="fail"' in html


def test_ieee_table_reads_the_row_class_not_the_label() -> None:
    """The class comes from the record's row_classes: a label that names another class is only words; an older
    file with no row classes gives the whole case's outcome to every class (no per-row answer)."""
    html = summary.family_sections([_ieee("+quiet_nan fp16 0x7E00", wrong_class="inf")], FAMILIES)
    assert 'data-case="inf fp16" data-state="fail"' in html and 'data-case="quiet_nan fp16" data-state="pass"' in html
    older = summary.family_sections([_ieee("+inf fp16 0x7C00")], FAMILIES)
    assert 'data-case="quiet_nan fp16" data-state="fail"' in older


def test_a_family_only_in_its_own_module_is_shown() -> None:
    """A family module named on the command line gets its summary section with no edit to the reports."""
    families = registry.load(["tests.harness.fixtures.toy_family"])
    toy = next(f for f in families if f.name == "toy")
    params = toy.params(toy.cases(registry.Context())[0])  # type: ignore[attr-defined]
    html = summary.family_sections([TestRecord("t.py::test_case[x]", "passed", "pass", params)], families)
    assert 'id="nan-family-toy"' in html and "1 cases: 1 pass" in html


def test_diagnosis_names_int1_flags_and_offsets() -> None:
    p = CaseParams("matrix", "fp32-prefix-1x128-nan0.1", "fp32", "prefix", (1, 128), "0.1", 42)
    int1 = [TestRecord(f"t::test_case[{i}]", "failed", "wrong_counts", p,
                       checks=(Check(p, "wrapper", "wrong_counts", 12, 1, (), (WrongRow(0, 12, 1),)),)) for i in range(3)]
    assert diagnose(int1)[0].category == "accumulation" and "int1" in diagnose(int1)[0].name
    big = CaseParams("bigoffset", "fp32-bigoffset-3x4099-stride1", "fp32", "bigoffset", (3, 4099), "offset", 42)
    offsets = [TestRecord("t::test_case[b]", "failed", "crash", big)]
    assert diagnose(offsets)[0].category == "offsets"
    assert diagnose([TestRecord("t::x", "failed", "error", message="odd")])[0].name == "no known pattern"
    assert diagnose([TestRecord("t::x", "passed", "pass")]) == []


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


def _doc(path: Path, outcomes: dict[str, str], finished: bool = True) -> Path:
    cases = [{"nodeid": n, "outcome": o, "verdict": "pass" if o == "passed" else "wrong_counts", "wrong_rows": [],
              "message": ""} for n, o in outcomes.items()]
    status = (1 if "failed" in outcomes.values() else 0) if finished else 2
    doc = {"schema": SCHEMA, "environment": {}, "exitstatus": status, "finished": finished,
           "ended": "passed" if finished else "interrupted", "collected": len(cases), "counts": {}, "verdicts": {},
           "cases": cases}
    path.write_text(json.dumps(doc), encoding="utf-8")
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
    assert "MISSING CASES (not passed before): 0" in out  # a passed case gone is coverage lost, listed once
    assert "COVERAGE LOST (passed -> skipped or missing): 1\n  t::gone  passed -> missing" in out
    assert out.rstrip().endswith("FAIL: 1 regression(s), 1 case(s) of coverage lost")
    fixed = _doc(tmp_path / "fixed.json", {"t::a": "passed", "t::b": "passed", "t::c": "passed", "t::gone": "passed",
                                           "t::new": "failed", "t::w": "passed"})
    assert compare.main([str(base), str(fixed)]) == 0  # fixes and new failures do not gate
    assert compare.main([str(base), str(base)]) == 0
    assert "OK: no regressions" in capsys.readouterr().out


def test_compare_gates_coverage_loss(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """passed -> skipped (a direct path that stopped running) is a regression unless allowed."""
    base = _doc(tmp_path / "base.json", {"t::a": "passed", "t::b": "passed"})
    cur = _doc(tmp_path / "cur.json", {"t::a": "passed", "t::b": "skipped"})
    assert compare.main([str(base), str(cur)]) == 1
    assert compare.main([str(base), str(cur), "--allow-coverage-loss"]) == 0


@pytest.mark.parametrize("problem", ["unfinished", "empty", "not-utf8"])
def test_compare_refuses_runs_that_cannot_be_judged(tmp_path: Path, problem: str) -> None:
    base = _doc(tmp_path / "base.json", {"t::a": "passed"})
    if problem == "unfinished":
        cur = _doc(tmp_path / "cur.json", {"t::a": "passed"}, finished=False)
    elif problem == "empty":
        cur = _doc(tmp_path / "cur.json", {})
    else:
        cur = tmp_path / "cur.json"
        cur.write_bytes(b"\xff\xfe{not utf-8")
    assert compare.main([str(base), str(cur)]) == 2


def test_compare_refuses_foreign_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other.json"
    other.write_text('{"cases": []}', encoding="utf-8")
    assert compare.main([str(other), str(other)]) == 2
    assert compare.main([str(tmp_path / "absent.json"), str(other)]) == 2
    assert f"not a {SCHEMA} results file" in capsys.readouterr().err


def test_planted_table_scores_and_escapes() -> None:
    from reports.summary import planted_table

    def result(variant: str, caught: bool, applies: bool = True) -> TestRecord:
        planted = {"variant": variant, "bug_class": "predicate", "caught": caught, "applies": applies,
                   "hits": ["test_case[<b>x</b>]"] if caught else []}
        return TestRecord(f"tests/selftest/test_planted.py::test_planted_bug_is_caught[{variant}]", "passed", "pass",
                          planted=planted)

    html = planted_table([result("pred_inf", True), result("pred_neg", False), result("int1", False, applies=False)])
    assert "Planted bugs caught: 1/2" in html
    assert 'data-case="pred_neg" data-state="fail"' in html and 'data-case="int1" data-state="skip"' in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html
    assert planted_table([TestRecord("t::a")]) == ""


def test_failures_come_first_and_long_lists_fold() -> None:
    from reports.summary import SHOWN_FAILURES, render

    shape = CaseParams("shapes", "fp32-shape-1x5", "fp32", "shape", (1, 5), "0.25", 42)
    records = [TestRecord(f"tests/precision/test_families.py::test_case[fp32-shape-1x{i}-wrapper]", "failed",
                          "wrong_counts", shape) for i in range(SHOWN_FAILURES + 5)]
    records.append(TestRecord(MATRIX_NODE, "failed", "wrong_counts", PARAMS))
    html = render(records, FAMILIES, kernel="k", backend="cpu", finished=True)
    assert f"Failed tests ({SHOWN_FAILURES + 6})" in html and "FAIL" in html
    assert "shapes 20, matrix 1" in html  # the tally by family, busiest first
    assert "6 more failed test(s)" in html
    assert html.index('id="nan-failures"') < html.index('id="nan-grid-matrix"')  # failures before the tables
    assert "INCOMPLETE" in render(records, FAMILIES, finished=False, ended="interrupted")


def test_a_waived_case_that_crashes_its_worker_stays_waived() -> None:
    """The waiver names a known failure; the worker dying on it is that failure, not a new one."""
    waiver = {"id": MATRIX_NODE, "reason": "known", "link": "l"}
    params = [("nan_params", PARAMS.to_json())]
    waived = _add_reports(_Builder(MATRIX_NODE, waiver=waiver), ("setup", "passed", params, "", False),
                     ("???", "failed", [], "worker 'gw0' crashed while running ...", False))
    assert (waived.outcome, waived.verdict) == ("xfailed", "waived")
    unwaived = _add_reports(_Builder(MATRIX_NODE), ("setup", "passed", params, "", False),
                       ("???", "failed", [], "worker 'gw0' crashed while running ...", False))
    assert (unwaived.outcome, unwaived.verdict) == ("failed", "crash")


def test_gate_readers_never_import_torch() -> None:
    """A gate machine may lack torch: compare and the nightly read results.json through reports.results alone."""
    code = ("import sys, reports.compare, nightly.cli, nightly.nights, nightly.trend; "
            "print(sorted(m for m in ('torch', 'triton', 'cases') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False,
                          timeout=hang_limit(slowest_s=0.14))
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


def _two_checks() -> TestRecord:
    """A test with a side effect and a wrong row on one check, three wrong rows on the other."""
    other = CaseParams("matrix", "fp32-prefix-1x128-nan0.5", "fp32")
    side = Check(PARAMS, "wrapper", "side_effect", 10, 11, ("input modified",), (WrongRow(3, 2, 3),))
    rows = Check(other, "direct", "wrong_counts", 10, 13,
                 wrong_rows=(WrongRow(0, 5, 6, "+inf fp32 0x7F800000"), WrongRow(1, 5, 6), WrongRow(2, 0, 1)))
    return TestRecord(MATRIX_NODE, "failed", "side_effect", PARAMS, 0.5, (side, rows), "E   AssertionError: x")


def test_results_json_lists_problems_then_wrong_rows_with_their_case() -> None:
    """The per-test `wrong_rows` of results.json keeps its shape: a check's problems as row-less entries first."""
    record = _two_checks()
    assert record.to_dict()["wrong_rows"] == [
        {"case_id": PARAMS.case_id, "row": None, "expected": None, "got": None, "label": "input modified"},
        {"case_id": PARAMS.case_id, "row": 3, "expected": 2, "got": 3, "label": ""},
        {"case_id": "fp32-prefix-1x128-nan0.5", "row": 0, "expected": 5, "got": 6, "label": "+inf fp32 0x7F800000"},
        {"case_id": "fp32-prefix-1x128-nan0.5", "row": 1, "expected": 5, "got": 6, "label": ""},
        {"case_id": "fp32-prefix-1x128-nan0.5", "row": 2, "expected": 0, "got": 1, "label": ""},
    ]
    assert record.wrong_rows == record.checks[0].wrong_rows + record.checks[1].wrong_rows  # one type, either level


def test_results_load_gives_the_records_written(tmp_path: Path) -> None:
    """Every reader's way in: what `document` wrote comes back as the same TestRecords, typed."""
    record = _two_checks()
    doc = results.document([record], {"Backend": "cpu"}, 1, collected=1, finished=True, ended="tests failed",
                           extra={"kernel": "k", "backend": "cpu", "ran": 1})
    results.write(tmp_path / "r.json", doc)
    run = results.load(tmp_path / "r.json")
    assert run.records == (record,) and run.failing() == [record] and run.by_nodeid() == {MATRIX_NODE: record}
    assert (run.finished, run.ended, run.kernel, run.collected, run.environment) == (True, "tests failed", "k", 1,
                                                                                      {"Backend": "cpu"})


def test_why_is_one_line_for_every_listing() -> None:
    """The first problem or wrong row and how many more; else the refusal; else the message's telling line."""
    assert why(_two_checks()) == "input modified (+4 more)"
    rows_only = _two_checks().with_(checks=(_two_checks().checks[1],))
    assert why(rows_only) == "row 0: expected 5, got 6 [+inf fp32 0x7F800000] (+2 more)"
    refused = TestRecord(MATRIX_NODE, "failed", "refused",
                         checks=(Check(PARAMS, "direct", "refused", refusal="AssertionError: no"),), message="E  x")
    assert why(refused) == "refused: AssertionError: no"
    assert why(TestRecord(MATRIX_NODE, "failed", "error", message="setup\nE   ValueError: bad")) == "ValueError: bad"


def test_failure_details_spell_out_the_first_rows_of_each_check() -> None:
    """One renderer for a failing test's rows on both pages, cut at SHOWN_WRONG_ROWS per check."""
    many = tuple(WrongRow(i, 1, 2) for i in range(tables.SHOWN_WRONG_ROWS + 3))
    record = TestRecord(MATRIX_NODE, "failed", "wrong_counts", PARAMS,
                        checks=(Check(PARAMS, "wrapper", "wrong_counts", 1, 2, wrong_rows=many),))
    html = tables.failure_details(record)
    assert html.count("<tr><td>") == tables.SHOWN_WRONG_ROWS and "... and 3 more (see results.json)" in html
    cells = tables.case_values(record)
    assert (cells["shape"], cells["verdict"], cells["wrong"]) == ("8x10000", "wrong counts", len(many))
    assert tables.failure_details(TestRecord(MATRIX_NODE, "passed", "pass", PARAMS, checks=(_check(ok=True),))) == ""


def test_one_escape_for_text_and_attributes() -> None:
    assert esc(None) == "" and esc(3) == "3"
    assert esc('<b class="x">\'&') == "&lt;b class=&quot;x&quot;&gt;&#x27;&amp;"


def test_headline_counts_not_run_tests_only_when_there_are_some() -> None:
    """A gap with every test run lists the gap alone (it once said '0 test(s) not run'); a not-run test is counted
    in its group, which says what is known of it."""
    ran = [TestRecord(MATRIX_NODE, "passed", "pass", PARAMS)]
    html = summary.headline(ran, kernel="k", backend="cpu", finished=True, ended="passed",
                            gaps=["the direct path needs _num_nans_kernel"])
    assert "the direct path needs _num_nans_kernel" in html and "not run," not in html
    skipped = [*ran, TestRecord(MATRIX_NODE + "x", "skipped", "not_run", PARAMS)]
    html = summary.headline(skipped, kernel="k", backend="cpu", finished=True, ended="passed", gaps=[])
    assert "Not run: 1 test(s), in 1 group(s)" in html
    assert "<li>matrix: 1 test(s) not run, skipped without a recorded reason" in html
