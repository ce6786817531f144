"""One case through one path, judged: the function the pytest suite and `python -m mutate`'s warm workers share.

The pytest `launch` fixture and a mutation worker both call `judge_path`; neither has an oracle of its own. The
case's expected counts come from the CPU reference (`reference`), the launch from `harness.target.run_path`, the
comparison from `harness.compare`; what comes back is a `Check` (and the exception, when the launch raised).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from cases.family import Built, Context
from harness.backends import Backend
from harness.compare import compare_counts, describe_input, failed_launch, layout_of, with_held_values
from harness.target import KernelUnderTest, run_path
from verdict.problem import Problem
from verdict.record import CaseParams, Check, Unwritten


class PathNotRun(Exception):
    """The path cannot run on this module (no anchor-shaped `_num_nans_kernel`): a skip, never a pass or a fail."""


@dataclass(frozen=True)
class Judged:
    """A check, and the exception the launch raised (None when it returned): pytest shows its traceback."""

    check: Check
    raised: BaseException | None = None


def judge_path(target: KernelUnderTest, backend: Backend, path: str, logits: torch.Tensor, expected: torch.Tensor,
               params: CaseParams, row_labels: Sequence[str] | None = None) -> Judged:
    """Run one path on an in-domain input and compare bit-exactly: a raise is a refusal or a device fault."""
    if path == "direct" and target.kernel is None:
        raise PathNotRun(target.kernel_skip_reason or "no _num_nans_kernel")
    try:
        done = run_path(target, path, logits)
        backend.synchronize()
    except Exception as exc:  # noqa: BLE001 - any raise on in-domain input is the kernel's failure
        return Judged(failed_launch(exc, params, path, expected, logits, backend.current_card()), exc)
    return Judged(judge_counts(backend, done.counts, expected, params, path, row_labels, done.side_effects, logits,
                               unwritten=done.unwritten))


def judge_counts(backend: Backend, got: object, expected: torch.Tensor, params: CaseParams, path: str = "wrapper",
                 row_labels: Sequence[str] | None = None, side_effects: Sequence[Problem | str] = (),
                 logits: object = None, synchronize: bool = True, unwritten: Unwritten | None = None) -> Check:
    """Compare counts the kernel returned with the reference; the result must live on the input's device. Wrong
    rows carry what they hold, read from LOGITS (the values explain a predicate's miscounts)."""
    if synchronize:
        backend.synchronize()
    on = logits.device.type if isinstance(logits, torch.Tensor) else backend.torch_type
    check = compare_counts(got, expected, params=params, path=path, device_type=on, row_labels=row_labels,
                           side_effects=side_effects, card=backend.current_card(),
                           input_desc=describe_input(logits) if logits is not None else "", layout=layout_of(logits),
                           unwritten=unwritten)
    return with_held_values(check, logits)


def judge_built(target: KernelUnderTest, backend: Backend, built: Built, params: CaseParams, path: str) -> Judged:
    """A family case: placed on the device as its family says (a fresh copy each time, so a kernel that writes
    its input never changes the next path's or the next kernel's input), then judged."""
    logits = built.input_on(backend.torch_type)
    return judge_path(target, backend, path, logits, built.expected, params, built.labels)


def suite_context(backend: Backend, *, fp32_full: bool = False, gen_cases: int | None = None,
                  gen_seed: int | None = None, gen_case_ids: tuple[str, ...] = ()) -> Context:
    """What families vary their cases by: the same cases for the pytest run and a mutation worker (None leaves
    the family's own default, as the suite's options do)."""
    values = (("fp32_full", fp32_full), ("gen_cases", gen_cases), ("gen_case_ids", gen_case_ids),
              *((("gen_seed", gen_seed),) if gen_seed is not None else ()))
    return Context(backend.name, backend.batch_rows, values)
