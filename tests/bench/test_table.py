"""bench.table renders what a bench.json measured: every figure from the file, a missed target called MISSED, and
docs/bench.md's H200 table is exactly what the committed run renders."""
from __future__ import annotations

from pathlib import Path

import pytest

from bench import table
from bench.report import load
from tests.bench.payloads import payload, write

ROOT = Path(__file__).resolve().parents[2]
DOC_KEYS = ("1x32000", "1x152064", "1x262144", "16x128256", "16x151936", "16x262144", "64x152064", "256x152064",
            "1024x152064", "2048x152064", "4096x32000")  # the shapes docs/bench.md quotes


def test_rows_and_targets_come_from_the_file() -> None:
    data = payload()
    data["rows"][0]["us"]["kernel"] = 7.25
    data["targets"] = [{"target": "decode: >= 4x the anchor", "rows": 1, "worst": 3.5, "missed": ["fp32-1x152064"],
                        "met": False}]
    page = table.table(data)
    assert "| fp32-1x152064 | 7.2 / 100.0 / 50.0 |" in page
    assert "bf16-1024x152064" in page
    assert "- **MISSED**: decode: >= 4x the anchor over 1 shapes (worst 3.500; missed: fp32-1x152064)" in page


def test_keys_select_shapes() -> None:
    page = table.table(payload(), keys=["1024x"])
    assert "bf16-1024x152064" in page and "fp32-1x152064" not in page


def test_not_a_bench_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert table.main([write(tmp_path / "x.json", {"schema": "other"})]) == 2
    assert "not a" in capsys.readouterr().err


def test_docs_quote_the_committed_h200_run() -> None:
    page = (ROOT / "docs" / "bench.md").read_text(encoding="utf-8")
    rendered = table.table(load(ROOT / "docs" / "bench-h200.json"), DOC_KEYS)
    missing = [line for line in rendered.splitlines() if line and line not in page]
    assert not missing, f"docs/bench.md differs from `python -m bench.table docs/bench-h200.json`: {missing[:3]}"
