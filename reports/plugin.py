"""Report and gate options (--nan-json, --nan-waivers), result collection, and results.json on the controller.

A run's reports never pretend: at start-up the previous results.json is replaced by one that says the run has
not finished (a killed run leaves that behind, which compare refuses; a usage error, Ctrl-C or SIGTERM before the
tests rewrites it with how the run ended), and the final one records how many tests were collected, how many ran,
how the session ended and every group of tests not run.
"""
from __future__ import annotations

import datetime
import hashlib
import os
import signal
import sys
import uuid
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

import pytest

from reports import markdown, not_run, placeholders, results, run_state, summary_model
from reports.collector import ResultCollector
from reports.diagnosis import diagnose
from reports.diagnosis_base import Diagnosis
from reports.run_state import RunEnd
from reports.text import environment_headline
from reports.waivers import WaiverError, WaiverPlugin, load_waivers
from verdict.record import TestRecord
from harness import processes
from harness.activation import active, decide, is_worker
from harness.environment_failures import ENVIRONMENT_EXIT, FAILURE_KEY
from harness.run import RUN_INFO_KEY

pytest_plugins = ["reports.reruns"]  # failed tests rerun before the run ends: flaky or deterministic

DEFAULT_JSON = "out/results.json"
DEFAULT_MARKDOWN = "summary.md"  # beside results.json
EXIT_WORDS = {0: "passed", 1: "tests failed", 2: "interrupted", 3: "internal error", 4: "usage error",
              5: "no tests collected", ENVIRONMENT_EXIT: "environment"}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("nan-harness")
    group.addoption("--nan-json", default=DEFAULT_JSON, metavar="PATH",
                    help=f"machine-readable results, one record per test (default {DEFAULT_JSON}; '' turns it off)")
    group.addoption("--nan-markdown", default=None, metavar="PATH",
                    help="a Markdown summary for a CI job page (default: summary.md beside --nan-json; '' turns it "
                         f"off); also appended to ${markdown.STEP_SUMMARY_VAR} when the runner sets it")
    group.addoption("--nan-run-id", default=None, metavar="ID",
                    help="an id for this run, written into results.json from the start (default: a fresh random "
                         "one); a gate that passes its own id judges only files this run wrote")
    group.addoption("--nan-waivers", default=None, metavar="PATH",
                    help="TOML waiver file: [[waiver]] entries with id (node id), reason, link; waived tests "
                         "become strict xfails")


def is_controller(config: pytest.Config) -> bool:
    """True in a serial run and in xdist's controller; False in xdist workers."""
    return not is_worker(config)


def shard_of(config: pytest.Config) -> dict | None:
    """This run's place among pytest-split shards (--splits N --group i), with what shards of one suite share:
    the splitting algorithm, the durations file's digest and the selection. None when the run is not split."""
    splits, group = config.getoption("splits", None), config.getoption("group", None)
    if not splits or not group:
        return None
    durations = config.getoption("durations_path", None)
    try:
        digest = hashlib.sha256(Path(durations).read_bytes()).hexdigest() if durations else None
    except OSError:
        digest = None
    return {"group": int(group), "splits": int(splits), "algorithm": config.getoption("splitting_algorithm", None),
            "durations_sha256": digest,
            "selection": {"args": [str(a) for a in config.args], "markexpr": config.option.markexpr or "",
                          "keyword": config.option.keyword or ""}}


