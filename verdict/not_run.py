"""Why a test did not run, and what runs it: data attached where the skip is decided, read by every report.

A skip's words in pytest's output are for a person; the reports never parse them. The harness attaches a `NotRun`
to the test (NOT_RUN_PROPERTY) before it skips, the collector puts it on the test's `TestRecord`, and the headline,
the HTML page, the Markdown summary and results.json group the tests not run by it. Torch-free.
"""
from __future__ import annotations

from dataclasses import dataclass

from verdict.codec import JsonRecord

NOT_RUN_PROPERTY = "nan_not_run"  # a NotRun as JSON, attached to a test item before it skips


@dataclass(frozen=True)
class NotRun(JsonRecord):
    """What was not tested (a group of tests: a path, a family, a marker's checks), why not here, and the commands
    that run it (none when no option or machine of this harness can: the module lacks the function it needs)."""

    group: str
    reason: str
    commands: tuple[str, ...] = ()  # each a whole command line, e.g. "tox -e cpu-batches"; any one of them runs it
    marker: str = ""  # the pytest marker that selects the group's tests, where one does

    def describe(self) -> str:
        """One line for a reader: the group, why it did not run, and how to run it."""
        return f"{self.group}: not run, {self.reason}" + (
            f"; run it with {' or '.join(self.commands)}" if self.commands else "")
