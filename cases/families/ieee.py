"""IEEE classes per dtype from raw bits: one class and sign per row (a wrong row names it), and mixed rows."""
from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from cases.anchor import ANCHOR_BLOCK_SIZE, ANCHOR_SEED, DTYPES
from cases.family import Built, ClassTable, Context, Family, params_of
from cases.formats import FloatFormat, fmt_of, from_bits, hex_bits
from cases.ieee import IEEE_CLASSES, IeeeClass, value_class
from cases.random_bits import generator
from reference import bits_reference
from verdict.record import CaseParams


@dataclass(frozen=True)
class IeeeCase:
    """`rows`: one class and sign per row; `mixed`: every class and sign scattered over each row."""

    dtype: str
    arrangement: str
    vocab: int
    seed: int = ANCHOR_SEED

    def __str__(self) -> str:
        return f"{self.dtype}-ieee-{self.arrangement}"


def _label(name: str, negative: bool, dtype: str, bits: str) -> str:
    return f"{'-' if negative else '+'}{name} {dtype} {bits}"


def _patterns(fmt: FloatFormat) -> list[tuple[IeeeClass, bool, int]]:
    """Every class at both signs, in row order: class, negative, bits."""
    return [(c, neg, c.bits(fmt, neg)) for c in IEEE_CLASSES for neg in (False, True)]


def build(case: IeeeCase) -> Built:
    fmt = fmt_of(case.dtype)
    patterns = _patterns(fmt)
    table = from_bits([bits for _, _, bits in patterns], fmt)
    if case.arrangement == "rows":
        x = table.unsqueeze(1).repeat(1, case.vocab)
        labels = [_label(c.name, neg, case.dtype, hex_bits(bits, fmt)) for c, neg, bits in patterns]
        return Built(x, bits_reference(x), labels)
    picks = torch.randint(0, len(patterns), (4, case.vocab), generator=generator(case.seed), device="cpu")
    x = table[picks]
    labels = []
    for r in range(picks.shape[0]):
        present = torch.bincount(picks[r], minlength=len(patterns)).tolist()
        held = sum(n for (c, _, _), n in zip(patterns, present) if c.is_nan)
        labels.append(f"mixed {case.dtype}: all {len(patterns)} class patterns, {held} NaNs among them")
    return Built(x, bits_reference(x), labels)


def params(case: IeeeCase) -> CaseParams:
    """The case's record; class rows carry each row's class as data (row_classes) for the diagnosis and summary."""
    made = params_of(case, (2 * len(IEEE_CLASSES) if case.arrangement == "rows" else 4, case.vocab),
                     case.arrangement, layout=case.arrangement)
    if case.arrangement != "rows":
        return made
    fmt = fmt_of(case.dtype)
    return replace(made, row_classes=tuple(value_class(bits, fmt) for _, _, bits in _patterns(fmt)))


def cases(context: Context) -> tuple[IeeeCase, ...]:
    return tuple(
        IeeeCase(dtype, arrangement, vocab)
        for dtype in DTYPES
        for arrangement, vocab in (("rows", 1000), ("mixed", 3 * ANCHOR_BLOCK_SIZE + 77))
    )


FAMILY = Family(
    "ieee", "nan_ieee", "IEEE value classes from raw bits, per row and mixed", cases, build, params,
    summary=ClassTable(tuple(c.name for c in IEEE_CLASSES), tuple(c.name for c in IEEE_CLASSES if c.is_nan)),
    order=30,
)
