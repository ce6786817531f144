"""pytest-html hooks: title, environment table, per-case columns, wrong-row extras, and the summary at the top.

Everything is built on the controller from test reports, so a run under xdist shows what a serial run shows.
Text from kernels, ids and messages is escaped here: pytest-html's table cells and environment values are HTML.
"""
from __future__ import annotations

from html import escape
from typing import Any

import pytest

from reports import summary
from reports.collector import record_of_report
from reports.plugin import COLLECTOR_KEY, is_controller
from verdict.record import TestRecord
from harness.run import RUN_INFO_KEY, RunInfo

SHOWN_WRONG_ROWS = 200  # rows spelled out in a case's expanded section; results.json has them all
COLUMNS: tuple[tuple[str, str], ...] = (
    ("dtype", "dtype"),
    ("layout", "layout"),
    ("shape", "shape"),
    ("nan", "NaN frac / class"),
    ("path", "path"),
    ("verdict", "verdict"),
    ("expected", "expected total"),
    ("got", "got total"),
    ("wrong", "rows wrong"),
)


def _text(value: object) -> str:
    return "" if value is None else escape(str(value))


def case_cells(report: pytest.TestReport) -> list[str]:
    """The per-case cells of one report: parameters from its check records, else from its id."""
    result = record_of_report(report)
    p = result.params
    wrong = sum(1 for w in result.wrong_rows if w.get("row") is not None)
    values = {
        "dtype": p.dtype if p else "",
        "layout": p.layout if p else "",
        "shape": "x".join(str(n) for n in p.shape) if p else "",
        "nan": p.detail if p else "",
        "path": result.path,
        "verdict": result.verdict.replace("_", " ") if report.when == "call" or report.failed else "",
        "expected": result.expected_total,
        "got": result.got_total,
        "wrong": wrong if result.checks else "",
    }
    return [f'<td class="col-{key}">{_text(values[key])}</td>' for key, _ in COLUMNS]


def wrong_rows_html(report: pytest.TestReport) -> str:
    """The expanded section of a failing case: problems, then each wrong row with expected, got and label."""
    checks = [c for c in record_of_report(report).checks if not c.ok]
    if not checks:
        return ""
    parts = ['<div class="nan-wrong-rows">']
    for c in checks:
        parts.append(
            f"<p><b>case {_text(c.params.case_id)}</b> ({_text(c.path)}, seed {_text(c.params.seed)}): "
            f"{_text(c.verdict.replace('_', ' '))}; expected total {_text(c.expected_total)}, "
            f"got {_text(c.got_total)}</p>"
        )
        if c.input_desc:
            parts.append(f"<p>input: {_text(c.input_desc)}</p>")
        if c.refusal:
            parts.append(f"<p>raised: {_text(c.refusal)}</p>")
        if c.problems:
            parts.append("<ul>" + "".join(f"<li>{_text(p)}</li>" for p in c.problems) + "</ul>")
        if c.wrong_rows:
            rows = "".join(
                f"<tr><td>{_text(w.row)}</td><td>{_text(w.expected)}</td>"
                f"<td>{_text(w.got)}</td><td>{_text(w.label)}</td></tr>"
                for w in c.wrong_rows[:SHOWN_WRONG_ROWS]
            )
            more = len(c.wrong_rows) - SHOWN_WRONG_ROWS
            tail = f'<tr><td colspan="4">... and {more} more (see results.json)</td></tr>' if more > 0 else ""
            parts.append(
                '<table class="nan-wrong-rows-table" border="1" cellpadding="3">'
                "<thead><tr><th>row</th><th>expected</th><th>got</th><th>label (IEEE class, bits)</th></tr></thead>"
                f"<tbody>{rows}{tail}</tbody></table>"
            )
    parts.append("</div>")
    return "".join(parts)


def _html_report_plugin(config: pytest.Config) -> Any | None:
    """pytest-html's report object (registered without a name)."""
    from pytest_html.basereport import BaseReport

    return next((p for p in config.pluginmanager.get_plugins() if isinstance(p, BaseReport)), None)


