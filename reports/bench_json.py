"""bench.json, read back: the schema, the reader that refuses what is not one, and a link to its plot for the HTML
report (reports sit below bench: the benchmark writes this file, the reports and bench.compare read it)."""
from __future__ import annotations

import json
from pathlib import Path

from reports.markup import esc

SCHEMA = "nan-harness-bench/1"


class NotABenchFile(ValueError):
    """The file is missing, not JSON, or not of schema nan-harness-bench/1."""


def load(path: Path | str) -> dict:
    """Read a bench.json or raise NotABenchFile saying why."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NotABenchFile(f"{path}: {exc}") from exc
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("rows"), list):
        raise NotABenchFile(f"{path}: not a {SCHEMA} file")
    return data


def html_link_fragment(bench_json_path: Path | str) -> str | None:
    """An HTML fragment linking the run's plot (relative to the JSON), or None when there is no plot to link."""
    path = Path(bench_json_path)
    try:
        data = load(path)
    except NotABenchFile:
        return None
    plot = data.get("plot")
    if not plot or not (path.parent / str(plot)).is_file():
        return None
    env = data.get("environment", {})
    label = f"speed: {env.get('kernel_module', '?')} on {env.get('device_name', '?')}"
    if not data.get("timings_meaningful", False):
        label += " (interpreter smoke run: timings mean nothing)"
    return f'<p class="nan-bench"><a href="{esc(plot)}">{esc(label)}</a></p>'
