"""One description per backend (cpu, cuda, npu); everything backend-specific is derived from this table.

Adding a backend is one `Backend` entry in BACKENDS. An unknown name is an error, never CPU behaviour.
"""
from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from types import ModuleType

INTERPRET_VAR = "TRITON_INTERPRET"


def interpreting() -> bool:
    """Whether Triton runs kernels through its interpreter in this process (the one place that parses the var)."""
    return os.environ.get(INTERPRET_VAR, "0") not in ("", "0")


MEMORY_MESSAGES = ("out of memory", "can't allocate memory", "cannot allocate memory", "not enough memory")


def is_memory_error(exc: BaseException) -> bool:
    """An input too large to place (host or device memory), as opposed to a device a kernel left faulted: only the
    first may skip a case; the second is an error of the run."""
    text = str(exc).lower()
    return (isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError"
            or any(marker in text for marker in MEMORY_MESSAGES))


def _torch_npu() -> ModuleType | None:
    """torch.npu after importing torch_npu, or None where the plugin is absent."""
    try:
        importlib.import_module("torch_npu")
    except ImportError:
        return None
    return getattr(importlib.import_module("torch"), "npu", None)


def _torch_cuda() -> ModuleType:
    """torch.cuda, imported when a backend is first asked: this table is read by Pythons without torch too (the
    reports of a run that ended for want of it)."""
    return importlib.import_module("torch.cuda")


@dataclass(frozen=True)
class Backend:
    """What the harness needs to know of one backend; `runtime` returns torch's device module (torch.cuda...)."""

    name: str
    torch_type: str  # tensor.device.type of its tensors
    description: str  # what kind of execution this is, for headers
    available: Callable[[], bool]
    runtime: Callable[[], ModuleType | None]
    interpreted: bool = False  # kernels run through Triton's interpreter (TRITON_INTERPRET=1)
    visibility_var: str | None = None  # which cards a process sees
    batch_rows: int = 70_001  # the large-batch case: past CUDA's 65,535 limit of a grid's y/z axis
    fault_markers: tuple[str, ...] = field(default=())  # error texts after which the device context is lost

    def prepare(self) -> None:
        """Switch Triton to the interpreter or refuse a stray one; before any triton.jit runs."""
        if self.interpreted:
            os.environ[INTERPRET_VAR] = "1"
        elif interpreting():
            raise RuntimeError(f"{INTERPRET_VAR} is set but --device {self.name} asks for compiled kernels")

    def card_count(self) -> int:
        module = None if self.interpreted else self.runtime()
        return int(module.device_count()) if module is not None else 0

    def set_card(self, card: int) -> None:
        module = self.runtime()
        if module is None:
            raise RuntimeError(f"backend {self.name} has no cards to choose from")
        module.set_device(card)

    def current_card(self) -> int | None:
        module = None if self.interpreted else self.runtime()
        return int(module.current_device()) if module is not None else None

    def synchronize(self) -> None:
        """Wait for queued kernels so a fault surfaces at the case that caused it."""
        module = None if self.interpreted else self.runtime()
        if module is not None:
            module.synchronize()

    def device_name(self) -> str:
        module = None if self.interpreted else self.runtime()
        return str(module.get_device_name(0)) if module is not None else self.description

    def is_fault(self, text: str) -> bool:
        """True when an error's text names a fault that leaves this backend's device context unusable."""
        lowered = text.lower()
        return any(marker in lowered for marker in self.fault_markers)


def _npu_available() -> bool:
    npu = _torch_npu()
    return bool(npu is not None and npu.is_available())


BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in (
        Backend(
            "npu", "npu", "Ascend NPU (triton-ascend)", _npu_available, _torch_npu,
            visibility_var="ASCEND_RT_VISIBLE_DEVICES",
            fault_markers=("aicore exception", "aivec exception", "ez9999", "acl stream synchronize failed",
                           "npu function error"),
        ),
        Backend(
            "cuda", "cuda", "NVIDIA GPU (Triton)", lambda: _torch_cuda().is_available(), _torch_cuda,
            visibility_var="CUDA_VISIBLE_DEVICES",
            fault_markers=("illegal memory access", "unspecified launch failure", "device-side assert",
                           "misaligned address", "illegal instruction", "cuda error: an illegal"),
        ),
        Backend(
            "cpu", "cpu", "CPU (Triton interpreter)", lambda: True, lambda: None,
            interpreted=True, batch_rows=257,  # the interpreter spends ~2 ms per program
        ),
    )
}
AUTO_ORDER: tuple[str, ...] = ("npu", "cuda", "cpu")
CHOICES: tuple[str, ...] = ("auto", *BACKENDS)


def get(name: str) -> Backend:
    """The backend called `name`; an unknown one is an error."""
    try:
        return BACKENDS[name]
    except KeyError:
        raise RuntimeError(f"--device {name!r}: choose one of {', '.join(CHOICES)}") from None


def resolve(requested: str) -> Backend:
    """`auto` picks the first available in AUTO_ORDER; an explicit backend this machine lacks is refused."""
    if requested == "auto":
        return next(BACKENDS[n] for n in AUTO_ORDER if BACKENDS[n].available())
    backend = get(requested)
    if not backend.available():
        raise RuntimeError(f"--device {requested}: {backend.description} is not available here "
                           f"(torch{'_npu' if requested == 'npu' else ''} sees no device)")
    return backend


def any_fault(text: str) -> bool:
    """Fault markers of every backend: a worker may report a fault of a backend other than its own."""
    return any(b.is_fault(text) for b in BACKENDS.values())


# xdist workers a node run gets without -n: one per card, and at least this many, so that one card's launches
# overlap. tox -e cuda on one H100 (743 tests, Triton's cache warm): 73 s with 1 worker, 51 s with 4, 52 s with 8,
# 70 s with 16 (docs/backends.md)
WORKERS_AT_LEAST = 4


def default_workers(cards: int) -> int:
    """Workers for a run on `cards` cards without -n: every card used, never fewer than WORKERS_AT_LEAST."""
    return max(cards, WORKERS_AT_LEAST) if cards > 0 else 1


def worker_card(worker_id: str | None, count: int) -> int | None:
    """xdist worker gwN takes card N mod count, so `-n 8` on an 8-card node uses every card once."""
    if not worker_id or not worker_id.startswith("gw") or count < 1:
        return None
    return int(worker_id[2:]) % count


def pin_worker(backend: Backend, worker_id: str | None) -> int | None:
    """Make this xdist worker's default card its own; returns the card, or None when nothing was pinned."""
    card = worker_card(worker_id, backend.card_count())
    if card is not None:
        backend.set_card(card)
    return card


def triton_flavour() -> str:
    """'triton-ascend X' or 'triton X': which Triton distribution is installed."""
    for dist in ("triton-ascend", "triton"):
        try:
            return f"{dist} {metadata.version(dist)}"
        except metadata.PackageNotFoundError:
            continue
    return "triton (unknown version)"
