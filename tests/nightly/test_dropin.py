"""nightly.dropin: the suite as one test of a kernel repository's own `pytest -sv <file>`.

End to end: a throwaway repository with a copied kernel (tests/designs/independent.py) given tests/planted/pred_inf.py's
bug and the drop-in file `python -m nightly.dropin` prints, run with exactly `python -m pytest -sv
tests/test_num_nans_harness.py` (the correct kernel passes it, installed as the docs' CI step says:
tests/nightly/test_ci_step.py). To stay affordable on 2 shared cores the suite's selection is narrowed through
$NAN_HARNESS_ARGS (`-m nan_special -k fp32`: the two cases that catch the bug); a nightly leaves it unset and runs
the whole suite. Never a false green: stand-in suites that crash, write nothing, write another
run's file, do not finish, skip everything or import the kernel from elsewhere all fail the drop-in test.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from nightly import dropin
from tests.nightly.test_bisect import CORRECT_TEST, DESIGN, PLANTED
from tests.nightly.test_nightly import results_doc
from tests.support.limits import hang_limit
from tests.support.subrun import ROOT, clean_env

FILE = "tests/test_num_nans_harness.py"
KERNEL = "my_kernels.num_nans"
# the affordable selection of this test, not the drop-in's default; no reruns, as every sub-run of the self-test
# (tests/support/subrun.py): the planted module's 2 failures were rerun twice in fresh processes (tests/reports/
# test_reruns.py tests the reruns)
SELECTION = "-m nan_special -k fp32 --nan-reruns=0"
E2E_SLOWEST_S = 40.0  # one outer pytest and the suite's 2 cases: 20 s alone on 2 cores, 37 s beside a pytest -n 2


def kernel_repo(path: Path, source: str) -> Path:
    """A kernel repository as a field's nightly sees it: its module, and the drop-in file in its tests/."""
    (path / "my_kernels").mkdir(parents=True)
    (path / "my_kernels" / "__init__.py").write_text("")
    (path / "my_kernels" / "num_nans.py").write_text(source)
    (path / "tests").mkdir()
    done = subprocess.run([sys.executable, "-m", "nightly.dropin", "--kernel", KERNEL, "--device", "cpu"], cwd=ROOT,
                          env=clean_env(), capture_output=True, text=True, check=True)
    (path / FILE).write_text(done.stdout)
    return path


