"""`python -m nightly`: the whole conformance suite (and the benchmark's quick table) into a dated folder, judged
against the previous night.

One node:   python -m nightly --device cuda                      -> out/nightly/<date>/, compared, exit 0/1/2
N nodes:    python -m nightly --device cuda --night D --splits N --group i   (on node i: ROOT/D/shards/group-i/)
            python -m nightly --merge --night D                  (once, with every shard folder under ROOT/D/shards/)

Exit status: 0 the night finished and nothing regressed against the previous night (with no usable previous night:
no test failed), 1 a verdict regression (`python -m reports.compare` semantics), a slowdown past the benchmark's
noise threshold (`python -m bench.compare`), failing tests with no previous night, or a benchmark that did not run
through; 2 the night did not finish, its shards cannot be merged, or the device is missing (nothing judged).
A shard node (--splits/--group) only runs its shard: exit 0 passed, 1 tests failed, 2 not finished.
A night's summary.md (its verdict, steps and the suite's summary, in Markdown) is also appended to
$GITHUB_STEP_SUMMARY when the runner sets it; the suite run inside the night does not append its own.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness import cli as harness_cli
from harness import needs, processes
from harness.backends import default_workers
from harness.needs import ENVIRONMENT_EXIT
from nightly import last_good, nights
from nightly.nights import Night, Step
from nightly.steps import (
    ACCELERATORS, MUTATE_BUDGET_S, Runner, bench_available, card_count, clear_reports, kernel_paths,
    pytest_command, refresh_durations, run_bench, run_mutation, run_streaming,
)
from reports import markdown
from reports.results import Results, write_text_atomic
from reports.summary_model import of_results

DEFAULT_ROOT = "out/nightly"  # relative paths start at harness.cli.home(): the checkout, or the calling folder
DEFAULT_DURATIONS = ".test_durations"
CPU_WORKERS = 2  # the interpreter's default, as tox -e cpu
BENCH_THRESHOLD = 0.10  # bench.compare's own default noise threshold


def judge(night: Night, runner: Runner, available: Callable[[], tuple[bool, str]], *,
          allow_coverage_loss: bool, threshold: float) -> int:
    """Compare the night with the previous one; without one, the night's own pass/fail."""
    run, why = nights.read_results(night.folder, night.run_id)
    if run is None:
        night.add(Step("verdicts", "not judged", f"this night cannot be judged: {why}", 2))
        return 2
    night.baseline = nights.previous(night.root, night.name, kernel=run.kernel, backend=run.backend,
                                     selection=night.selection or None)
    for line in night.baseline.lines():
        print(f"nightly: {line}", flush=True)
    failing, before = len(run.failing()), night.baseline.folder
    if before is None:
        code = 1 if failing or run.exitstatus not in (0, None) else 0
        night.add(Step("verdicts", "failed" if code else "passed",
                       f"no previous night; {failing} failing test(s) of {len(run.records)}", code))
    else:
        code = compare(night, runner, "verdicts", "reports.compare", before, "results.json",
                       ["--allow-coverage-loss"] if allow_coverage_loss else [], "compare.txt",
                       f"against {before.name}; {failing} failing test(s) now")
    codes = [code]
    bench = night.steps.get("bench")
    if bench is not None and bench.status == "failed":
        codes.append(1)
    if not (night.folder / "bench.json").is_file():
        night.add(Step("speed", "skipped", "no bench.json this night"))
    elif before is None:
        night.add(Step("speed", "skipped", "no previous night"))
    elif not (before / "bench.json").is_file():
        night.add(Step("speed", "skipped", f"{before.name} has no bench.json"))
    elif not (ok_why := available())[0]:
        night.add(Step("speed", "skipped", f"the bench package is not importable here ({ok_why[1]})"))
    else:
        code = compare(night, runner, "speed", "bench.compare", before, "bench.json", ["--threshold", str(threshold)],
                       "bench-compare.txt", f"against {before.name}, threshold {threshold:.0%}")
        codes.append(1 if code == 1 else (2 if code else 0))
    return max(codes)


