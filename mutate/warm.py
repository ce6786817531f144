"""A warm mutation worker: imports torch, Triton and the harness once, then judges module after module.

Run as `python -m mutate.warm --device D` by `mutate.pool` (spawned, never forked: a forked CUDA or NPU context
is unusable). Jobs come as JSON lines on stdin, replies go as JSON lines on the stdout it started with (what a
kernel prints goes to stderr, the worker's log): `{"op": "ready"}` once; per job `{"op": "case", "nodeid": ...}`
before each case (so a worker that dies or hangs is known to have died in that case), when tracing `{"op": "ran",
...}` with each case's time, lines and launches, and `{"op": "done", ...}` with the outcome. A `{"op": "compile"}`
job compiles a copy's kernels instead (mutate.tce), a `{"op": "pytest"}` job runs pytest.main in-process.
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import hashlib
import json
import os
import sys
import time
import traceback
import warnings
from collections.abc import Iterator
from typing import IO, Any

import pytest
import torch

from cases import registry
from harness import backends
from harness.compare import message
from harness.judge import PathNotRun, judge_built, suite_context
from harness.target import PATHS, KernelLoadError, load
from mutate import tce
from mutate.coverage import Recorder, recording, to_json
from mutate.launch_memo import LaunchMemo, replaying
from mutate.specs import interpreted_here
from mutate.run import CASES_DIR_VAR, FAST_FAMILY_MARKERS, LAUNCH_MEMO_VAR, UNPLACED, nodeid


class Worker:
    """The cases of this backend, built on demand and kept, and the job loop."""

    def __init__(self, device: str, families: list[str], reply: IO[str], compile_only: bool = False) -> None:
        self.reply_to = reply
        self.table: dict[str, tuple[Any, str]] = {}
        self.fast: list[str] = []
        self.built: dict[str, Any] = {}
        self.memo: Any = None
        if compile_only:  # mutate.tce on the CPU: Triton compiles for a GPU target, never interpreted here
            os.environ.pop("TRITON_INTERPRET", None)
            return
        self.backend = backends.resolve(device)
        self.backend.prepare()
        if os.environ.get(LAUNCH_MEMO_VAR, "1") != "0" and interpreted_here():  # compiled launches: nothing to replay
            self.memo = LaunchMemo()
        context = suite_context(self.backend)
        for fc in registry.expand(registry.load(families), context):
            for path in PATHS:
                self.table[nodeid(str(fc), path)] = (fc, path)
                if set(fc.family.markers()) & set(FAST_FAMILY_MARKERS):
                    self.fast.append(nodeid(str(fc), path))

    def reply(self, message: dict[str, Any]) -> None:
        self.reply_to.write(json.dumps(message) + "\n")
        self.reply_to.flush()

    def _built(self, fc: Any) -> Any:
        """The case built once per worker; with MUTATE_CASES_DIR, once per run (the first worker saves it, the
        others load it: building the large generated cases is most of a fresh worker's first pass)."""
        key = str(fc)
        if key not in self.built:
            self.built[key] = _shared_build(fc, os.environ.get(CASES_DIR_VAR))
        return self.built[key]

    def judge(self, job: dict[str, Any]) -> dict[str, Any]:
        """One module through the job's cases; stops at the first failing check unless `all` is set. A mutant's
        interpreted launches are replayed from the worker's launch memo (mutate.launch_memo); the traced original's
        only kept."""
        recorder = Recorder(job["trace"]) if job.get("trace") else None
        out: dict[str, Any] = {"op": "done", "failed": [], "skipped": [], "times": {}, "coverage": {}, "ran": 0}
        try:
            with _imported_from(job["module"], job.get("paths", [])), self._memo(replay=recorder is None):
                return self._judge_cases(job, recorder, out)
        finally:
            if self.memo is not None:
                m = self.memo
                print(f"launch memo: {m.hits} replayed, {m.misses} run and kept, {m.bypassed} run as is; "
                      f"{m.stored_bytes >> 20} MiB kept", file=sys.stderr, flush=True)

    def _memo(self, replay: bool) -> contextlib.AbstractContextManager[Any]:
        """The launch memo around a job (mutate.launch_memo), or nothing where there is none (compiled, or off)."""
        return contextlib.nullcontext() if self.memo is None else replaying(self.memo, replay=replay)

    def _judge_cases(self, job: dict[str, Any], recorder: Any, out: dict[str, Any]) -> dict[str, Any]:
        """The job's cases in order through harness.judge (see judge)."""
        try:
            target = load(job["module"])
        except KernelLoadError as exc:
            return {**out, "status": "load_error", "message": str(exc)}
        for case in job["cases"]:
            fc, path = self.table[case]
            self.reply({"op": "case", "nodeid": case})
            start = time.perf_counter()
            try:
                built = self._built(fc)
                with recording(recorder) if recorder is not None else contextlib.nullcontext():
                    judged = judge_built(target, self.backend, built, fc.family.params(fc.case), path)
                if recorder is not None:
                    out["coverage"][case] = to_json(recorder.take())
            except PathNotRun as exc:
                out["skipped"].append([case, str(exc)])
                continue
            except (RuntimeError, MemoryError) as exc:
                if not backends.is_memory_error(exc):  # a faulted device (this mutant's or an earlier job's launch)
                    out["device_fault"] = f"{case}: {type(exc).__name__}: {str(exc)[:400]}"
                    break
                out["skipped"].append([case, f"{UNPLACED}: {exc}"])
                continue
            finally:
                out["times"][case] = round(time.perf_counter() - start, 4)
                if recorder is not None:  # streamed: a later case that ends the worker loses nothing
                    launches = {k: sorted(v) for k, v in recorder.take_launches().items()}
                    self.reply({"op": "ran", "nodeid": case, "seconds": out["times"][case],
                                "coverage": out["coverage"].get(case, {}), "launches": launches})
            out["ran"] += 1
            if not judged.check.ok:
                out["failed"].append({"nodeid": case, "verdict": judged.check.verdict,
                                      "message": message(judged.check), "refusal": judged.check.refusal,
                                      "family": fc.family.name})
                if not job.get("all"):
                    break
        fault = out.get("device_fault") or self.device_fault()
        if fault:
            return {**out, "status": "fault", "device_fault": fault}
        return {**out, "status": "failed" if out["failed"] else "passed"}

    def device_fault(self) -> str | None:
        """The error a sticky device fault raises on the next synchronize (an illegal address, a launch failure
        left by a job's kernel), or None: a worker whose device faulted cannot judge another case."""
        backend = getattr(self, "backend", None)
        if backend is None or backend.interpreted:
            return None
        try:
            backend.synchronize()
        except Exception as exc:  # noqa: BLE001 - whatever the runtime raises, the device is unusable
            return f"synchronize: {type(exc).__name__}: {str(exc)[:400]}"
        return None

    def compile(self, job: dict[str, Any]) -> dict[str, Any]:
        """A copy's kernels compiled for the job's specs: cache keys of all its jit functions, IR digests of the
        kernels asked (changed ones only, first spec only when asked), or the first spec that does not compile."""
        with _imported_from(job["module"], job.get("paths", [])):
            return {"op": "done", **tce.compile_copy(job)}

    def pytest(self, job: dict[str, Any]) -> dict[str, Any]:
        """The job's pytest arguments run here (`--nan-in-process`): the suite's other tests without a new
        interpreter, torch and Triton imports, an xdist worker and a probe child, interpreted launches replayed from
        the launch memo; its results.json says the rest."""
        with _imported_from(job["module"], []), self._memo(replay=True):
            code = pytest.main(list(job["argv"]))
        fault = self.device_fault()
        return {"op": "done", "status": "ran", "code": int(code), **({"device_fault": fault} if fault else {})}

    def serve(self, jobs: IO[str]) -> None:
        self.reply({"op": "ready", "cases": list(self.table), "fast": self.fast,
                    "markers": {n: sorted(fc.family.markers()) for n, (fc, _) in self.table.items()},
                    "pid": os.getpid()})
        for line in jobs:
            if not line.strip():
                continue
            job = json.loads(line)
            try:
                op = job.get("op")
                self.reply(self.compile(job) if op == "compile" else self.pytest(job) if op == "pytest" else
                           self.judge(job))
            except Exception:  # noqa: BLE001 - the harness's own failure: said, and the worker goes on
                self.reply({"op": "done", "status": "error", "message": traceback.format_exc()[-4000:]})


def _shared_build(fc: Any, folder: str | None) -> Any:
    """fc's Built from the run's case folder, or built here and saved there (atomically); a case made on the
    device (build_on) is never saved."""
    if not folder:
        return fc.family.build(fc.case)
    path = os.path.join(folder, hashlib.sha1(str(fc).encode()).hexdigest() + ".pt")
    if os.path.exists(path):
        try:
            return torch.load(path, weights_only=False)
        except Exception:  # noqa: BLE001 - a torn or foreign file: build it again
            pass
    built = fc.family.build(fc.case)
    if built.build_on is None:
        os.makedirs(folder, exist_ok=True)
        tmp = f"{path}.{os.getpid()}.tmp"
        torch.save(built, tmp)
        os.replace(tmp, path)
    return built


@contextlib.contextmanager
def _imported_from(module: str, paths: list[str]) -> Iterator[None]:
    """The job's folders on sys.path meanwhile; then its copy leaves sys.modules and its folders sys.path: the next
    job imports its own afresh."""
    added = [p for p in paths if p not in sys.path]
    sys.path[:0] = added
    before = set(sys.modules)
    try:
        yield
    finally:
        top = module.split(".")[0]
        for name in set(sys.modules) - before:
            if name == top or name.startswith(top + "."):
                del sys.modules[name]
        for p in added:
            if p in sys.path:
                sys.path.remove(p)
        gc.collect()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mutate.warm", description="a warm mutation worker (JSON lines)")
    p.add_argument("--device", required=True)
    p.add_argument("--nan-family", action="append", default=[])
    p.add_argument("--compile-only", action="store_true", help="only compile jobs, never the interpreter (CPU)")
    p.add_argument("--threads", type=int, default=0, help="torch's CPU threads (0: torch's default)")
    args = p.parse_args(argv)
    if args.threads > 0:  # workers side by side: each its share of the cores, not all of them each
        torch.set_num_threads(args.threads)
    os.environ["NAN_HARNESS_ISOLATING_CALLER"] = "mutate.warm"  # its pytest stage runs --nan-in-process: we isolate
    reply = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # what the kernel prints goes to the log, never into the replies
    sys.stdout = sys.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        Worker(args.device, args.nan_family, reply, args.compile_only).serve(sys.stdin)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
