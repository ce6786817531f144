"""What a caller on an accelerator relies on, made testable: stream order, another card, graph capture.

vLLM writes the logits on its current stream and reads the counts on that stream, without a device-wide
synchronize; it may run under a non-default current stream and capture parts of a step in a device graph. These
helpers are written once against torch's device module (torch.cuda, torch.npu through torch_npu), so CUDA and
Ascend take the same path; the interpreter has no streams, cards or graphs.
"""
from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from types import ModuleType
from typing import Any

import torch

DELAY_CYCLES = 200_000_000  # about 0.1 s at 2 GHz: far longer than any launch takes to be queued
GRAPH_CLASSES = {"cuda": "CUDAGraph", "npu": "NPUGraph"}


def delay(runtime: ModuleType, device: torch.device) -> None:
    """Queue slow work on the current stream, so that what follows on it runs well after the host moves on."""
    sleep = getattr(runtime, "_sleep", None)
    if sleep is not None:  # CUDA: a spinning kernel
        sleep(DELAY_CYCLES)
        return
    a = torch.randn(4096, 4096, device=device)  # elsewhere: work the device needs a while for
    for _ in range(20):
        a = a @ a
        a = a / a.abs().amax().clamp_min(1.0)


def stream_context(runtime: ModuleType, kind: str) -> tuple[AbstractContextManager[Any], Any]:
    """(context, stream): the device's default stream, or a fresh non-default stream made current."""
    if kind == "default":
        stream = runtime.current_stream()
        return runtime.stream(stream), stream
    stream = runtime.Stream()
    stream.wait_stream(runtime.current_stream())
    return runtime.stream(stream), stream


def capture(runtime: ModuleType, device_type: str, fn: Callable[[], object]) -> tuple[Any, object]:
    """(graph, what fn returned while captured): fn warmed up on a side stream first, as torch documents."""
    side = runtime.Stream()
    side.wait_stream(runtime.current_stream())
    with runtime.stream(side):
        for _ in range(2):
            fn()
    runtime.current_stream().wait_stream(side)
    runtime.synchronize()
    graph = getattr(runtime, GRAPH_CLASSES[device_type])()
    with runtime.graph(graph):
        result = fn()
    return graph, result
