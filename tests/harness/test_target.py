"""--kernel loading: the API is checked, and a missing or foreign kernel skips direct cases with a reason."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.target import ANCHOR_SIGNATURE, KernelLoadError, load
from tests.support.forkserver import ForkServer
from tests.support.subrun import run_pytest

MATRIX = "tests/precision/test_families.py"

pytestmark = pytest.mark.nan_harness


def test_our_kernel_has_the_anchor_signature() -> None:
    target = load("kernel")
    assert target.kernel is not None and target.kernel_skip_reason is None
    assert target.predicate_source in {"portable", "cann", "ascend", "cuda"}


def test_wrapper_only_module_skips_direct_launches() -> None:
    target = load("tests.harness.fixtures.wrapper_only")
    assert target.kernel is None and "exposes no _num_nans_kernel" in (target.kernel_skip_reason or "")


def test_foreign_signature_skips_direct_launches() -> None:
    target = load("tests.harness.fixtures.renamed_kernel")
    assert target.kernel is None
    assert str(ANCHOR_SIGNATURE) in (target.kernel_skip_reason or "")


def test_module_without_wrapper_is_refused() -> None:
    with pytest.raises(KernelLoadError, match="get_num_nans"):
        load("tests.harness.fixtures.no_wrapper")


@pytest.mark.parametrize(
    "kernel, expect",
    [("no.such.module", "No module named"), ("tests.harness.fixtures.no_wrapper", "get_num_nans"),
     ("tests.harness.fixtures.import_raises", "RuntimeError"), ("tests.harness.fixtures.import_exits", "SystemExit"),
     ("tests.harness.fixtures.import_syntax", "SyntaxError"), ("", "not a dotted module name"),
     (".kernel", "not a dotted module name")],
)
def test_bad_kernel_option_is_a_usage_error(kernel: str, expect: str, device: str, tmp_path: Path,
                                            forks: ForkServer | None) -> None:
    run = run_pytest(tmp_path, [MATRIX, "--kernel", kernel, "--co"], device=device, server=forks)
    assert run.returncode == 4 and expect in run.output, run.output


def test_family_from_its_own_module_runs_end_to_end(tmp_path: Path, device: str, forks: ForkServer | None) -> None:
    """--nan-family: a family defined only in the test tree is collected, compared, recorded and summarized."""
    run = run_pytest(tmp_path, [MATRIX, "--nan-family", "tests.harness.fixtures.toy_family", "-m", "nan_toy"],
                     device=device, server=forks, in_process=True)
    assert run.returncode == 0, run.output
    toy = [r for r in run.records if r.family == "toy"]
    assert len(toy) == 4 and all(r.verdict == "pass" and r.checks for r in toy), run.describe()
    assert {r.id for r in toy} == {f"test_case[toy-{n}x16-{p}]" for n in (2, 3) for p in ("wrapper", "direct")}
    assert 'id="nan-family-toy"' in run.html.read_text(encoding="utf-8")


@pytest.mark.parametrize("kernel, ok", [("with_aggregate", True), ("aggregate_off_by_one", False), ("wrapper_only", None)])
def test_aggregation_is_judged_where_the_module_has_it(kernel: str, ok: bool | None, tmp_path: Path,
                                                      device: str, forks: ForkServer | None) -> None:
    run = run_pytest(tmp_path, ["tests/precision/test_aggregate.py", "--kernel", f"tests.harness.fixtures.{kernel}"],
                     device=device, server=forks, in_process=True)
    verdicts = {r.verdict for r in run.records}
    if ok is None:
        assert run.returncode == 0 and verdicts == {"not_run"}, run.describe()
    elif ok:
        assert run.returncode == 0 and verdicts == {"pass"}, run.describe()
    else:
        assert run.returncode == 1 and "wrong_counts" in verdicts, run.describe()
