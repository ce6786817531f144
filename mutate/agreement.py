"""`python -m mutate.agreement --kernel K [--sample N --seed S]`: the warm judge against the reference.

The pytest suite is the reference; `python -m mutate` judges mutants in warm workers for speed. This runs a
seeded sample of a kernel's mutants both ways: `python -m mutate` as users run it, and one isolated pytest per
mutant over the whole suite (the first generation: fast families, then the rest, `-x`, the tests the original
fails deselected alike). Every mutant must get the same status, and every case the warm judge names as a killer
must fail when pytest runs that test alone on the mutant. Exit 0 when all agree, 1 otherwise, 2 usage error.

Where the warm judge proves more than pytest can, the statuses differ by design and are listed as such: a mutant
no test reaches (`no_coverage`) passes every pytest test; one proved equivalent or duplicate by its compiled code,
or refused by Triton's compiler while the interpreter runs it, passes them too.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.cli import home
from mutate import classify, generate
from mutate.cli import DEVICES, choose, generated
from mutate.package import write_copy
from mutate.run import Runner, Settings, Stage, Target, confirm_with, full_suite, selected_suite

BEYOND_PYTEST = {classify.NO_COVERAGE: "no test reaches it: every test passes",
                 classify.EQUIVALENT: "proved equivalent by its compiled code",
                 classify.DUPLICATE: "proved a duplicate by its compiled code"}


def agrees(warm: dict[str, Any], reference: str) -> tuple[bool, str]:
    """Whether the warm judge's entry and the reference's status agree, and how."""
    status = warm["status"]
    if status == reference:
        return True, "same status"
    if reference == classify.SURVIVED and status in BEYOND_PYTEST:
        return True, BEYOND_PYTEST[status]
    if reference == classify.SURVIVED and status == classify.NOT_VIABLE and warm.get("stage") == "compile":
        return True, "Triton's compiler refuses it; the interpreter runs it"
    return False, f"warm {status}, pytest {reference}"


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m mutate.agreement", description=__doc__.split("\n\n")[1])
    p.add_argument("--kernel", required=True)
    p.add_argument("--kernel-path", action="append", default=[], type=Path)
    p.add_argument("--device", choices=DEVICES, default="cpu")
    p.add_argument("--sample", type=int, default=30, help="mutants drawn (seeded; default 30)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ids", default=None, help="comma-separated mutant ids instead of a sample")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--select", default=None, metavar="MARKEXPR",
                   help="both judges on the family cases whose markers match this expression only, as python -m "
                        "mutate --select does (default: the whole suite)")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args(argv)
    if args.ids:
        args.sample = None
    args.operators = None
    return args


def _reference(args: argparse.Namespace, unit: Any, mutants: list[generate.Mutant], deselect: list[str],
               original: Target) -> tuple[dict[str, str], dict[str, Target], Runner]:
    """One isolated pytest per mutant over the whole suite (or --select's cases): its status, and its copy."""
    settings = Settings(args.device, jobs=args.jobs, deselect=tuple(deselect))
    stages = selected_suite(args.select) if args.select else full_suite()
    runner = Runner(settings, stages, float("inf"),
                    confirm=confirm_with(settings, original, args.out / "reference" / "confirm"))
    targets = []
    for m in mutants:
        module, _ = write_copy(unit, args.out / "reference" / m.id, m.module_name, {m.module: m.source})
        targets.append((Target(module, (args.out / "reference" / m.id,)), args.out / "reference" / m.id / "runs"))
    outcomes = runner.run_many(targets)
    statuses = {}
    for m, outcome in zip(mutants, outcomes):
        status = outcome.status.outcome
        statuses[m.id] = classify.SURVIVED if status == classify.STAGE_PASSED else status
    return statuses, {m.id: t for m, (t, _) in zip(mutants, targets)}, runner


def _killer_fails(runner: Runner, target: Target, nodeid: str, folder: Path) -> bool:
    """The warm judge's killer run alone by pytest on the mutant: it must fail (or the worker die in it)."""
    outcome = runner.run(target, folder, first_failure=False, stages=(Stage("killer", (nodeid,)),))
    return outcome.status.outcome in (classify.KILLED, classify.NOT_VIABLE)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse(argv)
    found = generated(args)
    if isinstance(found, str):
        print(f"mutate.agreement: {found}", file=sys.stderr)
        return 2
    unit, gens = found
    every = [m for g in gens for m in g.mutants]
    mutants = choose(every, args)
    if not mutants:
        print(f"mutate.agreement: {args.kernel} has no mutants", file=sys.stderr)
        return 2
    start = time.monotonic()
    warm_out = args.out / "warm"
    argv_warm = [sys.executable, "-m", "mutate", "--kernel", args.kernel, "--device", args.device, "--ids",
                 ",".join(m.id for m in mutants), "--trials", "0", "--no-cache", "--out", str(warm_out),
                 "--jobs", str(args.jobs), *[f"--kernel-path={p}" for p in args.kernel_path],
                 *(["--select", args.select] if args.select else [])]
    done = subprocess.run(argv_warm, cwd=home(), capture_output=True, text=True, check=False)
    if done.returncode not in (0, 1):
        print(f"mutate.agreement: the warm run exited {done.returncode}: {done.stderr.strip()[-500:]}",
              file=sys.stderr)
        return 2
    warm_doc = json.loads((warm_out / "mutation.json").read_text(encoding="utf-8"))
    warm_seconds = time.monotonic() - start
    by_id = {e["id"]: e for e in warm_doc["mutants"]}
    original_module, _ = write_copy(unit, args.out / "reference" / "original", generate.ORIGINAL)
    original = Target(original_module, (args.out / "reference" / "original",))
    t0 = time.monotonic()
    reference, copies, runner = _reference(args, unit, mutants, warm_doc["baseline"]["failed"], original)
    rows = []
    for m in mutants:
        entry = by_id[m.id]
        same, how = agrees(entry, reference[m.id])
        killer_ok = None
        if entry["status"] == classify.KILLED and entry.get("killer"):
            killer_ok = _killer_fails(runner, copies[m.id], entry["killer"]["nodeid"],
                                      args.out / "reference" / m.id / "killer")
        rows.append({"id": m.id, "operator": m.operator, "location": m.location, "warm": entry["status"],
                     "warm_stage": entry.get("stage", ""), "pytest": reference[m.id], "agree": same, "how": how,
                     "killer": (entry.get("killer") or {}).get("nodeid"), "killer_fails_in_pytest": killer_ok})
    ok = all(r["agree"] and r["killer_fails_in_pytest"] is not False for r in rows)
    doc = {"kernel": args.kernel, "device": args.device, "select": args.select, "sample": args.sample,
           "seed": args.seed,
           "generated": len(every), "compared": len(rows), "agree": ok, "warm_seconds": round(warm_seconds, 1),
           "pytest_seconds": round(time.monotonic() - t0, 1), "mutants": rows}
    (args.out / "agreement.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    for r in rows:
        mark = "ok " if r["agree"] and r["killer_fails_in_pytest"] is not False else "DIFFERS"
        killer = "" if r["killer_fails_in_pytest"] is None else \
            f"; killer {'fails' if r['killer_fails_in_pytest'] else 'PASSES'} alone in pytest"
        print(f"{mark} {r['id']} {r['operator']:<18} warm {r['warm']:<12} pytest {r['pytest']:<12} {r['how']}{killer}")
    agreed = sum(r["agree"] and r["killer_fails_in_pytest"] is not False for r in rows)
    print(f"mutate.agreement: {args.kernel} on {args.device}: {agreed} of {len(rows)} mutants agree (seeded sample "
          f"of {len(rows)} of {len(every)}, seed {args.seed}); warm {doc['warm_seconds']:.0f} s, one pytest per "
          f"mutant {doc['pytest_seconds']:.0f} s")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
