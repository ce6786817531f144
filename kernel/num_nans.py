"""Per-row NaN count of a 2-D logits tensor: the anchor kernel (direct path), the planned launches, the wrapper."""
from __future__ import annotations

import itertools
from typing import Any, NamedTuple

import torch
import triton
import triton.language as tl

from kernel.fastlaunch import FastLauncher, arg_key, hooks_installed
from kernel import launch
from kernel.launch import LaunchPlan, plan_launch, tuning_for
from kernel.predicate import half_nan_add, is_nan_half_bits, is_nan_i32, nan_pair_flags
from kernel.zeroed import zeroed_int32

try:  # griddepcontrol (programmatic dependent launch): NVIDIA only, used under a constexpr switch
    from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait
except ImportError:  # triton-ascend
    gdc_launch_dependents = gdc_wait = None

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
def _count_rows_paired_kernel(logits_ptr, logits_stride, num_nans_ptr, vocab_size, BLOCK: tl.constexpr,
                              HALF_ADD: tl.constexpr):
    """One program per row of a 16-bit dtype (rows 4-byte aligned), read as int32 words of two elements: half the
    loads and a third of the predicate work per element of `_num_nans_kernel`. Each lane counts both halves in one
    int32 (bits 0-15 and 16-31), exact for rows of at most 65,535 steps (plan_launch pairs no longer row)."""
    row = tl.program_id(0).to(tl.int64)
    row_ptr = logits_ptr + row * logits_stride
    words_ptr = row_ptr.to(tl.pointer_type(tl.int32))
    pairs = vocab_size // 2
    acc = tl.zeros((BLOCK,), dtype=tl.int32)
    for i in range(0, pairs, BLOCK):
        offs = i + tl.arange(0, BLOCK)
        acc += nan_pair_flags(tl.load(words_ptr + offs, mask=offs < pairs, other=0), HALF_ADD)
    num_nans = tl.sum((acc & 0xFFFF) + ((acc >> 16) & 0xFFFF), axis=0)
    last = tl.load(row_ptr + (vocab_size - 1), mask=vocab_size % 2 == 1, other=0)  # an odd row's last element
    num_nans += is_nan_half_bits(last, HALF_ADD)
    tl.store(num_nans_ptr + row, num_nans)


@triton.jit
def _count_items_kernel(
    logits_ptr, logits_stride, counts_ptr, vocab_size, num_items, num_chunks, chunk, BLOCK: tl.constexpr,
    PDL: tl.constexpr = False, ATOMIC: tl.constexpr = False,
):
    """Count NaNs of items (row, chunk) pid, pid+grid, ...; one int32 store per item into counts_ptr[item], or
    with ATOMIC one int32 atomic add into counts_ptr[row] (a zeroed output: the split in one launch)."""
    if PDL:
        gdc_launch_dependents()  # stage 2 may be scheduled now; it waits for this grid's stores (gdc_wait)
    pid = tl.program_id(0)
    grid = tl.num_programs(0)
    for item in range(pid, num_items, grid):
        row = (item // num_chunks).to(tl.int64)
        start = (item % num_chunks) * chunk
        end = tl.minimum(start + chunk, vocab_size)
        row_ptr = logits_ptr + row * logits_stride
        acc = tl.zeros((BLOCK,), dtype=tl.int32)  # per-lane flags, reduced once: no reduction per step
        for col in range(start, end, BLOCK):
            offs = col + tl.arange(0, BLOCK)
            x = tl.load(row_ptr + offs, mask=offs < end, other=0)
            acc += is_nan_i32(x)
        if ATOMIC:
            tl.atomic_add(counts_ptr + row, tl.sum(acc, axis=0).to(tl.int32), sem="relaxed")
        else:
            tl.store(counts_ptr + item, tl.sum(acc, axis=0).to(tl.int32))


@triton.jit
def _sum_partials_kernel(
    partials_ptr, out_ptr, num_reqs, num_chunks, ROWS: tl.constexpr, CHUNKS: tl.constexpr, PDL: tl.constexpr = False
):
    """Stage 2 of the split: each row's partial counts summed in one fixed order (exact, deterministic)."""
    if PDL:
        gdc_wait()  # stage 1 complete and its stores visible
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, CHUNKS)
    mask = (rows[:, None] < num_reqs) & (cols[None, :] < num_chunks)
    partials = tl.load(partials_ptr + rows[:, None].to(tl.int64) * num_chunks + cols[None, :], mask=mask, other=0)
    tl.store(out_ptr + rows, tl.sum(partials, axis=1).to(tl.int32), mask=rows < num_reqs)


