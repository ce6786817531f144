"""What a reviewer reads means something (issue 59, item 5): a cell where one path fails names that path and the grid
explains its words; each family's heading says what that family is; a diagnosis item shows no ranking internals,
and says its facts in the same order on the HTML page, in summary.md and in the terminal."""
from __future__ import annotations

import json
import re
from html import unescape
from types import SimpleNamespace

import pytest

from cases import registry
from cases.family import PATHS, Context, Family
from reports import plugin, summary
from reports.diagnosis_base import Diagnosis
from reports.results import document
from reports.run_state import STATE_KEY, RunEnd, RunState
from reports.tables import diagnosis_block
from tests.reports.test_diagnosis_blocks import summary_md
from verdict.record import NOT_RUN, PASS, WRONG_COUNTS, Check, TestRecord, WrongRow

pytestmark = pytest.mark.nan_reports

FAMILIES = registry.load()
MATRIX = next(f for f in FAMILIES if f.name == "matrix")
VERDICT = {"passed": PASS, "failed": WRONG_COUNTS, "xfailed": WRONG_COUNTS, "skipped": NOT_RUN}


def _records(family: Family, case: object, outcomes: dict[str, str]) -> list[TestRecord]:
    """One test per path of CASE with the given pytest outcome; a path that ran records its check."""
    params = family.params(case)
    found = []
    for path, outcome in outcomes.items():
        ok = outcome == "passed"
        checks = () if outcome == "skipped" else (
            Check(params, path, VERDICT[outcome], 10, 10 if ok else 11, (), () if ok else (WrongRow(0, 10, 11),)),)
        found.append(TestRecord(f"tests/precision/test_families.py::test_case[{case}-{path}]", outcome,
                                VERDICT[outcome], params, checks=checks))
    return found


# a matrix case per word a cell can show: (wrapper outcome, direct outcome) -> the cell's word
CELLS = [(("failed", "passed"), "wrapper ✗"), (("passed", "failed"), "direct ✗"), (("passed", "passed"), "pass"),
         (("failed", "failed"), "FAIL"), (("xfailed", "passed"), "waived"), (("skipped", "skipped"), "not run"),
         (("passed", "skipped"), "pass*"), (("failed", "skipped"), "FAIL*"), (("xfailed", "skipped"), "waived*")]


def _cells(html: str) -> dict[str, tuple[str, str]]:
    """Each cell's case, its data-failing attribute ('' where it has none) and the word it shows."""
    found = {}
    for m in re.finditer(r'<td class="nan-cell[^"]*"([^>]*)>([^<]*)</td>', html):
        attrs = dict(re.findall(r'([\w-]+)="([^"]*)"', m[1]))
        found[unescape(attrs["data-case"])] = (unescape(attrs.get("data-failing", "")), unescape(m[2]))
    return found


def test_a_cell_where_one_path_fails_names_it_and_the_grid_explains_every_word() -> None:
    """The H100 report showed 120 cells of "mixed" and no legend: a cell now says which path fails ("wrapper ✗", the
    others passed), the heading counts the same words, and a legend under the grid explains every word it shows."""
    assert PATHS == ("wrapper", "direct")
    cases = MATRIX.cases(Context())
    records = [r for case, ((wrapper, direct), _) in zip(cases, CELLS)
               for r in _records(MATRIX, case, {"wrapper": wrapper, "direct": direct})]
    html = summary.family_sections(records, FAMILIES)
    cells = _cells(html)
    assert len(cells) == len(cases)
    shown = {str(case): cells[str(case)][1] for case in cases[:len(CELLS)]}
    assert shown == {str(case): word for case, (_, word) in zip(cases, CELLS)}
    assert cells[str(cases[0])][0] == "wrapper" and cells[str(cases[1])][0] == "direct"  # the paths, as data
    assert cells[str(cases[-1])][1] == "–" and not any("mixed" in word for _, word in cells.values())
    grid = html[html.index('id="nan-grid-matrix"'):]
    legend = re.match(r'</table><p class="nan-legend">(.*?)</p>', grid[grid.index("</table>"):])
    assert legend, grid[grid.index("</table>"):][:300]  # right under the grid
    explained = {unescape(w) for w in re.findall(r"<span[^>]*>([^<]*)</span>", legend[1])}
    words = {word.rstrip(summary.PARTIAL) for _, word in cells.values()}
    assert words <= explained and summary.PARTIAL in explained, (words, explained)
    assert {f"{p} ✗" for p in PATHS} <= explained  # every path's word, whichever this run shows
    heading = unescape(re.search(r"<h3[^>]*>(matrix: .*?)</h3>", html)[1])  # type: ignore[index]
    assert "1 wrapper ✗, 1 direct ✗" in heading and "mixed" not in heading, heading


