"""Controller-side plugin that folds every test report into one TestRecord per test item, with its verdict."""
from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from verdict.record import (
    CALL_SITE, CALL_SITE_PROPERTY, CAPTURABLE_PROPERTY, CHECK_PROPERTY, CRASH, DEVICE_FAULT, ERROR, FAILED_OUTCOMES,
    FAILING, NOT_RUN, PARAMS_PROPERTY, PASS, PLANTED_PROPERTY, TIMEOUT, WAIVED, CaseParams, Check, TestRecord, worst,
)
from verdict.crash_storm import STORM_PROPERTY, CrashStorm
from verdict.not_run import NOT_RUN_PROPERTY, NotRun

_XDIST_NODE_LINE = re.compile(r"^\[gw\d+\] .*\n?")
MESSAGE_LIMIT = 20_000  # characters of a failure's text kept in the record (a chatty kernel must not bloat it)


def longrepr_text(report: pytest.TestReport | pytest.CollectReport) -> str:
    """The failure's own words: its 'E' lines, else the whole text, without xdist's '[gw0] linux' line."""
    if not report.longrepr:
        return ""
    if isinstance(report.longrepr, tuple):  # skip reports: (path, lineno, reason)
        return str(report.longrepr[-1])
    text = _XDIST_NODE_LINE.sub("", str(getattr(report, "longreprtext", "") or report.longrepr), count=1)
    errors = [line[1:].strip() for line in text.splitlines() if line.startswith("E ")]
    text = "\n".join(errors) if errors else text.strip()
    return (text if len(text) <= MESSAGE_LIMIT
            else text[:MESSAGE_LIMIT] + f"\n... ({len(text) - MESSAGE_LIMIT} more characters)")


# A later, worse outcome wins: a teardown error after a pass is an error; a crash after a passed setup a failure.
_RANK = {"pending": 0, "passed": 1, "skipped": 2, "xfailed": 2, "xpassed": 2, "failed": 3, "error": 4}


def outcome_word(when: str, outcome: str, wasxfail: bool) -> str | None:
    """Map one report to an outcome word; passed setup/teardown reports say nothing on their own."""
    if outcome == "skipped":
        return "xfailed" if wasxfail else "skipped"
    if when in ("setup", "teardown"):
        return "error" if outcome == "failed" else None
    if outcome == "passed":
        return "xpassed" if wasxfail else "passed"
    return "failed" if outcome == "failed" else None


@dataclass
class _Builder:
    """What is known so far of one test item."""

    nodeid: str
    waiver: dict[str, str] | None = None
    outcome: str = "pending"
    duration: float = 0.0
    params: CaseParams | None = None
    checks: list[Check] = field(default_factory=list)
    message: str = ""
    planted: dict[str, Any] | None = None
    call_sites: list[dict[str, Any]] = field(default_factory=list)
    crashed: bool = False
    timed_out: bool = False
    not_run: NotRun | None = None  # why it skipped, where the harness recorded it (verdict.not_run)
    crash_storm: CrashStorm | None = None  # the crash storm it was skipped for (harness.isolation)

    def add_report(self, when: str, outcome: str, duration: float, properties: list[tuple[str, object]],
                   longrepr: str, wasxfail: bool) -> None:
        """Fold one report of the item (setup, call, teardown, a crash) into what is known, worst outcome kept."""
        self.duration += duration
        checks = []
        sites = []
        for name, value in properties:
            try:
                if name == PARAMS_PROPERTY and self.params is None:
                    self.params = CaseParams.from_dict(json.loads(str(value)))
                elif name == CHECK_PROPERTY:
                    checks.append(Check.from_json(str(value)).audited())
                elif name == PLANTED_PROPERTY:
                    self.planted = dict(json.loads(str(value)))
                elif name == CALL_SITE_PROPERTY:
                    sites.append(dict(json.loads(str(value))))
                elif name == NOT_RUN_PROPERTY:
                    self.not_run = NotRun.from_dict(json.loads(str(value)))
                elif name == STORM_PROPERTY:
                    self.crash_storm = CrashStorm.from_dict(json.loads(str(value)))
            except (ValueError, TypeError, KeyError):
                continue
        if len(checks) > len(self.checks):  # reports carry the item's properties so far: keep the longest
            self.checks = checks
        if len(sites) > len(self.call_sites):
            self.call_sites = sites
        if when == "???":  # xdist: the worker died while running this item
            self.crashed = True
            if self.outcome in FAILED_OUTCOMES and self.message:
                return  # the item already failed with its root cause (a device fault, then the worker's exit)
        word = outcome_word(when, outcome, wasxfail)
        if word is not None and _RANK[word] >= _RANK.get(self.outcome, 0):
            self.outcome = word
            if longrepr:
                self.message = longrepr

    def verdict(self) -> str:
        if self.outcome == "xfailed" or (self.waiver and self.crashed and self.outcome == "failed"):
            return WAIVED  # a waived case that killed its worker is still the known failure the waiver names
        if self.outcome in ("skipped", "pending"):
            return NOT_RUN
        if self.outcome in ("passed", "xpassed") and all(c.ok for c in self.checks):
            return PASS
        found = worst(c.verdict for c in self.checks)
        if any(not s.get("match", True) for s in self.call_sites):
            found = worst((found, CALL_SITE))
        if found == DEVICE_FAULT:
            return found
        lowered = self.message.lower()
        if self.timed_out or ("+++ timeout +++" in lowered or "failed: timeout" in lowered):
            return TIMEOUT
        if self.crashed:
            return CRASH
        return found if found != PASS else ERROR

    def build(self) -> TestRecord:
        params = self.params or (self.checks[0].params if self.checks else None)
        verdict = self.verdict()
        outcome = "xfailed" if verdict == WAIVED else self.outcome
        if outcome in ("passed", "xpassed") and verdict in FAILING:
            outcome = "failed"  # a check that contradicts itself fails the test, whatever the worker reported
        return TestRecord(self.nodeid, outcome, verdict, params, self.duration, tuple(self.checks),
                          self.message, self.waiver, self.planted, tuple(self.call_sites),
                          not_run=self.not_run if verdict == NOT_RUN else None,
                          crash_storm=self.crash_storm if verdict == NOT_RUN else None)


