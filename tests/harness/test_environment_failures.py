"""Environment failures are their own ending: the table's entries match their own examples and no ordinary kernel
failure; a faked CUDA or NPU start-up failure ends the run `environment` (exit 6) in every report, compare refuses
it, a user's pattern file extends the table, and a setup's own bug stays a usage error."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness import environment_failures as ef
from harness.environment_table import TABLE
from reports import compare
from tests.support.subrun import ROOT, run_pytest

pytestmark = pytest.mark.nan_harness

FIXTURES = ROOT / "tests" / "harness" / "fixtures"
SUITE = "tests/precision/test_families.py"
SETUPS = "tests.harness.fixtures.environment_setups"
# what a kernel under test makes the harness say: none of it is the machine's doing
ORDINARY = (
    "AssertionError: wrapper: 1 of 2 rows wrong: row 0: expected 5, got 4 [NaN x5]",
    "triton.compiler.errors.CompilationError: at 12:8:\n    mask = offsets < n_cols\n        ^\nNameError('n_cols is "
    "not defined')",
    "RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA-capable device(s) is/are busy or "
    "unavailable",  # a fault marker wins over anything else in the text
    "RuntimeError: EZ9999: Inner Error! aicore exception, error code 507015",
    "--kernel my_fix.num_nans: No module named 'my_fix' (is it installed, or on PYTHONPATH?)",
    "ValueError: get_num_nans expects a 2-D tensor, got shape (4,)",
    "IndexError: index 70001 is out of bounds for dimension 0 with size 70001",
    "--kernel-setup x:y: y() failed: RuntimeError: setup could not parse its config: expected a list",
)


@pytest.mark.parametrize("entry", TABLE, ids=[e["name"] for e in TABLE])
def test_every_entry_matches_its_own_example(entry: dict) -> None:
    made = ef.pattern(entry, "table")
    found = ef.classify(made.example, [made], backend=(made.backends or (None,))[0])
    assert found is not None and found.name == made.name


@pytest.mark.parametrize("text", ORDINARY)
def test_no_entry_matches_an_ordinary_kernel_failure(text: str) -> None:
    for backend in (None, "cuda", "npu", "cpu"):
        assert ef.classify(text, ef.builtin(), backend=backend) is None, (backend, text)


def test_names_are_unique_and_fields_known() -> None:
    names = [e["name"] for e in TABLE]
    assert len(names) == len(set(names)) and all(set(e) <= set(ef.FIELDS) for e in TABLE)
    kinds = {e["kind"] for e in TABLE}
    assert kinds == set(ef.KINDS)


def test_memory_and_catch_all_codes_never_classify_inside_a_test() -> None:
    """An out-of-memory seen in a test may be the kernel's own (a leak, an oversized launch): its verdict stays."""
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB"
    assert ef.classify(oom, ef.builtin(), backend="cuda").name == "cuda-out-of-memory"
    assert ef.classify(oom, ef.builtin(), backend="cuda", in_test=True) is None
    busy = "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable"
    assert ef.classify(busy, ef.builtin(), backend="cuda", in_test=True).name == "cuda-device-busy"
    assert ef.classify(busy, ef.builtin(), backend="npu") is None  # another backend's message


def test_a_user_file_extends_the_table_and_bad_files_are_refused(tmp_path: Path) -> None:
    good = tmp_path / "lab.toml"
    good.write_text('[[pattern]]\nname = "lab-lease"\nregex = "LAB-\\\\d+: card lease expired"\nkind = "device"\n'
                    'example = "LAB-0042: card lease expired for this job"\n')
    patterns = ef.table([good.name], tmp_path)
    assert len(patterns) == len(TABLE) + 1
    assert ef.classify("RuntimeError: LAB-0042: card lease expired", patterns).name == "lab-lease"
    bad = {"`example` does not match": 'name = "x"\nregex = "foo"\nexample = "bar"\n',
           "unknown field": 'name = "x"\nregex = "foo"\nexample = "foo"\nwhere = "y"\n',
           "kind": 'name = "x"\nregex = "foo"\nexample = "foo"\nkind = "weather"\n',
           "used twice": 'name = "cuda-device-busy"\nregex = "foo"\nexample = "foo"\n',
           "does not compile": 'name = "x"\nregex = "(foo"\nexample = "foo"\n'}
    for why, body in bad.items():
        path = tmp_path / "bad.toml"
        path.write_text("[[pattern]]\n" + body)
        with pytest.raises(ef.PatternError, match=why):
            ef.table([path])


def _fake(kind: str) -> dict[str, str]:
    """A sub-run whose processes believe they have `kind`'s cards (tests/harness/fixtures/fake_accelerator)."""
    return {"NAN_FAKE_ACCELERATOR": kind, "TRITON_INTERPRET": "0",
            "PYTHONPATH": os.pathsep.join([str(FIXTURES / "fake_accelerator"), str(ROOT)])}


@pytest.mark.parametrize("device, setup, name", [
    ("cuda", "cuda_busy", "cuda-device-busy"),
    ("npu", "npu_set_device", "npu-set-device-failed"),
    ("npu", "torch_npu_missing", "runtime-package-missing"),
])
def test_a_faked_runtime_failure_at_start_up_ends_the_run_environment(tmp_path: Path, device: str, setup: str,
                                                                      name: str) -> None:
    run = run_pytest(tmp_path, [SUITE, "-k", "fp32-special", "--kernel-setup", f"{SETUPS}:{setup}"],
                     device=device, env=_fake(device))
    assert run.returncode == ef.ENVIRONMENT_EXIT, run.describe()
    assert f"ENVIRONMENT ({name})" in run.output, run.output[-2000:]
    doc = run.doc
    assert doc["ended"] == "environment" and doc["finished"] is False and doc["exitstatus"] == 6
    assert doc["environment_failure"]["name"] == name and doc["environment_failure"]["backend"] == device
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith(f"### nan-harness: ENVIRONMENT ({name}): "), summary
    assert f"ENVIRONMENT ({name})" in run.html.read_text() and "environment_failure" in run.junit.read_text()
    assert compare.main([str(run.json_path), str(run.json_path)]) == 2


def test_a_user_pattern_file_names_a_lab_failure_and_a_setup_bug_stays_a_usage_error(tmp_path: Path) -> None:
    patterns = tmp_path / "lab.toml"
    patterns.write_text('[[pattern]]\nname = "lab-lease"\nregex = "LAB-\\\\d+: card lease expired"\n'
                        'example = "LAB-0042: card lease expired"\n')
    lab = run_pytest(tmp_path / "lab", [SUITE, "-k", "fp32-special", "--kernel-setup", f"{SETUPS}:lab_lease_expired",
                                        f"--nan-env-patterns={patterns}"])
    assert lab.returncode == 6 and lab.doc["environment_failure"]["name"] == "lab-lease", lab.describe()
    without = run_pytest(tmp_path / "plain", [SUITE, "-k", "fp32-special", "--kernel-setup",
                                              f"{SETUPS}:lab_lease_expired"])
    assert without.returncode == 4 and "environment_failure" not in without.doc, without.describe()
    bug = run_pytest(tmp_path / "bug", [SUITE, "-k", "fp32-special", "--kernel-setup", f"{SETUPS}:ordinary_bug"])
    assert bug.returncode == 4 and json.loads(bug.json_path.read_text())["ended"] != "environment", bug.describe()
