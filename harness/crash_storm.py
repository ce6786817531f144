"""Crash storms: after a few crashes with one signature in one group of tests, the group's other tests are not run.

Each crashed test costs a worker start (about 12 s on an H200: torch, Triton, the device, collection), so a kernel
that ends its process on every bf16 input cost a run ~100 of them. The controller counts crashes by the test's
group (test function, family, path, dtype: harness.isolation attaches it at collection) and signature (how the
worker ended); at `--nan-crash-storm` crashes the group storms, and once as many more crashes with its signature hit
other groups of its dtype and path, every test of that dtype through that path (or naming no path) storms. Every
worker skips the tests a storm covers from its next test on (judged `not_run`, never passed, each naming the storm);
every crashed test stays a failure, rerun in a fresh process as any other.
"""
from __future__ import annotations

import json
import os
import signal
from collections.abc import Mapping
from pathlib import Path

import pytest
import torch

from cases.formats import BY_DTYPE, FORMATS
from harness.options import Numeric
from verdict.crash_storm import CrashGroup, CrashStorm
from verdict.record import PARAMS_PROPERTY, CaseParams

THRESHOLD = Numeric("--nan-crash-storm", 3, 0, 100_000, "N",
                    "after N crashes with one signature (exit status, signal, timeout, device fault) in one group "
                    "of tests (test, family, path, dtype) the group's other tests are not run, each judged not_run "
                    "naming the storm; once one group stormed and N more such crashes hit other groups of its path "
                    "and dtype, no other test of that dtype through that path (or naming none) runs either. 0: every "
                    "test runs in a worker however many crash. Default: 3")
WORKER_INPUT = "nan_crash_storms"  # the path of the run's StormFile, handed to each worker xdist starts
CRASHES_ALLOWED = 64  # crashed workers a run survives unless --max-worker-restart says otherwise


def crash_budget(workers: object) -> int:
    """Workers a run may lose before it stops: xdist's own default (4 per worker) stopped a plain run after its
    5th crashing case, so a kernel whose bug crashes six cases (32-bit offsets: 3 dtypes x 2 paths) never got a
    complete run; each crash costs one worker start-up, so the budget stays bounded."""
    return max(CRASHES_ALLOWED, 4 * workers) if isinstance(workers, int) else CRASHES_ALLOWED


def dtype_name(value: object) -> str:
    """A test parameter as a dtype's short name ('bf16'), or '' when it is none."""
    if isinstance(value, str):
        return value if value in FORMATS else ""
    found = BY_DTYPE.get(value) if isinstance(value, torch.dtype) else None
    return found.name if found else ""


def group_of(item: pytest.Item) -> CrashGroup:
    """The item's group, from its case parameters (family cases) and its `path` and `dtype` test parameters."""
    params: Mapping[str, object] = getattr(getattr(item, "callspec", None), "params", {})
    case = next((CaseParams.from_json(str(v)) for k, v in item.user_properties if k == PARAMS_PROPERTY),
                None)
    path = params.get("path")
    return CrashGroup(str(getattr(item, "originalname", "") or item.name), case.family if case else "",
                      path if isinstance(path, str) else "", case.dtype if case else dtype_name(params.get("dtype")))


def signature(status: int | None, *, fault: bool = False, timed_out: bool = False) -> str:
    """How a worker ended, as a storm counts it: a device fault, a timeout, a signal or an exit status."""
    if fault:
        return "device fault"
    if timed_out:
        return "timeout"
    if status is None:
        return "a lost worker (exit status unknown)"
    if status < 0:
        try:
            return f"signal {signal.Signals(-status).name}"
        except ValueError:
            return f"signal {-status}"
    return f"exit status {status}"


def exit_status(node: object, wait_s: float = 5.0) -> int | None:
    """A dead xdist worker's exit status, where execnet's popen gateway holds its process; None elsewhere."""
    process = getattr(getattr(getattr(node, "gateway", None), "_io", None), "popen", None)
    try:
        return None if process is None else int(process.wait(timeout=wait_s))
    except Exception:  # still running past wait_s, or not a Popen: the signature says unknown
        return None


class Storms:
    """The controller's crashes by group and signature, and the storms they confirmed (in order)."""

    def __init__(self, threshold: int) -> None:
        self.threshold = threshold
        self.crashes: dict[tuple[CrashGroup, str], list[str]] = {}
        self.storms: list[CrashStorm] = []

    def covering(self, group: CrashGroup) -> CrashStorm | None:
        """The first storm whose scope holds the group (a group's own before a wide one)."""
        return next((s for s in self.storms if s.scope.covers(group)), None)

    def crashed(self, nodeid: str, group: CrashGroup, sign: str) -> list[CrashStorm]:
        """Count one crash; the storms it confirms (its group's, then a wide one), none below the threshold, in a
        group a storm already covers (a worker started before it) or with storms off (threshold 0)."""
        if self.threshold <= 0 or self.covering(group) is not None:
            return []
        ids = self.crashes.setdefault((group, sign), [])
        ids.append(nodeid)
        new = [CrashStorm(sign, group, tuple(ids), self.threshold)] if len(ids) >= self.threshold else []
        self.storms += new
        wide = self.wide(group, sign)
        self.storms += [wide] if wide is not None else []
        return new + ([wide] if wide is not None else [])

    def wide(self, group: CrashGroup, sign: str) -> CrashStorm | None:
        """A storm over the group's dtype and path once one group of them stormed with this signature and the
        threshold's count of crashes with it hit other groups of them too; None before."""
        existing, scope = self.covering(group), group.wide()
        if not group.dtype or (existing is not None and not existing.scope.test):
            return None
        alike = {g: ids for (g, s), ids in self.crashes.items() if s == sign and scope.covers(g)}
        stormed = next((g for g in alike if any(st.scope == g and st.signature == sign for st in self.storms)), None)
        others = [n for g, ids in alike.items() if g != stormed for n in ids]
        if stormed is None or len(others) < self.threshold:
            return None
        return CrashStorm(sign, scope, (*alike[stormed], *others), self.threshold,
                          (stormed, *(g for g in alike if g != stormed)))

    def confirmed(self, storm: CrashStorm) -> bool:
        """True for a storm this controller confirmed (a worker's report naming any other was forged there)."""
        return storm in self.storms


class StormFile:
    """The storms so far, in a file the controller rewrites at each storm and every worker re-reads before a test
    when it changed: a worker started before a storm skips its tests from then on, without crashing first."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.seen: tuple[int, int] | None = None
        self.storms = Storms(0)

    def write(self, storms: Storms) -> None:
        """Replace the file whole (a worker never reads half of it)."""
        part = self.path.with_name(f"{self.path.name}.part")
        part.write_text(json.dumps([s.to_dict() for s in storms.storms]), encoding="utf-8")
        os.replace(part, self.path)

    def current(self) -> Storms:
        """The storms as the file holds them now (read again only when it changed; unreadable: none known)."""
        try:
            stat = self.path.stat()
            if (stat.st_mtime_ns, stat.st_size) != self.seen:
                self.storms.storms = [CrashStorm.from_dict(d) for d in json.loads(self.path.read_text("utf-8"))]
                self.seen = (stat.st_mtime_ns, stat.st_size)
        except (OSError, ValueError, TypeError, AttributeError):
            pass
        return self.storms
