"""`python -m mutate --kernel MODULE [--device D] [--budget-s N] [--out DIR]`: the suite's mutation score for a kernel.

The original's snapshot runs first (its coverage picks each mutant's tests, its failures are deselected), then warm
workers judge the mutants (mutate.engine; cached in OUT/cache.json), survivors get equivalence trials, and
OUT/mutation.json and .html say the score (docs/mutate.md).
Exit status: 0 every judged mutant killed; 1 survivors (or changes no test reaches); 2 usage error or nothing
could be judged (no source, no mutants, the original does not load or fails its own run); 3 INCOMPLETE: some
mutant was left unjudged (budget, time limit), whatever the others say.
"""
from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from harness import needs, processes
from harness.cli import home
from harness.source_file import SourceError
from mutate import baseline, classify, generate, report, schedule, survivors, tce
from mutate.cache import Cache, key_of, suite_revision, versions
from mutate.classify import Verdict
from mutate.engine import Engine, Job
from mutate.operators import BY_NAME, OPERATORS
from mutate.package import Unit, find_unit, write_copy
from mutate.pool import Session, WorkerProcess
from mutate.run import CASES_DIR_VAR, ROOT, run_env

DEVICES = ("cpu", "cuda", "npu")
DEFAULT_OUT = "out/mutation"
EXIT_OK, EXIT_SURVIVORS, EXIT_USAGE, EXIT_INCOMPLETE = 0, 1, 2, 3


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    first = " ".join(__doc__.split("\n\n")[0].split()).replace("`", "")
    p = argparse.ArgumentParser(prog="python -m mutate", description=first,
                                epilog="Arguments after -- go to every pytest run (e.g. -- -k 'not bigoffset').")
    p.add_argument("--kernel", required=True,
                   help="dotted module or package under test: its source and the same-package modules it imports "
                        "are mutated")
    p.add_argument("--kernel-path", action="append", default=[], type=Path, metavar="DIR",
                   help="folder to import --kernel from (as the suite's option); repeatable")
    p.add_argument("--device", choices=DEVICES, default="cpu", help="backend the suite runs on (default cpu)")
    p.add_argument("--budget-s", type=float, default=3600.0,
                   help="wall-clock budget for the suite runs; mutants not run within it are reported as not run")
    p.add_argument("--out", type=Path, default=None, help=f"output folder (default {DEFAULT_OUT}/<kernel>)")
    p.add_argument("--jobs", type=int, default=None,
                   help="warm workers (default: one per visible card on an accelerator, one per core on the CPU)")
    p.add_argument("--per-mutant-s", type=float, default=900.0,
                   help="limit of one mutant's tests (status timeout)")
    p.add_argument("--select", default=None, metavar="MARKEXPR",
                   help="judge with the tests whose markers match this expression only (pytest's -m; e.g. a "
                        "deliberately weakened nan_matrix)")
    p.add_argument("--nan-family", action="append", default=[], metavar="MODULE",
                   help="extra case-family module, as the suite's option; repeatable")
    p.add_argument("--no-cache", action="store_true",
                   help="judge every mutant again (OUT/cache.json unread, unwritten)")
    p.add_argument("--operators", default=None, help="comma-separated operator names (default: all)")
    p.add_argument("--ids", default=None, help="comma-separated mutant ids to run (default: all)")
    p.add_argument("--sample", type=int, default=None, help="run a fixed random sample of N mutants (--seed)")
    p.add_argument("--seed", type=int, default=0, help="seed of --sample and of the equivalence trials (default 0)")
    p.add_argument("--trials", type=int, default=100, help="equivalence trials per survivor (0: none)")
    p.add_argument("--equiv-s", type=float, default=600.0, help="limit of one survivor's equivalence trials")
    p.add_argument("--list", action="store_true", help="list the mutants (id, operator, location, change) and stop")
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = p.parse_args(argv[:cut])
    args.pytest_args = argv[cut + 1:]
    return args


def choose(mutants: list[generate.Mutant], args: argparse.Namespace) -> list[generate.Mutant]:
    """The mutants this run judges: all, or --ids, or a seeded --sample (ids sorted, so the order is stable)."""
    if args.ids:
        wanted = set(args.ids.split(","))
        mutants = [m for m in mutants if m.id in wanted]
    if args.sample is not None and args.sample < len(mutants):
        picked = set(m.id for m in random.Random(args.seed).sample(sorted(mutants, key=lambda m: m.id), args.sample))
        mutants = [m for m in mutants if m.id in picked]
    return mutants


