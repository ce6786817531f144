"""Failed tests rerun before the run ends, in fresh processes: flaky or deterministic, in every output.

On the controller, first in pytest_sessionfinish (a wrapper, so before reports.plugin writes results.json and before
the JUnit and HTML writers): the failed tests the bounds allow (reports.flaky.plan) are rerun `--nan-reruns` times,
each round one child pytest run of their node ids (harness.reruns), within `--nan-rerun-budget-s` seconds for all
rounds. Each failed test's record gets its label and reruns (results.json, HTML, Markdown, JUnit properties
`nan_flaky`, `nan_reruns`, the terminal). Outcomes, verdicts and the exit status stay what the run found: a rerun
never turns a failure into a pass. An interrupted run (Ctrl-C, SIGTERM) reruns nothing; an interrupt during the
reruns stops them and the run ends with what it had.
"""
from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from harness import reruns as children
from harness.activation import GROUP, active, in_process, is_worker
from harness.options import Numeric, OptionError
from reports import flaky, results, run_state
from reports.collector import ResultCollector
from verdict.record import TestRecord

RERUNS = Numeric("--nan-reruns", 2, 0, 10, "N",
                 "rerun each failed test N times in a fresh process before the run ends, labelling it deterministic "
                 "or flaky (it stays a failure); 0 turns reruns off. Default: 2")
PER_FAMILY = Numeric("--nan-rerun-per-family", 3, 1, 100_000, "K",
                     "rerun at most K failed tests of each case family (or test function); the rest are labelled "
                     "'not rerun'. Default: 3")
BUDGET = Numeric("--nan-rerun-budget-s", 180, 1, 86_400, "S",
                 "seconds all reruns together may take; what the cap leaves out is labelled 'not rerun'. Default: 180")
_OPTIONS: list[object] = []  # the nan-harness option group's options, forwarded to the reruns' child runs


def round_records(folder: Path) -> dict[str, TestRecord]:
    """What a rerun round's child judged, by node id, read through the validated reader (none when it wrote no
    file, or one that cannot be read: its tests are then labelled with why)."""
    try:
        return {r.nodeid: r for r in results.load(folder / "results.json").records}
    except results.ResultsError:
        return {}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup(GROUP)
    for spec in (RERUNS, PER_FAMILY, BUDGET):
        group.addoption(spec.flag, default=spec.default, metavar=spec.metavar, help=spec.help)
    group.addoption("--nan-known-flaky", action="append", default=[], metavar="FILE",
                    help="TOML file of [[flaky]] entries (id: a node id, * matching any text; reason; link): a "
                         "failure it matches is labelled known flaky (still a failure) and not rerun; repeatable")
    _OPTIONS[:] = [group]


def pytest_configure(config: pytest.Config) -> None:
    if config.option.help or config.option.version or config.option.collectonly or not active(config):
        return
    try:
        for spec in (RERUNS, PER_FAMILY, BUDGET):
            setattr(config.option, spec.dest, spec.parse(getattr(config.option, spec.dest, spec.default)))
        known = tuple(entry for source in config.getoption("--nan-known-flaky")
                      for entry in flaky.load_known(Path(config.invocation_params.dir, source)))
    except (OptionError, flaky.KnownFlakyError) as exc:
        raise pytest.UsageError(str(exc)) from exc
    if not is_worker(config):
        config.pluginmanager.register(Reruns(config, known), "nan-reruns")


