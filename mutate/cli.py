"""`python -m mutate --kernel MODULE [--device D] [--budget-s N] [--out DIR]`: the suite's mutation score for a kernel.

Mutants come from the module's own source (its @triton.jit functions and its Python wrapper); each is written as a
module of its own under OUT/mutants/<id>/ and put under test with --kernel mut_<id> --kernel-path that folder
(the original file is never touched). The original, as read at the start (OUT/original/mut_original.py, so later
edits of the file change nothing), runs the whole suite first: tests it already fails are deselected for every
mutant, and survivors are compared with it. Writes OUT/mutation.json and OUT/mutation.html.
Exit status: 0 every judged mutant killed, 1 survivors, 2 nothing could be judged (no source, the original's run
did not finish).
"""
from __future__ import annotations

import argparse
import json
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from mutate import classify, equivalence, generate, report, run
from mutate.operators import BY_NAME, OPERATORS
from mutate.run import Outcome, Runner, Settings, Target, run_env
from mutate.source import SourceError, find_source
from mutate.suite import ROOT, full_suite, selected_suite

DEVICES = ("cpu", "cuda", "npu")
DEFAULT_OUT = "reports/mutation"


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    first = " ".join(__doc__.split("\n\n")[0].split()).replace("`", "")
    p = argparse.ArgumentParser(prog="python -m mutate", description=first,
                                epilog="Arguments after -- go to every pytest run (e.g. -- -k 'not bigoffset').")
    p.add_argument("--kernel", required=True, help="dotted module under test (its source file is mutated)")
    p.add_argument("--kernel-path", action="append", default=[], type=Path, metavar="DIR",
                   help="folder to import --kernel from (as the suite's option); repeatable")
    p.add_argument("--device", choices=DEVICES, default="cpu", help="backend the suite runs on (default cpu)")
    p.add_argument("--budget-s", type=float, default=3600.0,
                   help="wall-clock budget for the suite runs; mutants not run within it are reported as not run")
    p.add_argument("--out", type=Path, default=None, help=f"output folder (default {DEFAULT_OUT}/<kernel>)")
    p.add_argument("--jobs", type=int, default=None,
                   help="mutants run at once (default: one per visible card on an accelerator, 1 on the CPU)")
    p.add_argument("--per-mutant-s", type=float, default=900.0, help="limit of one stage run (status timeout)")
    p.add_argument("--select", default=None, metavar="MARKEXPR",
                   help="run only this marker expression as the suite, one stage (e.g. a weakened nan_matrix)")
    p.add_argument("--operators", default=None, help="comma-separated operator names (default: all)")
    p.add_argument("--ids", default=None, help="comma-separated mutant ids to run (default: all)")
    p.add_argument("--sample", type=int, default=None, help="run a fixed random sample of N mutants (--seed)")
    p.add_argument("--seed", type=int, default=0, help="seed of --sample and of the equivalence trials (default 0)")
    p.add_argument("--trials", type=int, default=100, help="equivalence trials per survivor (0: none)")
    p.add_argument("--equiv-s", type=float, default=600.0, help="limit of one survivor's equivalence trials")
    p.add_argument("--no-baseline", action="store_true",
                   help="do not run the original first (its failing tests are then not deselected: only for a "
                        "suite it is known to pass, e.g. in tests)")
    p.add_argument("--list", action="store_true", help="list the mutants (id, operator, location, change) and stop")
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = p.parse_args(argv[:cut])
    args.pytest_args = argv[cut + 1:]
    return args


def card_count(device: str) -> tuple[int, str | None]:
    """(cards the backend sees, its card-visibility variable), from a child so this process never touches a card."""
    if device == "cpu":
        return 0, None
    code = ("from harness import backends; b = backends.get(%r); "
            "print(b.card_count() if b.available() else 0, b.visibility_var)" % device)
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=False,
                          env=run_env(device, None, None))
    if done.returncode != 0:
        raise SourceError(f"cannot count {device} cards: {done.stderr.strip()[-300:]}")
    count, var = done.stdout.split()[-2:]
    return int(count), var


def choose(gen: generate.Generation, args: argparse.Namespace) -> list[generate.Mutant]:
    """The mutants this run judges: all, or --ids, or a seeded --sample (ids sorted, so the order is stable)."""
    mutants = gen.mutants
    if args.ids:
        wanted = set(args.ids.split(","))
        mutants = [m for m in mutants if m.id in wanted]
    if args.sample is not None and args.sample < len(mutants):
        picked = set(m.id for m in random.Random(args.seed).sample(sorted(mutants, key=lambda m: m.id), args.sample))
        mutants = [m for m in mutants if m.id in picked]
    return mutants


