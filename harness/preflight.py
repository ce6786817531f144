"""Refuse a broken Triton interpreter up front, instead of failing every case with an obscure error, and measure
which comparisons it gets wrong, so a failure they cause is not blamed on the kernel.

Import this only after the cpu backend's prepare() (harness.backends): its kernel must be decorated in interpreter mode.
Known breakage: triton-ascend 3.2.0's interpreter with numpy 2, and older upstream ones with numpy 2.5, fail on a
runtime loop bound ("only 0-dimensional arrays can be converted to Python scalars").
Known defects, measured by `interpreter_defects()` on each run: triton 3.9's and triton-ascend 3.2.0's interpreters
compare bf16 values as their raw uint16 bits, so bf16 `x != x` is never true for NaN (REFERENCE.md section 11).
"""
from __future__ import annotations

import warnings
from collections.abc import Callable
from functools import cache

import numpy
import torch
import triton
import triton.language as tl

from cases.formats import BF16, FP16, FP32, FloatFormat, from_bits
from harness.backends import triton_flavour
from harness.skips import suite_command, tox_checkout
from verdict.interpreter import Defect, to_text


@triton.jit
def _loop_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    """The shape of the kernels under test: a runtime-bounded loop of masked loads and a sum."""
    acc = tl.zeros((), dtype=tl.int32)
    for i in range(0, n, BLOCK):
        offsets = i + tl.arange(0, BLOCK)
        acc += tl.sum(tl.load(x_ptr + offsets, mask=offsets < n, other=0), axis=0)
    tl.store(out_ptr, acc)


def _error(exc: Exception) -> str:
    """An exception as one line: its class and the last line of its message."""
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"


def interpreter_problem() -> str | None:
    """None when the interpreter runs a loop kernel right, else what went wrong."""
    x = torch.ones(10, dtype=torch.int32)
    out = torch.zeros(1, dtype=torch.int32)
    try:
        _loop_sum[(1,)](x, out, 10, BLOCK=4)
    except Exception as exc:  # noqa: BLE001 - any failure here means the backend is unusable
        return _error(exc)
    return None if int(out[0]) == 10 else f"a 10-element sum came out {int(out[0])}"


# (how a kernel writes the comparison, what it must give on each lane), in the order _comparisons stores them
PROBES: tuple[tuple[str, Callable[[torch.Tensor], torch.Tensor]], ...] = (
    ("x != x", torch.isnan),
    ("x == x", lambda x: ~torch.isnan(x)),
    ("x.to(tl.float32) != x.to(tl.float32)", torch.isnan),
    ("x < 0", lambda x: x < 0),
    ("(bits & abs_mask) > exponent_mask", torch.isnan),
)
LANES: tuple[str, ...] = ("NaN", "-NaN", "1", "-2")
_INT_TYPES = {torch.int16: tl.int16, torch.int32: tl.int32}


@triton.jit
def _comparisons(x_ptr, out_ptr, N: tl.constexpr, BITS: tl.constexpr, ABS_MASK: tl.constexpr,
                 EXPONENT_MASK: tl.constexpr):
    """Each PROBES comparison on N loaded values, one int32 per lane, probe after probe."""
    lanes = tl.arange(0, N)
    x = tl.load(x_ptr + lanes)
    wide = x.to(tl.float32)
    bits = x.to(BITS, bitcast=True)
    tl.store(out_ptr + 0 * N + lanes, (x != x).to(tl.int32))
    tl.store(out_ptr + 1 * N + lanes, (x == x).to(tl.int32))
    tl.store(out_ptr + 2 * N + lanes, (wide != wide).to(tl.int32))
    tl.store(out_ptr + 3 * N + lanes, (x < 0).to(tl.int32))
    tl.store(out_ptr + 4 * N + lanes, ((bits & ABS_MASK) > EXPONENT_MASK).to(tl.int32))


def _probe_values(fmt: FloatFormat) -> torch.Tensor:
    """LANES in fmt: a quiet NaN of each sign from raw bits, then 1 and -2."""
    nan = fmt.exponent_mask | fmt.quiet_bit
    return torch.cat([from_bits([nan, fmt.sign_bit | nan], fmt), torch.tensor([1.0, -2.0], dtype=fmt.dtype)])


def _wrong(got: torch.Tensor, due: torch.Tensor) -> str:
    """The lanes a comparison answered wrongly, e.g. "is false for NaN, -NaN"."""
    held = (got != 0).tolist()
    missed = [name for name, g, d in zip(LANES, held, due.tolist()) if d and not g]
    extra = [name for name, g, d in zip(LANES, held, due.tolist()) if g and not d]
    parts = [f"is {word} for {', '.join(names)}" for word, names in (("false", missed), ("true", extra)) if names]
    return " and ".join(parts)


def _format_defects(fmt: FloatFormat) -> list[Defect]:
    """Every probe comparison this interpreter answers wrongly on fmt's probe values."""
    x = _probe_values(fmt)
    out = torch.full((len(PROBES), len(LANES)), -1, dtype=torch.int32)
    _comparisons[(1,)](x, out, N=len(LANES), BITS=_INT_TYPES[fmt.int_dtype], ABS_MASK=fmt.abs_mask,
                       EXPONENT_MASK=fmt.exponent_mask)
    return [Defect(fmt.name, expr, _wrong(got, reference(x)))
            for (expr, reference), got in zip(PROBES, out) if not torch.equal(got != 0, reference(x))]


@cache
def interpreter_defects() -> tuple[Defect, ...]:
    """The comparisons a kernel may use that this interpreter gets wrong, per dtype; measured once per process."""
    return tuple(d for fmt in (FP32, FP16, BF16) for d in _format_defects(fmt))


def describe_defects() -> str:
    """The environment's "Interpreter defects" entry; a probe that cannot run says so instead of stopping the run."""
    try:
        return to_text(interpreter_defects())
    except Exception as exc:  # noqa: BLE001 - another interpreter may not run the probe; the cases still judge
        return f"not measured ({_error(exc)})"


def _pinned_numpy() -> str:
    """Where a numpy that fits comes from, where this run happened: a checkout's tox envs pin it; installed, pip."""
    if tox_checkout():
        return f"use {suite_command('cpu')} / tox -e ascend-cpu, which pin them"
    return (f"pip install 'numpy<2.5' (or 'numpy<2' for triton-ascend 3.2.0) into this Python, "
            f"then {suite_command('cpu')}")


def unusable_interpreter() -> str | None:
    """Why the installed Triton's interpreter cannot run this suite (it fails a loop kernel: a numpy mismatch),
    with what to do; None when it runs."""
    with warnings.catch_warnings():  # triton-ascend's interpreter warns on every loop bound under numpy 1.25+
        warnings.simplefilter("ignore", DeprecationWarning)
        problem = interpreter_problem()
    if problem is None:
        return None
    return (f"--device cpu: the Triton interpreter of {triton_flavour()} fails a smoke kernel with "
            f"numpy {numpy.__version__}: {problem}. triton-ascend 3.2.0 needs numpy<2, older upstream Triton "
            f"numpy<2.5 ({_pinned_numpy()})")
