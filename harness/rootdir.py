"""An option value pytest took for a test path: rerun once as `--opt=value`, which is what the user meant.

pytest picks its rootdir and configuration from the existing paths on the command line before any plugin loads, so
`python -m pytest --nan-json /abs/r.json` from the checkout, once r.json exists, reads no configuration (rootdir
/abs, pytest-dev/pytest#8846): no addopts, no strict xfails, no HTML. The checkout's dist-info lets `python -m
pytest` load the plugins anyway; at their first hook they see the run read no configuration although a harness
option's value is an existing path, and start the same command again with that value joined by `=`.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence

import pytest

RERUN = "NAN_HARNESS_REJOINED"  # set in the restarted process: restart at most once


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
    if early_config.inipath is not None or os.environ.get(RERUN) or hasattr(early_config, "workerinput"):
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
