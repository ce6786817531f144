"""The Markdown summary for a CI job page: parsed with a CommonMark/GFM parser and checked by its structure."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reports import markdown
from reports.results import Results, document
from verdict.record import CaseParams, Check, TestRecord, WrongRow

MarkdownIt = pytest.importorskip("markdown_it").MarkdownIt
pytestmark = pytest.mark.nan_reports
HOSTILE = "a | b <script>alert(1)</script> [link](http://x) `tick` **bold**\nsecond line"


def _record(i: int, *, failed: bool = True, message: str = "") -> TestRecord:
    params = CaseParams("matrix", f"fp32-prefix-{i}x128-nan0.5", "fp32", "prefix", (2, 128), "0.5", 42)
    if not failed:
        return TestRecord(f"tests/precision/test_families.py::test_case[{params.case_id}-wrapper]", "passed", "pass",
                          params)
    check = Check(params, "wrapper", "wrong_counts", 128, 127, (), (WrongRow(1, 64, 63),))
    return TestRecord(f"tests/precision/test_families.py::test_case[{params.case_id}-wrapper]", "failed",
                      "wrong_counts", params, checks=(check,), message=message)


def _run(records: list[TestRecord], *, finished: bool = True, ended: str = "tests failed",
         diagnosis: list[dict[str, Any]] | None = None, gaps: list[str] | None = None) -> Results:
    env = {"Device": "NVIDIA H200", "Torch": "2.11", "Triton": "triton 3.6.0", "Kernel commit": "abc123"}
    doc = document(records, env, 1, collected=len(records), finished=finished, ended=ended,
                   extra={"kernel": "kernel", "backend": "cuda", "diagnosis": diagnosis or [],
                          "coverage_gaps": gaps or []})
    return Results.from_doc(json.loads(json.dumps(doc)))


def _tokens(text: str) -> list[Any]:
    return MarkdownIt("commonmark").enable("table").parse(text)


def _table_rows(text: str) -> list[list[str]]:
    """Each body row of the summary's table as its cells' inline text (what a reader sees)."""
    rows, row, in_body = [], [], False
    for token in _tokens(text):
        if token.type == "tbody_open":
            in_body = True
        elif token.type == "tbody_close":
            in_body = False
        elif in_body and token.type == "tr_open":
            row = []
        elif in_body and token.type == "inline":
            row.append("".join(c.content for c in token.children or []))
        elif in_body and token.type == "tr_close":
            rows.append(row)
    return rows


def test_a_failing_run_opens_with_its_verdict_and_lists_failures_with_their_first_wrong_row() -> None:
    diagnosis = [{"category": "traversal", "name": "the last, partial block of a row", "cases": ["a", "b"]}]
    run = _run([_record(i) for i in range(3)] + [_record(9, failed=False)], diagnosis=diagnosis, gaps=["aggregate"])
    text = markdown.run_summary(run, html="out/precision.html")
    tokens = _tokens(text)
    assert tokens[0].type == "heading_open" and tokens[1].content == "nan-harness: FAIL"
    rows = _table_rows(text)
    assert len(rows) == 3 and all(len(r) == 3 for r in rows)
    assert rows[0] == ["test_case[fp32-prefix-0x128-nan0.5-wrapper]", "wrong counts", "row 1: expected 64, got 63"]
    assert "1. [traversal] the last, partial block of a row (2 test(s))" in text.replace("\\", "")
    assert "- aggregate" in text and "HTML report: `out/precision.html`" in text
    assert "Device: `NVIDIA H200`" in text and "Kernel commit: `abc123`" in text


def test_a_large_failing_run_stays_short() -> None:
    many = [{"category": "unknown", "name": f"pattern {i}", "cases": ["x"]} for i in range(9)]
    run = _run([_record(i) for i in range(400)], diagnosis=many, gaps=[f"gap {i}" for i in range(20)])
    text = markdown.run_summary(run, html="p.html")
    assert len(text.splitlines()) <= markdown.MAX_LINES
    assert len(_table_rows(text)) == markdown.SHOWN_FAILURES
    assert "385 more in the HTML report" in text and "6 more in the HTML report" in text
    assert text.rstrip().endswith("HTML report: `p.html`")  # the way to the rest is never cut off


def test_an_unfinished_run_is_never_called_passed() -> None:
    run = _run([_record(0, failed=False)], finished=False, ended="stopped early: 1 of 9 tests ran")
    text = markdown.run_summary(run)
    assert "INCOMPLETE (stopped early: 1 of 9 tests ran)" in text and "PASS" not in text


def test_nothing_a_kernel_prints_becomes_markup() -> None:
    """A failure message or id with table bars, HTML, links, backticks and newlines stays text in its cell."""
    bad = TestRecord(f"t.py::test_case[{HOSTILE}]", "failed", "error", message=f"E   RuntimeError: {HOSTILE}")
    text = markdown.run_summary(_run([bad, _record(1)]))
    tokens = _tokens(text)
    table = tokens[next(i for i, t in enumerate(tokens) if t.type == "table_open"):]
    kinds = {t.type for t in tokens if t.type.startswith("html")} | {c.type for t in table for c in t.children or []}
    assert not kinds & {"html_inline", "html_block", "link_open", "strong_open", "em_open"}, kinds
    rows = _table_rows(text)
    assert len(rows) == 2 and all(len(r) == 3 for r in rows), rows
    assert "<script>" in rows[0][0] and "<script>" in rows[0][2]  # shown as text, not dropped


def test_code_spans_hold_any_backticks() -> None:
    for value in ("plain", "a`b", "``x``", "`", "trailing`"):
        (inline,) = [t for t in _tokens(markdown.code(value)) if t.type == "inline"]
        (span,) = [c for c in inline.children or [] if c.type == "code_inline"]
        assert span.content == value


def test_the_step_summary_is_appended_only_where_the_runner_names_a_file(tmp_path: Path) -> None:
    target = tmp_path / "step.md"
    target.write_text("earlier step\n")
    assert markdown.append_step_summary("### ours", {}) is None
    assert markdown.append_step_summary("### ours", {markdown.STEP_SUMMARY_VAR: str(target)}) == target
    assert target.read_text() == "earlier step\n### ours\n"


def test_fit_cuts_only_the_body_and_says_so() -> None:
    head, tail = ["### t", ""], ["", "HTML report: `p`"]
    text = markdown.fit(head, [f"- line {i}" for i in range(200)], tail)
    lines = text.splitlines()
    assert len(lines) == markdown.MAX_LINES and lines[:2] == head and lines[-2:] == tail
    assert "cut: the rest is in the HTML report" in lines[-3]


def _side_doc(path: Path, outcomes: dict[str, str], *, kernel: str, backend: str, device: str, commit: str) -> Path:
    records = [_record(i, failed=o == "failed") for i, o in enumerate(outcomes.values())]
    records = [TestRecord(nodeid, r.outcome, r.verdict, r.params, checks=r.checks) for nodeid, r in zip(outcomes, records)]
    doc = document(records, {"Device": device, "Kernel commit": commit}, 1, collected=len(records), finished=True,
                   ended="tests failed", extra={"kernel": kernel, "backend": backend})
    path.write_text(json.dumps(doc))
    return path


def test_compare_names_each_side_and_says_when_they_differ(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from reports import compare

    base = _side_doc(tmp_path / "a.json", {"t::x": "passed", "t::y": "passed"}, kernel="kernel", backend="cuda",
                     device="NVIDIA H200", commit="1111")
    cur = _side_doc(tmp_path / "b.json", {"t::x": "failed", "t::y": "passed"}, kernel="my_fix.num_nans",
                    backend="cpu", device="CPU (Triton interpreter)", commit="2222")
    out_md = tmp_path / "compare.md"
    assert compare.main([str(base), str(cur), "--markdown", str(out_md)]) == 1
    out = capsys.readouterr().out
    assert "kernel kernel on cuda (NVIDIA H200), kernel commit 1111" in out
    assert "kernel my_fix.num_nans on cpu (CPU (Triton interpreter)), kernel commit 2222" in out
    assert "NOTE: the two runs differ in kernel, backend, device, kernel commit" in out
    text = out_md.read_text()
    tokens = _tokens(text)
    assert tokens[1].content.startswith("nan-harness compare: FAIL: 1 regression(s)")
    assert "differ in kernel, backend, device, kernel commit" in text.replace("\\", "")
    assert "| backend | `cuda` | `cpu` |" in text and "regressions 1" in text
    regressed = [row for row in _table_rows(text) if row and row[0] == "x"]
    assert regressed and regressed[0][1:3] == ["passed", "failed"] and "expected 64, got 63" in regressed[0][3]
    same = _side_doc(tmp_path / "c.json", {"t::x": "passed", "t::y": "passed"}, kernel="kernel", backend="cuda",
                     device="NVIDIA H200", commit="1111")
    assert compare.main([str(base), str(same)]) == 0
    assert "NOTE:" not in capsys.readouterr().out
