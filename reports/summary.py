"""The report's summary as HTML: the run's summary model (reports.summary_model: verdict, tally, notes, what was not
run, diagnosis, failures) first, then one section per case family.

A family's section follows its `summary` grouping (cases.family): a grid, an IEEE class table, sweep totals or a
one-line tally. Families are read from the run's RunInfo, so a new family shows up without edits here.
"""
from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from cases.family import PATHS, ClassTable, Context, Family, Grid, Totals
from reports.diagnosis_base import Diagnosis
from reports.markup import esc
from reports.not_run import lines as not_run_lines, unrecorded
from reports.summary_model import Summary, build
from reports.tables import diagnosis_block
from verdict.record import FAILED_OUTCOMES, CaseParams, TestRecord

STYLE = """<style>
.nan-summary{color:#111}
.nan-summary h3{color:#111;margin:14px 0 4px}
.nan-summary table{border-collapse:collapse;margin:6px 0 14px}
.nan-summary th,.nan-summary td{border:1px solid #888;padding:2px 5px;font-size:12px;text-align:center;color:#111}
.nan-summary td.nan-cell{min-width:34px}
.nan-pass{background:#9be39b}.nan-fail{background:#e65c5c;color:#fff!important;font-weight:bold}
.nan-mixed{background:#f0b400;font-weight:bold}.nan-skip{background:#cfcfcf}.nan-waived{background:#9fb8ee}
.nan-absent{background:#fff;color:#555!important}.nan-summary td[data-partial="yes"]{border-style:dashed}
.nan-summary .nan-headline{font-size:16px;font-weight:bold}
.nan-verdict-pass{color:#0a6b0a}.nan-verdict-fail{color:#b00000}.nan-verdict-incomplete{color:#8a5a00}
.nan-summary ul{margin:4px 0 12px}
.nan-summary .nan-legend span{padding:0 4px;border:1px solid #888}
</style>"""

# a cell's word by state; a mixed case (one path fails, another passes) names its failing paths instead: state_word
STATE_TEXT = {"pass": "pass", "fail": "FAIL", "skip": "not run", "waived": "waived", "absent": "–"}
STATE_ORDER = ("fail", "mixed", "waived", "skip", "pass", "absent")  # the order of a heading's counts and the legend
FAILS = "✗"  # after the paths that fail in a case another path passes: "wrapper ✗"
PARTIAL = "*"  # after a cell's word: what ran says this, and some path of the case did not run (the heading says why)
SHOWN_FAILURES = 15  # listed openly; the rest fold under a <details>
NOT_RAN = ("skipped", "pending")


def cell_state(outcomes: Sequence[str]) -> str:
    """One word for a case over the paths that ran: fail, mixed (one path fails, another passes), pass, waived; skip
    when none ran. A path that did not run beside one that did marks the cell partial (`partial`), never a pass."""
    ran = [o for o in outcomes if o not in NOT_RAN]
    if not ran:
        return "skip" if outcomes else "absent"
    failed = [o for o in ran if o in FAILED_OUTCOMES]
    if failed:
        return "mixed" if len(failed) < len(ran) and "passed" in ran else "fail"
    return "waived" if "xfailed" in ran else "pass"


def partial(outcomes: Sequence[str]) -> bool:
    """Some path of the case ran and another did not: its word covers only the paths that ran."""
    return any(o in NOT_RAN for o in outcomes) and any(o not in NOT_RAN for o in outcomes)


def _path_rank(path: str) -> tuple[int, str]:
    """The suite's path order (cases.family.PATHS), any other path after them by name."""
    return (PATHS.index(path) if path in PATHS else len(PATHS), path)


def failing_paths(records: Iterable[TestRecord]) -> tuple[str, ...]:
    """The paths whose test failed, read from each record's path (never from the cell's label), in path order."""
    return tuple(sorted({_path_of(r) for r in records if r.outcome in FAILED_OUTCOMES}, key=_path_rank))


def state_word(state: str, failing: Sequence[str] = ()) -> str:
    """A state's word; a mixed case's names the paths that fail ("wrapper ✗"): the others that ran passed."""
    return f"{' + '.join(failing)} {FAILS}" if state == "mixed" else STATE_TEXT[state]


