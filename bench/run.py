"""The body of `python -m bench` once the backend is prepared: verify, time, write bench.json and its plot
(bench.png)."""
from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

from bench import SCHEMA, report, shapes
from bench.env import environment
from bench.measure import Setup, VerificationError, check_targets, time_all, verify
from bench.timers import Repetitions, repetitions
from kernel.launch import tuning_for

COLORS = {"fp32": "tab:blue", "bf16": "tab:orange", "fp16": "tab:green"}  # bench.png's bars by dtype


def run(args: argparse.Namespace, argv: list[str] | None, device: str, module: ModuleType) -> int:
    """Verify every picked shape, then time them; exit 1 when a contender counts wrong."""
    cores = tuning_for(torch.device(device)).cores
    reps = repetitions(device, args.quick)
    setup = Setup(device, module.get_num_nans, cores, reps)
    picked = (shapes.interpreter_shapes() if device == "cpu" else
              shapes.quick_shapes() if args.quick else shapes.full_shapes())
    picked = [s for s in picked if args.select in s.key]
    meaningful = device != "cpu"
    started = time.perf_counter()
    try:
        verify(setup, picked)
    except VerificationError as exc:
        print(exc, file=sys.stderr)
        return 1
    print(f"verified {len(picked)} shapes x 3 counting contenders against torch.isnan(x).sum(-1)", flush=True)
    rows, floor_us, floor_eager, peak = time_all(setup, picked)
    out = Path(args.out)
    plot_path = out.with_suffix(".png") if args.plot is None else (Path(args.plot) if args.plot else None)
    payload: dict[str, object] = {
        "schema": SCHEMA,
        "timings_meaningful": meaningful,
        "note": ("" if meaningful else "CPU interpreter smoke run: checks that the benchmark works; "
                 "the timings mean nothing"),
        "command": " ".join(["python -m bench", *(argv if argv is not None else sys.argv[1:])]),
        "environment": environment(device, args.kernel, str(getattr(module, "__file__", "?")), cores),
        "method": _method(device, reps, args.quick),
        "launch_floor_us": floor_us,
        "launch_floor_eager_us": floor_eager,
        "peak_read_gbps": peak,
        "rows": rows,
        "targets": check_targets(rows) if meaningful else [],
        "plot": None,
        "seconds": round(time.perf_counter() - started, 1),
    }
    if plot_path is not None and plot(payload, plot_path):
        payload["plot"] = os.path.relpath(plot_path, out.parent)
    report.write(out, payload)
    print(table(rows, floor_us, meaningful))
    print_targets(payload["targets"])  # type: ignore[arg-type]
    print(f"wrote {out}" + (f" and {plot_path}" if payload["plot"] else ""))
    return 0


def print_targets(targets: list[dict[str, Any]]) -> None:
    """One line per speed target: met or missed, the worst ratio and the shapes that missed."""
    for t in targets:
        worst = "-" if t["worst"] is None else f"{t['worst']:.2f}"
        print(f"{'MET ' if t['met'] else 'MISS'} {t['target']} "
              f"(worst {worst}; missed: {', '.join(t['missed']) or '-'})")


def table(rows: list[dict], floor_us: float, meaningful: bool) -> str:
    """The printed table: µs per contender, GB/s of the kernel, ratios."""
    head = (f"{'shape':34} {'kernel':>9} {'anchor':>9} {'torch':>9} {'roofln':>9} {'GB/s':>7} "
            f"{'xanchor':>8} {'xtorch':>7} {'%roof':>6} {'/ideal':>6} | eager: {'kernel':>7} {'anchor':>7} "
            f"{'torch':>7} | graph: {'kernel':>7} {'anchor':>7} {'torch':>7}")
    lines = [] if meaningful else ["INTERPRETER SMOKE RUN: these timings mean nothing"]
    lines += [f"launch floor (empty Triton kernel): {floor_us:.2f} us", head]
    for r in rows:
        us, ratio = r["us"], r["ratios"]
        lines.append(
            f"{r['key']:34} {us['kernel']:9.2f} {us['anchor']:9.2f} {us['torch']:9.2f} {us['roofline']:9.2f} "
            f"{r['gbps']['kernel']:7.0f} {ratio['speedup_vs_anchor']:8.2f} {ratio['speedup_vs_torch']:7.2f} "
            f"{100 * ratio['roofline_fraction']:6.1f} {ratio['kernel_over_ideal']:6.2f} | "
            f"       {_cells(r['eager_us'])} |        {_cells(r['graph_us'])}"
        )
    return "\n".join(lines)