def compare(night: Night, runner: Runner, step: str, module: str, before: Path, file: str, options: list[str],
            log: str, detail: str) -> int:
    """`python -m MODULE BEFORE/FILE NIGHT/FILE OPTIONS` (reports.compare, bench.compare) as the night's step."""
    argv = [sys.executable, "-m", module, str(before / file), str(night.folder / file), *options]
    code = runner(argv, night.folder / log)
    night.add(Step(step, {0: "passed", 1: "regressed"}.get(code, "not judged"), detail, code, argv))
    return code


def parse(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[str]]:
    first_paragraph = " ".join(__doc__.split("\n\n")[0].split()).replace("`", "")
    parser = argparse.ArgumentParser(prog="python -m nightly", description=first_paragraph,
                                     epilog="Arguments after -- go to pytest (e.g. -- -k fp16).")
    parser.add_argument("--device", choices=("npu", "cuda", "cpu"), help="backend (required except with --merge)")
    parser.add_argument("--workers", type=int, default=None,
                        help="xdist workers (default: one per visible card; 2 on the CPU; 0: no xdist)")
    parser.add_argument("--root", type=Path, default=Path(DEFAULT_ROOT), help=f"night folders (default {DEFAULT_ROOT})")
    parser.add_argument("--night", default=None, help="folder name YYYY-MM-DD[-HHMMSS] (default: today; required "
                                                      "with --splits and --merge, so every node writes one night)")
    parser.add_argument("--kernel", default="kernel", help="module under test (default kernel)")
    parser.add_argument("--kernel-path", action="append", default=[], type=Path, metavar="DIR",
                        help="folder to import --kernel from, for the suite, bench and mutate alike; repeatable")
    parser.add_argument("--splits", type=int, default=None, help="shard the suite over N nodes (pytest-split)")
    parser.add_argument("--group", type=int, default=None, help="this node's shard, 1..N")
    parser.add_argument("--merge", action="store_true", help="merge ROOT/NIGHT/shards/group-*/ and judge the night")
    parser.add_argument("--durations-path", type=Path, default=Path(DEFAULT_DURATIONS),
                        help=f"pytest-split durations file (default {DEFAULT_DURATIONS}, committed)")
    parser.add_argument("--refresh-durations", action=argparse.BooleanOptionalAction, default=None,
                        help="write this night's durations into --durations-path (default: on accelerators only)")
    parser.add_argument("--bench", action=argparse.BooleanOptionalAction, default=True,
                        help="run python -m bench --quick where it can (default on)")
    parser.add_argument("--bench-threshold", type=float, default=BENCH_THRESHOLD,
                        help="noise threshold for python -m bench.compare (default 0.10)")
    parser.add_argument("--mutate", action="store_true",
                        help="also run python -m mutate on --kernel (one summary line; off by default)")
    parser.add_argument("--mutate-budget-s", type=float, default=MUTATE_BUDGET_S,
                        help="budget of python -m mutate with --mutate (default 3600)")
    parser.add_argument("--allow-coverage-loss", action="store_true",
                        help="passed -> skipped or missing is not a regression (reports.compare's option)")
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args, extra = parser.parse_args(argv[:cut]), argv[cut + 1:]
    if not args.merge and args.device is None:
        parser.error("--device is required (or --merge)")
    if (args.splits is None) != (args.group is None):
        parser.error("--splits and --group go together")
    if args.splits is not None and not 1 <= args.group <= args.splits:
        parser.error("--group must be within 1..--splits")
    if (args.splits or args.merge) and not args.night:
        parser.error("--splits/--merge need --night NAME, the same on every node")
    if args.night and not nights.is_night(args.night):
        parser.error(f"--night {args.night!r}: use YYYY-MM-DD or YYYY-MM-DD-HHMMSS")
    return args, extra


def selection_of(args: argparse.Namespace, extra: Sequence[str]) -> dict[str, Any]:
    """What decides which tests a night runs: nights with another selection are not compared."""
    suite = harness_cli.suite_id(harness_cli.suite())  # tests/precision in a checkout, harness/suite installed
    return {"suite": suite, "pytest_args": list(extra), "fp32_full": args.device in ACCELERATORS}


