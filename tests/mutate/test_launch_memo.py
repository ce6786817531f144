"""The launch memo replays an interpreted launch only when nothing it can see differs: same code (its jit callees and
the globals it names included), same argument bytes, same grid; a replay leaves every argument as the run did."""
from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest
import torch

from mutate import specs as specializations
from mutate.equivalence import load_file
from mutate.launch_memo import LaunchMemo, replaying

KERNEL = '''
import triton
import triton.language as tl

SCALE = {scale}


@triton.jit
def helper(x):
    return x * SCALE + {offset}


@triton.jit
def kern(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0)
    tl.store(out_ptr + offs, helper(x), mask=offs < n)
    tl.store(x_ptr + offs, x * 0 + 7, mask=offs < {writes})  # writes its input where {writes} > 0
'''


@pytest.fixture(autouse=True)
def _interpreter() -> None:
    if not specializations.interpreted_here():
        pytest.skip("the launch memo is for the Triton interpreter (TRITON_INTERPRET=1 in this process)")


def _module(tmp_path: Path, name: str, scale: int = 3, offset: int = 1, writes: int = 0) -> ModuleType:
    """A kernel module of its own (as a mutant's copy is): same source text but for the given changes."""
    path = tmp_path / f"{name}.py"
    path.write_text(KERNEL.format(scale=scale, offset=offset, writes=writes))
    return load_file(name, path)


def _launch(module: ModuleType, values: list[int], grid: object = (1,)) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.tensor(values, dtype=torch.int32)
    out = torch.full((len(values),), -1, dtype=torch.int32)
    module.kern[grid](x, out, len(values), BLOCK=8)
    return x, out


def test_a_repeated_launch_is_replayed_with_the_runs_effect(tmp_path: Path) -> None:
    mod = _module(tmp_path, "memo_same", writes=3)
    memo = LaunchMemo()
    with replaying(memo):
        x1, out1 = _launch(mod, [1, 2, 3, 4, 5])
        x2, out2 = _launch(mod, [1, 2, 3, 4, 5])
    assert (memo.misses, memo.hits) == (1, 1)
    assert out1.tolist() == [4, 7, 10, 13, 16] and torch.equal(out1, out2)
    assert x1.tolist() == [7, 7, 7, 4, 5] and torch.equal(x1, x2)  # the input write replayed too


@pytest.mark.parametrize("change", ["input bytes", "global constant", "jit callee", "grid"])
def test_anything_the_launch_sees_changed_runs_it_again(tmp_path: Path, change: str) -> None:
    first = _module(tmp_path, f"memo_first_{change.replace(' ', '_')}")
    second = {"global constant": lambda: _module(tmp_path, "memo_scale", scale=4),
              "jit callee": lambda: _module(tmp_path, "memo_offset", offset=2)}.get(change, lambda: first)()
    values = [1, 2, 3, 4, 5]
    memo = LaunchMemo()
    with replaying(memo):
        _launch(first, values)
        _, out = _launch(second, [1, 2, 3, 4, 6] if change == "input bytes" else values,
                         (2,) if change == "grid" else (1,))
    assert (memo.misses, memo.hits) == (2, 0)
    scale, offset = (4, 1) if change == "global constant" else (3, 2) if change == "jit callee" else (3, 1)
    expected = [v * scale + offset for v in ([1, 2, 3, 4, 6] if change == "input bytes" else values)]
    assert out.tolist() == expected


def test_unnamed_grids_run_and_nothing_is_kept_outside_replaying(tmp_path: Path) -> None:
    mod = _module(tmp_path, "memo_grid")
    memo = LaunchMemo()
    with replaying(memo):
        _, out = _launch(mod, [1, 2], grid=lambda meta: (1,))
    assert (memo.bypassed, memo.misses, memo.hits) == (1, 0, 0) and out.tolist() == [4, 7]
    _launch(mod, [1, 2])
    assert (memo.bypassed, memo.misses, memo.hits) == (1, 0, 0)


def test_stored_effects_stay_under_the_limit(tmp_path: Path) -> None:
    mod = _module(tmp_path, "memo_limit")
    memo = LaunchMemo(limit_bytes=40)  # one 20-byte output at a time (5 int32) plus one more
    with replaying(memo):
        for first in range(4):
            _launch(mod, [first, 2, 3, 4, 5])
    assert memo.stored_bytes <= 40 and len(memo.effects) == 2


def test_recording_only_runs_every_launch_and_keeps_it_for_later(tmp_path: Path) -> None:
    mod = _module(tmp_path, "memo_record")
    memo = LaunchMemo()
    with replaying(memo, replay=False):  # the traced original: every launch runs (its lines are its coverage)
        _launch(mod, [1, 2])
        _launch(mod, [1, 2])
    assert (memo.misses, memo.hits) == (2, 0)
    with replaying(memo):
        _, out = _launch(mod, [1, 2])
    assert (memo.misses, memo.hits) == (2, 1) and out.tolist() == [4, 7]


def test_storages_past_the_hash_limit_run_as_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mutate import launch_memo

    monkeypatch.setattr(launch_memo, "MAX_STORAGE_BYTES", 8)  # the 5-int32 input (20 bytes) is now too large
    mod = _module(tmp_path, "memo_large")
    memo = LaunchMemo()
    with replaying(memo):
        _launch(mod, [1, 2, 3, 4, 5])
        _, out = _launch(mod, [1, 2, 3, 4, 5])
    assert (memo.bypassed, memo.misses, memo.hits) == (2, 0, 0) and out.tolist() == [4, 7, 10, 13, 16]


def test_tensors_passed_by_keyword_are_hashed_and_replayed(tmp_path: Path) -> None:
    mod = _module(tmp_path, "memo_keywords", writes=2)
    memo = LaunchMemo()
    outs = []
    with replaying(memo):
        for _ in range(2):
            x = torch.tensor([1, 2, 3], dtype=torch.int32)
            out = torch.full((3,), -1, dtype=torch.int32)
            mod.kern[(1,)](x_ptr=x, out_ptr=out, n=3, BLOCK=8)
            outs.append((x, out))
    assert (memo.misses, memo.hits) == (1, 1)
    for x, out in outs:  # the replay wrote the output and the input as the run did
        assert out.tolist() == [4, 7, 10] and x.tolist() == [7, 7, 3]
