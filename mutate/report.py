"""The mutation run's results: mutation.json (score, counts, every mutant) and mutation.html, score first.

Score = killed / (killed + survived + no coverage), always printed with what it covers; not viable, equivalent and
duplicate mutants are listed, never scored; any unjudged mutant makes the run INCOMPLETE. Survivors come first.
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

from mutate.classify import (
    DUPLICATE, EQUIVALENT, KILLED, NO_COVERAGE, NOT_RUN, NOT_VIABLE, SCORED, STATUSES, SURVIVED, TIMED_OUT, UNJUDGED,
)
from mutate.operators import OPERATORS

SCHEMA = "mutate-results/1"


def score(counts: dict[str, int]) -> float | None:
    """killed / (killed + survived + no coverage); None when nothing was judged."""
    judged = sum(counts.get(s, 0) for s in SCORED)
    return counts.get(KILLED, 0) / judged if judged else None


def headline(doc: dict[str, Any]) -> str:
    """The score with what it covers, e.g. "score 96% of 280 judged (of 306: 13 not viable, 13 equivalent
    (proved), 0 not run)", and INCOMPLETE first when any mutant was left unjudged."""
    c, value = doc["counts"], doc["score"]
    judged = sum(c.get(s, 0) for s in SCORED)
    parts = [f"{c.get(NOT_VIABLE, 0)} not viable", f"{c.get(EQUIVALENT, 0)} equivalent (proved)",
             f"{c.get(DUPLICATE, 0)} duplicate", f"{c.get(NOT_RUN, 0) + c.get(TIMED_OUT, 0)} not judged"]
    of = f"of {judged} judged (of {len(doc['mutants'])}: {', '.join(parts)})"
    text = f"score n/a: nothing judged {of[len(f'of {judged} judged '):]}" if value is None \
        else f"score {value:.0%} {of}"
    return ("INCOMPLETE: " if not doc["complete"] else "") + text


def judgement(equivalence: dict[str, Any] | None) -> str:
    """A survivor's honest equivalence verdict, in words."""
    if not equivalence:
        return "not judged (no equivalence trials)"
    if "error" in equivalence:
        return f"not judged ({equivalence['error']})"
    if equivalence.get("differs"):
        return (f"real blind spot: differs on {equivalence['input']} ({equivalence['path']} path): original "
                f"{_short(equivalence['original'])}, mutant {_short(equivalence['mutant'])}"
                + (", input modified" if equivalence.get("input_modified") else "")
                + f" (seed {equivalence['seed']}, trial {equivalence['trial']})")
    n, seed = equivalence.get("trials"), equivalence.get("seed")
    if equivalence.get("reached") is False:
        return (f"not reached on this backend: the mutated lines never ran in {n} trials (seed {seed}); judge it on "
                "a device that executes that code")
    return f"plausibly equivalent, not proven (no differing input in {n} trials, seed {seed})"


def _short(outcome: dict[str, Any]) -> str:
    if "counts" in outcome:
        counts = outcome["counts"]
        shown = ", ".join(map(str, counts[:6])) + (", ..." if len(counts) > 6 else "")
        return f"[{shown}] {outcome.get('dtype', '')}".strip()
    return outcome.get("raised", outcome.get("value", "?"))