def _report_paths(config: pytest.Config, namespace: object) -> dict[str, Path | None]:
    """The report files this run will write: results.json, pytest-html's page, the JUnit file and the Markdown
    summary (beside results.json unless named)."""
    here = config.invocation_params.dir
    values = {"json": getattr(namespace, "nan_json", DEFAULT_JSON), "html": getattr(namespace, "htmlpath", None),
              "junit": getattr(namespace, "xmlpath", None)}
    paths = {kind: Path(here, value) if value else None for kind, value in values.items()}
    named = getattr(namespace, "nan_markdown", None)
    if named is None:
        paths["markdown"] = paths["json"].with_name(DEFAULT_MARKDOWN) if paths["json"] else None
    else:
        paths["markdown"] = Path(here, named) if named else None
    return paths


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """As early as a plugin can act (before pytest parses the full command line, where an unknown option ends the
    run): the report paths named on the command line stop holding an earlier run's files."""
    namespace = early_config.known_args_namespace
    if (not decide(early_config, parser, args) or os.environ.get("PYTEST_XDIST_WORKER") or namespace.help
            or namespace.version or namespace.collectonly):
        return
    state = run_state.start(early_config, getattr(namespace, "nan_run_id", None) or uuid.uuid4().hex, _now())
    placeholders.write(_report_paths(early_config, namespace), state.started, state.run_id)
    early_config.add_cleanup(lambda: _write_early_ending(early_config, early_config.known_args_namespace, False))
    _handle_sigterm(state)


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """Before anything else can fail: the reports say "not finished" (again, now that every option is known)."""
    config.addinivalue_line("markers",
                            "nan_reports: tests of the reports and gates (HTML, results.json, compare, waivers)")
    if config.option.help or config.option.version or config.option.collectonly or not active(config):
        return
    if is_controller(config):
        state = run_state.start(config, config.getoption("--nan-run-id") or uuid.uuid4().hex, _now())
        state.ending = "configured"  # unconfigure writes how the run ended
        shard = shard_of(config)
        problems = placeholders.write(_report_paths(config, config.option), state.started, state.run_id,
                                      {"shard": shard} if shard else None)
        if problems:
            raise pytest.UsageError("cannot write the reports: " + "; ".join(problems))
        _handle_sigterm(state)
    waivers = {}
    source = config.getoption("--nan-waivers")
    if source:
        waiver_path = Path(config.invocation_params.dir, source)
        try:
            waivers = load_waivers(waiver_path)
        except WaiverError as exc:
            raise pytest.UsageError(str(exc)) from exc
        config.pluginmanager.register(WaiverPlugin(waivers, waiver_path), "nan-waivers")
    if not is_controller(config):
        return
    timeout = config.getoption("timeout", None) if config.pluginmanager.hasplugin("timeout") else None
    collector = ResultCollector({k: asdict(w) for k, w in waivers.items()}, float(timeout) if timeout else None)
    state.collector = collector
    config.pluginmanager.register(collector, "nan-results")


def _handle_sigterm(state: run_state.RunState) -> None:
    """SIGTERM ends the run like Ctrl-C from now on; the handler it replaces comes back at unconfigure."""
    previous = signal.signal(signal.SIGTERM, processes.raise_interrupt)  # the reports say it was interrupted
    if not state.sigterm_saved:
        state.sigterm_saved, state.previous_sigterm = True, previous


def ended(exitstatus: int, ran: int, collected: int, interrupted: bool = False) -> tuple[bool, str]:
    """Whether the session finished (every collected test reported, exit 0 or 1, no interrupt) and a word for how
    it ended; an unfinished run is never described as passed."""
    code = int(exitstatus)
    if interrupted or code == 2:
        return False, "interrupted"
    if code in (0, 1) and collected == 0:
        return False, "no tests collected"
    if code in (0, 1) and ran < collected:
        return False, f"stopped early: {ran} of {collected} tests ran"
    if code in (0, 1):
        return True, EXIT_WORDS[code]
    return False, EXIT_WORDS.get(code, f"exit status {code}")


def run_end(session: pytest.Session) -> RunEnd:
    """The session's ending, from pytest's exit status and the collected records (computed once per session)."""
    state = _controller_state(session.config)
    if state.end is None:
        records = state.collector.results()
        ran = sum(1 for r in records if r.outcome != "pending" and "::" in r.nodeid)
        exitstatus = int(getattr(session, "exitstatus", 0) or 0)
        finished, how = ended(exitstatus, ran, state.collector.collected, interrupted=bool(state.interrupted))
        state.end = RunEnd(finished, how, _final_status(exitstatus, finished, records), ran)
    return state.end


def run_diagnosis(session: pytest.Session) -> list[Diagnosis]:
    """The run's one diagnosis, computed once its ending is known: results.json, the HTML page, the Markdown and the
    terminal all show this value (partial when the run stopped early)."""
    state = _controller_state(session.config)
    if state.diagnosis is None:
        state.diagnosis = diagnose(state.collector.results(), environment=_environment(session.config, state),
                                   partial=not run_end(session).finished)
    return state.diagnosis


