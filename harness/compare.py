"""Bit-exact comparison of count tensors: integer equality plus dtype, shape and device, into a `Check`."""
from __future__ import annotations

from collections.abc import Sequence

import torch

from verdict.record import DEVICE_FAULT, PASS, REFUSED, SIDE_EFFECT, WRONG_COUNTS, CaseParams, Check, WrongRow

SHOWN_ROWS = 20  # wrong rows spelled out in a message; the rest are counted


def describe_input(x: object) -> str:
    """Shape, strides, storage offset, dtype and device type of an input: enough to rebuild the layout (the card is
    recorded apart, so the same case on another card reads the same)."""
    if not isinstance(x, torch.Tensor):
        return type(x).__name__
    return (f"shape {tuple(x.shape)}, strides {tuple(x.stride())}, offset {x.storage_offset()}, "
            f"{str(x.dtype).removeprefix('torch.')} on {x.device.type}")


def exception_text(exc: BaseException) -> str:
    """`Type: first line` of an exception: what a refusal or a fault is recorded and shown as."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}"


def failed_launch(exc: BaseException, params: CaseParams, path: str, expected: torch.Tensor, logits: object,
                  card: int | None) -> Check:
    """The check of a launch that raised on in-domain input: a device fault when the text names one, else a refusal."""
    from harness.backends import any_fault

    text = exception_text(exc)
    verdict = DEVICE_FAULT if any_fault(text) else REFUSED
    return Check(params, path, verdict, int(expected.sum()), None, card=card, input_desc=describe_input(logits),
                 refusal=text)


def compare_counts(
    got: object,
    expected: torch.Tensor,
    *,
    params: CaseParams,
    path: str,
    device_type: str,
    row_labels: Sequence[str] | None = None,
    side_effects: Sequence[str] = (),
    card: int | None = None,
    input_desc: str = "",
) -> Check:
    """Compare kernel counts with the CPU reference; never raises on a malformed result, it reports it."""
    expected_total = int(expected.sum())
    problems: list[str] = list(side_effects)

    def done(got_total: int | None, wrong: Sequence[WrongRow] = ()) -> Check:
        verdict = WRONG_COUNTS if wrong or got_total is None else (SIDE_EFFECT if problems else PASS)
        return Check(params, path, verdict, expected_total, got_total, tuple(problems), tuple(wrong), card,
                     input_desc)

    if not isinstance(got, torch.Tensor):
        problems.append(f"result is {type(got).__name__}, not a tensor")
        return done(None)
    if got.dtype != torch.int32:
        problems.append(f"dtype {got.dtype}, expected torch.int32")
    if tuple(got.shape) != tuple(expected.shape):
        problems.append(f"shape {tuple(got.shape)}, expected {tuple(expected.shape)}")
    if got.device.type != device_type:
        problems.append(f"device {got.device}, expected {device_type}")
    if got.device.type == "meta" or got.is_floating_point() or got.is_complex():
        problems.append("values are not readable integers" if got.device.type != "meta" else "values live on meta")
        return done(None)
    try:
        values = got.detach().cpu().to(torch.int64).reshape(-1)
    except Exception as exc:  # noqa: BLE001 - an exotic tensor must become a problem, not an exception
        problems.append(f"values cannot be read: {type(exc).__name__}: {exc}")
        return done(None)
    wrong: list[WrongRow] = []
    if values.numel() == expected.numel():
        want = expected.to(torch.int64).reshape(-1)
        for row in torch.nonzero(values != want).reshape(-1).tolist():
            label = row_labels[row] if row_labels is not None and row < len(row_labels) else ""
            wrong.append(WrongRow(row, int(want[row]), int(values[row]), label))
    elif not problems:
        problems.append(f"{values.numel()} counts for {expected.numel()} rows")
    return done(int(values.sum()), wrong)


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