def _cell_key(records: Sequence[TestRecord]) -> tuple[str, tuple[str, ...], bool]:
    """What a cell shows, as data: its state, the paths that fail in a mixed one, and whether it is partial."""
    outcomes = [r.outcome for r in records]
    state = cell_state(outcomes)
    return state, failing_paths(records) if state == "mixed" else (), partial(outcomes)


def _word(key: tuple[str, tuple[str, ...], bool]) -> str:
    """A cell's whole word: its state's word, with the partial mark."""
    state, failing, part = key
    return state_word(state, failing) + (PARTIAL if part else "")


def legend(paths: Sequence[str] = PATHS) -> str:
    """Every word a cell can show and what it means (one mixed word per path), in the order the headings count them."""
    def others(p: str) -> str:
        rest = [q for q in paths if q != p]
        return f"the {' and '.join(rest)} path{'s' if len(rest) > 1 else ''} passed"

    means = {"pass": [(STATE_TEXT["pass"], "every path that ran passed")],
             "fail": [(STATE_TEXT["fail"], "every path that ran failed")],
             "mixed": [(state_word("mixed", [p]), f"the {p} path failed, {others(p)}") for p in paths],
             "waived": [(STATE_TEXT["waived"], "a waived failure (strict xfail), no other path failed")],
             "skip": [(STATE_TEXT["skip"], "no path of the case ran (the cell's tooltip says why)")],
             "absent": [(STATE_TEXT["absent"], "not in this run")]}
    items = [f'<span class="nan-{state}">{esc(word)}</span> {esc(text)}'
             for state in STATE_ORDER for word, text in means[state]]
    items.append(f'<span data-partial="yes" style="border-style:dashed">{esc(PARTIAL)}</span> '
                 f"{esc('(dashed border): another path of the case did not run; the word covers the paths that ran')}")
    return f'<p class="nan-legend">Cells: {" · ".join(items)}</p>'


def _reason(r: TestRecord) -> str:
    """Why a test did not run, from its recorded NotRun (never from pytest's skip words)."""
    return (r.not_run or unrecorded(r)).reason


def _cell(case_id: str, by_path: Mapping[str, TestRecord]) -> str:
    key = _cell_key(list(by_path.values()))
    state, failing, part = key
    detail = "; ".join(f"{p} {r.outcome}" + (f" ({_reason(r)})" if r.outcome in NOT_RAN else "")
                       for p, r in sorted(by_path.items())) or "not run"
    title = esc(f"{case_id}: {detail}")
    return (f'<td class="nan-cell nan-{state}" data-case="{esc(case_id)}" data-state="{state}" '
            f'data-partial="{"yes" if part else "no"}" data-failing="{esc(" ".join(failing))}" title="{title}">'
            f"{esc(_word(key))}</td>")


def _path_of(r: TestRecord) -> str:
    """The path a family test ran on: from its checks, else its id's last token."""
    if r.path:
        return r.path
    tail = r.id.rsplit("[", 1)[-1].rstrip("]")
    return tail.rsplit("-", 1)[-1] if "-" in tail else "?"


def _family_records(results: Iterable[TestRecord], family: str) -> list[TestRecord]:
    return [r for r in results if r.params is not None and r.params.family == family]


def _key(p: CaseParams, names: tuple[str, str]) -> tuple[str, ...]:
    """A grid row's or column's key: two fields of the case, its shape spelt 4x128."""
    return tuple("x".join(map(str, p.shape)) if n == "shape" else str(getattr(p, n, "")) for n in names)


def _state_counts(cases: Iterable[Mapping[str, TestRecord]]) -> str:
    """How many cases got each word (the cells' words, a partial one with its mark); then which paths did not run and
    why."""
    tally: Counter[tuple[str, tuple[str, ...], bool]] = Counter()
    missing: Counter[tuple[str, str]] = Counter()
    for by_path in cases:
        tally[_cell_key(list(by_path.values()))] += 1
        missing.update((p, _reason(r)) for p, r in by_path.items() if r.outcome in NOT_RAN)
    order = sorted(tally, key=lambda k: (STATE_ORDER.index(k[0]), [_path_rank(p) for p in k[1]], k[2]))
    parts = [f"{tally[k]} {_word(k)}" for k in order]
    gaps = "; ".join(f"{p} not run for {n} case(s): {because}" for (p, because), n in sorted(missing.items()))
    note = f"; {PARTIAL} = only the paths that ran" if any(k[2] for k in tally) else ""
    return (f": {', '.join(parts)}" if parts else "") + (f"{note}; {gaps}" if gaps else "")


