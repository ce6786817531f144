"""What a run did not test is named, group by group, with why and the command that runs it; a case shows what ran
on the path that ran (issue 40, items 4 and 5). Records are built from JSON, as every reader gets them."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from cases import registry
from reports import compare, markdown, results, summary
from reports.results import SCHEMA, ResultsError
from tests.reports import runs
from verdict.record import TestRecord

pytestmark = pytest.mark.nan_reports

FAMILIES = registry.load()
DIRECT = {"group": "direct path", "reason": "m exposes no _num_nans_kernel", "commands": [], "marker": ""}
BATCHES = {"group": "large batches (5,000 and 70,001 rows)", "reason": "each takes minutes on the CPU interpreter",
           "commands": ["tox -e cpu-batches"], "marker": "nan_batches"}


def _case(nodeid: str, outcome: str, family: str = "", case_id: str = "", not_run: dict[str, Any] | None = None,
          **params: Any) -> dict[str, Any]:
    """results.json's entry for one test: passed, failed (wrong counts) or skipped with its NotRun."""
    verdict = {"passed": "pass", "failed": "wrong_counts", "skipped": "not_run"}[outcome]
    parameters = {"family": family, "case_id": case_id, **params} if family else {}
    return {"nodeid": nodeid, "outcome": outcome, "verdict": verdict, "parameters": parameters, "not_run": not_run,
            "message": "Skipped: words for a person, never read" if outcome == "skipped" else ""}


def _both_paths(family: str, case_id: str, **params: Any) -> list[dict[str, Any]]:
    """A case its wrapper passed while its direct path could not run (a module without _num_nans_kernel)."""
    node = f"tests/precision/test_families.py::test_case[{case_id}-"
    return [_case(node + "wrapper]", "passed", family, case_id, **params),
            _case(node + "direct]", "skipped", family, case_id, DIRECT, **params)]


def _records(cases: list[dict[str, Any]]) -> list[TestRecord]:
    return [TestRecord.from_dict(c) for c in cases]


def test_every_summary_section_shows_what_ran_on_the_path_that_ran() -> None:
    """Grid, IEEE class table, sweep totals and tally: a wrapper pass beside a direct path that cannot run reads
    pass, marked partial, and the heading says which path did not run and why (it read "not run" everywhere)."""
    cases = (_both_paths("matrix", "fp32-prefix-1x128-nan0.1", dtype="fp32", layout="prefix", shape=[1, 128],
                         detail="0.1")
             + _both_paths("ieee", "fp16-ieee-rows", dtype="fp16", layout="rows", shape=[22, 1000], detail="rows")
             + _both_paths("sweep", "fp16-sweep", dtype="fp16", layout="rows", shape=[256, 256], detail="all")
             + _both_paths("special", "fp32-special-2x1024", dtype="fp32", shape=[2, 1024]))
    html = summary.family_sections(_records(cases), FAMILIES)
    cells = re.findall(r'<td class="nan-cell[^>]*>[^<]*</td>', html)
    assert cells and not [c for c in cells if 'data-state="skip"' in c or "not run<" in c], cells
    assert "not run</span> test_case[fp16-sweep-direct]: m exposes no _num_nans_kernel</li>" in html  # one line a test
    assert 'data-case="fp32-prefix-1x128-nan0.1" data-state="pass" data-partial="yes"' in html
    assert "(1 of 120 cases run: 1 pass*;" in html
    headings = re.findall(r"<h3[^>]*>(.*?)</h3>", html)
    assert len(headings) == 4 and all("direct not run for 1 case(s): m exposes no _num_nans_kernel" in h
                                      for h in headings), headings


def _doc(cases: list[dict[str, Any]], groups: list[dict[str, Any]] | None) -> dict[str, Any]:
    verdicts: dict[str, int] = {}
    for c in cases:
        verdicts[c["verdict"]] = verdicts.get(c["verdict"], 0) + 1
    doc = {"schema": SCHEMA, "environment": {}, "exitstatus": 1, "finished": True, "ended": "tests failed",
           "collected": len(cases), "counts": {}, "verdicts": verdicts, "cases": cases, "kernel": "m", "backend": "cpu"}
    return doc if groups is None else {**doc, "not_run": groups}


