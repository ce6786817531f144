"""What a run did not test, in groups: each group's tests, why they did not run and the command that runs them.

Built from the records' NotRun (verdict.not_run, recorded where the harness skips) and the run's kernel-level gaps
(a module without `_num_nans_kernel` or the aggregation: groups with no test when none was selected). A test not run
that recorded no reason (a run stopped early, a skip outside the harness) still gets a group, by its family or test
function, saying so. results.json's `not_run`, the headline, the HTML page, the Markdown summary and the terminal all
show these groups. Torch-free, like every gate reader.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from verdict.not_run import NotRun
from verdict.record import NOT_RUN, TestRecord


@dataclass(frozen=True)
class Group:
    """One reason for not testing something, and how many of this run's tests it left out."""

    what: NotRun
    tests: int

    def describe(self, text: Callable[[str], str] = str, code: Callable[[str], str] = str) -> str:
        """One line: the group, how many tests, why, and the command that runs it (`text` and `code` mark them up
        for a page: escaped words, the command as code)."""
        w = self.what
        count = f"{self.tests} test(s) not run" if self.tests else "none selected, none could have run"
        line = text(f"{w.group}: {count}, {w.reason}")
        return line + (text("; run it with ") + text(" or ").join(code(c) for c in w.commands) if w.commands else "")

    def to_dict(self) -> dict[str, Any]:
        return {**self.what.to_dict(), "tests": self.tests}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Group:
        return cls(NotRun.from_dict(data), int(data.get("tests") or 0))


def unrecorded(record: TestRecord) -> NotRun:
    """The group of a test not run that recorded no NotRun: by family or test function, saying what is known."""
    where = record.family or record.test_name
    if record.outcome == "pending":
        return NotRun(where, "never reached: the run ended before it")
    return NotRun(where, "skipped without a recorded reason (pytest's skip list says why)")


def groups(records: Iterable[TestRecord], known: Iterable[NotRun] = ()) -> list[Group]:
    """Every group not run: the records' own reasons, then the kernel-level gaps no selected test fell into."""
    counts: dict[NotRun, int] = {}
    for r in records:
        if r.verdict == NOT_RUN:
            what = r.not_run or unrecorded(r)
            counts[what] = counts.get(what, 0) + 1
    for what in known:
        counts.setdefault(what, 0)
    return [Group(w, n) for w, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].group, kv[0].reason))]


def lines(found: Sequence[Group], legacy_gaps: Sequence[str] = (), text: Callable[[str], str] = str,
          code: Callable[[str], str] = str) -> list[str]:
    """The groups' lines, and an older file's gap texts (written before groups were recorded)."""
    return [g.describe(text, code) for g in found] + [text(g) for g in legacy_gaps]
