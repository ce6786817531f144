"""Whether a pytest run asked for the harness: installed, its plugins load in every pytest of the environment.

An installed package registers `harness.plugin`, `reports.plugin` and `reports.html` through the `pytest11` entry
point, so they load wherever pytest runs; they act (one xdist worker for the kernel, the probe, placeholder
reports) only in a run that asked for them: one that names a plugin with `-p` (this project's pyproject.toml
addopts, `nan-harness`) or passes one of the harness's options (`--device`, `--kernel ...`, `--nan-...`). Anything
else, e.g. another project's tests in the same environment, runs as if the package were not installed.

A harness option whose value pytest took for a test path ends the run with a usage error (harness.misread).
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

import pytest

PLUGINS: tuple[str, ...] = ("harness.plugin", "reports.plugin", "reports.html")  # module = entry point names
GROUP = "nan-harness"  # the option group every harness option is added to
ACTIVE_KEY = pytest.StashKey[bool]()


def is_worker(config: pytest.Config) -> bool:
    """An xdist worker (it runs the kernel); False in a serial run and in xdist's controller (it decides)."""
    return hasattr(config, "workerinput")


IN_PROCESS = "--nan-in-process"  # tests run the kernel in this process: the caller isolates it (mutate.warm)
IN_PROCESS_CALLER = "NAN_HARNESS_ISOLATING_CALLER"  # set by such a caller in its own process: the option's key


def in_process(config: pytest.Config) -> bool:
    """A serial run whose caller isolates the process (mutate's warm workers): it loads and runs the kernel itself."""
    return bool(config.getoption(IN_PROCESS, False))


def requested(plugins: Iterable[str], args: Sequence[str], flags: Iterable[str]) -> bool:
    """True when `-p` names one of the harness's plugins or an argument is one of its options."""
    if any(name.strip() in PLUGINS for name in plugins):
        return True
    names = set(flags)
    return any(arg.split("=", 1)[0] in names for arg in args if arg.startswith("--"))


def decide(early_config: pytest.Config, parser: pytest.Parser, args: Sequence[str]) -> bool:
    """Decide once per run, from the full argument list (addopts included), before anything acts."""
    if ACTIVE_KEY not in early_config.stash:
        flags = [name for option in parser.getgroup(GROUP).options for name in option.names()]
        plugins = [*(early_config.known_args_namespace.plugins or ()),
                   *os.environ.get("PYTEST_PLUGINS", "").split(",")]
        early_config.stash[ACTIVE_KEY] = requested(plugins, args, flags)
    return early_config.stash[ACTIVE_KEY]


def active(config: pytest.Config) -> bool:
    """Whether this run asked for the harness; a plugin registered after start-up (a conftest's pytest_plugins)
    was asked for by that conftest."""
    return config.stash.get(ACTIVE_KEY, True)
