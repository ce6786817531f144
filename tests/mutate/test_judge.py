"""One judge: a mutant's status comes from the suite's own tests, run in a warm worker's pytest session.

A fixed slice of upstream vLLM's design (a kill, a survivor, a build error) through `python -m mutate` on the
special-values family (`tox`) and on the whole suite (`tox -e selftest-slow`): the kill names the test that failed,
the survivor passes every test that reaches it, the build error is not viable, never a kill.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mutate import cli
from tests.support.limits import hang_limit

KERNEL = "tests.designs.upstream_vllm"
# the count starts at 1 (killed); a boundary the special values cannot tell (survives them); a step of 0 (not viable)
SLICE = {"e9a68f570f": "killed", "9f5108c2a9": "survived", "353f208643": "not_viable"}


@pytest.mark.timeout(hang_limit(slowest_s=120))
@pytest.mark.parametrize("select", ["nan_special", pytest.param(None, marks=pytest.mark.nan_selftest_slow)],
                         ids=["special", "whole-suite"])
def test_the_session_judge_names_kills_survivors_and_build_errors(tmp_path: Path, select: str | None) -> None:
    code = cli.main(["--kernel", KERNEL, "--ids", ",".join(SLICE), "--out", str(tmp_path), "--trials", "0",
                     "--jobs", "2", "--no-cache", *(["--select", select] if select else [])])
    doc = json.loads((tmp_path / "mutation.json").read_text())
    assert code == 1 and doc["complete"], doc["counts"]
    found = {m["id"]: m for m in doc["mutants"]}
    assert {i: m["status"] for i, m in found.items()} == SLICE
    killer = found["e9a68f570f"]["killer"]["nodeid"]
    assert killer.startswith("tests/precision/") and "::" in killer
    assert "build error" in found["353f208643"]["why"]
    assert found["9f5108c2a9"]["cases_run"] > 0 and found["9f5108c2a9"]["killer"] is None
