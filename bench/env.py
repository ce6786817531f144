"""The run's environment for bench.json: device, versions, kernel module and git commit."""
from __future__ import annotations

import os
import platform
from importlib import metadata

import torch

from harness.backends import triton_flavour
from harness.environment import git_commit as environment_commit


def device_name(device: str) -> str:
    """What the card calls itself; the CPU run names the interpreter."""
    if device == "cuda":
        return torch.cuda.get_device_name()
    if device == "npu":
        return str(torch.npu.get_device_name())
    return f"CPU {platform.machine()} (Triton interpreter)"


def git_commit(kernel_file: str) -> str:
    """NAN_BENCH_COMMIT when set (a tree copied without its .git), else the kernel file's commit as the precision
    report names it (harness.environment.git_commit: '+ local changes' when the file's folder differs), else
    'unknown'."""
    return os.environ.get("NAN_BENCH_COMMIT") or environment_commit(kernel_file) or "unknown"


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
        "git_commit": git_commit(kernel_file),
    }
    if device == "npu":
        try:
            info["torch_npu"] = metadata.version("torch_npu")
        except metadata.PackageNotFoundError:
            pass
    return info
