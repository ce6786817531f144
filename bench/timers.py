"""Per-backend timers: each returns the median microseconds of fn, caches flushed between calls where possible."""
from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import torch

FLUSH_BYTES = 256 * 1024 * 1024  # larger than the H200's 60 MB L2 and an Ascend 910B's 192 MB L2
SLEEP_CYCLES = 200_000  # about 100 us at 2 GHz: longer than the host takes to queue one call
HOST_CALLS = 50
EAGER_CALLS = 300  # back-to-back calls per sample of the eager per-call cost (100 with --quick)


def time_cuda(fn: Callable[[], object], quick: bool) -> float:
    """CUDA events around each call, median; before each call the L2 is flushed (as triton.testing.do_bench
    does) and the stream is held by torch.cuda._sleep, so the host's launch cost never shows as device time."""
    flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="cuda")
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    reps = 30 if quick else 100
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(reps)]
    for start, end in zip(starts, ends):
        flush.zero_()
        torch.cuda._sleep(SLEEP_CYCLES)
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) * 1e3


def time_npu(fn: Callable[[], object], quick: bool) -> float:
    """torch.npu events around each call after an L2 flush, torch.npu.synchronize at the end, median."""
    flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device="npu")
    reps = 20 if quick else 100
    for _ in range(5):
        fn()
    torch.npu.synchronize()
    starts = [torch.npu.Event(enable_timing=True) for _ in range(reps)]
    ends = [torch.npu.Event(enable_timing=True) for _ in range(reps)]
    for start, end in zip(starts, ends):
        flush.zero_()
        start.record()
        fn()
        end.record()
    torch.npu.synchronize()
    return statistics.median(s.elapsed_time(e) for s, e in zip(starts, ends)) * 1e3


def time_cpu(fn: Callable[[], object], quick: bool) -> float:
    """Wall clock around the interpreter: proves the path runs; the number means nothing."""
    fn()
    samples = []
    for _ in range(2 if quick else 5):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e6


def host_us(fn: Callable[[], object], synchronize: Callable[[], None]) -> float:
    """Host time per call of back-to-back calls (launch cost; bounds the call rate when above device time)."""
    fn()
    synchronize()
    t0 = time.perf_counter()
    for _ in range(HOST_CALLS):
        fn()
    elapsed = time.perf_counter() - t0
    synchronize()
    return elapsed / HOST_CALLS * 1e6


def eager_us(fn: Callable[[], object], synchronize: Callable[[], None], quick: bool) -> float:
    """What an eager caller pays per call: back-to-back calls, one synchronize, median of 3 samples of
    EAGER_CALLS; the larger of host launch cost and device time (vLLM's sampler calls get_num_nans this way)."""
    calls = EAGER_CALLS // 3 if quick else EAGER_CALLS
    for _ in range(10):
        fn()
    synchronize()
    samples = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn()
        synchronize()
        samples.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(samples)


def _graph_replay_us(device: str, fn: Callable[[], object], quick: bool) -> float:
    """One call captured in a device graph (harness.streams.capture: warmed on a side stream), replayed back to
    back; µs per replay."""
    from harness.streams import capture

    runtime = getattr(torch, device)
    graph, _ = capture(runtime, device, fn)
    replays = EAGER_CALLS // 3 if quick else EAGER_CALLS
    for _ in range(10):
        graph.replay()
    runtime.synchronize()
    t0 = time.perf_counter()
    for _ in range(replays):
        graph.replay()
    runtime.synchronize()
    return (time.perf_counter() - t0) / replays * 1e6


def graph_us(device: str, fn: Callable[[], object], quick: bool) -> tuple[float | None, str]:
    """(µs per replay, '') of one call captured in a device graph, or (None, why) where it cannot be captured."""
    if device not in ("cuda", "npu"):
        return None, f"no device graphs on {device}"
    try:
        return _graph_replay_us(device, fn, quick), ""
    except Exception as exc:  # noqa: BLE001 - a contender that cannot be captured is reported, not fatal
        return None, f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"


TIMERS: dict[str, Callable[[Callable[[], object], bool], float]] = {
    "cuda": time_cuda, "npu": time_npu, "cpu": time_cpu,
}
