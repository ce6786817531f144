"""The kernel package under test (--kernel): load it, check its API, and launch it both ways."""
from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import torch

ANCHOR_SIGNATURE: tuple[str, ...] = ("logits_ptr", "logits_stride", "num_nans_ptr", "vocab_size", "BLOCK_SIZE")
ANCHOR_BLOCK_SIZE = 8192
POISON = -0x5A5A5A5B  # 0xA5A5A5A5 as int32: never a count, so an unwritten row stands out
GUARD = 16  # poisoned int32 slots on each side of the direct launch's output


@dataclass(frozen=True)
class KernelUnderTest:
    """What the harness knows about the module under test."""

    module_name: str
    module: ModuleType
    get_num_nans: Callable[[torch.Tensor], torch.Tensor]
    kernel: object | None
    kernel_skip_reason: str | None
    predicate_source: str

    @property
    def file(self) -> str:
        return str(getattr(self.module, "__file__", "?"))


def _kernel_params(kernel: object) -> tuple[str, ...] | None:
    """Parameter names of a Triton JIT (or interpreted) function, or None if it is not one."""
    fn = getattr(kernel, "fn", None)
    if fn is None or not hasattr(kernel, "__getitem__"):
        return None
    return tuple(inspect.signature(fn).parameters)


def load(module_name: str) -> KernelUnderTest:
    """Import the module; it must expose get_num_nans, and may expose the anchor's _num_nans_kernel."""
    module = importlib.import_module(module_name)
    wrapper = getattr(module, "get_num_nans", None)
    if not callable(wrapper):
        raise AttributeError(f"kernel module {module_name!r} does not expose a callable get_num_nans")
    kernel = getattr(module, "_num_nans_kernel", None)
    reason: str | None = None
    if kernel is None:
        reason = f"{module_name} exposes no _num_nans_kernel: direct-launch cases skipped"
    else:
        params = _kernel_params(kernel)
        if params != ANCHOR_SIGNATURE:
            reason = (
                f"{module_name}._num_nans_kernel has parameters {params}, not the anchor's "
                f"{ANCHOR_SIGNATURE}: direct-launch cases skipped"
            )
            kernel = None
    source = str(getattr(module, "NAN_PREDICATE_SOURCE", "unknown"))
    return KernelUnderTest(module_name, module, wrapper, kernel, reason, source)


def run_wrapper(target: KernelUnderTest, logits: torch.Tensor) -> torch.Tensor:
    """The production path: get_num_nans(logits)."""
    return target.get_num_nans(logits)


@dataclass(frozen=True)
class DirectLaunch:
    """Result of a direct launch: the counts, plus the poisoned guard slots around them as found after."""

    counts: torch.Tensor
    guard_before: torch.Tensor
    guard_after: torch.Tensor


def run_direct(target: KernelUnderTest, logits: torch.Tensor) -> DirectLaunch:
    """Launch _num_nans_kernel[(num_reqs,)] into a poisoned buffer with guard slots on both sides."""
    if target.kernel is None:
        raise RuntimeError(target.kernel_skip_reason or "no kernel")
    num_reqs, vocab_size = logits.shape
    buf = torch.full((num_reqs + 2 * GUARD,), POISON, dtype=torch.int32, device=logits.device)
    out = buf[GUARD : GUARD + num_reqs]
    target.kernel[(num_reqs,)](logits, logits.stride(0), out, vocab_size, BLOCK_SIZE=ANCHOR_BLOCK_SIZE)
    return DirectLaunch(out, buf[:GUARD], buf[GUARD + num_reqs :])


PATHS: tuple[str, ...] = ("wrapper", "direct")


@dataclass(frozen=True)
class Launch:
    """Counts from one path plus every side effect seen: stray writes around the output, input changes."""

    counts: object
    side_effects: tuple[str, ...]


_INT_VIEW = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _bits_snapshot(logits: torch.Tensor) -> torch.Tensor:
    """Raw bits of the logical elements (not the padding), on the input's device, to prove it was left alone."""
    return logits.detach().clone().view(_INT_VIEW[logits.element_size()])


def run_path(target: KernelUnderTest, path: str, logits: torch.Tensor) -> Launch:
    """Run the wrapper or the direct launch and collect side effects; the caller skips a missing kernel."""
    before = _bits_snapshot(logits)
    effects: list[str] = []
    if path == "wrapper":
        counts: object = run_wrapper(target, logits)
    elif path == "direct":
        launch = run_direct(target, logits)
        counts = launch.counts
        for name, guard in (("before", launch.guard_before), ("after", launch.guard_after)):
            stray = torch.nonzero(guard.cpu() != POISON).reshape(-1).tolist()
            if stray:
                effects.append(f"kernel wrote {len(stray)} int32 slot(s) {name} its output (guard offsets {stray})")
    else:
        raise ValueError(f"unknown path {path!r}")
    after = _bits_snapshot(logits)
    if not torch.equal(before, after):
        changed = int((before != after).sum())
        effects.append(f"input modified: {changed} element(s) changed bits")
    return Launch(counts, tuple(effects))