class Reruns:
    """The controller's reruns and labels."""

    def __init__(self, config: pytest.Config, known: tuple[flaky.KnownFlaky, ...]) -> None:
        self.config = config
        self.known = known

    @pytest.hookimpl(wrapper=True)
    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> object:
        collector = run_state.collector_of(self.config)
        if collector is not None:
            try:
                self.label(collector, int(exitstatus))
            except (Exception, KeyboardInterrupt) as exc:  # a broken or interrupted rerun must not cost the reports
                why = ("the run was interrupted during the reruns" if isinstance(exc, KeyboardInterrupt)
                       else f"the reruns failed ({type(exc).__name__}: {str(exc)[:200]})")
                self._say(f"nan-harness: {why}")
                for r in collector.results():
                    if r.failed and "::" in r.nodeid and r.nodeid not in collector.flaky:
                        collector.flaky[r.nodeid] = (f"{flaky.NOT_RERUN}: {why}", ())
            if any(r.flaky for r in collector.results()):
                self._junit(collector)
        return (yield)

    def label(self, collector: ResultCollector, exitstatus: int) -> None:
        failed = [r for r in collector.results() if r.failed and "::" in r.nodeid]
        if not failed:
            return
        count = self.config.getoption("--nan-reruns")
        stop = None
        state = run_state.state_of(self.config)
        if (state is not None and state.interrupted) or exitstatus == int(pytest.ExitCode.INTERRUPTED):
            stop = "the run was interrupted"
        elif exitstatus != int(pytest.ExitCode.TESTS_FAILED):
            stop = f"the run ended with exit status {exitstatus}"
        elif self.config.getoption("maxfail", 0):
            stop = "the run stops at its first failures (-x, --maxfail)"
        elif in_process(self.config) or count == 0:
            stop = "reruns off"  # (--nan-reruns 0, --nan-in-process): only the known-flaky list labels
        planned = flaky.plan(failed, known=self.known, per_family=self.config.getoption("--nan-rerun-per-family"),
                             stop=stop)
        if stop == "reruns off":
            planned = flaky.Plan((), {n: label for n, label in planned.labels.items()
                                      if flaky.kind(label) == flaky.KNOWN_FLAKY})
        found = self.rerun(planned.rerun, count) if planned.rerun else {}
        for nodeid, label in planned.labels.items():
            collector.flaky[nodeid] = (label, ())
        for nodeid, (label, runs) in found.items():
            collector.flaky[nodeid] = (label, runs)

    def rerun(self, nodeids: tuple[str, ...], count: int) -> dict[str, tuple[str, tuple[dict[str, Any], ...]]]:
        """Up to `count` rounds of the node ids in fresh child runs, within the budget; each id's label and reruns."""
        budget = self.config.getoption("--nan-rerun-budget-s")
        deadline = time.monotonic() + budget
        runs: dict[str, list[dict[str, Any]]] = {n: [] for n in nodeids}
        missing = {n: "no rerun reported it" for n in nodeids}
        base = Path(tempfile.mkdtemp(prefix="nan-reruns-"))
        try:
            self._rounds(nodeids, count, base, deadline, runs, missing)
        finally:
            if not any("reported nothing" in why for n, why in missing.items() if not runs[n]):
                shutil.rmtree(base, ignore_errors=True)  # else kept: the labels name it
        return {n: (flaky.label_of(runs[n], missing[n]), tuple(runs[n])) for n in nodeids}

    def _rounds(self, nodeids: tuple[str, ...], count: int, base: Path, deadline: float,
                runs: dict[str, list[dict[str, Any]]], missing: dict[str, str]) -> None:
        """The rounds, each a fresh child run of the node ids: their reruns into `runs`, why not into `missing`."""
        budget = self.config.getoption("--nan-rerun-budget-s")
        spent = f"the rerun time budget ({budget} s, --nan-rerun-budget-s) was spent"
        for number in range(1, count + 1):
            if deadline - time.monotonic() < 1:
                missing.update(dict.fromkeys(nodeids, spent))
                break
            self._say(f"nan-harness: rerunning {len(nodeids)} failed test(s) in a fresh process "
                      f"(round {number} of {count})")
            argv = children.child_argv(self.config, nodeids, base / f"round-{number}", _OPTIONS[0].options
                                       if _OPTIONS else (), max_crashes=len(nodeids) + 1)
            try:
                done = children.run_round(argv, self.config.invocation_params.dir, base / f"round-{number}", deadline)
            except KeyboardInterrupt:
                for n in nodeids:
                    missing[n] = "the run was interrupted during the reruns"
                self._say("nan-harness: interrupted: reruns stopped")
                break
            records = round_records(base / f"round-{number}")
            for n in nodeids:
                got = records.get(n)
                if got is not None and got.outcome not in ("pending", "skipped"):
                    runs[n].append({"outcome": got.outcome, "verdict": got.verdict, "seconds": round(got.duration, 3),
                                    "message": got.message.splitlines()[0][:300] if got.message else ""})
                elif done.stopped:
                    missing[n] = spent
                elif got is not None:
                    first = got.message.splitlines()[0][:200] if got.message else ""
                    missing[n] = f"its rerun did not run it ({got.outcome}: {first})"
                else:
                    missing[n] = f"its rerun reported nothing for it (child exit {done.returncode}; {base})"

    def _junit(self, collector: ResultCollector) -> None:
        """The labels as JUnit properties `nan_flaky` and `nan_reruns` of each failed test's testcase (pytest's
        writer has each testcase's element ready; it writes the file after this hook)."""
        try:
            from _pytest.junitxml import mangle_test_address, xml_key
        except ImportError:
            return
        xml = self.config.stash.get(xml_key, None)
        if xml is None:
            return
        prefix = f"{xml.prefix}." if getattr(xml, "prefix", None) else ""
        wanted = {}
        for nodeid, (label, runs) in collector.flaky.items():
            names = mangle_test_address(nodeid)
            wanted[(prefix + ".".join(names[:-1]), names[-1])] = (label, runs)
        for reporter in getattr(xml, "node_reporters_ordered", ()):
            element = reporter.to_xml()
            found = wanted.get((element.get("classname"), element.get("name")))
            if found is None or element.find("properties/property[@name='nan_flaky']") is not None:
                continue
            properties = element.find("properties")
            if properties is None:
                properties = ET.Element("properties")
                element.insert(0, properties)
            properties.append(ET.Element("property", name="nan_flaky", value=found[0]))
            properties.append(ET.Element("property", name="nan_reruns", value=json.dumps(list(found[1]))))

    def _say(self, line: str) -> None:
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.ensure_newline()  # after the progress dots
            reporter.write_line(line)
