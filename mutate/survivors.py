"""What a survivor's judgement rests on: its equivalence trials (mutate.equivalence), each in a child that imports
and runs both the original and the mutant, side by side, so the deciding process never imports a kernel."""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from harness.cli import home
from mutate import classify, generate, report
from mutate.baseline import Baseline
from mutate.package import Unit
from mutate.run import run_env


def seed_for(base: int, mutant_id: str) -> int:
    """The trials' seed for one mutant: printed and stored, so a differing input can be drawn again."""
    return (base * 1_000_003 + int(mutant_id[:8], 16)) % 2**31


def run_trials(mutant: generate.Mutant, module: str, folder: Path, traced: Path, original: tuple[str, Path],
               args: argparse.Namespace) -> dict[str, Any]:
    """The equivalence trials in a child (it imports and runs both modules); their JSON result or why none."""
    seed = seed_for(args.seed, mutant.id)
    argv = [sys.executable, "-m", "mutate.equivalence", "--original", original[0], "--mutant", module,
            "--traced-file", str(traced), "--changed", ",".join(map(str, mutant.changed_lines)),
            "--trials", str(args.trials), "--seed", str(seed), "--device", args.device,
            f"--kernel-path={folder}", f"--kernel-path={original[1]}",
            *[f"--kernel-path={p}" for p in args.kernel_path]]
    print(f"mutate: {mutant.id}: equivalence trials, seed {seed}", flush=True)
    try:
        done = subprocess.run(argv, cwd=home(), capture_output=True, text=True, timeout=args.equiv_s, check=False,
                              env=run_env(args.device, 0 if args.device != "cpu" else None, None))
    except subprocess.TimeoutExpired:
        return {"error": f"trials stopped after {args.equiv_s:.0f} s", "seed": seed}
    lines = done.stdout.strip().splitlines()
    try:
        return json.loads(lines[-1])
    except (IndexError, ValueError):
        return {"error": f"trials exited {done.returncode}: {(done.stderr.strip().splitlines() or [''])[-1][:300]}",
                "seed": seed}


def judge(entries: dict[str, dict[str, Any]], mutants: list[generate.Mutant], unit: Unit,
          original: tuple[str, dict[str, Path]], out: Path, base: Baseline, jobs: int, args: argparse.Namespace
          ) -> None:
    """The survivors' equivalence trials (--trials), `jobs` at a time; their judgement goes into each entry."""
    module, files = original
    by_id = {m.id: m for m in mutants}
    survivors = [e for e in entries.values() if e["status"] == classify.SURVIVED and "judgement" not in e]
    if not survivors or args.trials <= 0:
        return

    def one(e: dict[str, Any]) -> dict[str, Any]:
        mutant, folder = by_id[e["id"]], out / "mutants" / e["id"]
        traced = folder / files[mutant.module].relative_to(out / "original")
        return run_trials(mutant, f"{mutant.module_name}{unit.under_test('')}", folder, traced,
                          (module, out / "original"), args)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        judged = list(pool.map(one, survivors))
    masked = (f"; {len(base.failed)} test(s) the original fails were deselected: a difference only they "
              "could show is not judged here" if base.failed else "")
    for e, eq in zip(survivors, judged):
        e["equivalence"], e["judgement"] = eq, report.judgement(eq) + ("" if eq.get("differs") else masked)
