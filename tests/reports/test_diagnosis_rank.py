"""Cause before symptom, broad before thin, and every fact an item holds on the page (issue 40, items 6 and 7).

An item whose evidence is a controlled experiment (the same cases pass with one thing changed) and whose checks
cover another item's leads it, whatever their weights: records are built as the harness writes them for the H200
runs that read the symptom first.
"""
from __future__ import annotations

from dataclasses import fields, replace

import pytest

from reports import diagnosis as dg
from reports.diagnosis import Diagnosis, diagnose
from reports.tables import diagnosis_block
from tests.reports.test_diagnosis import _row, case
from tests.reports.test_diagnosis_blocks import dropped, right, run, summary_md
from verdict.problem import STRAY_WRITE, Problem
from verdict.record import POISON, TestRecord, Unwritten

pytestmark = pytest.mark.nan_reports
SEMANTICS = "tests/precision/test_execution_semantics.py"
FAMILY_TEST = "tests/precision/test_families.py::test_case"
NEVER_WRITTEN = "the output: rows never written (the poison put there is still there)"


def _semantics(layout: str, case_id: str, shape: tuple[int, int], test: str, got: int | None) -> TestRecord:
    """A semantics check on the wrapper path whose rows read the poison (got None) or right, the output pre-poisoned
    (harness.prepoison: on a device the caching allocator hands the poisoned block back, so it is observable)."""
    rows = [_row(13_000, 13_000 if got is None else got)] * shape[0]
    record = case("semantics", case_id, shape, rows, layout=layout, nodeid=f"{SEMANTICS}::{test}")
    return record.with_(checks=tuple(replace(c, unwritten=Unwritten(True)) for c in record.checks))


def _side_stream_on_the_h200() -> list[TestRecord]:
    """tests.semantics.side_stream's run: under a non-default current stream the caller reads its output before the
    side stream's counts land (the poison is still there); on the legacy default stream CUDA orders them (pass);
    the graph test passes (not capturable: a property); every family case, read after a synchronize, passes."""
    stream = "test_counts_follow_the_callers_stream"
    records = [_semantics("stream", "stream-non-default-8x40000", (8, 40_000), f"{stream}[non-default]", POISON),
               _semantics("stream", "stream-default-8x40000", (8, 40_000), f"{stream}[default]", None),
               TestRecord(f"{SEMANTICS}::test_graph_capture_replays_new_counts", "passed", "pass")]
    for path in ("wrapper", "direct"):
        records += [case("special", "fp32-special-2x1024", (2, 1024), [_row(37, 37)] * 2, path),
                    case("matrix", "fp32-prefix-2x5000-nan0.5", (2, 5000), [_row(2500, 2500)] * 2, path)]
    return records


def test_a_side_stream_is_diagnosed_stream_order_first() -> None:
    """The H200 read "rows never written" first: the poison is the symptom, the broken order (right after a device-wide
    synchronize, wrong on the caller's stream) the cause, which explains every failure the symptom rests on."""
    found = diagnose(_side_stream_on_the_h200())
    assert found[0].category == "device" and found[0].name.startswith("stream order broken"), [d.name for d in found]
    assert NEVER_WRITTEN in found[0].absorbed and len(found) == 1, [(d.name, d.absorbed) for d in found]
    assert "synchronize pass" in found[0].control


def test_a_side_stream_that_races_the_family_cases_too_is_stream_order_first() -> None:
    """The H100 (issue 57): family cases read after a synchronize also held the poison now and then (the poison's
    fill on the caller's stream landing after the side stream's store), 9 of 10 flaky on rerun. Poison that comes and
    goes beside a broken stream order is that race, so the order leads and the symptom is absorbed."""
    records = _side_stream_on_the_h200()
    raced = [case("matrix", f"fp32-prefix-2x5000-nan0.{k}", (2, 5000), [_row(500 * k, POISON)] * 2, "wrapper")
             for k in range(1, 6)]
    found = diagnose(records + [r.with_(flaky="flaky") for r in raced])
    assert found[0].name.startswith("stream order broken"), [d.name for d in found]
    assert NEVER_WRITTEN in found[0].absorbed and len(found) == 1, [(d.name, d.absorbed) for d in found]
    assert "5 other check(s) left rows holding the poison only now and then" in found[0].evidence
    deterministic = [d.name for d in diagnose(records + [r.with_(flaky="deterministic") for r in raced])]
    assert NEVER_WRITTEN in deterministic, deterministic  # rows the kernel never writes, every time: its own item


def test_a_graph_replay_leads_the_poison_it_leaves() -> None:
    """The same relation for another control: a captured call that launched nothing replays a never-written output,
    while eager calls count right."""
    records = [r for r in _side_stream_on_the_h200() if "callers_stream" not in r.id]
    records.append(_semantics("graph", "graph-replay-16x152064", (16, 152_064),
                              "test_graph_capture_replays_new_counts", POISON))
    found = diagnose(records)
    assert found[0].name.startswith("graph replay") and NEVER_WRITTEN in found[0].absorbed, [d.name for d in found]


