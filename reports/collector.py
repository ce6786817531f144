"""Controller-side plugin that folds every test report into one CaseResult per test item."""
from __future__ import annotations

import re

import pytest

from reports.records import CaseResult


_XDIST_NODE_LINE = re.compile(r"^\[gw\d+\] .*\n?")


def _longrepr_text(report: pytest.TestReport | pytest.CollectReport) -> str:
    """The failure's own words: its 'E' lines (tracebacks hold object addresses), else the whole text, without
    xdist's '[gw0] linux -- Python ...' line, so serial and xdist runs agree."""
    if not report.longrepr:
        return ""
    if isinstance(report.longrepr, tuple):  # skip reports: (path, lineno, reason)
        return str(report.longrepr[-1])
    text = _XDIST_NODE_LINE.sub("", str(getattr(report, "longreprtext", "") or report.longrepr), count=1)
    errors = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    return "\n".join(errors) if errors else text.strip()


class ResultCollector:
    """Results by node id, built from reports only, so serial and xdist runs give the same content."""

    def __init__(self, waivers: dict[str, dict[str, str]] | None = None) -> None:
        self._results: dict[str, CaseResult] = {}
        self._waivers = waivers or {}

    def _result(self, nodeid: str) -> CaseResult:
        if nodeid not in self._results:
            self._results[nodeid] = CaseResult(nodeid, waiver=self._waiver_for(nodeid))
        return self._results[nodeid]

    def _waiver_for(self, nodeid: str) -> dict[str, str] | None:
        return self._waivers.get(nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self._result(report.nodeid).absorb(
            when=report.when or "",
            outcome=report.outcome,
            duration=float(getattr(report, "duration", 0.0) or 0.0),
            properties=report.user_properties,
            longrepr=_longrepr_text(report),
            wasxfail=hasattr(report, "wasxfail"),
        )

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            result = self._result(report.nodeid or "<collection>")
            result.absorb("collect", "failed", 0.0, (), _longrepr_text(report), False)
            result.outcome = "error"

    def results(self) -> list[CaseResult]:
        """All results, ordered by node id (independent of scheduling)."""
        return [self._results[k] for k in sorted(self._results)]
