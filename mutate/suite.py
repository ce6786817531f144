"""What the suite runs on each mutant: stages, fast first, each a pytest selection over the suite (harness.cli).

A mutant runs stage after stage and stops at its first failure (-x): the fast stage (matrix, specials, IEEE,
layouts: the markers of cases/families) kills most mutants in seconds; the rest of the suite runs only for those
it leaves alive, contract tests first (cheap, and they judge the wrapper's guards), sweeps and generated cases last.
"""
from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness import cli

ROOT = Path(__file__).resolve().parents[1]  # the folder above the packages: the checkout, or site-packages
FOLDER = cli.suite()  # tests/precision in a checkout, the package harness.suite installed
SUITE = cli.suite_id(FOLDER)  # the folder as node ids begin (they are relative to the folder above it)
FAST_FAMILY_MARKERS = ("nan_matrix", "nan_special", "nan_ieee", "nan_layout")  # families that kill most mutants
FAST_MARKERS = " or ".join(FAST_FAMILY_MARKERS)
FAMILY_FILE = "test_families.py"  # the one test every family case runs in (mutation workers run those in-process)
FAMILY_TEST = f"{SUITE}/{FAMILY_FILE}::test_case"  # its node id, less the case's parameters
# files of the rest, cheapest and most wrapper-judging first; any other file of the suite follows in name order
REST_ORDER = ("test_wrapper_contract.py", "test_aliasing.py", "test_aggregate.py", "test_families.py",
              "test_generated_property.py", "test_sweeps.py", "test_execution_semantics.py")
UNPLACED = "cannot place the input"  # a warm worker skipped the case for memory: the mutant is not judged on it
CASES_DIR_VAR = "MUTATE_CASES_DIR"  # where a run's workers share built cases (set by mutate.cli per suite revision)
LAUNCH_MEMO_VAR = "MUTATE_LAUNCH_MEMO"  # "0": every interpreted launch runs (mutate.launch_memo off)


def nodeid(case_id: str, path: str) -> str:
    """The pytest node id of one family case through one path: warm judge and pytest name a killer alike."""
    return f"{FAMILY_TEST}[{case_id}-{path}]"


@dataclass(frozen=True)
class Stage:
    """One pytest selection: a name for reports, the tests (node ids or files, as node ids name them) and options
    that narrow them (e.g. -m)."""

    name: str
    tests: tuple[str, ...]
    options: tuple[str, ...] = ()


def suite_files() -> list[str]:
    """The suite's test files, in REST_ORDER first, then the others by name."""
    files = sorted(p.name for p in FOLDER.glob("test_*.py"))
    ordered = [f for f in REST_ORDER if f in files] + [f for f in files if f not in REST_ORDER]
    return [f"{SUITE}/{f}" for f in ordered]


def other_tests() -> list[str]:
    """The suite's files other than the family test, in REST_ORDER: what pytest runs for a mutant the warm
    workers leave alive."""
    return [f for f in suite_files() if not f.endswith("/" + FAMILY_FILE)]


def full_suite() -> tuple[Stage, ...]:
    """The whole suite in two stages: the fast families, then everything else for the survivors."""
    return (Stage("fast", (SUITE,), ("-m", FAST_MARKERS)),
            Stage("rest", tuple(suite_files()), ("-m", f"not ({FAST_MARKERS})")))


def selected_suite(marker_expr: str) -> tuple[Stage, ...]:
    """A one-stage suite narrowed by a marker expression (e.g. a deliberately weakened `nan_matrix`)."""
    return (Stage("selected", (SUITE,), ("-m", marker_expr)),)


def pytest_argv(stage: Stage, *, kernel: str, kernel_paths: Sequence[Path], device: str, folder: Path,
                first_failure: bool, run_id: str, deselect: Sequence[str] = (), extra: Sequence[str] = (),
                in_process: bool = False) -> list[str]:
    """One stage as a command (`nan-harness`'s pytest command, harness.cli, from any folder): its own reports,
    basetemp and one xdist worker (the kernel never runs in the deciding process); -x stops at the first failure.
    in_process: the arguments of pytest.main in a warm worker (no interpreter in front, no xdist worker: the
    worker's caller isolates it)."""
    head = [sys.executable, "-m", "pytest"]
    isolation = ["--nan-in-process"] if in_process else ["-n", "1", "--max-worker-restart", "4"]
    pages = [f"--html={folder / 'precision.html'}", f"--junitxml={folder / 'junit.xml'}"]
    argv = ["--device", device, "-q", *isolation, f"--basetemp={folder / 'tmp'}", *pages,
            f"--nan-json={folder / 'results.json'}", f"--nan-run-id={run_id}", "--nan-reruns=0",  # a kill is a kill
            "--kernel", kernel, *stage.options]
    for path in kernel_paths:
        argv += ["--kernel-path", str(path)]
    if first_failure:
        argv.append("-x")
    for nodeid in deselect:
        argv += ["--deselect", nodeid]
    return [*([] if in_process else head), *cli.arguments([*argv, *extra], FOLDER, stage.tests)]
