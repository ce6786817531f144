"""A night its machine stopped (results.json ended `environment`) is not judged (exit 2), says why, and is never
the baseline of a later night: the previous good night stays it."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nightly import nights
from reports import results
from tests.nightly.test_nightly import A, FakeRunner, put_night, results_doc, run

FAILURE = {"name": "cuda-device-busy", "kind": "device", "where": "start-up", "backend": "cuda",
           "message": "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable"}


def environment_doc() -> dict[str, Any]:
    """What the suite writes when the machine stops it at start-up (reports.placeholders.environment_ending)."""
    return {**results_doc({}), "exitstatus": 6, "finished": False, "ended": "environment", "collected": 0,
            "ran": 0, "cases": [], "environment_failure": FAILURE}


def test_an_environment_night_is_not_judged_and_the_baseline_stays(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    put_night(tmp_path, "2026-07-01", results_doc({A: "passed"}))
    code = run(["--device", "cuda", "--root", str(tmp_path), "--night", "2026-07-02", "--no-bench",
                "--no-refresh-durations"], FakeRunner(environment_doc(), pytest_code=6))
    assert code == 2
    record = json.loads((tmp_path / "2026-07-02" / "nightly.json").read_text())
    assert record["verdict"] == "NOT JUDGED" and record["steps"]["verdicts"]["status"] == "not judged"
    assert "ENVIRONMENT (cuda-device-busy)" in record["steps"]["verdicts"]["detail"]
    capsys.readouterr()
    later = FakeRunner(results_doc({A: "failed"}), pytest_code=1)
    assert run(["--device", "cuda", "--root", str(tmp_path), "--night", "2026-07-03", "--no-bench",
                "--no-refresh-durations"], later) == 1  # judged against 07-01, not the environment night
    out = capsys.readouterr().out
    assert "skipping 2026-07-02: the run's environment stopped it" in out and "previous night: 2026-07-01" in out


def test_results_say_environment_and_never_a_finished_or_green_one(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(environment_doc()))
    assert results.load(path).environment_failure == FAILURE
    assert nights.read_results(tmp_path)[0] is None
    for lie in ({"finished": True, "exitstatus": 1, "collected": 1, "ran": 1}, {"exitstatus": 0}):
        path.write_text(json.dumps({**environment_doc(), **lie}))
        with pytest.raises(results.ResultsError, match="ended is environment"):
            results.load(path)
    older = results_doc({A: "passed"})  # a file written before environment endings existed reads as before
    path.write_text(json.dumps(older))
    assert results.load(path).environment_failure is None
