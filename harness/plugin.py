"""The pytest plugin: --device and --kernel, backend setup before kernels import, and shared fixtures."""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pytest
import torch

from harness import device as backend
from harness.compare import Comparison, assert_comparison, compare_counts
from harness.target import KernelUnderTest, load, run_path

pytest_plugins = ["harness.isolation"]

DEVICE_KEY = pytest.StashKey[str]()
TARGET_KEY = pytest.StashKey[KernelUnderTest]()
CASE_PROPERTY = "nan_case"  # user_properties name; survives xdist and lands in JUnit XML

MARKERS: dict[str, str] = {
    "nan_matrix": "the anchor's 120-case dtype x layout x shape x NaN-fraction matrix",
    "nan_special": "IEEE special values built from raw bits",
    "nan_contract": "get_num_nans API contract: shapes, dtypes, layouts, empty batches, no side effects",
    "nan_reference": "the CPU references agree with each other (a failure points at the reference)",
    "nan_harness": "self-tests of the harness code (no kernel under test involved)",
    "nan_selftest": "the suite catches planted bugs: tests.planted variants run through --kernel in subprocesses",
    "nan_ieee": "IEEE value classes from raw bits, per row and mixed",
    "nan_sweep": "exhaustive bit-pattern sweeps (fp16, bf16; fp32 sample)",
    "nan_fp32_full": "all 2^32 fp32 patterns; runs only with --nan-fp32-full",
    "nan_layout": "hostile layouts: edge shapes, count magnitudes, NaN-padded rows, huge offsets",
    "nan_bigoffset": "row offsets past 2^31 elements (large virtual allocations)",
}


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("nan-harness", "NaN-count kernel precision harness")
    group.addoption(
        "--device",
        choices=backend.DEVICE_CHOICES,
        default="auto",
        help="backend: auto picks npu, then cuda, then cpu (Triton interpreter). Default: auto",
    )
    group.addoption(
        "--kernel",
        default="kernel",
        metavar="MODULE",
        help="dotted module under test; must expose get_num_nans, may expose _num_nans_kernel. Default: kernel",
    )
    group.addoption(
        "--nan-fp32-full",
        action="store_true",
        help="also sweep all 2^32 fp32 patterns (minutes on the CPU interpreter; seconds on a GPU)",
    )


def pytest_configure(config: pytest.Config) -> None:
    for name, doc in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")
    if config.option.help or config.option.version:
        return
    try:
        device = backend.resolve(config.getoption("--device"))
        backend.prepare(device)
    except RuntimeError as exc:
        raise pytest.UsageError(str(exc)) from exc
    if device == "cpu":
        _check_interpreter()
    else:
        backend.pin_worker(device, getattr(config, "workerinput", {}).get("workerid"))
    module_name = config.getoption("--kernel")
    try:
        target = load(module_name)
    except (ImportError, AttributeError) as exc:
        raise pytest.UsageError(f"--kernel {module_name}: {exc}") from exc
    config.stash[DEVICE_KEY] = device
    config.stash[TARGET_KEY] = target


def _check_interpreter() -> None:
    """Stop with advice when the installed Triton's interpreter cannot run a loop kernel (numpy mismatch)."""
    import warnings

    from harness.preflight import interpreter_problem

    with warnings.catch_warnings():  # triton-ascend's interpreter warns on every loop bound under numpy 1.25+
        warnings.simplefilter("ignore", DeprecationWarning)
        problem = interpreter_problem()
    if problem is not None:
        import numpy

        raise pytest.UsageError(
            f"--device cpu: the Triton interpreter of {backend.triton_flavour()} fails a smoke kernel with "
            f"numpy {numpy.__version__}: {problem}. triton-ascend 3.2.0 needs numpy<2, older upstream Triton "
            "numpy<2.5 (use tox -e cpu / tox -e ascend-cpu, which pin them)"
        )


def pytest_report_header(config: pytest.Config) -> list[str]:
    if TARGET_KEY not in config.stash:
        return []
    target = config.stash[TARGET_KEY]
    device = config.stash[DEVICE_KEY]
    return [
        f"nan-harness: device {device} ({backend.describe(device)}), {backend.triton_flavour()}, torch {torch.__version__}",
        f"nan-harness: kernel module {target.module_name} ({target.file}), NaN predicate {target.predicate_source}",
    ]


@pytest.fixture(scope="session")
def device(pytestconfig: pytest.Config) -> str:
    """The resolved backend: cpu, cuda or npu."""
    return pytestconfig.stash[DEVICE_KEY]


@pytest.fixture(scope="session")
def target(pytestconfig: pytest.Config) -> KernelUnderTest:
    """The kernel package under test."""
    return pytestconfig.stash[TARGET_KEY]


@dataclass(frozen=True)
class CaseInfo:
    """The parameters a report shows for one test; stored as a JSON user property.

    kind is matrix, special, ieee, sweep or contract; nan is the NaN fraction, or the IEEE class or sweep layout.
    """

    case_id: str
    kind: str
    dtype: str
    layout: str
    shape: tuple[int, int]
    nan: str
    path: str
    seed: int | None = None


Checker = Callable[..., Comparison]


@pytest.fixture
def run_case(target: KernelUnderTest, check: Checker) -> Callable[..., Comparison]:
    """Launch one path on a device tensor and check it against expected, side effects included."""

    def _run(
        path: str,
        logits: torch.Tensor,
        expected: torch.Tensor,
        info: CaseInfo,
        row_labels: Sequence[str] | None = None,
    ) -> Comparison:
        __tracebackhide__ = True
        if path == "direct" and target.kernel is None:
            pytest.skip(target.kernel_skip_reason or "no _num_nans_kernel")
        launch = run_path(target, path, logits)
        return check(launch.counts, expected, info, row_labels=row_labels, side_effects=launch.side_effects)

    return _run


@pytest.fixture
def check(request: pytest.FixtureRequest, device: str) -> Checker:
    """Compare got with expected bit-exactly, record the outcome on the test, fail with a per-row message."""

    def _check(
        got: object,
        expected: torch.Tensor,
        info: CaseInfo,
        row_labels: Sequence[str] | None = None,
        side_effects: Sequence[str] = (),
    ) -> Comparison:
        __tracebackhide__ = True
        backend.synchronize(device)
        result = compare_counts(
            got,
            expected,
            device=device,
            case_id=info.case_id,
            seed=info.seed,
            row_labels=row_labels,
            side_effects=side_effects,
        )
        record = {
            **info.__dict__,
            "shape": list(info.shape),
            "card": backend.current_card(device),
            **result.as_dict(),
            "ok": result.ok,
        }
        request.node.user_properties.append((CASE_PROPERTY, json.dumps(record)))
        assert_comparison(result)
        return result

    return _check
