"""The harness's pytest hooks: backend setup before kernels import, the probe, families and their cases (the shared
fixtures: harness.fixtures, registered with it). Loaded by harness.plugin (which owns the options) where torch
imports; it acts only in a run that asked for the harness (harness.activation)."""
from __future__ import annotations

import json
import os
import sys
from collections.abc import Generator, Sequence
from pathlib import Path
from typing import NoReturn

import pytest
import torch

from cases import registry
from cases.family import Context, Family
from harness import activation, backends, environment_failures, guard, needs, options, probe, processes, skips
from harness.backends import Backend
from harness.environment import interpreter_entry, torch_origin
from harness.judge import suite_context
from harness.kernel_setup import SetupError, SetupSpec, parse_specs, run_setups
from harness.plugin import stop_if_lacking
from harness.run import RUN_INFO_KEY, RunInfo
from harness.target import PATHS, KernelLoadError, KernelUnderTest, load
from verdict.record import PARAMS_PROPERTY

pytest_plugins = ["harness.isolation", "harness.fixtures"]

BACKEND_KEY = pytest.StashKey[Backend]()
TARGET_KEY = pytest.StashKey[KernelUnderTest]()  # workers only
PROBE_KEY = pytest.StashKey[probe.Probe]()  # the controller only
SPARE_KEY = pytest.StashKey[frozenset[int]]()  # child processes that were there before the run
PATHS_KEY = pytest.StashKey[tuple[str, ...]]()  # --kernel-path folders this run put on sys.path
INTERPRET_KEY = pytest.StashKey["str | None"]()  # TRITON_INTERPRET before backend.prepare()
FAMILIES_KEY = pytest.StashKey[tuple[Family, ...]]()
PATTERNS_KEY = pytest.StashKey[tuple[environment_failures.Pattern, ...]]()  # environment failures' table
CRASHES_ALLOWED = 64  # crashed workers a run survives unless --max-worker-restart says otherwise

# markers of tests that are not case families (families bring their own)
MARKERS: dict[str, str] = {
    "nan_contract": "get_num_nans API contract: shapes, dtypes, layouts, empty batches, no side effects",
    "nan_reference": "the CPU references agree with each other (a failure points at the reference)",
    "nan_harness": "self-tests of the harness code (no kernel under test involved)",
    "nan_selftest": "the suite catches planted bugs: tests.planted variants run through --kernel in subprocesses",
    "nan_selftest_slow": "self-tests that take minutes on the CPU interpreter (a small twin runs in tox): tox -e "
                         "selftest-slow and the CPU nightly, not tox",
    "nan_fp32_full": "all 2^32 fp32 patterns; runs only with --nan-fp32-full",
    "nan_batches": "batches of 5,000 and 70,001 narrow rows through the wrapper (CPU: only with --nan-large-batches)",
    "nan_sweep": "exhaustive bit-pattern sweeps (fp16, bf16; fp32 sample; fp32 in full on demand)",
    "nan_bigoffset": "row offsets past 2^31 elements (large virtual allocations)",
    "nan_aggregate": "aggregate_num_nans_per_request against its exact CPU reference, where the module has it",
    "nan_vllm": "vLLM's callers hold the kernel under test (when vLLM is installed)",
    "nan_property": "hypothesis property test over generated cases (--nan-hypothesis-examples per path)",
    "nan_semantics": "accelerator semantics: stream order, an input on another card, graph capture (not on the CPU)",
}


def crash_budget(workers: object) -> int:
    """Workers a run may lose before it stops: xdist's own default (4 per worker) stopped a plain run after its
    5th crashing case, so a kernel whose bug crashes six cases (32-bit offsets: 3 dtypes x 2 paths) never got a
    complete run; each crash costs one worker start-up, so the budget stays bounded."""
    return max(CRASHES_ALLOWED, 4 * workers) if isinstance(workers, int) else CRASHES_ALLOWED


@pytest.hookimpl(wrapper=True)
def pytest_cmdline_main(config: pytest.Config) -> Generator[None, object, object]:
    """The kernel runs only in xdist workers, also for a plain or `-n 0` run (then one worker): whatever it does
    to its process (exit 0, a segfault, a patched torch) can end a worker, never the process that decides.
    A wrapper, so it runs before xdist's own hook turns -n into workers."""
    deciding = not (activation.is_worker(config) or config.option.help or config.option.version
                    or config.option.collectonly)
    if activation.active(config) and deciding and activation.in_process(config):
        if not os.environ.get(activation.IN_PROCESS_CALLER):  # the exit status of such a run is no verdict
            raise pytest.UsageError(f"{activation.IN_PROCESS} is for a caller that isolates this process itself and "
                                    f"sets {activation.IN_PROCESS_CALLER} (python -m mutate's warm workers): a "
                                    "kernel that ends this process would end the run with its own exit status")
        if getattr(config.option, "numprocesses", None) not in (None, 0, "0"):
            raise pytest.UsageError(f"{activation.IN_PROCESS} runs every test in this process: drop -n")
    elif activation.active(config) and deciding:
        if not config.pluginmanager.hasplugin("xdist"):
            raise pytest.UsageError("nan-harness runs the kernel in a pytest-xdist worker so that a kernel cannot end "
                                    "the run that judges it: install pytest-xdist and do not pass -p no:xdist")
        if config.option.numprocesses is None:
            config.option.numprocesses = _node_workers(config.getoption("--device"))
        elif config.option.numprocesses in (0, "0"):
            config.option.numprocesses = 1
        if getattr(config.option, "maxworkerrestart", None) is None:
            config.option.maxworkerrestart = str(crash_budget(config.option.numprocesses))
    return (yield)


