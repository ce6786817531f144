"""The NaN predicate's rule: whole IEEE classes missed or counted, read from the class rows (CaseParams.row_classes)
and the NaN patterns of a case (CaseParams.nan_patterns), never from row labels; and every other wrong row whose
error is exactly what it holds of those kinds of value (WrongRow.holds): the values explain it, not its shape."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reports.diagnosis_base import Diagnosis, found, outside, vocab, wrong_checks
from verdict.record import NAN_KINDS, Check, TestRecord, ValueClass, WrongRow

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
    passed: frozenset[ValueClass] = frozenset()  # classes, NaN or not, whose rows count right
    whole: bool = True  # every wrong class row is off by all of its elements (a class counted or missed whole)

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
    missed, counted, passed, hits = set(), set(), set(), []
    partly, whole = False, True
    for r in records:
        for c in r.checks:
            if not c.params.row_classes or c.got_total is None:
                continue
            wrong = {w.row: w for w in c.wrong_rows}
            passed |= {v for i, v in enumerate(c.params.row_classes) if i not in wrong}
            for w in wrong.values():
                v = c.params.row_class(w.row)
                partly |= v is not None and 0 < w.got < w.expected
                whole &= v is not None and w.got == (0 if v.is_nan else vocab(c))
                if v is not None and (w.got == 0 < w.expected or w.got > w.expected):
                    (counted if w.got > w.expected else missed).add(v)
                    hits.append((r, c))
    right = frozenset(v for v in passed if v.is_nan)
    return ClassRows(frozenset(missed), frozenset(counted), partly, right, tuple(hits), frozenset(passed), whole)


@dataclass(frozen=True)
class Values:
    """What the class rows say one dtype's predicate does to each signed kind of value (VALUE_KINDS): counts it
    (a non-NaN kind), misses it (a NaN kind) or counts it right; kinds whose class rows disagree are `mixed`."""

    counted: frozenset[str]
    missed: frozenset[str]
    right: frozenset[str]

    @property
    def mixed(self) -> frozenset[str]:
        return (self.counted | self.missed) & self.right

    def error(self, w: WrongRow) -> int | None:
        """What the row's count is off by when the predicate does this to its values; None when the row's values
        are not recorded, or it holds a kind whose treatment the class rows do not tell (mixed, or not seen)."""
        held = dict(w.holds)
        known = self.counted | self.missed | self.right
        if not held or any(k not in known or k in self.mixed for k in held):
            return None
        return sum(held.get(k, 0) for k in self.counted) - sum(held.get(k, 0) for k in self.missed)


def _kinds(classes: frozenset[ValueClass], dtype: str) -> frozenset[str]:
    return frozenset(v.kind for v in classes if v.dtype == dtype and v.kind)


def _is_nan_kind(kind: str) -> bool:
    return kind[1:] in NAN_KINDS


def _values(rows: ClassRows) -> dict[str, Values]:
    """Per dtype, what its predicate does to each kind of value, where the class rows say it whole: every wrong
    class row counted or missed whole, only non-NaN kinds counted, only NaN kinds missed, and a NaN kind counting
    right beside any missed one (patterns missed, not the dtype, nor the positions)."""
    if rows.partly or not rows.whole:
        return {}
    out = {}
    for dtype in {v.dtype for v in rows.passed | rows.counted | rows.missed}:
        model = Values(_kinds(rows.counted, dtype), _kinds(rows.missed, dtype), _kinds(rows.passed, dtype))
        if ((model.counted or model.missed) and not any(map(_is_nan_kind, model.counted))
                and all(map(_is_nan_kind, model.missed))
                and (not model.missed or any(map(_is_nan_kind, model.right)))):
            out[dtype] = model
    return out


def _explained_by_values(c: Check, values: Mapping[str, Values]) -> bool:
    """Every wrong row of C whose values are recorded (at least one) is off by exactly what the predicate does to
    the kinds of value it holds."""
    model = values.get(c.params.dtype)
    held = [w for w in c.wrong_rows if w.holds]
    return model is not None and bool(held) and all(model.error(w) == w.got - w.expected for w in held)


def value_explained(records: Sequence[TestRecord]) -> list[tuple[TestRecord, Check]]:
    """The wrong checks whose rows are off by exactly what the class rows show the predicate counts or misses,
    row by row (the Inf, subnormals or signaling NaNs each row holds): a block or a position explains none of them."""
    values = _values(_class_rows(records))
    return [(r, c) for r, c in wrong_checks(records) if values and _explained_by_values(c, values)]


def _value_evidence(pairs: Sequence[tuple[TestRecord, Check]], values: Mapping[str, Values]) -> str:
    """How many checks the values explain, with one row's error spelt out as the kinds it holds."""
    c = pairs[0][1]
    w, model = next(w for w in c.wrong_rows if w.holds), values[c.params.dtype]
    held = dict(w.holds)
    parts = [f"{held[k]} {k}" for k in sorted(model.counted) if held.get(k)]
    parts += [f"{held[k]} {k} missed" for k in sorted(model.missed) if held.get(k)]
    return (f"{len(pairs)} other check(s) off by exactly the values their rows hold of those kinds, row by row, e.g. "
            f"{c.params.case_id} ({c.path}) row {w.row}: {w.got - w.expected:+d}, its {', '.join(parts)}")


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
    taken = {(r.id, id(c)) for r, c in hits}
    values = _values(rows)
    by_values = [(r, c) for r, c in wrong_checks(records)
                 if (r.id, id(c)) not in taken and values and _explained_by_values(c, values)]
    if by_values:
        parts.append(_value_evidence(by_values, values))
        hits += by_values
        taken |= {(r.id, id(c)) for r, c in by_values}
    if rows.pattern_specific() and not rows.counted and not specials and not rows.partly:
        short = [(r, c) for r, c in _short_of_missed(records, rows) if (r.id, id(c)) not in taken]
        if short:
            parts.append(f"{len(short)} other check(s) undercount rows whose NaNs include the missed patterns "
                         "(random patterns, or float('nan') cast to one of them)")
            hits += short
    return found("predicate", "the NaN predicate", "; ".join(parts), hits, bonus=1)
