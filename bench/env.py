"""The run's environment for bench.json: device, versions, kernel module and git commit."""
from __future__ import annotations

import contextlib
import os
import platform
from importlib import metadata

import torch

from harness.backends import triton_flavour
from harness.environment import git_commit


def environment(device: str, kernel_module: str, kernel_file: str, cores: int) -> dict[str, object]:
    """Everything a reader needs to trust or reproduce the numbers. The card names itself (the CPU run names the
    interpreter); the commit is NAN_BENCH_COMMIT when set (a tree copied without its .git), else the kernel file's
    as the precision report names it ('+ local changes' when the file's folder differs), else 'unknown'."""
    info: dict[str, object] = {
        "device": device,
        "device_name": (str(getattr(torch, device).get_device_name()) if device in ("cuda", "npu")
                        else f"CPU {platform.machine()} (Triton interpreter)"),
        "cores": cores,
        "torch": torch.__version__,
        "triton": triton_flavour(),
        "python": platform.python_version(),
        "kernel_module": kernel_module,
        "kernel_file": kernel_file,
        "git_commit": os.environ.get("NAN_BENCH_COMMIT") or git_commit(kernel_file) or "unknown",
    }
    if device == "npu":
        with contextlib.suppress(metadata.PackageNotFoundError):
            info["torch_npu"] = metadata.version("torch_npu")
    return info
