"""What a caller on an accelerator relies on, judged as behaviour (issue 18): any correct kernel passes.

- stream order: the input is written on the current stream behind slow work, and the counts are read on that
  stream with no device-wide synchronize, on the default stream and under a non-default current stream;
- another card: an input on card 1 while card 0 is current is counted right or refused, and the current card is
  left as it was;
- graph capture: one call captured in a device graph, replayed after new NaNs are written into the same buffer,
  must count the new NaNs; a call that cannot be captured is reported ("capturable: no (why)"), and fails only
  with --require-capturable.
None of these exist under the Triton interpreter (no streams, cards or graphs): on the CPU they are not run.
"""
from __future__ import annotations

import json

import pytest
import torch

from harness import skips, streams
from harness.backends import Backend
from harness.compare import exception_text, refusal
from harness.fixtures import CheckCounts, record
from harness.target import KernelUnderTest
from reference import expected_counts
from .test_wrapper_contract import nan_rows
from verdict.record import CAPTURABLE_PROPERTY, CaseParams

pytestmark = pytest.mark.nan_semantics


@pytest.fixture
def runtime(backend: Backend, request: pytest.FixtureRequest) -> object:
    """torch's device module of the backend (torch.cuda, torch.npu); these checks do not exist elsewhere."""
    module = None if backend.interpreted else backend.runtime()
    if module is None:
        skips.skip(request.node, skips.accelerator_semantics(backend.name))
    return module


def _params(case_id: str, shape: tuple[int, ...], detail: str, seed: int) -> CaseParams:
    """Layout names the semantics checked (stream, card, graph): the diagnosis reads it."""
    return CaseParams("semantics", case_id, "fp32", case_id.split("-", 1)[0].rstrip("0123456789"), shape, detail,
                      seed)


@pytest.mark.parametrize("stream_kind", ["default", "non-default"])
def test_counts_follow_the_callers_stream(stream_kind: str, runtime: object, backend: Backend,
                                          target: KernelUnderTest, check_counts: CheckCounts) -> None:
    """The NaNs land in the input only after slow work on the current stream; the counts are read on that stream."""
    rows, vocab, seed = 8, 40_000, 41
    host = nan_rows(rows, vocab, torch.float32, seed=seed)
    card = torch.device(backend.torch_type, backend.current_card())
    staged = host.to(card)
    runtime.synchronize()
    context, _ = streams.stream_context(runtime, stream_kind)
    with context:
        logits = torch.zeros_like(staged)
        streams.delay(runtime, card)
        logits.copy_(staged)  # queued behind the delay: a kernel that does not wait for this stream reads zeros
        got = target.get_num_nans(logits)
        check_counts(got, expected_counts(host), _params(f"stream-{stream_kind}-{rows}x{vocab}", (rows, vocab),
                                                  f"{stream_kind} stream, read without a device-wide sync", seed),
              logits=logits, synchronize=False)


def test_input_on_another_card(runtime: object, backend: Backend, target: KernelUnderTest, check_counts: CheckCounts,
                               request: pytest.FixtureRequest) -> None:
    """Triton launches on the current card: a wrapper without a device guard reads the other card's input there."""
    count = backend.card_count()
    if count < 2:
        skips.skip(request.node, skips.second_card(count))
    here = backend.current_card()
    other = (int(here or 0) + 1) % count
    rows, vocab, seed = 4, 3000, 43
    host = nan_rows(rows, vocab, torch.float32, seed=seed)
    logits = host.to(torch.device(backend.torch_type, other))
    info = _params(f"card{other}-while-card{here}-current-{rows}x{vocab}", (rows, vocab), f"input on card {other}",
                   seed)
    try:
        got = target.get_num_nans(logits)
        runtime.synchronize(other)
    except Exception as exc:  # noqa: BLE001 - refusing is fine; reading the wrong card is not
        refused = refusal(exc, info, "wrapper", logits)
        record(request, refused)
        return
    effects = []
    if backend.current_card() != here:
        effects.append(f"the current card changed from {here} to {backend.current_card()}")
    if isinstance(got, torch.Tensor) and got.device.index not in (None, other):
        effects.append(f"result on card {got.device.index}, the input's is card {other}")
    check_counts(got, expected_counts(host), info, logits=logits, side_effects=effects)


def test_graph_capture_replays_new_counts(runtime: object, backend: Backend, target: KernelUnderTest,
                                          check_counts: CheckCounts, request: pytest.FixtureRequest,
                                          pytestconfig: pytest.Config) -> None:
    """Captured once, replayed after the buffer is refilled: the replay counts the new contents. A small batch, then
    a decode step's (16 rows of a 152,064 vocabulary: a design may launch a capture otherwise than an eager call,
    e.g. split each row over many programs)."""
    for rows, vocab, seed in ((6, 5000, 51), (16, 152064, 61)):
        first = nan_rows(rows, vocab, torch.float32, seed=seed)
        second = nan_rows(rows, vocab, torch.float32, seed=seed + 1)
        second[2] = 0  # one row without NaNs in the second step
        card = torch.device(backend.torch_type, backend.current_card())
        logits = first.to(card)
        try:
            graph, got = streams.capture(runtime, backend.torch_type, lambda: target.get_num_nans(logits))
        except Exception as exc:  # noqa: BLE001 - not capturable is a property of the kernel, reported
            why = exception_text(exc)
            request.node.user_properties.append((CAPTURABLE_PROPERTY, json.dumps({"capturable": False, "why": why})))
            if pytestconfig.getoption("--require-capturable"):
                pytest.fail(f"get_num_nans cannot be captured in a device graph (--require-capturable): {why}")
            return
        if rows == 6:
            request.node.user_properties.append((CAPTURABLE_PROPERTY, json.dumps({"capturable": True, "why": ""})))
        logits.copy_(second.to(card))
        graph.replay()
        check_counts(got, expected_counts(second), _params(f"graph-replay-{rows}x{vocab}", (rows, vocab),
                                                    "captured once, replayed on refilled input", seed + 1),
                     logits=logits)
