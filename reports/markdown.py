"""A run as Markdown for a CI job page (`--nan-markdown`, and `$GITHUB_STEP_SUMMARY` where a runner sets it).

What a reviewer needs before opening the HTML: the verdict, the tally, the diagnosis, the failed tests with their
first wrong row, what was not covered, the environment and where the HTML is. Rendered from results.json's document
alone (`reports.results.Results`), so a run, a merged night and the nightly say the same; a failing run stays under
MAX_LINES lines (the rest is in the HTML). Torch-free, like every gate reader.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from reports import flaky, not_run
from reports.results import Results, write_text_atomic
from reports.text import environment_headline, facts, item_cases, item_count, run_verdict, verdict_tally, why
from verdict.record import NOT_RUN

MAX_LINES = 60
SHOWN_FAILURES = 15
SHOWN_DIAGNOSES = 3
SHOWN_DIAGNOSIS_CASES = 3
STEP_SUMMARY_VAR = "GITHUB_STEP_SUMMARY"  # GitHub's and Gitea's runners set it to a file the job page shows
ENVIRONMENT_KEYS = ("Device", "Chip", "Driver", "Torch", "Triton", "Kernel commit", "Kernel origin")
_ESCAPED = str.maketrans({c: "\\" + c for c in "\\`*_[]|#"} | {"<": "&lt;", ">": "&gt;", "&": "&amp;",
                                                                  "\n": " ", "\r": " "})


def text(value: object) -> str:
    """Plain text inside Markdown: no markup, link, HTML or table cell break can come from a kernel's message."""
    return str(value).translate(_ESCAPED)


