"""python -m reports.compare BASELINE.json CURRENT.json: what broke, what got fixed, what appeared or vanished.

Exit status: 1 when any case regressed (passed before, failed or errored now), 2 when a file is unusable, else 0.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reports.records import short_message
from reports.results import ResultsError, load

BAD = ("failed", "error")
GOOD = ("passed",)


@dataclass
class Diff:
    """Cases of two results files sorted into what changed."""

    regressions: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    fixes: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    changed: list[tuple[dict[str, Any], dict[str, Any]]] = field(default_factory=list)
    new: list[dict[str, Any]] = field(default_factory=list)
    missing: list[dict[str, Any]] = field(default_factory=list)
    unchanged: int = 0


def diff(baseline: dict[str, Any], current: dict[str, Any]) -> Diff:
    """Match cases by node id and classify each outcome change."""
    before = {c["nodeid"]: c for c in baseline["cases"]}
    after = {c["nodeid"]: c for c in current["cases"]}
    d = Diff()
    for nodeid in sorted(before.keys() | after.keys()):
        old, new = before.get(nodeid), after.get(nodeid)
        if old is None:
            d.new.append(new)  # type: ignore[arg-type]
        elif new is None:
            d.missing.append(old)
        elif old["outcome"] in GOOD and new["outcome"] in BAD:
            d.regressions.append((old, new))
        elif old["outcome"] in BAD + ("xfailed",) and new["outcome"] in GOOD:
            d.fixes.append((old, new))
        elif old["outcome"] != new["outcome"]:
            d.changed.append((old, new))
        else:
            d.unchanged += 1
    return d


def why(case: dict[str, Any]) -> str:
    """First wrong row, else the failure's telling line."""
    rows = case.get("wrong_rows") or []
    if rows:
        w = rows[0]
        if w.get("row") is None:
            text = str(w.get("label", ""))
        else:
            text = f"row {w['row']}: expected {w['expected']}, got {w['got']}"
            text += f" [{w['label']}]" if w.get("label") else ""
        more = len(rows) - 1
        return text + (f" (+{more} more wrong row(s))" if more > 0 else "")
    return short_message(str(case.get("message") or ""))


def render(d: Diff, baseline_path: str, current_path: str, n_before: int, n_after: int) -> str:
    """Plain-text listing, one section per kind of change, each line naming the test."""
    out = [f"baseline: {baseline_path} ({n_before} cases)", f"current:  {current_path} ({n_after} cases)", ""]

    def section(title: str, lines: list[str]) -> None:
        out.append(f"{title}: {len(lines)}")
        out.extend(f"  {line}" for line in lines)

    section(
        "REGRESSIONS (passed -> failed)",
        [f"{new['nodeid']}  {old['outcome']} -> {new['outcome']}: {why(new)}".rstrip(": ") for old, new in d.regressions],
    )
    section("FIXES (failed -> passed)", [f"{new['nodeid']}  {old['outcome']} -> {new['outcome']}" for old, new in d.fixes])
    section(
        "OTHER OUTCOME CHANGES",
        [f"{new['nodeid']}  {old['outcome']} -> {new['outcome']}" for old, new in d.changed],
    )
    section("NEW CASES", [f"{c['nodeid']}  ({c['outcome']})" for c in d.new])
    section("MISSING CASES", [f"{c['nodeid']}  (was {c['outcome']})" for c in d.missing])
    out.append(f"unchanged: {d.unchanged}")
    verdict = f"FAIL: {len(d.regressions)} regression(s)" if d.regressions else "OK: no regressions"
    out.append(verdict)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m reports.compare",
        description="Compare two results.json files of the NaN-count harness; exit 1 when anything regressed.",
    )
    parser.add_argument("baseline", type=Path, help="results.json of the reference run (e.g. yesterday's nightly)")
    parser.add_argument("current", type=Path, help="results.json of the run to judge")
    args = parser.parse_args(argv)
    try:
        baseline, current = load(args.baseline), load(args.current)
    except ResultsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    d = diff(baseline, current)
    print(render(d, str(args.baseline), str(args.current), len(baseline["cases"]), len(current["cases"])))
    return 1 if d.regressions else 0


if __name__ == "__main__":
    sys.exit(main())
