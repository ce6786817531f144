"""nightly.trend on synthetic nights: three nights, one regression, one fix, a kernel commit change, benchmarks."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nightly import trend
from reports.results import SCHEMA
from verdict.record import CaseParams, Check, TestRecord, WrongRow

A = "tests/precision/test_families.py::test_case[fp32-prefix-1x128-nan0.5-wrapper]"
B = "tests/precision/test_families.py::test_case[bf16-scatter-8x10000-nan0.5-direct]"
C = "tests/precision/test_wrapper_contract.py::test_empty_batch"
COMMIT_1 = "1111111111aaaaaaaaaa2222222222bbbbbbbbbb"
COMMIT_2 = "3333333333cccccccccc4444444444dddddddddd"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _case(nodeid: str, outcome: str) -> dict[str, Any]:
    """A case as the harness writes it: a failing one carries its wrong row in its check."""
    failed = outcome == "failed"
    checks = (Check(CaseParams("matrix", "x"), "wrapper", "wrong_counts", 10000, 9999,
                    wrong_rows=(WrongRow(1, 5000, 4999),)),) if failed else ()
    return TestRecord(nodeid, outcome, "wrong_counts" if failed else "pass", duration=0.1, checks=checks).to_dict()


def _night(root: Path, name: str, commit: str, outcomes: dict[str, str], bench: dict[str, float] | None = None,
           finished: bool = True) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    cases = [_case(n, o) for n, o in outcomes.items()]
    verdicts: dict[str, int] = {}
    for c in cases:
        verdicts[c["verdict"]] = verdicts.get(c["verdict"], 0) + 1
    doc = {"schema": SCHEMA, "environment": {"Kernel module": "kernel", "Kernel commit": commit, "Backend": "cuda"},
           "exitstatus": 1 if "failed" in outcomes.values() else 0, "finished": finished,
           "ended": "tests failed" if finished else "interrupted", "collected": len(cases), "counts": {},
           "verdicts": verdicts, "diagnosis": [], "kernel": "kernel", "backend": "cuda", "coverage_gaps": [],
           "started": f"{name}T02:00:00+00:00", "ran": len(cases), "cases": cases}
    (folder / "results.json").write_text(json.dumps(doc))
    if bench is not None:
        rows = [{"key": key, "us": {"kernel": 10.0, "roofline": 10.0 * frac},
                 "ratios": {"roofline_fraction": frac, "speedup_vs_anchor": 2.0}} for key, frac in bench.items()]
        (folder / "bench.json").write_text(json.dumps({"schema": "nan-harness-bench/1", "timings_meaningful": True,
                                                       "rows": rows}))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    root = tmp_path / "nightly"
    _night(root, "2026-07-01", COMMIT_1, {A: "passed", B: "failed", C: "passed"},
           bench={"fp32-1x152064": 0.80, "bf16-1024x152064": 0.90})
    _night(root, "2026-07-02", COMMIT_1, {A: "failed", B: "failed", C: "passed"})  # A regresses
    _night(root, "2026-07-03", COMMIT_2, {A: "failed", B: "passed", C: "passed"},  # B fixed by a new commit
           bench={"fp32-1x152064": 0.60, "bf16-1024x152064": 0.91})
    (root / "not-a-night").mkdir()  # ignored: not a dated folder
    return root


def _section(page: str, before: str, after: str) -> str:
    start = page.index(f'data-from="{before}" data-to="{after}"')
    return page[start:page.index("</section>", start)]


def test_trend_page_names_regression_fix_and_commit_change(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "trend-out"
    assert trend.main([str(root), "--out", str(out)]) == 0
    page = (out / "trend.html").read_text()
    png = (out / "trend.png").read_bytes()
    assert png.startswith(PNG_MAGIC) and len(png) > 2000
    assert 'src="trend.png"' in page
    for name in ("2026-07-01", "2026-07-02", "2026-07-03"):
        assert f'data-night="{name}"' in page
    assert "not-a-night" not in page
    first = _section(page, "2026-07-01", "2026-07-02")
    assert "newly failing: 1" in first and A in first and "(was passed)" in first
    assert "row 1: expected 5000, got 4999" in first
    assert "newly fixed: 0" in first and "same kernel commit <code>1111111111</code>" in first
    second = _section(page, "2026-07-02", "2026-07-03")
    assert "newly fixed: 1" in second and B in second and "newly failing: 0" in second
    assert "kernel commit changed: <code>1111111111</code> &rarr; <code>3333333333</code>" in second
    assert '<code>3333333333</code> <b>changed</b>' in page  # the nights table marks the night it changed
    bench = page[page.index('id="nan-bench-trend"'):]
    assert "fp32-1x152064" in bench and "0.80 / 2.00x" in bench and "0.60 / 2.00x" in bench
    assert "2026-07-02</th>" not in bench  # a night without bench.json has no column
    assert 'href="../nightly/2026-07-01/precision.html"' in page


def test_last_n_and_default_out(root: Path) -> None:
    assert trend.main([str(root), "--last", "2"]) == 0
    page = (root / "trend" / "trend.html").read_text()
    assert 'data-night="2026-07-01"' not in page and 'data-night="2026-07-03"' in page
    assert 'href="../2026-07-02/precision.html"' in page
    assert (root / "trend" / "trend.png").read_bytes().startswith(PNG_MAGIC)


def test_unfinished_night_is_shown_as_such(tmp_path: Path) -> None:
    root = tmp_path / "n"
    _night(root, "2026-07-01", COMMIT_1, {A: "passed"})
    _night(root, "2026-07-02", COMMIT_1, {A: "passed"}, finished=False)
    assert trend.main([str(root)]) == 0
    page = (root / "trend" / "trend.html").read_text()
    assert "NOT finished (interrupted)" in page and "may be partial" in page


def test_no_nights_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert trend.main([str(tmp_path)]) == 2
    assert "no night folders" in capsys.readouterr().err
