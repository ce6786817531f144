"""The harness's whole suite as one test of a kernel repository's own pytest run, for nightlies that run
`pytest -sv tests/test_num_nans_harness.py` on a path of their repository (vllm-ascend's do), with no tox.

The kernel repository adds the few-line file `template()` prints (`python -m nightly.dropin --kernel MODULE`);
its one test calls `run_suite`, which runs `nan-harness`'s pytest command in a child process (the suite with this
project's settings, none of the repository's pytest configuration), the kernel imported from the repository (the
working folder, `--kernel-path`), reports into its `out/nan-harness/` ($NAN_HARNESS_OUT): precision.html,
results.json, junit.xml and summary.md. The test passes only when that run finished, wrote this run's results.json,
imported the kernel from the repository, and passed at least one test with none failing: an incomplete run, a crash,
a usage error or a suite that ran nothing fails it, with the harness's verdict and the report paths as its message.
"""
from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness import cli, processes
from nightly.bisect_run import GOOD, judge
from reports.results import Results, ResultsError, load_run
from reports.summary_model import of_results

DEVICE_VAR = "NAN_HARNESS_DEVICE"  # npu, cuda or cpu: the CI job's choice
ARGS_VAR = "NAN_HARNESS_ARGS"  # more pytest arguments for the suite (a selection, -n), split like a shell
OUT_VAR = "NAN_HARNESS_OUT"  # where the reports go (default: out/nan-harness under the working folder)
DEFAULT_OUT = Path("out") / "nan-harness"
REPORTS = {"html": "precision.html", "json": "results.json", "junit": "junit.xml", "markdown": "summary.md"}
SHOWN_FAILURES = 5
TEMPLATE = '''"""The nan-harness suite on this repository's NaN-count kernel: `pytest -sv {path}`."""
import os

from nightly.dropin import run_suite


def test_num_nans_harness() -> None:
    run_suite(kernel="{kernel}", device=os.environ.get("{device_var}", "{device}"))
'''


class SuiteFailed(AssertionError):
    """The suite did not pass: its message is the harness's verdict and where the reports are."""


@dataclass(frozen=True)
class SuiteRun:
    """What one run of the suite left: pytest's exit status, the reports and the verdict line."""

    exitstatus: int
    folder: Path
    headline: str
    passed: bool

    @property
    def reports(self) -> dict[str, Path]:
        return {kind: self.folder / name for kind, name in REPORTS.items()}


def template(kernel: str, device: str = "npu", path: str = "tests/test_num_nans_harness.py") -> str:
    """The drop-in test file's text for a kernel module (what a kernel repository commits)."""
    return TEMPLATE.format(kernel=kernel, device=device, device_var=DEVICE_VAR, path=path)


def command(kernel: str, device: str, folder: Path, kernel_path: Path, run_id: str, extra: Sequence[str]
            ) -> list[str]:
    """`nan-harness`'s pytest command (harness.cli.arguments) with every report path in folder."""
    user = [f"--device={device}", f"--kernel={kernel}", f"--kernel-path={kernel_path}",
            f"--html={folder / REPORTS['html']}", f"--nan-json={folder / REPORTS['json']}",
            f"--junitxml={folder / REPORTS['junit']}", f"--nan-markdown={folder / REPORTS['markdown']}",
            f"--nan-run-id={run_id}", *extra]
    return cli.command(user)


def headline(run: Results | None, judged: str) -> str:
    """The verdict line: the harness's word, kernel, backend and tally, and how this test judged the run."""
    m = of_results(run) if run else None
    if m is None or not m.tests:
        return f"nan-harness: {m.verdict if m else 'INCOMPLETE'}: {judged}"
    return f"nan-harness: {m.verdict}: kernel {m.kernel} on {m.backend}: {m.tests} tests: {m.tally} ({judged})"