def run_summary(config: pytest.Config) -> summary_model.Summary:
    """The run's one summary model, built once its ending and diagnosis are known: every page renders this value."""
    state = _controller_state(config)
    if state.summary is None:
        assert state.end is not None and state.collector is not None
        records, info = state.collector.results(), config.stash.get(RUN_INFO_KEY, None)
        state.summary = summary_model.build(
            records, kernel=info.kernel_module if info else "?", backend=info.backend if info else "?",
            finished=state.end.finished, ended=state.end.how,
            not_run=not_run.groups(records, info.not_runnable if info else ()),  # the kernel's own gaps too
            diagnosis=[d.to_dict() for d in state.diagnosis or ()], environment=_environment(config, state))
    return state.summary


def _environment(config: pytest.Config, state: run_state.RunState) -> dict[str, str]:
    """The run's environment (harness.run.RunInfo) and its "Capturable" line when the graph-capture test ran."""
    info, found = config.stash.get(RUN_INFO_KEY, None), getattr(state.collector, "capturable", None)
    capturable = {"Capturable": "yes" if found.get("capturable") else f"no ({found.get('why', '')})"} if found else {}
    return {**(info.environment if info else {}), **capturable}


def _controller_state(config: pytest.Config) -> run_state.RunState:
    """The state of a controller that collects results (what run_end, run_diagnosis and run_summary read)."""
    state = run_state.state_of(config)
    assert state is not None and state.collector is not None, "no results collected in this process"
    return state


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    state = run_state.state_of(config)
    if not is_controller(config) or state is None or state.collector is None or config.option.collectonly:
        return
    end = run_end(session)
    session.exitstatus = end.exitstatus
    run_diagnosis(session)
    model = run_summary(config)  # results.json, summary.md, the HTML page and the terminal say its facts
    paths = _report_paths(config, config.option)
    path = paths["json"]
    if path is None and paths["markdown"] is None and not os.environ.get(markdown.STEP_SUMMARY_VAR):
        return
    collector, records = state.collector, state.collector.results()
    info = config.stash.get(RUN_INFO_KEY, None)
    shard = shard_of(config)
    extra = {"capturable": collector.capturable, "diagnosis": list(model.diagnosis),
             "kernel": info.kernel_module if info else None, "backend": info.backend if info else None,
             "coverage_gaps": list(info.coverage_gaps) if info else [],
             "not_run": [g.to_dict() for g in model.not_run],
             "started": state.started, "ran": end.ran, "run_id": state.run_id, **({"shard": shard} if shard else {})}
    doc = results.document(records, dict(model.environment), end.exitstatus, collected=collector.collected,
                           finished=end.finished, ended=end.how, extra=extra)
    summary = markdown.fit(*markdown.parts(model, html=_shown_path(config, paths["html"])))
    for target, text in ((path, results.dumps(doc)), (paths["markdown"], summary)):
        if target is not None:
            _write_or_say(session, target, lambda target=target, text=text: results.write_text_atomic(target, text))
    _write_or_say(session, os.environ.get(markdown.STEP_SUMMARY_VAR, ""),
                  lambda: markdown.append_step_summary(summary))


def _write_or_say(session: pytest.Session, target: object, write: Callable[[], object]) -> None:
    """Write one report; if it cannot be written, say so and end the run as an internal error, never lose the
    other reports (the HTML among them) because of it."""
    try:
        write()
    except OSError as exc:
        tr = session.config.pluginmanager.get_plugin("terminalreporter")
        if tr is not None:
            tr.write_line(f"nan-harness: could not write {target}: {exc}", red=True)
        session.exitstatus = pytest.ExitCode.INTERNAL_ERROR


def _shown_path(config: pytest.Config, path: Path | None) -> str | None:
    """A report's path as the reader of a job page can follow it: relative to where pytest ran, when inside it."""
    if path is None:
        return None
    try:
        return str(path.relative_to(config.invocation_params.dir))
    except ValueError:
        return str(path)


