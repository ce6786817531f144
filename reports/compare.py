"""python -m reports.compare BASELINE.json CURRENT.json: what broke, what got fixed, what appeared or vanished.

Exit status: 0 when nothing regressed; 1 when any case regressed (passed before; failed, errored, or - unless
--allow-coverage-loss - skipped or missing now); 2 when a file cannot be judged: unreadable, not a
nan-harness-results/2 file (an older /1 file cannot show that its run finished), malformed (reports.results.validate
names the field), or describing a run that did not finish or collected nothing.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path

from reports import markdown
from reports.results import Results, ResultsError, load, write_text_atomic
from reports.text import environment_headline, short_message, why
from verdict.record import FAILED_OUTCOMES, TestRecord

BAD = FAILED_OUTCOMES
GOOD = ("passed",)


@dataclass
class Diff:
    """Tests of two results files sorted into what changed; each test in one list at most."""

    regressions: list[tuple[TestRecord, TestRecord]] = field(default_factory=list)
    fixes: list[tuple[TestRecord, TestRecord]] = field(default_factory=list)
    changed: list[tuple[TestRecord, TestRecord]] = field(default_factory=list)
    new: list[TestRecord] = field(default_factory=list)
    missing: list[TestRecord] = field(default_factory=list)
    coverage_lost: list[tuple[TestRecord, TestRecord | None]] = field(default_factory=list)
    unchanged: int = 0


def diff(baseline: Results, current: Results) -> Diff:
    """Match tests by node id and classify each outcome change."""
    before, after = baseline.by_nodeid(), current.by_nodeid()
    d = Diff()
    for nodeid in sorted(before.keys() | after.keys()):
        old, new = before.get(nodeid), after.get(nodeid)
        if old is None:
            d.new.append(new)  # type: ignore[arg-type]
        elif new is None and old.outcome in GOOD:
            d.coverage_lost.append((old, None))  # each case is listed in one section only
        elif new is None:
            d.missing.append(old)
        elif old.outcome in GOOD and new.outcome in BAD:
            d.regressions.append((old, new))
        elif old.outcome in BAD + ("xfailed",) and new.outcome in GOOD:
            d.fixes.append((old, new))
        elif old.outcome in GOOD and new.outcome in ("skipped", "pending"):
            d.coverage_lost.append((old, new))  # its own section, never also an "other" change
        elif old.outcome != new.outcome:
            d.changed.append((old, new))
        else:
            d.unchanged += 1
    return d


def differences(baseline: Results, current: Results) -> list[str]:
    """What the two runs were of that differs (kernel, backend, device, kernel commit)."""
    before, after = baseline.identity(), current.identity()
    return [key for key in before if before[key] != after[key]]


def describe_side(run: Results) -> str:
    s = run.identity()
    return f"kernel {s['kernel']} on {s['backend']} ({s['device']}), kernel commit {s['kernel commit']}"


def sections(d: Diff) -> list[tuple[str, str, list[str]]]:
    """Each kind of change: its short name, its heading in the plain-text listing, and a line per test."""
    def moved(old: TestRecord, new: TestRecord) -> str:
        return f"{new.nodeid}  {old.outcome} -> {new.outcome}"

    return [
        ("regressions", "REGRESSIONS (passed -> failed)",
         [f"{moved(old, new)}: {why(new)}".rstrip(": ") for old, new in d.regressions]),
        ("fixes", "FIXES (failed -> passed)", [moved(old, new) for old, new in d.fixes]),
        ("other changes", "OTHER OUTCOME CHANGES", [moved(old, new) for old, new in d.changed]),
        ("new", "NEW CASES", [f"{c.nodeid}  ({c.outcome})" for c in d.new]),
        ("missing", "MISSING CASES (not passed before)", [f"{c.nodeid}  (was {c.outcome})" for c in d.missing]),
        ("coverage lost", "COVERAGE LOST (passed -> skipped or missing)",
         [f"{old.nodeid}  passed -> {new.outcome if new else 'missing'}" + _why_not_run(new)
          for old, new in d.coverage_lost]),
    ]


def render(d: Diff, baseline_path: str, current_path: str, baseline: Results, current: Results) -> str:
    """Plain-text listing: what each side was of, then one section per kind of change, each line naming the test."""
    out = [f"baseline: {baseline_path} ({len(baseline.records)} cases): {describe_side(baseline)}",
           f"current:  {current_path} ({len(current.records)} cases): {describe_side(current)}"]
    differ = differences(baseline, current)
    if differ:
        out.append(f"NOTE: the two runs differ in {', '.join(differ)}")
    out.append("")
    for _, title, lines in sections(d):
        out.append(f"{title}: {len(lines)}")
        out.extend(f"  {line}" for line in lines)
    out.append(f"unchanged: {d.unchanged}")
    return "\n".join(out)


def _why_not_run(record: TestRecord | None) -> str:
    """Why a case did not run now: its recorded reason and command (verdict.not_run), else its message."""
    if record is None:
        return ""
    if record.not_run is not None:
        return f": {record.not_run.describe()}"
    return f": {short_message(record.message)}" if record.message else ""


def render_markdown(d: Diff, baseline_path: str, current_path: str, baseline: Results, current: Results,
                    verdict: str) -> str:
    """The comparison for a CI job page: what each side was of, the counts of each kind of change, the regressions
    with their first wrong row (reports.markdown's limits and escaping)."""
    code, text = markdown.code, markdown.text
    before, after = baseline.identity(), current.identity()
    head = [f"### nan-harness compare: {text(verdict)}", "", "| | baseline | current |", "|---|---|---|",
            f"| results | {code(baseline_path, in_table=True)} | {code(current_path, in_table=True)} |"]
    head += [f"| {key} | {code(before[key], in_table=True)} | {code(after[key], in_table=True)} |" for key in before]
    differ = differences(baseline, current)
    if differ:
        head += ["", f"**The two runs differ in {text(', '.join(differ))}.**"]
    counts = [f"{name} {len(lines)}" for name, _, lines in sections(d)] + [f"unchanged {d.unchanged}"]
    body = ["", " · ".join(counts)]
    if d.regressions:
        body += ["", "| regressed test | was | now | first wrong row or cause |", "|---|---|---|---|"]
        body += [f"| {code(new.id, in_table=True)} | {text(old.outcome)} | {text(new.outcome)} | {text(why(new))} |"
                 for old, new in d.regressions[:markdown.SHOWN_FAILURES]]
        if len(d.regressions) > markdown.SHOWN_FAILURES:
            body += ["", f"… and {len(d.regressions) - markdown.SHOWN_FAILURES} more regressions "
                         "(`python -m reports.compare`)."]
    return markdown.fit(head, body, [])


def check_finished(run: Results, path: Path) -> None:
    """A run that did not finish, or has no cases, cannot be judged: it would look like no regressions."""
    if run.environment_failure:
        raise ResultsError(f"{path}: the run's environment stopped it, nothing was judged "
                           f"({environment_headline(run.environment_failure)[:300]}); it cannot be compared")
    if not run.finished:
        raise ResultsError(f"{path}: the run did not finish ({run.ended}); it cannot be compared")
    if not run.records:
        raise ResultsError(f"{path}: the run recorded no tests; it cannot be compared")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m reports.compare",
        description="Compare two results.json files of the NaN-count harness. Exit 0: no regressions; "
                    "1: something regressed; 2: a file cannot be judged (unreadable, not a nan-harness-results/2 "
                    "file, malformed, or a run that did not finish), with the reason on stderr.",
    )
    parser.add_argument("baseline", type=Path, help="results.json of the reference run (e.g. yesterday's nightly)")
    parser.add_argument("current", type=Path, help="results.json of the run to judge")
    parser.add_argument("--allow-coverage-loss", action="store_true",
                        help="do not count passed -> skipped or missing as a regression")
    parser.add_argument("--markdown", type=Path, default=None, metavar="PATH",
                        help="also write the comparison as Markdown for a CI job page (appended to "
                             "$GITHUB_STEP_SUMMARY too, when the runner sets it)")
    args = parser.parse_args(argv)
    try:
        baseline, current = load(args.baseline), load(args.current)
        check_finished(baseline, args.baseline)
        check_finished(current, args.current)
    except ResultsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    d = diff(baseline, current)
    print(render(d, str(args.baseline), str(args.current), baseline, current))
    lost = 0 if args.allow_coverage_loss else len(d.coverage_lost)
    failed = bool(d.regressions or lost)
    verdict = (f"FAIL: {len(d.regressions)} regression(s), {lost} case(s) of coverage lost" if failed else
               "OK: no regressions" + (f" ({len(d.coverage_lost)} case(s) of coverage lost, allowed)"
                                       if d.coverage_lost else ""))
    print(verdict)
    summary = render_markdown(d, str(args.baseline), str(args.current), baseline, current, verdict)
    try:
        if args.markdown is not None:
            write_text_atomic(args.markdown, summary)
        markdown.append_step_summary(summary)
    except OSError as exc:
        print(f"error: cannot write the Markdown summary: {exc}", file=sys.stderr)
        return 2
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
