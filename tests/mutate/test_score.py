"""The issue's proof: a deliberately weakened suite scores lower on the same kernel than a stronger one (`tox`: the
square family, then it and the IEEE family; tox -e selftest-slow: the anchor's 120-case matrix, then the full
suite); a rerun with nothing changed judges nothing again; a run the budget cuts is INCOMPLETE with its own exit
status. Kept cheap: three fixed mutants of vllm-ascend's design (picked by operator and change, so their ids follow
the source), the CPU interpreter, no equivalence trials.
"""
from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.source_file import find_source
from mutate import cli, generate
from mutate.run import ROOT
from tests.support.limits import hang_limit

KERNEL = "tests.designs.vllm_ascend"
# (function, operator, change): two NaN-predicate constants the canonical NaNs of the matrix and the square family
# cannot tell apart (the IEEE family's low-payload NaNs can), and an off-by-one mask their multi-row cases catch
PICKS = (("_isnan", "int_constant", "2147483647 -> 2147483646 (-1)"),
         ("_isnan", "int_constant", "2139095040 -> 2139095041 (+1)"),
         ("_num_nans_kernel", "compare_boundary", "< -> <="))
# mutate's own budget, a hang stop here: one mutate run of this test (the baseline included) took 75 s on 2 cores
BUDGET_S = hang_limit(slowest_s=75)


def _ids() -> list[str]:
    path = find_source(KERNEL)
    gen = generate.generate(path.read_text(), "tests/designs/vllm_ascend.py", KERNEL)
    ids = [m.id for pick in PICKS for m in gen.mutants if (m.function, m.operator, m.change) == pick]
    assert len(ids) == len(PICKS), f"the picked mutants are gone from {KERNEL}: {PICKS}"
    return ids


def _run(tmp: Path, *extra: str, ids: list[str] | None = None, budget_s: float = BUDGET_S) -> tuple[int, dict[str, Any]]:
    code = cli.main(["--kernel", KERNEL, "--ids", ",".join(ids or _ids()), "--out", str(tmp), "--trials", "0",
                     "--jobs", "2", "--budget-s", f"{budget_s:.0f}", *extra])
    return code, json.loads((tmp / "mutation.json").read_text())


def _complete(tmp: Path, *extra: str) -> dict[str, Any]:
    code, doc = _run(tmp, *extra)
    assert code == (1 if doc["counts"]["survived"] else 0)
    assert doc["counts"]["not_run"] == doc["counts"]["timeout"] == 0 and doc["complete"], doc["counts"]
    return doc


def _selected(select: str | None) -> list[str]:
    return ["--select", select] if select else []


# `tox`: the square family (18 cases), then it and the IEEE family (what kills its survivors): 14 s and 8 s where the
# matrix took 23 s and 17 s (2 cores); tox -e selftest-slow and the CPU nightly: the matrix, then the whole suite
@pytest.mark.parametrize("weak_select, strong", [
    ("nan_square", "nan_square or nan_ieee"),
    pytest.param("nan_matrix", None, marks=pytest.mark.nan_selftest_slow)], ids=["square-and-ieee", "whole-suite"])
def test_a_weakened_suite_scores_lower_than_the_full_suite(tmp_path: Path, weak_select: str,
                                                           strong: str | None) -> None:
    weak = _complete(tmp_path / "weak", "--select", weak_select)
    full = _complete(tmp_path / "full", *_selected(strong))
    assert weak["score"] is not None and full["score"] is not None
    assert weak["score"] < full["score"], (weak["counts"], full["counts"])
    survivors = {m["id"] for m in weak["mutants"] if m["status"] == "survived"}
    killed_by_full = {m["id"]: m["killer"]["family"] for m in full["mutants"] if m["status"] == "killed"}
    assert survivors and survivors <= set(killed_by_full), "the full suite must kill what the matrix misses"
    assert {killed_by_full[i] for i in survivors} == {"ieee"}
    assert (tmp_path / "full" / "mutation.html").read_text().count("MUTATION SCORE 100%") == 1

    # nothing changed: every result and the baseline from the cache
    again_code, again = _run(tmp_path / "full", *_selected(strong))
    assert again["from_cache"] == 3 and again_code == 0 and again["counts"] == full["counts"]
    other = next(m.id for m in generate.generate(find_source(KERNEL).read_text(), "tests/designs/vllm_ascend.py",
                                                 KERNEL).mutants if m.id not in _ids())
    cut_code, cut = _run(tmp_path / "full", *_selected(strong), ids=[other], budget_s=1)  # nothing within its budget
    assert cut_code == cli.EXIT_INCOMPLETE == 3 and not cut["complete"] and cut["counts"]["not_run"] == 1
    assert cli.summary_line(cut).startswith("mutation INCOMPLETE: score n/a")

    # SIGTERM after the first judged mutant (a CI job's timeout): the workers end, what was judged is reported
    others = [m.id for m in generate.generate(find_source(KERNEL).read_text(), "tests/designs/vllm_ascend.py",
                                              KERNEL).mutants if m.id not in _ids()][1:9]
    proc = subprocess.Popen([sys.executable, "-m", "mutate", "--kernel", KERNEL, "--ids", ",".join(others),
                             "--out", str(tmp_path / "full"), "--trials", "0", "--jobs", "1", "--budget-s",
                             f"{BUDGET_S:.0f}", *_selected(strong)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    seen: list[str] = []
    for line in proc.stdout:
        seen.append(line)
        if line.startswith("mutate: [1/"):
            proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=BUDGET_S) == cli.EXIT_INCOMPLETE, seen
    stopped = json.loads((tmp_path / "full" / "mutation.json").read_text())
    assert not stopped["complete"] and stopped["counts"]["not_run"] >= 1, stopped["counts"]
    judged = [m for m in stopped["mutants"] if m["id"] in others and m["status"] != "not_run"]
    assert judged and any("interrupted" in m["why"] for m in stopped["mutants"] if m["status"] == "not_run")


def test_a_module_without_mutants_is_a_usage_error(capsys: Any) -> None:
    assert cli.main(["--kernel", "cases.anchor", "--list"]) == cli.EXIT_USAGE
    assert "0 mutants in cases/anchor.py" in capsys.readouterr().err
