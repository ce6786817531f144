"""The accuracy table's headline says what it covers: a subset of the labelled kernels, or a narrowed suite."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.selftest.accuracy import CORRECT, LEFT_OUT, ROOT, Label, labels, render, run_one

pytestmark = pytest.mark.nan_selftest

ROW = {"kernel": "tests.planted.pred_inf", "truth": "predicate", "first": "predicate", "name": "the NaN predicate",
       "scope": "", "items": 1, "right": True, "finished": True, "failed": 2, "seconds": 1.0}


def test_a_subset_or_a_narrowed_suite_says_so() -> None:
    assert "1 of the 46 labelled kernels run (--only)" in render([ROW], "cpu", "triton 3.9.0", 46)
    assert "the suite narrowed by `-m nan_special`" in render([ROW], "cpu", "triton 3.9.0", 1, ["-m", "nan_special"])
    whole = render([ROW], "cpu", "triton 3.9.0", 1)
    assert "whole suite" in whole and "labelled kernels run" not in whole


def test_the_table_labels_every_planted_kernel_and_the_correct_ones() -> None:
    table = labels("triton 3.9.0", "cpu")
    assert {lab.name for lab in table if lab.truth == CORRECT} == {"kernel", "independent"}
    assert all(lab.truth != CORRECT for lab in table if lab.module.startswith("tests.planted."))
    # self_compare is correct; on the CPU its bf16 `x != x` meets the interpreters' defect, which is what it shows
    truth = {dev: {lab.name: lab.truth for lab in labels("triton 3.9.0", dev)}["self_compare"] for dev in ("cpu", "cuda")}
    assert truth == {"cpu": "interpreter", "cuda": CORRECT}


def test_hostile_kernels_everywhere_semantics_kernels_only_off_the_cpu() -> None:
    """The interpreter has no streams: tests/semantics is labelled only on accelerators; every hostile module is
    labelled or left out with a reason."""
    cpu = {lab.module: lab.truth for lab in labels("triton 3.9.0", "cpu")}
    cuda = {lab.module: lab.truth for lab in labels("triton 3.6.0", "cuda")}
    assert not any(m.startswith("tests.semantics.") for m in cpu)
    assert {m: t for m, t in cuda.items() if m.startswith("tests.semantics.")} == {
        "tests.semantics.side_stream": "device", "tests.semantics.host_sync": CORRECT,
        "tests.semantics.torch_fallback": CORRECT}
    hostile = {p.stem for p in (ROOT / "tests" / "hostile").glob("*.py") if p.stem != "__init__"}
    for table in (cpu, cuda):
        labelled = {m.rsplit(".", 1)[-1] for m in table if m.startswith("tests.hostile.")}
        assert labelled | {m.rsplit(".", 1)[-1] for m in LEFT_OUT} == hostile and not labelled & set(LEFT_OUT)
    assert cpu["tests.hostile.exits_zero"] == "device" and cpu["tests.hostile.float_counts"] == "output"
    assert all(why for why in LEFT_OUT.values())


def test_a_run_that_did_not_finish_is_never_right(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kernel that ends the process leaves the placeholder (no diagnosis): "correct" must not read as right."""
    def placeholder(argv: list[str], **_: object) -> subprocess.CompletedProcess[str]:
        (tmp_path / "spawns_child" / "results.json").write_text(json.dumps({"finished": False}), encoding="utf-8")
        return subprocess.CompletedProcess(argv, 2)

    monkeypatch.setattr(subprocess, "run", placeholder)
    row = run_one(Label("tests.hostile.spawns_child", CORRECT), "cpu", tmp_path, [])
    assert row["first"] == CORRECT and not row["right"] and not row["finished"]
    assert "NOT FINISHED" in render([row], "cpu", "triton 3.9.0", 1)
