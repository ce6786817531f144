"""The report's summary as HTML: the matrix grid, the IEEE class x dtype table, sweep lines, failures."""
from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from html import escape

from cases.anchor import DTYPES, LAYOUTS, NAN_FRACS, SHAPES
from reports.records import CaseResult, short_message

STYLE = """<style>
.nan-summary table{border-collapse:collapse;margin:6px 0 14px}
.nan-summary th,.nan-summary td{border:1px solid #ccc;padding:2px 5px;font-size:12px;text-align:center}
.nan-summary td.nan-cell{min-width:34px}
.nan-pass{background:#c8f0c8}.nan-fail{background:#f4a3a3;font-weight:bold}.nan-mixed{background:#f9d27a;font-weight:bold}
.nan-skip{background:#e4e4e4}.nan-waived{background:#c9d7f5}.nan-absent{background:#fff;color:#aaa}
.nan-summary .nan-headline{font-size:15px;font-weight:bold}
.nan-summary ul{margin:4px 0 12px}
</style>"""

STATE_TEXT = {"pass": "pass", "fail": "FAIL", "mixed": "mixed", "skip": "skip", "waived": "waived", "absent": "–"}


def cell_state(outcomes: Sequence[str]) -> str:
    """One word for a case over its paths: fail, mixed (some paths pass, some fail), pass, waived, skip, absent."""
    if not outcomes:
        return "absent"
    failed = [o for o in outcomes if o in ("failed", "error")]
    if failed:
        return "mixed" if len(failed) < len(outcomes) and "passed" in outcomes else "fail"
    if "xfailed" in outcomes:
        return "waived"
    if "passed" in outcomes or "xpassed" in outcomes:
        return "pass"
    return "skip" if all(o == "skipped" for o in outcomes) else "absent"


def _cell(case_id: str, by_path: dict[str, str]) -> str:
    state = cell_state(list(by_path.values()))
    detail = ", ".join(f"{p} {o}" for p, o in sorted(by_path.items())) or "not run"
    title = escape(f"{case_id}: {detail}", quote=True)
    return (
        f'<td class="nan-cell nan-{state}" data-case="{escape(case_id, quote=True)}" data-state="{state}" '
        f'title="{title}">{STATE_TEXT[state]}</td>'
    )


def _by_case(results: Iterable[CaseResult], kind: str) -> dict[tuple[str, ...], dict[str, str]]:
    """(dtype, layout, R, V, nan) -> {path: outcome} for results of one kind."""
    table: dict[tuple[str, ...], dict[str, str]] = {}
    for r in results:
        p = r.parameters
        if p.get("kind") != kind:
            continue
        shape = p.get("shape") or [0, 0]
        key = (str(p.get("dtype", "")), str(p.get("layout", "")), str(shape[0]), str(shape[-1]), str(p.get("nan", "")))
        table.setdefault(key, {})[r.path or "?"] = r.outcome
    return table


def matrix_grid(results: Sequence[CaseResult]) -> str:
    """The anchor's 120 cases: dtype x layout down, shape x NaN fraction across, one cell per case (both paths)."""
    cases = _by_case(results, "matrix")
    head1 = "".join(f'<th colspan="{len(NAN_FRACS)}">{r}x{v}</th>' for r, v in SHAPES)
    head2 = "".join(f"<th>{f}</th>" for _ in SHAPES for f in NAN_FRACS)
    rows = []
    for dtype in DTYPES:
        for layout in LAYOUTS:
            cells = "".join(
                _cell(f"{dtype}-{layout}-{r}x{v}-nan{f}", cases.get((dtype, layout, str(r), str(v), str(f)), {}))
                for r, v in SHAPES
                for f in NAN_FRACS
            )
            rows.append(f"<tr><th>{dtype}</th><th>{layout}</th>{cells}</tr>")
    counts = _state_counts(cell_state(list(v.values())) for v in cases.values())
    return (
        f'<h3>Anchor matrix ({len(cases)} of {len(DTYPES) * len(LAYOUTS) * len(SHAPES) * len(NAN_FRACS)} cases run'
        f"{counts})</h3>"
        '<table id="nan-matrix-grid"><thead>'
        f'<tr><th rowspan="2">dtype</th><th rowspan="2">layout</th>{head1}</tr><tr>{head2}</tr>'
        f"</thead><tbody>{''.join(rows)}</tbody></table>"
    )


