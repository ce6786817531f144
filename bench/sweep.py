"""`python -m bench.sweep`: time launch configurations of our kernel against the anchor in one run, to tune
kernel/launch.py for a device.

Whole-row shapes (rows >= cores) try the anchor's sum per step and a per-lane accumulator over grids, step sizes
and warps; split shapes (decode) try items per core, step sizes, warps and dependent launch. Every configuration's
counts are checked against torch.isnan(x).sum(-1) before it is timed: a wrong one is listed, never timed. The
anchor is timed before and after each shape's candidates, so drift during the shape shows.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from bench import report
from bench.cli import resolve_device
from bench.env import environment
from bench.shapes import Shape, build
from bench.timers import TIMERS, repetitions

SCHEMA = "nan-harness-sweep/1"


def shapes_for(device: str, quick: bool) -> list[tuple[str, str, int, int]]:
    """(kind, dtype, rows, vocab): whole-row shapes at >= one row per core, split shapes at decode sizes."""
    if device == "cpu":
        return [("rows", "fp32", 9, 700), ("rows", "bf16", 8, 2100), ("split", "fp32", 2, 3000)]
    dtypes = ("fp32", "bf16") if quick else ("fp32", "bf16", "fp16")
    rows = ((1024, 152064), (4096, 32000)) if quick else ((256, 152064), (1024, 152064), (2048, 152064),
                                                          (4096, 32000))
    split = ((1, 152064), (8, 128256)) if quick else ((1, 152064), (4, 152064), (8, 128256), (16, 262144))
    return ([("rows", d, r, v) for d in dtypes for r, v in rows] +
            [("split", d, r, v) for d in dtypes for r, v in split])


def ranking(shapes: list[dict[str, object]]) -> list[dict[str, object]]:
    """Per kind and element width: configurations by their worst ratio to the anchor over the shapes that ran them."""
    groups: dict[tuple[str, int], dict[str, list[float]]] = {}
    for shape in shapes:
        ratios = groups.setdefault((str(shape["kind"]), int(shape["element_size"])), {})  # type: ignore[call-overload]
        for row in shape["configs"]:  # type: ignore[union-attr]
            ratios.setdefault(row["config"], []).append(row["vs_anchor"])
    out = []
    for (kind, width), ratios in sorted(groups.items()):
        full = max(len(v) for v in ratios.values())
        best = sorted(((min(v), name) for name, v in ratios.items() if len(v) == full), reverse=True)[:5]
        out.append({"kind": kind, "element_size": width,
                    "best": [{"config": n, "worst_vs_anchor": w} for w, n in best]})
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sweep", description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=("auto", "cpu", "cuda", "npu"), default="auto")
    parser.add_argument("--quick", action="store_true", help="fewer shapes, dtypes and configurations")
    parser.add_argument("--out", default="out/launch-sweep.json")
    parser.add_argument("--top", type=int, default=5, help="configurations printed per shape")
    args = parser.parse_args(argv)
    device = resolve_device(args.device)
    from bench import sweep_configs as configs  # imports the kernels: only once the backend chose how Triton runs

    cores = configs.cores(device)
    if device == "cpu":
        print("INTERPRETER SMOKE RUN: these timings mean nothing")
    results: list[dict[str, object]] = []
    started = time.perf_counter()
    for kind, dtype, rows, vocab in shapes_for(device, args.quick):
        shape = Shape(kind, dtype, rows, vocab, vocab)
        x = build(shape, device)
        candidates = (configs.whole_row_candidates(x, cores, args.quick) if kind == "rows"
                      else configs.split_candidates(x, cores, args.quick))
        result = {"key": shape.key, "kind": kind, "element_size": x.element_size(),
                  **configs.measure(x, candidates, TIMERS[device], repetitions(device, args.quick))}
        results.append(result)
        anchor = sum(result["anchor_us"]) / 2
        print(f"== {shape.key} ({kind}): anchor {anchor:.2f} us, current plan {result['current_us']:.2f} us "
              f"({result['current_vs_anchor']:.3f}x)"
              + (f"; WRONG counts: {result['wrong']}" if result["wrong"] else ""),
              flush=True)
        for row in result["configs"][: args.top]:  # type: ignore[index]
            print(f"   {row['us']:9.2f} us  {row['vs_anchor']:6.3f}x  {row['config']}")
        del x
    payload = {"schema": SCHEMA, "timings_meaningful": device != "cpu",
               "environment": environment(device, "kernel", "kernel/", cores),
               "shapes": results, "ranking": ranking(results), "seconds": round(time.perf_counter() - started, 1)}
    out = Path(args.out)
    report.write(out, payload)
    for group in payload["ranking"]:  # type: ignore[union-attr]
        print(f"best by worst ratio to the anchor, {group['kind']} at {group['element_size']} bytes per element:")
        for row in group["best"]:
            print(f"   {row['worst_vs_anchor']:6.3f}x  {row['config']}")
    bad = sum(len(r["wrong"]) for r in results)
    print(f"wrote {out}" + (f"; {bad} configurations counted wrong" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
