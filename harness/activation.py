"""Whether a pytest run asked for the harness: installed, its plugins load in every pytest of the environment.

An installed package registers `harness.plugin`, `reports.plugin` and `reports.html` through the `pytest11` entry
point, so they load wherever pytest runs; they act (one xdist worker for the kernel, the probe, placeholder
reports) only in a run that asked for them: one that names a plugin with `-p` (this project's pyproject.toml
addopts, `nan-harness`) or passes one of the harness's options (`--device`, `--kernel ...`, `--nan-...`). Anything
else, e.g. another project's tests in the same environment, runs as if the package were not installed.

An option value pytest took for a test path is rejoined: pytest picks its rootdir and configuration from the existing
paths on the command line before any plugin loads, so `python -m pytest --nan-json /abs/r.json` from the checkout,
once r.json exists, reads no configuration (rootdir /abs, pytest-dev/pytest#8846): no addopts, no strict xfails, no
HTML. The checkout's dist-info lets `python -m pytest` load the plugins anyway; at their first hook they see the run
read no configuration although a harness option's value is an existing path, and start the same command again with
that value joined by `=`, which is what the user meant.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence

import pytest

PLUGINS: tuple[str, ...] = ("harness.plugin", "reports.plugin", "reports.html")  # module = entry point names
GROUP = "nan-harness"  # the option group every harness option is added to
ACTIVE_KEY = pytest.StashKey[bool]()
RERUN = "NAN_HARNESS_REJOINED"  # set in the restarted process: restart at most once


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


def value_flags(options: Iterable[object]) -> set[str]:
    """The long flags of options that take a value (a flag like --nan-fp32-full may be followed by a test path)."""
    flags: set[str] = set()
    for option in options:
        attrs = option.attrs()  # type: ignore[attr-defined]
        if attrs.get("action", "store") in ("store", "append"):
            flags.update(name for name in option.names() if name.startswith("--"))  # type: ignore[attr-defined]
    return flags


def rejoined(args: Sequence[str], flags: set[str], exists: Callable[[str], bool] = os.path.exists) -> list[str] | None:
    """ARGS with each `FLAG VALUE` whose VALUE is an existing path written `FLAG=VALUE`; None when there is none."""
    out: list[str] = []
    changed = False
    i = 0
    while i < len(args):
        if args[i] in flags and i + 1 < len(args) and exists(args[i + 1]):
            out.append(f"{args[i]}={args[i + 1]}")
            changed = True
            i += 2
        else:
            out.append(args[i])
            i += 1
    return out if changed else None


def restart_if_misread(early_config: pytest.Config, options: Iterable[object]) -> None:
    """Restart `python -m pytest ...` once when it read no configuration because of a harness option's value.

    Only the command line of this very process is restarted (never a `pytest.main()` call inside a program), and
    only before anything ran: pytest has printed nothing yet."""
    if early_config.inipath is not None or os.environ.get(RERUN) or is_worker(early_config):
        return
    args = list(early_config.invocation_params.args)
    orig = list(getattr(sys, "orig_argv", ()))
    if not args or tuple(sys.argv[1:]) != tuple(args) or orig[-len(args):] != args:
        return
    fixed = rejoined(args, value_flags(options))
    if fixed is None:
        return
    os.environ[RERUN] = "1"
    capture = early_config.pluginmanager.getplugin("capturemanager")
    if capture is not None:  # give the terminal's descriptors back: pytest points them at temporary files here
        capture.stop_global_capturing()
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable, *orig[1:len(orig) - len(args)], *fixed])