def _state_counts(states: Iterable[str]) -> str:
    tally: dict[str, int] = {}
    for s in states:
        tally[s] = tally.get(s, 0) + 1
    parts = [f"{tally[s]} {STATE_TEXT[s]}" for s in ("fail", "mixed", "waived", "skip", "pass") if s in tally]
    return f": {', '.join(parts)}" if parts else ""


def _class_names() -> list[str]:
    """IEEE class names in the harness's own order."""
    try:
        from cases.ieee import IEEE_CLASSES
    except ImportError:  # pragma: no cover - cases.ieee is part of the harness
        return []
    return [c.name for c in IEEE_CLASSES]


def classes_in(label: str, known: Iterable[str]) -> list[str]:
    """IEEE class names a wrong row's label mentions, e.g. '+quiet_nan bf16 0x7fc0' -> ['quiet_nan']."""
    words = set(re.findall(r"[a-z_]+", label))
    return [name for name in known if name in words]


def ieee_table(results: Sequence[CaseResult]) -> str:
    """IEEE class x dtype. A case whose NaN field names one class covers that class; a case arranging every
    class (rows, mixed) covers all of them, and when it fails, the classes its wrong rows name are the failing
    ones (a failure with no wrong rows, e.g. an exception, marks every class it covers)."""
    known = _class_names()
    cells: dict[tuple[str, str], dict[str, str]] = {}
    for r in results:
        p = r.parameters
        if p.get("kind") != "ieee":
            continue
        nan, dtype = str(p.get("nan", "")), str(p.get("dtype", ""))
        covered = [nan] if nan in known or not known else known
        named = {n for w in r.wrong_rows for n in classes_in(str(w.get("label", "")), covered)}
        label = f"{p.get('case_id', r.id)} {r.path}".strip()
        for cls in covered:
            outcome = r.outcome
            if r.failed and named and cls not in named:
                outcome = "passed"
            cells.setdefault((cls, dtype), {})[label] = outcome
    if not cells:
        return '<h3>IEEE classes</h3><p id="nan-ieee-table">no IEEE class cases in this run</p>'
    classes = _ordered((k[0] for k in cells), known)
    dtypes = [d for d in DTYPES if any(k[1] == d for k in cells)] + sorted({k[1] for k in cells} - set(DTYPES))
    head = "".join(f"<th>{escape(d)}</th>" for d in dtypes)
    body = []
    for cls in classes:
        row = "".join(_cell(f"{cls} {d}", cells.get((cls, d), {})) for d in dtypes)
        body.append(f"<tr><th>{escape(cls)}</th>{row}</tr>")
    return (
        f'<h3>IEEE classes x dtype</h3><table id="nan-ieee-table"><thead><tr><th>class</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
    )


def _ordered(names: Iterable[str], known: Sequence[str]) -> list[str]:
    """Known IEEE classes in the harness's order, unknown names after them, alphabetically."""
    names = set(names)
    return [n for n in known if n in names] + sorted(names - set(known))


def sweep_lines(results: Sequence[CaseResult]) -> str:
    """One line per exhaustive sweep: patterns (R*V), NaNs expected, NaNs counted, outcome."""
    lines = []
    for r in results:
        for c in r.checks:
            if c.kind != "sweep":
                continue
            patterns = 1
            for n in c.shape:
                patterns *= n
            got = "?" if c.got_total is None else f"{c.got_total:,}"
            expected = "?" if c.expected_total is None else f"{c.expected_total:,}"
            state = "waived" if r.outcome == "xfailed" else ("pass" if c.ok else "fail")
            lines.append(
                f'<li data-case="{escape(c.case_id, quote=True)}" data-state="{state}">'
                f'<span class="nan-{state}">{STATE_TEXT[state]}</span> {escape(c.dtype)} sweep '
                f"({escape(c.nan)}, {escape(c.path)}): {patterns:,} patterns, "
                f"{expected} NaNs expected, {got} NaNs counted</li>"
            )
    if not lines:
        return '<h3>Exhaustive sweeps</h3><p id="nan-sweeps">no sweeps in this run</p>'
    return f'<h3>Exhaustive sweeps</h3><ul id="nan-sweeps">{"".join(lines)}</ul>'


