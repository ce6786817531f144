"""The order mutants start in: longest expected first, from the last run's seconds or the tests that reach them."""
from __future__ import annotations

from pathlib import Path

from mutate.baseline import Baseline
from mutate.engine import Job
from mutate.generate import Mutant
from mutate.schedule import expected_seconds, longest_first, packed_wall, packing


def _job(mid: str, line: int) -> Job:
    return Job(Mutant(mid, "int_constant", "f", line, 0, "1 -> 2", "", "", (line,), (line,), "k"), f"mut_{mid}",
               Path("."), ("k.py",))


def _base() -> Baseline:
    """Line 3 is reached by one cheap case, line 7 by every case and a slow pytest test, line 9 by none."""
    tests = ["t::a", "t::b", "p::slow"]
    coverage = {"t::a": {"k.py": [3, 7]}, "t::b": {"k.py": [7]}, "p::slow": {"k.py": [7]}}
    return Baseline(tests, set(), {"t::a": 0.5, "t::b": 2.0, "p::slow": 30.0}, coverage)


def test_never_judged_mutants_are_expected_to_cost_every_test_that_reaches_them() -> None:
    base = _base()
    assert expected_seconds(_job("narrow", 3), base, {}) == 0.5
    assert expected_seconds(_job("wide", 7), base, {}) == 32.5
    assert expected_seconds(_job("unreached", 9), base, {}) == 0.0


def test_the_last_runs_seconds_win_over_the_estimate() -> None:
    """A mutant that hung for 250 s last time starts first, though the tests that reach it are cheap."""
    jobs = [_job("wide", 7), _job("hung", 3), _job("narrow", 3), _job("unreached", 9)]
    order = [j.mutant.id for j in longest_first(jobs, _base(), {"hung": 250.0})]
    assert order == ["hung", "wide", "narrow", "unreached"]


def test_equal_estimates_keep_the_generation_order() -> None:
    jobs = [_job(f"m{k}", 7) for k in range(5)]
    assert [j.mutant.id for j in longest_first(jobs, _base(), {})] == [f"m{k}" for k in range(5)]


def test_a_long_mutant_started_last_is_what_longest_first_saves() -> None:
    """Nine 10 s mutants and one of 40 s on 2 slots: started last it ends the run at 80 s, started first at 70 s
    (no order beats 65 s, the work over the slots)."""
    doc = {"mutants": [{"seconds": 10.0}] * 9 + [{"seconds": 40.0}, {"seconds": 99.0, "cached": True}]}
    assert packed_wall([10.0] * 9 + [40.0], 2) == 80.0
    assert packing(doc, 2) == {"mutants": 10, "sum_s": 130.0, "longest_s": 40.0, "generation_order_s": 80.0,
                               "longest_first_s": 70.0, "bound_s": 65.0}
