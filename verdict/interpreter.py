"""Interpreter defects as the run's environment holds them: harness.preflight writes them, reports.diagnosis reads them.

One environment entry, ENV_KEY, holds "none found" or the defects joined by "; ", each `<dtype> `<expr>` <wrong>`,
e.g. "bf16 `x != x` is false for NaN, -NaN": the comparison a kernel writes, on a value of that dtype, and the
probe lanes where it gave the wrong answer.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

ENV_KEY = "Interpreter defects"
NONE_FOUND = "none found"
_SEPARATOR = "; "
_TEXT = re.compile(r"^(?P<dtype>\w+) `(?P<expr>[^`]+)` (?P<wrong>.+)$")


@dataclass(frozen=True)
class Defect:
    """One comparison the interpreter gets wrong for one dtype."""

    dtype: str  # fp32, fp16, bf16: as case records name dtypes
    expr: str  # the comparison as a kernel writes it, on the loaded value x
    wrong: str  # the probe lanes it answers wrongly, e.g. "is false for NaN, -NaN"

    @property
    def text(self) -> str:
        return f"{self.dtype} `{self.expr}` {self.wrong}"

    @property
    def about_nan(self) -> bool:
        """Whether it answers wrongly on a NaN lane: a NaN test written this way miscounts."""
        return "NaN" in self.wrong


def to_text(defects: Sequence[Defect]) -> str:
    return _SEPARATOR.join(d.text for d in defects) or NONE_FOUND


def from_text(value: str) -> tuple[Defect, ...]:
    """The defects an environment entry names; text of another shape names none."""
    found = (_TEXT.match(part.strip()) for part in value.split(_SEPARATOR))
    return tuple(Defect(m["dtype"], m["expr"], m["wrong"]) for m in found if m)
