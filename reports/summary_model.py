"""One run's summary as data (issue 59, item 3): verdict, kernel and backend, tally, notes, what was not run, the
diagnosis and the failures, in the order every page says them. Built once from the run's data, never from a page's
text; reports.summary renders it as HTML, reports.markdown as Markdown and `terminal` as the run's last lines.
Torch-free, like every gate reader."""
from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reports import flaky
from reports.not_run import Group, groups
from reports.results import Results
from reports.text import environment_headline, item_count, why
from verdict.record import ENVIRONMENT, NOT_RUN, TestRecord

SHOWN_IN_TERMINAL = 5  # diagnosis items and rerun tests the terminal lists; the HTML page and results.json: all


@dataclass(frozen=True)
class Failure:
    """A failed test as every listing shows it: its id, verdict in words, rerun label and why it failed."""

    id: str
    verdict: str
    rerun: str  # reports.flaky.describe: "flaky (passed 1 of 2 reruns)"; '' when not rerun
    kind: str  # that label's kind (flaky, deterministic, known flaky, not rerun), or ''
    why: str


@dataclass(frozen=True)
class Summary:
    """What every page says of one run, in the order the pages say it."""

    verdict: str  # PASS, FAIL, or what ended the run: INCOMPLETE (how), ENVIRONMENT (pattern): message
    kernel: str
    backend: str
    tests: int
    tally: str
    notes: tuple[tuple[str, str, str], ...]  # (label, verbatim: code on a page, words): what stopped it, capturable
    not_run_tests: int
    not_run: tuple[Group, ...]
    gaps: tuple[str, ...]  # an older results.json's gap texts (it recorded no groups): reports.not_run.lines
    diagnosis: tuple[Mapping[str, Any], ...]  # results.json's items, strongest first
    partial: bool  # the diagnosis reads only the tests that ran: the run stopped early
    failures: tuple[Failure, ...]
    failed_by: tuple[tuple[str, int], ...]  # failures by family or test function, busiest first
    reruns: str  # the failures' rerun labels counted: "1 flaky, 2 deterministic"
    environment: Mapping[str, str]


def _notes(environment: Mapping[str, str], failure: Mapping[str, Any] | None, usage: str | None
           ) -> tuple[tuple[str, str, str], ...]:
    """What stopped the run (its machine, a usage error: nothing was judged) and the graph-capture finding."""
    return tuple(note for note in (
        failure and ("Environment failure", str(failure.get("name", "?")),
                     f"({failure.get('kind', '')}, {failure.get('where', '')}): {str(failure.get('message', ''))[:300]}"
                     ". The machine stopped the run: nothing was judged, and it is not the kernel's failure."),
        usage and ("Usage error", usage[:300], "The run stopped before any test ran: nothing was judged. Fix the "
                                               "command and run it again."),
        environment.get("Capturable") and ("capturable in a device graph", "", environment["Capturable"]),
    ) if note)


def _verdict(failing: bool, finished: bool | None, ended: str, failure: Mapping[str, Any] | None) -> str:
    """The run's one word: ENVIRONMENT (never the kernel's failure), INCOMPLETE (never called passed), FAIL or PASS."""
    if failure or ended == ENVIRONMENT:
        return environment_headline(dict(failure))[:300] if failure else "ENVIRONMENT"
    return f"INCOMPLETE ({ended})" if finished is False else ("FAIL" if failing else "PASS")


def build(records: Sequence[TestRecord], *, kernel: str = "?", backend: str = "?", finished: bool | None = None,
          ended: str = "", not_run: Sequence[Group] | None = None, gaps: Sequence[str] = (),
          diagnosis: Sequence[Mapping[str, Any]] = (), environment: Mapping[str, str] | None = None,
          environment_failure: Mapping[str, Any] | None = None, usage_error: str | None = None) -> Summary:
    """The summary of a run from its data; groups not run None: grouped here from the records, with `gaps`."""
    failed, environment = [r for r in records if r.failed], dict(environment or {})
    found, legacy = (groups(records), tuple(gaps)) if not_run is None else (tuple(not_run), ())
    by = sorted(Counter(r.family or r.test_name for r in failed).items(), key=lambda kv: (-kv[1], kv[0]))
    tally = Counter(r.verdict for r in records).most_common()  # most first: '1030 pass, 3 wrong counts'
    return Summary(
        verdict=_verdict(bool(failed), finished, ended, environment_failure), kernel=kernel, backend=backend,
        tests=len(records), tally=", ".join(f"{n} {v.replace('_', ' ')}" for v, n in tally),
        notes=_notes(environment, environment_failure, usage_error),
        not_run_tests=sum(1 for r in records if r.verdict == NOT_RUN), not_run=found, gaps=legacy,
        diagnosis=tuple(diagnosis), partial=any(d.get("partial") for d in diagnosis),
        failures=tuple(Failure(r.id, r.verdict.replace("_", " "), flaky.describe(r), flaky.kind(r.flaky) or "", why(r))
                       for r in failed),
        failed_by=tuple(by), reruns=flaky.tally(records), environment=environment)


def of_results(run: Results) -> Summary:
    """The summary of a results.json (a run, merged shards, a night, a run that ended early): what a run builds."""
    what = run.identity()
    return build(run.records, kernel=what["kernel"], backend=what["backend"], finished=run.finished, ended=run.ended,
                 not_run=run.not_run, gaps=run.coverage_gaps, diagnosis=run.diagnosis, environment=run.environment,
                 environment_failure=run.environment_failure, usage_error=run.usage_error)


def terminal(m: Summary) -> list[str]:
    """The run's last lines, banner first: the pages' facts in their order, shortened (pytest lists the failures)."""
    out = [f"nan-harness: {m.verdict}", f"kernel {m.kernel} on {m.backend}: {m.tests} tests: {m.tally}"]
    out += [f"{label}: " + " ".join(filter(None, (code, words))) for label, code, words in m.notes]
    out += [f"  not run: {g.describe()}" for g in m.not_run if g.tests]  # a gap no test fell into: on the pages only
    out += ["  diagnosis partial: the run stopped early; read from the tests that ran"] if m.partial else []
    out += [f"  {number}. [{d.get('category', '')}] {d.get('name', '')} ({item_count(d)})"
            for number, d in enumerate(m.diagnosis[:SHOWN_IN_TERMINAL], 1)]
    if len(m.diagnosis) > SHOWN_IN_TERMINAL:
        out.append(f"  ... {len(m.diagnosis) - SHOWN_IN_TERMINAL} more in the HTML report and results.json")
    rerun = [f for f in m.failures if f.rerun]
    out += [f"failed tests rerun in a fresh process: {m.reruns} (still failures)"] if rerun else []
    out += [f"  {f.id}: {f.rerun}" for f in rerun[:SHOWN_IN_TERMINAL]]
    if len(rerun) > SHOWN_IN_TERMINAL:
        out.append(f"  ... {len(rerun) - SHOWN_IN_TERMINAL} more in the HTML report and results.json")
    return out
