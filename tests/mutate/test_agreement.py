"""The warm judge gives the statuses one isolated pytest per mutant gives (mutate.agreement).

A fixed slice of upstream vLLM's design (a kill, a survivor, a build error): `tox` judges it on the special-values
family (--select nan_special: six cases, no pytest stage; the warm judge's part of the time is its start, not the
cases), `tox -e selftest-slow` and the CPU nightly on the whole suite (there the
survivor also survives the pytest stage); the seeded 30 mutants of every design run in `tox -e mutate-agreement`
(result in docs/mutate.md)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mutate import classify
from mutate.agreement import agrees
from mutate.run import ROOT
from tests.support.limits import hang_limit

# the kill: the count starts at 1. (Not an early return before the store: its killer in a warm worker may be a
# case whose output pytest's fresh process finds zeroed by luck; the tox env reports such kills, CI stays stable.)
SLICE = {"e9a68f570f": "killed", "9f5108c2a9": "survived", "353f208643": "not_viable"}


def test_statuses_agree_only_when_they_mean_the_same() -> None:
    assert agrees({"status": "killed"}, "killed") == (True, "same status")
    assert not agrees({"status": "killed"}, "survived")[0]
    assert not agrees({"status": "survived"}, "killed")[0]
    assert not agrees({"status": "not_viable", "stage": "warm"}, "survived")[0]
    assert agrees({"status": "not_viable", "stage": "compile"}, "survived")[0]
    for status in (classify.NO_COVERAGE, classify.EQUIVALENT, classify.DUPLICATE):
        assert agrees({"status": status}, "survived")[0] and not agrees({"status": status}, "killed")[0]


@pytest.mark.timeout(hang_limit(slowest_s=205))  # 3 mutants both ways on the whole suite, beside a mutation run
@pytest.mark.parametrize("select", ["nan_special", pytest.param(None, marks=pytest.mark.nan_selftest_slow)],
                         ids=["special", "whole-suite"])
def test_warm_judge_agrees_with_pytest_on_a_slice(tmp_path: Path, select: str | None) -> None:
    done = subprocess.run([sys.executable, "-m", "mutate.agreement", "--kernel", "tests.designs.upstream_vllm",
                           "--ids", ",".join(SLICE), "--out", str(tmp_path), "--jobs", "1",
                           *(["--select", select] if select else [])],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads((tmp_path / "agreement.json").read_text())
    assert doc["select"] == select
    assert {r["id"]: (r["warm"], r["pytest"]) for r in doc["mutants"]} == {k: (v, v) for k, v in SLICE.items()}
    assert [r["killer_fails_in_pytest"] for r in doc["mutants"] if r["warm"] == "killed"] == [True]
    assert "3 of 3 mutants agree" in done.stdout