def entry(mutant: generate.Mutant, verdict: Verdict) -> dict[str, Any]:
    """One mutant's record for mutation.json (and the cache)."""
    hidden = ("source", "changed_lines", "original_lines", "jit")
    described = {k: v for k, v in asdict(mutant).items() if k not in hidden}
    return {**described, "reason": BY_NAME[mutant.operator].reason, "location": mutant.location, **asdict(verdict),
            "seconds": round(verdict.seconds, 2), "location_key": (mutant.module, mutant.line, mutant.col)}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the tool; on Ctrl-C or SIGTERM the runs in flight are ended before it leaves (exit 2)."""
    try:
        with processes.sigterm_as_interrupt():
            return _main(argv)
    except KeyboardInterrupt:
        print("mutate: interrupted; ending the runs in flight", file=sys.stderr)
        processes.stop_all()
        return EXIT_USAGE


def generated(args: argparse.Namespace) -> tuple[Unit, list[generate.Generation]] | str:
    """The unit's mutants, or why there are none (a usage error)."""
    try:
        unit = find_unit(args.kernel, args.kernel_path)
    except SourceError as exc:
        return str(exc)
    ops = OPERATORS if not args.operators else tuple(BY_NAME[n] for n in args.operators.split(","))
    gens = []
    for module in unit.modules:
        rel = str(module.path.relative_to(ROOT)) if module.path.is_relative_to(ROOT) else str(module.path)
        gens.append(generate.generate(module.text, rel, module.name, is_package=module.is_package, operators=ops))
    if not any(g.mutants for g in gens):
        files = ", ".join(g.file for g in gens)
        return (f"--kernel {args.kernel}: 0 mutants in {files} (no function bodies to change): name the module "
                "that defines the kernel and its wrapper (e.g. kernel.num_nans, or the package that imports it)")
    return unit, gens


@dataclass
class Plan:
    """What one run judges, where, and with what: everything after parsing that the stages share."""

    args: argparse.Namespace
    unit: Unit
    mutants: list[generate.Mutant]
    out: Path
    jobs: int
    cards: int
    visibility_var: str | None
    meta: dict[str, Any]  # mutation.json's description of the run
    context: list[Any]  # what every cache key holds besides its own: code, suite, backend, selection
    started: float  # time.monotonic() when the run began: the budget counts from it

    def session(self, original: tuple[str, Path]) -> Session:
        """What every warm worker of this run starts with."""
        a = self.args
        return Session(a.device, original, tuple(a.nan_family), a.select or "", tuple(a.pytest_args))

    def worker(self, original: tuple[str, Path], log: str) -> WorkerProcess:
        """A warm worker for the original's run (card 0 on an accelerator), its log under original/."""
        return self.session(original).start(self.out / "original" / log, 0 if self.args.device != "cpu" else None,
                                            None, self.jobs)

    def seconds(self) -> float:
        return round(time.monotonic() - self.started, 1)


def _main(argv: Sequence[str] | None) -> int:
    started = time.monotonic()
    args = parse(argv)
    needs.require("python -m mutate", args.device)
    plan = _plan(args, started)
    if isinstance(plan, int):
        return plan
    args, out = plan.args, plan.out
    # workers share built cases, per (suite, versions, families): a case's tensors follow from those alone
    os.environ[CASES_DIR_VAR] = str(out / "cases" / key_of("cases", suite_revision(), versions(),
                                                            list(args.nan_family))[:16])
    original = write_copy(plan.unit, out / "original", generate.ORIGINAL)
    cache = Cache(None if args.no_cache else out / "cache.json")
    plan.meta["cache"] = str(cache.path) if cache.path else None
    found = _baseline(plan, original, cache)
    if found is None:
        return EXIT_USAGE
    base, warm = found
    entries, verdicts, engine = _judge(plan, original, cache, base, warm)
    if engine.interrupted:
        print("mutate: interrupted: the runs in flight were ended; what was judged is reported (INCOMPLETE)",
              file=sys.stderr, flush=True)
        args.trials = 0
    plan.meta["flaky_original"] = sorted(engine.flaky)
    plan.meta["compiled"] = {**engine.prover.describe(), "when": "for mutants every test reaching them passes"
                             } if engine.prover else {}
    survivors.judge(entries, plan.mutants, plan.unit, original, plan.out, base, plan.jobs, args)
    return _finish(plan, cache, entries, verdicts, engine)


