"""The NaN predicate's rule: whole IEEE classes missed or counted, read from the class rows (CaseParams.row_classes)
and the NaN patterns of a case (CaseParams.nan_patterns), never from row labels."""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from reports.diagnosis_base import Diagnosis, found, outside, wrong_checks
from verdict.record import Check, TestRecord, ValueClass

# families whose NaNs are all float('nan') (the anchor's matrix): a kernel right there and short on random patterns
# misses patterns, not positions
CANONICAL_NAN_FAMILIES = ("matrix",)


@dataclass(frozen=True)
class ClassRows:
    """What the IEEE class rows (CaseParams.row_classes) say: classes missed (a row counts 0), counted (a non-NaN
    row counts), counted partly (positions, not patterns: a traversal), and NaN classes counted right."""

    missed: frozenset[ValueClass]
    counted: frozenset[ValueClass]
    partly: bool
    right: frozenset[ValueClass]
    hits: tuple[tuple[TestRecord, Check], ...]

    def pattern_specific(self) -> bool:
        """Every dtype with a missed class counts another NaN class right: patterns are missed, not the dtype."""
        return bool(self.missed) and all(any(r.dtype == v.dtype for r in self.right) for v in self.missed)

    def missed_sign(self) -> bool | None:
        """True (False) when every missed class is negative (positive) and, in each of their dtypes, a NaN of the
        other sign counts right: the sign bit decides, whatever else the row holds."""
        signs = {v.negative for v in self.missed}
        if len(signs) != 1:
            return None
        sign = next(iter(signs))
        fits = all(any(r.dtype == v.dtype and r.negative != sign for r in self.right) for v in self.missed)
        return sign if fits else None

    def explains(self, patterns: Sequence[ValueClass]) -> bool:
        """Every NaN pattern a case holds is one the class rows show missed (or of the sign they show missed)."""
        sign = self.missed_sign()
        return bool(patterns) and all(v in self.missed or (sign is not None and v.negative == sign)
                                      for v in patterns)


def _class_rows(records: Sequence[TestRecord]) -> ClassRows:
    missed, counted, right, hits = set(), set(), set(), []
    partly = False
    for r in records:
        for c in r.checks:
            if not c.params.row_classes or c.got_total is None:
                continue
            wrong = {w.row: w for w in c.wrong_rows}
            right |= {v for i, v in enumerate(c.params.row_classes) if v.is_nan and i not in wrong}
            for w in wrong.values():
                v = c.params.row_class(w.row)
                partly |= v is not None and 0 < w.got < w.expected
                if v is not None and (w.got == 0 < w.expected or w.got > w.expected):
                    (counted if w.got > w.expected else missed).add(v)
                    hits.append((r, c))
    return ClassRows(frozenset(missed), frozenset(counted), partly, frozenset(right), tuple(hits))


def _names(classes: frozenset[ValueClass]) -> str:
    return ", ".join(sorted(v.signed_name for v in classes)[:8])


def _pattern_evidence(rows: ClassRows) -> str:
    sign = rows.missed_sign()
    if sign is None:
        return f"NaN patterns missed: {_names(rows.missed)}"
    return (f"NaN patterns missed: {_names(rows.missed)}: every one {'negative' if sign else 'positive'} while "
            f"{'positive' if sign else 'negative'} NaNs count right (the sign bit decides)")


def _short_of_missed(records: Sequence[TestRecord], rows: ClassRows) -> list[tuple[TestRecord, Check]]:
    """Checks beyond the class rows that the missed classes explain: rows of random NaN patterns (which hold them
    too) that only undercount, and float('nan') rows whose NaNs (nan_patterns) are of a missed class. None when a
    float('nan') row fails whose NaNs the class rows count right, or are not recorded: then positions are missed."""
    taken = {(id(r), id(c)) for r, c in rows.hits}
    rest = [(r, c) for r, c in wrong_checks(records) if (id(r), id(c)) not in taken]
    canonical = [(r, c) for r, c in rest if r.family in CANONICAL_NAN_FAMILIES]
    if not all(rows.explains(c.params.nan_patterns) for _, c in canonical):
        return []
    return [(r, c) for r, c in rest if all(0 <= w.got < w.expected for w in c.wrong_rows)]


def predicate(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Whole IEEE classes missed (a row of one NaN class counts 0) or counted (a row of a non-NaN class counts),
    special values counted, or a float dtype the kernel accepted miscounted."""
    rows = _class_rows(records)
    hits, specials, dtypes = list(rows.hits), set(), set()
    for r, c in wrong_checks(records):
        if r.family == "special" and any(w.got > w.expected for w in c.wrong_rows):
            specials.add(f"special values {c.params.dtype}")
            hits.append((r, c))
        if outside(c) and c.params.layout.startswith("dtype-") and c.params.dtype.startswith(("float", "bfloat")):
            dtypes.add(c.params.dtype)
            hits.append((r, c))
    if not hits:
        return None
    parts = []
    if rows.counted or specials:
        counted = [*sorted(v.signed_name for v in rows.counted), *sorted(specials)]
        parts.append(f"non-NaN values counted: {', '.join(counted[:8])}")
    if rows.missed:
        parts.append(_pattern_evidence(rows))
    if dtypes:
        parts.append(f"{', '.join(sorted(dtypes))} accepted and miscounted (the predicate on that format)")
    if rows.pattern_specific() and not rows.counted and not specials and not rows.partly:
        short = _short_of_missed(records, rows)
        if short:
            parts.append(f"{len(short)} other check(s) undercount rows whose NaNs include the missed patterns "
                         "(random patterns, or float('nan') cast to one of them)")
            hits += short
    return found("predicate", "the NaN predicate", "; ".join(parts), hits, bonus=1)
