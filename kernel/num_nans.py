"""Per-row NaN count of a 2-D logits tensor: the anchor kernel (direct path), the planned launches, the wrapper."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from kernel import fastlaunch
from kernel.launch import LaunchPlan, interpreting, plan_launch, tuning_for
from kernel.predicate import PAIR_CARRY, is_nan_i32, nan_pair_count

BLOCK_SIZE = 8192
SUPPORTED_DTYPES: tuple[torch.dtype, ...] = (torch.float32, torch.bfloat16, torch.float16)


@triton.jit
def _num_nans_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK_SIZE: tl.constexpr):
    """One program per row; int64 row offset so batches past 2^31 elements stay in bounds."""
    req_idx = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + req_idx * logits_stride
    num_nans = tl.zeros((), dtype=tl.int32)
    for i in range(0, vocab_size, BLOCK_SIZE):
        block = i + tl.arange(0, BLOCK_SIZE)
        mask = block < vocab_size
        x = tl.load(row_ptr + block, mask=mask, other=0)
        is_nan = is_nan_i32(x)
        num_nans += tl.sum(is_nan, axis=0).to(tl.int32)
    tl.store(num_nans_ptr + req_idx, num_nans)


@triton.jit
def _count_pairs_kernel(words_ptr, words_stride, num_nans_ptr, num_words, BLOCK: tl.constexpr, CARRY: tl.constexpr):
    """One program per 16-bit row of the wrapper's int32 view: two elements per word, half the work per element."""
    row_ptr = words_ptr + tl.program_id(0).to(tl.int64) * words_stride
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, num_words, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += nan_pair_count(tl.load(row_ptr + offs, mask=offs < num_words, other=0), CARRY)
    tl.store(num_nans_ptr + tl.program_id(0), tl.sum(acc, axis=0))


