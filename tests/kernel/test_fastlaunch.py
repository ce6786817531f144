"""kernel.fastlaunch: the relaunch runs only on verified Triton versions, only after its first relaunch reproduced
Triton's own launch, and only for input kinds whose key fixes what Triton specializes on."""
from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import pytest
import torch
import triton

import kernel.num_nans as num_nans
from kernel import fastlaunch


class _Runner:
    """A stand-in compiled kernel with the launcher protocol the relaunch calls (`run(grid x, y, z, stream,
    function, metadata, launch metadata, enter hook, exit hook, *args)`): writes `write(args)` into args[2]."""

    name, function, packed_metadata = "stand_in", object(), object()

    def __init__(self, write: Callable[[tuple[object, ...]], torch.Tensor]) -> None:
        self.write, self.launches = write, 0

    def run(self, gx: int, gy: int, gz: int, stream: int, function: object, packed: object, *rest: object) -> None:
        assert (gy, gz, stream, function, packed, rest[:3]) == (1, 1, 7, self.function, self.packed_metadata,
                                                                (None, None, None))
        self.launches += 1
        rest[3 + 2].copy_(self.write(rest[3:]))  # type: ignore[union-attr]


@pytest.fixture
def stream_seven(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fake driver whose current stream is 7: the stand-in needs no device."""
    if not hasattr(triton, "knobs") or not hasattr(triton.runtime.driver, "_active"):
        pytest.skip(f"Triton {triton.__version__} has no knobs/driver config: the relaunch never runs on it")
    fake = SimpleNamespace(get_current_device=lambda: 0, get_current_stream=lambda device: 7)
    monkeypatch.setattr(triton.runtime.driver, "_active", fake, raising=False)


def _counts(args: tuple[object, ...]) -> torch.Tensor:
    return torch.isnan(args[0]).sum(-1).to(torch.int32)  # type: ignore[arg-type]


def test_only_verified_versions_relaunch() -> None:
    assert fastlaunch.enabled("3.6.0") and not fastlaunch.enabled("0.0.0-unverified")
    assert fastlaunch.enabled() == (triton.__version__ in fastlaunch.VERIFIED)


@pytest.mark.usefixtures("stream_seven")
def test_a_relaunch_that_reproduces_the_output_is_kept() -> None:
    x = torch.tensor([[float("nan"), 1.0], [float("nan"), float("nan")]])
    out = _counts((x,))
    runner = _Runner(_counts)
    assert fastlaunch.verified(runner, 2, (x, 2, out), out) is runner and runner.launches == 1
    assert out.tolist() == [1, 2], "the output Triton's own launch wrote was overwritten"


@pytest.mark.usefixtures("stream_seven")
@pytest.mark.parametrize("write", [lambda args: _counts(args) + 1, lambda args: 1 / 0],
                         ids=["planted-off-by-one", "planted-runner-raises"])
def test_a_relaunch_that_differs_or_fails_is_refused(write: Callable[[tuple[object, ...]], torch.Tensor]) -> None:
    """The planted runners: one writes other counts, one raises (a runner this module does not know)."""
    x = torch.tensor([[float("nan"), 1.0]])
    out = _counts((x,))
    with pytest.warns(RuntimeWarning, match="refused"):
        assert fastlaunch.verified(_Runner(write), 1, (x, 2, out), out) is None
    assert out.tolist() == [1]


def test_an_unverified_triton_takes_tritons_own_path(monkeypatch: pytest.MonkeyPatch, device: str) -> None:
    """A Triton version not in VERIFIED: every call launches through `fn[grid](...)`, none is relaunched, and the
    counts are right (on CUDA the verified version relaunches from the second call of a kind: shown below)."""
    monkeypatch.setattr(triton, "__version__", "0.0.0-unverified")
    monkeypatch.setattr(num_nans, "_KINDS", {})
    relaunched: list[object] = []
    monkeypatch.setattr(fastlaunch, "relaunch", lambda *args: relaunched.append(args))
    x = torch.full((3, 1000), float("nan"), device=device)
    x[:, :10] = 0.0
    for _ in range(3):
        assert num_nans.get_num_nans(x).tolist() == [990] * 3
    assert not relaunched
    assert all(kind.compiled is None and not kind.tried for kind in num_nans._KINDS.values())


def test_cuda_relaunches_after_a_verified_first_call(monkeypatch: pytest.MonkeyPatch, device: str) -> None:
    """On a verified Triton the second call of a kind relaunches the compiled kernel and counts exactly."""
    if device != "cuda" or not fastlaunch.enabled():
        pytest.skip("the relaunch runs on CUDA with a verified Triton only")
    monkeypatch.setattr(num_nans, "_KINDS", {})
    calls: list[int] = []
    real = fastlaunch.relaunch
    monkeypatch.setattr(fastlaunch, "relaunch", lambda *args: (calls.append(1), real(*args)))
    for rows, vocab, dtype in ((1, 20000, torch.float32), (3, 5000, torch.float32), (600, 300, torch.float32),
                               (2, 300000, torch.float32), (2, 152064, torch.bfloat16)):  # whole rows, a split of
        x = torch.full((rows, vocab), float("nan"), device="cuda", dtype=dtype)  # long rows, word pairs
        x[:, :7] = 0.0
        before = len(calls)
        for _ in range(3):
            assert num_nans.get_num_nans(x).tolist() == [vocab - 7] * rows, (rows, vocab)
        assert len(calls) - before == 3, "the first call verifies (one relaunch), the next two relaunch"


def test_relaunch_keys_on_alignment_and_stride(device: str) -> None:
    """Misaligned views and strides off 16 reuse no kernel compiled for others: aligned, 4 bytes in, aligned again,
    each called twice (the second a relaunch), every count exact. Where the relaunch is off (the interpreter, a
    Triton not verified) every call is Triton's own launch: each view once."""
    relaunching = device == "cuda" and fastlaunch.enabled()
    for rows, vocab in ((1, 20000), (3, 5000), (600, 300)):
        for stride in (vocab + 16 - vocab % 16, vocab + 16 - vocab % 16 + 1):
            storage = torch.full((rows * stride + 1,), float("nan"), device=device)
            for start in (0, 1, 0) if relaunching else (0, 1):
                storage.fill_(float("nan"))
                view = storage[start : start + rows * stride].view(rows, stride)[:, :vocab]
                view[:, :7] = 0.0
                for _ in range(2 if relaunching else 1):
                    assert num_nans.get_num_nans(view).tolist() == [vocab - 7] * rows, (rows, vocab, stride, start)


def test_launch_hooks_go_through_tritons_runner(monkeypatch: pytest.MonkeyPatch) -> None:
    """A profiler's launch hook installed: the relaunch takes the compiled kernel's own runner, which calls it."""
    if not hasattr(triton, "knobs"):
        pytest.skip(f"Triton {triton.__version__} has no knobs: the relaunch never runs on it")
    runner, through = _Runner(_counts), []  # type: ignore[var-annotated]
    runner.__class__ = type("_HookedRunner", (_Runner,), {
        "__getitem__": lambda self, grid: lambda *args: through.append((grid, args))})
    monkeypatch.setattr(triton.knobs.runtime, "launch_enter_hook", lambda metadata: None)
    fastlaunch.relaunch(runner, 3, ("x", 1, "out"))
    assert through == [((3, 1, 1), ("x", 1, "out"))] and runner.launches == 0