class PrecisionHtml:
    """pytest-html hook implementations bound to one run's kernel under test."""

    def __init__(self, config: pytest.Config, info: RunInfo) -> None:
        self.config = config
        self.info = info

    def pytest_html_report_title(self, report: Any) -> None:
        report.title = f"NaN-count precision: {self.info.kernel_module}"  # the template escapes the title

    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        ours = [f'<th class="sortable" data-column-type="{key}">{escape(label)}</th>' for key, label in COLUMNS]
        cells[2:2] = ours

    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        test_id = report.nodeid + (f"::{report.when}" if report.when not in ("call", None) else "")
        cells[1] = f'<td class="col-testId">{escape(test_id)}</td>'  # pytest-html leaves ids unescaped
        cells[2:2] = case_cells(report)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            table = wrong_rows_html(report)
            if table:
                from pytest_html import extras

                report.extras = [*getattr(report, "extras", []), extras.html(table)]
        if report.when == "???":  # xdist's report for a crashed worker: pytest-html waits for a teardown forever
            self._show_crash(report)

    def _show_crash(self, report: pytest.TestReport) -> None:
        """Hand pytest-html the crash as a failed call plus a passed teardown, so the case gets its row."""
        html = _html_report_plugin(self.config)
        if html is None:
            return
        common = {"nodeid": report.nodeid, "location": report.location, "keywords": {}, "duration": 0.0}
        call = pytest.TestReport(outcome="failed", longrepr=report.longrepr, when="call", **common)
        teardown = pytest.TestReport(outcome="passed", longrepr=None, when="teardown", **common)
        html.pytest_runtest_logreport(call)
        html.pytest_runtest_logreport(teardown)

    def pytest_html_results_summary(self, prefix: list[str], summary: list[str], postfix: list[str],
                                    session: pytest.Session) -> None:
        if COLLECTOR_KEY in self.config.stash:
            prefix.append(render_summary(self.config, session))


def render_summary(config: pytest.Config, session: pytest.Session) -> str:
    """The summary block for this run's collected results."""
    from reports.diagnosis import diagnose, render as render_diagnosis
    from reports.plugin import capturable_entry, run_end

    info = config.stash[RUN_INFO_KEY]
    records: list[TestRecord] = config.stash[COLLECTOR_KEY].results()
    end = run_end(session)
    return summary.render(records, info.families, kernel=info.kernel_module, backend=info.backend,
                          finished=end.finished, ended=end.how, gaps=info.coverage_gaps,
                          notes=[f"capturable in a device graph: {v}" for v in
                                 capturable_entry(config.stash[COLLECTOR_KEY].capturable).values()],
                          diagnosis=render_diagnosis(diagnose(records, environment=info.environment)) + bench_link(config))


def bench_link(config: pytest.Config) -> str:
    """A link to the speed plot when a bench.json with its plot sits beside this HTML report (python -m bench)."""
    from pathlib import Path

    html_path = getattr(config.option, "htmlpath", None)
    if not html_path:
        return ""
    bench_json = Path(config.invocation_params.dir, html_path).parent / "bench.json"
    if not bench_json.is_file():
        return ""
    try:
        from reports.bench_json import html_link_fragment
    except ImportError:
        return ""
    return html_link_fragment(bench_json) or ""


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if RUN_INFO_KEY not in config.stash or not config.pluginmanager.hasplugin("html") or not is_controller(config):
        return
    from pytest_metadata.plugin import metadata_key

    meta = config.stash[metadata_key]
    for noise in ("Packages", "Plugins"):  # pytest's own versions push the verdict off the first screen
        meta.pop(noise, None)
    for key, value in config.stash[RUN_INFO_KEY].environment.items():
        meta[key] = escape(value)  # pytest-html renders environment values as HTML
    config.pluginmanager.register(PrecisionHtml(config, config.stash[RUN_INFO_KEY]), "nan-precision-html")