def _plan(args: argparse.Namespace, started: float) -> Plan | int:
    """The run's plan, or its exit status when there is nothing to judge (--list, a usage error)."""
    found = generated(args)
    if isinstance(found, str):
        print(f"mutate: {found}", file=sys.stderr)
        return EXIT_USAGE
    unit, gens = found
    all_mutants = [m for g in gens for m in g.mutants]
    mutants = choose(all_mutants, args)
    not_compiling = [n for g in gens for n in g.not_compiling]
    duplicates = sum(g.duplicates for g in gens)
    files = ", ".join(g.file for g in gens if g.mutants)
    if args.list:
        for m in mutants:
            print(f"{m.id}  {m.operator:<19} {m.module}:{m.location:<28} {m.change}")
        print(f"{len(mutants)} mutants in {files} ({len(all_mutants)} generated, {len(not_compiling)} did not "
              f"compile, {duplicates} duplicates)")
        return EXIT_OK
    if not mutants:
        print(f"mutate: no mutant of {args.kernel} matches --ids/--sample", file=sys.stderr)
        return EXIT_USAGE
    out = (args.out or Path(DEFAULT_OUT) / args.kernel)
    out = out if out.is_absolute() else Path.cwd() / out
    try:
        cards, var = processes.count_cards(args.device, home(), run_env(args.device, None, None))
    except processes.CardCountError as exc:
        print(f"mutate: {exc}", file=sys.stderr)
        return EXIT_USAGE
    jobs = args.jobs or (max(1, cards) if args.device != "cpu" else max(1, os.cpu_count() or 1))
    print(f"mutate: {args.kernel} ({files}): {len(all_mutants)} mutants, {len(not_compiling)} did not compile, "
          f"{duplicates} duplicates; judging {len(mutants)} on {args.device} with {jobs} warm worker(s), "
          f"budget {args.budget_s:.0f} s -> {out}", flush=True)
    meta: dict[str, Any] = {
        "kernel": args.kernel, "file": files, "modules": [m.name for m in unit.modules], "device": args.device,
        "budget_s": args.budget_s, "jobs": jobs, "seed": args.seed, "trials": args.trials, "sample": args.sample,
        "judge": "the suite's tests that reach the change, in warm workers' pytest sessions",
        "suite": [{"name": "tests",
                   "args": ["-m", args.select] if args.select else ["every test reaching the change"]}],
        "operators": [{"name": o.name, "reason": o.reason, "scope": o.scope} for o in OPERATORS],
        "generated": len(all_mutants), "not_compiling": not_compiling, "duplicates": duplicates,
        "pytest_args": list(args.pytest_args), "cache": None,
    }
    context = [key_of(*(m.source for m in unit.modules)), suite_revision(), args.device, versions(), args.select,
               list(args.pytest_args), list(args.nan_family)]
    return Plan(args, unit, mutants, out, jobs, cards, var, meta, context, started)


def _baseline(plan: Plan, original: tuple[str, dict[str, Path]], cache: Cache
              ) -> tuple[baseline.Baseline, list[WorkerProcess]] | None:
    """The original's run (or the cached one), recorded in the plan's meta, and its workers still warm; None, with
    the report written, when the original could not be judged."""
    args, out, (module, files) = plan.args, plan.out, original
    key = key_of("baseline", *plan.context)
    doc = cache.baseline(key)
    cached, warm = doc is not None, []
    try:
        if doc is None:
            t0 = time.monotonic()
            doc, warm = baseline.run(lambda log: plan.worker((module, out / "original"), log), module,
                                     out / "original", [str(p) for p in files.values()], max(1, plan.jobs))
            doc["seconds"] = round(time.monotonic() - t0, 1)
            cache.keep_baseline(key, doc)
            cache.save()
        base = baseline.Baseline.from_doc(doc)
    except baseline.BaselineError as exc:
        plan.meta["baseline"] = {"status": f"not finished: {exc}", "failed": [], "seconds": 0}
        report.write(report.document([], {**plan.meta, "seconds": plan.seconds()}), out)
        print(f"mutate: the original could not be judged: {exc}", file=sys.stderr)
        return None
    plan.meta["baseline"] = {"status": "finished", "failed": base.failed, "seconds": doc["seconds"],
                             "tests": len(base.tests), "from_cache": cached}
    print(f"mutate: original: {len(base.tests)} tests, {len(base.failed)} failing (deselected); "
          f"{doc['seconds']:.0f} s{' (from the cache)' if cached else ''}", flush=True)
    return base, warm


