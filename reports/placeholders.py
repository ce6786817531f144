"""A run's report files, replaced by "not finished" versions the moment the run starts.

Whatever ends the run early (a usage error, Ctrl-C, a kill, a crash of the process), the paths it was asked to
write never keep an earlier run's results.json, HTML or JUnit: a gate reading them sees a run that did not finish
(results.json `finished: false`, a JUnit error, an HTML page that says so), never yesterday's green. An ending the
process sees before its tests ran (a usage error, an interrupt) rewrites them with how and why (`ended_early`); so
does a run its machine stopped (harness.environment_failures: `environment_ending`), so no reader takes it for the
kernel's failure, a pass or an earlier run's result.
"""
from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET
from xml.sax.saxutils import quoteattr

import pytest

from reports import markdown, results, summary
from reports.markup import esc
from reports.summary_model import of_results
from reports.text import environment_headline
from verdict.record import ENVIRONMENT

HTML = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>NaN-count precision: {title}</title></head>
<body><h1>NaN-count precision: {title}</h1>{body}</body></html>
"""
NOT_WRITTEN = """<p>This run started at {started} and has not written its report:
{how}. See its terminal output.</p>"""
RUNNING = "it is still running, or it ended before the end of the session (usage error, interrupt, killed)"
JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="nan-harness" errors="1" failures="0" skipped="0" tests="1">
<testcase classname="nan-harness" name="{name}"><error message={message}/></testcase>
</testsuite></testsuites>
"""


def _junit(message: str, name: str = "run_not_finished") -> str:
    return JUNIT.format(name=name, message=quoteattr(message))


def _page(title: str, started: str, how: str) -> str:
    return HTML.format(title=title, body=NOT_WRITTEN.format(started=esc(started), how=how))


def _write_each(paths: Mapping[str, Path | None], doc: dict[str, Any], junit: str) -> str:
    """Each report path given (not a folder) gets its text, the pages the document's summary model; the Markdown."""
    model = of_results(results.Results.from_doc(doc))
    texts = {"json": results.dumps(doc), "junit": junit, "markdown": markdown.fit(*markdown.parts(model)),
             "html": HTML.format(title=esc(model.verdict), body=summary.render([], (), model))}
    for kind, path in paths.items():
        if path is not None and not path.is_dir():
            results.write_text_atomic(path, texts[kind])
    return texts["markdown"]


def not_finished_doc(started: str, run_id: str | None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """results.json of a run that has started and not finished."""
    return results.document([], {}, None, collected=0, finished=False, ended=f"not finished (started {started})",
                            extra={"run_id": run_id, "started": started, **(extra or {})})


def write(paths: dict[str, Path | None], started: str, run_id: str | None,
          extra: dict[str, Any] | None = None) -> list[str]:
    """Replace each report path given ("json", "html", "junit", "markdown") by its placeholder; returns what could not
    be written, as 'path: why' (a folder, an unwritable place), for the caller to refuse the run with."""
    texts = {
        "json": lambda: results.dumps(not_finished_doc(started, run_id, extra)),
        "html": lambda: _page("run not finished", started, RUNNING),
        "junit": lambda: _junit(f"the run started at {started} has not finished"),
        "markdown": lambda: ("### nan-harness: run not finished\n\n"
                             f"The run started at {started} has not written its summary: {RUNNING}.\n"),
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


def ended_early(paths: dict[str, Path | None], started: str, run_id: str | None, error: BaseException | None,
                status: int, interrupted: bool, words: Mapping[int, str], *, kernel: str | None = None) -> str:
    """A run that ended before its tests ran (Ctrl-C or SIGTERM, a usage error such as an unknown option or a
    --kernel without get_num_nans, an internal error): every report says how and why, none keeps the "still
    running" placeholder. Returns the Markdown summary ('' when nothing tells how it ended: the placeholders stay)."""
    if interrupted or isinstance(error, KeyboardInterrupt):
        status = int(pytest.ExitCode.INTERRUPTED)
    elif isinstance(error, pytest.UsageError):
        status = int(pytest.ExitCode.USAGE_ERROR)
    if status == 0:
        return ""
    usage = " ".join(str(a) for a in error.args) if isinstance(error, pytest.UsageError) and not interrupted else None
    how = "interrupted" if status == pytest.ExitCode.INTERRUPTED else words.get(status, f"exit status {status}")
    doc = {**not_finished_doc(started, run_id, {"kernel": kernel, "usage_error": usage}), "ended": how,
           "exitstatus": status}
    said = f"the run started at {started} ended ({how}) before any test ran" + (f": {usage}" if usage else "")
    return _write_each(paths, doc, _junit(said))


def environment_ending(paths: dict[str, Path | None], failure: dict[str, Any], exitstatus: int, *, started: str,
                       run_id: str | None, kernel: str | None = None, backend: str | None = None) -> str:
    """A run its machine stopped before its tests ran (harness.environment_failures): results.json says `ended:
    "environment"` with the matched pattern and message, not finished and no cases, and every other report says
    the same. Returns the Markdown summary (for the CI page)."""
    doc = results.document([], {}, exitstatus, collected=0, finished=False, ended=ENVIRONMENT,
                           extra={"run_id": run_id, "started": started, "kernel": kernel, "backend": backend,
                                  "environment_failure": failure})
    return _write_each(paths, doc, _junit(environment_headline(failure), "environment_failure"))


def mark_junit_unfinished(path: Path, how: str) -> None:
    """Add an errored testcase to a JUnit file written by a run that did not finish, so a CI reading only JUnit
    never sees the tests that happened to run as the whole, green story."""
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