def nightly_command(repo: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Exactly the field's command, in the repository, with this project importable from its checkout."""
    return subprocess.run([sys.executable, "-m", "pytest", "-sv", FILE], cwd=repo, capture_output=True, text=True,
                          env=clean_env({"PYTHONPATH": str(ROOT), dropin.ARGS_VAR: SELECTION, **env}),
                          timeout=hang_limit(slowest_s=E2E_SLOWEST_S))


def reports(repo: Path) -> dict[str, Path]:
    return {kind: repo / dropin.DEFAULT_OUT / name for kind, name in dropin.REPORTS.items()}


def test_the_drop_in_fails_a_planted_module_with_the_verdict(tmp_path: Path) -> None:
    """The same kernel with the planted bug (the correct one passes the drop-in: tests/nightly/test_ci_step.py)."""
    assert CORRECT_TEST in DESIGN
    bad = kernel_repo(tmp_path / "bad", DESIGN.replace(CORRECT_TEST, PLANTED))
    done = nightly_command(bad)
    text = done.stdout + done.stderr
    assert done.returncode == 1, text
    assert "nan-harness: FAIL: kernel my_kernels.num_nans on cpu: 2 tests: 2 wrong counts" in text
    assert "likely: [predicate] the NaN predicate" in text and "row 0: expected 0, got 256" in text
    assert "FAILED tests/test_num_nans_harness.py::test_num_nans_harness" in text
    paths = reports(bad)
    assert all(p.is_file() for p in paths.values()), text
    assert f"reports: {paths['html']}, {paths['json']}, {paths['junit']}, {paths['markdown']}" in text
    assert paths["markdown"].read_text().startswith("### nan-harness: FAIL")
    assert 'failures="2"' in paths["junit"].read_text()


def test_a_module_that_does_not_import_fails_the_drop_in(tmp_path: Path) -> None:
    repo = kernel_repo(tmp_path / "repo", "import nan_dropin_missing_dependency\n" + DESIGN)
    done = nightly_command(repo)
    text = done.stdout + done.stderr
    assert done.returncode == 1, text
    assert "nan-harness: INCOMPLETE (usage error)" in text and "pytest exited 4 (usage error): not judged" in text
    assert "No module named 'nan_dropin_missing_dependency'" in text and "1 failed" in text


def test_the_docs_show_the_file_the_command_prints() -> None:
    docs = (ROOT / "docs" / "nightly.md").read_text()
    assert dropin.template("vllm_ascend.ops.triton.v2.metrics.num_nans") in docs
    assert f"pytest -sv {FILE}" in docs


# -- never a false green: stand-in suites for each way a run can end without passing ---------------------------------

def fake_suite(monkeypatch: pytest.MonkeyPatch, doc: dict[str, Any] | None, code: int, *, same_run: bool = True,
               kernel_file: str | None = None) -> None:
    """dropin.command replaced by a script that writes doc (with the run's id, or another) and exits code."""
    def command(kernel: str, device: str, folder: Path, kernel_path: Path, run_id: str, extra: Any) -> list[str]:
        body = None if doc is None else {**doc, "run_id": run_id if same_run else "another-run", "environment": {
            "Kernel file": kernel_file or str(kernel_path / "my_kernels" / "num_nans.py")}}
        script = (f"import json, os, pathlib, sys; body = {json.dumps(body)!r}\n"
                  f"if body != 'null': pathlib.Path({str(folder / 'results.json')!r}).write_text(body)\n"
                  + (f"os.kill(os.getpid(), {-code})" if code < 0 else f"sys.exit({code})"))  # < 0: a signal
        return [sys.executable, "-c", script]
    monkeypatch.setattr(dropin, "command", command)


def results(outcomes: list[str], *, finished: bool = True) -> dict[str, Any]:
    return results_doc({f"t.py::test_{i}": o for i, o in enumerate(outcomes)}, finished=finished, kernel=KERNEL,
                       backend="cpu")


@pytest.mark.parametrize(("doc", "code", "same_run", "elsewhere", "said"), [
    (None, 0, True, False, "the run wrote no results.json"),
    (None, -11, True, False, "killed by signal 11"),
    (results(["passed"]), 0, False, False, "not this run's"),
    (results(["passed"], finished=False), 0, True, False, "did not finish"),
    (results(["passed"]), 2, True, False, "pytest exited 2 (interrupted)"),
    (results(["skipped", "skipped"]), 0, True, False, "no test passed: nothing was judged"),
    (results(["passed"]), 0, True, True, "not from the checkout"),
    (results(["passed", "failed"]), 1, True, False, "nan-harness: FAIL"),
], ids=["nothing-written", "crash", "another-run", "not-finished", "interrupted", "all-skipped",
        "kernel-from-elsewhere", "failed"])
def test_no_false_green(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, doc: dict[str, Any] | None, code: int,
                        same_run: bool, elsewhere: bool, said: str) -> None:
    monkeypatch.chdir(tmp_path)
    fake_suite(monkeypatch, doc, code, same_run=same_run, kernel_file="/elsewhere/num_nans.py" if elsewhere else None)
    with pytest.raises(dropin.SuiteFailed, match="nan-harness: ") as failed:
        dropin.run_suite(KERNEL, device="cpu")
    assert said in str(failed.value)


def test_a_stand_in_suite_that_passes_passes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The control for the cases above: the same stand-in, finished and passing, is a pass."""
    monkeypatch.chdir(tmp_path)
    fake_suite(monkeypatch, results(["passed", "skipped"]), 0)
    run = dropin.run_suite(KERNEL, device="cpu", out=tmp_path / "reports")
    assert run.passed and run.folder == tmp_path / "reports"


def test_no_device_is_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(dropin.DEVICE_VAR, raising=False)
    with pytest.raises(dropin.SuiteFailed, match="no device"):
        dropin.run_suite(KERNEL)
