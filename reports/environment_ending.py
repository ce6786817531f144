"""The reports of a run the machine stopped before its tests ran (harness.environment_failures): results.json says
`ended: "environment"` with the matched pattern and message, and the HTML page, the Markdown summary and the JUnit
file say the same, so no reader takes it for the kernel's failure, a pass or an earlier run's result."""
from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from reports import markdown, results
from reports.markup import esc
from reports.text import environment_headline
from verdict.record import ENVIRONMENT

PAGE = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>NaN-count precision: {title}</title></head>
<body><h1>NaN-count precision: {title}</h1><p>The run started at {started} was stopped by its environment before
any test ran: pattern <code>{name}</code> ({kind}, {where}) matched</p><pre>{message}</pre><p>Nothing was judged: this
is not the kernel's failure, and a gate must not read it as a pass.</p></body></html>
"""
JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="nan-harness" errors="1" failures="0" skipped="0" tests="1">
<testcase classname="nan-harness" name="environment_failure"><error message={message}/></testcase>
</testsuite></testsuites>
"""


headline = environment_headline  # the verdict line of every page of such a run


def document(failure: dict[str, Any], exitstatus: int, *, started: str | None, run_id: str | None,
             environment: dict[str, str] | None = None, kernel: str | None = None,
             backend: str | None = None) -> dict[str, Any]:
    """results.json of such a run: not finished, no cases, the failure beside how it ended."""
    return results.document([], environment or {}, exitstatus, collected=0, finished=False, ended=ENVIRONMENT,
                            extra={"run_id": run_id, "started": started, "kernel": kernel, "backend": backend,
                                   "environment_failure": failure})


def write(paths: dict[str, Path | None], doc: dict[str, Any]) -> str:
    """Every report path given gets its environment version; returns the Markdown summary (for the CI page)."""
    failure = doc["environment_failure"]
    summary = markdown.run_summary(results.Results.from_doc(doc))
    texts = {
        "json": results.dumps(doc),
        "html": PAGE.format(title=esc(headline(failure)), started=esc(str(doc.get("started"))),
                            name=esc(str(failure.get("name"))), kind=esc(str(failure.get("kind", ""))),
                            where=esc(str(failure.get("where", ""))), message=esc(str(failure.get("message", "")))),
        "junit": JUNIT.format(message=quoteattr(headline(failure))),
        "markdown": summary,
    }
    for kind, path in paths.items():
        if path is not None and not path.is_dir():
            results.write_text_atomic(path, texts[kind])
    return summary