def main(argv: Sequence[str] | None = None, *, runner: Runner = run_streaming,
         cards: Callable[[str], int] = card_count,
         available: Callable[[], tuple[bool, str]] = bench_available) -> int:
    args, extra = parse(argv)
    root = harness_cli.home() / args.root  # an absolute --root stays as it is
    durations = harness_cli.home() / args.durations_path
    if args.merge:
        return merge_night(args, root, durations, runner, available)
    name = args.night or nights.new_name(root)
    shard = {"group": args.group, "splits": args.splits} if args.splits else None
    folder = root / name / "shards" / f"group-{args.group}" if shard else root / name
    started = time.time()  # the night's seconds count the card count too
    try:
        n_cards = cards(args.device)
    except processes.CardCountError as exc:
        print(f"nightly: ENVIRONMENT: {exc} (exit {ENVIRONMENT_EXIT}, nothing judged)", file=sys.stderr)
        return ENVIRONMENT_EXIT
    if args.device in ACCELERATORS and n_cards < 1:
        print(f"nightly: ENVIRONMENT: --device {args.device}: no card visible here (exit {ENVIRONMENT_EXIT}, nothing "
              "judged)", file=sys.stderr)
        return ENVIRONMENT_EXIT
    own = [str(path.resolve()) for path in args.kernel_path]  # from the calling folder
    night = Night(root, name, folder, args.device, args.kernel, kernel_paths(own, extra), cards=n_cards,
                  workers=args.workers if args.workers is not None else (default_workers(n_cards) if n_cards else CPU_WORKERS),
                  selection=selection_of(args, extra), shard=shard, run_id=uuid.uuid4().hex, started=started)
    folder.mkdir(parents=True, exist_ok=True)
    print(f"nightly: {name} -> {folder} ({args.device}, {n_cards} card(s), -n {night.workers})", flush=True)
    clear_reports(folder)
    night.write(None, "running")
    argv_pytest = pytest_command(args.device, folder, kernel=args.kernel, workers=night.workers, extra=extra,
                                 shard=shard, durations=durations, run_id=night.run_id, kernel_paths=own)
    code = runner(argv_pytest, folder / "pytest.log")
    status = {0: "passed", 1: "tests failed"}.get(code, "not finished")
    night.add(Step("suite", status, f"pytest exited {code}", code, argv_pytest))
    if args.bench and (shard is None or shard["group"] == 1):  # one benchmark per night, on the first shard's node
        run_bench(night, runner, available)
    elif not args.bench:
        night.add(Step("bench", "skipped", "--no-bench"))
    if args.mutate and shard is None:
        run_mutation(night, runner, args.mutate_budget_s)
    if shard:
        result = 0 if code == 0 else (1 if code == 1 else 2)
        if night.steps.get("bench") and night.steps["bench"].status == "failed":
            result = max(result, 1)
        night.write(result, f"shard {shard['group']}/{shard['splits']} written; merge with "
                            f"python -m nightly --merge --night {name}")
        print(f"nightly: shard {shard['group']}/{shard['splits']} done (exit {result}); when every shard is under "
              f"{root / name / 'shards'}: python -m nightly --merge --night {name}"
              + (f" --root {args.root}" if str(args.root) != DEFAULT_ROOT else ""), flush=True)
        return result
    return finish(night, args, durations, runner, available)


def finish(night: Night, args: argparse.Namespace, durations: Path, runner: Runner,
           available: Callable[[], tuple[bool, str]]) -> int:
    """Judge the night, refresh the durations from a finished night, write nightly.json, say what happened."""
    result = judge(night, runner, available, allow_coverage_loss=args.allow_coverage_loss,
                   threshold=args.bench_threshold)
    refresh = args.refresh_durations if args.refresh_durations is not None else night.device in ACCELERATORS
    run, _ = nights.read_results(night.folder, night.run_id)
    if run is None:
        night.add(Step("durations", "skipped", "the night did not finish"))
    elif not refresh:
        night.add(Step("durations", "skipped", f"not refreshed on {night.device} (--refresh-durations to force)"))
    else:
        n = refresh_durations(run, durations)
        shutil.copyfile(durations, night.folder / "test_durations.json")
        night.add(Step("durations", "ran", f"{n} test durations written to {durations}; commit it to rebalance shards"))
    verdict = {0: "OK", 1: "REGRESSION" if night.baseline and night.baseline.folder else "FAIL"}.get(result,
                                                                                                  "NOT JUDGED")
    night.write(result, verdict)
    table, why = last_good.update(night.root, night.folder)  # only a judged night moves the table
    print(f"nightly: last good commits: {f'left as they were: {why}' if why else night.root / last_good.FILE}",
          flush=True)
    summary = night_markdown(night, verdict, result, run, table)
    write_text_atomic(night.folder / "summary.md", summary)
    markdown.append_step_summary(summary)
    print(f"nightly: {night.name}: {verdict} (exit {result}); reports in {night.folder}", flush=True)
    return result


