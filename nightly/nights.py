"""Night folders under a root: `YYYY-MM-DD` or `YYYY-MM-DD-HHMMSS`, whose names sort in time order.

A night folder holds results.json (the suite), junit.xml, precision.html, optionally bench.json (the benchmark's
quick table) and nightly.json (what the nightly ran and how it judged the night). The previous night of a night is
the newest earlier folder whose results.json finished, for the same kernel module, backend and selection; every
folder passed over is named with the reason, so nothing is compared against (or skipped) silently.
"""
from __future__ import annotations

import datetime
import json
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reports.compare import check_finished
from reports.results import OtherRun, Results, ResultsError, load_run

NIGHT_NAME = re.compile(r"^\d{4}-\d{2}-\d{2}(-\d{6})?$")
NIGHTLY_SCHEMA = "nan-harness-nightly/1"


def is_night(name: str) -> bool:
    return bool(NIGHT_NAME.match(name))


def nights(root: Path) -> list[Path]:
    """Every night folder under root, oldest first."""
    if not root.is_dir():
        return []
    return sorted((p for p in root.iterdir() if p.is_dir() and is_night(p.name)), key=lambda p: p.name)


def new_name(root: Path, now: datetime.datetime | None = None) -> str:
    """Today's date; the date and time when a folder of that date exists already."""
    now = now or datetime.datetime.now()
    name = now.strftime("%Y-%m-%d")
    if (root / name).exists():
        name = now.strftime("%Y-%m-%d-%H%M%S")
    return name


def read_json(path: Path) -> Any:
    """The JSON document in path, or None when it is absent or unreadable."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def read_nightly(folder: Path) -> dict[str, Any] | None:
    """The folder's nightly.json, or None when absent or unreadable."""
    doc = read_json(folder / "nightly.json")
    return doc if isinstance(doc, dict) and doc.get("schema") == NIGHTLY_SCHEMA else None


def read_results(folder: Path, run_id: str | None = None) -> tuple[Results | None, str]:
    """(results document, '') or (None, why it cannot be judged or used as a baseline); with run_id, only the
    results.json that the pytest run given that id wrote (an earlier run's file in the folder is refused)."""
    path = folder / "results.json"
    if not path.is_file():
        return None, "no results.json"
    try:
        run = load_run(path, run_id)
        check_finished(run, path)
    except OtherRun as exc:
        return None, (f"results.json holds run {exc.found!r}, not this night's run {run_id!r}: the suite "
                      "did not write it (it stopped before writing anything)")
    except ResultsError as exc:
        return None, str(exc).replace(f"{path}: ", "")
    return run, ""


@dataclass(frozen=True)
class Baseline:
    """The previous night chosen for a night, and every newer folder passed over with its reason."""

    folder: Path | None
    run: Results | None
    passed_over: tuple[tuple[str, str], ...] = ()

    def lines(self) -> list[str]:
        out = [f"previous night: skipping {name}: {why}" for name, why in self.passed_over]
        if self.folder is None:
            out.append("no previous night: judging this night on its own pass/fail")
        else:
            out.append(f"previous night: {self.folder.name} ({self.folder})")
        return out


def foreign(run: Results, kernel: str | None, backend: str | None) -> str:
    """Why a finished run is not comparable with this night ('' when it is)."""
    if kernel is not None and run.kernel not in (None, kernel):
        return f"foreign run: kernel {run.kernel}, this night runs {kernel}"
    if backend is not None and run.backend not in (None, backend):
        return f"foreign run: backend {run.backend}, this night runs on {backend}"
    return ""


def previous(root: Path, name: str, *, kernel: str | None, backend: str | None,
             selection: dict[str, Any] | None = None) -> Baseline:
    """The newest night before `name` that finished, of the same kernel, backend and (when both say) selection."""
    skipped: list[tuple[str, str]] = []
    for folder in reversed(nights(root)):
        if folder.name >= name:
            continue
        run, why = read_results(folder)
        if run is not None:
            why = foreign(run, kernel, backend)
        if run is not None and not why and selection is not None:
            other = (read_nightly(folder) or {}).get("selection")
            if other is not None and other != selection:
                why = f"foreign run: another selection ({other}), this night runs {selection}"
        if why:
            skipped.append((folder.name, why))
            continue
        return Baseline(folder, run, tuple(skipped))
    return Baseline(None, None, tuple(skipped))


@dataclass
class Step:
    """What one step did, for nightly.json and the closing lines."""

    name: str
    status: str  # ran, skipped, failed, passed, regressed, not judged
    detail: str = ""
    exit: int | None = None
    command: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status, "detail": self.detail, "exit": self.exit, "command": self.command}


@dataclass
class Night:
    """One night's folder and what happened in it."""

    root: Path
    name: str
    folder: Path
    device: str | None
    kernel: str
    kernel_paths: list[str] = field(default_factory=list)  # where bench and mutate import --kernel from too
    workers: int | None = None
    cards: int | None = None
    selection: dict[str, Any] = field(default_factory=dict)
    shard: dict[str, int] | None = None
    steps: dict[str, Step] = field(default_factory=dict)
    baseline: Baseline | None = None
    started: float = field(default_factory=time.time)
    run_id: str | None = None  # the suite's --nan-run-id: only a results.json carrying it is judged

    def add(self, step: Step) -> Step:
        self.steps[step.name] = step
        print(f"nightly: {step.name}: {step.status}" + (f" ({step.detail})" if step.detail else ""), flush=True)
        return step

    def write(self, exit_code: int | None, verdict: str) -> None:
        doc = {
            "schema": NIGHTLY_SCHEMA,
            "night": self.name,
            "device": self.device,
            "kernel": self.kernel,
            "workers": self.workers,
            "cards": self.cards,
            "selection": self.selection,
            "shard": self.shard,
            "run_id": self.run_id,
            "baseline": self.baseline.folder.name if self.baseline and self.baseline.folder else None,
            "passed_over": [{"night": n, "why": w} for n, w in (self.baseline.passed_over if self.baseline else ())],
            "steps": {k: s.as_dict() for k, s in self.steps.items()},
            "exit": exit_code,
            "verdict": verdict,
            "seconds": round(time.time() - self.started, 1),
        }
        self.folder.mkdir(parents=True, exist_ok=True)
        (self.folder / "nightly.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