def code(value: object, *, in_table: bool = False) -> str:
    """An inline code span that holds any text: fenced with more backticks than it contains; in a table cell a `|`
    is escaped, which GitHub's tables need even inside code."""
    body = " ".join(str(value).splitlines())
    fence = "`" * (max((len(run) for run in re.findall(r"`+", body)), default=0) + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    if in_table:
        body = body.replace("|", "\\|")
    return f"{fence}{pad}{body}{pad}{fence}"


def verdict_word(run: Results) -> str:
    """PASS, FAIL, or INCOMPLETE and how the run ended: an unfinished run is never described as passed; a run its
    machine stopped says ENVIRONMENT, the pattern and the message."""
    if run.environment_failure:
        return environment_headline(run.environment_failure)[:300]
    return run_verdict(bool(run.finished), run.ended, bool(run.failing()))


def environment_line(environment: dict[str, str]) -> str:
    """Device, chip, driver, torch, Triton and the kernel's commit (or why it has none), as far as recorded."""
    parts = [f"{key}: {code(environment[key])}" for key in ENVIRONMENT_KEYS if environment.get(key)]
    return "Environment: " + (" · ".join(parts) if parts else "not recorded")


def environment_failure_lines(run: Results) -> list[str]:
    """Which environment pattern stopped the run, and its message: nothing was judged, not the kernel's failure."""
    failure = run.environment_failure
    if not failure:
        return []
    return ["", f"**Environment failure** {code(failure.get('name', '?'))} ({text(failure.get('kind', ''))}, "
                f"{text(failure.get('where', ''))}): {code(str(failure.get('message', ''))[:300])}", "",
            "The machine stopped the run: nothing was judged, and it is not the kernel's failure."]


def usage_error_lines(run: Results) -> list[str]:
    """Why a run ended as a usage error before its tests ran (a bad option, a --kernel the harness cannot use)."""
    if not run.usage_error:
        return []
    return ["", f"**Usage error:** {code(run.usage_error[:300])}", "",
            "The run stopped before any test ran: nothing was judged. Fix the command and run it again."]


def _item(number: int, d: dict) -> str:
    """One diagnosis item in the HTML page's order (reports.tables._item): category, name, how many tests and their
    scope, evidence, the facts, then its first tests."""
    cases, more = item_cases(d, SHOWN_DIAGNOSIS_CASES)
    found = facts(d)
    tests = f"; tests: {', '.join(map(code, cases))}" + (f" {text(more)}" if more else "") if cases else ""
    return (f"{number}. \\[{text(d.get('category', ''))}\\] {text(d.get('name', ''))} ({text(item_count(d))}): "
            f"{text(d.get('evidence', ''))}" + (f"; {text('; '.join(found))}" if found else "") + tests)


def _diagnosis(run: Results) -> list[str]:
    items = list(run.diagnosis)
    if not items:
        return []
    partial = " (partial: the run stopped early; read from the tests that ran)" if any(
        d.get("partial") for d in items) else ""
    lines = ["", f"**Diagnosis** (likely bug classes, strongest first){partial}:", ""]
    lines += [_item(number, d) for number, d in enumerate(items[:SHOWN_DIAGNOSES], 1)]
    if len(items) > SHOWN_DIAGNOSES:
        lines.append(f"{SHOWN_DIAGNOSES + 1}. … {len(items) - SHOWN_DIAGNOSES} more in the HTML report")
    return lines


def _failures(run: Results) -> list[str]:
    failed = run.failing()
    if not failed:
        return []
    lines = ["", f"**Failed tests ({len(failed)})**" + (f", first {SHOWN_FAILURES}:" if len(failed) > SHOWN_FAILURES
                                                          else ":"), "",
             "| test | verdict | first wrong row or cause |", "|---|---|---|"]
    for r in failed[:SHOWN_FAILURES]:
        label = f", {flaky.describe(r)}" if r.flaky else ""
        lines.append(f"| {code(r.id, in_table=True)} | {text(r.verdict.replace('_', ' ') + label)} | {text(why(r))} |")
    if len(failed) > SHOWN_FAILURES:
        lines += ["", f"… and {len(failed) - SHOWN_FAILURES} more in the HTML report."]
    return lines


def not_run_lines(run: Results) -> list[str]:
    """Every group of tests not run, why, and the command that runs it: part of the head, so never cut."""
    found, legacy = run.not_run_groups()
    items = not_run.lines(found, legacy, text=text, code=code)
    if not items:
        return []
    count = sum(1 for r in run.records if r.verdict == NOT_RUN)
    return ["", f"**Not run: {count} test(s)**, in {len(items)} group(s); this verdict does not cover them:", ""] + [
        f"- {item}" for item in items]


def run_parts(run: Results, *, html: str | None = None, title: str = "nan-harness"
              ) -> tuple[list[str], list[str], list[str]]:
    """A run's summary as (head, body, tail) lines: verdict and tally; diagnosis, failures and gaps; environment
    and the way to the HTML. Callers that add lines of their own (the nightly) fit them all with `fit`."""
    what = run.identity()
    kernel, backend = code(what["kernel"]), text(what["backend"])
    head = [f"### {text(title)}: {text(verdict_word(run))}", "",
            f"Kernel {kernel} on {backend}: **{len(run.records)} tests**: "
            f"{text(verdict_tally(run.records) or 'no tests')}"]
    head += environment_failure_lines(run) + usage_error_lines(run) + not_run_lines(run)
    tail = ["", environment_line(run.environment)] + (["", f"HTML report: {code(html)}"] if html else [])
    return head, _diagnosis(run) + _failures(run), tail


def run_summary(run: Results, *, html: str | None = None, title: str = "nan-harness") -> str:
    """The whole summary of one run (or a merged night): at most MAX_LINES lines, the environment and the way to
    the HTML always kept."""
    return fit(*run_parts(run, html=html, title=title))


def fit(head: list[str], body: list[str], tail: list[str]) -> str:
    """Head, body and tail in at most MAX_LINES lines: only the body is cut, and says so."""
    room = MAX_LINES - len(head) - len(tail)
    if len(body) > room:
        body = body[: room - 1] + ["… (cut: the rest is in the HTML report)"]
    return "\n".join(head + body + tail) + "\n"


def write(path: Path, markdown: str) -> None:
    """The summary file, whole or not at all."""
    write_text_atomic(path, markdown)


def append_step_summary(markdown: str, environ: dict[str, str] | None = None) -> Path | None:
    """Append to the CI runner's job summary when it names one; the path appended to, else None."""
    target = (environ if environ is not None else os.environ).get(STEP_SUMMARY_VAR)
    if not target:
        return None
    path = Path(target)
    with path.open("a", encoding="utf-8") as f:
        f.write(markdown if markdown.endswith("\n") else markdown + "\n")
    return path