def night_markdown(night: Night, verdict: str, result: int, run: Results | None,
                   table: last_good.Table | None = None) -> str:
    """The night for a CI job page: its verdict against the previous night, each step, then the suite's summary."""
    against = night.baseline.folder.name if night.baseline and night.baseline.folder else None
    head = [f"### nan-harness nightly {markdown.text(night.name)}: {markdown.text(verdict)} (exit {result})", "",
            f"Against: {markdown.code(against) if against else 'no previous night'}", "",
            "| step | status | detail |", "|---|---|---|"]
    head += [f"| {markdown.text(name)} | {markdown.text(step.status)} | {markdown.text(step.detail)} |"
             for name, step in night.steps.items()]
    if run is None:
        return markdown.fit(head, ["", "The suite's results cannot be judged: see nightly.json and the logs."], [])
    run_head, body, tail = markdown.parts(of_results(run), html=str(night.folder / "precision.html"), title="the suite")
    good = last_good.markdown_lines(table, run) if table is not None else []
    return markdown.fit(head + [""] + run_head, body, good + tail)


def stale_shard(folder: Path) -> str:
    """Why the shard folder's results.json is not the finished one its own last nightly run wrote (same run id); ''
    when it is, or when the shard was run by hand (pytest --splits: nothing to match)."""
    expected = (nights.read_nightly(folder) or {}).get("run_id")
    return "" if expected is None else nights.read_results(folder, expected)[1]


def merge_night(args: argparse.Namespace, root: Path, durations: Path, runner: Runner,
                available: Callable[[], tuple[bool, str]]) -> int:
    """Merge ROOT/NIGHT/shards/group-*/ into ROOT/NIGHT/ and judge it like an unsharded night."""
    from reports.merge import MergeError, merge

    needs.require("python -m nightly --merge", None)
    folder = root / args.night
    shard_dirs = sorted((folder / "shards").glob("group-*"), key=lambda p: p.name)
    first = (nights.read_nightly(shard_dirs[0]) if shard_dirs else None) or {}
    night = Night(root, args.night, folder, first.get("device") or args.device, first.get("kernel") or args.kernel,
                  workers=first.get("workers"), cards=first.get("cards"), selection=first.get("selection") or {})
    if not shard_dirs:
        print(f"nightly: no shard folders under {folder / 'shards'}", file=sys.stderr)
        return 2
    try:
        for d in shard_dirs:
            if why := stale_shard(d):
                raise MergeError(f"{d.name}: {why}")
        run = merge(folder, shard_dirs)
    except MergeError as exc:
        print(f"nightly: cannot merge the shards of {args.night}: {exc}", file=sys.stderr)
        night.add(Step("merge", "failed", str(exc), 2))
        night.write(2, "NOT JUDGED")
        return 2
    night.add(Step("merge", "ran", f"{len(shard_dirs)} shards, {run.collected} tests, "
                                   f"{'finished' if run.finished else 'NOT finished'}"))
    for d in shard_dirs:  # the benchmark ran on the first shard's node
        if (d / "bench.json").is_file():
            for name in ("bench.json", "bench.png", "bench.log"):
                if (d / name).is_file():
                    shutil.copyfile(d / name, folder / name)
            night.add(Step("bench", "ran", f"from {d.name}"))
            break
        step = (nights.read_nightly(d) or {}).get("steps", {}).get("bench")
        if step and step.get("status") == "failed":
            night.add(Step("bench", "failed", f"{d.name}: {step.get('detail')}", step.get("exit")))
            break
    return finish(night, args, durations, runner, available)