def _ran(cases: Mapping[str, Mapping[str, TestRecord]], total: int | None = None) -> str:
    """'R of N cases run' and the state counts: a case ran when one of its paths did (not all were skipped)."""
    ran = sum(1 for by_path in cases.values() if any(r.outcome not in NOT_RAN for r in by_path.values()))
    return f"{ran} of {len(cases) if total is None else total} cases run{esc(_state_counts(cases.values()))}"


def _by_case(records: Iterable[TestRecord]) -> dict[str, dict[str, TestRecord]]:
    table: dict[str, dict[str, TestRecord]] = {}
    for r in records:
        assert r.params is not None
        table.setdefault(r.params.case_id, {})[_path_of(r)] = r
    return table


def grid_section(family: Family, grouping: Grid, records: Sequence[TestRecord]) -> str:
    """Rows keyed by two fields, columns by two more, in the order the cases first appear."""
    cases = _by_case(records)
    first: dict[str, CaseParams] = {}
    for case in family.cases(Context()):  # every case of the family, so what did not run shows as "–"
        first[str(case)] = family.params(case)
    for r in records:
        first.setdefault(r.params.case_id, r.params)  # type: ignore[union-attr,arg-type]
    where = {(_key(p, grouping.rows), _key(p, grouping.cols)): case_id for case_id, p in first.items()}
    row_keys = list(dict.fromkeys(rk for rk, _ in where))
    col_keys = list(dict.fromkeys(ck for _, ck in where))
    outer = list(dict.fromkeys(c[0] for c in col_keys))
    head1 = "".join(f'<th colspan="{sum(1 for c in col_keys if c[0] == o)}">{esc(o)}</th>' for o in outer)
    head2 = "".join(f"<th>{esc(c[1])}</th>" for o in outer for c in col_keys if c[0] == o)
    body = []
    for rk in row_keys:
        cells = "".join(
            _cell(where.get((rk, c), f"{rk} {c}"), cases.get(where.get((rk, c), ""), {}))
            for o in outer for c in col_keys if c[0] == o
        )
        body.append(f"<tr><th>{esc(rk[0])}</th><th>{esc(rk[1])}</th>{cells}</tr>")
    return (
        f'{heading(family.name, family.description, _ran(cases, len(first)))}'
        f'<table id="nan-grid-{esc(family.name)}" class="nan-grid"><thead>'
        f'<tr><th rowspan="2">{esc(grouping.rows[0])}</th><th rowspan="2">{esc(grouping.rows[1])}</th>'
        f"{head1}</tr><tr>{head2}</tr></thead><tbody>{''.join(body)}</tbody></table>{legend()}"
    )


