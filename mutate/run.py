"""Where mutation runs start the suite and with what: its folder, the fast families, the variables workers share.

Every test of a mutant runs in a warm worker's pytest session (mutate.warm) started by mutate.pool in a clean
environment: no outer pytest variables, pinned to one card through the backend's card-visibility variable
(harness.backends), compiled kernels on an accelerator.
"""
from __future__ import annotations

from pathlib import Path

from harness import cli, processes

# an outer pytest's variables never reach a worker
_DROP_PREFIXES = (*processes.PYTEST_VARS, "COV_", "GITHUB_STEP_SUMMARY")
ROOT = Path(__file__).resolve().parents[1]  # the folder above the packages: the checkout, or site-packages
FOLDER = cli.suite()  # tests/precision in a checkout, the package harness.suite installed
FAST_FAMILY_MARKERS = ("nan_matrix", "nan_special", "nan_ieee", "nan_layout")  # families that kill most mutants
UNPLACED = "cannot place the input"  # a worker skipped the test for memory: the mutant is not judged on it
CASES_DIR_VAR = "MUTATE_CASES_DIR"  # where a run's workers share built cases (set by mutate.cli per suite revision)
LAUNCH_MEMO_VAR = "MUTATE_LAUNCH_MEMO"  # "0": every interpreted launch runs (mutate.launch_memo off)


def run_env(device: str, card: int | None, visibility_var: str | None) -> dict[str, str]:
    """A clean environment for one worker: no outer pytest variables; pinned to one card; compiled kernels on an
    accelerator (no interpreter variable left over)."""
    env = processes.child_env(_DROP_PREFIXES)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    if device != "cpu":
        env.pop("TRITON_INTERPRET", None)
    if card is not None and visibility_var:
        env[visibility_var] = str(card)
    return env
