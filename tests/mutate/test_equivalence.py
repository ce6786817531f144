"""Equivalence trials: a differing survivor is found with its input, an equivalent one is not, unreached code says so."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from harness.source_file import find_source
from mutate import generate
from mutate.run import ROOT
from tests.support.limits import hang_limit

KERNEL = "tests.designs.vllm_ascend"
EXTRA = '''

def _never_called(logits):
    return logits.shape[0] + 1
'''


def _mutant(tmp_path: Path, function: str, operator: str, change: str, source: str | None = None) -> Path:
    text = source if source is not None else find_source(KERNEL).read_text()
    gen = generate.generate(text, "tests/designs/vllm_ascend.py", KERNEL)
    m = next(m for m in gen.mutants if (m.function, m.operator, m.change) == (function, operator, change))
    (tmp_path / f"{m.module_name}.py").write_text(m.source, encoding="utf-8")
    return tmp_path / f"{m.module_name}.py", m


def _trials(path: Path, changed: tuple[int, ...], trials: int = 6) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "mutate.equivalence", "--original", KERNEL, "--mutant-file", str(path),
                           "--changed", ",".join(map(str, changed)), "--trials", str(trials), "--seed", "3"],
                          cwd=ROOT, capture_output=True, text=True, check=False,
                          timeout=hang_limit(slowest_s=8.7))  # the slowest test of this file
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_real_difference_is_found_with_its_input(tmp_path: Path) -> None:
    path, m = _mutant(tmp_path, "_num_nans_kernel", "compare_boundary", "< -> <=")
    got = _trials(path, m.changed_lines)
    assert got["differs"] and got["seed"] == 3 and got["input"] and got["original"] != got["mutant"]
    assert got["reached"] is True


def test_an_equivalent_mutant_is_plausibly_equivalent(tmp_path: Path) -> None:
    # without the assert, `num_reqs, vocab_size = logits.shape` still refuses every rank but 2
    path, m = _mutant(tmp_path, "get_num_nans", "guard_removed", "assert removed")
    got = _trials(path, m.changed_lines)
    assert got == {"differs": False, "trials": 6, "seed": 3, "reached": True}


def test_a_change_in_code_that_never_runs_is_not_reached(tmp_path: Path) -> None:
    source = find_source(KERNEL).read_text() + EXTRA
    path, m = _mutant(tmp_path, "_never_called", "int_constant", "1 -> 2 (+1)", source)
    got = _trials(path, m.changed_lines, trials=2)
    assert got["differs"] is False and got["reached"] is False


def test_a_refusal_on_one_side_only_is_a_difference(tmp_path: Path) -> None:
    path, m = _mutant(tmp_path, "get_num_nans", "compare_equality", "== -> !=")  # assert logits.dim() != 2
    got = _trials(path, m.changed_lines, trials=2)
    assert got["differs"] and "raised" in got["mutant"] and "raised" not in got["original"]