def planted_table(results: Sequence[CaseResult]) -> str:
    """The self-test's proof: each planted bug, its class, whether the suite caught it, and the first catching case."""
    verdicts = sorted((r.planted for r in results if r.planted), key=lambda v: (v.get("bug_class", ""), v.get("variant", "")))
    if not verdicts:
        return ""
    rows = []
    for v in verdicts:
        hits = list(v.get("hits") or [])
        if not v.get("applies", True):
            state, text = "skip", "blind spot here" + (" (caught anyway)" if v.get("caught") else "")
        else:
            state, text = ("pass", "caught") if v.get("caught") else ("fail", "NOT CAUGHT")
        first = hits[0] + (f" (+{len(hits) - 1} more)" if len(hits) > 1 else "") if hits else ""
        rows.append(
            f'<tr data-case="{escape(str(v.get("variant", "")), quote=True)}" data-state="{state}">'
            f'<td>{escape(str(v.get("bug_class", "")))}</td><td>{escape(str(v.get("variant", "")))}</td>'
            f'<td class="nan-{state}">{text}</td><td style="text-align:left">{escape(first)}</td></tr>'
        )
    scored = [v for v in verdicts if v.get("applies", True)]
    caught = sum(bool(v.get("caught")) for v in scored)
    return (
        f"<h3>Planted bugs caught: {caught}/{len(scored)}</h3>"
        '<table id="nan-planted"><thead><tr><th>class</th><th>variant</th><th>verdict</th><th>first catching case</th>'
        f"</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


SHOWN_FAILURES = 15  # listed openly; the rest fold under a <details> so the tables stay in view


def failure_headline(results: Sequence[CaseResult]) -> str:
    """How many tests failed, and in which test functions: what a reviewer reads first."""
    failed = [r for r in results if r.failed]
    if not failed:
        return '<p class="nan-headline" id="nan-failures">No failures.</p>'
    tally: dict[str, int] = {}
    for r in failed:
        name = r.id.split("[", 1)[0]
        tally[name] = tally.get(name, 0) + 1
    by_test = ", ".join(f"{escape(name)} {n}" for name, n in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])))
    return f'<p class="nan-headline">{len(failed)} failed test(s)</p><p id="nan-failed-by-test">{by_test}</p>'


def failure_list(results: Sequence[CaseResult]) -> str:
    """Every failed or errored test by id with its most telling line: crashes and non-matrix cases included."""
    failed = [r for r in results if r.failed]
    if not failed:
        return ""
    items = []
    for r in failed:
        first = next((w for w in r.wrong_rows), None)
        if first is not None and first.get("row") is not None:
            why = f"row {first['row']}: expected {first['expected']}, got {first['got']}"
            why += f" [{first['label']}]" if first.get("label") else ""
            extra = len(r.wrong_rows) - 1
            why += f" (+{extra} more)" if extra > 0 else ""
        elif first is not None:
            why = str(first.get("label", ""))
        else:
            why = short_message(r.message)
        items.append(f"<li><b>{r.outcome}</b> <code>{escape(r.id)}</code>: {escape(why)}</li>")
    shown, folded = items[:SHOWN_FAILURES], items[SHOWN_FAILURES:]
    more = (
        f'<details id="nan-more-failures"><summary>{len(folded)} more failed test(s)</summary>'
        f'<ul>{"".join(folded)}</ul></details>'
        if folded
        else ""
    )
    return f'<h3>Failed tests</h3><ul id="nan-failures">{"".join(shown)}</ul>{more}'


def render(results: Sequence[CaseResult]) -> str:
    """The whole summary block."""
    return (
        f'{STYLE}<div class="nan-summary">{failure_headline(results)}{matrix_grid(results)}'
        f"{ieee_table(results)}{sweep_lines(results)}{planted_table(results)}{failure_list(results)}</div>"
    )
