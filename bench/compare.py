"""`python -m bench.compare OLD NEW --threshold 0.10`: gate on slowdowns of the kernel under test.

Two measures per shape: device time, and the eager per-call cost a decode step pays (`eager_us`, where both runs
have it). A shape counts as slower on a measure when the kernel's figure grew by more than the threshold both in
absolute terms and relative to the same run's baseline for it (the read roofline for device time, the anchor's
eager cost for eager): a slower machine moves only the first, a faster baseline only the second, a slower kernel
both. Exit 1 on any slower shape, 2 when a file is not a bench.json, else 0 (also when either run's timings are
interpreter timings, which mean nothing).
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from bench.report import NotABenchFile, load

DEFAULT_THRESHOLD = 0.10


MEASURES = (("us", "roofline", "device"), ("eager_us", "anchor", "eager"))  # (row field, baseline, label)


@dataclass(frozen=True)
class Delta:
    """One shape and measure in both runs: growth factors of the kernel's absolute and baseline-normalized time."""

    key: str
    old_us: float
    new_us: float
    absolute: float
    normalized: float
    measure: str = "device"

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
        for field, baseline, label in MEASURES:
            o, n = before.get(field), row.get(field)
            if not o or not n:
                continue  # a run from before the measure existed
            out.append(Delta(row["key"], o["kernel"], n["kernel"], n["kernel"] / o["kernel"],
                             (n["kernel"] / n[baseline]) / (o["kernel"] / o[baseline]), label))
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
        baseline = "roofline" if d.measure == "device" else "anchor"
        lines.append(f"{mark:9} {d.key:32} {d.measure:6} {d.old_us:10.2f} -> {d.new_us:10.2f} us  "
                     f"x{d.absolute:.3f} abs  x{d.normalized:.3f} vs {baseline}")
    old_keys, new_keys = {r["key"] for r in old["rows"]}, {r["key"] for r in new["rows"]}
    for key in sorted(old_keys - new_keys):
        lines.append(f"missing   {key}")
    for key in sorted(new_keys - old_keys):
        lines.append(f"new       {key}")
    lines.append(f"{len(slower)} of {len(found)} shape measures slower by more than {threshold:.0%} "
                 "(absolute and relative to the run's own baseline)")
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
