"""bench.compare: exit 1 on a slower kernel, 0 on noise or a slower machine, 2 on a file that is not a bench.json."""
from __future__ import annotations

from pathlib import Path

import pytest

from bench.compare import main
from tests.bench.payloads import payload, scaled, write


def _run(tmp_path: Path, old: object, new: object, *extra: str) -> int:
    return main([write(tmp_path / "old.json", old), write(tmp_path / "new.json", new), *extra])


def test_same_run_passes(tmp_path: Path) -> None:
    assert _run(tmp_path, payload(), payload()) == 0


def test_slower_kernel_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The planted regression: one shape's kernel 20% slower while its roofline stayed put."""
    assert _run(tmp_path, payload(), scaled(payload(), kernel=1.2, key="fp32-1x152064")) == 1
    out = capsys.readouterr().out
    assert "SLOWER" in out and "fp32-1x152064" in out and "1 of 4 shape measures slower" in out


def test_slower_eager_call_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The planted regression of what a step pays: the kernel's eager per-call cost 30% up, the anchor's not."""
    assert _run(tmp_path, payload(), scaled(payload(), eager=1.3, key="fp32-1x152064")) == 1
    out = capsys.readouterr().out
    assert "SLOWER" in out and "eager" in out and "1 of 4 shape measures slower" in out


def test_slower_host_is_not_an_eager_regression(tmp_path: Path) -> None:
    """Every eager cost 30% up, the anchor's too: a slower host, not a slower kernel."""
    assert _run(tmp_path, payload(), scaled(payload(), eager=1.3, anchor_eager=1.3)) == 0


def test_runs_without_eager_figures_compare_device_time(tmp_path: Path) -> None:
    old = payload()
    for r in old["rows"]:
        del r["eager_us"]
    assert _run(tmp_path, old, scaled(payload(), eager=3.0)) == 0
    assert _run(tmp_path, old, scaled(payload(), kernel=1.2)) == 1


def test_slowdown_within_threshold_passes(tmp_path: Path) -> None:
    assert _run(tmp_path, payload(), scaled(payload(), kernel=1.08)) == 0
    assert _run(tmp_path, payload(), scaled(payload(), kernel=1.08), "--threshold", "0.05") == 1


def test_slower_machine_is_not_a_kernel_regression(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Everything 30% slower, roofline included: absolute time grew, the normalized ratio did not."""
    assert _run(tmp_path, payload(), scaled(payload(), kernel=1.3, roofline=1.3)) == 0
    assert "abs only" in capsys.readouterr().out


def test_faster_roofline_alone_is_not_a_kernel_regression(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, payload(), scaled(payload(), roofline=0.7)) == 0
    assert "norm only" in capsys.readouterr().out


def test_missing_and_new_shapes_are_listed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    new = payload()
    new["rows"][1]["key"] = "fp16-2x32000"
    assert _run(tmp_path, payload(), new) == 0
    out = capsys.readouterr().out
    assert "missing   bf16-1024x152064" in out and "new       fp16-2x32000" in out


@pytest.mark.parametrize("bad", [{"schema": "nan-harness-results/1", "rows": []}, [1, 2], "not json"])
def test_not_a_bench_file_exits_2(tmp_path: Path, bad: object) -> None:
    path = tmp_path / "bad.json"
    path.write_text(bad if isinstance(bad, str) else __import__("json").dumps(bad))
    assert main([str(path), write(tmp_path / "new.json", payload())]) == 2
    assert main([write(tmp_path / "old.json", payload()), str(path)]) == 2


def test_missing_file_exits_2(tmp_path: Path) -> None:
    assert main([str(tmp_path / "nope.json"), write(tmp_path / "new.json", payload())]) == 2


def test_interpreter_runs_are_not_compared(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(tmp_path, payload(meaningful=False), scaled(payload(meaningful=False), kernel=5.0)) == 0
    assert "mean nothing" in capsys.readouterr().out