class ResultCollector:
    """Records by node id, built from reports only, so serial and xdist runs give the same content."""

    def __init__(self, waivers: dict[str, dict[str, str]] | None = None, timeout: float | None = None) -> None:
        self._items: dict[str, _Builder] = {}
        self._started: dict[str, float] = {}
        self._timeout = timeout
        self._waivers = waivers or {}
        self.collected = 0
        self.capturable: dict[str, Any] | None = None  # what the graph-capture test found, when it ran
        # node id: its rerun label and reruns (reports.reruns)
        self.flaky: dict[str, tuple[str, tuple[dict[str, Any], ...]]] = {}

    def _item(self, nodeid: str) -> _Builder:
        if nodeid not in self._items:
            self._items[nodeid] = _Builder(nodeid, waiver=self._waivers.get(nodeid))
        return self._items[nodeid]

    def pytest_runtest_logstart(self, nodeid: str, location: object) -> None:
        self._started[nodeid] = time.monotonic()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == CAPTURABLE_PROPERTY:
                try:
                    self.capturable = dict(json.loads(str(value)))
                except (ValueError, TypeError):
                    pass
        elapsed = time.monotonic() - self._started.get(report.nodeid, time.monotonic())
        if report.when == "???" and self._timeout and elapsed >= self._timeout:
            self._item(report.nodeid).timed_out = True  # pytest-timeout killed the worker past the limit
        self._item(report.nodeid).add_report(
            when=report.when or "",
            outcome=report.outcome,
            duration=float(getattr(report, "duration", 0.0) or 0.0),
            properties=list(report.user_properties),
            longrepr=longrepr_text(report),
            wasxfail=hasattr(report, "wasxfail"),
        )

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            item = self._item(report.nodeid or "<collection>")
            item.add_report("collect", "failed", 0.0, [], longrepr_text(report), False)
            item.outcome = "error"

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.collected = len(session.items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_node_collection_finished(self, node: Any, ids: list[str]) -> None:
        self.collected = max(self.collected, len(ids))

    def results(self) -> list[TestRecord]:
        """All records, ordered by node id (independent of scheduling)."""
        records = [self._items[k].build() for k in sorted(self._items)]
        return [r.with_(flaky=self.flaky[r.nodeid][0], reruns=self.flaky[r.nodeid][1]) if r.nodeid in self.flaky
                else r for r in records]


def record_of_reports(reports: list[pytest.TestReport]) -> TestRecord:
    """The record a test's reports describe (one report: a per-row cell of the HTML table; setup, call and
    teardown: a test run outside the collector, by mutate's workers)."""
    builder = _Builder(reports[0].nodeid)
    for report in reports:
        builder.add_report(report.when or "", report.outcome, 0.0, list(getattr(report, "user_properties", ())),
                           longrepr_text(report), hasattr(report, "wasxfail"))
    return builder.build()
