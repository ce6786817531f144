"""The call-site check on fake vLLM-shaped modules: a caller that imported get_num_nans by name and was missed by a
patch must be reported, with both functions named."""
from __future__ import annotations

import importlib
import json

import pytest

from harness.call_sites import CallSite, check_call_sites, mismatches
from tests.vllm.fakes import FakeModules

pytestmark = pytest.mark.nan_harness

_LOGITS = "def get_num_nans(logits):\n    return 'upstream'\n"
_PATCH = "def get_num_nans(logits):\n    return 'patched'\n"


def _vllm_shape(fakes: FakeModules, prefix: str) -> tuple[str, tuple[CallSite, ...]]:
    """A defining module and two callers that bind the name at import, like sampler and rejection sampler."""
    logits = fakes.write(f"{prefix}.metrics.logits", _LOGITS)
    callers = tuple(
        CallSite(name, fakes.write(f"{prefix}.{module}", f"from {logits} import get_num_nans\n"))
        for name, module in (("sampler", "sample.sampler"), ("rejection sampler", "spec_decode.rejection_sampler"))
    )
    for site in callers:
        importlib.import_module(site.module)
    return logits, callers


def test_callers_of_an_unpatched_module_match(fakes: FakeModules) -> None:
    logits, sites = _vllm_shape(fakes, "fake_ok")
    results = check_call_sites(importlib.import_module(logits).get_num_nans, sites)
    assert [r.match for r in results] == [True, True] and mismatches(results) == ()
    assert "holds the kernel under test" in results[0].message


def test_patching_only_the_defining_module_leaves_callers_stale(fakes: FakeModules) -> None:
    """The planted mistake: the module is rebound after the callers imported the name."""
    logits, sites = _vllm_shape(fakes, "fake_stale")
    patch = fakes.write("fake_stale_patch", _PATCH)
    module = importlib.import_module(logits)
    module.get_num_nans = importlib.import_module(patch).get_num_nans
    results = check_call_sites(module.get_num_nans, sites)
    assert [r.site.name for r in mismatches(results)] == ["sampler", "rejection sampler"]
    first = results[0]
    assert first.found is not first.expected and first.found(None) == "upstream"
    assert first.message.startswith(f"sampler ({sites[0].module}.get_num_nans): holds a different function")
    assert f"found {logits}.get_num_nans (" in first.message and f"expected {patch}.get_num_nans (" in first.message
    record = json.loads(json.dumps(first.as_dict()))
    assert record["match"] is False and record["found"]["module"] == logits and record["expected"]["module"] == patch


def test_patching_module_and_callers_matches(fakes: FakeModules) -> None:
    logits, sites = _vllm_shape(fakes, "fake_full")
    patched = importlib.import_module(fakes.write("fake_full_patch", _PATCH)).get_num_nans
    for target in (logits, *(s.module for s in sites)):
        importlib.import_module(target).get_num_nans = patched
    assert mismatches(check_call_sites(patched, sites)) == ()


def test_one_stale_caller_is_singled_out(fakes: FakeModules) -> None:
    logits, sites = _vllm_shape(fakes, "fake_one")
    patched = importlib.import_module(fakes.write("fake_one_patch", _PATCH)).get_num_nans
    for target in (logits, sites[0].module):
        importlib.import_module(target).get_num_nans = patched
    assert [r.site.name for r in mismatches(check_call_sites(patched, sites))] == ["rejection sampler"]


def test_a_wrapper_around_the_kernel_is_not_the_kernel(fakes: FakeModules) -> None:
    logits, sites = _vllm_shape(fakes, "fake_wrap")
    expected = importlib.import_module(logits).get_num_nans
    importlib.import_module(sites[0].module).get_num_nans = lambda x: expected(x)
    assert [r.site.name for r in mismatches(check_call_sites(expected, sites))] == ["sampler"]


def test_a_moved_or_missing_caller_is_a_failure_not_a_crash(fakes: FakeModules) -> None:
    logits, _ = _vllm_shape(fakes, "fake_moved")
    no_name = fakes.write("fake_moved.sample.sampler_v2", "x = 1\n")
    broken = fakes.write("fake_moved.broken", "raise ImportError('needs a GPU')\n")
    sites = (CallSite("renamed", no_name), CallSite("broken", broken), CallSite("gone", "fake_moved.nowhere"))
    results = check_call_sites(importlib.import_module(logits).get_num_nans, sites)
    assert mismatches(results) == results and all(r.found is None for r in results)
    assert "has no get_num_nans (moved upstream?)" in results[0].message
    assert "cannot import fake_moved.broken: ImportError: needs a GPU" in results[1].message
    assert "cannot import fake_moved.nowhere: ModuleNotFoundError" in results[2].message
    assert all(f"expected {logits}.get_num_nans" in r.message for r in results)
