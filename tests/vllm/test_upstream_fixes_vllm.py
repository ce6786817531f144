"""Against an installed vLLM (tox -e vllm-cpu, vllm-ascend-cpu): its own logits module, fixed by
setups.upstream_fixes as vLLM imports it, passes the whole suite, and unfixed it fails exactly the cases the fixes
that apply to it name (docs/upstream.md)."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends import triton_flavour
from harness.call_sites import vllm_installed
from harness.source_file import find_source
from setups.upstream_fixes import DEFAULT_MODULE, fix_source
from tests.support.limits import hang_limit
from tests.support.subrun import SUITE, SubRun, run_pytest

pytestmark = [
    pytest.mark.nan_vllm,
    pytest.mark.skipif(not vllm_installed(), reason="vllm is not installed: no upstream module to fix"),
]

CALL_SITES = "tests/vllm/test_vllm_call_sites.py"  # vLLM's sampler must hold the fixed function too


def _suite(folder: Path, fixed: bool) -> SubRun:
    setups = ["--kernel-setup", "setups.upstream_fixes:install"] if fixed else []
    setups += ["--kernel-setup", "setups.vllm_interpreter:install"]
    return run_pytest(folder, [SUITE, CALL_SITES, "--kernel", DEFAULT_MODULE, *setups, "-n", "2",
                               "--max-worker-restart", "12"])


@pytest.mark.timeout(hang_limit(slowest_s=140.0))  # two whole-suite sub-runs
def test_the_fixed_module_passes_and_the_unfixed_fails_what_the_fixes_name(tmp_path: Path, device: str) -> None:
    if device != "cpu":
        pytest.skip("this env runs vLLM's module through the CPU interpreter (setups.vllm_interpreter)")
    fixes = [fix for fix, _ in fix_source(find_source(DEFAULT_MODULE).read_text(encoding="utf-8")).applied]
    assert fixes, f"no fix applies to the installed {DEFAULT_MODULE}: its bugs are fixed upstream; update the docs"
    fixed = _suite(tmp_path / "fixed", fixed=True)
    assert fixed.completed and fixed.returncode == 0 and not fixed.failed, fixed.describe()
    assert len(fixed.records) > 400, fixed.describe()
    unfixed = _suite(tmp_path / "unfixed", fixed=False)
    assert unfixed.completed and unfixed.returncode == 1, unfixed.describe()
    named = {fix.name: sorted(r.id for r in unfixed.records if r.failed and fix.names(r)) for fix in fixes}
    unnamed = [r.id for r in unfixed.records if r.failed and not any(fix.names(r) for fix in fixes)]
    named_passing = [r.id for r in unfixed.records if not r.failed and any(fix.names(r) for fix in fixes)]
    assert not unnamed and not named_passing, f"unnamed failures {unnamed}; named but passing {named_passing}"
    assert named["row_offset_64"] and named["column_stride"], named  # shown on every interpreter
    if triton_flavour().startswith("triton-ascend"):  # its int1 sums are ORed per block (docs/upstream.md: 428 tests)
        assert len(named["int32_flags"]) > 400, named
