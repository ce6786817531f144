"""`python -m bench.sweep`: every configuration is checked before it is timed; the ranking is by the worst ratio."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from bench.sweep import SCHEMA, ranking
from bench.sweep_configs import measure
from bench.timers import repetitions, time_cpu
from tests.support.limits import hang_limit

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _cpu_backend_only(device: str) -> None:
    """Interpreter timings only: the sweep's numbers are taken on accelerators (python -m bench.sweep)."""
    if device != "cpu":
        pytest.skip("CPU-interpreter run of the sweep: part of --device cpu runs")


def test_wrong_configuration_is_listed_and_never_timed() -> None:
    x = torch.full((3, 40), float("nan"))
    x[:, ::3] = 1.0
    timed: list[str] = []

    def timer(fn, reps):  # type: ignore[no-untyped-def]
        timed.append(getattr(fn, "__name__", "?"))
        return time_cpu(fn, reps)

    def right() -> torch.Tensor:
        return torch.isnan(x).sum(-1).to(torch.int32)

    def off_by_one() -> torch.Tensor:
        return right() + 1

    def int64_counts() -> torch.Tensor:
        return torch.isnan(x).sum(-1)

    result = measure(x, iter([("right", right), ("off by one", off_by_one), ("int64", int64_counts)]), timer,
                     repetitions("cpu", quick=True))
    assert result["wrong"] == ["off by one", "int64"]
    assert [r["config"] for r in result["configs"]] == ["right"]
    assert "off_by_one" not in timed and "int64_counts" not in timed and "right" in timed


def test_ranking_is_by_worst_ratio_over_every_shape() -> None:
    shapes = [
        {"kind": "rows", "element_size": 2, "configs": [{"config": "a", "vs_anchor": 1.2}, {"config": "b", "vs_anchor": 1.05},
                                                         {"config": "c", "vs_anchor": 9.0}]},
        {"kind": "rows", "element_size": 2, "configs": [{"config": "a", "vs_anchor": 0.98}, {"config": "b", "vs_anchor": 1.01}]},
    ]
    (group,) = ranking(shapes)
    assert [row["config"] for row in group["best"]] == ["b", "a"]  # c ran on one shape only: not ranked
    assert group["best"][0]["worst_vs_anchor"] == 1.01


def test_cpu_smoke_run_writes_a_labelled_sweep(tmp_path: Path) -> None:
    out = tmp_path / "sweep.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TRITON_INTERPRET": "1"}
    proc = subprocess.run([sys.executable, "-m", "bench.sweep", "--device", "cpu", "--quick", "--out", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, check=False,
                          timeout=hang_limit(slowest_s=5.8))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "INTERPRETER SMOKE RUN" in proc.stdout
    data = json.loads(out.read_text())
    assert data["schema"] == SCHEMA and data["timings_meaningful"] is False
    assert {s["kind"] for s in data["shapes"]} == {"rows", "split"}
    for shape in data["shapes"]:
        assert shape["wrong"] == [] and shape["configs"], shape["key"]
    assert any(c["config"].startswith("sum-per-step") for s in data["shapes"] for c in s["configs"])
    assert any(c["config"].startswith("accumulator") for s in data["shapes"] for c in s["configs"])
