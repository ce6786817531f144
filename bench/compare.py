"""`python -m bench.compare OLD NEW --threshold 0.10`: gate on slowdowns of the kernel under test.

A shape counts as slower when the kernel's time grew by more than the threshold both in absolute terms and
relative to the same run's read roofline (kernel_us / roofline_us): a slower machine moves only the first,
a faster roofline reader only the second, a slower kernel both. Exit 1 on any slower shape, 2 when a file is
not a bench.json, else 0 (also when either run's timings are interpreter timings, which mean nothing).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from bench.report import NotABenchFile, load

DEFAULT_THRESHOLD = 0.10


@dataclass(frozen=True)
class Delta:
    """One shape in both runs: growth factors of the kernel's absolute and roofline-normalized time."""

    key: str
    old_us: float
    new_us: float
    absolute: float
    normalized: float

    def slower(self, threshold: float) -> bool:
        return self.absolute > 1 + threshold and self.normalized > 1 + threshold


def deltas(old: dict, new: dict) -> list[Delta]:
    """Growth factors for every shape key both runs measured."""
    old_rows = {r["key"]: r for r in old["rows"]}
    out = []
    for row in new["rows"]:
        before = old_rows.get(row["key"])
        if before is None:
            continue
        o, n = before["us"], row["us"]
        out.append(Delta(row["key"], o["kernel"], n["kernel"], n["kernel"] / o["kernel"],
                         (n["kernel"] / n["roofline"]) / (o["kernel"] / o["roofline"])))
    return out


def compare(old: dict, new: dict, threshold: float) -> tuple[int, list[str]]:
    """(exit code, report lines)."""
    lines = []
    env_old, env_new = old.get("environment", {}), new.get("environment", {})
    if not (old.get("timings_meaningful") and new.get("timings_meaningful")):
        return 0, ["interpreter timings (timings_meaningful: false) mean nothing: not compared"]
    if env_old.get("device_name") != env_new.get("device_name"):
        lines.append(f"note: devices differ ({env_old.get('device_name')} -> {env_new.get('device_name')}); "
                     "only slowdowns relative to each run's roofline as well as absolute are flagged")
    found = deltas(old, new)
    slower = [d for d in found if d.slower(threshold)]
    for d in found:
        mark = "SLOWER" if d in slower else ("abs only" if d.absolute > 1 + threshold else
                                             "norm only" if d.normalized > 1 + threshold else "ok")
        lines.append(f"{mark:9} {d.key:32} {d.old_us:10.2f} -> {d.new_us:10.2f} us  "
                     f"x{d.absolute:.3f} abs  x{d.normalized:.3f} vs roofline")
    old_keys, new_keys = {r["key"] for r in old["rows"]}, {r["key"] for r in new["rows"]}
    for key in sorted(old_keys - new_keys):
        lines.append(f"missing   {key}")
    for key in sorted(new_keys - old_keys):
        lines.append(f"new       {key}")
    lines.append(f"{len(slower)} of {len(found)} shapes slower by more than {threshold:.0%} "
                 "(absolute and relative to the roofline)")
    return (1 if slower else 0), lines


def main(argv: list[str] | None = None) -> int:
    """CLI entry: prints one line per shape, returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--threshold", type=float, default=DEFAULT_THRESHOLD,
                        help="noise threshold as a fraction (default 0.10: 10%% slower is flagged)")
    args = parser.parse_args(argv)
    try:
        old, new = load(args.old), load(args.new)
    except NotABenchFile as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    code, lines = compare(old, new, args.threshold)
    print("\n".join(lines))
    return code


if __name__ == "__main__":
    sys.exit(main())