def document(entries: Sequence[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    """The results document: survivors first, then killed, timeouts, not run, not viable; ids within a status."""
    counts = {s: 0 for s in STATUSES}
    for e in entries:
        counts[e["status"]] = counts.get(e["status"], 0) + 1
    ordered = sorted(entries, key=lambda e: (STATUSES.index(e["status"]), e["location_key"], e["id"]))
    value = score(counts)
    complete = not any(counts.get(s, 0) for s in UNJUDGED)
    return {"schema": SCHEMA, **meta, "score": None if value is None else round(value, 4), "counts": counts,
            "complete": complete,
            "killed_by_crash": sum(1 for e in entries if e["status"] == KILLED and e.get("crash")),
            "mutants": [{k: v for k, v in e.items() if k != "location_key"} for e in ordered]}


def write(doc: dict[str, Any], out: Path) -> None:
    """mutation.json (replaced atomically: the nightly reads it) and mutation.html in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "mutation.json.tmp"
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    tmp.replace(out / "mutation.json")
    (out / "mutation.html").write_text(html(doc), encoding="utf-8")


STYLE = """<style>
body{font-family:sans-serif;color:#111;margin:16px}
table{border-collapse:collapse;margin:6px 0 14px}
th,td{border:1px solid #888;padding:2px 6px;font-size:12px;text-align:left;vertical-align:top}
.headline{font-size:18px;font-weight:bold}
.good{color:#0a6b0a}.bad{color:#b00000}.warn{color:#8a5a00}
td.survived{background:#e65c5c;color:#fff;font-weight:bold}td.killed{background:#9be39b}
td.timeout,td.not_run{background:#f0b400}td.not_viable,td.equivalent,td.duplicate{background:#cfcfcf}
td.no_coverage{background:#e6a05c;font-weight:bold}
pre{margin:2px 0;font-size:11px;background:#f6f6f6;padding:4px}
</style>"""


def _banner(doc: dict[str, Any]) -> str:
    c, value = doc["counts"], doc["score"]
    judged = sum(c.get(s, 0) for s in SCORED)
    if value is None:
        verdict, css = "NO SCORE (nothing judged)", "warn"
    else:
        verdict, css = f"MUTATION SCORE {value:.0%}", "good" if c.get(SURVIVED, 0) + c.get(NO_COVERAGE, 0) == 0 \
            else "bad"
    unfinished = sum(c.get(s, 0) for s in UNJUDGED)
    note = (f' <span class="warn">INCOMPLETE: {unfinished} mutant(s) not judged (timeout or budget)</span>'
            if unfinished else "")
    tally = ", ".join(f"{c.get(s, 0)} {s.replace('_', ' ')}" for s in STATUSES)
    return (f'<p class="headline" id="mut-verdict"><span class="{css}">{escape(verdict)}</span>: kernel '
            f"<code>{escape(doc['kernel'])}</code> on {escape(doc['device'])}{note}</p>"
            f'<p id="mut-headline">{escape(headline(doc))}</p>'
            f'<p id="mut-tally">{len(doc["mutants"])} mutants: {escape(tally)} '
            f"({c.get(KILLED, 0)} killed of {judged} judged; {doc['killed_by_crash']} killed by a crash); "
            f"{len(doc.get('not_compiling', []))} did not compile, {doc.get('duplicates', 0)} duplicates dropped; "
            f"{doc['seconds']:.0f} s wall, budget {doc['budget_s']} s, {doc['jobs']} job(s)</p>"
            f'<p id="mut-compiled">{escape(compiled_line(doc))}</p>')


def compiled_line(doc: dict[str, Any]) -> str:
    """What the compiled-code proofs compared (mutate.tce), or why there were none."""
    info = doc.get("compiled") or {}
    if not info:
        return "compiled-code proofs: none (no kernel mutant was compiled)"
    if info.get("off"):
        return f"compiled-code proofs: none ({info['off']})"
    where = "on the current card" if info["target"] == "device" else "for a CUDA sm_90 target, compiled on the CPU"
    return (f"compiled-code proofs: {info['level']} compared {where}, "
            f"{info['specs']} specialization(s) of {len(info['kernels'])} kernel(s) the suite launches; "
            f"{info.get('when', '')}")


def _row(m: dict[str, Any], diff: bool) -> str:
    killer = m.get("killer") or {}
    by = (f"{escape(killer.get('family') or '-')}: <code>{escape(killer.get('nodeid', ''))}</code> "
          f"({escape(killer.get('verdict', ''))}{', crash' if killer.get('crash') else ''})") if killer else ""
    detail = escape(m.get("judgement") or by or m.get("why", ""))
    return (f'<tr><td><code>{m["id"]}</code></td><td class="{m["status"]}">{m["status"].replace("_", " ")}</td>'
            f"<td>{escape(m['operator'])}</td><td>{escape(m['location'])}</td><td>{escape(m['change'])}</td>"
            f"<td>{detail if not by else by}</td><td>{m['seconds']:.0f}</td></tr>"
            + (f'<tr><td colspan="7"><pre>{escape(m["diff"])}</pre></td></tr>' if diff else ""))


def html(doc: dict[str, Any]) -> str:
    """The page: banner, survivors with diffs and judgements, then everything else, then the operator table."""
    head = ("<tr><th>id</th><th>status</th><th>operator</th><th>where</th><th>change</th>"
            "<th>judgement / killed by / why</th><th>s</th></tr>")
    survivors = [m for m in doc["mutants"] if m["status"] in (SURVIVED, NO_COVERAGE)]
    rest = [m for m in doc["mutants"] if m["status"] not in (SURVIVED, NO_COVERAGE)]
    per_op: dict[str, dict[str, int]] = {}
    for m in doc["mutants"]:
        per_op.setdefault(m["operator"], {}).setdefault(m["status"], 0)
        per_op[m["operator"]][m["status"]] += 1
    ops = "".join(f"<tr><td>{op.name}</td><td>{escape(op.reason)}</td>"
                  + "".join(f"<td>{per_op.get(op.name, {}).get(s, 0)}</td>" for s in STATUSES) + "</tr>"
                  for op in OPERATORS)
    baseline = doc.get("baseline") or {}
    excluded = "".join(f"<li><code>{escape(n)}</code></li>" for n in baseline.get("failed", []))
    flaky = "".join(f"<li><code>{escape(n)}</code></li>" for n in doc.get("flaky_original", []))
    nc = "".join(f"<li><code>{escape(n['id'])}</code> {escape(n['operator'])} {escape(n['location'])}: "
                 f"{escape(n['error'])}</li>" for n in doc.get("not_compiling", []))
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>mutation score: {escape(doc['kernel'])}"
            f"</title>{STYLE}</head><body>{_banner(doc)}"
            f"<p>Suite: {escape(' then '.join(s['name'] + ' (' + ' '.join(s['args']) + ')' for s in doc['suite']))}; "
            f"source <code>{escape(doc['file'])}</code>; baseline: {escape(baseline.get('status', ''))}</p>"
            + (f"<p>Tests the original already fails (deselected for every mutant):</p><ul>{excluded}</ul>"
               if excluded else "")
            + (f"<p>Tests the original failed when a kill by a crash was confirmed (flaky for the original; "
               f"deselected from then on):</p><ul>{flaky}</ul>" if flaky else "")
            + f"<h3 id='mut-survivors'>Survivors: the suite's blind spots ({len(survivors)})</h3>"
            + (f"<table>{head}{''.join(_row(m, True) for m in survivors)}</table>" if survivors else "<p>none</p>")
            + f"<h3>Every other mutant ({len(rest)})</h3><table>{head}{''.join(_row(m, False) for m in rest)}</table>"
            + "<h3>Operators</h3><table><tr><th>operator</th><th>mistake it models</th>"
            + "".join(f"<th>{s.replace('_', ' ')}</th>" for s in STATUSES) + f"</tr>{ops}</table>"
            + (f"<h3>Mutants that did not compile ({len(doc['not_compiling'])})</h3><ul>{nc}</ul>" if nc else "")
            + "</body></html>\n")