def _check_input(logits: torch.Tensor) -> None:
    """Refuse what the kernel cannot count correctly, with a message that names the problem."""
    if not isinstance(logits, torch.Tensor):
        raise TypeError(f"get_num_nans expects a torch.Tensor, got {type(logits).__name__}")
    if logits.dim() != 2:
        raise ValueError(
            f"get_num_nans expects 2-D logits [num_reqs, vocab_size], got shape {tuple(logits.shape)}"
        )
    if logits.dtype not in SUPPORTED_DTYPES:
        names = ", ".join(str(d).removeprefix("torch.") for d in SUPPORTED_DTYPES)
        raise TypeError(f"get_num_nans supports {names}; got {str(logits.dtype).removeprefix('torch.')}")
    num_reqs, vocab_size = logits.shape
    if vocab_size > 1 and logits.stride(1) != 1:
        raise ValueError(
            "get_num_nans needs unit stride along the vocab dimension (padded rows are fine); "
            f"got strides {tuple(logits.stride())}: call .contiguous() first"
        )
    if logits.device.type == "cpu" and not launch.interpreting():
        raise ValueError(
            "get_num_nans got a CPU tensor but Triton is not in interpreter mode "
            "(set TRITON_INTERPRET=1 before importing triton, or move logits to the accelerator)"
        )


def plan_for(logits: torch.Tensor, cores: int | None = None, captured: bool | None = None) -> LaunchPlan:
    """The launch get_num_nans makes for this (non-empty) input; `cores` overrides the device's core count,
    `captured` whether the call is being recorded into a CUDA graph (default: ask the current stream)."""
    num_reqs, vocab_size = logits.shape
    if captured is None:
        captured = _capturing(logits.device)
    return plan_launch(num_reqs, vocab_size, logits.element_size(), tuning_for(logits.device, cores), captured)


def _capturing(device: torch.device) -> bool:
    """The current CUDA stream is recording a graph (whose replays pay device time only)."""
    return device.type == "cuda" and torch.cuda.is_current_stream_capturing()


_CHECKED: dict[tuple[object, ...], tuple[LaunchPlan | None, int]] = {}  # a decode loop passes the same few inputs
_TOKENS = itertools.count(1)  # one per remembered input kind: what keys its launches (0: not remembered)


def _checked_plan(logits: torch.Tensor) -> tuple[LaunchPlan | None, int]:
    """_check_input, then (the plan, None for an empty input; its token). On an accelerator both are remembered
    per (dtype, shape, strides, device, captured or not), everything they read, so a decode step pays one dict
    lookup; a plan only decides speed, never the counts. The token stands for that key in launch keys (it fixes
    every launch argument but the pointers). On the CPU the interpreter flag is read on every call (token 0)."""
    if not isinstance(logits, torch.Tensor) or logits.device.type == "cpu":
        _check_input(logits)
        num_reqs, vocab_size = logits.shape
        return (plan_for(logits, captured=False) if num_reqs and vocab_size else None), 0
    device = logits.device
    key = (logits.dtype, logits.shape, logits.stride(), device, _capturing(device))
    found = _CHECKED.get(key)
    if found is not None:
        return found
    _check_input(logits)  # raises on what it refuses: nothing is remembered for a refused input
    num_reqs, vocab_size = logits.shape
    plan = plan_for(logits, captured=bool(key[-1])) if num_reqs and vocab_size else None
    if len(_CHECKED) > 4096:
        _CHECKED.clear()
    _CHECKED[key] = found = (plan, next(_TOKENS))
    return found


_launch_rows = FastLauncher(_num_nans_kernel)
_launch_pairs = FastLauncher(_count_rows_paired_kernel)
_launch_items = FastLauncher(_count_items_kernel)
_launch_sums = FastLauncher(_sum_partials_kernel)


class OneLaunch(NamedTuple):
    """A plan run as one launch of (logits, stride, out, *ints) into a fresh int32 output (zeroed first if `zeroed`)."""

    launcher: FastLauncher
    grid: int
    ints: tuple[int, ...]
    kwargs: dict[str, object]
    zeroed: bool


