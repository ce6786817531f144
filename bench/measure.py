"""Verify every contender's counts on every shape, then time them: µs, GB/s and ratios per shape, and the speed
targets (issue 29: what a user pays) checked on the rows (meaningful on an accelerator only)."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from bench.anchor import anchor_num_nans
from bench.roofline import launch_floor, torch_read, triton_read
from bench.shapes import Shape, build
from bench.timers import TIMERS, Repetitions, eager_all, graph_all, host_us


class VerificationError(AssertionError):
    """A contender's counts differ from the reference: nothing is timed."""


@dataclass(frozen=True)
class Setup:
    """What one run measures with."""

    device: str
    get_num_nans: Callable[[torch.Tensor], torch.Tensor]
    cores: int
    reps: Repetitions


def counting_fns(setup: Setup, x: torch.Tensor) -> dict[str, Callable[[], torch.Tensor]]:
    """The three contenders that produce counts; `torch` is the composite the issue measured."""
    return {
        "kernel": lambda: setup.get_num_nans(x),
        "anchor": lambda: anchor_num_nans(x),
        "torch": lambda: torch.isnan(x).sum(-1),
    }


def verify(setup: Setup, shapes: list[Shape]) -> None:
    """Run every counting contender once per shape; exact int32 equality with torch.isnan(x).sum(-1)."""
    problems = []
    for shape in shapes:
        x = build(shape, setup.device)
        ref = torch.isnan(x).sum(-1).to(torch.int32)
        for name, fn in counting_fns(setup, x).items():
            got = fn()
            if name != "torch" and got.dtype != torch.int32:
                problems.append(f"{shape.key} {name}: dtype {got.dtype}, expected torch.int32")
            elif got.shape != ref.shape or not torch.equal(got.to(torch.int32), ref):
                bad = (got.to(torch.int32) != ref).nonzero().flatten()[:5].tolist() if got.shape == ref.shape else []
                problems.append(f"{shape.key} {name}: counts differ from the reference (first rows {bad})")
        del x
    if problems:
        raise VerificationError("verification failed, nothing timed:\n  " + "\n  ".join(problems))


def time_floor(setup: Setup) -> float:
    """The launch floor: an empty Triton kernel."""
    return TIMERS[setup.device](launch_floor, setup.reps)


def eager_floor(setup: Setup) -> float:
    """What one empty Triton launch costs an eager caller (its host launch cost, in practice)."""
    return eager_all({"floor": launch_floor}, synchronizer(setup.device), setup.reps)["floor"]


def synchronizer(device: str) -> Callable[[], None]:
    """Wait for the device's queue (the interpreter has none)."""
    return getattr(torch, device).synchronize if device in ("cuda", "npu") else lambda: None


def time_shape(setup: Setup, shape: Shape) -> dict[str, object]:
    """Median µs of each contender on one shape; the roofline is the faster of two readers."""
    timer = TIMERS[setup.device]
    x = build(shape, setup.device)
    fns = counting_fns(setup, x)
    us = {name: timer(fn, setup.reps) for name, fn in fns.items()}
    host = {name: host_us(fn, synchronizer(setup.device), setup.reps) for name, fn in fns.items()}
    eager = eager_all(fns, synchronizer(setup.device), setup.reps)  # contenders interleaved, round after round
    graphs = graph_all(setup.device, fns, setup.reps)
    readers = {"torch": timer(lambda: torch_read(x), setup.reps),
               "triton": timer(lambda: triton_read(x, setup.cores), setup.reps)}
    source = min(readers, key=readers.__getitem__)
    us["roofline"] = readers[source]
    return {"us": us, "host_us": host, "eager_us": eager, "graph_us": {n: g[0] for n, g in graphs.items()},
            "graph_why": {n: g[1] for n, g in graphs.items() if g[1]}, "roofline_source": source,
            "roofline_readers_us": readers}


def gbps(nbytes: int, us: float) -> float:
    """Decimal GB/s."""
    return nbytes / (us * 1e3) if us > 0 else 0.0


def _ratio(numerator: float | None, denominator: float | None) -> float | None:
    return numerator / denominator if numerator and denominator else None


