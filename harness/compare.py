"""Bit-exact comparison of count tensors: integer equality plus dtype, shape and device, into a `Check`."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np
import torch

from cases.formats import BY_DTYPE, FloatFormat
from harness.backends import any_fault, is_memory_error
from harness.guard import KernelRaised
from reference import sealed
from verdict.problem import INPUT_MODIFIED, MALFORMED, OTHER, OUT_OF_MEMORY, PADDING_MODIFIED, Problem
from verdict.record import (
    DEVICE_FAULT, PASS, REFUSED, SIDE_EFFECT, VALUE_KINDS, WRONG_COUNTS, CaseParams, Check, InputLayout, Unwritten,
    WrongRow, signed_kind,
)

SHOWN_ROWS = 20  # wrong rows spelled out in a message; the rest are counted
# what a wrong row holds is read back for a check's first wrong rows only, and at most this many elements of them:
# the diagnosis reads them as a sample (a batch of thousands of wrong rows, a 2^26-element generated case)
HELD_ROWS = 32
HELD_ELEMENTS = 1 << 22
# alignment is recorded up to 16 bytes (a 128-bit vector load): allocations are aligned at least that much, so the
# value is the input's offset's doing and the same on every run (larger powers of two are the allocator's luck)
MAX_ALIGNMENT = 16


def describe_input(x: object) -> str:
    """Shape, strides, storage offset, dtype and device type of an input: enough to rebuild the layout (the card is
    recorded apart, so the same case on another card reads the same)."""
    if not isinstance(x, torch.Tensor):
        return type(x).__name__
    return (f"shape {tuple(x.shape)}, strides {tuple(x.stride())}, offset {x.storage_offset()}, "
            f"{str(x.dtype).removeprefix('torch.')} on {x.device.type}")


def layout_of(x: object) -> InputLayout | None:
    """The input as data for the diagnosis (describe_input is the same for a reader); None when not a tensor."""
    if not isinstance(x, torch.Tensor):
        return None
    address = x.data_ptr() if x.numel() else 0
    alignment = min(address & -address, MAX_ALIGNMENT) if address else None
    return InputLayout(tuple(x.shape), tuple(x.stride()), x.storage_offset(), str(x.dtype).removeprefix("torch."),
                       alignment)


def _raised(exc: BaseException) -> BaseException:
    """What the kernel itself raised, when the guard wrapped it."""
    return exc.original if isinstance(exc, KernelRaised) else exc


def exception_text(exc: BaseException) -> str:
    """`Type: first line` of an exception (of the kernel's own, when the guard wrapped it): what a refusal or a
    fault is recorded and shown as."""
    exc = _raised(exc)
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def failed_launch(exc: BaseException, params: CaseParams, path: str, expected: torch.Tensor, logits: object,
                  card: int | None) -> Check:
    """The check of a launch that raised on in-domain input: a device fault when the text names one, else a refusal
    (an allocation that failed is said as data: the diagnosis tells it from a kernel that refuses the input)."""
    text = exception_text(exc)
    verdict = DEVICE_FAULT if any_fault(text) else REFUSED
    memory = (Problem(OUT_OF_MEMORY, f"the call could not allocate: {text[:200]}"),) if is_memory_error(_raised(exc)) \
        else ()
    return Check(params, path, verdict, sum(sealed.int_list(expected)), None, problems=memory, card=card,
                 input_desc=describe_input(logits), refusal=text, layout=layout_of(logits),
                 rows=len(sealed.int_list(expected)))


def refusal(exc: BaseException, params: CaseParams, path: str, logits: object) -> Check:
    """The check of a kernel that raised on input outside its domain: an Exception is a refusal and passes; a
    SystemExit, KeyboardInterrupt or a pytest/unittest outcome (skip, xfail, exit) steers the runner and fails."""
    text = exception_text(exc)
    if isinstance(exc, KernelRaised) and not exc.is_exception:
        steers = (f"raised {type(exc.original).__name__}, which steers the test runner; a refusal must raise an "
                  "Exception")
        return Check(params, path, REFUSED, problems=(Problem(OTHER, steers),),
                     input_desc=describe_input(logits), refusal=text, layout=layout_of(logits))
    return Check(params, path, PASS, refusal=text, input_desc=describe_input(logits), layout=layout_of(logits))


def compare_counts(
    got: object,
    expected: torch.Tensor,
    *,
    params: CaseParams,
    path: str,
    device_type: str,
    row_labels: Sequence[str] | None = None,
    side_effects: Sequence[Problem | str] = (),
    card: int | None = None,
    input_desc: str = "",
    layout: InputLayout | None = None,
    unwritten: Unwritten | None = None,
) -> Check:
    """Compare kernel counts with the CPU reference; never raises on a malformed result, it reports it.

    Values are read as plain data through reference.sealed and compared as Python ints, so neither a tensor
    subclass nor a patched torch can make unequal counts compare equal."""
    want = sealed.int_list(expected)
    expected_total = sum(want)
    problems: list[Problem | str] = list(side_effects)  # Check makes plain words a problem of no known kind

    def done(got_total: int | None, wrong: Sequence[WrongRow] = ()) -> Check:
        bad_counts = bool(wrong) or got_total != expected_total  # a total that differs is wrong, whatever the shape
        verdict = WRONG_COUNTS if bad_counts else (SIDE_EFFECT if problems else PASS)
        return Check(params, path, verdict, expected_total, got_total, tuple(problems), tuple(wrong), card,
                     input_desc, layout=layout, rows=len(want), unwritten=unwritten)

    values = _read_counts(got, expected, device_type, problems)
    if values is None:
        return done(None)
    wrong: list[WrongRow] = []
    if len(values) == len(want):
        for row, (g, w) in enumerate(zip(values, want)):
            if g != w:
                label = row_labels[row] if row_labels is not None and row < len(row_labels) else ""
                wrong.append(WrongRow(row, w, g, label))
    elif not problems:
        problems.append(Problem(MALFORMED, f"{len(values)} counts for {len(want)} rows"))
    return done(sum(values), wrong)


def _read_counts(got: object, expected: torch.Tensor, device_type: str,
                 problems: list[Problem | str]) -> list[int] | None:
    """The result's values as ints, each way its form is not one int32 count per row on the input's device noted
    as a MALFORMED problem; None when they cannot be read as whole numbers."""

    def malformed(text: str) -> None:
        problems.append(Problem(MALFORMED, text))

    if not isinstance(got, torch.Tensor):
        malformed(f"result is {type(got).__name__}, not a tensor")
        return None
    if type(got) is not torch.Tensor:
        malformed(f"result is a {type(got).__module__}.{type(got).__qualname__}, not a plain torch.Tensor "
                  "(judged by its data)")
    dtype = sealed.dtype_of(got)
    if dtype != torch.int32:
        malformed(f"dtype {dtype}, expected torch.int32")
    shape = sealed.shape_of(got)
    if shape != sealed.shape_of(expected):
        malformed(f"shape {shape}, expected {sealed.shape_of(expected)}")
    got_device = sealed.device_type(got)
    if got_device != device_type:
        malformed(f"device {got_device}, expected {device_type}")
    if got_device == "meta" or dtype.is_complex:
        malformed("values are not readable integers" if got_device != "meta" else "values live on meta")
        return None
    try:
        raw = sealed.host_array(got).reshape(-1)
    except Exception as exc:  # noqa: BLE001 - an exotic tensor must become a problem, not an exception
        malformed(f"values cannot be read: {type(exc).__name__}: {exc}")
        return None
    if dtype.is_floating_point and not all(float(v).is_integer() for v in raw.tolist()):
        malformed("values are not whole numbers")
        return None
    return [int(v) for v in raw.tolist()]


def message(check: Check) -> str:
    """The failure text: the case and seed, every problem, and the wrong rows with their labels."""
    p = check.params
    head = f"case {p.case_id} ({check.path})" + (f" (seed {p.seed})" if p.seed is not None else "")
    lines = [f"{head}: {check.verdict.replace('_', ' ')}"]
    if check.input_desc:
        lines.append(f"  input: {check.input_desc}")
    if check.refusal:
        lines.append(f"  refused: {check.refusal}")
    lines += [f"  {problem}" for problem in check.problems]
    if check.wrong_rows:
        lines.append(f"  {len(check.wrong_rows)} wrong row(s); expected total {check.expected_total}, "
                     f"got {check.got_total}")
        lines += [f"    {w.describe()}" for w in check.wrong_rows[:SHOWN_ROWS]]
        if len(check.wrong_rows) > SHOWN_ROWS:
            lines.append(f"    ... and {len(check.wrong_rows) - SHOWN_ROWS} more")
    return "\n".join(lines)


def assert_check(check: Check) -> None:
    """Fail the calling test with the check's message, pointing at the case, not at this helper."""
    __tracebackhide__ = True
    if not check.ok:
        raise AssertionError(message(check))


def _kinds(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """Each element's kind of value as 2 x its index in VALUE_KINDS, plus 1 when its sign bit is set."""
    u = bits.view(np.dtype(f"u{bits.dtype.itemsize}"))
    t = u.dtype.type
    magnitude, top = u & t(fmt.abs_mask), t(fmt.exponent_mask)
    exponent, mantissa = magnitude & top, magnitude & t(fmt.mantissa_mask)
    kind = np.select([magnitude == 0, exponent == 0, exponent != top, mantissa == 0, mantissa == t(fmt.quiet_bit),
                      (mantissa & t(fmt.quiet_bit)) != 0], [0, 1, 2, 3, 4, 5], default=6)
    return kind * 2 + (u >> t(fmt.width - 1)).astype(np.int64)


def held_values(logits: torch.Tensor, wrong: Sequence[WrongRow]) -> tuple[WrongRow, ...]:
    """WRONG with what its first rows hold, read from the input's bits: how many elements of each signed kind of
    value, and for a row counted short the lengths of the suffixes holding exactly the NaNs it missed."""
    fmt = BY_DTYPE.get(sealed.dtype_of(logits))
    shape = sealed.shape_of(logits)
    if fmt is None or len(shape) != 2 or not shape[1] or any(not 0 <= w.row < shape[0] for w in wrong):
        return tuple(wrong)
    take = list(wrong[:max(1, min(HELD_ROWS, HELD_ELEMENTS // shape[1]))])
    kinds = _kinds(sealed.row_bits(logits, [w.row for w in take]), fmt)
    width = 2 * len(VALUE_KINDS)
    counts = np.bincount((kinds + width * np.arange(len(take))[:, None]).ravel(),
                         minlength=width * len(take)).reshape(len(take), width)
    nans_from_end = np.cumsum(kinds[:, ::-1] >= 2 * VALUE_KINDS.index("nan_canonical"), axis=1)
    held = []
    for i, w in enumerate(take):
        holds = tuple((signed_kind(VALUE_KINDS[k // 2], bool(k % 2)), int(n)) for k, n in enumerate(counts[i]) if n)
        short, suffix = w.expected - w.got, ()
        if short > 0 and w.got >= 0:
            lo, hi = int((nans_from_end[i] < short).sum()) + 1, int((nans_from_end[i] <= short).sum())
            suffix = (lo, hi) if lo <= hi else ()
        held.append(replace(w, holds=holds, short_suffix=suffix))
    return (*held, *wrong[len(take):])


def with_held_values(check: Check, logits: object) -> Check:
    """CHECK with what its wrong rows hold (held_values), when LOGITS is the input it counted, left as it was given:
    not where the kernel modified it or the input cannot be read back."""
    if not check.wrong_rows or not isinstance(logits, torch.Tensor) or any(
            p.kind in (INPUT_MODIFIED, PADDING_MODIFIED) for p in check.problems):
        return check
    try:
        return replace(check, wrong_rows=held_values(logits, check.wrong_rows))
    except Exception:  # noqa: BLE001 - what a row holds is evidence for the diagnosis, never a reason to fail a check
        return check
