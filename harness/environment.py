"""The run's environment as plain strings: versions, backend, device, NaN predicate, kernel file and commit."""
from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

import torch

from cases.anchor import ANCHOR_SEED
from harness.backends import Backend, triton_flavour
from harness.target import KernelUnderTest
from verdict.interpreter import ENV_KEY


def _dist_version(*names: str) -> str | None:
    for name in names:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return None


def cann_version() -> str | None:
    """CANN toolkit version from the toolkit's own files, where ASCEND_* points at one."""
    for var in ("ASCEND_TOOLKIT_HOME", "ASCEND_HOME_PATH"):
        home = os.environ.get(var)
        if not home:
            continue
        for name in ("version.cfg", "ascend_toolkit_install.info", "compiler/version.info"):
            try:
                text = Path(home, name).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
            for line in text.splitlines():
                key, _, value = line.partition("=")
                if key.strip().lower() in ("version", "toolkit_installed_version") and value.strip():
                    return value.strip().strip('"').split(":")[-1]
        return f"unknown ({home})"
    return None


def _git(folder: Path, *args: str) -> str | None:
    """git's output in FOLDER, or None when git is missing or fails there."""
    try:
        done = subprocess.run(["git", "-C", str(folder), *args], capture_output=True, text=True, timeout=10,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def git_commit(file: str) -> str | None:
    """Commit of the git checkout holding file, with '+ local changes' when the file differs from it."""
    folder = Path(file).resolve().parent
    if not folder.is_dir():
        return None
    commit = _git(folder, "rev-parse", "HEAD")
    if not commit or _git(folder, "ls-files", "--error-unmatch", str(Path(file).resolve())) is None:
        return None  # not a checkout, or a file the checkout does not track (a kernel in a venv inside it)
    changed = _git(folder, "status", "--porcelain", "--", str(Path(file).resolve().parent))
    return f"{commit} + local changes" if changed else commit


def _installed_as(file: str, module: str) -> str | None:
    """'name version' of the installed distribution that ships FILE (the module's top-level package), if one does."""
    try:
        names = metadata.packages_distributions().get(module.split(".")[0], [])
        for name in names:
            dist = metadata.distribution(name)
            if any(Path(str(dist.locate_file(f))).resolve() == Path(file).resolve() for f in dist.files or ()):
                return f"{name} {dist.version}"
    except (metadata.PackageNotFoundError, OSError, ValueError):
        return None
    return None


def kernel_origin(file: str, module: str) -> dict[str, str]:
    """The kernel's commit; else why no commit is known and what is ("Kernel origin": its installed distribution)."""
    commit = git_commit(file)
    if commit:
        return {"Kernel commit": commit}
    folder = Path(file).resolve().parent
    checkout = folder.is_dir() and _git(folder, "rev-parse", "HEAD") is not None
    why = "not tracked by the git checkout it sits in" if checkout else "not in a git checkout"
    installed = _installed_as(file, module)
    return {"Kernel origin": f"no commit: the kernel file is {why}" + (f"; installed {installed}" if installed
                                                                          else "")}


def torch_origin() -> str:
    """torch's version and the folder it was imported from: in a node's tox env, the node's own site-packages."""
    return f"{torch.__version__} from {Path(str(torch.__file__)).resolve().parents[1]}"


def collect(target: KernelUnderTest, backend: Backend) -> dict[str, str]:
    """Everything a reviewer needs to reproduce the run; absent components are left out."""
    env = {
        "Kernel module": target.module_name,
        "Kernel file": target.file,
        **kernel_origin(target.file, target.module_name),
        "NaN predicate": target.predicate_source,
        "Backend": backend.name,
        "Device": backend.device_name(),
        "Triton": triton_flavour(),
        "Torch": torch_origin(),
        "torch_npu": _dist_version("torch-npu", "torch_npu"),
        "CANN": cann_version(),
        "Seed": str(ANCHOR_SEED),
        "Python": platform.python_version(),
        "Platform": platform.platform(),
    }
    return {key: value for key, value in env.items() if value is not None}


def interpreter_entry(backend: Backend) -> dict[str, str]:
    """The interpreter's measured defects where kernels run through it (measured by the caller's process, which
    must be one that never imported the kernel under test: a kernel could patch what the preflight compares)."""
    if not backend.interpreted:
        return {}
    from harness.preflight import describe_defects  # imports Triton: only once the backend is prepared

    return {ENV_KEY: describe_defects()}
