"""The kernel package under test (--kernel): load it, check its API, and launch it both ways."""
from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType

import torch

from cases.anchor import ANCHOR_BLOCK_SIZE
from cases.family import PATHS  # noqa: F401 - the paths every case runs through, named torch-free for the reports
from harness import guard
from harness.prepoison import call_prepoisoned
from verdict.record import POISON, Unwritten
from verdict.problem import INPUT_MODIFIED, PADDING_MODIFIED, STRAY_WRITE, Problem

ANCHOR_SIGNATURE: tuple[str, ...] = ("logits_ptr", "logits_stride", "num_nans_ptr", "vocab_size", "BLOCK_SIZE")
GUARD = 2 * ANCHOR_BLOCK_SIZE  # poisoned int32 slots on each side of the direct output: a stray write a block away
SNAPSHOT_LIMIT = 1 << 26  # elements: inputs whose storage span is larger get only their logical elements compared


class KernelLoadError(ValueError):
    """The module named by --kernel cannot be put under test; the message says why."""


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

    @property
    def aggregate(self) -> Callable[..., object] | None:
        """The module's aggregate_num_nans_per_request behind the guard, or None where it has none."""
        fn = getattr(self.module, "aggregate_num_nans_per_request", None)
        return guard.guarded(fn) if callable(fn) else None


def _kernel_params(kernel: object) -> tuple[str, ...] | None:
    """Parameter names of a Triton JIT (or interpreted) function, or None if it is not one."""
    fn = getattr(kernel, "fn", None)
    if fn is None or not hasattr(kernel, "__getitem__"):
        return None
    return tuple(inspect.signature(fn).parameters)


def _predicate_source(module: ModuleType) -> str:
    """Which NaN test the module uses: its own NAN_PREDICATE_SOURCE, else the libdevice its globals hold."""
    declared = getattr(module, "NAN_PREDICATE_SOURCE", None)
    if declared:
        return str(declared)
    libdevice = getattr(module, "libdevice", None)
    if libdevice is not None:
        return f"libdevice from {getattr(libdevice, '__name__', type(libdevice).__name__)}"
    return "not declared (the module has no NAN_PREDICATE_SOURCE or libdevice)"


def import_module(module_name: str) -> ModuleType:
    """Import the module under test; anything its import raises becomes a KernelLoadError naming the cause."""
    if not module_name or module_name.startswith(".") or not all(p.isidentifier() for p in module_name.split(".")):
        raise KernelLoadError(f"--kernel {module_name!r}: not a dotted module name (e.g. my_fix.num_nans)")
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        hint = (" (is it installed, or on PYTHONPATH? with tox, pass its folder with --kernel-path DIR)"
                if exc.name and module_name.startswith(exc.name) else "")
        raise KernelLoadError(f"--kernel {module_name}: {exc}{hint}") from exc
    except BaseException as exc:  # noqa: BLE001 - SyntaxError, SystemExit, RuntimeError...: all usage errors here
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise KernelLoadError(f"--kernel {module_name}: importing it raised {type(exc).__name__}: {exc}") from exc


def load(module_name: str) -> KernelUnderTest:
    """Import the module; it must expose get_num_nans, and may expose the anchor's _num_nans_kernel."""
    module = import_module(module_name)
    wrapper = getattr(module, "get_num_nans", None)
    if not callable(wrapper):
        raise KernelLoadError(f"--kernel {module_name}: the module does not expose a callable get_num_nans")
    kernel = getattr(module, "_num_nans_kernel", None)
    reason: str | None = None
    if kernel is None:
        reason = f"{module_name} exposes no _num_nans_kernel"
    else:
        params = _kernel_params(kernel)
        if params != ANCHOR_SIGNATURE:
            reason = (f"{module_name}._num_nans_kernel has parameters {params}, not the anchor's "
                      f"{ANCHOR_SIGNATURE}")
            kernel = None
    return KernelUnderTest(module_name, module, guard.guarded(wrapper), kernel, reason, _predicate_source(module))


@dataclass(frozen=True)
class PathResult:
    """What one path returned plus every side effect seen (stray writes around the output, input changes), so the
    comparison judges both."""

    counts: object
    side_effects: tuple[Problem, ...]
    unwritten: Unwritten = Unwritten(True)  # whether a row never written reads as POISON (the direct path: always)


_INT_VIEW = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def _span(logits: torch.Tensor) -> torch.Tensor:
    """The input's whole storage when small (before a view's offset, between rows, after its end), else every
    element from the view's first to its last, padding between rows included, when that is small."""
    if logits.numel() == 0 or logits.dim() != 2 or min(logits.stride()) < 0:
        return logits
    whole = logits.untyped_storage().nbytes() // logits.element_size()
    if logits.numel() <= whole <= SNAPSHOT_LIMIT:
        return logits.as_strided((whole,), (1,), 0)
    rows, cols = logits.shape
    length = (rows - 1) * logits.stride(0) + (cols - 1) * logits.stride(1) + 1
    if length > SNAPSHOT_LIMIT or length < logits.numel():
        return logits
    return logits.as_strided((length,), (1,), logits.storage_offset())


def bits_snapshot(logits: torch.Tensor) -> torch.Tensor:
    """Raw bits of the input and the padding it spans, copied, to prove afterwards that it was left alone."""
    return _span(logits).detach().clone().view(_INT_VIEW[logits.element_size()])


def run_direct(target: KernelUnderTest, logits: torch.Tensor) -> tuple[torch.Tensor, list[str]]:
    """_num_nans_kernel[(num_reqs,)] into a poisoned output with poisoned guards on both sides."""
    if target.kernel is None:
        raise RuntimeError(target.kernel_skip_reason or "no kernel")
    num_reqs, vocab_size = logits.shape
    buf = torch.full((num_reqs + 2 * GUARD,), POISON, dtype=torch.int32, device=logits.device)
    out = buf[GUARD : GUARD + num_reqs]
    guard.call(lambda: target.kernel[(num_reqs,)](logits, logits.stride(0), out, vocab_size,  # type: ignore[index]
                                                  BLOCK_SIZE=ANCHOR_BLOCK_SIZE))
    effects = []
    for name, slots in (("before", buf[:GUARD]), ("after", buf[GUARD + num_reqs :])):
        stray = torch.nonzero(slots.cpu() != POISON).reshape(-1).tolist()
        if stray:
            offsets = [GUARD - s for s in stray] if name == "before" else [s + 1 for s in stray]
            effects.append(Problem(STRAY_WRITE, f"kernel wrote {len(stray)} int32 slot(s) {name} its output "
                                   f"(distance in slots: {sorted(offsets)[:10]})"))
    return out, effects


def run_path(target: KernelUnderTest, path: str, logits: torch.Tensor) -> PathResult:
    """Run the wrapper or the direct launch and collect side effects; the caller skips a missing kernel."""
    before = bits_snapshot(logits)
    effects: list[str] = []
    unwritten = Unwritten(True)
    if path == "wrapper":
        counts, unwritten = call_prepoisoned(target.get_num_nans, logits, POISON)
    elif path == "direct":
        counts, effects = run_direct(target, logits)
    else:
        raise ValueError(f"unknown path {path!r}")
    after = bits_snapshot(logits)
    if not torch.equal(before, after):
        changed = int((before != after).sum())
        around = before.numel() != logits.numel()
        where = "input or the storage around it (row padding, before or after the view)" if around else "input"
        effects.append(Problem(PADDING_MODIFIED if around else INPUT_MODIFIED,
                               f"{where} modified: {changed} element(s) changed bits"))
    return PathResult(counts, tuple(effects), unwritten)
