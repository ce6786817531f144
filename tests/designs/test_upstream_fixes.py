"""setups.upstream_fixes on the designs users bring: the fixed upstream-vLLM and vllm-ascend kernels pass the whole
suite, each fix's edit is only its pattern, and a correct kernel gets no edit.

test_design_verdicts holds the other half: each unfixed design fails exactly the cases the fixes name.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from setups import upstream_fixes
from setups.upstream_fixes import BY_NAME, fix_source, unified_diff
from tests.support.forkserver import ForkServer
from tests.support.limits import hang_limit
from tests.support.subrun import SUITE, run_expected_clean
from verdict.record import CaseParams, Check, TestRecord, WrongRow

pytestmark = pytest.mark.nan_selftest

ROOT = Path(__file__).resolve().parents[2]
# design -> the fixes its source needs (REFERENCE.md §8: both ignore the column stride and offset rows in 32 bits)
NEEDS = {"upstream_vllm": {"int32_flags", "row_offset_64", "column_stride"},
         "vllm_ascend": {"row_offset_64", "column_stride"}}
CORRECT = ("kernel.num_nans", "tests.designs.independent", "tests.designs.self_compare")


def _source(module: str) -> str:
    return (ROOT / (module.replace(".", "/") + ".py")).read_text(encoding="utf-8")


@pytest.mark.parametrize("design", sorted(NEEDS))
def test_each_design_gets_the_fixes_it_needs_and_only_those_lines(design: str) -> None:
    fixed = fix_source(_source(f"tests.designs.{design}"))
    assert {fix.name for fix, _ in fixed.applied} == NEEDS[design]
    diff = unified_diff(fixed, f"{design}.py")
    removed = [line for line in diff.splitlines() if line.startswith("-") and not line.startswith("---")]
    added = [line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert len(removed) == len(NEEDS[design]) - 1 and len(added) == len(removed) + 2, diff  # two lines inserted
    assert not fix_source(fixed.source).applied, "a fixed module must need no further fix (idempotent)"


@pytest.mark.parametrize("module", CORRECT)
def test_a_correct_kernel_gets_no_edit(module: str) -> None:
    fixed = fix_source(_source(module))
    assert not fixed.applied and fixed.source == fixed.original


def test_the_row_offset_fix_leaves_a_program_id_that_is_not_multiplied() -> None:
    """`range(tl.program_id(0), n, tl.num_programs(0))` is a loop start, not a row offset: no edit."""
    source = ("import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(p, n):\n"
              "    for i in range(tl.program_id(0), n, tl.num_programs(0)):\n        tl.store(p + i, i)\n")
    assert not fix_source(source, ["row_offset_64"]).applied
    times = source.replace("tl.store(p + i, i)", "tl.store(p + tl.program_id(0) * n, i)")
    fixed = fix_source(times, ["row_offset_64"])
    assert "tl.program_id(0).to(tl.int64) * n" in fixed.source and "range(tl.program_id(0)," in fixed.source


def test_unknown_fix_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown fix nope"):
        fix_source("", ["nope"])


def _record(test_id: str, family: str = "", rows: tuple[tuple[int, int], ...] = (),
            shape: tuple[int, ...] = (4, 128)) -> TestRecord:
    params = CaseParams(family, test_id, shape=shape)
    wrong = tuple(WrongRow(i, e, g) for i, (e, g) in enumerate(rows))
    check = Check(params, "wrapper", "wrong_counts", wrong_rows=wrong)
    return TestRecord(f"tests/precision/test_x.py::{test_id}", "failed", "wrong_counts", params, checks=(check,))


def test_each_fix_names_its_cases_and_no_other() -> None:
    past = _record("test_case[fp16-bigoffset-3x4099-stride1073745920-wrapper]", "bigoffset")
    transposed = _record("test_outside_domain_refused_or_counted[transposed]")
    ored = _record("test_case[fp32-matrix-prefix-4x128-0.1-direct]", "matrix", ((12, 1), (3, 1)))
    halved = _record("test_case[fp32-matrix-prefix-4x128-0.1-direct]", "matrix", ((12, 6),))
    # a row of two 8192-blocks: ORed per block it counts at most 2 (triton-ascend), never 3
    two_blocks = _record("test_case[fp32-prefix-2x16384-nan1.0-direct]", "matrix", ((16384, 2), (16384, 1)),
                         shape=(2, 16384))
    three = _record("test_case[fp32-prefix-2x16384-nan1.0-direct]", "matrix", ((16384, 3),), shape=(2, 16384))
    records = (past, transposed, ored, halved, two_blocks, three)
    named = {name: [r for r in records if fix.names(r)] for name, fix in BY_NAME.items()}
    assert named == {"row_offset_64": [past], "column_stride": [transposed], "int32_flags": [ored, two_blocks]}


def test_the_command_writes_the_fixed_module_and_its_diff(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert upstream_fixes.main(["--kernel", "tests.designs.vllm_ascend", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "row_offset_64 at line" in out and "column_stride at line" in out and "int32_flags" not in out
    ast.parse((tmp_path / "vllm_ascend.py").read_text())
    assert (tmp_path / "vllm_ascend.diff").read_text().startswith("--- a/tests/designs/vllm_ascend.py\n")
    assert upstream_fixes.main(["--kernel", "kernel.num_nans", "--out", str(tmp_path / "none")]) == 0
    assert "nothing written" in capsys.readouterr().out and not (tmp_path / "none").exists()


@pytest.mark.timeout(hang_limit(slowest_s=85.6))  # a whole-suite sub-run, as test_design_verdicts
@pytest.mark.parametrize("design", sorted(NEEDS))
def test_the_fixed_design_passes_the_whole_suite(design: str, tmp_path: Path, forks: ForkServer | None,
                                                 device: str) -> None:
    if device != "cpu":
        pytest.skip("the designs' sub-runs are the CPU interpreters' (test_design_verdicts)")
    assert upstream_fixes.main(["--kernel", f"tests.designs.{design}", "--out", str(tmp_path / "fixed")]) == 0
    run = run_expected_clean(tmp_path / "run", [SUITE, "--kernel-path", str(tmp_path / "fixed"), "--kernel", design],
                             server=forks)
    assert run.completed and run.returncode == 0, run.describe()
    assert len(run.records) > 400 and not run.failed, run.describe()


def test_install_serves_the_fixed_source_to_triton(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  device: str) -> None:
    """Triton builds kernels from inspect.getsource, not from the code object: the setup must fix what it reads."""
    import inspect
    import sys

    import torch

    name = "nan_upstream_fix_probe"
    (tmp_path / f"{name}.py").write_text(_source("tests.designs.vllm_ascend"), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv(upstream_fixes.MODULE_ENV, name)
    monkeypatch.setattr(sys, "meta_path", list(sys.meta_path))  # the finder leaves with the test
    upstream_fixes.install()
    try:
        module = __import__(name)
        assert upstream_fixes.loaded_fixes(module)
        assert ".to(tl.int64)" in inspect.getsource(module._num_nans_kernel.fn)
        assert module.__file__ == str(tmp_path / f"{name}.py")
        logits = torch.zeros(3, 5, device=device)  # compiled Triton takes only tensors on its device
        logits[0, :] = float("nan")  # transposed: every row holds one NaN
        counts = module.get_num_nans(logits.t())
        assert counts.device.type == device and counts.tolist() == [1] * 5
    finally:
        sys.modules.pop(name, None)


def test_the_docs_hold_the_fixes_table() -> None:
    """docs/upstream.md's table is `python -m setups.upstream_fixes --table`: a fix added or reworded updates it."""
    page = (ROOT / "docs" / "upstream.md").read_text(encoding="utf-8")
    assert upstream_fixes.table() in page, "docs/upstream.md is stale: paste `python -m setups.upstream_fixes --table`"
