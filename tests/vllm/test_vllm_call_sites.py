"""Against an installed vLLM: the sampler and the rejection sampler must call the kernel under test, as set up by
--kernel-setup. A patch that rebinds only the logits module leaves them on the old function; this says so."""
from __future__ import annotations

import json

import pytest

from harness.call_sites import check_call_sites, mismatches, vllm_installed
from harness.kernel_setup import describe_resolution
from harness.target import KernelUnderTest
from verdict.record import CALL_SITE_PROPERTY

pytestmark = [
    pytest.mark.nan_vllm,
    pytest.mark.skipif(not vllm_installed(), reason="vllm is not installed: no call sites to check"),
]


def _about_vllm(target: KernelUnderTest, config: pytest.Config) -> bool:
    """The check means something when vLLM's kernel is under test, or a setup patched vLLM to run ours."""
    defining = str(getattr(target.get_num_nans, "__module__", ""))
    setups = config.getoption("--kernel-setup", default=None)
    return target.module_name.startswith("vllm.") or defining.startswith("vllm.") or bool(setups)


def test_vllm_callers_hold_the_kernel_under_test(
    target: KernelUnderTest, pytestconfig: pytest.Config, record_property: pytest.RecordProperty
) -> None:
    if not _about_vllm(target, pytestconfig):
        pytest.skip(f"--kernel {target.module_name} is not vLLM's and no --kernel-setup patched vLLM to run it")
    module_function = target.get_num_nans.__wrapped__  # the module's own function, not the harness's guard
    results = check_call_sites(module_function)
    record_property("kernel_resolution", json.dumps(describe_resolution(target.module)))
    for result in results:  # each becomes part of the record: a mismatch is the `call_site` verdict
        record_property(CALL_SITE_PROPERTY, json.dumps(result.as_dict()))
    wrong = mismatches(results)
    assert not wrong, "vLLM would not run the kernel under test:\n" + "\n".join(r.message for r in wrong)
