"""`python -m bench --device cpu --quick` runs end to end through the interpreter; a wrong kernel stops it."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench import SCHEMA
from bench.report import html_link_fragment
from tests.support.limits import hang_limit

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _cpu_backend_only(device: str) -> None:
    """The smoke run is the CPU backend's form of the benchmark (an accelerator runs the real one, tox -e bench-*)."""
    if device != "cpu":
        pytest.skip("CPU-interpreter smoke run: part of --device cpu runs")


def _bench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TRITON_INTERPRET": "1"}
    return subprocess.run(
        [sys.executable, "-m", "bench", "--device", "cpu", "--quick", "--out", str(tmp_path / "bench.json"), *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=hang_limit(slowest_s=6.1),
    )


def test_cpu_smoke_writes_a_labelled_bench_json(tmp_path: Path) -> None:
    proc = _bench(tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "INTERPRETER SMOKE RUN" in proc.stdout
    data = json.loads((tmp_path / "bench.json").read_text())
    assert data["schema"] == SCHEMA and data["timings_meaningful"] is False and "mean nothing" in data["note"]
    assert data["targets"] == []
    env = data["environment"]
    assert env["device"] == "cpu" and env["kernel_module"] == "kernel" and env["torch"] and env["triton"]
    assert {r["group"] for r in data["rows"]} == {"decode", "mid", "large"}
    for row in data["rows"]:
        assert set(row["us"]) == {"kernel", "anchor", "torch", "roofline", "launch_floor"}
        assert all(v > 0 for v in row["us"].values()) and row["bytes"] > 0
        assert set(row["ratios"]) >= {"speedup_vs_anchor", "speedup_vs_torch", "roofline_fraction",
                                      "eager_vs_anchor", "eager_vs_torch", "eager_over_launch_and_device"}
        assert set(row["eager_us"]) == {"kernel", "anchor", "torch", "launch_floor"}
        assert all(v > 0 for v in row["eager_us"].values())
        assert row["graph_us"] == {"kernel": None, "anchor": None, "torch": None}  # no device graphs on the CPU
        assert row["graph_why"]["kernel"] == "no device graphs on cpu" and row["ratios"]["graph_vs_anchor"] is None
    assert any(r["stride"][0] > r["shape"][1] for r in data["rows"])  # the padded case
    if data["plot"]:  # matplotlib installed (requirements/bench.txt)
        assert (tmp_path / data["plot"]).stat().st_size > 0
        assert html_link_fragment(tmp_path / "bench.json") is not None


def test_wrong_counts_stop_the_run_before_timing(tmp_path: Path) -> None:
    """The planted kernel from a folder on no path: --kernel-path, as the suite and mutate take it."""
    (tmp_path / "mine").mkdir()
    shutil.copy(ROOT / "tests" / "bench" / "fixtures" / "off_by_one.py", tmp_path / "mine" / "my_off_by_one.py")
    proc = _bench(tmp_path, "--kernel", "my_off_by_one", "--kernel-path", str(tmp_path / "mine"), "-k", "fp32")
    assert proc.returncode == 1, proc.stderr
    assert "verification failed, nothing timed" in proc.stderr and "kernel: counts differ" in proc.stderr
    assert "timed " not in proc.stdout
    assert not (tmp_path / "bench.json").exists()


@pytest.mark.parametrize(("argv", "said"), [(["--device", "tpu"], "invalid choice: 'tpu'"),
                                           (["--kernel-path", "no/such/folder"], "no/such/folder: not a folder")])
def test_bad_arguments_are_a_usage_error(argv: list[str], said: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "bench", *argv], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=hang_limit(slowest_s=0.1))
    assert proc.returncode == 2 and said in proc.stderr, proc.stderr
