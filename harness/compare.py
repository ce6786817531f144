"""Bit-exact comparison of count tensors: integer equality plus dtype, shape and device."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import torch

SHOWN_ROWS = 20  # wrong rows spelled out in a message; the rest are counted


@dataclass(frozen=True)
class WrongRow:
    row: int
    expected: int
    got: int
    label: str = ""

    def as_dict(self) -> dict[str, object]:
        return {"row": self.row, "expected": self.expected, "got": self.got, "label": self.label}


@dataclass(frozen=True)
class Comparison:
    """Everything a report needs about one check; `ok` only when nothing at all differs."""

    case_id: str
    seed: int | None
    expected_total: int
    got_total: int | None
    problems: tuple[str, ...] = ()
    wrong_rows: tuple[WrongRow, ...] = field(default_factory=tuple)

    @property
    def ok(self) -> bool:
        return not self.problems and not self.wrong_rows

    def message(self) -> str:
        head = f"case {self.case_id}" + (f" (seed {self.seed})" if self.seed is not None else "")
        lines = [f"{head}: NaN counts differ from the CPU reference"]
        lines += [f"  {p}" for p in self.problems]
        if self.wrong_rows:
            lines.append(f"  {len(self.wrong_rows)} wrong row(s); expected total {self.expected_total}, got {self.got_total}")
            for w in self.wrong_rows[:SHOWN_ROWS]:
                extra = f"  [{w.label}]" if w.label else ""
                lines.append(f"    row {w.row}: expected {w.expected}, got {w.got}{extra}")
            if len(self.wrong_rows) > SHOWN_ROWS:
                lines.append(f"    ... and {len(self.wrong_rows) - SHOWN_ROWS} more")
        return "\n".join(lines)

    def as_dict(self) -> dict[str, object]:
        return {
            "case_id": self.case_id,
            "seed": self.seed,
            "expected_total": self.expected_total,
            "got_total": self.got_total,
            "problems": list(self.problems),
            "wrong_rows": [w.as_dict() for w in self.wrong_rows],
        }


def compare_counts(
    got: object,
    expected: torch.Tensor,
    *,
    device: str,
    case_id: str,
    seed: int | None = None,
    row_labels: Sequence[str] | None = None,
    side_effects: Sequence[str] = (),
) -> Comparison:
    """Compare kernel counts with the CPU reference; never raises on a malformed result, it reports it."""
    expected_total = int(expected.sum())
    problems: list[str] = list(side_effects)
    if not isinstance(got, torch.Tensor):
        problems.append(f"result is {type(got).__name__}, not a tensor")
        return Comparison(case_id, seed, expected_total, None, tuple(problems))
    if got.dtype != torch.int32:
        problems.append(f"dtype {got.dtype}, expected torch.int32")
    if tuple(got.shape) != tuple(expected.shape):
        problems.append(f"shape {tuple(got.shape)}, expected {tuple(expected.shape)}")
    if got.device.type != device:
        problems.append(f"device {got.device}, expected {device}")
    host = got.detach().cpu()
    if host.is_floating_point() or host.is_complex():
        got_total = None
        problems.append("values are not integers")
        return Comparison(case_id, seed, expected_total, got_total, tuple(problems))
    values = host.to(torch.int64).reshape(-1)
    got_total = int(values.sum())
    wrong: list[WrongRow] = []
    if values.numel() == expected.numel():
        want = expected.to(torch.int64).reshape(-1)
        for row in torch.nonzero(values != want).reshape(-1).tolist():
            label = row_labels[row] if row_labels is not None else ""
            wrong.append(WrongRow(row, int(want[row]), int(values[row]), label))
    return Comparison(case_id, seed, expected_total, got_total, tuple(problems), tuple(wrong))


def assert_comparison(comparison: Comparison) -> None:
    """Fail the calling test with the comparison's message, pointing at the case, not at this helper."""
    __tracebackhide__ = True
    if not comparison.ok:
        raise AssertionError(comparison.message())
