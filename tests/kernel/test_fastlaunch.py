"""kernel.fastlaunch: a compiled kernel is reused only for arguments Triton would have specialized the same way."""
from __future__ import annotations

import pytest
import torch

import kernel.num_nans as num_nans
from kernel.fastlaunch import FastLauncher, _arg_key, _installed


class _Chain:
    def __init__(self, calls: list[object]) -> None:
        self.calls = calls


def test_keys_follow_what_triton_specializes() -> None:
    """Alignment, ==1, divisibility by 16 and integer width each change the key; nothing else about a value."""
    base = torch.zeros(64, dtype=torch.float32)
    assert _arg_key(base) == _arg_key(base[4:])  # 16-byte aligned both
    assert _arg_key(base) != _arg_key(base[1:])  # 4 bytes in: not 16-byte aligned
    assert _arg_key(base) != _arg_key(base.to(torch.bfloat16))
    assert _arg_key(32) == _arg_key(48) and _arg_key(32) != _arg_key(33) and _arg_key(1) != _arg_key(3)
    assert _arg_key(3) == _arg_key(5) and _arg_key(2**31 + 1) != _arg_key(3) and _arg_key(2**63 + 1) != _arg_key(2**31 + 1)


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
