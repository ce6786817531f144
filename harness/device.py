"""Backend choice (--device) and the setup each backend needs before any kernel module is imported."""
from __future__ import annotations

import os

import torch

DEVICE_CHOICES: tuple[str, ...] = ("auto", "cpu", "cuda", "npu")


def npu_available() -> bool:
    """True when torch_npu imports and sees at least one Ascend card."""
    try:
        import torch_npu  # noqa: F401
    except ImportError:
        return False
    return bool(getattr(torch, "npu", None) and torch.npu.is_available())


def resolve(requested: str) -> str:
    """Map `auto` to npu, then cuda, then cpu; refuse an explicit backend this machine lacks."""
    if requested == "auto":
        if npu_available():
            return "npu"
        return "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "npu" and not npu_available():
        raise RuntimeError("--device npu: torch_npu is not importable or sees no Ascend device")
    if requested == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("--device cuda: torch sees no CUDA device")
    if requested not in DEVICE_CHOICES:
        raise RuntimeError(f"--device {requested!r}: choose one of {', '.join(DEVICE_CHOICES)}")
    return requested


def prepare(device: str) -> None:
    """On the CPU, switch Triton to its interpreter; must run before triton.jit decorates any kernel."""
    if device == "cpu":
        os.environ["TRITON_INTERPRET"] = "1"
    elif os.environ.get("TRITON_INTERPRET", "0") not in ("", "0"):
        raise RuntimeError(f"TRITON_INTERPRET is set but --device {device} asks for compiled kernels")


def card_count(device: str) -> int:
    """How many cards of this backend the process can see (honours CUDA/ASCEND_RT_VISIBLE_DEVICES)."""
    if device == "cuda":
        return torch.cuda.device_count()
    if device == "npu":
        return int(torch.npu.device_count())
    return 0


def worker_card(worker_id: str | None, count: int) -> int | None:
    """xdist worker gwN takes card N mod count, so `-n 8` on an 8-card node uses every card once."""
    if not worker_id or not worker_id.startswith("gw") or count < 1:
        return None
    return int(worker_id[2:]) % count


def pin_worker(device: str, worker_id: str | None) -> int | None:
    """Make this xdist worker's default card its own; returns the card, or None when nothing was pinned."""
    card = worker_card(worker_id, card_count(device))
    if card is not None:
        (torch.cuda if device == "cuda" else torch.npu).set_device(card)
    return card


def current_card(device: str) -> int | None:
    """Index of the card kernels run on now, for reports (a failure may belong to one faulty card)."""
    if device == "cuda":
        return torch.cuda.current_device()
    if device == "npu":
        return int(torch.npu.current_device())
    return None


def synchronize(device: str) -> None:
    """Wait for queued kernels so a fault surfaces at the case that caused it."""
    if device == "cuda":
        torch.cuda.synchronize()
    elif device == "npu":
        torch.npu.synchronize()


def describe(device: str) -> str:
    """Human name of the device, for report headers."""
    if device == "cuda":
        return torch.cuda.get_device_name(0)
    if device == "npu":
        return str(torch.npu.get_device_name(0))
    return "CPU (Triton interpreter)"


def triton_flavour() -> str:
    """'triton-ascend X' or 'triton X': which Triton distribution is installed."""
    from importlib import metadata

    for dist in ("triton-ascend", "triton"):
        try:
            return f"{dist} {metadata.version(dist)}"
        except metadata.PackageNotFoundError:
            continue
    return "triton (unknown version)"