def message(result: SuiteRun, run: Results | None) -> str:
    """The assertion message: the verdict line, the first failing tests with their first wrong row, the reports."""
    m, lines = of_results(run) if run else None, [result.headline]
    if m is not None and m.diagnosis:
        first = m.diagnosis[0]
        lines.append(f"  likely: [{first.get('category', '')}] {first.get('name', '')}")
    failing = m.failures if m else ()
    lines += [f"  {f.id}: {f.verdict}: {f.why}" for f in failing[:SHOWN_FAILURES]]
    if len(failing) > SHOWN_FAILURES:
        lines.append(f"  ... {len(failing) - SHOWN_FAILURES} more")
    lines.append("reports: " + ", ".join(str(p) for p in result.reports.values() if p.is_file())
                 if any(p.is_file() for p in result.reports.values()) else f"reports: none written in {result.folder}")
    return "\n".join(lines)


def run_suite(kernel: str, *, device: str | None = None, args: Sequence[str] = (), out: str | Path | None = None,
              kernel_path: str | Path | None = None, timeout_s: float | None = None) -> SuiteRun:
    """Run the harness's suite on `kernel`; raise SuiteFailed (an AssertionError) unless it finished and passed.

    device: npu, cuda or cpu (default $NAN_HARNESS_DEVICE); args: more pytest arguments (then $NAN_HARNESS_ARGS);
    out: the reports' folder (default $NAN_HARNESS_OUT, else out/nan-harness); kernel_path: where the kernel is
    imported from and must come from (default: the working folder, the repository's root in its CI)."""
    __tracebackhide__ = True  # the failure shows the verdict, not this function's source
    device = device or os.environ.get(DEVICE_VAR)
    if not device:
        raise SuiteFailed(f"nan-harness: no device: pass device= or set {DEVICE_VAR} (npu, cuda or cpu)")
    here = Path.cwd()
    folder = here / (out or os.environ.get(OUT_VAR) or DEFAULT_OUT)  # an absolute path stays as it is
    source = here / (kernel_path or "")
    folder.mkdir(parents=True, exist_ok=True)
    for name in REPORTS.values():  # an earlier run's reports never stand in for this one's
        (folder / name).unlink(missing_ok=True)
    run_id = uuid.uuid4().hex
    extra = [*args, *shlex.split(os.environ.get(ARGS_VAR, ""))]
    argv = command(kernel, device, folder, source, run_id, extra)
    print(f"nan-harness: $ {shlex.join(argv)}", flush=True)
    env = cli.importable(processes.child_env())  # less the caller's pytest's variables: its addopts, its worker id
    try:
        code = subprocess.run(argv, cwd=here, env=env, check=False, timeout=timeout_s).returncode
    except subprocess.TimeoutExpired:
        code = -9
    judgement = judge(code, folder / REPORTS["json"], run_id, None, source)
    try:
        run: Results | None = load_run(folder / REPORTS["json"], run_id)
    except ResultsError:  # unreadable, or not this run's file: say nothing from it
        run = None
    judged = judgement.why if code != -9 else f"stopped after {timeout_s} s: not judged"
    passed = judgement.code == GOOD and run is not None and any(r.outcome == "passed" for r in run.records)
    if judgement.code == GOOD and not passed:
        judged = "no test passed: nothing was judged"
    result = SuiteRun(code, folder, headline(run, judged), passed)
    text = message(result, run)
    print(text, flush=True)
    if not passed:
        raise SuiteFailed(text)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nightly.dropin",
                                     description="print the drop-in test file for a kernel repository")
    parser.add_argument("--kernel", required=True, help="the module under test, e.g. my_pkg.num_nans")
    parser.add_argument("--device", default="npu", help="the device when $NAN_HARNESS_DEVICE is unset (default npu)")
    parser.add_argument("--path", default="tests/test_num_nans_harness.py", help="where the file goes")
    args = parser.parse_args(argv)
    sys.stdout.write(template(args.kernel, args.device, args.path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