def class_section(family: Family, grouping: ClassTable, records: Sequence[TestRecord]) -> str:
    """Class x dtype from per-class rows only: a class fails when a row of that class is wrong, passes when its
    rows were checked and right. Mixed rows (every class together) get their own line: they prove no class."""
    cells: dict[tuple[str, str], dict[str, TestRecord]] = {}
    mixed: dict[str, dict[str, TestRecord]] = {}
    dtypes: list[str] = []
    for r in records:
        p = r.params
        assert p is not None
        dtypes += [p.dtype] if p.dtype not in dtypes else []
        label = f"{p.case_id} {_path_of(r)}"
        if p.layout != "rows":
            mixed.setdefault(p.dtype, {})[label] = r
            continue
        wrong = {v.name for c in r.checks for w in c.wrong_rows if (v := c.params.row_class(w.row))}
        checked = bool(r.checks) and all(c.got_total is not None and not c.problems and c.params.row_classes
                                         for c in r.checks)  # an older file records no row classes: no per-row answer
        covered = [p.detail] if p.detail in grouping.classes else grouping.classes  # a one-class case covers it
        for cls in covered:
            if r.outcome in FAILED_OUTCOMES and checked:
                outcome = "failed" if cls in wrong else "passed"
            else:
                outcome = r.outcome  # no per-row answer (an exception, a side effect): the whole case's outcome
            cells.setdefault((cls, p.dtype), {})[label] = r.with_(outcome=outcome)
    if not records:
        return ""
    head = "".join(f"<th>{esc(d)}</th>" for d in dtypes)
    body = [f"<tr><th>{esc(cls)}{' (NaN)' if cls in grouping.nan_classes else ''}</th>"
            + "".join(_cell(f"{cls} {d}", cells.get((cls, d), {})) for d in dtypes) + "</tr>"
            for cls in grouping.classes]
    body.append("<tr><th>mixed rows</th>" + "".join(_cell(f"mixed {d}", mixed.get(d, {})) for d in dtypes) + "</tr>")
    cases = _by_case(records)
    return (f'{heading(family.name, family.description, _ran(cases))}<table id="nan-ieee-table">'
            "<thead><tr><th>IEEE class</th>"
            f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{legend()}")


def totals_section(family: Family, records: Sequence[TestRecord]) -> str:
    """One line per check: patterns (R*V), NaNs expected, NaNs counted, outcome."""
    lines = []
    for r in records:
        for c in r.checks:
            patterns = math.prod(c.params.shape)
            got = "?" if c.got_total is None else f"{c.got_total:,}"
            expected = "?" if c.expected_total is None else f"{c.expected_total:,}"
            state = "waived" if r.outcome == "xfailed" else ("pass" if c.ok else "fail")
            lines.append(
                f'<li data-case="{esc(c.params.case_id)}" data-state="{state}">'
                f'<span class="nan-{state}">{STATE_TEXT[state]}</span> {esc(c.params.case_id)} '
                f"({esc(c.path)}): {patterns:,} patterns, {expected} NaNs expected, {got} NaNs counted</li>"
            )
        if not r.checks:
            state = cell_state([r.outcome])
            because = f": {_reason(r)}" if r.outcome in NOT_RAN else ""
            lines.append(f'<li data-case="{esc(r.params.case_id if r.params else r.id)}" '
                         f'data-state="{state}"><span class="nan-{state}">{STATE_TEXT[state]}</span> '
                         f"{esc(r.id + because)}</li>")
    cases = _by_case(records)
    return f'{heading(family.name, family.description, _ran(cases))}<ul id="nan-sweeps">{"".join(lines)}</ul>'


def heading(name: str, description: str, counts: str) -> str:
    """A family section's heading: its name, what it is (its Family's own description) and its counts (markup)."""
    return f'<h3 id="nan-family-{esc(name)}">{esc(name)}: {esc(description)} ({counts})</h3>'


def tally_section(name: str, description: str, records: Sequence[TestRecord]) -> str:
    cases = _by_case(records)
    return heading(name, description, f"{len(cases)} cases{esc(_state_counts(cases.values()))}")


def family_sections(results: Sequence[TestRecord], families: Sequence[Family]) -> str:
    parts = []
    for family in families:
        records = _family_records(results, family.name)
        if not records:
            continue
        g = family.summary
        if isinstance(g, Grid):
            parts.append(grid_section(family, g, records))
        elif isinstance(g, ClassTable):
            parts.append(class_section(family, g, records))
        elif isinstance(g, Totals):
            parts.append(totals_section(family, records))
        else:
            parts.append(tally_section(family.name, family.description, records))
    known = {f.name for f in families}
    others = sorted({r.params.family for r in results if r.params is not None and r.params.family not in known})
    for name in others:  # contract, aggregate, property...: not case families, still counted where they ran
        parts.append(tally_section(name, f"{name} checks", _family_records(results, name)))
    return "".join(parts)


def planted_table(results: Sequence[TestRecord]) -> str:
    """The self-test's proof (only in runs that include it): each planted bug and the first catching case."""
    verdicts = sorted((r.planted for r in results if r.planted),
                      key=lambda v: (v.get("bug_class", ""), v.get("variant", "")))
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
            f'<tr data-case="{esc(str(v.get("variant", "")))}" data-state="{state}">'
            f'<td>{esc(str(v.get("bug_class", "")))}</td><td>{esc(str(v.get("variant", "")))}</td>'
            f'<td class="nan-{state}">{text}</td><td style="text-align:left">{esc(first)}</td></tr>'
        )
    scored = [v for v in verdicts if v.get("applies", True)]
    caught = sum(bool(v.get("caught")) for v in scored)
    return (f"<h3>Planted bugs caught: {caught}/{len(scored)}</h3>"
            '<table id="nan-planted"><thead><tr><th>class</th><th>variant</th><th>verdict</th>'
            f"<th>first catching case</th></tr></thead><tbody>{''.join(rows)}</tbody></table>")


