"""A run's report files, replaced by "not finished" versions the moment the run starts.

Whatever ends the run early (a usage error, Ctrl-C, a kill, a crash of the process), the paths it was asked to
write never keep an earlier run's results.json, HTML or JUnit: a gate reading them sees a run that did not finish
(results.json `finished: false`, a JUnit error, an HTML page that says so), never yesterday's green.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any
from xml.sax.saxutils import quoteattr

from reports import results
from reports.markup import esc

HTML = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>NaN-count precision: {title}</title></head>
<body><h1>NaN-count precision: {title}</h1><p>This run started at {started} and has not written its report:
{how}. See its terminal output.</p></body></html>
"""
RUNNING = "it is still running, or it ended before the end of the session (usage error, interrupt, killed)"
JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="nan-harness" errors="1" failures="0" skipped="0" tests="1">
<testcase classname="nan-harness" name="run_not_finished"><error message={message}/></testcase>
</testsuite></testsuites>
"""


def not_finished_doc(started: str, run_id: str | None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """results.json of a run that has started and not finished."""
    return results.document([], {}, None, collected=0, finished=False, ended=f"not finished (started {started})",
                            extra={"run_id": run_id, "started": started, **(extra or {})})


def write(paths: dict[str, Path | None], started: str, run_id: str | None,
          extra: dict[str, Any] | None = None) -> list[str]:
    """Replace each report path given ("json", "html", "junit", "markdown") by its placeholder; returns what could not be
    written, as 'path: why' (a folder, an unwritable place), for the caller to refuse the run with."""
    texts = {
        "json": lambda: results.dumps(not_finished_doc(started, run_id, extra)),
        "html": lambda: html_page(started),
        "junit": lambda: JUNIT.format(message=quoteattr(f"the run started at {started} has not finished")),
        "markdown": lambda: markdown_page(started),
    }
    problems = []
    for kind, path in paths.items():
        if path is None:
            continue
        if path.is_dir():
            problems.append(f"{path}: is a folder; give a file path")
            continue
        try:
            results.write_text_atomic(path, texts[kind]())
        except OSError as exc:
            problems.append(f"{path}: cannot be written: {exc.strerror or exc}")
    return problems


def html_page(started: str, interrupted: bool = False) -> str:
    """The placeholder page: not finished yet, or INCOMPLETE (interrupted) before its session started."""
    if interrupted:
        return HTML.format(title="INCOMPLETE (interrupted)", started=esc(started),
                           how="it was interrupted (Ctrl-C or SIGTERM) before its tests started")
    return HTML.format(title="run not finished", started=esc(started), how=RUNNING)


def markdown_page(started: str, interrupted: bool = False) -> str:
    """The Markdown summary's placeholder: not finished yet, or INCOMPLETE (interrupted) before its tests started."""
    if interrupted:
        return (f"### nan-harness: INCOMPLETE (interrupted)\n\nThe run started at {started} was interrupted "
                "(Ctrl-C or SIGTERM) before its tests started.\n")
    return f"### nan-harness: run not finished\n\nThe run started at {started} has not written its summary: {RUNNING}.\n"


def mark_junit_unfinished(path: Path, how: str) -> None:
    """Add an errored testcase to a JUnit file written by a run that did not finish, so a CI reading only JUnit
    never sees the tests that happened to run as the whole, green story."""
    import xml.etree.ElementTree as ET

    try:
        tree = ET.parse(path)
    except (OSError, ET.ParseError):
        return
    root = tree.getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    if suite is None:
        return
    case = ET.SubElement(suite, "testcase", classname="nan-harness", name="run_not_finished")
    ET.SubElement(case, "error", message=f"the run did not finish: {how}")
    for key in ("errors", "tests"):
        suite.set(key, str(int(suite.get(key, "0") or 0) + 1))
    results.write_text_atomic(path, ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n")