@triton.jit
def _count_items_kernel(logits_ptr, logits_stride, counts_ptr, vocab_size, num_items, num_chunks, chunk,
                        BLOCK: tl.constexpr):
    """Count NaNs of items (row, chunk) pid, pid+grid, ...: each adds its count into its row of a zeroed output
    (int32 atomics: exact in any order; the default memory order, the one triton-ascend supports)."""
    for item in range(tl.program_id(0), num_items, tl.num_programs(0)):
        row = (item // num_chunks).to(tl.int64)
        start = (item % num_chunks) * chunk
        end = tl.minimum(start + chunk, vocab_size)
        row_ptr = logits_ptr + row * logits_stride
        acc = tl.zeros((BLOCK,), dtype=tl.int32)  # per-lane flags, reduced once: no reduction per step
        for col in range(start, end, BLOCK):
            offs = col + tl.arange(0, BLOCK)
            acc += is_nan_i32(tl.load(row_ptr + offs, mask=offs < end, other=0))
        tl.atomic_add(counts_ptr + row, tl.sum(acc, axis=0).to(tl.int32))


def _check_input(logits: torch.Tensor) -> None:
    """Refuse what the kernel cannot count correctly, with a message that names the problem."""
    if not isinstance(logits, torch.Tensor):
        raise TypeError(f"get_num_nans expects a torch.Tensor, got {type(logits).__name__}")
    if logits.dim() != 2:
        raise ValueError(f"get_num_nans expects 2-D logits [num_reqs, vocab_size], got shape {tuple(logits.shape)}")
    if logits.dtype not in SUPPORTED_DTYPES:
        names = ", ".join(str(d).removeprefix("torch.") for d in SUPPORTED_DTYPES)
        raise TypeError(f"get_num_nans supports {names}; got {str(logits.dtype).removeprefix('torch.')}")
    if logits.shape[1] > 1 and logits.stride(1) != 1:
        raise ValueError("get_num_nans needs unit stride along the vocab dimension (padded rows are fine); "
                         f"got strides {tuple(logits.stride())}: call .contiguous() first")
    if logits.device.type == "cpu" and not interpreting():
        raise ValueError("get_num_nans got a CPU tensor but Triton is not in interpreter mode "
                         "(set TRITON_INTERPRET=1 before importing triton, or move logits to the accelerator)")


def plan_for(logits: torch.Tensor, captured: bool = False) -> LaunchPlan:
    """The launch get_num_nans makes for this non-empty input, called eagerly or (`captured`) in a graph capture."""
    num_reqs, vocab_size = logits.shape
    words = logits.data_ptr() % 4 == 0 and logits.stride(0) % 2 == 0 and vocab_size % 2 == 0  # rows of whole words
    return plan_launch(num_reqs, vocab_size, logits.element_size(), tuning_for(logits.device), captured, words)


class _Kind:
    """What one input kind (dtype, shape, strides, card, alignment, capturing) launches: its plan's kernel into a fresh
    int32 output (zeroed where items add into it; no plan: an empty input, no launch), and its verified relaunch."""

    def __init__(self, plan: LaunchPlan | None, dtype: torch.dtype) -> None:
        self.plan, self.compiled, self.tried = plan, None, False  # tried: the relaunch was tried (kept or refused)
        if plan is None:
            return
        self.zeroed = plan.variant not in ("rows", "pairs")  # one program per row stores each count
        self.kernel, self.tail = {  # the plan's kernel and its arguments after (logits, row stride, output)
            "rows": (_num_nans_kernel, (plan.vocab_size, plan.block)),
            "pairs": (_count_pairs_kernel, (plan.vocab_size // 2, plan.block, PAIR_CARRY.get(dtype)))}.get(plan.variant,
            (_count_items_kernel, (plan.vocab_size, plan.num_items, plan.num_chunks, plan.chunk, plan.block)))

    def run(self, logits: torch.Tensor, relaunch: bool = False) -> torch.Tensor:
        """Count one call's input; `relaunch`: the fast path may be used (and is verified on its first call)."""
        plan = self.plan
        if plan is None:
            return torch.zeros(logits.shape[0], dtype=torch.int32, device=logits.device)
        out = (torch.zeros if self.zeroed else torch.empty)(plan.num_reqs, dtype=torch.int32, device=logits.device)
        source = logits.view(torch.int32) if plan.variant == "pairs" else logits  # pairs: the rows' int32 words
        args = (source, source.stride(0), out, *self.tail)
        relaunch = relaunch and out.data_ptr() & 15 == 0  # kernels are compiled for a 16-byte aligned output
        if relaunch and self.compiled is not None:
            fastlaunch.relaunch(self.compiled, plan.grid, args)
            return out
        compiled = self.kernel[(plan.grid,)](*args, num_warps=plan.num_warps)
        if relaunch and not self.tried:
            self.tried = True
            self.compiled = fastlaunch.verified(compiled, plan.grid, args, out)
        return out


def run_plan(logits: torch.Tensor, plan: LaunchPlan) -> torch.Tensor:
    """Launch one plan on a checked, non-empty input through Triton's own launch; a fresh int32 [rows] tensor."""
    return _Kind(plan, logits.dtype).run(logits)


_KINDS: dict[tuple[object, ...], _Kind] = {}  # the one cache (MAX_KINDS): a decode loop passes the same few kinds
MAX_KINDS = 4096


def _kind(logits: torch.Tensor, captured: bool) -> _Kind:
    """The input's kind, checked and planned on first sight; only accelerator kinds are remembered (the CPU's
    interpreter flag can change between calls)."""
    key = ((logits.dtype, logits.shape, logits.stride(), logits.device, logits.data_ptr() & 15, captured)
           if type(logits) is torch.Tensor and logits.device.type != "cpu" else None)
    if (found := _KINDS.get(key)) is not None:  # one lookup per call: this is every eager call's path
        return found
    _check_input(logits)  # raises on what it refuses: nothing is remembered for a refused input
    num_reqs, vocab_size = logits.shape
    kind = _Kind(plan_for(logits, captured=captured) if num_reqs and vocab_size else None, logits.dtype)
    if key is not None:
        if len(_KINDS) >= MAX_KINDS:
            _KINDS.clear()
        _KINDS[key] = kind
    return kind


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    """Count NaNs per row; int32 [num_reqs] on logits' device. Rows may be padded (stride(0) >= vocab). Planned per
    input kind (kernel.launch); a CUDA kind's later eager calls relaunch its compiled kernel (kernel.fastlaunch)."""
    if not isinstance(logits, torch.Tensor):
        _check_input(logits)  # raises: says what was passed
    device = logits.device
    captured = device.type == "cuda" and torch.cuda.is_current_stream_capturing()  # replays pay device time only
    kind = _kind(logits, captured)
    relaunch = device.type == "cuda" and not captured and fastlaunch.enabled()
    runtime = getattr(torch, device.type) if device.type in ("cuda", "npu") else None
    if runtime is not None and device.index != runtime.current_device():  # Triton launches on the current card
        with runtime.device(device.index):
            return kind.run(logits, relaunch)
    return kind.run(logits, relaunch)