def _words_aligned(logits: torch.Tensor) -> bool:
    """Every row starts on a 4-byte boundary, so a 16-bit row can be read as int32 words."""
    return logits.data_ptr() % 4 == 0 and (logits.shape[0] == 1 or logits.stride(0) % 2 == 0)


def one_launch(logits: torch.Tensor, plan: LaunchPlan) -> OneLaunch | None:
    """The single launch that runs `plan` on `logits`, or None for the two-stage split (NPU, interpreter)."""
    if plan.num_chunks == 1:
        if plan.paired_warps and _words_aligned(logits):  # one program per row, two 16-bit elements per load
            return OneLaunch(_launch_pairs, plan.grid, (plan.vocab_size,), {
                "BLOCK": plan.block // 2, "HALF_ADD": half_nan_add(logits.dtype), "num_warps": plan.paired_warps},
                False)
        if plan.grid == plan.num_reqs:  # one program per row: the anchor's kernel at the plan's block and warps
            return OneLaunch(_launch_rows, plan.grid, (plan.vocab_size,),
                             {"BLOCK_SIZE": plan.block, "num_warps": plan.num_warps}, False)
        return OneLaunch(_launch_items, plan.grid, (plan.vocab_size, plan.num_items, 1, plan.chunk),
                         {"BLOCK": plan.block, "num_warps": plan.num_warps}, False)
    if plan.atomics:  # every item adds its count into its row of a zeroed output
        return OneLaunch(_launch_items, plan.grid, (plan.vocab_size, plan.num_items, plan.num_chunks, plan.chunk),
                         {"BLOCK": plan.block, "ATOMIC": True, "num_warps": plan.num_warps}, True)
    return None


def _launch(launcher: FastLauncher, plan: LaunchPlan, token: int, grid: int, args: tuple[object, ...],
            **kwargs: object) -> tuple[object, ...] | None:
    """One launch of a plan; on CUDA keyed by what fixes Triton's specialization here, and the key returned. With
    a token (a remembered input kind: it fixes the plan, dtype, strides and so every integer argument, constexpr
    and option) the key is the token and the 16-byte alignment of each pointer, and the pointers go to the launcher
    as integers (Triton's launcher then skips asking the driver about each); without one, the plan and Triton's
    key of the first three arguments."""
    device = args[0].device  # type: ignore[attr-defined]
    if device.type != "cuda":
        launcher(grid, *args, **kwargs)
        return None
    if not token:
        key: tuple[object, ...] = (device.index, plan, arg_key(args[0]), arg_key(args[1]), arg_key(args[2]))
        launcher.launch_keyed(key, device.index, grid, args, kwargs)
        return key
    raw = tuple(a.data_ptr() if isinstance(a, torch.Tensor) else a for a in args)
    key = (token, *(p & 15 == 0 for p, a in zip(raw, args) if isinstance(a, torch.Tensor)))
    launcher.launch_keyed(key, device.index, grid, args, kwargs, raw)
    return key


def _fresh_output(num_reqs: int, device: torch.device, zeroed: bool) -> torch.Tensor:
    return zeroed_int32(num_reqs, device) if zeroed else torch.empty(num_reqs, dtype=torch.int32, device=device)


def run_plan(logits: torch.Tensor, plan: LaunchPlan, token: int = 0) -> torch.Tensor:
    """Launch one plan on a checked, non-empty input (`token`: _checked_plan's for it, if any); returns a fresh
    int32 [num_reqs] tensor. On CUDA a tokened one-launch call is remembered for get_num_nans's replay path."""
    stride, device = logits.stride(0), logits.device
    one = one_launch(logits, plan)
    if one is not None:
        out = _fresh_output(plan.num_reqs, device, one.zeroed)
        key = _launch(one.launcher, plan, token, one.grid, (logits, stride, out, *one.ints), **one.kwargs)
        if token and key is not None:
            _remember(logits, plan, one, key)
        return out
    # the two-stage split, one allocation: the output is the front of a buffer whose tail holds the partial counts
    buf = torch.empty(plan.num_reqs + plan.num_items, dtype=torch.int32, device=device)
    out, partials = buf[: plan.num_reqs], buf[plan.num_reqs :]
    _launch(_launch_items, plan, token, plan.grid,
            (logits, stride, partials, plan.vocab_size, plan.num_items, plan.num_chunks, plan.chunk),
            BLOCK=plan.block, num_warps=plan.num_warps, **({"PDL": True} if plan.pdl else {}))
    chunks = triton.next_power_of_2(plan.num_chunks)
    rows = max(1, min(triton.next_power_of_2(plan.num_reqs), 4096 // chunks))
    _launch(_launch_sums, plan, token, triton.cdiv(plan.num_reqs, rows),
            (partials, out, plan.num_reqs, plan.num_chunks),
            ROWS=rows, CHUNKS=chunks, **({"PDL": True, "launch_pdl": True} if plan.pdl else {}))
    return out


class _Replay(NamedTuple):
    """A remembered CUDA one-launch call: everything but the two pointers, fixed by its _replay_key."""

    compiled: Any
    tail: tuple[object, ...]
    grid: int
    num_reqs: int
    stride: int
    ints: tuple[int, ...]
    zeroed: bool
    device: torch.device


_REPLAYS: dict[tuple[object, ...], _Replay] = {}


def _replay_key(logits: torch.Tensor) -> tuple[object, ...]:
    """What fixes a call's plan, kernel choice and Triton specialization, but for the output's alignment: dtype,
    shape, strides, card, whether the current stream is capturing, and the input pointer's offset mod 16."""
    return (logits.dtype, logits.shape, logits.stride(), logits.get_device(),
            torch._C._cuda_isCurrentStreamCapturing(), logits.data_ptr() & 15)


def _remember(logits: torch.Tensor, plan: LaunchPlan, one: OneLaunch, key: tuple[object, ...]) -> None:
    """Keep a tokened CUDA launch for replay once its kernel is compiled and launchable by the fast path."""
    entry = one.launcher.compiled.get(key)
    if entry is None:
        return
    if len(_REPLAYS) > 4096:
        _REPLAYS.clear()
    _REPLAYS[_replay_key(logits)] = _Replay(entry[0], entry[1], one.grid, plan.num_reqs, logits.stride(0), one.ints,
                                            one.zeroed, logits.device)


def _replay(logits: torch.Tensor) -> torch.Tensor | None:
    """get_num_nans's CUDA path for an input kind seen before on the current card: the remembered launch with this
    call's pointers, no planning or binding; None where it does not apply (then the general path runs)."""
    replay = _REPLAYS.get(_replay_key(logits))
    if replay is None or replay.device.index != torch._C._cuda_getDevice() or hooks_installed():
        return None
    out = _fresh_output(replay.num_reqs, replay.device, replay.zeroed)
    out_ptr = out.data_ptr()
    if out_ptr & 15:  # the compiled kernel assumed a 16-byte aligned output (the caching allocator's blocks are)
        return None
    compiled = replay.compiled
    compiled.run(replay.grid, 1, 1, torch._C._cuda_getCurrentRawStream(replay.device.index), compiled.function,
                 compiled.packed_metadata, None, None, None, logits.data_ptr(), replay.stride, out_ptr, *replay.ints,
                 *replay.tail)
    return out


def get_num_nans(logits: torch.Tensor) -> torch.Tensor:
    """Count NaNs per row; int32 [num_reqs] on logits' device. Rows may be padded (stride(0) >= vocab).

    The launch is chosen per input by kernel.launch.plan_launch: batches that fill the device, and on CUDA an
    eager call of short rows, get one program per row (`_num_nans_kernel`: one launch, nothing to zero); other
    short batches split each row's vocabulary over many programs (on CUDA adding int32 partial counts into an
    output zeroed by the driver's memset, in one launch; on NPU and under the interpreter storing them for a
    second small kernel to sum). Integer sums are exact and order-free: every plan gives the same counts. On
    CUDA, launches after the first of each specialization skip Triton's per-call binding (kernel.fastlaunch), and a
    call of an input kind seen before replays the remembered launch with its own pointers (`_replay`).
    """
    if type(logits) is torch.Tensor and logits.is_cuda:
        out = _replay(logits)
        if out is not None:
            return out
    plan, token = _checked_plan(logits)
    device = logits.device
    if plan is None:
        return torch.zeros(logits.shape[0], dtype=torch.int32, device=device)
    if device.type == "cuda" or device.type == "npu":  # Triton launches on the current card: make the input's
        runtime = getattr(torch, device.type)
        if device.index != runtime.current_device():
            with runtime.device(device.index):
                return run_plan(logits, plan, token)
    return run_plan(logits, plan, token)
