"""A run as Markdown for a CI job page (`--nan-markdown`, and `$GITHUB_STEP_SUMMARY` where a runner sets it).

What a reviewer needs before opening the HTML: the run's summary model (reports.summary_model: the verdict, the tally,
notes, what was not covered, the diagnosis, the failed tests with their first wrong row), then the environment and
where the HTML is. A run, merged shards and the nightly render the same model; a failing run stays under MAX_LINES
lines (the rest is in the HTML). Torch-free, like every gate reader.
"""
from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

from reports.not_run import lines as not_run_lines
from reports.results import Results
from reports.summary_model import Summary, of_results
from reports.text import facts, item_cases, item_count

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


def environment_line(environment: Mapping[str, str]) -> str:
    """Device, chip, driver, torch, Triton and the kernel's commit (or why it has none), as far as recorded."""
    parts = [f"{key}: {code(environment[key])}" for key in ENVIRONMENT_KEYS if environment.get(key)]
    return "Environment: " + (" · ".join(parts) if parts else "not recorded")


def _item(number: int, d: dict) -> str:
    """One diagnosis item in the HTML page's order (reports.tables._item): category, name, how many tests and their
    scope, evidence, the facts, then its first tests."""
    cases, more = item_cases(d, SHOWN_DIAGNOSIS_CASES)
    found = facts(d)
    tests = f"; tests: {', '.join(map(code, cases))}" + (f" {text(more)}" if more else "") if cases else ""
    return (f"{number}. \\[{text(d.get('category', ''))}\\] {text(d.get('name', ''))} ({text(item_count(d))}): "
            f"{text(d.get('evidence', ''))}" + (f"; {text('; '.join(found))}" if found else "") + tests)


def _diagnosis(m: Summary) -> list[str]:
    """The first SHOWN_DIAGNOSES items, strongest first; the HTML page has them all."""
    if not m.diagnosis:
        return []
    partial = " (partial: the run stopped early; read from the tests that ran)" if m.partial else ""
    lines = ["", f"**Diagnosis** (likely bug classes, strongest first){partial}:", ""]
    lines += [_item(number, d) for number, d in enumerate(m.diagnosis[:SHOWN_DIAGNOSES], 1)]
    if len(m.diagnosis) > SHOWN_DIAGNOSES:
        lines.append(f"{SHOWN_DIAGNOSES + 1}. … {len(m.diagnosis) - SHOWN_DIAGNOSES} more in the HTML report")
    return lines


def _failures(m: Summary) -> list[str]:
    """The failures by family or test function and rerun label, then the first ones: a job page stays short."""
    if not (failed := m.failures):
        return []
    by = ", ".join(f"{k} {n}" for k, n in m.failed_by)
    reruns = f"; rerun in a fresh process: {m.reruns} (still failures)" if m.reruns else ""
    first = f", first {SHOWN_FAILURES}" if len(failed) > SHOWN_FAILURES else ""
    lines = ["", f"**Failed tests ({len(failed)})** ({text(by + reruns)}){first}:", "",
             "| test | verdict | first wrong row or cause |", "|---|---|---|"]
    lines += [f"| {code(f.id, in_table=True)} | {text(', '.join(filter(None, (f.verdict, f.rerun))))} | {text(f.why)} |"
              for f in failed[:SHOWN_FAILURES]]
    if len(failed) > SHOWN_FAILURES:
        lines += ["", f"… and {len(failed) - SHOWN_FAILURES} more in the HTML report."]
    return lines


def _head(m: Summary, title: str) -> list[str]:
    """The verdict, tally, notes and every group not run with its command: never cut, a reviewer reads it first."""
    head = [f"### {text(title)}: {text(m.verdict)}", "",
            f"Kernel {code(m.kernel)} on {text(m.backend)}: **{m.tests} tests**: {text(m.tally or 'no tests')}"]
    for label, verbatim, words in m.notes:
        head += ["", f"**{text(label)}:** " + " ".join(filter(None, (verbatim and code(verbatim), text(words))))]
    items = not_run_lines(m.not_run, m.gaps, text, code)
    if items:
        head += ["", f"**Not run: {m.not_run_tests} test(s)**, in {len(items)} group(s); this verdict does not cover "
                     "them:", ""] + [f"- {item}" for item in items]
    return head


def parts(m: Summary, *, html: str | None = None, title: str = "nan-harness") -> tuple[list[str], list[str], list[str]]:
    """A summary model as (head, body, tail) lines: a caller with lines of its own (the nightly) `fit`s them all."""
    tail = ["", environment_line(m.environment)] + (["", f"HTML report: {code(html)}"] if html else [])
    return _head(m, title), _diagnosis(m) + _failures(m), tail


def run_summary(run: Results, *, html: str | None = None, title: str = "nan-harness") -> str:
    """The summary of one results.json (a run, merged shards, an early ending) in at most MAX_LINES lines."""
    return fit(*parts(of_results(run), html=html, title=title))


def fit(head: list[str], body: list[str], tail: list[str]) -> str:
    """Head, body and tail in at most MAX_LINES lines: only the body is cut, and says so."""
    room = MAX_LINES - len(head) - len(tail)
    if len(body) > room:
        body = body[: room - 1] + ["… (cut: the rest is in the HTML report)"]
    return "\n".join(head + body + tail) + "\n"


def append_step_summary(markdown: str, environ: dict[str, str] | None = None) -> Path | None:
    """Append to the CI runner's job summary when it names one; the path appended to, else None."""
    target = (environ if environ is not None else os.environ).get(STEP_SUMMARY_VAR)
    if not target:
        return None
    path = Path(target)
    with path.open("a", encoding="utf-8") as f:
        f.write(markdown if markdown.endswith("\n") else markdown + "\n")
    return path
