"""Sub-runs of pytest for the report tests: each runs once per main run, shared by xdist workers via a lock."""
from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from tests.support import subrun
from tests.support.subrun import ROOT, SubRun

PLANTED_KERNEL = "tests.reports.planted_kernel"
PLANTED_CASES = "tests/reports/planted_cases.py"
MATRIX = "tests/precision/test_families.py"
# 20 matrix cases (fp32 x 2 layouts x 5 shapes x 2 paths), the 6 specials, and the planted cases
SELECTION = [MATRIX, PLANTED_CASES, "-k", "(nan0.5 and fp32 and (prefix or scatter)) or special-2x1024 or planted"]
MATRIX_WAIVED = f"{MATRIX}::test_case[fp32-prefix-2x5000-nan0.5-wrapper]"  # fails under the planted kernel
MATRIX_STALE = f"{MATRIX}::test_case[fp32-prefix-1x128-nan0.5-wrapper]"  # passes under it: a stale waiver
WAIVERS = f"""
[[waiver]]
id = "{MATRIX_WAIVED}"
reason = "planted: wrapper adds one on row 1"
link = "https://example.invalid/issues/1"

[[waiver]]
id = "{MATRIX_STALE}"
reason = "planted: stale, this case passes"
link = "https://example.invalid/issues/2"
"""


def run_pytest(folder: Path, args: list[str], env: dict[str, str] | None = None, device: str = "cpu") -> SubRun:
    """pytest in a sub-process with its reports in folder (the one sub-run helper)."""
    return subrun.run_pytest(folder, args, env=env, device=device)


def shared_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder all xdist workers of this main run share (the run's own basetemp when serial)."""
    base = tmp_path_factory.getbasetemp()
    return (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "nan-report-subruns"


def cached_run(tmp_path_factory: pytest.TempPathFactory, name: str, args: list[str],
               env: dict[str, str] | None = None) -> SubRun:
    """Run once per main run under a lock; later callers (any worker) read the saved result."""
    root = shared_dir(tmp_path_factory)
    root.mkdir(parents=True, exist_ok=True)
    folder = root / name
    done = folder / "argv.json"
    with open(root / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            run = run_pytest(folder, args, env)
            done.write_text(json.dumps(run.argv))
            return run
    return subrun.load_run(folder, json.loads(done.read_text()))


def waiver_file(folder: Path, text: str = WAIVERS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "waivers.toml"
    path.write_text(text, encoding="utf-8")
    return path


def planted_xdist(tmp_path_factory: pytest.TempPathFactory) -> SubRun:
    """The planted kernel under -n 2, with waivers, and a worker that crashes."""
    waivers = waiver_file(shared_dir(tmp_path_factory) / "waivers-planted")
    args = [*SELECTION, "--kernel", PLANTED_KERNEL, "-n", "2", f"--nan-waivers={waivers}"]
    return cached_run(tmp_path_factory, "planted-xdist", args, {"NAN_PLANTED_CRASH": "1"})


def planted_serial(tmp_path_factory: pytest.TempPathFactory) -> SubRun:
    """The same run without -n (one worker; the crash case skips itself unless NAN_PLANTED_CRASH is set)."""
    waivers = waiver_file(shared_dir(tmp_path_factory) / "waivers-planted")
    args = [*SELECTION, "--kernel", PLANTED_KERNEL, f"--nan-waivers={waivers}"]
    return cached_run(tmp_path_factory, "planted-serial", args)


def clean(tmp_path_factory: pytest.TempPathFactory) -> SubRun:
    """The same selection against the good kernel package: the baseline for compare."""
    return cached_run(tmp_path_factory, "clean", list(SELECTION))


TORCH_ONLY = "torch_only_nan"  # tests/semantics/torch_fallback.py, imported from a folder outside any git checkout
# its fp32 matrix cases (40 of 120) and one test of every group the CPU backend does not run
TORCH_ONLY_ARGS = ["tests/precision", "-m", "nan_matrix or nan_aggregate or nan_semantics or nan_batches or "
                   "nan_fp32_full or nan_contract", "-k", "(test_case and fp32) or aggregate or stream or card or "
                   "capture or large_batch or fp32_full or host_tensor", "--kernel", TORCH_ONLY]


def torch_only(tmp_path_factory: pytest.TempPathFactory) -> SubRun:
    """A correct kernel with no `_num_nans_kernel` (torch ops only), from a folder no git checkout holds: its direct
    path cannot run, and neither can the groups the CPU backend leaves out."""
    folder = shared_dir(tmp_path_factory) / "torch-only-kernel"
    folder.mkdir(parents=True, exist_ok=True)
    kernel = folder / f"{TORCH_ONLY}.py"
    if not kernel.exists():  # whole or not at all: another worker may be importing it already
        staged = folder / f".{os.getpid()}.tmp"
        staged.write_text((ROOT / "tests" / "semantics" / "torch_fallback.py").read_text(encoding="utf-8"))
        os.replace(staged, kernel)
    return cached_run(tmp_path_factory, "torch-only", [*TORCH_ONLY_ARGS, "--kernel-path", str(folder)])