def judge_survivor(mutant: generate.Mutant, folder: Path, snapshot: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The equivalence trials in a child (it imports and runs both modules); their JSON result or why none."""
    seed = equivalence.seed_for(args.seed, mutant.id)
    argv = [sys.executable, "-m", "mutate.equivalence", "--original-file", str(snapshot),
            "--mutant-file", str(folder / f"{mutant.module_name}.py"), "--changed",
            ",".join(map(str, mutant.changed_lines)), "--trials", str(args.trials), "--seed", str(seed),
            "--device", args.device, *[f"--kernel-path={p}" for p in args.kernel_path]]
    print(f"mutate: {mutant.id}: equivalence trials, seed {seed}", flush=True)
    try:
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=args.equiv_s, check=False,
                              env=run_env(args.device, 0 if args.device != "cpu" else None, None))
    except subprocess.TimeoutExpired:
        return {"error": f"trials stopped after {args.equiv_s:.0f} s", "seed": seed}
    lines = done.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, ValueError):
        return {"error": f"trials exited {done.returncode}: {(done.stderr.strip().splitlines() or [''])[-1][:300]}",
                "seed": seed}


def entry(mutant: generate.Mutant, outcome: Outcome | None) -> dict[str, Any]:
    """One mutant's record for mutation.json."""
    status = outcome.status if outcome else classify.StageResult(classify.NOT_RUN, why="not selected")
    stage = ""
    if outcome:
        for name, result in zip(outcome.stage_names, outcome.stages):
            stage = name
            if result.outcome != classify.STAGE_PASSED:
                break
    killer = ({"nodeid": status.nodeid, "family": status.family, "verdict": status.verdict, "crash": status.crash}
              if status.outcome == classify.KILLED else None)
    return {"id": mutant.id, "operator": mutant.operator, "reason": BY_NAME[mutant.operator].reason,
            "function": mutant.function, "line": mutant.line, "col": mutant.col, "location": mutant.location,
            "change": mutant.change, "diff": mutant.diff, "status": status.outcome, "why": status.why,
            "killer": killer, "crash": status.crash, "stage": stage,
            "seconds": round(outcome.seconds, 1) if outcome else 0.0,
            "location_key": (mutant.line, mutant.col)}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the tool; on Ctrl-C or SIGTERM the runs in flight are ended before it leaves (exit 2)."""
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_interrupt) if main_thread else None
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("mutate: interrupted; ending the runs in flight", file=sys.stderr)
        run.stop_all()
        return 2
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, previous)


def _raise_interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _main(argv: Sequence[str] | None) -> int:
    args = parse(argv)
    started = time.monotonic()
    deadline = started + args.budget_s
    try:
        path = find_source(args.kernel, args.kernel_path)
    except SourceError as exc:
        print(f"mutate: {exc}", file=sys.stderr)
        return 2
    ops = OPERATORS if not args.operators else tuple(BY_NAME[n] for n in args.operators.split(","))
    rel = str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)
    gen = generate.generate(path.read_text(encoding="utf-8"), rel, args.kernel,
                            is_package=path.name == "__init__.py", operators=ops)
    mutants = choose(gen, args)
    if args.list:
        for m in mutants:
            print(f"{m.id}  {m.operator:<19} {m.location:<28} {m.change}")
        print(f"{len(mutants)} mutants ({len(gen.mutants)} generated, {len(gen.not_compiling)} did not compile, "
              f"{gen.duplicates} duplicates)")
        return 0
    out = (args.out or Path(DEFAULT_OUT) / args.kernel)
    out = out if out.is_absolute() else Path.cwd() / out
    cards, var = card_count(args.device)
    jobs = args.jobs or (max(1, cards) if args.device != "cpu" else 1)
    stages = selected_suite(args.select) if args.select else full_suite()
    print(f"mutate: {args.kernel} ({rel}): {len(gen.mutants)} mutants, {len(gen.not_compiling)} did not compile, "
          f"{gen.duplicates} duplicates; running {len(mutants)} on {args.device} with {jobs} job(s), "
          f"budget {args.budget_s:.0f} s -> {out}", flush=True)
    settings = Settings(args.device, out, jobs=jobs, cards=cards, visibility_var=var, per_run_s=args.per_mutant_s,
                        extra=tuple(args.pytest_args))
    snapshot = generate.write_original(gen, out / "original")  # what the mutants differ from, whatever edits follow
    if args.no_baseline:
        base = Outcome(Target(args.kernel, (), "original"), [classify.StageResult(classify.STAGE_PASSED, why="skipped")])
    else:
        base = Runner(settings, stages, deadline).run(Target(snapshot.stem, (snapshot.parent, *args.kernel_path),
                                                             "original"), out / "original", first_failure=False)
    base_ok = all(s.outcome in (classify.STAGE_PASSED, classify.KILLED) for s in base.stages)
    meta: dict[str, Any] = {
        "kernel": args.kernel, "file": rel, "device": args.device, "budget_s": args.budget_s, "jobs": jobs,
        "seed": args.seed, "trials": args.trials, "sample": args.sample,
        "suite": [{"name": s.name, "args": list(s.args)} for s in stages],
        "operators": [{"name": o.name, "reason": o.reason, "scope": o.scope} for o in ops],
        "generated": len(gen.mutants), "not_compiling": gen.not_compiling, "duplicates": gen.duplicates,
        "pytest_args": list(args.pytest_args),
        "baseline": {"status": ("not run (--no-baseline)" if args.no_baseline else "finished") if base_ok
                     else "not finished: " + "; ".join(s.why for s in base.stages),
                     "failed": base.failed_ids, "seconds": round(base.seconds, 1)},
    }
    print(f"mutate: original: {meta['baseline']['status']}, {len(base.failed_ids)} failing test(s) deselected, "
          f"{base.seconds:.0f} s", flush=True)
    if not base_ok:
        doc = report.document([entry(m, None) for m in mutants], {**meta, "seconds": time.monotonic() - started})
        report.write_json(doc, out / "mutation.json")
        report.write_html(doc, out / "mutation.html")
        print("mutate: the original's own run did not finish: nothing judged", file=sys.stderr)
        return 2
    settings = Settings(args.device, out, jobs=jobs, cards=cards, visibility_var=var, per_run_s=args.per_mutant_s,
                        deselect=tuple(base.failed_ids), extra=tuple(args.pytest_args))
    folders = {m.id: generate.write(m, out / "mutants" / m.id) for m in mutants}
    targets = [(Target(m.module_name, (folders[m.id], *args.kernel_path), m.id), folders[m.id] / "runs")
               for m in mutants]
    n_done = [0]

    def progress(o: Outcome) -> None:
        n_done[0] += 1
        s = o.status
        print(f"mutate: [{n_done[0]}/{len(mutants)}] {o.target.label} {s.outcome}"
              + (f" by {s.nodeid}" if s.outcome == classify.KILLED else f" ({s.why})") + f" {o.seconds:.0f} s",
              flush=True)

    confirm = run.confirm_with(settings, Target(snapshot.stem, (snapshot.parent, *args.kernel_path), "original"),
                               out / "original" / "confirm")
    runner = Runner(settings, stages, deadline, confirm=confirm)
    outcomes = runner.run_many(targets, progress)
    meta["flaky_original"] = sorted(runner.flaky)
    entries = [entry(m, o) for m, o in zip(mutants, outcomes)]
    survivors = [(m, e) for m, e in zip(mutants, entries) if e["status"] == classify.SURVIVED]
    if survivors and args.trials > 0:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            judged = list(pool.map(lambda me: judge_survivor(me[0], folders[me[0].id], snapshot, args), survivors))
        masked = (f"; {len(base.failed_ids)} test(s) the original fails were deselected: a difference only they "
                  "could show is not judged here" if base.failed_ids else "")
        for (m, e), eq in zip(survivors, judged):
            e["equivalence"], e["judgement"] = eq, report.judgement(eq) + ("" if eq.get("differs") else masked)
    for _, e in survivors:
        e.setdefault("judgement", report.judgement(None))
    doc = report.document(entries, {**meta, "seconds": round(time.monotonic() - started, 1)})
    report.write_json(doc, out / "mutation.json")
    report.write_html(doc, out / "mutation.html")
    print(summary_line(doc), flush=True)
    for m in doc["mutants"]:
        if m["status"] == classify.SURVIVED:
            print(f"mutate: survivor {m['id']} {m['operator']} {m['location']} {m['change']}: {m['judgement']}")
    return 1 if doc["counts"].get(classify.SURVIVED) else 0


def summary_line(doc: dict[str, Any]) -> str:
    """One line for terminals and the nightly summary."""
    c = doc["counts"]
    value = "n/a" if doc["score"] is None else f"{doc['score']:.0%}"
    return (f"mutation score {value} for {doc['kernel']} on {doc['device']}: {c.get('killed', 0)} killed "
            f"({doc.get('killed_by_crash', 0)} by a crash), {c.get('survived', 0)} survived, "
            f"{c.get('timeout', 0)} timeout, {c.get('not_run', 0)} not run, {c.get('not_viable', 0)} not viable, "
            f"{len(doc.get('not_compiling', []))} did not compile; {doc['seconds']:.0f} s")
