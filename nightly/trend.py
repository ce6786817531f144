"""python -m nightly.trend ROOT [--last N] [--out DIR]: how the last N nights went, on one page with a plot.

Reads the night folders under ROOT (`YYYY-MM-DD[-HHMMSS]`, as `python -m nightly` writes them): verdict counts per
night, the cases newly failing and newly fixed between consecutive nights, each night's kernel commit (environment
"Kernel commit", marked where it changed), the tests failing now with their last good and first failing commit
(nightly.last_good, rebuilt from every judged night under ROOT), and, where a night has bench.json, the benchmark's
ratios per shape (share of the read roofline reached, speed-up over the anchor kernel) over time. Writes
OUT/trend.html and OUT/trend.png (default OUT: ROOT/trend). A night whose results.json cannot be read or is malformed
(as reports.results.validate judges it) is shown as "no results" with the reason, and none of its cases are counted.
Exit 0 when the page was written, 2 when ROOT holds no night with results or OUT cannot be written.
"""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nightly import last_good
from nightly.nights import nights, read_json, read_nightly
from reports.markup import esc
from reports.results import Results, ResultsError, load, write_text_atomic
from reports.text import why
from verdict.record import TestRecord

DEFAULT_LAST = 14
VERDICT_COLOURS = {"pass": "#4caf50", "not_run": "#bdbdbd", "waived": "#7e9bd8", "refused": "#ff9800",
                   "wrong_counts": "#e53935", "side_effect": "#8e24aa", "call_site": "#6d4c41", "error": "#fb8c00",
                   "timeout": "#fdd835", "device_fault": "#000000", "crash": "#b71c1c"}


@dataclass
class NightData:
    """One night folder: its results (None when unreadable, with the reason), benchmark and nightly.json."""

    name: str
    folder: Path
    run: Results | None
    problem: str = ""  # why results.json could not be read
    bench: dict[str, Any] | None = None
    nightly: dict[str, Any] | None = None

    @property
    def records(self) -> dict[str, TestRecord]:
        return self.run.by_nodeid() if self.run else {}

    @property
    def commit(self) -> str:
        return (self.run.environment.get("Kernel commit") if self.run else None) or "unknown"

    @property
    def finished(self) -> bool:
        return bool(self.run and self.run.finished)

    @property
    def verdicts(self) -> dict[str, int]:
        return dict(self.run.verdicts) if self.run else {}

    @property
    def failing(self) -> list[str]:
        return sorted(r.nodeid for r in self.run.failing()) if self.run else []


@dataclass
class Change:
    """What changed from one night to the next: each test with its outcome the night before."""

    before: NightData
    after: NightData
    newly_failing: list[tuple[TestRecord, str]] = field(default_factory=list)
    newly_fixed: list[tuple[TestRecord, str]] = field(default_factory=list)


def short(commit: str) -> str:
    head, _, rest = commit.partition(" ")
    return head[:10] + (" " + rest if rest else "")


def read_night(folder: Path) -> NightData:
    night = NightData(folder.name, folder, None, nightly=read_nightly(folder))
    try:
        night.run = load(folder / "results.json")
    except ResultsError as exc:
        night.problem = str(exc).replace(f"{folder / 'results.json'}: ", "")
    bench = read_json(folder / "bench.json")
    if isinstance(bench, dict) and isinstance(bench.get("rows"), list):
        night.bench = bench
    return night


def changes(history: Sequence[NightData]) -> list[Change]:
    """Newly failing (failed or error now, not the night before) and newly fixed (failing before, passed now)."""
    out = []
    readable = [n for n in history if n.run is not None]
    for before, after in zip(readable, readable[1:]):
        old, new = before.records, after.records
        ch = Change(before, after)
        for nodeid, record in sorted(new.items()):
            was = old[nodeid] if nodeid in old else None
            if record.failed and not (was and was.failed):
                ch.newly_failing.append((record, was.outcome if was else "absent"))
            elif record.outcome == "passed" and was and was.failed:
                ch.newly_fixed.append((record, was.outcome))
        out.append(ch)
    return out


def bench_series(history: Sequence[NightData]) -> dict[str, dict[str, dict[str, float]]]:
    """shape key -> night -> ratios (roofline_fraction, speedup_vs_anchor, kernel us) of meaningful timings."""
    series: dict[str, dict[str, dict[str, float]]] = {}
    for n in history:
        if not n.bench or not n.bench.get("timings_meaningful", False):
            continue
        for row in n.bench["rows"]:
            ratios = row.get("ratios") or {}
            series.setdefault(str(row.get("key")), {})[n.name] = {
                "roofline_fraction": float(ratios.get("roofline_fraction") or 0.0),
                "speedup_vs_anchor": float(ratios.get("speedup_vs_anchor") or 0.0),
                "kernel_us": float((row.get("us") or {}).get("kernel") or 0.0),
            }
    return series