def _judge(plan: Plan, original: tuple[str, dict[str, Path]], cache: Cache, base: baseline.Baseline,
           warm: list[WorkerProcess]) -> tuple[dict[str, dict[str, Any]], dict[str, Verdict], Engine]:
    """Every chosen mutant's entry: from the cache, or judged by the warm workers within the budget."""
    args, out, (module, files) = plan.args, plan.out, original
    traced = {name: str(path) for name, path in files.items()}
    folder = out / "original"
    entries: dict[str, dict[str, Any]] = {}
    todo = []
    for m in plan.mutants:
        kept = cache.mutant(key_of("mutant", m.id, *plan.context))
        if kept is not None:
            entries[m.id] = {**kept, "location_key": tuple(kept["location_key"]), "cached": True}
            continue
        copy, _ = write_copy(plan.unit, out / "mutants" / m.id, m.module_name, {m.module: m.source})
        todo.append(Job(m, copy, out / "mutants" / m.id, (traced[m.module],)))
    print(f"mutate: {len(entries)} from the cache, {len(todo)} to judge", flush=True)
    engine = Engine(plan.session((module, folder)), plan.jobs, out, base, plan.cards, plan.visibility_var,
                    last_killers=cache.doc.get("killers"),
                    prover=tce.prover_for(plan.unit, base, traced, module, out, args.device),
                    per_mutant_s=args.per_mutant_s)
    done = [0]

    def progress(job: Job, v: Verdict) -> None:
        done[0] += 1
        by = f" by {v.killer['nodeid']}" if v.killer else f" ({v.why})"
        where = ", ".join(f"{k} {t:.1f}" for k, t in v.spent.items())
        print(f"mutate: [{done[0]}/{len(todo)}] {job.mutant.id} {v.status}{by} {v.seconds:.1f} s"
              + (f" ({where})" if where else ""), flush=True)

    order = schedule.longest_first(todo, base, cache.doc.get("seconds", {}))
    verdicts = engine.run_all(order, plan.started + args.budget_s, progress,
                              warm=warm if plan.cards <= 1 else [])  # the baseline's workers sit on card 0
    for job in todo:
        entries[job.mutant.id] = entry(job.mutant, verdicts.get(job.mutant.id) or Verdict(
            classify.NOT_RUN, why="interrupted before it was judged"))
    return entries, verdicts, engine


def _finish(plan: Plan, cache: Cache, entries: dict[str, dict[str, Any]], verdicts: dict[str, Verdict],
            engine: Engine) -> int:
    """Cache what was judged, write mutation.json and .html, print the summary; the exit status."""
    for e in entries.values():
        if e["status"] == classify.SURVIVED:
            e.setdefault("judgement", report.judgement(None))
        if e["status"] not in classify.UNJUDGED and not e.get("cached"):
            cache.keep(key_of("mutant", e["id"], *plan.context), {k: v for k, v in e.items() if k != "cached"})
    cache.doc["killers"] = engine.killers
    cache.doc["seconds"] = {**cache.doc.get("seconds", {}), **{i: round(v.seconds, 2) for i, v in verdicts.items()
                                                               if v.status not in classify.UNJUDGED}}
    cache.save()
    ordered = [entries[m.id] for m in plan.mutants]
    doc = report.document(ordered, {**plan.meta, "seconds": plan.seconds(),
                                    "from_cache": sum(1 for e in ordered if e.get("cached"))})
    report.write(doc, plan.out)
    print(summary_line(doc), flush=True)
    for m in doc["mutants"]:
        if m["status"] in (classify.SURVIVED, classify.NO_COVERAGE):
            print(f"mutate: {m['status'].replace('_', ' ')} {m['id']} {m['operator']} {m['module']}:{m['location']} "
                  f"{m['change']}: {m.get('judgement') or m['why']}")
    return exit_status(doc)


def exit_status(doc: dict[str, Any]) -> int:
    """3 when any mutant is unjudged, else 1 with survivors (no coverage included), else 0."""
    c = doc["counts"]
    if not doc["complete"]:
        return EXIT_INCOMPLETE
    return EXIT_SURVIVORS if c.get(classify.SURVIVED, 0) + c.get(classify.NO_COVERAGE, 0) else EXIT_OK


def summary_line(doc: dict[str, Any]) -> str:
    """One line for terminals and the nightly summary: the headline, then every count."""
    c = doc["counts"]
    return (f"mutation {report.headline(doc)} for {doc['kernel']} on {doc['device']}: {c.get('killed', 0)} killed "
            f"({doc.get('killed_by_crash', 0)} by a crash), {c.get('survived', 0)} survived, "
            f"{c.get('no_coverage', 0)} reached by no test, {c.get('timeout', 0)} timeout, {c.get('not_run', 0)} "
            f"not run, {c.get('not_viable', 0)} not viable, {len(doc.get('not_compiling', []))} did not compile; "
            f"{doc.get('from_cache', 0)} from the cache; {doc['seconds']:.0f} s")