def test_each_family_heading_says_what_that_family_is() -> None:
    """Five families (shapes, magnitudes, short_wide, padded, bigoffset) showed one heading text: each heading now
    carries its own Family's description, and no two families share one; the marker they share keeps one help."""
    records = [r for f in FAMILIES for r in _records(f, f.cases(Context())[0], {"wrapper": "passed"})]
    html = summary.family_sections(records, FAMILIES)
    headings = {m[1]: unescape(m[2]) for m in re.finditer(r"<h3[^>]*>([a-z_]+): (.*?)</h3>", html)}
    layouts = [f for f in FAMILIES if f.name in ("shapes", "magnitudes", "short_wide", "padded", "bigoffset")]
    assert len(layouts) == 5 and {f.marker for f in layouts} == {"nan_layout"}
    assert len({headings[f.name].split(" (")[0] for f in layouts}) == 5, {f.name: headings[f.name] for f in layouts}
    assert set(headings) == {f.name for f in FAMILIES}, headings
    for f in FAMILIES:
        assert headings[f.name].startswith(f.description + " ("), (f.name, headings[f.name])
    assert len({f.description for f in FAMILIES}) == len(FAMILIES)
    assert len({f.markers()["nan_layout"] for f in layouts}) == 1  # `pytest --markers`: what -m nan_layout selects


ITEM = Diagnosis("traversal", "NAME", "EVIDENCE", tuple(f"case-{i}" for i in range(7)), 361,
                 frozenset({("case-0", 0)}), scope="SCOPE", thin=True, partial=True, demoted="DEMOTED",
                 control="CONTROL", blocks=(("wrapper", 2048),), absorbed=("ABSORBED",))
# what a reviewer reads of ITEM, in the one order every page shows it
ORDER = ("[traversal]", "NAME", "(7 test(s); SCOPE)", "EVIDENCE", "where: DEMOTED", "block 2048 (wrapper path)",
         "control: CONTROL", "also explains every failure of: ABSORBED", "thin evidence", "partial: read from",
         "case-0")
# results.json's fields of a diagnosis item before this change: gates read them (reports.compare, the nightly)
RESULTS_FIELDS = {"category", "name", "evidence", "cases", "weight", "scope", "thin", "partial", "demoted", "control",
                  "blocks", "absorbed"}


def _terminal(records: list[TestRecord], found: list[Diagnosis]) -> list[str]:
    """The lines the run's ending writes to the terminal (reports.plugin._print_verdict) for this diagnosis."""
    lines: list[str] = []
    reporter = SimpleNamespace(write_sep=lambda sep, title, **kw: lines.append(title),
                               write_line=lambda line, **kw: lines.append(line))
    collector = SimpleNamespace(results=lambda: records)
    state = RunState("r", "t", collector=collector, end=RunEnd(True, "tests failed", 1, 1),  # type: ignore[arg-type]
                     diagnosis=found)
    config = SimpleNamespace(stash={STATE_KEY: state}, pluginmanager=SimpleNamespace(
        get_plugin=lambda name: reporter if name == "terminalreporter" else None))
    plugin._print_verdict(config)  # type: ignore[arg-type]
    return lines


def _places(page: str, words: tuple[str, ...]) -> list[int]:
    return [page.index(w) for w in words]


def test_a_diagnosis_item_shows_no_ranking_internals_and_its_facts_in_one_order() -> None:
    """"weight 361 (failing tests explained, with the rule's bonus)" stood in every item: it orders the items and
    stays in results.json (same fields as before), never on the page, in summary.md or in the terminal; the facts a
    reviewer reads come in one order on the HTML page and in summary.md, and the terminal's line is their head."""
    failing = _records(MATRIX, MATRIX.cases(Context())[0], {"wrapper": "failed"})
    html = unescape(re.sub(r"<[^>]+>", "", diagnosis_block([ITEM])))
    md = summary_md(failing, [ITEM]).replace("\\", "")
    md_item = next(line for line in md.splitlines() if line.startswith("1. "))
    terminal = next(line for line in _terminal(failing, [ITEM]) if line.startswith("  1. "))
    for page in (html, md, terminal):
        assert "weight" not in page and "361" not in page and "bonus" not in page, page
    html_item = html[html.index("[traversal]"):]
    assert _places(html_item, ORDER) == sorted(_places(html_item, ORDER)), html_item
    assert _places(md_item, ORDER) == sorted(_places(md_item, ORDER)), md_item
    head = terminal.removeprefix("  1. ")
    assert head == "[traversal] NAME (7 test(s); SCOPE)" and html_item.startswith(head) and md_item[3:].startswith(head)
    doc = json.loads(json.dumps(document(failing, {}, 1, collected=1, finished=True, ended="tests failed",
                                         extra={"diagnosis": [ITEM.to_dict()]})))
    assert set(doc["diagnosis"][0]) == RESULTS_FIELDS and doc["diagnosis"][0]["weight"] == 361