def test_the_markdown_names_every_group_with_its_command_under_many_failures() -> None:
    """Groups are part of the head: 30 failed tests fill the body, every group still shows, its command as code."""
    what = [{**BATCHES, "group": f"group {i}", "commands": [f"tox -e g{i}"]} for i in range(8)]
    cases = [_case(f"t.py::test_f[{i}]", "failed") for i in range(30)]
    cases += [_case(f"t.py::test_s[{i}]", "skipped", not_run=w) for i, w in enumerate(what)]
    text = markdown.run_summary(results.Results.from_doc(_doc(cases, [{**w, "tests": 1} for w in what])))
    assert len(text.splitlines()) <= markdown.MAX_LINES
    assert all(f"group {i}: 1 test(s) not run, each takes minutes on the CPU interpreter; run it with "
               f"`tox -e g{i}`" in text for i in range(8)), text
    assert "Not run: 8 test(s)**, in 8 group(s)" in text


def test_a_file_whose_groups_hide_a_test_not_run_is_refused() -> None:
    cases = [_case("t.py::test_s[0]", "skipped", not_run=BATCHES), _case("t.py::test_s[1]", "skipped")]
    with pytest.raises(ResultsError, match="every test not run is in one group"):
        results.validate(_doc(cases, [{**BATCHES, "tests": 1}]), "x")


def test_a_test_without_a_recorded_reason_is_grouped_without_reading_its_words() -> None:
    """No NotRun (a skip outside the harness): grouped by its test function; pytest's words are never parsed."""
    run = results.Results.from_doc(_doc([_case("t.py::test_s[0]", "skipped")], None))
    found, legacy = run.not_run_groups()
    assert [g.describe() for g in found] == ["test_s: 1 test(s) not run, skipped without a recorded reason (pytest's "
                                             "skip list says why)"] and legacy == []


