"""Every reason the suite has not to run a test, as data: what is not tested, why not here, the command that runs it.

A test that skips calls `skip(node, WHAT)`: the NotRun travels to the controller as a user property
(verdict.not_run) and every report groups the tests not run by it; pytest's skip text is only for the terminal.
"""
from __future__ import annotations

from typing import NoReturn

import pytest

from harness.cli import checkout
from verdict.not_run import NOT_RUN_PROPERTY, NotRun

ACCELERATORS = ("cuda", "npu")  # the node commands a CPU run names for what it could not run


def tox_checkout() -> bool:
    """This run's harness sits in a checkout with its tox.ini (else it is installed: no tox envs to name)."""
    root = checkout()
    return root is not None and (root / "tox.ini").is_file()


def suite_command(device: str, *args: str, tox_env: str | None = None) -> str:
    """The command that runs the suite on `device` with `args`, as it works where this run happened: in a checkout
    its tox env (`tox -e cuda -- ARGS`; `tox_env` where one exists for the purpose), installed (no tox.ini beside
    the harness) the `nan-harness` command."""
    if tox_checkout():
        return f"tox -e {tox_env or device}" + (f" -- {' '.join(args)}" if args and tox_env is None else "")
    return " ".join(["nan-harness", f"--device {device}", *args])


def on_a_device(*args: str) -> tuple[str, ...]:
    """The suite with `args` on an NVIDIA node, or an Ascend one."""
    return tuple(suite_command(device, *args) for device in ACCELERATORS)


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
                  "always runs them; --nan-large-batches runs them on the CPU)",
                  (suite_command("cpu", "--nan-large-batches", "-m", "nan_batches", tox_env="cpu-batches"),),
                  "nan_batches")


def accelerator_semantics(backend: str) -> NotRun:
    return NotRun("stream order, an input on another card, graph capture", f"--device {backend}: no streams, cards "
                  "or graphs under the Triton interpreter", on_a_device("-m", "nan_semantics"), "nan_semantics")


def second_card(visible: int) -> NotRun:
    return NotRun("an input on another card", f"needs 2 cards, {visible} visible: run on a node with 2 or more",
                  on_a_device("-m", "nan_semantics"), "nan_semantics")


def host_tensor(backend: str) -> NotRun:
    return NotRun("a host tensor given to an accelerator's kernel", f"--device {backend}: host tensors are the "
                  "normal input here", on_a_device())


def fp32_full() -> NotRun:
    return NotRun("full fp32 sweep (all 2^32 patterns)", "not asked for: --nan-fp32-full is meant for accelerators "
                  "(the 16-bit sweeps and an fp32 sample run without it; the accelerator nightly passes it)",
                  on_a_device("--nan-fp32-full", "-m", "nan_fp32_full"), "nan_fp32_full")


def too_large(device: str) -> NotRun:
    return NotRun(f"cases too large for {device}", f"their input could not be placed in {device}'s memory (a device "
                  "with more free memory runs them)")
