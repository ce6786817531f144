"""Collects the self-test verdicts (a `planted` user property per test) and prints the score at the end."""
from __future__ import annotations

import json

import pytest

from verdict.record import PLANTED_PROPERTY as PROPERTY  # one name for the writer and the report

PLUGIN_NAME = "nan-selftest-score"


class PlantedScore:
    """Runs in the process that writes the terminal summary (xdist's controller, or a serial run)."""

    def __init__(self) -> None:
        self.verdicts: dict[str, dict] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == PROPERTY:
                record = json.loads(value)
                self.verdicts[record["variant"]] = record

    def pytest_terminal_summary(self, terminalreporter) -> None:  # type: ignore[no-untyped-def]
        if not self.verdicts:
            return
        scored = [v for v in self.verdicts.values() if v["applies"]]
        caught = [v for v in scored if v["caught"]]
        tr = terminalreporter
        tr.section("planted bugs")
        for v in sorted(self.verdicts.values(), key=lambda v: (v["bug_class"], v["variant"])):
            if not v["applies"]:
                verdict = "caught (unexpected here)" if v["caught"] else "not caught here (blind spot, expected)"
            else:
                verdict = "caught" if v["caught"] else "NOT CAUGHT"
            hits = v["hits"]
            if v["caught"] and hits:
                verdict += f" by {hits[0]}" + (f" (+{len(hits) - 1} more)" if len(hits) > 1 else "")
            if v["caught"] and v.get("diagnosis") and v["diagnosis"] != v["bug_class"]:
                verdict += f"; diagnosed as {v['diagnosis']}"
            tr.write_line(f"{v['bug_class']:<13} {v['variant']:<21} {verdict}")
        blind = [v["variant"] for v in self.verdicts.values() if not v["applies"]]
        flavour = next(iter(self.verdicts.values()))["flavour"]
        note = f" ({', '.join(blind)}: not scored on {flavour})" if blind else ""
        tr.write_line(f"planted bugs caught: {len(caught)}/{len(scored)}{note}", bold=True,
                      green=len(caught) == len(scored), red=len(caught) != len(scored))
        right = [v for v in caught if v.get("diagnosis") == v["bug_class"]]
        tr.write_line(f"diagnosis first item = the planted class: {len(right)}/{len(caught)} caught variants "
                      "(on each variant's narrow selection)", bold=True, green=len(right) == len(caught),
                      red=len(right) != len(caught))


def register(config: pytest.Config) -> None:
    if not config.pluginmanager.has_plugin(PLUGIN_NAME):
        config.pluginmanager.register(PlantedScore(), PLUGIN_NAME)
