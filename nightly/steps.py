"""What a night runs besides judging: the suite's command, the benchmark's quick table, the mutation run, the
durations pytest-split reads, the cards it counts; every child through a Runner (tests pass a fake one)."""
from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from harness import cli as harness_cli
from harness import needs, processes
from nightly.nights import Night, Step, read_json
from reports import markdown
from reports.results import Results

ACCELERATORS = ("npu", "cuda")


# A runner runs one command from harness.cli.home(), streams its output to the terminal and to `log`, and
# returns its exit status. Tests pass a fake one.
Runner = Callable[[Sequence[str], Path | None], int]


def run_streaming(argv: Sequence[str], log: Path | None) -> int:
    """Run argv in harness.cli.home(), every output line to stdout and to log; no CI job summary (the night
    writes one)."""
    print(f"$ {' '.join(argv)}", flush=True)
    return processes.run_tee(argv, harness_cli.home(), log, processes.child_env((markdown.STEP_SUMMARY_VAR,)))


def card_count(device: str) -> int:
    """Cards the backend sees (respecting CUDA_VISIBLE_DEVICES / ASCEND_RT_VISIBLE_DEVICES), 0 when it is not
    available here or is the CPU; processes.CardCountError when they cannot be counted. First of all, whether this
    Python holds what the device needs (else ENVIRONMENT, exit 6, one line: harness.needs)."""
    needs.require("python -m nightly", device)
    return processes.count_cards(device, harness_cli.home())[0] if device in ACCELERATORS else 0


def bench_available() -> tuple[bool, str]:
    """Whether `python -m bench` and `python -m bench.compare` can be imported where the night runs them."""
    done = subprocess.run([sys.executable, "-c", "import bench.cli, bench.compare"], cwd=harness_cli.home(),
                          capture_output=True, text=True, check=False)
    return done.returncode == 0, ((done.stdout + done.stderr).strip().splitlines() or [""])[-1]


REPORTS = ("results.json", "junit.xml", "precision.html")  # what the suite writes into a night's folder


def clear_reports(folder: Path) -> None:
    """An earlier run's reports leave the folder before the suite starts: a run that writes nothing leaves nothing."""
    for name in REPORTS:
        (folder / name).unlink(missing_ok=True)


def pytest_command(device: str, folder: Path, *, kernel: str, workers: int, extra: Sequence[str],
                   shard: dict[str, int] | None, durations: Path, run_id: str | None = None,
                   kernel_paths: Sequence[str] = ()) -> list[str]:
    """The suite on every card (`nan-harness`'s pytest command, harness.cli): -n workers (gwN pins card N mod
    count), the long sweeps on accelerators."""
    argv = ["--device", device]
    if run_id:
        argv.append(f"--nan-run-id={run_id}")
    if workers > 0:
        argv += ["-n", str(workers)]
    argv += ["--kernel", kernel, *(f"--kernel-path={path}" for path in kernel_paths)]
    if device in ACCELERATORS:
        argv.append("--nan-fp32-full")
    argv += [f"--html={folder / 'precision.html'}", f"--junitxml={folder / 'junit.xml'}",
             f"--nan-json={folder / 'results.json'}"]
    if shard:
        argv += ["--splits", str(shard["splits"]), "--group", str(shard["group"]), "--durations-path", str(durations)]
    return harness_cli.command([*argv, *extra])


def kernel_paths(own: Sequence[str], extra: Sequence[str]) -> list[str]:
    """The --kernel-path folders of bench and mutate: nightly's own, then those the pytest arguments carry (as the
    suite resolves them), so they import the kernel the suite judged."""
    found = list(own)
    for i, arg in enumerate(extra):
        if arg.startswith("--kernel-path="):
            found.append(arg.split("=", 1)[1])
        elif arg == "--kernel-path" and i + 1 < len(extra):
            found.append(extra[i + 1])
    return found


def bench_command(device: str, folder: Path, kernel: str, paths: Sequence[str] = ()) -> list[str]:
    return [sys.executable, "-m", "bench", "--device", device, "--quick", "--out", str(folder / "bench.json"),
            "--kernel", kernel, *(f"--kernel-path={path}" for path in paths)]


def run_bench(night: Night, runner: Runner, available: Callable[[], tuple[bool, str]]) -> Step:
    """The benchmark's quick table, only where it means something and can run."""
    if night.device not in ACCELERATORS:
        return night.add(Step("bench", "skipped", f"--device {night.device} is not an accelerator: the "
                                                  "interpreter's timings mean nothing"))
    ok, why = available()
    if not ok:
        return night.add(Step("bench", "skipped", f"the bench package is not importable here ({why})"))
    argv = bench_command(str(night.device), night.folder, night.kernel, night.kernel_paths)
    code = runner(argv, night.folder / "bench.log")
    if code != 0:
        return night.add(Step("bench", "failed", f"python -m bench exited {code}; see bench.log", code, argv))
    return night.add(Step("bench", "ran", str(night.folder / "bench.json"), code, argv))


MUTATE_BUDGET_S = 3600.0  # python -m mutate's budget when the nightly runs it


def run_mutation(night: Night, runner: Runner, budget_s: float) -> Step:
    """python -m mutate on the night's kernel (--mutate): its score is one line of the summary, never the exit."""
    out = night.folder / "mutation"
    argv = [sys.executable, "-m", "mutate", "--kernel", night.kernel, "--device", str(night.device), "--out",
            str(out), "--budget-s", str(budget_s), *(f"--kernel-path={path}" for path in night.kernel_paths)]
    (out / "mutation.json").unlink(missing_ok=True)  # only this run's result is read
    code = runner(argv, night.folder / "mutation.log")
    doc = read_json(out / "mutation.json")
    if not isinstance(doc, dict):
        return night.add(Step("mutation", "failed", f"python -m mutate exited {code} without mutation.json", code,
                              argv))
    c, score = doc.get("counts", {}), doc.get("score")
    line = (f"mutation score {'n/a' if score is None else format(score, '.0%')}: {c.get('killed', 0)} killed, "
            f"{c.get('survived', 0)} survived, {c.get('timeout', 0) + c.get('not_run', 0)} not judged; "
            f"{out / 'mutation.html'}")
    return night.add(Step("mutation", "ran", line, code, argv))


def refresh_durations(run: Results, durations: Path) -> int:
    """Write this night's per-test durations (setup + call + teardown, what --store-durations stores) into the
    durations file pytest-split reads, keeping entries of tests this night did not run; returns entries written."""
    known = read_json(durations) or {}
    fresh = {r.nodeid: r.duration for r in run.records if "::" in r.nodeid and r.outcome not in ("pending", "skipped")}
    known.update(fresh)
    durations.write_text(json.dumps(known, sort_keys=True, indent=4), encoding="utf-8")  # pytest-split's format
    return len(fresh)
