"""One summary model, three renderings (issue 59, item 3): the HTML page, summary.md and the terminal show the same
facts of one run in the same order, each rendered from the one model built from the run's data."""
from __future__ import annotations

import re
from html import unescape

import pytest

from cases import registry
from reports import markdown, summary, summary_model
from verdict.not_run import NotRun
from verdict.record import CaseParams, Check, TestRecord, WrongRow

pytestmark = pytest.mark.nan_reports

NODE = "tests/precision/test_families.py::test_case[{}-wrapper]"
GAP = NotRun("large batches", "each takes minutes on the CPU interpreter", ("tox -e cpu-batches",))
ITEMS = [{"category": "traversal", "name": "FIRST", "evidence": "E1", "cases": ["a"], "partial": True},
         {"category": "predicate", "name": "SECOND", "evidence": "E2", "cases": ["b"]}]


def _failed(case: str, family: str, label: str, rerun: str) -> TestRecord:
    params = CaseParams(family, case, "fp32", "prefix", (2, 128), "0.5", 42)
    check = Check(params, "wrapper", "wrong_counts", 128, 127, (), (WrongRow(1, 64, 63),))
    return TestRecord(NODE.format(case), "failed", "wrong_counts", params, checks=(check,), flaky=label,
                      reruns=({"outcome": rerun},))


def _run() -> tuple[summary_model.Summary, list[TestRecord]]:
    """One failing run: two failures rerun (one flaky), a pass, a group not run, two diagnosis items, capturable."""
    records = [_failed("fp32-prefix-2x128-nan0.5", "matrix", "flaky", "passed"),
               _failed("fp32-shape-2x128", "shapes", "deterministic", "failed"),
               TestRecord(NODE.format("fp32-prefix-4x128-nan0.5"), "passed", "pass"),
               TestRecord(NODE.format("fp32-batch-5000x128"), "skipped", "not_run", not_run=GAP)]
    model = summary_model.build(records, kernel="KERNEL", backend="cpu", finished=False, ended="interrupted",
                                diagnosis=ITEMS, environment={"Capturable": "yes", "Device": "cpu"})
    return model, records


def _facts(model: summary_model.Summary) -> list[str]:
    """The model's facts, in its order, as each rendering words them (once its markup is taken out)."""
    return [model.verdict, "KERNEL on cpu", f"4 tests: {model.tally}", "capturable in a device graph: yes",
            f"{GAP.group}: 1 test(s) not run", *GAP.commands,
            *(f"[{d['category']}] {d['name']} (1 test(s))" for d in ITEMS),
            f"rerun in a fresh process: {model.reruns} (still failures)", *(f.id for f in model.failures)]


def _renderings(model: summary_model.Summary, records: list[TestRecord]) -> dict[str, str]:
    """The HTML block, summary.md and the terminal's lines, as the text a reader sees."""
    page = summary.render(records, registry.load(), model)
    html = unescape(re.sub(r"<style>.*?</style>|<[^>]+>", " ", page, flags=re.S))
    md = re.sub(r"\\(.)|\*\*|`", r"\1", markdown.fit(*markdown.parts(model)))
    return {"html": re.sub(r" +", " ", html), "markdown": md, "terminal": "\n".join(summary_model.terminal(model))}


def _in_order(text: str, facts: list[str]) -> list[str]:
    """The facts missing from `text` or out of their order (each looked for after the one before it)."""
    missing, at = [], 0
    for fact in facts:
        found = text.find(fact, at)
        if found < 0:
            missing.append(fact)
        else:
            at = found + len(fact)
    return missing


def test_the_three_renderings_show_one_models_facts_in_one_order() -> None:
    model, records = _run()
    assert model.verdict == "INCOMPLETE (interrupted)" and model.tally == "2 wrong counts, 1 pass, 1 not run"
    assert [f.rerun for f in model.failures] == ["flaky (passed 1 of 1 rerun)", "deterministic (failed 1 of 1 rerun)"]
    facts = _facts(model)
    for name, text in _renderings(model, records).items():
        assert _in_order(text, facts) == [], (name, text)
        assert all(f.rerun in text for f in model.failures), (name, text)  # each failure's own label
        assert "partial" in text, (name, text)  # the diagnosis reads only the tests that ran