def plot(history: Sequence[NightData], series: dict[str, dict[str, dict[str, float]]], path: Path) -> None:
    """Verdict counts per night (stacked bars, commit changes marked) and, with benchmarks, roofline share per shape."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n.name for n in history]
    rows = 2 if series else 1
    fig, axes = plt.subplots(rows, 1, figsize=(max(7.0, 1.0 * len(names) + 3), 4.2 * rows), squeeze=False)
    ax = axes[0][0]
    verdicts = [v for v in VERDICT_COLOURS if any(n.verdicts.get(v) for n in history)]
    bottom = [0] * len(history)
    for v in verdicts:
        heights = [n.verdicts.get(v, 0) for n in history]
        ax.bar(range(len(history)), heights, bottom=bottom, color=VERDICT_COLOURS[v], label=v.replace("_", " "))
        bottom = [b + h for b, h in zip(bottom, heights)]
    for i, n in enumerate(history):  # failures are few next to hundreds of passes: say how many on each bar
        ax.text(i, bottom[i], f"{len(n.failing)} failing", ha="center", va="bottom", fontsize=8)
        if n.run is None or not n.finished:
            ax.text(i, max(bottom or [1]) * 0.02, "not finished" if n.run is not None else "no results",
                    rotation=90, ha="center", va="bottom", fontsize=8)
        if i and n.commit != history[i - 1].commit:
            ax.axvline(i - 0.5, color="#333", linestyle="--", linewidth=1)
            ax.text(i - 0.45, max(bottom or [1]) * 0.98, short(n.commit).split(" ")[0], rotation=90, va="top",
                    fontsize=8)
    ax.set_xticks(range(len(history)), names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("tests")
    ax.set_title("verdicts per night (dashed: kernel commit changed)")
    if verdicts:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    if series:
        bx = axes[1][0]
        for key, per_night in sorted(series.items()):
            xs = [i for i, n in enumerate(names) if n in per_night]
            bx.plot(xs, [per_night[names[i]]["roofline_fraction"] for i in xs], marker="o", label=key)
        bx.set_xticks(range(len(history)), names, rotation=30, ha="right", fontsize=8)
        bx.set_ylabel("roofline time / kernel time")
        bx.set_title("benchmark: share of the read roofline per shape (higher is faster)")
        bx.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=90)
    plt.close(fig)


def page(root: Path, history: Sequence[NightData], found: Sequence[Change],
         series: dict[str, dict[str, dict[str, float]]], png: str, good: str = "", up: str = "") -> str:
    """trend.html: the nights, the changes between consecutive nights, the benchmark ratios; `up` leads from the
    page's folder to ROOT."""
    table, sections, bench = _nights_table(history, found, up), _change_sections(found), _bench_table(history, series)
    return (
        '<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>NaN-count nightly trend</title><style>'
        "body{font-family:Helvetica,Arial,sans-serif;font-size:13px;color:#111;margin:16px}"
        "table{border-collapse:collapse;margin:6px 0 14px}td,th{border:1px solid #aaa;padding:2px 6px;font-size:12px}"
        ".nan-commit-changed{background:#fff3c4}</style></head><body>\n"
        f"<h1>NaN-count nightly trend</h1><p>{len(history)} night(s) under <code>{esc(root)}</code>, oldest first</p>\n"
        f'<p><img src="{esc(png)}" alt="verdicts per night and benchmark ratios"></p>\n'
        f"<h2>Nights</h2>\n{table}\n{good}\n<h2>Changes between consecutive nights</h2>\n"
        f"{''.join(sections) or '<p>one night only</p>'}\n"
        f"{bench}\n</body></html>\n"
    )


