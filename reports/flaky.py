"""Flaky or deterministic: the labels a failed test gets from its reruns, the bounds on them, the known-flaky list.

A failed test is rerun in fresh processes before the run ends (reports.reruns runs them; harness.reruns starts
them). It stays a failure whatever the reruns show: its label says `deterministic` (failed every rerun that ran),
`flaky` (passed at least one), `known flaky: <reason> (<link>)` (the known-flaky list matches it: not rerun, the
budget goes to unknown failures) or `not rerun: <why>` (a bound, reruns off, the run interrupted). Torch- and
pytest-free: results.json's validator and every report read the labels through here.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reports.data_file import entries, read_toml
from verdict.record import TestRecord

DETERMINISTIC = "deterministic"
FLAKY = "flaky"
KNOWN_FLAKY = "known flaky"
NOT_RERUN = "not rerun"
KINDS: tuple[str, ...] = (DETERMINISTIC, FLAKY, KNOWN_FLAKY, NOT_RERUN)  # a label is one of these, or "<kind>: ..."
PASSED = ("passed",)  # a rerun that passed (a waived case's xfail is no pass of a failed test)
FAILED = ("failed", "error")

EXAMPLE = ('[[flaky]]\nid = "tests/precision/test_families.py::test_case[fp32-special-*]"   # node id; * matches '
           'any text\nreason = "why it is known to flake"\nlink = "https://tracker.example/issues/7"')


def kind(label: str | None) -> str | None:
    """The label's kind (deterministic, flaky, known flaky, not rerun), None for a label this module never writes."""
    if label is None:
        return None
    head = label.split(":", 1)[0].strip()
    return head if head in KINDS else None


def label_of(reruns: Sequence[Mapping[str, Any]], missing: str) -> str:
    """A rerun test's label from its reruns: flaky when one passed, deterministic when every one that ran failed,
    else `not rerun: <missing>` (no rerun reported the test)."""
    outcomes = [str(r.get("outcome", "")) for r in reruns]
    if any(o in PASSED for o in outcomes):
        return FLAKY
    if any(o in FAILED for o in outcomes):
        return DETERMINISTIC
    return f"{NOT_RERUN}: {missing}"


def describe(record: TestRecord) -> str:
    """The label in words for a listing: 'flaky (passed 1 of 2 reruns)', 'deterministic (failed 2 of 2 reruns)',
    'not rerun: ...'; '' for a record without a label (a passing test, or an older results.json)."""
    label = record.flaky
    if not label:
        return ""
    ran = [r for r in record.reruns if str(r.get("outcome", "")) in PASSED + FAILED]
    if kind(label) == FLAKY:
        passed = sum(1 for r in ran if r.get("outcome") in PASSED)
        return f"{label} (passed {passed} of {len(ran)} rerun{'s' if len(ran) != 1 else ''})"
    if kind(label) == DETERMINISTIC:
        return f"{label} (failed {len(ran)} of {len(ran)} rerun{'s' if len(ran) != 1 else ''})"
    return label


def tally(records: Sequence[TestRecord]) -> str:
    """'1 flaky, 2 deterministic, 3 not rerun' over the labelled records; '' when none has a label."""
    counts = Counter(k for r in records if (k := kind(r.flaky)) is not None)
    return ", ".join(f"{counts[k]} {k}" for k in (FLAKY, KNOWN_FLAKY, DETERMINISTIC, NOT_RERUN) if k in counts)


# --- the known-flaky list -----------------------------------------------------------------------------------------

class KnownFlakyError(ValueError):
    """The known-flaky file is unreadable or malformed."""


@dataclass(frozen=True)
class KnownFlaky:
    """One entry: a node id pattern (`*` matches any text, everything else literally), why, and where it is tracked."""

    id: str
    reason: str
    link: str

    def matches(self, nodeid: str) -> bool:
        return re.fullmatch(".*".join(re.escape(part) for part in self.id.split("*")), nodeid) is not None

    def label(self) -> str:
        return f"{KNOWN_FLAKY}: {self.reason} ({self.link})"


def load_known(path: Path) -> tuple[KnownFlaky, ...]:
    """Parse and check a known-flaky file: [[flaky]] tables, each with a non-empty id, reason and link."""
    where = f"--nan-known-flaky {path}"
    data = read_toml(path, where, KnownFlakyError)
    if set(data) - {"flaky"} or not isinstance(data.get("flaky", []), list):
        raise KnownFlakyError(f"{where}: use [[flaky]] tables only; expected:\n{EXAMPLE}")
    return tuple(KnownFlaky(*fields) for fields in entries(data.get("flaky", []), where, KnownFlakyError, "entry",
                                                          EXAMPLE, "a node id pattern"))


# --- which failures are rerun -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Plan:
    """The failed tests to rerun (at most `per_family` of each family), and the label of every other failure."""

    rerun: tuple[str, ...]
    labels: dict[str, str]


def group_of(record: TestRecord) -> str:
    """What the per-family bound counts by: the case family, else the test function (contract tests and others)."""
    return record.family or record.test_name


def plan(failed: Sequence[TestRecord], *, known: Sequence[KnownFlaky] = (), per_family: int,
         stop: str | None = None) -> Plan:
    """Known-flaky failures are labelled so and not rerun; with `stop` (why nothing is rerun) every other failure is
    `not rerun: stop`; else the first `per_family` failures of each family (by node id) are rerun and the rest say
    the bound left them out."""
    labels: dict[str, str] = {}
    rerun: list[str] = []
    taken: dict[str, int] = {}
    for r in sorted(failed, key=lambda r: r.nodeid):
        entry = next((k for k in known if k.matches(r.nodeid)), None)
        if entry is not None:
            labels[r.nodeid] = entry.label()
        elif stop is not None:
            labels[r.nodeid] = f"{NOT_RERUN}: {stop}"
        elif taken.get(group_of(r), 0) >= per_family:
            labels[r.nodeid] = (f"{NOT_RERUN}: {per_family} failed test(s) of {group_of(r)} rerun already "
                                "(--nan-rerun-per-family)")
        else:
            taken[group_of(r)] = taken.get(group_of(r), 0) + 1
            rerun.append(r.nodeid)
    return Plan(tuple(rerun), labels)