def _cells(values: dict[str, float | None]) -> str:
    return " ".join("      -" if values.get(n) is None else f"{values[n]:7.1f}" for n in ("kernel", "anchor", "torch"))


def _method(device: str, reps: Repetitions, quick: bool) -> dict[str, object]:
    """How each number of bench.json was taken, in words, for the report."""
    return {
        "timer": {"cuda": f"CUDA events around each call, median of {reps.timed}; before each call the "
                          "L2 is flushed (256 MB zeroed, as in triton.testing.do_bench) and the stream held "
                          "by torch.cuda._sleep so host launch cost stays out of device time",
                  "npu": f"torch.npu.Event per call after an L2 flush, median of {reps.timed}",
                  "cpu": f"time.perf_counter around the interpreter, median of {reps.timed}"}[device],
        "quick": quick,
        "repetitions": dataclasses.asdict(reps),
        "roofline": "faster of torch x.view(int).amax(-1) and a Triton streaming read of the same bytes",
        "launch_floor": "empty Triton kernel, grid (1,)",
        "host_us": f"host time per call over {reps.host_calls} back-to-back calls (launch cost), not device time",
        "eager_us": f"per call of {reps.calls} back-to-back calls then one synchronize, median of {reps.rounds} "
                    "rounds taken in turn with the other contenders: "
                    "what an eager caller such as vLLM's sampler pays (host launch cost or device time, "
                    "whichever is longer); launch_floor: the same for an empty Triton launch",
        "graph_us": f"per replay of one call captured in a CUDA graph (NPUGraph on NPU), back to back, median of "
                    f"{reps.rounds} rounds taken in turn with the other contenders; null "
                    "where the contender cannot be captured (graph_why says why)",
        "ideal_us": "launch_floor_us + bytes / peak read roofline GB/s of this run",
        "reference": "torch.isnan(x).sum(-1) as int32, exact equality, every counting contender, every shape",
    }


def plot(payload: dict, path: Path) -> bool:
    """bench.png: speed-up over the anchor design, eager per-call cost and fraction of the read roofline per
    shape; False (and nothing written) when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    rows = payload["rows"]
    labels = [r["key"] for r in rows]
    colors = [COLORS.get(r["dtype"], "gray") for r in rows]
    xs = range(len(rows))
    fig, (top, middle, bottom) = plt.subplots(3, 1, figsize=(max(8.0, 0.22 * len(rows) + 2), 10.0), sharex=True)
    top.bar(xs, [r["ratios"]["speedup_vs_anchor"] for r in rows], color=colors)
    top.axhline(1.0, color="black", lw=0.8)
    top.set_yscale("log")
    top.set_ylabel("speed-up over anchor design (x)")
    middle.bar(xs, [r["ratios"].get("eager_vs_anchor") or 0 for r in rows], color=colors)
    middle.axhline(1.0, color="black", lw=0.8)
    middle.set_ylabel("eager per-call: anchor / kernel (x)")
    bottom.bar(xs, [r["ratios"]["roofline_fraction"] for r in rows], color=colors)
    bottom.axhline(0.9, color="red", lw=0.8, ls="--")
    bottom.set_ylabel("fraction of read roofline")
    bottom.set_xticks(list(xs))
    bottom.set_xticklabels(labels, rotation=90, fontsize=6)
    env = payload["environment"]
    title = f"{env['kernel_module']} on {env['device_name']} ({env['triton']}, torch {env['torch']})"
    if not payload.get("timings_meaningful", False):
        title += "\nINTERPRETER SMOKE RUN: timings mean nothing"
    top.set_title(title, fontsize=9)
    handles = [plt.Rectangle((0, 0), 1, 1, color=c) for c in COLORS.values()]
    top.legend(handles, list(COLORS), fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return True
