"""Every reason the suite has not to run a test, as data: what is not tested, why not here, the command that runs it.

A test that skips calls `skip(node, WHAT)`: the NotRun travels to the controller as a user property
(verdict.not_run) and every report groups the tests not run by it; pytest's skip text is only for the terminal.
"""
from __future__ import annotations

from typing import NoReturn

import pytest

from verdict.not_run import NOT_RUN_PROPERTY, NotRun

ON_A_DEVICE = ("tox -e cuda", "tox -e npu")  # the suite on an NVIDIA or an Ascend node


def skip(node: pytest.Item, what: NotRun) -> NoReturn:
    """Record why the test does not run (and what runs it), then skip it (pytest names the test's line, not this)."""
    __tracebackhide__ = True
    node.user_properties.append((NOT_RUN_PROPERTY, what.to_json()))
    pytest.skip(what.describe())


def direct_path(reason: str) -> NotRun:
    """The module has no anchor-shaped `_num_nans_kernel`: only its wrapper can be judged."""
    return NotRun("direct path", reason)


def aggregate(module: str) -> NotRun:
    return NotRun("aggregate", f"{module} has no aggregate_num_nans_per_request (newer upstream vLLM only)",
                  marker="nan_aggregate")


def large_batches() -> NotRun:
    return NotRun("large batches (5,000 and 70,001 rows)", "each takes minutes on the CPU interpreter (a device run "
                  "always runs them; --nan-large-batches runs them on the CPU)", ("tox -e cpu-batches",),
                  "nan_batches")


def accelerator_semantics(backend: str) -> NotRun:
    return NotRun("stream order, an input on another card, graph capture", f"--device {backend}: no streams, cards "
                  "or graphs under the Triton interpreter", ON_A_DEVICE, "nan_semantics")


def second_card(visible: int) -> NotRun:
    return NotRun("an input on another card", f"needs 2 cards, {visible} visible: run on a node with 2 or more",
                  ON_A_DEVICE, "nan_semantics")


def host_tensor(backend: str) -> NotRun:
    return NotRun("a host tensor given to an accelerator's kernel", f"--device {backend}: host tensors are the "
                  "normal input here", ON_A_DEVICE)


def fp32_full() -> NotRun:
    return NotRun("full fp32 sweep (all 2^32 patterns)", "not asked for: --nan-fp32-full is meant for accelerators "
                  "(the 16-bit sweeps and an fp32 sample run without it; the accelerator nightly passes it)",
                  tuple(f"{c} -- --nan-fp32-full" for c in ON_A_DEVICE), "nan_fp32_full")


def too_large(device: str) -> NotRun:
    return NotRun(f"cases too large for {device}", f"their input could not be placed in {device}'s memory (a device "
                  "with more free memory runs them)")
