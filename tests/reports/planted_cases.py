"""Extra cases for the report tests' sub-runs (not collected by the suite: the name lacks test_).

They plant what reports must survive: markup in ids, labels and messages, an exception before check,
two checks in one test, IEEE class and sweep records, and an xdist worker that dies mid-test.
"""
from __future__ import annotations

import os

import pytest
import torch

from cases.formats import fmt_of, from_bits, hex_bits
from cases.ieee import CLASS_BY_NAME, value_class
from harness.fixtures import CheckCounts
from harness.target import KernelUnderTest
from reference import expected_counts
from verdict.record import CaseParams

MARKUP = '<b class="planted-markup">x</b>'
TORCH_DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def _rows(dtype: str, classes: list[str], vocab: int = 64) -> tuple[torch.Tensor, list[str]]:
    """One IEEE class per row (positive sign), every element of the row that class."""
    fmt = fmt_of(TORCH_DTYPES[dtype])
    bits = [CLASS_BY_NAME[c].bits(fmt, False) for c in classes]
    x = from_bits(torch.tensor([[b] * vocab for b in bits], dtype=torch.int64), fmt)
    labels = [f"+{c} {dtype} {hex_bits(b, fmt)}" for c, b in zip(classes, bits)]
    return x, labels


@pytest.mark.parametrize("dtype", ["fp32", "fp16"])
@pytest.mark.parametrize("cls", ["quiet_nan", "inf"])
def test_planted_ieee(cls: str, dtype: str, target: KernelUnderTest, device: str, check_counts: CheckCounts) -> None:
    """Row 0 is zero, row 1 holds the class: the planted +1 on row 1 miscounts every class."""
    x, labels = _rows(dtype, ["zero", cls])
    fmt = fmt_of(TORCH_DTYPES[dtype])
    classes = tuple(value_class(CLASS_BY_NAME[c].bits(fmt, False), fmt) for c in ("zero", cls))
    info = CaseParams("ieee", f"{dtype}-ieee-{cls}", dtype, "rows", tuple(x.shape), cls, 42, row_classes=classes)
    check_counts(target.get_num_nans(x.to(device)), expected_counts(x), info, "wrapper", row_labels=labels)


def test_planted_sweep(target: KernelUnderTest, device: str, check_counts: CheckCounts) -> None:
    """Every fp16 pattern once, 16 rows of 4096: the planted +1 gives one NaN too many."""
    x = from_bits(torch.arange(65536, dtype=torch.int64).reshape(16, 4096), fmt_of(torch.float16))
    info = CaseParams("sweep", "fp16-sweep-planted", "fp16", "ordered", (16, 4096), "ordered", 42)
    check_counts(target.get_num_nans(x.to(device)), expected_counts(x), info, "wrapper")


@pytest.mark.parametrize("label", [MARKUP], ids=[f"{MARKUP}<script>document.title='PWNED'</script>"])
def test_planted_markup(label: str, target: KernelUnderTest, device: str, check_counts: CheckCounts) -> None:
    """Markup in the id, the case id and a wrong row's label must reach the report as text."""
    x = torch.full((2, 8), float("nan"))
    info = CaseParams("contract", f"case-{MARKUP}", "fp32", MARKUP, (2, 8), "1.0", 42)
    check_counts(target.get_num_nans(x.to(device)), expected_counts(x), info, "wrapper", row_labels=[label, label])


def test_planted_raises() -> None:
    """Fails before calling check: the report still lists it, with its message as text."""
    raise RuntimeError(f"kernel said {MARKUP}<script>document.title='PWNED'</script>")


def test_planted_two_checks(target: KernelUnderTest, device: str, check_counts: CheckCounts) -> None:
    """Two checks in one test: the first passes (1 row), the second fails (2 rows); both are kept."""
    one = torch.full((1, 16), float("nan"))
    two = torch.full((2, 16), float("nan"))
    check_counts(target.get_num_nans(one.to(device)), expected_counts(one),
          CaseParams("contract", "fp32-two-a", "fp32", "all", (1, 16), "1.0", 42))
    check_counts(target.get_num_nans(two.to(device)), expected_counts(two),
          CaseParams("contract", "fp32-two-b", "fp32", "all", (2, 16), "1.0", 42))


def test_planted_worker_crash() -> None:
    """Kills its xdist worker (only there, and only when asked): the report must still show a failed case."""
    if not os.environ.get("PYTEST_XDIST_WORKER") or os.environ.get("NAN_PLANTED_CRASH") != "1":
        pytest.skip("crashes only inside an xdist worker with NAN_PLANTED_CRASH=1")
    os._exit(3)
