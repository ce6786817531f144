"""A warm mutation worker: one pytest session over the suite, collected once, that judges module after module.

Run as `python -m mutate.warm --device D --kernel K` by `mutate.pool` (spawned, never forked: a forked CUDA or NPU
context is unusable). It starts pytest in-process (`--nan-in-process`: this worker is the isolation) on the
suite, and its plugin takes over the test loop: jobs come as JSON lines on stdin, replies go as JSON lines on the
stdout it started with (pytest's and the kernel's output go to stderr, the worker's log): `{"op": "ready"}` with
every test's node id once; per job `{"op": "case", "nodeid": ...}` before each test (so a worker that dies or
hangs is known to have died in that test), when tracing `{"op": "ran", ...}` with each test's time, lines and
launches, and `{"op": "done", ...}` with the outcome. The tests are the suite's own, run by pytest's own protocol:
the one judge of a mutant, on the CPU and on a device alike. A `{"op": "compile"}` job compiles a copy's kernels
instead (mutate.tce).
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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest
import torch

from harness import cli, skips
from harness.activation import IN_PROCESS, IN_PROCESS_CALLER
from harness.fixtures import CASE_BUILDER
from harness.hooks import BACKEND_KEY, TARGET_KEY
from harness.target import KernelLoadError, load
from mutate import tce
from mutate.coverage import Recorder, recording, to_json
from mutate.launch_memo import LaunchMemo, replaying
from mutate.run import CASES_DIR_VAR, FAST_FAMILY_MARKERS, FOLDER, LAUNCH_MEMO_VAR, UNPLACED
from mutate.shared import share_kernels
from mutate.specs import interpreted_here
from reports.collector import record_of_reports
from verdict.not_run import NOT_RUN_PROPERTY, NotRun
from verdict.record import DEVICE_FAULT


class Serve:
    """The pytest plugin that replaces the test loop by the job loop: the collected items, run on request."""

    def __init__(self, reply: IO[str], jobs: IO[str], device: str) -> None:
        self.reply_to, self.jobs, self.device = reply, jobs, device
        self.items: dict[str, pytest.Item] = {}
        self.built: dict[str, Any] = {}
        self.memo: LaunchMemo | None = None
        self.config: pytest.Config | None = None
        self.reports: list[pytest.TestReport] = []  # the running test's
        self.properties: dict[str, list[tuple[str, object]]] = {}
        self.recorder: Recorder | None = None  # the running job's line tracer, if it traces

    def reply(self, message: dict[str, Any]) -> None:
        send(self.reply_to, message)

    @pytest.hookimpl(trylast=True)
    def pytest_configure(self, config: pytest.Config) -> None:
        """After the harness's: Triton is imported only once its backend is prepared (the interpreter's variable)."""
        self.config = config
        config.stash[CASE_BUILDER] = self._built
        for name in ("terminalreporter", "nan-results"):  # each would keep every report of every mutant (1.5 ms a
            plugin = config.pluginmanager.get_plugin(name)  # test for the results' records): the replies say what ran
            if plugin is not None:
                config.pluginmanager.unregister(plugin)
        if os.environ.get(LAUNCH_MEMO_VAR, "1") != "0" and interpreted_here():  # compiled: nothing to replay
            self.memo = LaunchMemo()

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: pytest.Session) -> bool:
        self.items = {item.nodeid: item for item in session.items}
        self.properties = {n: list(item.user_properties) for n, item in self.items.items()}  # as collected
        fast = [n for n, item in self.items.items() if any(item.get_closest_marker(m) for m in FAST_FAMILY_MARKERS)]
        serve(self.reply_to, self.jobs, list(self.items), fast,
              lambda job: compiled(job) if job.get("op") == "compile" else self.judge(job))
        return True

    def _built(self, fc: Any) -> Any:
        """The case built once per worker; with MUTATE_CASES_DIR, once per run (the first worker saves it, the
        others load it: building the large generated cases is most of a fresh worker's first pass)."""
        key = str(fc)
        if key not in self.built:
            self.built[key] = _shared_build(fc, os.environ.get(CASES_DIR_VAR))
        return self.built[key]

    def judge(self, job: dict[str, Any]) -> dict[str, Any]:
        """One module through the job's tests, in order, stopping at the first failing one unless `all` is set; a
        mutant's interpreted launches are replayed from the launch memo (mutate.launch_memo), the traced original's
        only kept. Every fixture is torn down after the job: the next module gets its own."""
        recorder = Recorder(job["trace"]) if job.get("trace") else None
        out: dict[str, Any] = {"op": "done", "failed": [], "skipped": [], "times": {}, "coverage": {}, "ran": 0}
        assert self.config is not None
        try:
            with _imported_from(job["module"], job.get("paths", [])), self._memo(replay=recorder is None):
                try:
                    self.config.stash[TARGET_KEY] = load(job["module"])
                    out["shared"] = self._share(job["module"])
                except KernelLoadError as exc:
                    return {**out, "status": "load_error", "message": str(exc)}
                self._run(job, recorder, out)
        finally:
            if self.memo is not None:
                m = self.memo
                print(f"launch memo: {m.hits} replayed, {m.misses} run and kept, {m.bypassed} run as is; "
                      f"{m.stored_bytes >> 20} MiB kept", file=sys.stderr, flush=True)
        fault = out.get("device_fault") or self.device_fault()
        if fault:
            return {**out, "status": "fault", "device_fault": fault}
        return {**out, "status": "failed" if out["failed"] else "passed"}

    def _share(self, module: str) -> int:
        """The copy's unchanged kernels replaced by the session's original's, compiled already (mutate.shared);
        the target loaded again when the kernel it launches directly is one of them."""
        assert self.config is not None
        original = str(self.config.getoption("--kernel"))
        copy_top, original_top = module.split(".")[0], original.split(".")[0]
        if copy_top == original_top:
            return 0
        shared = share_kernels(copy_top, original_top)
        print(f"{module}: {shared} jit function(s) shared with the original", file=sys.stderr, flush=True)
        if shared:
            self.config.stash[TARGET_KEY] = load(module)
        return shared

    def _memo(self, replay: bool) -> contextlib.AbstractContextManager[Any]:
        """The launch memo around a job (mutate.launch_memo), or nothing where there is none (compiled, or off)."""
        return contextlib.nullcontext() if self.memo is None else replaying(self.memo, replay=replay)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.reports.append(report)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Iterator[None]:
        """The test's body traced when the job asks (the original's run): pytest's own code around it is not."""
        with recording(self.recorder) if self.recorder is not None else contextlib.nullcontext():
            return (yield)

    def _run(self, job: dict[str, Any], recorder: Recorder | None, out: dict[str, Any]) -> None:
        """The job's tests through pytest's own run protocol, each set up and torn down whole (nothing is kept from
        one test, or one module, to the next; the suite's session fixtures are lookups)."""
        for item in (self.items[n] for n in job["cases"] if n in self.items):
            self.reports, item.user_properties[:] = [], self.properties[item.nodeid]  # nothing of an earlier run
            self.reply({"op": "case", "nodeid": item.nodeid})
            start = time.perf_counter()
            self.recorder = recorder
            item.ihook.pytest_runtest_protocol(item=item, nextitem=None)
            seconds = round(time.perf_counter() - start, 4)
            out["times"][item.nodeid] = seconds
            if recorder is not None:  # streamed: a later test that ends the worker loses nothing
                out["coverage"][item.nodeid] = to_json(recorder.take())
                launches = {key: sorted(v) for key, v in recorder.take_launches().items()}
                self.reply({"op": "ran", "nodeid": item.nodeid, "seconds": seconds,
                            "coverage": out["coverage"][item.nodeid], "launches": launches})
            if self._note(item, self.reports, out) and not job.get("all"):
                return

    def _note(self, item: pytest.Item, reports: list[pytest.TestReport], out: dict[str, Any]) -> bool:
        """Add one test's outcome to the reply; True when it failed."""
        record = record_of_reports(reports)
        if record.outcome == "skipped":
            unplaced = any(name == NOT_RUN_PROPERTY and NotRun.from_json(str(value)) == skips.too_large(self.device)
                           for report in reports for name, value in report.user_properties)
            out["skipped"].append([item.nodeid, f"{UNPLACED}: {record.message}" if unplaced else record.message])
            return False
        out["ran"] += 1
        if not record.failed:
            return False
        if record.verdict == DEVICE_FAULT:
            out["device_fault"] = f"{item.nodeid}: {record.message[:400]}"
        out["failed"].append({"nodeid": item.nodeid, "verdict": record.verdict, "message": record.message[:4000],
                              "refusal": " ".join(c.refusal or "" for c in record.checks), "family": record.family})
        return True

    def device_fault(self) -> str | None:
        """The error a sticky device fault raises on the next synchronize (an illegal address, a launch failure
        left by a job's kernel), or None: a worker whose device faulted cannot judge another test."""
        backend = self.config.stash.get(BACKEND_KEY, None) if self.config is not None else None
        if backend is None or backend.interpreted:
            return None
        try:
            backend.synchronize()
        except Exception as exc:  # noqa: BLE001 - whatever the runtime raises, the device is unusable
            return f"synchronize: {type(exc).__name__}: {str(exc)[:400]}"
        return None


def send(reply: IO[str], message: dict[str, Any]) -> None:
    """One reply: a JSON line, flushed (the orchestrator reads it as it comes)."""
    reply.write(json.dumps(message) + "\n")
    reply.flush()


def serve(reply: IO[str], jobs: IO[str], tests: list[str], fast: list[str],
          handle: Callable[[dict[str, Any]], dict[str, Any]]) -> None:
    """The job loop of either worker: `ready` with the tests it can run, then one reply per job line; the harness's
    own failure in a job is said, and the worker goes on."""
    send(reply, {"op": "ready", "cases": tests, "fast": fast, "pid": os.getpid()})
    for line in jobs:
        if line.strip():
            try:
                send(reply, handle(json.loads(line)))
            except Exception:  # noqa: BLE001 - the harness's own failure: said, and the worker goes on
                send(reply, {"op": "done", "status": "error", "message": traceback.format_exc()[-4000:]})


def compiled(job: dict[str, Any]) -> dict[str, Any]:
    """A copy's kernels compiled for the job's specs (mutate.tce), its folders on sys.path meanwhile."""
    with _imported_from(job["module"], job.get("paths", [])):
        return {"op": "done", **tce.compile_copy(job)}


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


def session_argv(device: str, kernel: str, paths: list[str], families: list[str], select: str, log: Path,
                 pytest_args: list[str]) -> list[str]:
    """The worker's pytest: the suite in this process, every test collected (a selection narrows it), no results
    file, HTML or JUnit page (the replies say what ran; the worker keeps no collector of records), no log capture
    (nothing reads it; 1.7 ms a test), no reruns (a kill is a kill)."""
    args = ["--device", device, "-q", "-p", "no:randomly", "-p", "no:logging", IN_PROCESS,
            f"--basetemp={log.with_suffix('.tmp')}", "--nan-json=", "--html=", "--junitxml=", "--nan-markdown=",
            "--nan-reruns=0",
            "--kernel", kernel,
            *[f"--kernel-path={p}" for p in paths], *[f"--nan-family={f}" for f in families],
            *(["-m", select] if select else []), *pytest_args]
    return cli.arguments(args, FOLDER)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mutate.warm", description="a warm mutation worker (JSON lines)")
    p.add_argument("--device", required=True)
    p.add_argument("--kernel", default="", help="the module the session starts with (the original's snapshot)")
    p.add_argument("--kernel-path", action="append", default=[])
    p.add_argument("--nan-family", action="append", default=[])
    p.add_argument("--select", default="", help="a marker expression narrowing the tests collected")
    p.add_argument("--log", default="worker.log", help="the worker's log (its session's temporary files go beside it)")
    p.add_argument("--compile-only", action="store_true", help="only compile jobs, never the interpreter (CPU)")
    p.add_argument("--threads", type=int, default=0, help="torch's CPU threads (0: torch's default)")
    argv = list(sys.argv[1:] if argv is None else argv)
    cut = argv.index("--") if "--" in argv else len(argv)
    args = p.parse_args(argv[:cut])
    if args.threads > 0:  # workers side by side: each its share of the cores, not all of them each
        torch.set_num_threads(args.threads)
    os.environ[IN_PROCESS_CALLER] = "mutate.warm"  # the session runs --nan-in-process: this worker isolates it
    reply = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # what pytest and the kernel print goes to the log, never into the replies
    sys.stdout = sys.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        if args.compile_only:  # mutate.tce on the CPU: Triton compiles for a GPU target, never interpreted here
            os.environ.pop("TRITON_INTERPRET", None)
            serve(reply, sys.stdin, [], [], compiled)
            return 0
        plugin = Serve(reply, os.fdopen(os.dup(0), "r", encoding="utf-8"), args.device)  # pytest's capture takes fd 0
        code = pytest.main(session_argv(args.device, args.kernel, args.kernel_path, args.nan_family, args.select,
                                        Path(args.log), argv[cut + 1:]), plugins=[plugin])
    return 0 if code in (0, 5) else int(code)


if __name__ == "__main__":
    raise SystemExit(main())
