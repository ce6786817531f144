"""The correct pieces the planted variants share, so each variant file holds only its own bug.

`make_get_num_nans` builds a `get_num_nans` around a kernel with the contract of our `kernel/` package;
each keyword is a knob a variant turns to plant a wrapper bug. `kernel_with` rebuilds our kernel with one
of its globals (the NaN predicate) swapped, for variants whose bug is only the predicate.
"""
from __future__ import annotations

import os
import types
from collections.abc import Callable

import torch
import triton

from kernel import num_nans as clean

Tensor = torch.Tensor


def check_input(logits: Tensor, dtypes: tuple[torch.dtype, ...] | None = clean.SUPPORTED_DTYPES) -> None:
    """Our wrapper's refusals (rank, dtype, inner stride, CPU outside interpreter); dtypes=None skips the dtype one."""
    if logits.dim() != 2:
        raise ValueError(f"get_num_nans expects 2-D logits [num_reqs, vocab_size], got shape {tuple(logits.shape)}")
    if dtypes is not None and logits.dtype not in dtypes:
        names = ", ".join(str(d).removeprefix("torch.") for d in dtypes)
        raise TypeError(f"get_num_nans supports {names}; got {str(logits.dtype).removeprefix('torch.')}")
    if logits.shape[1] > 1 and logits.stride(1) != 1:
        raise ValueError(f"get_num_nans needs unit stride along the vocab dimension, got {tuple(logits.stride())}")
    if logits.device.type == "cpu" and os.environ.get("TRITON_INTERPRET", "0") in ("", "0"):
        raise ValueError("get_num_nans got a CPU tensor but Triton is not in interpreter mode")


def _int32_zeros(logits: Tensor) -> Tensor:
    return torch.zeros(logits.shape[0], dtype=torch.int32, device=logits.device)


def make_get_num_nans(
    kernel: object = clean._num_nans_kernel,
    *,
    dtypes: tuple[torch.dtype, ...] | None = clean.SUPPORTED_DTYPES,
    prepare: Callable[[Tensor], Tensor] | None = None,
    row_stride: Callable[[Tensor], int] = lambda logits: logits.stride(0),
    alloc: Callable[[int, torch.device], Tensor] = lambda n, dev: torch.empty(n, dtype=torch.int32, device=dev),
    empty: Callable[[Tensor], Tensor] | None = _int32_zeros,
    block_size: Callable[[int], int] = lambda vocab: clean.BLOCK_SIZE,
    after: Callable[[Tensor], object] | None = None,
) -> Callable[[Tensor], Tensor]:
    """A get_num_nans; with every knob at its default it is exactly our kernel/ wrapper.

    prepare: applied to logits before the checks (reshape, copy). row_stride: the stride passed to the kernel.
    alloc(num_reqs, device): the output buffer (the result is its first num_reqs slots). empty: the shortcut
    for num_reqs == 0 or vocab_size == 0 (None: no shortcut, always launch). block_size(vocab): BLOCK_SIZE.
    after: called on logits once the counts are in.
    """

    def get_num_nans(logits: Tensor) -> Tensor:
        if prepare is not None:
            logits = prepare(logits)
        check_input(logits, dtypes)
        num_reqs, vocab_size = logits.shape
        if empty is not None and (num_reqs == 0 or vocab_size == 0):
            return empty(logits)
        out = alloc(num_reqs, logits.device)
        kernel[(num_reqs,)](logits, row_stride(logits), out, vocab_size, BLOCK_SIZE=block_size(vocab_size))
        if after is not None:
            after(logits)
        return out[:num_reqs]

    return get_num_nans


def zeroed_wrapper(kernel: object, block: int) -> Callable[[Tensor], Tensor]:
    """A wrapper of another style than ours: a zeroed output, one fixed BLOCK_SIZE, no launch for an empty input."""
    return make_get_num_nans(kernel, alloc=lambda n, dev: torch.zeros(n, dtype=torch.int32, device=dev),
                             block_size=lambda vocab: block)


def kernel_with(**swapped: object) -> object:
    """Our _num_nans_kernel, its body untouched, with some of its globals replaced (e.g. is_nan_i32=bad)."""
    fn = clean._num_nans_kernel.fn
    body = types.FunctionType(fn.__code__, {**fn.__globals__, **swapped}, fn.__name__, fn.__defaults__, fn.__closure__)
    body.__qualname__, body.__module__, body.__doc__ = fn.__qualname__, fn.__module__, fn.__doc__
    # compiled Triton reads constexpr-ness from the annotations (the interpreter does not care)
    body.__annotations__, body.__kwdefaults__ = dict(fn.__annotations__), fn.__kwdefaults__
    return triton.jit(body)
