"""kernel.fastlaunch: a compiled kernel is reused only for arguments Triton would have specialized the same way."""
from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

import kernel.num_nans as num_nans
from kernel.fastlaunch import FastLauncher, arg_key, _installed


class _Chain:
    def __init__(self, calls: list[object]) -> None:
        self.calls = calls


def test_keys_follow_what_triton_specializes() -> None:
    """Alignment, ==1, divisibility by 16 and integer width each change the key; nothing else about a value."""
    base = torch.zeros(64, dtype=torch.float32)
    assert arg_key(base) == arg_key(base[4:])  # 16-byte aligned both
    assert arg_key(base) != arg_key(base[1:])  # 4 bytes in: not 16-byte aligned
    assert arg_key(base) != arg_key(base.to(torch.bfloat16))
    assert arg_key(32) == arg_key(48) and arg_key(32) != arg_key(33) and arg_key(1) != arg_key(3)
    assert arg_key(3) == arg_key(5) and arg_key(2**31 + 1) != arg_key(3) and arg_key(2**63 + 1) != arg_key(2**31 + 1)


def test_launch_hooks_send_launches_through_triton() -> None:
    assert not _installed(None) and not _installed(_Chain([]))
    assert _installed(_Chain([print])) and _installed(print)


def test_off_cuda_every_launch_is_tritons_own(device: str) -> None:
    """On the CPU (interpreter) and NPU the launcher only forwards; nothing is cached."""
    if device == "cuda":
        pytest.skip("CUDA caches compiled kernels: covered by the CUDA test below")
    x = torch.full((3, 100), float("nan"), device=device)
    assert num_nans.get_num_nans(x).tolist() == [100, 100, 100]
    assert not any(launcher.compiled for launcher in (num_nans._launch_rows, num_nans._launch_items))


def test_cuda_reuses_only_matching_specializations(device: str) -> None:
    """An aligned view, then a misaligned one, then the aligned one again: each counted right, two compiled."""
    if device != "cuda":
        pytest.skip("the fast path runs on CUDA only")
    launcher = FastLauncher(num_nans._num_nans_kernel)
    buffer = torch.full((4 * 100 + 1,), float("nan"), device="cuda")
    for start in (0, 1, 0):
        view = buffer[start : start + 400].view(4, 100)
        out = torch.full((4,), -1, dtype=torch.int32, device="cuda")
        for _ in range(2):  # the second launch of each takes the fast path
            launcher(4, view, view.stride(0), out, 100, BLOCK_SIZE=128)
        assert out.tolist() == [100] * 4, start
    assert len(launcher.compiled) == 2


def test_planned_launches_key_on_alignment_and_stride(device: str) -> None:
    """get_num_nans's keyed launches: misaligned views and a stride off 16 reuse no kernel compiled for others."""
    if device != "cuda":
        pytest.skip("the keyed fast path runs on CUDA only")
    for rows, vocab in ((1, 20000), (3, 5000), (600, 300)):  # split with atomics, split, whole rows
        for stride in (vocab + 16 - vocab % 16, vocab + 16 - vocab % 16 + 1):
            storage = torch.full((rows * stride + 1,), float("nan"), device="cuda")
            for start in (0, 1, 0):  # aligned, 4 bytes in, aligned again: each launch twice (fast path second)
                storage.fill_(float("nan"))
                view = storage[start : start + rows * stride].view(rows, stride)[:, :vocab]
                view[:, :7] = 0.0
                for _ in range(2):
                    got = num_nans.get_num_nans(view)
                    assert got.tolist() == [vocab - 7] * rows, (rows, vocab, stride, start)


def _dirty_then(make: Callable[[int, torch.device], torch.Tensor], size: int, device: torch.device) -> torch.Tensor:
    """`make(size, device)` right after a -1 fill of the same size was freed (the allocator hands that block back)."""
    dirty = torch.full((size,), -1, dtype=torch.int32, device=device)
    del dirty
    return make(size, device)


def _planted_not_zeroed(size: int, device: torch.device) -> torch.Tensor:
    """A planted bug: the memset forgotten."""
    return torch.empty(size, dtype=torch.int32, device=device)


def test_zeroed_output_is_zero_on_a_reused_block(device: str) -> None:
    """The zeroed output really is zeroed on a block just freed dirty; on CUDA the planted twin is caught."""
    from kernel.zeroed import zeroed_int32

    place = torch.empty(0, device=device).device
    for size in (1, 5, 4096):
        out = _dirty_then(zeroed_int32, size, place)
        assert out.dtype == torch.int32 and out.shape == (size,) and out.device == place
        assert torch.count_nonzero(out).item() == 0, size
        if device == "cuda":  # the caching allocator reuses the block: the check sees a forgotten memset
            assert torch.count_nonzero(_dirty_then(_planted_not_zeroed, size, place)).item() > 0, size
