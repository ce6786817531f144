"""bench.timers: eager and graph figures take the contenders in turn, round after round, so host drift is shared."""
from __future__ import annotations

from collections import Counter

from bench.timers import graph_all, per_call_us, repetitions


def test_contenders_run_in_turn_round_after_round() -> None:
    """Each round runs every contender's batch once before the next round starts (a drift of the host's speed between
    contenders would otherwise land on one of them); one median per contender."""
    order: list[str] = []
    syncs: list[int] = []
    bodies = {name: (lambda name=name: order.append(name)) for name in ("kernel", "anchor", "torch")}
    got = per_call_us(bodies, lambda: syncs.append(len(order)), calls=2, rounds=3)
    timed = order[30:]  # after 10 warm-up calls each
    assert timed == ["kernel", "kernel", "anchor", "anchor", "torch", "torch"] * 3, timed
    assert set(got) == set(bodies) and all(v >= 0 for v in got.values())
    assert syncs[1:] == [30 + 2 * (i + 1) for i in range(9)], syncs  # one synchronize per batch, after its calls


def test_no_graphs_off_accelerators() -> None:
    assert graph_all("cpu", {"kernel": lambda: None}, repetitions("cpu", quick=True)) == {"kernel": (None, "no device graphs on cpu")}


def test_the_interpreter_run_calls_each_contender_a_fixed_handful_of_times(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The CPU smoke run's cost is a count of interpreter calls, not a timing plan (issue 25: 3 of 4 shapes in 120 s
    under load with 564 calls of each contender per shape)."""
    import torch

    from bench import measure
    from bench.shapes import interpreter_shapes

    calls: Counter[str] = Counter()

    def counting(name: str):  # type: ignore[no-untyped-def]
        def body(x: torch.Tensor, *rest: object) -> torch.Tensor:
            calls[name] += 1
            return torch.isnan(x).sum(-1).to(torch.int32)
        return body

    for name in ("anchor_num_nans", "torch_read", "triton_read"):
        monkeypatch.setattr(measure, name, counting(name))
    setup = measure.Setup("cpu", counting("kernel"), cores=2, reps=repetitions("cpu", quick=True))
    measure.time_shape(setup, interpreter_shapes()[0])
    assert set(calls) == {"kernel", "anchor_num_nans", "torch_read", "triton_read"}
    assert max(calls.values()) <= 6, calls
    assert repetitions("cpu", quick=False) == repetitions("cpu", quick=True)


def test_accelerator_plans_are_the_measured_ones() -> None:
    """The H200 figures in docs/bench.md were taken with these counts: a change here changes what they mean."""
    full, quick = repetitions("cuda", quick=False), repetitions("cuda", quick=True)
    assert (full.timed, full.calls, full.rounds, full.host_calls) == (100, 300, 5, 50)
    assert (quick.timed, quick.calls, quick.rounds) == (30, 100, 5)
    assert repetitions("npu", quick=True).timed == 20