def _cpu_build() -> bool:
    """torch built without CUDA or ROCm (read from its version record: nothing is initialized)."""
    return getattr(torch.version, "cuda", None) is None and getattr(torch.version, "hip", None) is None


def _node_workers(device: str) -> int:
    """Workers without -n: on an accelerator, by its cards (counted in a child: this process initializes no device);
    one elsewhere, and where the cards cannot be counted (start-up then says why)."""
    if device not in ("cuda", "npu") or needs.missing(device) is not None:  # nothing to count (configure says why)
        return 1
    if device == "cuda" and _cpu_build():  # a CPU build of torch sees no card: no child to ask
        return 1
    try:
        cards, _ = processes.count_cards(device, Path.cwd())
    except processes.CardCountError:
        return 1
    return backends.default_workers(cards)


def pytest_configure(config: pytest.Config) -> None:
    for name, doc in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {doc}")
    if config.option.help or config.option.version or not activation.active(config):
        return
    stop_if_lacking(config)
    try:
        options.parse_numeric(config)
        patterns = environment_failures.table(config.getoption("--nan-env-patterns"), config.invocation_params.dir)
    except (options.OptionError, environment_failures.PatternError) as exc:
        raise pytest.UsageError(str(exc)) from exc
    config.stash[PATTERNS_KEY] = patterns
    try:
        backend = backends.resolve(config.getoption("--device"))
        config.stash[INTERPRET_KEY] = os.environ.get(backends.INTERPRET_VAR)
        backend.prepare()
        specs = parse_specs(config.getoption("--kernel-setup"))
    except (RuntimeError, SetupError) as exc:
        _stop(config, str(exc), None)
    if backend.interpreted:
        _check_interpreter()
    paths = _kernel_paths(config)
    try:
        families = registry.load(config.getoption("--nan-family"))
    except (ImportError, registry.FamilyError) as exc:
        raise pytest.UsageError(f"--nan-family: {exc}") from exc
    for family in families:
        for name, doc in family.markers().items():
            config.addinivalue_line("markers", f"{name}: {doc}")
    config.stash[BACKEND_KEY] = backend
    config.stash[FAMILIES_KEY] = families
    if processes.adopt_orphans():
        config.stash[SPARE_KEY] = frozenset(processes.children(os.getpid()))
    if activation.is_worker(config):
        _load_in_worker(config, backend, paths, specs)
    elif activation.in_process(config):
        _load_in_worker(config, backend, paths, specs)
        target = config.stash[TARGET_KEY]
        _describe_run(config, backend, families, probe.describe(target, backend, bool(specs)))
    else:
        _probe_in_controller(config, backend, paths, families)


def pytest_unconfigure(config: pytest.Config) -> None:
    """Leave the process as configure found it: processes the kernel started (and its dead workers left) end with
    the run, --kernel-path folders leave sys.path, TRITON_INTERPRET gets its value back."""
    spare = config.stash.get(SPARE_KEY, None)
    if spare is not None:
        processes.kill_descendants(spare)
    for path in config.stash.get(PATHS_KEY, ()):
        if path in sys.path:
            sys.path.remove(path)
    if INTERPRET_KEY in config.stash:
        before = config.stash[INTERPRET_KEY]
        if before is None:
            os.environ.pop(backends.INTERPRET_VAR, None)
        else:
            os.environ[backends.INTERPRET_VAR] = before


def _kernel_paths(config: pytest.Config) -> list[str]:
    """--kernel-path folders, resolved against the invocation folder; each must exist."""
    paths = []
    for folder in config.getoption("--kernel-path"):
        path = Path(config.invocation_params.dir, folder).resolve()
        if not path.is_dir():
            raise pytest.UsageError(f"--kernel-path {folder}: not a folder")
        paths.append(str(path))
    return paths


def _load_in_worker(config: pytest.Config, backend: Backend, paths: list[str], specs: Sequence[SetupSpec]) -> None:
    """A worker: pin its card, run the setups and import the module under test (the controller never does)."""
    guard.watch_signals()
    if not backend.interpreted and activation.is_worker(config):
        backends.pin_worker(backend, config.workerinput.get("workerid"))  # type: ignore[attr-defined]
    sys.path[:0] = paths
    config.stash[PATHS_KEY] = tuple(paths)
    try:
        run_setups(specs)
        config.stash[TARGET_KEY] = load(config.getoption("--kernel"))
    except (SetupError, KernelLoadError) as exc:
        _stop(config, str(exc), backend.name)


