"""The suite's fixtures: the backend, the kernel under test, and the two calls every test checks counts through
(`check_counts`, `launch`), each recording its check on the running test. Registered by harness.hooks."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest
import torch

from harness import skips
from harness.backends import Backend
from harness.compare import assert_check
from harness.judge import PathNotRun, judge_counts, judge_path
from harness.hooks import BACKEND_KEY, TARGET_KEY
from harness.target import KernelUnderTest
from verdict.problem import Problem
from verdict.record import CHECK_PROPERTY, CaseParams, Check


# a run's own case builder (FamilyCase -> Built), where it keeps cases longer than the family test's last one: a
# mutation worker runs the same cases for mutant after mutant (mutate.warm)
CASE_BUILDER: pytest.StashKey[Callable[[object], object]] = pytest.StashKey()


@pytest.fixture(scope="session")
def backend(pytestconfig: pytest.Config) -> Backend:
    """The resolved backend's description."""
    return pytestconfig.stash[BACKEND_KEY]


@pytest.fixture(scope="session")
def device(backend: Backend) -> str:
    """The resolved backend's torch device type: cpu, cuda or npu."""
    return backend.torch_type


@pytest.fixture(scope="session")
def target(pytestconfig: pytest.Config) -> KernelUnderTest:
    """The kernel package under test."""
    return pytestconfig.stash[TARGET_KEY]


@dataclass(frozen=True)
class CheckCounts:
    """The `check_counts` fixture's call. The result must live on the input's device (`logits`, when given; else the
    backend's); `synchronize=False` reads it as a caller on the current stream would, with no device-wide
    synchronize first."""

    request: pytest.FixtureRequest
    backend: Backend

    def __call__(self, got: object, expected: torch.Tensor, params: CaseParams, path: str = "wrapper",
                 row_labels: Sequence[str] | None = None, side_effects: Sequence[Problem | str] = (),
                 logits: object = None, synchronize: bool = True) -> Check:
        __tracebackhide__ = True
        result = judge_counts(self.backend, got, expected, params, path, row_labels, side_effects, logits,
                              synchronize)
        record(self.request, result)
        assert_check(result)
        return result


@dataclass(frozen=True)
class LaunchAndCheck:
    """The `launch` fixture's call."""

    request: pytest.FixtureRequest
    target: KernelUnderTest
    backend: Backend

    def __call__(self, path: str, logits: torch.Tensor, expected: torch.Tensor, params: CaseParams,
                 row_labels: Sequence[str] | None = None) -> Check:
        __tracebackhide__ = True
        try:
            judged = judge_path(self.target, self.backend, path, logits, expected, params, row_labels)
        except PathNotRun as exc:
            skips.skip(self.request.node, skips.direct_path(str(exc)))
        record(self.request, judged.check)
        if judged.raised is not None:
            raise judged.raised
        assert_check(judged.check)
        return judged.check


@pytest.fixture
def check_counts(request: pytest.FixtureRequest, backend: Backend) -> CheckCounts:
    """Compare got with expected bit-exactly, record the check on the test, fail with a per-row message."""
    return CheckCounts(request, backend)


@pytest.fixture
def launch(request: pytest.FixtureRequest, target: KernelUnderTest, backend: Backend) -> LaunchAndCheck:
    """Run one path on an in-domain input and check it: a raise is a refusal (or a device fault), both fail."""
    return LaunchAndCheck(request, target, backend)


def record(request: pytest.FixtureRequest, result: Check) -> None:
    """Attach one check to the running test (it travels to the controller with the test's reports)."""
    request.node.user_properties.append((CHECK_PROPERTY, result.to_json()))
