"""`python -m bench.table BENCH_JSON [-k TEXT ...]`: the Markdown table and target lines docs/bench.md quotes.

Read from a bench.json (bench.report.load), so the page shows what the run measured, never figures typed by hand.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from bench.report import NotABenchFile, load

CONTENDERS = ("kernel", "anchor", "torch")


def _three(values: dict[str, float | None] | None) -> str:
    """'ours / anchor / torch' in µs, '-' where a contender has no figure (graph capture refused, say)."""
    values = values or {}
    return " / ".join("-" if values.get(name) is None else f"{values[name]:.1f}" for name in CONTENDERS)


def table(payload: dict[str, object], keys: Sequence[str] = ()) -> str:
    """One row per shape (all, or those whose key contains one of `keys`), then each target's line."""
    lines = ["| shape | device µs: ours / anchor / torch | × anchor (device) | eager µs: ours / anchor / torch "
             "| eager × anchor | graph µs: ours / anchor / torch |", "|---|---|---:|---|---:|---|"]
    for row in payload["rows"]:  # type: ignore[union-attr]
        if keys and not any(k in row["key"] for k in keys):
            continue
        ratios = row["ratios"]
        lines.append(f"| {row['key']} | {_three(row['us'])} | {ratios['speedup_vs_anchor']:.2f} | "
                     f"{_three(row.get('eager_us'))} | {ratios.get('eager_vs_anchor', float('nan')):.3f} | "
                     f"{_three(row.get('graph_us'))} |")
    lines.append("")
    for target in payload.get("targets", []):  # type: ignore[union-attr]
        missed = ", ".join(target["missed"]) or "-"
        lines.append(f"- **{'met' if target['met'] else 'MISSED'}**: {target['target']} over {target['rows']} "
                     f"shapes (worst {target['worst']:.3f}; missed: {missed})")
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.table", description=__doc__.split("\n\n")[0])
    parser.add_argument("bench_json")
    parser.add_argument("-k", dest="keys", action="append", default=[], help="only shapes whose key contains TEXT")
    args = parser.parse_args(argv)
    try:
        payload = load(args.bench_json)
    except NotABenchFile as exc:
        print(f"bench.table: {exc}", file=sys.stderr)
        return 2
    print(table(payload, args.keys), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
