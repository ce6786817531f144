"""html_link_fragment links the plot only when a real bench.json names a plot that exists."""
from __future__ import annotations

from pathlib import Path

from bench.report import html_link_fragment
from tests.bench.payloads import payload, write


def test_links_an_existing_plot(tmp_path: Path) -> None:
    data = payload()
    data["plot"] = "bench.png"
    data["environment"]["kernel_module"] = "my<mod>"
    (tmp_path / "bench.png").write_bytes(b"\x89PNG")
    fragment = html_link_fragment(write(tmp_path / "bench.json", data))
    assert fragment is not None
    assert 'href="bench.png"' in fragment and "my&lt;mod&gt;" in fragment and "<mod>" not in fragment


def test_none_without_plot_or_bench_file(tmp_path: Path) -> None:
    data = payload()
    data["plot"] = "bench.png"  # named, but never written
    assert html_link_fragment(write(tmp_path / "bench.json", data)) is None
    data["plot"] = None
    assert html_link_fragment(write(tmp_path / "bench.json", data)) is None
    assert html_link_fragment(tmp_path / "absent.json") is None
    assert html_link_fragment(write(tmp_path / "results.json", {"schema": "nan-harness-results/1"})) is None


def test_interpreter_runs_are_labelled(tmp_path: Path) -> None:
    data = payload(meaningful=False)
    data["plot"] = "bench.png"
    (tmp_path / "bench.png").write_bytes(b"\x89PNG")
    assert "timings mean nothing" in (html_link_fragment(write(tmp_path / "bench.json", data)) or "")
