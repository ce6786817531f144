"""The tables both HTML pages show (pytest-html's report and the merged shards' page), built once from TestRecords:
the environment, a test's case columns, a failing test's expanded section, and the diagnosis."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from reports.diagnosis_base import INTERPRETER, Diagnosis
from reports.markup import esc
from reports.text import facts, item_cases, item_count
from verdict.record import Check, TestRecord

SHOWN_CASES = 5  # a diagnosis item's cases spelled out; results.json has them all
SHOWN_WRONG_ROWS = 200  # wrong rows spelled out per failing check, on either page; results.json has them all
CASE_COLUMNS: tuple[tuple[str, str], ...] = (  # (key, header): a cell's class is col-KEY (pytest-html sorts by it)
    ("dtype", "dtype"),
    ("layout", "layout"),
    ("shape", "shape"),
    ("detail", "detail"),
    ("path", "path"),
    ("verdict", "verdict"),
    ("expected", "expected total"),
    ("got", "got total"),
    ("wrong", "rows wrong"),
)


def environment_table(environment: Mapping[str, str]) -> str:
    """The run's environment as a two-column table, shown after the verdict on either page."""
    rows = "".join(f"<tr><td>{esc(k)}</td><td>{esc(v)}</td></tr>" for k, v in environment.items())
    return f'<h2>Environment</h2><table id="nan-environment" class="nan-env">{rows}</table>'


def case_values(record: TestRecord, *, show_verdict: bool = True) -> dict[str, object]:
    """One test's case columns by key: its parameters, path, verdict, totals and how many rows were wrong."""
    p = record.params
    return {
        "dtype": p.dtype if p else "",
        "layout": p.layout if p else "",
        "shape": "x".join(str(n) for n in p.shape) if p else "",
        "detail": p.detail if p else "",
        "path": record.path,
        "verdict": record.verdict.replace("_", " ") if show_verdict else "",
        "expected": record.expected_total,
        "got": record.got_total,
        "wrong": len(record.wrong_rows) if record.checks else "",
    }


def case_cells(record: TestRecord, *, show_verdict: bool = True) -> list[str]:
    """The case columns as <td> cells, in CASE_COLUMNS order."""
    values = case_values(record, show_verdict=show_verdict)
    return [f'<td class="col-{key}">{esc(values[key])}</td>' for key, _ in CASE_COLUMNS]


def _check_details(c: Check) -> str:
    """One failing check: its case, verdict and totals, the input's layout, what it raised, problems, wrong rows."""
    parts = [f"<p><b>case {esc(c.params.case_id)}</b> ({esc(c.path)}, seed {esc(c.params.seed)}): "
             f"{esc(c.verdict.replace('_', ' '))}; expected total {esc(c.expected_total)}, got {esc(c.got_total)}</p>"]
    if c.input_desc:
        parts.append(f"<p>input: {esc(c.input_desc)}</p>")
    if c.refusal:
        parts.append(f"<p>raised: {esc(c.refusal)}</p>")
    if c.problems:
        parts.append("<ul>" + "".join(f"<li>{esc(p)}</li>" for p in c.problems) + "</ul>")
    if c.wrong_rows:
        rows = "".join(f"<tr><td>{esc(w.row)}</td><td>{esc(w.expected)}</td><td>{esc(w.got)}</td>"
                       f"<td>{esc(w.label)}</td></tr>" for w in c.wrong_rows[:SHOWN_WRONG_ROWS])
        more = len(c.wrong_rows) - SHOWN_WRONG_ROWS
        tail = f'<tr><td colspan="4">... and {more} more (see results.json)</td></tr>' if more > 0 else ""
        parts.append('<table class="nan-wrong-rows-table" border="1" cellpadding="3">'
                     "<thead><tr><th>row</th><th>expected</th><th>got</th><th>label (IEEE class, bits)</th></tr>"
                     f"</thead><tbody>{rows}{tail}</tbody></table>")
    return "".join(parts)


def failure_details(record: TestRecord) -> str:
    """The expanded section of a failing test: every check that did not pass ('' when none did not)."""
    failed = [c for c in record.checks if not c.ok]
    if not failed:
        return ""
    return '<div class="nan-wrong-rows">' + "".join(_check_details(c) for c in failed) + "</div>"


def _interpreter_note(found: Sequence[Diagnosis]) -> str:
    """Under the headline: when an interpreter defect leads, say so before any failure is read as the kernel's."""
    if not found or found[0].category != INTERPRETER:
        return ""
    rest = "" if len(found) == 1 else " Other failures are listed after it."
    return (f'<p id="nan-interpreter-note"><b>FAIL on this interpreter:</b> {esc(found[0].name)}; its failures '
            f"stay failures here, judge the kernel on a device or upcast to fp32 before comparing.{esc(rest)}</p>")


def _item(d: Diagnosis) -> str:
    """One item in the order every page shows it: category, name, how many tests and their scope, evidence, the
    facts (reports.text.facts), then its tests."""
    item = d.to_dict()
    cases, more = item_cases(item, SHOWN_CASES)
    lines = [f"[{esc(d.category)}] <b>{esc(d.name)}</b> <i>({esc(item_count(item))})</i>: {esc(d.evidence)}"]
    if found := facts(item):
        lines.append(f'<small class="nan-diagnosis-facts">{esc("; ".join(found))}</small>')
    if cases:
        lines.append(f'<small class="nan-diagnosis-tests">tests: {esc(", ".join(cases))}'
                     f'{" " + esc(more) if more else ""}</small>')
    return f"<li>{'<br>'.join(lines)}</li>"


def diagnosis_block(found: Sequence[Diagnosis]) -> str:
    """The diagnosis as both pages show it: the interpreter's note when its defect leads, then the ranked items."""
    if not found:
        return ""
    note = ('<p id="nan-diagnosis-partial">Partial: the run stopped early; the diagnosis reads only the tests that ran.'
            "</p>" if any(d.partial for d in found) else "")
    return f'{_interpreter_note(found)}<h3>Diagnosis</h3>{note}<ol id="nan-diagnosis">{"".join(map(_item, found))}</ol>'
