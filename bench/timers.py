"""Per-backend timers: each returns the median microseconds of fn, caches flushed between calls where possible."""
from __future__ import annotations

import functools
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import torch

from harness.streams import capture

FLUSH_BYTES = 256 * 1024 * 1024  # larger than the H200's 60 MB L2 and an Ascend 910B's 192 MB L2
SLEEP_CYCLES = 200_000  # about 100 us at 2 GHz: longer than the host takes to queue one call


@dataclass(frozen=True)
class Repetitions:
    """How many calls each figure is taken from: what bench.json's method says, and what a run costs."""

    timed: int  # calls timed one by one (device time), median
    warmup: int  # untimed calls before timing
    host_calls: int  # back-to-back calls of the host-cost figure
    calls: int  # back-to-back calls per sample of the eager and graph per-call cost
    rounds: int  # interleaved rounds of those samples, median per contender


def repetitions(device: str, quick: bool) -> Repetitions:
    """Per backend: the interpreter's timings mean nothing, so it takes each figure from one call (the CPU smoke run
    proves the path runs at a cost that does not grow with the timing plan of the accelerators)."""
    if device == "cpu":
        return Repetitions(timed=1, warmup=1, host_calls=1, calls=1, rounds=1)
    timed = {"cuda": 30, "npu": 20}.get(device, 30) if quick else 100
    warmup = 5 if device == "npu" else 3
    return Repetitions(timed=timed, warmup=warmup, host_calls=50, calls=100 if quick else 300, rounds=5)


def time_events(device: str, fn: Callable[[], object], reps: Repetitions) -> float:
    """Device events around each call, median; before each call the L2 is flushed (as triton.testing.do_bench
    does) and, on CUDA, the stream is held by torch.cuda._sleep, so the host's launch cost never shows as device
    time."""
    runtime = getattr(torch, device)
    flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device=device)
    for _ in range(reps.warmup):
        fn()
    runtime.synchronize()
    starts = [runtime.Event(enable_timing=True) for _ in range(reps.timed)]
    ends = [runtime.Event(enable_timing=True) for _ in range(reps.timed)]
    for start, end in zip(starts, ends):
        flush.zero_()
        if device == "cuda":
            torch.cuda._sleep(SLEEP_CYCLES)
        start.record()
        fn()
        end.record()
    runtime.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) * 1e3


def time_cpu(fn: Callable[[], object], reps: Repetitions) -> float:
    """Wall clock around the interpreter: proves the path runs; the number means nothing."""
    for _ in range(reps.warmup):
        fn()
    samples = []
    for _ in range(reps.timed):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e6


def host_us(fn: Callable[[], object], synchronize: Callable[[], None], reps: Repetitions) -> float:
    """Host time per call of back-to-back calls (launch cost; bounds the call rate when above device time)."""
    fn()
    synchronize()
    t0 = time.perf_counter()
    for _ in range(reps.host_calls):
        fn()
    elapsed = time.perf_counter() - t0
    synchronize()
    return elapsed / reps.host_calls * 1e6


def per_call_us(loops: Mapping[str, Callable[[], object]], synchronize: Callable[[], None], calls: int,
                rounds: int, warmup: int = 10) -> dict[str, float]:
    """µs per call of each named body run `calls` times back to back then synchronized, in interleaved rounds
    (A, B, C, A, B, C, ...), median per name: a drift of this host's speed hits every contender alike."""
    for body in loops.values():
        for _ in range(warmup):
            body()
    synchronize()
    samples: dict[str, list[float]] = {name: [] for name in loops}
    for _ in range(rounds):
        for name, body in loops.items():
            t0 = time.perf_counter()
            for _ in range(calls):
                body()
            synchronize()
            samples[name].append((time.perf_counter() - t0) / calls * 1e6)
    return {name: statistics.median(values) for name, values in samples.items()}


def eager_all(fns: Mapping[str, Callable[[], object]], synchronize: Callable[[], None], reps: Repetitions
              ) -> dict[str, float]:
    """What an eager caller pays per call of each contender: back-to-back calls, one synchronize (the larger of host
    launch cost and device time; vLLM's sampler calls get_num_nans this way)."""
    return per_call_us(fns, synchronize, reps.calls, reps.rounds, warmup=min(10, reps.calls))


def _why(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def graph_all(device: str, fns: Mapping[str, Callable[[], object]], reps: Repetitions
              ) -> dict[str, tuple[float | None, str]]:
    """Per contender (µs per replay, '') of one call captured in a device graph (harness.streams.capture: warmed on
    a side stream) and replayed back to back, interleaved as eager_all; (None, why) where it cannot be captured."""
    if device not in ("cuda", "npu"):
        return {name: (None, f"no device graphs on {device}") for name in fns}
    runtime = getattr(torch, device)
    graphs: dict[str, Callable[[], object]] = {}
    why: dict[str, str] = {}
    for name, fn in fns.items():
        try:
            graphs[name] = capture(runtime, device, fn)[0].replay
        except Exception as exc:  # noqa: BLE001 - a contender that cannot be captured is reported, not fatal
            why[name] = _why(exc)
    try:
        us = eager_all(graphs, runtime.synchronize, reps) if graphs else {}
    except Exception as exc:  # noqa: BLE001 - a replay that fails is reported, not fatal
        us, why = {}, {**why, **{name: _why(exc) for name in graphs}}
    return {name: (us[name], "") if name in us else (None, why[name]) for name in fns}


TIMERS: dict[str, Callable[[Callable[[], object], Repetitions], float]] = {
    "cuda": functools.partial(time_events, "cuda"), "npu": functools.partial(time_events, "npu"), "cpu": time_cpu,
}