def test_compare_lists_a_case_that_stopped_running_once_with_why(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """passed -> skipped is coverage lost, not also an "other outcome change"; its recorded reason comes along."""
    base, cur = tmp_path / "base.json", tmp_path / "cur.json"
    base.write_text(json.dumps(_doc([_case("t.py::test_b", "passed")], [])))
    cur.write_text(json.dumps(_doc([_case("t.py::test_b", "skipped", not_run=BATCHES)], [{**BATCHES, "tests": 1}])))
    assert compare.main([str(base), str(cur)]) == 1
    out = capsys.readouterr().out
    assert out.count("t.py::test_b") == 1 and "OTHER OUTCOME CHANGES: 0" in out, out
    assert "t.py::test_b  passed -> skipped: large batches (5,000 and 70,001 rows): not run, each takes minutes on " \
           "the CPU interpreter; run it with tox -e cpu-batches" in out


@pytest.mark.parametrize("environment, said", [
    ({"Kernel origin": "no commit: the kernel file is not in a git checkout"},
     "kernel commit unknown (no commit: the kernel file is not in a git checkout)"),
    ({}, "kernel commit unknown (this results.json records neither a commit nor why it has none)"),
    ({"Kernel commit": "abc123"}, "kernel commit abc123")])
def test_compare_says_what_is_known_of_the_kernel_commit(environment: dict[str, str], said: str) -> None:
    run = results.Results.from_doc({**_doc([_case("t.py::test_b", "passed")], []), "environment": environment})
    assert compare.describe_side(run).endswith(said)


# -- end to end: a correct torch-only kernel, outside any git checkout, on the CPU --------------------------------------

@pytest.fixture
def torch_only(cpu_subruns: None, tmp_path_factory: pytest.TempPathFactory) -> runs.SubRun:
    """Run once per main run (runs.cached_run), read by every test of it."""
    run = runs.torch_only(tmp_path_factory)
    assert run.completed and run.returncode == 0, run.describe()
    return run


def test_a_torch_only_kernels_matrix_shows_its_wrapper_results(torch_only: runs.SubRun) -> None:
    """Its 40 fp32 matrix cases passed on the wrapper, its direct path cannot run: the matrix reads 40 pass*, with
    the direct path's reason in the heading (it read "40 of 120 cases run: 40 not run", every cell "not run")."""
    html = torch_only.html.read_text(encoding="utf-8")
    assert torch_only.doc["kernel"] == runs.TORCH_ONLY  # imported through --kernel-path from a folder off sys.path
    assert torch_only.doc["coverage_gaps"][0] == "direct path: not run, torch_only_nan exposes no _num_nans_kernel"
    assert sum(1 for r in torch_only.records if r.family == "matrix" and r.outcome == "passed") == 40
    heading = re.search(r"<h3[^>]*>matrix: [^<]*</h3>", html)  # every family's heading carries its id
    assert heading and "(40 of 120 cases run: 40 pass*;" in heading.group(0), heading
    assert "direct not run for 40 case(s): torch_only_nan exposes no _num_nans_kernel" in heading.group(0)
    grid = html[html.index('id="nan-grid-matrix"'):]
    grid = grid[:grid.index("</table>")]
    assert grid.count('data-state="pass" data-partial="yes"') == 40 and 'data-state="skip"' not in grid


GROUPS = {  # group -> (tests in this selection, the commands that run it)
    "direct path": (40, ()),  # the fp32 matrix cases' direct path
    "aggregate": (9, ()),
    "stream order, an input on another card, graph capture": (4, ("tox -e cuda -- -m nan_semantics",
                                                                  "tox -e npu -- -m nan_semantics")),
    "a host tensor given to an accelerator's kernel": (1, ("tox -e cuda", "tox -e npu")),
    "large batches (5,000 and 70,001 rows)": (2, ("tox -e cpu-batches",)),
    "full fp32 sweep (all 2^32 patterns)": (2, ("tox -e cuda -- --nan-fp32-full -m nan_fp32_full",
                                                "tox -e npu -- --nan-fp32-full -m nan_fp32_full")),
}


def test_every_group_not_run_is_named_with_why_and_the_command(torch_only: runs.SubRun) -> None:
    """results.json, the HTML headline, summary.md and the terminal name each group (it said "N test(s) not run"
    and named the aggregation alone); every test not run carries its reason as data."""
    doc = torch_only.doc
    skipped = [c for c in doc["cases"] if c["verdict"] == "not_run"]
    assert skipped and all(c["not_run"] and c["not_run"]["reason"] for c in skipped)
    found = {g["group"]: (g["tests"], tuple(g["commands"])) for g in doc["not_run"]}
    assert found == GROUPS, found
    html = torch_only.html.read_text(encoding="utf-8")
    head = html[html.index('id="nan-gaps"'):]
    head = head[:head.index("</ul>")]
    md = (torch_only.folder / "summary.md").read_text(encoding="utf-8")
    for group, (tests, commands) in GROUPS.items():
        assert f"{group}: {tests} test(s) not run" in head.replace("&#x27;", "'"), head
        assert all(f"<code>{c}</code>" in head and f"`{c}`" in md for c in commands), (group, md)
        assert f"not run: {group}: {tests} test(s) not run" in torch_only.output
    assert f"Not run: {len(skipped)} test(s)**, in {len(GROUPS)} group(s)" in md


def test_a_kernel_outside_git_says_why_its_commit_is_unknown(torch_only: runs.SubRun,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """compare printed "kernel commit ?": the run records why it has no commit, and compare says so."""
    assert torch_only.doc["environment"]["Kernel origin"] == "no commit: the kernel file is not in a git checkout"
    assert compare.main([str(torch_only.json_path), str(torch_only.json_path)]) == 0
    assert "kernel commit unknown (no commit: the kernel file is not in a git checkout)" in capsys.readouterr().out