def _head(m: Summary) -> str:
    """The verdict, tally, notes and every group not run with its command: what a reviewer reads first."""
    css = {"PASS": "pass", "FAIL": "fail"}.get(m.verdict, "incomplete")
    notes = "".join(f'<p class="nan-note">{esc(label)}: ' + (f"<code>{esc(code)}</code> " if code else "")
                    + f"{esc(words)}</p>" for label, code, words in m.notes)
    items = not_run_lines(m.not_run, m.gaps, esc, lambda c: f"<code>{esc(c)}</code>")
    gap_list = (f'<p id="nan-not-run-head">Not run: {m.not_run_tests} test(s), in {len(items)} group(s); this verdict '
                f'does not cover them:</p><ul id="nan-gaps">{"".join(f"<li>{i}</li>" for i in items)}</ul>'
                if items else "")
    return (f'<p class="nan-headline" id="nan-verdict"><span class="nan-verdict-{css}">{esc(m.verdict)}</span>: '
            f"kernel <code>{esc(m.kernel)}</code> on {esc(m.backend)}</p>"
            f'<p id="nan-tally">{m.tests} tests: {esc(m.tally)}</p>{notes}{gap_list}')


def headline(records: Sequence[TestRecord], **facts: Any) -> str:
    """The head of these records' summary (summary_model.build's facts: kernel, backend, how the run ended...)."""
    return _head(build(records, **facts))


def _failures(m: Summary) -> str:
    """Every failing test by id, verdict, rerun label and its most telling line; crashes and contract cases included."""
    if not m.failures:
        return '<p id="nan-failures">No failures.</p>'
    by = ", ".join(f"{esc(k)} {n}" for k, n in m.failed_by)
    reruns = f"; rerun in a fresh process: {esc(m.reruns)} (still failures)" if m.reruns else ""
    items = [f"<li><b>{esc(f.verdict)}</b>" + (f' <i class="nan-flaky" data-flaky="{esc(f.kind)}">[{esc(f.rerun)}]</i>'
                                               if f.rerun else "") + f" <code>{esc(f.id)}</code>: {esc(f.why)}</li>"
             for f in m.failures]
    shown, folded = items[:SHOWN_FAILURES], items[SHOWN_FAILURES:]
    more = (f'<details id="nan-more-failures"><summary>{len(folded)} more failed test(s)</summary>'
            f'<ul>{"".join(folded)}</ul></details>' if folded else "")
    return (f'<h3>Failed tests ({len(m.failures)})</h3><p id="nan-failed-by-test">{by}{reruns}</p>'
            f'<ul id="nan-failures">{"".join(shown)}</ul>{more}')


def failure_list(records: Sequence[TestRecord]) -> str:
    """The failures of these records, as the summary lists them."""
    return _failures(build(records))


def render(records: Sequence[TestRecord], families: Sequence[Family], model: Summary | None = None, *,
           links: str = "", **facts: Any) -> str:
    """The summary model (built from `facts` when not given), then the families and planted bugs of `records`."""
    m = model or build(records, **facts)
    diagnosis = diagnosis_block([Diagnosis.from_dict(d) for d in m.diagnosis])  # the HTML's own items: reports.tables
    return (f'{STYLE}<div class="nan-summary">{_head(m)}{diagnosis}{links}{_failures(m)}'
            f"{family_sections(records, families)}{planted_table(records)}</div>")
