"""Buffers across calls: outputs never shared between calls, and one logits buffer refilled in place each step.

vLLM refills the same logits buffer every decoding step; a kernel that caches by address or hands back one
output buffer gives stale or overwritten counts. Both patterns are made deterministic here (same buffer, new
contents), not left to the allocator reusing an address.
"""
from __future__ import annotations

from dataclasses import replace

import pytest
import torch

from harness.fixtures import CheckCounts
from harness.target import KernelUnderTest
from reference import expected_counts
from verdict.problem import SHARED_OUTPUT, Problem
from .test_wrapper_contract import nan_rows, params

pytestmark = pytest.mark.nan_contract
DTYPES = [(torch.float32, "fp32"), (torch.bfloat16, "bf16")]


@pytest.mark.parametrize("dtype, name", DTYPES, ids=[n for _, n in DTYPES])
def test_outputs_not_reused_across_calls(
    dtype: torch.dtype, name: str, target: KernelUnderTest, device: str, check_counts: CheckCounts
) -> None:
    """The first call's counts must survive a second call of the same shape (a cached output would not)."""
    first_host = nan_rows(4, 3000, dtype, seed=11)
    second_host = torch.zeros(4, 3000, dtype=dtype)  # no NaNs: a shared buffer would read all zeros
    first = target.get_num_nans(first_host.to(device))
    second = target.get_num_nans(second_host.to(device))
    shared = isinstance(first, torch.Tensor) and isinstance(second, torch.Tensor) \
        and first.untyped_storage().data_ptr() == second.untyped_storage().data_ptr()
    effects = [Problem(SHARED_OUTPUT, "get_num_nans returned the same output buffer for two calls")] if shared else []
    check_counts(second, expected_counts(second_host), params(f"{name}-two-calls-second-4x3000", name, (4, 3000)),
                 side_effects=effects)
    check_counts(first, expected_counts(first_host), params(f"{name}-two-calls-first-4x3000", name, (4, 3000), seed=11))


@pytest.mark.parametrize("dtype, name", DTYPES, ids=[n for _, n in DTYPES])
def test_refilled_logits_buffer(
    dtype: torch.dtype, name: str, target: KernelUnderTest, device: str, check_counts: CheckCounts
) -> None:
    """Three steps on one buffer, refilled in place with new NaNs each step: every step's counts are its own."""
    buffer = torch.empty(6, 5000, dtype=dtype, device=device)
    held = []
    for step, seed in enumerate((21, 22, 23)):
        host = nan_rows(6, 5000, dtype, seed=seed)
        host[step] = 0  # one clean row per step, a different one each time
        buffer.copy_(host)
        got = target.get_num_nans(buffer)
        check_counts(got, expected_counts(host),
                     replace(params(f"{name}-refilled-step{step}-6x5000", name, (6, 5000), seed=seed),
                             buffer_step=step))
        held.append((got, expected_counts(host), seed, step))
    for got, expected, seed, step in held:  # earlier results must not change when the buffer is refilled
        check_counts(got, expected, replace(params(f"{name}-refilled-held{step}-6x5000", name, (6, 5000), seed=seed),
                                            buffer_step=len(held) + step))  # read again after every refill