def test_a_symptom_beyond_the_controlled_cases_keeps_its_own_item() -> None:
    """Near miss: the poison also on a family case the stream test does not cover: the order explains only part of
    it, so "rows never written" stays an item of its own (after or before, by its own weight)."""
    records = _side_stream_on_the_h200()
    records.append(case("matrix", "fp32-prefix-2x5000-nan0.1", (2, 5000), [_row(500, POISON)] * 2, "direct"))
    names = [d.name for d in diagnose(records)]
    assert any(n.startswith("stream order") for n in names) and NEVER_WRITTEN in names, names


def _item(name: str, weight: int, explains: set[tuple[str, int]], control: str = "", **more: object) -> Diagnosis:
    return Diagnosis("output", name, "", tuple(sorted({t for t, _ in explains})), weight, frozenset(explains),
                     control=control, **more)  # type: ignore[arg-type]


def test_causes_first_moves_a_controlled_cover_before_what_it_explains() -> None:
    heavy = _item("symptom", 9, {("t", 0)})
    cause = _item("cause", 1, {("t", 0), ("u", 0)}, control="u passes with the order restored")
    guess = _item("guess", 1, {("t", 0), ("u", 0)})  # covers too, but no control: no claim to lead
    other = _item("other", 5, {("v", 0)})
    assert dg.causes_first([heavy, other, cause]) == [cause, heavy, other]
    assert dg.causes_first([heavy, other, guess]) == [heavy, other, guess]
    twin = replace(cause, name="twin")  # both controlled, the same failures: neither explains more, order kept
    assert dg.causes_first([cause, twin]) == [cause, twin] and dg.causes_first([twin, cause]) == [twin, cause]


def test_a_wrapper_state_found_by_experiment_explains_a_wrapper_only_body_pattern() -> None:
    body = replace(_item("half of each row", 6, {("a", 0), ("b", 0)}), category="traversal", demoted="direct right")
    stale = _item("results reused across calls", 2, {("c", 1)}, control="the first call counts right")
    assert dg.explains(stale, body) and not dg.explains(body, stale)
    assert not dg.explains(replace(stale, category="accumulation"), body)


def test_broad_evidence_located_in_the_wrapper_ranks_above_one_check() -> None:
    """A chunked wrapper's partial block (broad, on the wrapper path only) beside a single stray store it does not
    explain: the broad item leads, its wrapper hint kept (the demotion ranked it after one check before)."""
    records = run(dropped(2048), right)
    records.append(case("contract", "fp32-guarded-9x8193", (9, 8193), [_row(5, 5)], "direct",
                        problems=[Problem(STRAY_WRITE, "1 int32 slot after the output changed")]))
    found = diagnose(records)
    assert found[0].name.startswith("the last, partial block") and found[0].demoted, [d.name for d in found]
    assert found[1].category == "output" and found[1].thin


def test_every_fact_an_item_holds_is_shown_in_html_and_markdown() -> None:
    """results.json's fields of an item, each shown on the HTML page and in summary.md (a new field must be added
    here, with the words that show it), but its ranking internals: `weight` orders the items and stays in
    results.json (issue 59, item 5)."""
    item = Diagnosis("traversal", "NAME", "EVIDENCE", ("case-a",), 7, frozenset({("case-a", 0)}), scope="SCOPE",
                     thin=True, partial=True, demoted="DEMOTED", control="CONTROL", blocks=(("wrapper", 2048),),
                     absorbed=("ABSORBED",))
    shown = {"category": "traversal", "name": "NAME", "evidence": "EVIDENCE", "cases": "case-a", "scope": "SCOPE",
             "thin": "thin evidence", "partial": "partial: read from the tests that ran",
             "demoted": "where: DEMOTED", "control": "control: CONTROL", "blocks": "block 2048 (wrapper path)",
             "absorbed": "also explains every failure of: ABSORBED"}
    internal = {"weight": "weight 7"}
    assert set(shown) | set(internal) == set(item.to_dict()) == {f.name for f in fields(Diagnosis)} - {"explains"}
    assert Diagnosis.from_dict(item.to_dict()) == replace(item, explains=frozenset())
    failing = case("matrix", "case-a", (1, 128), [_row(64, 0)])
    for page in (diagnosis_block([item]), summary_md([failing], [item])):
        missing = [key for key, words in shown.items() if words not in page]
        assert not missing, (missing, page)
        assert not [key for key, words in internal.items() if words in page], page


def test_an_older_results_file_reads_without_the_new_fields() -> None:
    old = {"category": "traversal", "name": "n", "evidence": "e", "cases": ["c"], "weight": 1}
    item = Diagnosis.from_dict(old)
    assert (item.control, item.blocks, item.absorbed) == ("", (), ())
