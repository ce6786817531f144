"""The accuracy table's headline says what it covers: a subset of the labelled kernels, or a narrowed suite."""
from __future__ import annotations

import pytest

from tests.selftest.accuracy import CORRECT, labels, render

pytestmark = pytest.mark.nan_selftest

ROW = {"kernel": "tests.planted.pred_inf", "truth": "predicate", "first": "predicate", "name": "the NaN predicate",
       "scope": "", "items": 1, "right": True, "finished": True, "failed": 2, "seconds": 1.0}


def test_a_subset_or_a_narrowed_suite_says_so() -> None:
    assert "1 of the 46 labelled kernels run (--only)" in render([ROW], "cpu", "triton 3.9.0", 46)
    assert "the suite narrowed by `-m nan_special`" in render([ROW], "cpu", "triton 3.9.0", 1, ["-m", "nan_special"])
    whole = render([ROW], "cpu", "triton 3.9.0", 1)
    assert "whole suite" in whole and "labelled kernels run" not in whole


def test_the_table_labels_every_planted_kernel_and_the_correct_ones() -> None:
    table = labels("triton 3.9.0")
    assert {lab.name for lab in table if lab.truth == CORRECT} == {"kernel", "independent", "self_compare"}
    assert all(lab.truth != CORRECT for lab in table if lab.module.startswith("tests.planted."))
