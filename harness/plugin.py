"""The pytest plugin's entry: the harness's options, and its hooks (harness.hooks) where this Python can run them.

Torch-free, so that it loads in any Python: a run that asked for the harness where torch (or triton, torch_npu)
cannot be imported ends ENVIRONMENT with one line naming the package and the Python that looked
(harness.needs), with its reports written, instead of pytest's plugin-load traceback. Installed, it loads in every
pytest; it acts only in a run that asked for the harness (harness.activation).
"""
from __future__ import annotations

import importlib
from collections.abc import Generator

import pytest

from harness import activation, backends, environment_failures, misread, needs, options
from harness.environment_failures import Failure


def _torch_import_error() -> str | None:
    """Why torch does not import here (a broken install as well as a missing one), or None."""
    try:
        importlib.import_module("torch")
    except Exception as exc:  # noqa: BLE001 - any failure to import torch is the machine's, reported as such
        return f"{type(exc).__name__}: {exc}"
    return None


TORCH_ERROR = _torch_import_error()
HOOKS = "harness.hooks"  # the harness's hooks; they import torch
pytest_plugins = [HOOKS] if TORCH_ERROR is None else []


def pytest_addoption(parser: pytest.Parser) -> None:
    # Values are checked in pytest_configure (options.parse_numeric), after the reports say "not finished": a bad
    # value is a usage error that never leaves an earlier run's reports in place.
    group = parser.getgroup("nan-harness", "NaN-count kernel precision harness")
    group.addoption("--device", default="auto", metavar="|".join(backends.CHOICES),
                    help=f"backend: {', '.join(backends.CHOICES)}; auto picks npu, then cuda, then cpu (Triton "
                         "interpreter). Default: auto")
    group.addoption("--kernel", default="kernel", metavar="MODULE",
                    help="dotted module under test; must expose get_num_nans, may expose _num_nans_kernel. "
                         "Default: kernel")
    group.addoption("--kernel-path", action="append", default=[], metavar="DIR",
                    help="folder to import --kernel from (put first on sys.path); repeatable")
    group.addoption("--kernel-setup", action="append", default=[], metavar="MODULE[:CALLABLE]",
                    help="import MODULE (and call CALLABLE) before --kernel is imported, e.g. a plugin's patch "
                         "module; repeatable, run in order, in every process that runs the kernel")
    group.addoption("--nan-family", action="append", default=[], metavar="MODULE",
                    help="extra case-family module (exposing FAMILY) to run besides cases.families; repeatable")
    group.addoption("--require-capturable", action="store_true",
                    help="fail when a get_num_nans call cannot be captured in a device graph (CUDA/NPU); without it "
                         "capturability is reported, and only wrong counts on replay fail")
    group.addoption("--nan-large-batches", action="store_true",
                    help="on the CPU, also run the large-batch cases (5,000 and 70,001 rows: minutes under the "
                         "interpreter); accelerators always run them")
    group.addoption("--nan-fp32-full", action="store_true",
                    help="also sweep all 2^32 fp32 patterns (minutes on the CPU interpreter; seconds on a GPU)")
    for spec in options.NUMERIC:
        group.addoption(spec.flag, default=spec.default, metavar=spec.metavar, help=spec.help)
    group.addoption(activation.IN_PROCESS, action="store_true",
                    help="run the kernel in this process, with no xdist worker and no probe child: only for a "
                         "caller that isolates this process itself and reruns in isolation whatever ends it "
                         "(mutate's warm workers); a kernel that crashes ends this whole run")
    group.addoption("--nan-env-patterns", action="append", default=[], metavar="FILE",
                    help="TOML file of [[pattern]] entries (name, regex, backends, kind, startup_only, example) "
                         "added to the environment failures' table (harness/environment_table.py); repeatable")
    group.addoption("--nan-gen-case", action="append", default=[], metavar="ID",
                    help="also run the generated case with this id (e.g. a failure the property test shrank to: "
                         "select it with -k ID); repeatable")


@pytest.hookimpl(wrapper=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]
                                  ) -> Generator[None, object, object]:
    """Decide, from the whole command line, whether this run asked for the harness, and refuse one whose option
    value pytest took for a test path; a wrapper, so before reports.plugin writes its placeholders."""
    if activation.decide(early_config, parser, args):
        flags = [name for option in parser.getgroup(activation.GROUP).options for name in option.names()]
        misread.refuse(early_config, parser, flags)
    return (yield)


def stop_if_lacking(config: pytest.Config) -> None:
    """End the run ENVIRONMENT (kind package) when this Python lacks what --device needs or torch fails to import;
    the reports (loaded after this plugin, so configured first) write it as any environment ending."""
    device = config.getoption("--device")
    lack = needs.missing(device)
    if lack is None and TORCH_ERROR is None:
        return
    message = lack.line() if lack is not None else f"torch does not import here: {TORCH_ERROR}"
    backend = device if device in backends.BACKENDS else None
    environment_failures.end_run(config, Failure("missing-package", "package", message, "start-up", backend))


def pytest_configure(config: pytest.Config) -> None:
    """Without the hooks (torch missing) this plugin ends the run; with them, their configure asks first."""
    if config.pluginmanager.has_plugin(HOOKS) or config.option.help or config.option.version:
        return
    if activation.active(config):
        stop_if_lacking(config)
