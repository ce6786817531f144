"""A kernel correct on a device that the CPU interpreter fails: `x != x` on loaded bf16 (tests/designs/self_compare.py).

The user's situation (issue 16, item 9): `pytest tests/precision --device cpu --kernel tests.designs.self_compare`
fails every bf16 case with NaNs. The verdicts stay failures (the interpreter cannot vouch for them), and the
diagnosis, from the records and the run's environment alone, names the interpreter's defect first and leaves
nothing as "no known pattern" or as "the NaN predicate".
"""
from __future__ import annotations

from pathlib import Path

import pytest

from reports.diagnosis import NO_PATTERN, diagnose
from tests.support.forkserver import ForkServer
from tests.support.subrun import run_suite
from verdict.interpreter import ENV_KEY
from verdict.record import WRONG_COUNTS

pytestmark = pytest.mark.nan_selftest

SELECT = "prefix-1x128 or special-2x1024 or ieee-rows"


def test_bf16_self_comparison_is_diagnosed_as_the_interpreter(tmp_path: Path, device: str,
                                                              forks: ForkServer | None) -> None:
    if device != "cpu":
        pytest.skip("the defect is the CPU interpreter's; compiled Triton counts every bf16 NaN this way")
    run = run_suite("tests.designs.self_compare", SELECT, tmp_path, server=forks)
    assert run.completed and run.returncode == 1, run.describe()
    failed = [run.record(n) for n in run.failed]
    assert failed and all(r.params and r.params.dtype == "bf16" and r.verdict == WRONG_COUNTS for r in failed), (
        run.describe())
    assert any(r.params and r.params.dtype == "fp32" for r in run.records if r.outcome == "passed"), run.describe()
    environment = run.doc["environment"]
    assert "bf16 `x != x` is false for NaN" in environment[ENV_KEY], environment
    found = diagnose(run.records, environment=environment)
    assert found[0].category == "interpreter" and found[0].name.startswith("bf16 NaN comparison under the triton"), (
        [(d.category, d.name) for d in found])
    assert set(found[0].cases) == {r.id for r in failed}
    assert all(d.name not in (NO_PATTERN, "the NaN predicate") for d in found), [(d.category, d.name) for d in found]
    assert [d["category"] for d in run.doc["diagnosis"]] == [d.category for d in found], run.doc["diagnosis"]
    assert 'id="nan-interpreter-note"' in run.html.read_text(), run.describe()
