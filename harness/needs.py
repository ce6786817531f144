"""What each device needs installed in the Python that runs the harness, checked before anything imports it.

A node whose torch lives where this Python cannot see it (another venv, a tox env over the wrong base) must end
ENVIRONMENT with one line that names the missing package and the Python that looked, never an import traceback:
the pytest plugin, `nan-harness`, `python -m bench`, `nightly` and `mutate` all ask here first. Standard library
only, so the question can be asked by a Python that has none of them.
"""
from __future__ import annotations

import importlib.util
import platform
import sys
from dataclasses import dataclass
from pathlib import Path

ENVIRONMENT_EXIT = 6  # pytest's own statuses are 0-5; harness.environment_failures ends a run with it too

# (module to import, what to install) per device; "auto" needs what every device needs
NEEDS: dict[str, tuple[tuple[str, str], ...]] = {
    "cpu": (("torch", "torch"), ("triton", "triton or triton-ascend")),
    "cuda": (("torch", "torch"), ("triton", "triton")),
    "npu": (("torch", "torch"), ("torch_npu", "torch_npu"), ("triton", "triton-ascend")),
}
NEEDS["auto"] = NEEDS["cpu"]
FAMILIES = (("torch", "torch"),)  # what reading the case families needs (a merge of shard folders), no device
HINT = "docs/backends.md#where-torch-comes-from"


@dataclass(frozen=True)
class Missing:
    """A package a device needs that this Python cannot import, and where it looked."""

    needed_by: str  # "--device cuda", or what else needs it
    module: str
    install: str

    def line(self) -> str:
        """One line: what is missing, for what, which Python looked and in which site folders."""
        return (f"{self.needed_by} needs {self.install}, and {self.module} is not importable by "
                f"{sys.executable} (Python {platform.python_version()}; site folders: {', '.join(site_folders())})"
                f": run with the Python that holds the node's packages ({HINT})")


def site_folders() -> list[str]:
    """The package folders this Python searches, in its order (what a reader needs to see where it looked)."""
    return [p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")] or ["none"]


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken parent package, or a module whose __spec__ is None
        return False


def missing(device: str | None) -> Missing | None:
    """The first package `device` needs (unknown: torch and triton; None: the case families') not importable here."""
    packages = FAMILIES if device is None else NEEDS.get(device, NEEDS["auto"])
    for module, install in packages:
        if not _importable(module):
            return Missing("reading the case families" if device is None else f"--device {device}", module, install)
    return None


def require(tool: str, device: str | None) -> None:
    """Exit ENVIRONMENT with one line when this Python lacks what `device` (None: the case families) needs; `tool`
    names the command."""
    lack = missing(device)
    if lack is not None:
        print(f"{tool}: ENVIRONMENT (missing-package): {lack.line()}", file=sys.stderr)
        raise SystemExit(ENVIRONMENT_EXIT)