def _nights_table(history: Sequence[NightData], found: Sequence[Change], up: str) -> str:
    """One row per night: its commit (marked where it changed), how its run ended, its verdicts and changes."""
    verdict_names = [v for v in VERDICT_COLOURS if any(n.verdicts.get(v) for n in history)]
    head = "".join(f"<th>{esc(v.replace('_', ' '))}</th>" for v in verdict_names)
    by_after = {c.after.name: c for c in found}
    rows = []
    for i, n in enumerate(history):
        ch = by_after.get(n.name)
        changed = i > 0 and n.run is not None and history[i - 1].run is not None and n.commit != history[i - 1].commit
        state = ("no results: " + n.problem) if n.run is None else ("finished" if n.finished
                                                                   else f"NOT finished ({n.run.ended})")
        if n.run is not None:
            state += f"; kernel {n.run.kernel} on {n.run.backend}"
        judged = (n.nightly or {}).get("verdict", "")
        base = (n.nightly or {}).get("baseline")
        counts = "".join(f"<td>{n.verdicts.get(v, 0)}</td>" for v in verdict_names)
        rows.append(
            f'<tr data-night="{esc(n.name)}"><td><a href="{esc(up + n.name)}/precision.html">{esc(n.name)}</a></td>'
            f'<td class="{"nan-commit-changed" if changed else ""}"><code>{esc(short(n.commit))}</code>'
            f"{' <b>changed</b>' if changed else ''}</td><td>{esc(state)}</td>{counts}"
            f"<td>{len(n.failing)}</td><td>{len(ch.newly_failing) if ch else ''}</td>"
            f"<td>{len(ch.newly_fixed) if ch else ''}</td>"
            f"<td>{esc(judged)}{' vs ' + esc(base) if base else ''}</td></tr>")
    return (f'<table id="nan-nights"><thead><tr><th>night</th><th>kernel commit</th><th>run</th>{head}'
            "<th>failing</th><th>newly failing</th><th>newly fixed</th><th>nightly verdict</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def _change_sections(found: Sequence[Change]) -> list[str]:
    """One section per change between consecutive nights: the tests newly failing and newly fixed."""
    sections = []
    for ch in found:
        commit = (f"kernel commit changed: <code>{esc(short(ch.before.commit))}</code> &rarr; "
                  f"<code>{esc(short(ch.after.commit))}</code>" if ch.before.commit != ch.after.commit
                  else f"same kernel commit <code>{esc(short(ch.after.commit))}</code>")
        partial = ("" if ch.before.finished and ch.after.finished
                   else " (a night did not finish: the lists may be partial)")
        failing = "".join(f"<li><b>{esc(r.verdict)}</b> <code>{esc(r.nodeid)}</code> "
                          f"(was {esc(was)}): {esc(why(r))}</li>" for r, was in ch.newly_failing)
        fixed = "".join(f"<li><code>{esc(r.nodeid)}</code> (was {esc(was)})</li>" for r, was in ch.newly_fixed)
        sections.append(
            f'<section class="nan-change" data-from="{esc(ch.before.name)}" data-to="{esc(ch.after.name)}">'
            f"<h3>{esc(ch.before.name)} &rarr; {esc(ch.after.name)}{esc(partial)}</h3><p>{commit}</p>"
            f'<p>newly failing: {len(ch.newly_failing)}</p><ul class="nan-newly-failing">{failing}</ul>'
            f'<p>newly fixed: {len(ch.newly_fixed)}</p><ul class="nan-newly-fixed">{fixed}</ul></section>')
    return sections


def _bench_table(history: Sequence[NightData], series: dict[str, dict[str, dict[str, float]]]) -> str:
    """The benchmark ratios per shape and night; empty without benchmark results."""
    if not series:
        return ""
    shown = [n.name for n in history if any(n.name in per for per in series.values())]
    rows = "".join(
        f"<tr><td>{esc(key)}</td>" + "".join(
            f"<td>{per[n]['roofline_fraction']:.2f} / {per[n]['speedup_vs_anchor']:.2f}x</td>" if n in per
            else "<td>–</td>" for n in shown) + "</tr>"
        for key, per in sorted(series.items()))
    return ("<h2>Benchmark ratios per shape</h2><p>each cell: share of the read roofline (roofline time / kernel "
            "time) / speed-up over the anchor kernel; nights without bench.json, or with interpreter timings, "
            'are left out</p><table id="nan-bench-trend"><thead><tr><th>shape</th>'
            + "".join(f"<th>{esc(n)}</th>" for n in shown) + f"</tr></thead><tbody>{rows}</tbody></table>")


def build(root: Path, out: Path, last: int = DEFAULT_LAST) -> Path:
    """Write OUT/trend.html and OUT/trend.png from the last `last` nights; returns the page's path."""
    folders = [f for f in nights(root) if (f / "results.json").exists() or (f / "nightly.json").exists()][-last:]
    if not folders:
        raise FileNotFoundError(f"{root}: no night folders (YYYY-MM-DD[-HHMMSS]) with results")
    history = [read_night(f) for f in folders]
    found = changes(history)
    series = bench_series(history)
    plot(history, series, out / "trend.png")
    up = Path(os.path.relpath(root.resolve(), out.resolve())).as_posix()  # from OUT to each night's report
    up = "" if up == "." else up + "/"
    html = page(root, history, found, series, "trend.png", last_good.html_section(last_good.rebuild(root)), up)
    write_text_atomic(out / "trend.html", html)
    return out / "trend.html"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nightly.trend", description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="the nightly's root (out/nightly)")
    parser.add_argument("--last", type=int, default=DEFAULT_LAST, help=f"nights to show (default {DEFAULT_LAST})")
    parser.add_argument("--out", type=Path, default=None, help="output folder (default ROOT/trend)")
    args = parser.parse_args(argv)
    try:
        path = build(args.root, args.out or args.root / "trend", max(1, args.last))
    except OSError as exc:  # no nights (FileNotFoundError), or OUT is not a writable folder
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path} and {path.with_suffix('.png')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