def summarize(shape: Shape, timed: dict[str, object], floor_us: float, peak_gbps: float,
              floor_eager_us: float) -> dict[str, object]:
    """One bench.json row: shape, bytes, µs and GB/s per contender, and the ratios the targets speak of."""
    us: dict[str, float] = timed["us"]  # type: ignore[assignment]
    eager: dict[str, float] = timed["eager_us"]  # type: ignore[assignment]
    graph: dict[str, float | None] = timed["graph_us"]  # type: ignore[assignment]
    kernel = us["kernel"]
    ideal = floor_us + shape.bytes / (peak_gbps * 1e3) if peak_gbps > 0 else floor_us
    return {
        "key": shape.key,
        "group": shape.group,
        "dtype": shape.dtype,
        "shape": [shape.rows, shape.vocab],
        "stride": [shape.stride, 1],
        "bytes": shape.bytes,
        "us": {**us, "launch_floor": floor_us},
        "gbps": {name: gbps(shape.bytes, t) for name, t in us.items()},
        "host_us": timed["host_us"],
        "eager_us": {**eager, "launch_floor": floor_eager_us},
        "graph_us": graph,
        "graph_why": timed["graph_why"],
        "roofline_source": timed["roofline_source"],
        "roofline_readers_us": timed["roofline_readers_us"],
        "ideal_us": ideal,
        "ratios": {
            "speedup_vs_anchor": us["anchor"] / kernel,
            "speedup_vs_torch": us["torch"] / kernel,
            "roofline_fraction": us["roofline"] / kernel,
            "kernel_over_ideal": kernel / ideal,
            "kernel_over_roofline": kernel / us["roofline"],
            "eager_vs_anchor": eager["anchor"] / eager["kernel"],
            "eager_vs_torch": eager["torch"] / eager["kernel"],
            "eager_over_launch_and_device": eager["kernel"] / (floor_eager_us + kernel),
            "graph_vs_anchor": _ratio(graph.get("anchor"), graph.get("kernel")),
            "graph_vs_torch": _ratio(graph.get("torch"), graph.get("kernel")),
        },
    }


def time_all(setup: Setup, shapes: list[Shape]) -> tuple[list[dict[str, object]], float, float, float]:
    """Every shape timed between two launch-floor timings (the lower one counts): (rows, launch floor us, eager
    launch floor us, peak read GB/s of this run)."""
    floor_before = time_floor(setup)
    timed = []
    for shape in shapes:
        timed.append((shape, time_shape(setup, shape)))
        print(f"timed {shape.key}", flush=True)
    floor_us = min(floor_before, time_floor(setup))
    floor_eager = eager_floor(setup)
    peak = max(gbps(s.bytes, t["us"]["roofline"]) for s, t in timed)  # type: ignore[index]
    return [summarize(s, t, floor_us, peak, floor_eager) for s, t in timed], floor_us, floor_eager, peak


# Retired with the kernel's private launch path (issue 29): decode >= 1.5x torch on device, decode <= 2x (launch floor
# + bytes at roofline) and decode eager <= 1.25x (one empty launch + device time); the ratios stay in the JSON.
DECODE_MIN_VOCAB = 128_000
LARGE_MIN_ROWS, LARGE_VOCAB = 1024, 152064


def _is_decode(row: dict) -> bool:
    return row["group"] == "decode" and row["shape"][1] >= DECODE_MIN_VOCAB


def _is_large(row: dict) -> bool:
    return row["shape"][0] >= LARGE_MIN_ROWS and row["shape"][1] == LARGE_VOCAB


TARGETS: tuple[tuple[str, object, str, str, float], ...] = (
    ("decode: >= 4x the anchor", _is_decode, "speedup_vs_anchor", ">=", 4.0),
    ("large: >= 90% of read roofline", _is_large, "roofline_fraction", ">=", 0.9),
    ("every shape: never slower than the anchor", lambda row: True, "speedup_vs_anchor", ">=", 1.0),
    ("every shape: eager per-call cost <= the anchor's", lambda row: True, "eager_vs_anchor", ">=", 1.0),
    ("every shape: eager per-call cost <= torch's", lambda row: True, "eager_vs_torch", ">=", 1.0),
    ("every shape: graph replay never slower than the anchor's", lambda row: True, "graph_vs_anchor", ">=", 1.0),
)


def check_targets(rows: list[dict]) -> list[dict[str, object]]:
    """One entry per target: how many rows it covers, the worst value, and the rows that miss."""
    results = []
    for name, applies, ratio, op, bound in TARGETS:
        picked = [r for r in rows if applies(r) and r["ratios"].get(ratio) is not None]  # type: ignore[operator]
        values = {r["key"]: r["ratios"][ratio] for r in picked}
        ok = (lambda v: v >= bound) if op == ">=" else (lambda v: v <= bound)
        missed = sorted(k for k, v in values.items() if not ok(v))
        worst = (min if op == ">=" else max)(values.values()) if values else None
        results.append({"target": name, "ratio": ratio, "bound": f"{op} {bound}", "rows": len(picked),
                        "worst": worst, "missed": missed, "met": bool(picked) and not missed})
    return results
