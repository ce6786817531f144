"""pytest-html hooks: title, per-case columns, wrong-row extras, and the page's first screen: the verdict.

pytest-html's template puts its environment table at the top; the verdict, tally, gaps, diagnosis and failures come
first here (the summary's prefix), then the environment, which this plugin takes out of pytest-html's table and
shows itself. Everything is built on the controller from test reports, so a run under xdist shows what a serial run
shows. Text from kernels, ids and messages is escaped (reports.markup): pytest-html's table cells are HTML.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from reports.bench_json import html_link_fragment
from reports.collector import record_of_reports
from reports.markup import esc
from reports.plugin import is_controller, run_diagnosis, run_summary
from reports.run_state import collector_of
from reports.summary import render
from reports.tables import CASE_COLUMNS, case_cells, environment_table, failure_details
from harness.run import RUN_INFO_KEY, RunInfo

# pytest-html's template draws its environment table above everything; ours follows the verdict, so theirs is hidden
HIDE_TOP_ENVIRONMENT = "<style>#environment-header,#environment{display:none}</style>"
NOISE = ("Packages", "Plugins")  # pytest's own versions: not what a reviewer of a kernel needs


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
        ours = [f'<th class="sortable" data-column-type="{key}">{esc(label)}</th>' for key, label in CASE_COLUMNS]
        cells[2:2] = ours

    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        test_id = report.nodeid + (f"::{report.when}" if report.when not in ("call", None) else "")
        cells[1] = f'<td class="col-testId">{esc(test_id)}</td>'  # pytest-html leaves ids unescaped
        cells[2:2] = case_cells(record_of_reports([report]), show_verdict=report.when == "call" or report.failed)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.failed:
            table = failure_details(record_of_reports([report]))
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
        if (collector := collector_of(self.config)) is not None:
            run_diagnosis(session)  # the run's ending and diagnosis, before the summary model that shows them
            prefix.append(render(collector.results(), self.info.families, run_summary(self.config),
                                 links=bench_link(self.config)))
            environment = take_environment(self.config, self.info.environment)
            prefix.append(HIDE_TOP_ENVIRONMENT + environment_table(environment))


def bench_link(config: pytest.Config) -> str:
    """A link to the speed plot when a bench.json with its plot sits beside this HTML report (python -m bench)."""
    html_path = getattr(config.option, "htmlpath", None)
    if not html_path:
        return ""
    return html_link_fragment(Path(config.invocation_params.dir, html_path).parent / "bench.json") or ""


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if RUN_INFO_KEY not in config.stash or not config.pluginmanager.hasplugin("html") or not is_controller(config):
        return
    config.pluginmanager.register(PrecisionHtml(config, config.stash[RUN_INFO_KEY]), "nan-precision-html")


def take_environment(config: pytest.Config, ours: dict[str, str]) -> dict[str, str]:
    """pytest-metadata's entries (less pytest's own versions) and the run's environment, redacted as pytest-html
    would (its environment_table_redact_list). pytest-html's own table, filled at its sessionstart and again by
    pytest-metadata as xdist workers go down, is emptied here, just before pytest-html writes the page."""
    from pytest_metadata.plugin import metadata_key

    meta = config.stash[metadata_key]
    environment = {str(k): str(v) for k, v in meta.items() if k not in NOISE}
    environment.update(ours)
    meta.clear()
    redact = [re.compile(pattern) for pattern in config.getini("environment_table_redact_list")]
    return {k: "\u2593" * len(v) if any(r.match(k) for r in redact) else v for k, v in environment.items()}
