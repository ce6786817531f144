"""The sweep's configurations of our kernel, each checked against torch.isnan(x).sum(-1) before it is timed, with
the anchor and the current plan timed around them (bench.sweep runs them once the backend is prepared)."""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import torch
import triton

from bench.anchor import anchor_num_nans
from bench.timers import Repetitions
from kernel.launch import Tuning, plan_launch, tuning_for
from kernel.num_nans import _count_items_kernel, _num_nans_kernel, get_num_nans, plan_for, run_plan

Candidate = tuple[str, Callable[[], object]]


def cores(device: str) -> int:
    """The device's cores as kernel/launch.py tunes for them: the grids and split items are multiples of it."""
    return tuning_for(torch.device(device)).cores


STEPS, WARPS = (8192, 16384, 32768), (4, 8, 16)
QUICK_STEPS, QUICK_WARPS = (8192, 32768), (4, 16)


def whole_row_candidates(x: torch.Tensor, cores: int, quick: bool) -> Iterator[Candidate]:
    """Sum per step (the anchor's kernel) on grid = rows, and the accumulator kernel on capped grids."""
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
