"""The run's environment for bench.json: device, versions, kernel module and git commit."""
from __future__ import annotations

import os
import platform
import subprocess
from importlib import metadata
from pathlib import Path

import torch

from harness.backends import triton_flavour


def device_name(device: str) -> str:
    """What the card calls itself; the CPU run names the interpreter."""
    if device == "cuda":
        return torch.cuda.get_device_name()
    if device == "npu":
        return str(torch.npu.get_device_name())
    return f"CPU {platform.machine()} (Triton interpreter)"


def git_commit(path: Path) -> str:
    """NAN_BENCH_COMMIT when set (a tree copied without its .git, or inside another checkout), else HEAD of the
    checkout holding path ('-dirty' with uncommitted changes to tracked files), else 'unknown'."""
    if os.environ.get("NAN_BENCH_COMMIT"):
        return os.environ["NAN_BENCH_COMMIT"]
    try:
        head = subprocess.run(["git", "-C", str(path), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(path), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("-dirty" if dirty else "")


def environment(device: str, kernel_module: str, kernel_file: str, cores: int) -> dict[str, object]:
    """Everything a reader needs to trust or reproduce the numbers."""
    info: dict[str, object] = {
        "device": device,
        "device_name": device_name(device),
        "cores": cores,
        "torch": torch.__version__,
        "triton": triton_flavour(),
        "python": platform.python_version(),
        "kernel_module": kernel_module,
        "kernel_file": kernel_file,
        "git_commit": git_commit(Path(kernel_file).parent),
    }
    if device == "npu":
        try:
            info["torch_npu"] = metadata.version("torch_npu")
        except metadata.PackageNotFoundError:
            pass
    return info
