"""`python -m bench.sweep`: time launch configurations of our kernel against the anchor in one run, to tune
kernel/launch.py for a device.

Whole-row shapes (rows >= cores) try the anchor's sum per step and a per-lane accumulator over grids, step sizes
and warps; split shapes (decode) try items per core, step sizes, warps and dependent launch. Every configuration's
counts are checked against torch.isnan(x).sum(-1) before it is timed: a wrong one is listed, never timed. The
anchor is timed before and after each shape's candidates, so drift during the shape shows.
"""
from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import torch

from bench.timers import Repetitions

SCHEMA = "nan-harness-sweep/1"
Candidate = tuple[str, Callable[[], object]]


STEPS, WARPS = (8192, 16384, 32768), (4, 8, 16)
QUICK_STEPS, QUICK_WARPS = (8192, 32768), (4, 16)


def whole_row_candidates(x: torch.Tensor, cores: int, quick: bool) -> Iterator[Candidate]:
    """Sum per step (the anchor's kernel) on grid = rows, and the accumulator kernel on capped grids."""
    import triton

    from kernel.num_nans import _count_items_kernel, _num_nans_kernel

    rows, vocab = x.shape
    es = x.element_size()
    grids = sorted({g for g in (rows, 8 * cores, 4 * cores, 2 * cores) if g <= rows}, reverse=True)
    for step, warps in itertools.product(*((QUICK_STEPS, QUICK_WARPS) if quick else (STEPS, WARPS))):
        block = min(max(16, step // es), triton.next_power_of_2(vocab))
        chunk = triton.cdiv(vocab, block) * block

        def per_step(block: int = block, warps: int = warps) -> object:
            out = x.new_empty(rows, dtype=torch.int32)
            _num_nans_kernel[(rows,)](x, x.stride(0), out, vocab, BLOCK_SIZE=block, num_warps=warps)
            return out

        yield f"sum-per-step grid=rows step={step // 1024}KB warps={warps}", per_step
        for grid in grids:
            def accumulate(grid: int = grid, block: int = block, chunk: int = chunk, warps: int = warps) -> object:
                out = x.new_zeros(rows, dtype=torch.int32)  # the items kernel adds into its output
                _count_items_kernel[(grid,)](x, x.stride(0), out, vocab, rows, 1, chunk,
                                             BLOCK=block, num_warps=warps)
                return out

            label = "rows" if grid == rows else f"{grid // cores}xcores"
            yield f"accumulator grid={label} step={step // 1024}KB warps={warps}", accumulate


def split_candidates(x: torch.Tensor, cores: int, quick: bool) -> Iterator[Candidate]:
    """The planner's split (one launch adding into a zeroed output) with other items per core, steps and warps."""
    from kernel.launch import Tuning, plan_launch
    from kernel.num_nans import run_plan

    rows, vocab = x.shape
    per_cores, steps, warp_counts = ((8,), (2048, 8192), (4, 16)) if quick else ((4, 8, 16), (2048, 4096, 8192), WARPS)
    for per_core, step, warps in itertools.product(per_cores, steps, warp_counts):
        tuning = Tuning(cores, split_rows=rows + 1, split_items=per_core * cores, max_programs=per_core * cores,
                        row_programs=cores, row_block_bytes=step, row_warps=warps, split_block_bytes=step,
                        split_warps=warps)
        plan = plan_launch(rows, vocab, x.element_size(), tuning)
        name = (f"{plan.variant} items={per_core}xcores step={step // 1024 or step}{'KB' if step >= 1024 else 'B'} "
                f"warps={warps} chunks={plan.num_chunks}")
        yield name, (lambda plan=plan: run_plan(x, plan))


def measure(x: torch.Tensor, candidates: Iterator[Candidate],
            timer: Callable[[Callable[[], object], Repetitions], float], reps: Repetitions) -> dict[str, object]:
    """Check, then time, each candidate; the anchor and the current plan bracket them."""
    from bench.anchor import anchor_num_nans
    from kernel.num_nans import get_num_nans, plan_for

    ref = torch.isnan(x).sum(-1).to(torch.int32)
    anchor_before = timer(lambda: anchor_num_nans(x), reps)
    current = timer(lambda: get_num_nans(x), reps)
    timed, wrong = [], []
    for name, fn in candidates:
        got = fn()
        if not (isinstance(got, torch.Tensor) and got.dtype == torch.int32 and torch.equal(got, ref)):
            wrong.append(name)
            continue
        timed.append({"config": name, "us": timer(fn, reps)})
    anchor_after = timer(lambda: anchor_num_nans(x), reps)
    anchor = (anchor_before + anchor_after) / 2
    for row in timed:
        row["vs_anchor"] = anchor / row["us"]
    timed.sort(key=lambda r: r["us"])
    plan = plan_for(x)
    return {"anchor_us": [anchor_before, anchor_after], "current_us": current, "current_vs_anchor": anchor / current,
            "current_plan": {"variant": plan.variant, "grid": plan.grid, "block": plan.block,
                             "warps": plan.num_warps, "chunks": plan.num_chunks},
            "configs": timed, "wrong": wrong}


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
    from bench.cli import resolve_device

    device = resolve_device(args.device)
    from bench.env import environment
    from bench.shapes import Shape, build
    from bench.timers import TIMERS, repetitions
    from kernel.launch import tuning_for

    cores = tuning_for(torch.device(device)).cores
    if device == "cpu":
        print("INTERPRETER SMOKE RUN: these timings mean nothing")
    results: list[dict[str, object]] = []
    started = time.perf_counter()
    for kind, dtype, rows, vocab in shapes_for(device, args.quick):
        shape = Shape(kind, dtype, rows, vocab, vocab)
        x = build(shape, device)
        candidates = (whole_row_candidates(x, cores, args.quick) if kind == "rows"
                      else split_candidates(x, cores, args.quick))
        result = {"key": shape.key, "kind": kind, "element_size": x.element_size(),
                  **measure(x, candidates, TIMERS[device], repetitions(device, args.quick))}
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
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=1) + "\n")
    for group in payload["ranking"]:  # type: ignore[union-attr]
        print(f"best by worst ratio to the anchor, {group['kind']} at {group['element_size']} bytes per element:")
        for row in group["best"]:
            print(f"   {row['worst_vs_anchor']:6.3f}x  {row['config']}")
    bad = sum(len(r["wrong"]) for r in results)
    print(f"wrote {out}" + (f"; {bad} configurations counted wrong" if bad else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