def _final_status(exitstatus: int, finished: bool, records: list[TestRecord]) -> int:
    """The exit status the run ends with: never 0 for a run that did not finish or holds a failing record; 0 for a
    finished run whose only failures were waived cases that crashed their worker."""
    failing = any(r.failed for r in records)
    if not finished:
        return int(pytest.ExitCode.INTERRUPTED) if exitstatus == 0 else exitstatus
    if failing:
        return int(pytest.ExitCode.TESTS_FAILED)
    return int(pytest.ExitCode.OK) if exitstatus == 1 and records else exitstatus


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    """After pytest's JUnit writer: an unfinished run's JUnit file gets an error saying so; a run that ended before
    its session ran tests (its environment, Ctrl-C or SIGTERM while configuring, a usage error) says so in every
    report."""
    state = run_state.state_of(config)
    end = state.end if state is not None else None
    if end is None and FAILURE_KEY in config.stash and is_controller(config) and state is not None:
        _write_environment_ending(config, state)
    elif end is None and is_controller(config) and state is not None:
        _write_early_ending(config, config.option)
    junit = _report_paths(config, config.option)["junit"]
    if end is not None and not end.finished and junit is not None and junit.is_file():
        placeholders.mark_junit_unfinished(junit, end.how)
    if is_controller(config):
        _print_verdict(config)
    if state is not None and state.sigterm_saved and state.previous_sigterm is not None:
        signal.signal(signal.SIGTERM, state.previous_sigterm)
    run_state.finish(config)


def _write_early_ending(config: pytest.Config, namespace: object, configured: bool = True) -> None:
    """A run that ended before its tests (placeholders.ended_early), once: pytest unconfigures a configured run, and
    cleans up one that never configured (an unknown option), while what stopped it is on its way out."""
    state = run_state.state_of(config)
    if state is None or state.ending != ("configured" if configured else ""):
        return
    state.ending = "ended early"
    status = int(getattr(config.pluginmanager.get_plugin("session"), "exitstatus", 0) or 0)
    summary = placeholders.ended_early(
        _report_paths(config, namespace), state.started, state.run_id, sys.exc_info()[1], status,
        bool(state.interrupted), EXIT_WORDS, kernel=getattr(namespace, "kernel", None))
    if summary:
        markdown.append_step_summary(summary)


def _write_environment_ending(config: pytest.Config, state: run_state.RunState) -> None:
    """The machine stopped the run before its session (harness.environment_failures): every report says so."""
    failure = config.stash[FAILURE_KEY].to_dict()
    markdown.append_step_summary(placeholders.environment_ending(
        _report_paths(config, config.option), failure, ENVIRONMENT_EXIT, started=state.started, run_id=state.run_id,
        backend=failure.get("backend"), kernel=config.getoption("--kernel", None)))
    terminalreporter = config.pluginmanager.get_plugin("terminalreporter")
    if terminalreporter is not None:
        terminalreporter.write_sep("=", f"nan-harness: {environment_headline(failure)}"[:400], yellow=True, bold=True)
        terminalreporter.write_line(f"not the kernel's failure: nothing was judged (exit {ENVIRONMENT_EXIT})")


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if run_state.collector_of(config) is None or config.option.collectonly:
        return
    paths = _report_paths(config, config.option)
    for kind, label in (("json", "results file"), ("markdown", "Markdown summary")):
        path = paths[kind]
        if path is not None and path.is_file():
            terminalreporter.write_sep("-", f"Generated {label}: {path}")


def _print_verdict(config: pytest.Config) -> None:
    """The run ends, in the terminal too, with its summary model (reports.summary_model.terminal), after pytest's."""
    state = run_state.state_of(config)
    terminalreporter = config.pluginmanager.get_plugin("terminalreporter")
    if state is None or state.end is None or state.collector is None or terminalreporter is None:
        return
    banner, *lines = summary_model.terminal(run_summary(config))
    passed = banner.endswith(": PASS")
    terminalreporter.write_sep("=", banner, red=not passed, green=passed, bold=True)
    for line in lines:
        terminalreporter.write_line(line)