def _probe_in_controller(config: pytest.Config, backend: Backend, paths: list[str],
                         families: tuple[Family, ...]) -> None:
    """The controller: learn what the module under test is from a child process, and tell the reports."""
    setups = config.getoption("--kernel-setup")
    try:
        found = probe.run(config.getoption("--kernel"), config.getoption("--device"), paths, setups,
                          config.invocation_params.dir)
    except probe.ProbeError as exc:
        _stop(config, str(exc), backend.name)
    _describe_run(config, backend, families, found)


def _stop(config: pytest.Config, message: str, backend: str | None) -> NoReturn:
    """A start-up failure: an environment failure when the table names its message (the deciding process ends the
    run with ENVIRONMENT_EXIT), else a usage error. An xdist worker leaves the ending to its controller."""
    failure = environment_failures.classify(message, config.stash[PATTERNS_KEY], backend=backend)
    if failure is not None and not activation.is_worker(config):
        environment_failures.end_run(config, failure)
    raise pytest.UsageError(message)


def _describe_run(config: pytest.Config, backend: Backend, families: tuple[Family, ...], found: probe.Probe) -> None:
    """What the reports say of the module under test, from a probe (a child's, or this process's in-process)."""
    setups = config.getoption("--kernel-setup")
    config.stash[PROBE_KEY] = found
    missing = (skips.direct_path(found.kernel_skip_reason),) if found.kernel_skip_reason else ()
    missing += () if found.has_aggregate else (skips.aggregate(found.module_name),)
    environment = {**found.environment, **interpreter_entry(backend)}  # measured here, where no kernel was imported
    if setups:
        environment["Kernel setup"] = ", ".join(setups)
        environment["Resolved to"] = json.dumps(found.resolution, default=str)[:2000]
    config.stash[RUN_INFO_KEY] = RunInfo(found.module_name, backend.name, environment, families, missing)


def _check_interpreter() -> None:
    """Stop with advice when the installed Triton's interpreter cannot run a loop kernel (numpy mismatch)."""
    from harness.preflight import unusable_interpreter  # imports triton: only once backend.prepare() has run

    problem = unusable_interpreter()
    if problem is not None:
        raise pytest.UsageError(problem)


def context(config: pytest.Config) -> Context:
    """What families may vary their cases by, for this run."""
    return suite_context(config.stash[BACKEND_KEY], fp32_full=config.getoption("--nan-fp32-full"),
                         gen_cases=config.getoption("--nan-gen-cases"), gen_seed=config.getoption("--nan-gen-seed"),
                         gen_case_ids=tuple(config.getoption("--nan-gen-case")))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """`family_case` x `path`: every case of every family through every path, marked with its family's markers."""
    if "family_case" not in metafunc.fixturenames or FAMILIES_KEY not in metafunc.config.stash:
        return
    config = metafunc.config
    try:
        cases = registry.expand(config.stash[FAMILIES_KEY], context(config))
    except registry.FamilyError as exc:
        raise pytest.UsageError(f"case families: {exc}") from exc
    params = [
        pytest.param(fc, path, id=f"{fc}-{path}",
                     marks=[getattr(pytest.mark, m) for m in fc.family.markers()])
        for fc in cases
        for path in PATHS
    ]
    metafunc.parametrize(("family_case", "path"), params)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Attach each family case's parameters to its item, so a test that dies early still has a record."""
    for item in items:
        callspec = getattr(item, "callspec", None)
        family_case = callspec.params.get("family_case") if callspec else None
        if family_case is not None:
            params = family_case.family.params(family_case.case)
            item.user_properties.append((PARAMS_PROPERTY, params.to_json()))


OUTPUT_LIMIT = 16_000  # characters of a test's captured output (and of its failure text) kept in its reports


def _truncated(text: str) -> str:
    if len(text) <= OUTPUT_LIMIT:
        return text
    return f"{text[:OUTPUT_LIMIT]}\n... [{len(text) - OUTPUT_LIMIT} more characters cut by nan-harness]"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> object:
    """A kernel that prints megabytes must not make megabyte reports: captured output and failure text are cut."""
    report = yield
    if not activation.active(item.config):
        return report
    report.sections = [(title, _truncated(content)) for title, content in report.sections]
    if report.longrepr is not None and not isinstance(report.longrepr, tuple):
        text = str(report.longrepr)
        if len(text) > 4 * OUTPUT_LIMIT:
            report.longrepr = _truncated(text)
    return report


def pytest_report_header(config: pytest.Config) -> list[str]:
    if PROBE_KEY not in config.stash:
        return []
    found = config.stash[PROBE_KEY]
    return [
        f"nan-harness: device {found.environment.get('Backend', '?')} ({found.environment.get('Device', '?')}), "
        f"{backends.triton_flavour()}, torch {torch_origin()}",
        f"nan-harness: kernel module {found.module_name} ({found.file}), NaN predicate {found.predicate_source}",
        f"nan-harness: families {', '.join(f.name for f in config.stash[FAMILIES_KEY])}",
        "nan-harness: the kernel runs in this process (--nan-in-process: its caller isolates it)"
        if activation.in_process(config)
        else "nan-harness: the kernel runs in xdist workers only (a plain run gets one)",
    ]
