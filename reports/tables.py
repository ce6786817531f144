"""The tables both HTML pages show (pytest-html's report and the merged shards' page), built once from TestRecords:
the environment, a test's case columns, and a failing test's expanded section."""
from __future__ import annotations

from collections.abc import Mapping

from reports.markup import esc
from verdict.record import Check, TestRecord

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
