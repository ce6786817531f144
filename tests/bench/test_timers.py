"""bench.timers: eager and graph figures take the contenders in turn, round after round, so host drift is shared."""
from __future__ import annotations

from bench.timers import graph_all, per_call_us


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
    assert graph_all("cpu", {"kernel": lambda: None}, quick=True) == {"kernel": (None, "no device graphs on cpu")}
