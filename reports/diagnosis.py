"""Name likely bug classes from the pattern of failures, with their evidence; "no known pattern" over a guess.

Each rule reads the records' data only (families, case ids, shapes, input layouts, wrong rows, the IEEE class of
each class row and the NaN patterns of a case, verdicts, problem kinds, test names), never their display text, and
returns a Diagnosis or nothing. A rule fires on a signature that the
bug class leaves and others do not: a per-block OR keeps counts between 1 and the number of blocks, a dropped
tail only hurts vocab sizes off the block, a predicate misses or counts whole IEEE classes, and so on; where a
signature needs a control (a case that passes), the rule asks for one. Categories are the planted bugs'
classes (tests/planted): predicate, traversal, offsets, accumulation, output, side effects, contract; plus
device (faults, crashes, timeouts no other rule explains), interpreter and unknown. An interpreter defect the
preflight measured (the run's environment, harness.preflight) comes first when the failures fit it: it is a
fact about the run, not a guess. Then the strongest diagnosis: most failing tests explained, rule order breaking
ties. Each diagnosis knows the failing checks its signature fits; one whose checks the stronger ones kept before
it explain already is dropped (a dropped tail also reads IEEE rows shorter than a block as 0: not a predicate
bug). Failing tests that no kept diagnosis explains are listed last as "no known pattern". The verdicts are
never changed here.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

from cases.anchor import ANCHOR_BLOCK_SIZE
from harness.target import POISON  # what the direct launch's output holds before the kernel runs
from reports.markup import esc
from verdict.interpreter import ENV_KEY as INTERPRETER_DEFECTS, from_text
from verdict.record import (COPIED, CRASH, DEVICE_FAULT, INPUT_MODIFIED, MALFORMED, PADDING_MODIFIED, REFUSED,
                            SHARED_OUTPUT, STRAY_WRITE, TIMEOUT, Check, TestRecord, Unwritten, ValueClass, WrongRow,
                            kind_of)

SHOWN_CASES = 5
INTERPRETER = "interpreter"  # a defect of the Triton interpreter the preflight measured: not the kernel's
CATEGORIES: tuple[str, ...] = (INTERPRETER, "launch", "predicate", "traversal", "offsets", "accumulation", "output",
                               "side effects", "contract", "device", "unknown")
NO_PATTERN = "no known pattern"
# classes of the kernel body: a pattern of these that only the wrapper path shows, while the direct launch of the same
# kernel counts the same cases right, is not the body's (ranked after the others, saying why)
KERNEL_BODY = frozenset({"predicate", "traversal", "accumulation"})


Failure = tuple[str, int]  # a failing test's id and the index of one failing check (-1: it failed without one)


@dataclass(frozen=True)
class Diagnosis:
    category: str  # one of CATEGORIES
    name: str
    evidence: str
    cases: tuple[str, ...]  # record ids (test name and parameters)
    weight: int  # failing tests explained: the strongest pattern comes first
    explains: frozenset[Failure] = frozenset()  # the failures its signature fits (not written to results.json)
    scope: str = ""  # what the evidence spans: shapes, dtypes, paths ("seen on 70001x33 only", "wrapper path only")
    thin: bool = False  # one shape or at most two checks: ranked below any diagnosis seen across shapes
    partial: bool = False  # the run stopped early (-x, an interrupt): the pattern is read from the tests that ran
    demoted: str = ""  # why it ranks after the others though its evidence is broad (e.g. the direct path counts right)

    def to_dict(self) -> dict[str, Any]:
        return {**{k: v for k, v in asdict(self).items() if k != "explains"}, "cases": list(self.cases)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Diagnosis:
        """A diagnosis as results.json holds it (older files lack scope, thin and partial)."""
        return cls(str(data.get("category", "unknown")), str(data.get("name", "")), str(data.get("evidence", "")),
                   tuple(data.get("cases") or ()), int(data.get("weight") or 0), scope=str(data.get("scope") or ""),
                   thin=bool(data.get("thin")), partial=bool(data.get("partial")),
                   demoted=str(data.get("demoted") or ""))


Hit = TestRecord | tuple[TestRecord, Check]  # a whole failing test, or one failing check of it
Rule = Callable[[Sequence[TestRecord]], "Diagnosis | None"]


# -- what the rules read -----------------------------------------------------------------------------------
def _failing(records: Sequence[TestRecord]) -> list[TestRecord]:
    return [r for r in records if r.failed]


def _wrong_checks(records: Sequence[TestRecord]) -> list[tuple[TestRecord, Check]]:
    """Checks with wrong rows, of failing tests."""
    return [(r, c) for r in _failing(records) for c in r.checks if c.wrong_rows]


def _passing_checks(records: Sequence[TestRecord]) -> list[Check]:
    return [c for r in records for c in r.checks if c.ok]


def _vocab(c: Check) -> int:
    return c.params.shape[-1] if len(c.params.shape) == 2 else 0


def _blocks(vocab: int) -> int:
    return max(1, -(-vocab // ANCHOR_BLOCK_SIZE))


def _offset(c: Check) -> int:
    return c.layout.storage_offset if c.layout is not None else 0


def _has_layout(c: Check) -> bool:
    return c.layout is not None


def _outside(c: Check) -> bool:
    """A contract case of input outside the documented domain (its counts are judged only when it is accepted)."""
    return not c.params.in_domain


def _example(c: Check) -> str:
    w = c.wrong_rows[0]
    return f"{c.params.case_id} ({c.path}) {w.describe()}"


def _ids(pairs: Sequence[tuple[TestRecord, Check]] | Sequence[TestRecord]) -> tuple[str, ...]:
    ids = [p[0].id if isinstance(p, tuple) else p.id for p in pairs]
    return tuple(dict.fromkeys(ids))


def _failures(hit: Hit) -> set[Failure]:
    """What one hit explains: its failing check, or every failing check of a whole test (the test, if none)."""
    if isinstance(hit, tuple):
        r, c = hit
        return {(r.id, next(i for i, x in enumerate(r.checks) if x is c))}
    return {(hit.id, i) for i, c in enumerate(hit.checks) if not c.ok} or {(hit.id, -1)}


def _found(category: str, name: str, evidence: str, hits: Sequence[Hit], bonus: int = 0) -> Diagnosis:
    ids = _ids(hits)
    return Diagnosis(category, name, evidence, ids, len(ids) + bonus, frozenset().union(*map(_failures, hits)))


# -- launch: which rows the wrapper's launch reaches -------------------------------------------------------------
# Index limits a launch runs into: a grid's y/z axis (65,535 on CUDA), and powers of two a batch split or an int16
# program id would stop at. A limit is named when the first wrong row is one of them or the nearest power of two.
LAUNCH_LIMITS: dict[int, str] = {65_535: "CUDA's grid y/z limit (65,535 programs)", 65_536: "2^16"}


def _ranges(rows: Sequence[int]) -> list[tuple[int, int]]:
    """Sorted row indices as [start, end) runs: what a kernel engineer reads first in a list of wrong rows."""
    runs: list[tuple[int, int]] = []
    for row in sorted(set(rows)):
        if runs and runs[-1][1] == row:
            runs[-1] = (runs[-1][0], row + 1)
        else:
            runs.append((row, row + 1))
    return runs


def _spell(runs: Sequence[tuple[int, int]], shown: int = 4) -> str:
    text = ", ".join(f"{a}" if b == a + 1 else f"{a}-{b - 1}" for a, b in runs[:shown])
    return text + (f" (+{len(runs) - shown} more runs)" if len(runs) > shown else "")


def _limit_name(k: int) -> str:
    """What row index k is to a launch: a known limit, a power of two, or the nearest power of two."""
    if k in LAUNCH_LIMITS:
        return LAUNCH_LIMITS[k]
    power = 1 << max(k.bit_length() - 1, 0)
    if k == power:
        return f"2^{power.bit_length() - 1}"
    near = min((power, power * 2), key=lambda p: abs(p - k))
    return f"near 2^{near.bit_length() - 1} ({near:,})"


MIN_ROW_LIMIT = 256  # below this, a wrong suffix of rows is as likely their contents (rows ordered by count)


def _suffix_from(c: Check) -> int | None:
    """The first wrong row k when every row below k is right and at least 90% of rows k..rows-1 are wrong (an
    unwritten output may hold a stale count that happens to be right), at least 2 of them, and k is large enough to
    be a launch's limit rather than the rows' contents."""
    if c.rows is None or not c.wrong_rows:
        return None
    k = min(w.row for w in c.wrong_rows)
    tail = c.rows - k
    if k < MIN_ROW_LIMIT or tail < 2 or len(c.wrong_rows) < 0.9 * tail:
        return None
    return k


def row_limit(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Every row from one index on is wrong and every row below it right, in every wrong check of a batch: the
    launch (its grid, a batch split or cap) stops at that index, whatever the row holds."""
    wrong = _wrong_checks(records)
    hits = [(r, c, k) for r, c in wrong if (k := _suffix_from(c)) is not None]
    if not hits:
        return None
    limits = sorted({k for _, _, k in hits})
    r, c, k = hits[0]
    paths = sorted({c.path for _, c, _ in hits})
    return _found("launch", f"rows from index {limits[0]:,} on never counted ({_limit_name(limits[0])}): the "
                  "launch stops there (grid size, batch split or cap)",
                  f"in {len(hits)} check(s) the rows from {', '.join(f'{x:,}' for x in limits)} on are wrong (at "
                  f"least 90%) and every row below right (path {'/'.join(paths)}), e.g. {c.params.case_id} ({c.path}) rows "
                  f"{k:,}-{(c.rows or 0) - 1:,} of {c.rows:,}: {c.wrong_rows[0].describe()}{_unwritten(hits)}",
                  [(r, c) for r, c, _ in hits], bonus=2)


def _unwritten(hits: Sequence[tuple[TestRecord, Check, int]]) -> str:
    """What the output slots past the limit say, from each check's evidence (Check.unwritten; a direct launch
    recorded before it existed writes into the harness's poisoned output, so it is observable)."""
    never, written, why = 0, 0, ""
    for _, c, k in hits:
        seen = c.unwritten or (Unwritten(True) if c.path == "direct" else None)
        rows = [w for w in c.wrong_rows if w.row >= k and (seen is None or w.row not in seen.blind_rows)]
        if seen is None or not seen.observable or not rows:
            why = why or (seen.why if seen is not None and seen.why else "not recorded")
        elif all(w.got == POISON for w in rows):
            never += 1
        else:
            written += 1
    if never:
        return f"; in {never} check(s) those rows still hold the poison the harness put there (never written)"
    if written:
        return "; those rows were written (they do not hold the poison the harness put there)"
    return f"; whether those rows were written cannot be told ({why})"


def every_kth_row(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Wrong rows spaced by one step k >= 2, with the rows between them right: a row index scaled or strided by k."""
    hits = []
    for r, c in _wrong_checks(records):
        rows = sorted(w.row for w in c.wrong_rows)
        steps = {b - a for a, b in zip(rows, rows[1:])}
        if len(rows) >= 3 and len(steps) == 1 and min(steps) >= 2:
            hits.append((r, c, min(steps)))
    if not hits:
        return None
    r, c, k = hits[0]
    return _found("traversal", f"every {k}th row wrong (a row index scaled or stepped by {k})",
                  f"{len(hits)} check(s) miscount rows spaced by {sorted({h[2] for h in hits})} with the rows "
                  f"between right, e.g. {c.params.case_id} ({c.path}) rows "
                  f"{_spell(_ranges([w.row for w in c.wrong_rows]))}", [(r, c) for r, c, _ in hits])


def _saturation(c: Check) -> int | None:
    """k when every wrong row counted 2^k - 1 (k >= 3) and expected more: a counter that clamps at its width."""
    got = {w.got for w in c.wrong_rows}
    if len(got) != 1:
        return None
    value = next(iter(got))
    k = (value + 1).bit_length() - 1
    return k if k >= 3 and value == (1 << k) - 1 and all(w.expected > value for w in c.wrong_rows) else None


def saturated(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Two or more wrong rows, all counting the same 2^k - 1 where more were due (one row could be chance)."""
    hits = [(r, c, k) for r, c in _wrong_checks(records) if (k := _saturation(c)) is not None]
    if not hits or len({k for _, _, k in hits}) != 1 or sum(len(c.wrong_rows) for _, c, _ in hits) < 2:
        return None
    r, c, k = hits[0]
    return _found("accumulation", f"counts saturate at 2^{k} - 1 ({(1 << k) - 1:,}): a clamped or {k}-bit counter",
                  f"every wrong row of {len(hits)} check(s) counts {(1 << k) - 1:,} where more NaNs were due, e.g. "
                  f"{_example(c)}", [(r, c) for r, c, _ in hits], bonus=1)


def _constant_offset(c: Check) -> int | None:
    diffs = {w.got - w.expected for w in c.wrong_rows}
    return next(iter(diffs)) if len(diffs) == 1 and len(c.wrong_rows) >= 2 else None


def off_by_constant(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Every wrong row of every check is off by the same amount: one element (or lane) too many or too few."""
    wrong = _wrong_checks(records)
    offs = [(r, c, d) for r, c in wrong if (d := _constant_offset(c)) is not None]
    if not offs or len(offs) != len(wrong) or len({d for _, _, d in offs}) != 1:
        return None
    d = offs[0][2]
    return _found("traversal", f"every wrong count off by {d:+d} (one element or lane too {'many' if d > 0 else 'few'}"
                  ": a bound or mask off by one, or a fixed element counted)",
                  f"{len(offs)} check(s), every wrong row off by {d:+d}, e.g. {_example(offs[0][1])}",
                  [(r, c) for r, c, _ in offs])


def garbage(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Counts no traversal can give (negative, or more than the row holds) that are not the harness's poison:
    uninitialised memory or another buffer read back as the result."""
    hits = [(r, c) for r, c in _wrong_checks(records) if _vocab(c) and any(
        (w.got < 0 or w.got > _vocab(c)) and w.got != POISON and not 0 <= w.got - POISON <= _vocab(c)
        and w.expected <= EXACT_IN_HALF for w in c.wrong_rows)]  # past 2048, an accumulator's overflow
    if not hits:
        return None
    return _found("output", "garbage counts (negative or more than the row holds): an output never written, or "
                  "another buffer returned", f"{len(hits)} check(s), e.g. {_example(hits[0][1])}", hits)


# -- accumulation ------------------------------------------------------------------------------------------
def _or_like(c: Check, w: WrongRow) -> bool:
    """The count a per-block OR gives: at least 1 and at most one per block, where more NaNs were due."""
    return 1 <= w.got <= _blocks(_vocab(c)) < w.expected


def per_block_or(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Every wrong row counts between 1 and the blocks per row while more NaNs are there: a per-block OR
    (int1 flags summed where int1 sums are not widened, or max for sum), not a count."""
    wrong = _wrong_checks(records)
    hits = [(r, c) for r, c in wrong if _vocab(c) and all(_or_like(c, w) for w in c.wrong_rows)]
    if len(hits) < 2 or len(hits) * 2 < len(wrong):
        return None
    return _found("accumulation", "flags summed as int1 (a per-block OR, not a count)",
                  f"{len(hits)} of {len(wrong)} wrong checks count at least 1 and at most one NaN per "
                  f"{ANCHOR_BLOCK_SIZE}-wide block, e.g. {_example(hits[0][1])}", hits)


EXACT_IN_HALF = 2048  # every count up to 2^11 is exact in fp16 (bf16: 256); a float accumulator rounds past it


def _half_float(n: int) -> bool:
    """n is a value fp16 holds exactly (at most 11 significant bits; bf16's 8 are a subset)."""
    return n >= 0 and n % (1 << max(0, n.bit_length() - 11)) == 0


def _rounded_or_overflowed(c: Check, w: WrongRow) -> bool:
    """A count a float accumulator gives: a value fp16 or bf16 holds, within bf16's rounding (2^-8 relative) of a
    count past 2048, or an overflow read back as a negative value (not the harness's poison, nor poison plus a count);
    a count off by a few elements of the row (an offset, a mask) is neither."""
    poisoned = 0 <= w.got - POISON <= max(_vocab(c), 1)
    rounded = _half_float(w.got) and abs(w.got - w.expected) <= w.expected / 256
    return w.expected > EXACT_IN_HALF and not poisoned and (rounded or w.got < 0)


def narrow_accumulator(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Only rows with many NaNs are wrong, while rows with few are right: the count lost past its type's range
    (magnitude rows: every wrong row past 2048; elsewhere: rounded to a float's spacing or overflowed)."""
    hits = [(r, c) for r, c in _wrong_checks(records)
            if (r.family == "magnitudes" and all(w.expected > EXACT_IN_HALF for w in c.wrong_rows))
            or all(_rounded_or_overflowed(c, w) for w in c.wrong_rows)]
    if not hits:
        return None
    smallest = min(w.expected for _, c in hits for w in c.wrong_rows)
    return _found("accumulation", "narrow or float accumulator (counts past its range are lost)",
                  f"only rows with many NaNs are wrong (smallest wrong count {smallest}), e.g. "
                  f"{_example(hits[0][1])}", hits, bonus=1)


# -- offsets -----------------------------------------------------------------------------------------------
def _past_2_31(c: Check, w: WrongRow) -> bool:
    """The row's last element lies past 2^31 elements from its storage's start (a 32-bit offset wraps there)."""
    start = c.layout.row_start(w.row) if c.layout is not None else None
    return start is not None and start + max(_vocab(c), 1) - 1 >= 1 << 31


def big_offsets(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Cases with rows past 2^31 elements kill the process or fault, or miscount exactly those rows."""
    died = [r for r in _failing(records) if r.family == "bigoffset" and r.verdict in (CRASH, DEVICE_FAULT, TIMEOUT)]
    far = [(r, c) for r, c in _wrong_checks(records) if r.family == "bigoffset"
           and all(_past_2_31(c, w) for w in c.wrong_rows)]
    hits = [*died, *far]
    if not hits:
        return None
    how = f"{len(died)} ended in {', '.join(sorted({r.verdict for r in died}))}" if died else ""
    rows = f"{len(far)} miscount only the rows past 2^31 (e.g. {_example(far[0][1])})" if far else ""
    return _found("offsets", "32-bit row offsets (rows past 2^31 elements read or fault elsewhere)",
                  f"cases whose rows start past 2^31 elements: {'; '.join(p for p in (how, rows) if p)}", hits)


def storage_offset(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Only views that start inside their storage miscount, while views at its start pass."""
    wrong = [(r, c) for r, c in _wrong_checks(records) if not _outside(c)]  # a check without a layout: no veto
    at_start = [c for c in _passing_checks(records) if _offset(c) == 0 and _has_layout(c)]
    if not wrong or not at_start or any(_offset(c) == 0 for _, c in wrong if _has_layout(c)):
        return None
    offsets = sorted({_offset(c) for _, c in wrong if _has_layout(c)})
    paths = sorted({c.path for _, c in wrong})
    fine = sorted({c.path for c in _passing_checks(records) if _offset(c) > 0} - set(paths))
    return _found("offsets", "the view's storage offset ignored (rows read from the storage's start)",
                  f"only inputs that start inside their storage miscount (offsets {offsets}, path "
                  f"{'/'.join(paths)}{f'; the {fine[0]} path counts them right' if fine else ''}), e.g. "
                  f"{_example(wrong[0][1])}", wrong)


# families whose NaNs are all float('nan') (the anchor's matrix): a kernel right there and short on random patterns
# misses patterns, not positions
CANONICAL_NAN_FAMILIES = ("matrix",)


# -- the NaN predicate -------------------------------------------------------------------------------------
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
    rest = [(r, c) for r, c in _wrong_checks(records) if (id(r), id(c)) not in taken]
    canonical = [(r, c) for r, c in rest if r.family in CANONICAL_NAN_FAMILIES]
    if not all(rows.explains(c.params.nan_patterns) for _, c in canonical):
        return []
    return [(r, c) for r, c in rest if all(0 <= w.got < w.expected for w in c.wrong_rows)]


def predicate(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Whole IEEE classes missed (a row of one NaN class counts 0) or counted (a row of a non-NaN class counts),
    special values counted, or a float dtype the kernel accepted miscounted."""
    rows = _class_rows(records)
    hits, specials, dtypes = list(rows.hits), set(), set()
    for r, c in _wrong_checks(records):
        if r.family == "special" and any(w.got > w.expected for w in c.wrong_rows):
            specials.add(f"special values {c.params.dtype}")
            hits.append((r, c))
        if _outside(c) and c.params.layout.startswith("dtype-") and c.params.dtype.startswith(("float", "bfloat")):
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
    return _found("predicate", "the NaN predicate", "; ".join(parts), hits, bonus=1)


# -- traversal ---------------------------------------------------------------------------------------------
_SHAPE_FAMILIES = ("matrix", "shapes", "sweep", "magnitudes")


def _masked_counted(c: Check) -> bool:
    """Each wrong row of a vocab off the block counts exactly the masked lanes of its last block too."""
    v = _vocab(c)
    return bool(v % ANCHOR_BLOCK_SIZE) and all(w.got - w.expected == _blocks(v) * ANCHOR_BLOCK_SIZE - v
                                         for w in c.wrong_rows)


def _tail_dropped(c: Check) -> bool:
    """The counts of a kernel that reads whole blocks only: each wrong row of a vocab off the block is short by at
    most the last partial block and holds no more than the whole blocks; rows shorter than a block count nothing."""
    v = _vocab(c)
    if not v % ANCHOR_BLOCK_SIZE or c.problems or (v < ANCHOR_BLOCK_SIZE and c.got_total != 0):
        return False
    return all(0 < w.expected - w.got <= v % ANCHOR_BLOCK_SIZE and w.got <= v - v % ANCHOR_BLOCK_SIZE
               for w in c.wrong_rows)


def _elsewhere(records: Sequence[TestRecord], fits: Callable[[Check], bool]) -> list[tuple[TestRecord, Check]]:
    """Wrong checks outside the shape families whose rows fit a tail signature too (IEEE rows, contract views...)."""
    return [(r, c) for r, c in _wrong_checks(records) if r.family not in _SHAPE_FAMILIES and fits(c)]


def _too(more: Sequence[tuple[TestRecord, Check]]) -> str:
    return f"; {len(more)} wrong check(s) of other families fit it too, e.g. {_example(more[0][1])}" if more else ""


def tail(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Only vocab sizes off the block miscount while multiples pass, or the excess is exactly the masked lanes;
    it explains every other wrong check its signature fits (rows shorter than a block read as 0, say)."""
    wrong = [(r, c) for r, c in _wrong_checks(records) if r.family in _SHAPE_FAMILIES]
    if not wrong:
        return None
    masked = [(r, c) for r, c in wrong if _masked_counted(c)]
    ragged = [(r, c) for r, c in wrong if _vocab(c) % ANCHOR_BLOCK_SIZE]
    multiples_pass = [c for c in _passing_checks(records) if c.params.family in _SHAPE_FAMILIES
                      and _vocab(c) and _vocab(c) % ANCHOR_BLOCK_SIZE == 0]
    if len(masked) == len(wrong):
        more = _elsewhere(records, _masked_counted)
        return _found("traversal", "the last, partial block of a row (masked lanes counted)",
                      f"each wrong row counts exactly the masked lanes of its last block too ({len(masked)} "
                      f"checks), e.g. {_example(masked[0][1])}{_too(more)}", [*masked, *more], bonus=1)
    if len(ragged) != len(wrong) or not multiples_pass:
        return None
    more = _elsewhere(records, _tail_dropped)
    return _found("traversal", "the last, partial block of a row (mask or loop bound)",
                  f"only vocab sizes that are not a multiple of {ANCHOR_BLOCK_SIZE} miscount ({len(ragged)} checks), "
                  f"e.g. {_example(ragged[0][1])}; {multiples_pass[0].params.case_id} (a multiple) passes{_too(more)}",
                  [*ragged, *more])


def block_sums(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Rows longer than one block lose or repeat whole blocks, while rows within one block pass."""
    wrong = [(r, c) for r, c in _wrong_checks(records) if r.family in ("matrix", "shapes")]
    long = [(r, c) for r, c in wrong if _vocab(c) > ANCHOR_BLOCK_SIZE]
    short_pass = [c for c in _passing_checks(records) if c.params.family in ("matrix", "shapes")
                  and 1 < _vocab(c) <= ANCHOR_BLOCK_SIZE]
    if not long or len(long) != len(wrong) or not short_pass:
        return None
    return _found("traversal", "multi-block rows: blocks lost, overwritten or stepped wrong",
                  f"only rows longer than one {ANCHOR_BLOCK_SIZE}-block miscount ({len(long)} checks), "
                  f"e.g. {_example(long[0][1])}; "
                  f"{short_pass[0].params.case_id} passes", long)


def unread_lanes(records: Sequence[TestRecord]) -> Diagnosis | None:
    """A row of nothing but NaNs counts fewer than its length (more than a per-block OR would): lanes never read."""
    hits = [(r, c, w) for r, c in _wrong_checks(records) if _vocab(c) and r.family != "magnitudes"
            for w in c.wrong_rows
            if w.expected == _vocab(c) and _blocks(_vocab(c)) < w.got < w.expected]
    if not hits:
        return None
    r, c, w = hits[0]
    return _found("traversal", "elements of each row never read (loop step, tile width or mask)",
                  f"all-NaN rows count fewer than their length, e.g. {c.params.case_id} ({c.path}) row {w.row}: "
                  f"{w.got} of {w.expected}", [(r, c) for r, c, _ in hits])


def _all_nan_rows(records: Sequence[TestRecord]) -> list[tuple[TestRecord, Check, WrongRow]]:
    """Wrong rows that hold nothing but NaNs (they expect their whole length), of at least 4 elements."""
    return [(r, c, w) for r, c in _wrong_checks(records) if _vocab(c) >= 4 and r.family != "magnitudes"
            for w in c.wrong_rows if w.expected == _vocab(c)]


def half_the_elements(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Every wrong all-NaN row counts exactly half its length: half of each row's elements are never tested (one
    half of every two-element load, every other element, or half the row); it explains every undercounting check."""
    full = _all_nan_rows(records)
    if not full or any(w.got not in (_vocab(c) // 2, (_vocab(c) + 1) // 2) for _, c, w in full):
        return None
    hits = [(r, c) for r, c in _wrong_checks(records) if all(0 <= w.got < w.expected for w in c.wrong_rows)]
    r, c, w = full[0]
    return _found("traversal", "half of each row's elements never tested (every other element, one half of each "
                  "two-element load, or half the row)",
                  f"every wrong all-NaN row counts exactly half its length ({len(full)} rows), e.g. "
                  f"{c.params.case_id} ({c.path}) row {w.row}: {w.got} of {w.expected}; other wrong rows undercount",
                  hits)


def padding(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Padded rows (NaN padding) count more than their vocab holds: the padding is read (row stride)."""
    hits = [(r, c) for r, c in _wrong_checks(records) if (r.family == "padded" or c.params.layout == "padded")
            and any(w.got > w.expected for w in c.wrong_rows)]
    if not hits:
        return None
    return _found("traversal", "row stride (padding counted)",
                  f"rows whose stride exceeds vocab count their NaN padding ({len(hits)} checks), e.g. "
                  f"{_example(hits[0][1])}", hits)


def column_stride(records: Sequence[TestRecord]) -> Diagnosis | None:
    hits = [(r, c) for r, c in _wrong_checks(records) if c.params.layout == "transposed"]
    if not hits:
        return None
    return _found("traversal", "column stride ignored (a non-unit inner stride read as contiguous)",
                  f"a transposed view was counted, wrongly, instead of refused: {_example(hits[0][1])}", hits)


def stream_order(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Counts read on the caller's stream are wrong while the same kernel counts right after a device-wide
    synchronize: its work is not ordered after the caller's writes, or its results not before the caller's reads."""
    hits = [(r, c) for r, c in _wrong_checks(records) if c.params.layout == "stream"]
    controls = [c for c in _passing_checks(records) if c.params.layout not in ("stream", "card")]
    if not hits or not controls:
        return None
    return _found("device", "stream order broken (work on another stream without waiting for the caller's, or "
                  "results the caller reads before they are written)",
                  f"counts read on the caller's stream without a device-wide synchronize are wrong "
                  f"({len(hits)} checks), while {len(controls)} checks read after a synchronize pass: "
                  f"{_example(hits[0][1])}", hits)


def graph_replay(records: Sequence[TestRecord]) -> Diagnosis | None:
    """A call captured in a device graph replays wrong counts while eager calls count right: work the call did
    on the host (a cache, a plan read from the data) or skipped is not in the graph."""
    hits = [(r, c) for r, c in _wrong_checks(records) if c.params.layout == "graph"]
    controls = [c for c in _passing_checks(records) if c.params.layout != "graph"]
    if not hits or not controls:
        return None
    return _found("device", "graph replay returns stale counts (part of the call ran on the host or was skipped "
                  "while captured)", f"replayed after the input was refilled, the captured call counts the old "
                  f"contents, while {len(controls)} eager checks pass: {_example(hits[0][1])}", hits)


def square(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Only square inputs miscount while other shapes pass: rows and columns swapped when they cannot be told apart."""
    wrong = _wrong_checks(records)
    sq = [(r, c) for r, c in wrong if len(c.params.shape) == 2 and c.params.shape[0] == c.params.shape[1] > 1]
    others_pass = [c for c in _passing_checks(records) if len(c.params.shape) == 2
                   and c.params.shape[0] != c.params.shape[1]]
    if not sq or len(sq) != len(wrong) or not others_pass:
        return None
    return _found("traversal", "square inputs: rows and columns swapped (the layout guessed from the shape)",
                  f"only square inputs miscount ({len(sq)} checks), e.g. {_example(sq[0][1])}; "
                  f"{others_pass[0].params.case_id} passes", sq)


# -- output ------------------------------------------------------------------------------------------------
def _has(c: Check, *kinds: str) -> bool:
    """The check recorded a problem of one of these kinds (Problem.kind: data, not its words)."""
    return any(kind_of(p) in kinds for p in c.problems)


def output(records: Sequence[TestRecord]) -> Diagnosis | None:
    """The store, not the count: rows left holding the poison, poison plus the count (added into the output),
    stores into the guard slots around the output, or a malformed result for input in the domain."""
    unwritten, added, stray, malformed = [], [], [], []
    for r in _failing(records):
        for c in r.checks:
            if any(w.got == POISON for w in c.wrong_rows):
                unwritten.append(r)
            elif c.wrong_rows and all(0 <= w.got - POISON <= max(_vocab(c), 1) for w in c.wrong_rows
                                      if w.got != w.expected):
                added.append(r)
            if _has(c, STRAY_WRITE):
                stray.append(r)
            if not _outside(c) and _has(c, MALFORMED):
                malformed.append(r)
    parts = [(unwritten, "rows never written (the poison put there is still there)"),
             (added, "counts added to what the output held (poison + count): accumulated, not stored"),
             (stray, "stores outside the output (the guard slots around it changed)"),
             (malformed, "a malformed result (dtype, shape, device or layout)")]
    hits = [r for group, _ in parts for r in group]
    if not hits:
        return None
    first = next(r for r in hits)
    detail = next((p for c in first.checks for p in c.problems), "") or _example(
        next(c for c in first.checks if c.wrong_rows))
    return _found("output", "the output: " + "; ".join(text for group, text in parts if group),
                  f"{len(_ids(hits))} test(s), e.g. {first.id}: {detail}", hits, bonus=1)


def stale_outputs(records: Sequence[TestRecord]) -> Diagnosis | None:
    """A later call's counts are an earlier call's (or one buffer is handed out twice): results reused across
    calls, by a cached buffer or a cache keyed on the input's address."""
    hits, shared_seen = [], False
    for r in _failing(records):
        shared = any(kind_of(p) == SHARED_OUTPUT for c in r.checks for p in c.problems)  # one tensor, two calls
        steps = sorted((c for c in r.checks if c.params.buffer_step is not None), key=lambda c: c.params.buffer_step)
        first_ok = bool(steps) and steps[0].ok and any(not c.ok for c in steps[1:])
        if shared or first_ok:
            hits.append(r)
            shared_seen = shared_seen or shared
    if not hits:
        return None
    how = "one output buffer handed back to two calls" if shared_seen else \
        "the first call counts right and later calls on the same buffer or shape do not"
    return _found("output", "results reused across calls (a cached output, or a cache keyed on the address)",
                  f"{how} ({len(hits)} test(s)), e.g. {hits[0].id}", hits, bonus=1)


# -- side effects and the contract -------------------------------------------------------------------------
def input_modified(records: Sequence[TestRecord]) -> Diagnosis | None:
    hits = [(r, p) for r in _failing(records) for c in r.checks for p in c.problems
            if kind_of(p) in (INPUT_MODIFIED, PADDING_MODIFIED) and not _outside(c)]
    if not hits:
        return None
    padding = any(kind_of(p) == PADDING_MODIFIED for _, p in hits)
    what = "input or its row padding modified" if padding else "input modified"
    return _found("side effects", f"side effects: {what}", f"{len(_ids([r for r, _ in hits]))} test(s), e.g. "
                  f"{hits[0][0].id}: {hits[0][1]}", [r for r, _ in hits])


def copies(records: Sequence[TestRecord]) -> Diagnosis | None:
    hits = [(r, p) for r in _failing(records) for c in r.checks for p in c.problems if kind_of(p) == COPIED]
    if not hits:
        return None
    return _found("contract", "padded rows copied instead of read in place",
                  f"e.g. {hits[0][0].id}: {hits[0][1]}", [r for r, _ in hits])


def rank_accepted(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Input of another rank counted as if it were 2-D: neither refused nor counted exactly."""
    hits = [(r, c) for r in _failing(records) for c in r.checks
            if _outside(c) and c.params.layout.startswith("rank-") and not c.ok]
    if not hits:
        return None
    c = hits[0][1]
    detail = "; ".join(c.problems) or (c.wrong_rows[0].describe() if c.wrong_rows else c.verdict)
    return _found("contract", "input of another rank accepted and answered wrongly (refuse it, or count it exactly)",
                  f"{len(hits)} case(s), e.g. {c.params.case_id}: {detail}", hits)


def empty_inputs(records: Sequence[TestRecord]) -> Diagnosis | None:
    """An in-domain input with no rows or no vocab (a zero in its shape) answered wrongly or refused."""
    hits = [(r, c) for r in _failing(records) for c in r.checks
            if not c.ok and c.params.in_domain and len(c.params.shape) == 2 and 0 in c.params.shape]
    if not hits:
        return None
    c = hits[0][1]
    detail = "; ".join(map(str, c.problems)) or c.refusal or c.verdict
    return _found("contract", "empty batches or a zero vocab mishandled (expected an empty or zero int32 result)",
                  f"{len(hits)} check(s), e.g. {c.params.case_id} ({c.path}): {detail[:200]}", hits,
                  bonus=1)  # beside "the output" on the same checks, the narrower reading wins


def refused(records: Sequence[TestRecord]) -> Diagnosis | None:
    hits = [r for r in _failing(records) if r.verdict == REFUSED]
    if not hits:
        return None
    detail = next((c.refusal for c in hits[0].checks if c.refusal), "")
    return _found("contract", "in-domain input refused (an exception where counts were due)",
                  f"{len(hits)} test(s), e.g. {hits[0].id}: {detail}", hits)


# -- the interpreter: a defect the preflight measured (the run's environment), not a guess ----------------------
def _counts_none(c: Check) -> bool:
    """A check of input with NaNs that counted none of them, and found nothing else wrong."""
    return (not c.problems and (c.expected_total or 0) > 0 and c.got_total == 0
            and all(w.got == 0 for w in c.wrong_rows))


def interpreter(records: Sequence[TestRecord], environment: Mapping[str, str]) -> Diagnosis | None:
    """The preflight found a dtype's NaN comparison wrong under this interpreter, the kernel counts no NaN of that
    dtype in any check, and another dtype counts right: what a kernel comparing the loaded value gives here."""
    defects = [d for d in from_text(environment.get(INTERPRETER_DEFECTS, "")) if d.about_nan]
    broken = {d.dtype for d in defects}
    with_nans = [(r, c) for r in records for c in r.checks
                 if c.params.dtype in broken and (c.expected_total or 0) > 0 and c.got_total is not None]
    hits = [(r, c) for r, c in with_nans if not c.ok]
    controls = [c for c in _passing_checks(records)
                if c.params.dtype and c.params.dtype not in broken and (c.expected_total or 0) > 0]
    if not hits or not controls or not all(_counts_none(c) for _, c in with_nans):
        return None
    seen = sorted({c.params.dtype for _, c in hits})
    dtypes = "/".join(seen)
    flavour = environment.get("Triton") or "Triton"  # harness.environment's entry: "triton 3.9.0", "triton-ascend ..."
    failing = sum(1 for r in _failing(records) for c in r.checks if not c.ok)
    share = "every failing check is" if len(hits) == failing else f"{len(hits)} of {failing} failing checks are"
    measured = "; ".join(d.text for d in defects if d.dtype in seen)
    name = f"{dtypes} NaN comparison under the {flavour} interpreter"
    return _found(INTERPRETER, f"{name} (its defect, not the kernel's)",
                  f"{name} (measured at start: {measured}): "
                  f"{share} a {dtypes} input with its NaNs counted short, to 0 (e.g. {_example(hits[0][1])}), "
                  f"while {controls[0].params.case_id} counts right. The failures stand: "
                  "judge on a device or upcast to fp32 before comparing", hits)


# -- what the process did ----------------------------------------------------------------------------------
def _by_verdict(verdict: str, name: str) -> Rule:
    def rule(records: Sequence[TestRecord]) -> Diagnosis | None:
        explained = set(big.cases) if (big := big_offsets(records)) else set()
        hits = [r for r in _failing(records) if r.verdict == verdict and r.id not in explained]
        if not hits:
            return None
        first = hits[0]
        detail = first.message.splitlines()[0][:200] if first.message else ""
        return _found("device", name, f"{len(hits)} test(s), e.g. {first.id}: {detail}", hits)

    rule.__name__ = f"verdict_{verdict}"
    return rule


# Rule order breaks ties in weight: the more specific signature first.
RULES: tuple[Rule, ...] = (
    row_limit, big_offsets, storage_offset, per_block_or, predicate, narrow_accumulator, half_the_elements, tail,
    block_sums, unread_lanes, padding, square, column_stride, every_kth_row, saturated, off_by_constant, garbage,
    stream_order, graph_replay, stale_outputs, empty_inputs, output, input_modified, copies, rank_accepted,
    refused, _by_verdict(DEVICE_FAULT, "device fault"), _by_verdict(CRASH, "process crash"),
    _by_verdict(TIMEOUT, "timeout (a hung kernel)"),
)


def _drop_explained(ranked: Sequence[Diagnosis]) -> list[Diagnosis]:
    """Drop each diagnosis whose failures the stronger ones kept before it explain already: its evidence is theirs."""
    kept: list[Diagnosis] = []
    explained: set[Failure] = set()
    for d in ranked:
        if not d.explains <= explained:
            kept.append(d)
            explained |= d.explains
    return kept


def _shape(shape: Sequence[int]) -> str:
    return "x".join(map(str, shape)) or "scalar"


def _only(name: str, seen: set[str], others_pass: bool) -> str:
    return f"{name} {next(iter(seen))} only" + (" (the others count the same cases right)" if others_pass else "")


def scoped(d: Diagnosis, records: Sequence[TestRecord], partial: bool) -> Diagnosis:
    """D with what its evidence spans: shapes, dtypes and paths of the checks it explains, whether one path or
    dtype alone fails while the others pass the same cases, and thin when it rests on one shape or two checks."""
    by_id = {r.id: r for r in records}
    checks = [by_id[t].checks[i] for t, i in d.explains if t in by_id and i >= 0]
    support = len(d.explains)
    shapes = {_shape(c.params.shape) for c in checks if c.params.shape}
    dtypes = {c.params.dtype for c in checks if c.params.dtype}
    paths = {c.path for c in checks if c.path}
    failing_cases = {c.params.case_id for c in checks}
    passing = [c for c in _passing_checks(records) if c.params.case_id in failing_cases]
    parts = [f"{support} failing check(s)" if checks else f"{support} failing test(s)"]
    if shapes:
        parts.append(f"seen on {next(iter(shapes))} only" if len(shapes) == 1 else f"{len(shapes)} shapes")
    if len(dtypes) == 1 and len({c.params.dtype for c in _passing_checks(records) if c.params.dtype} - dtypes):
        parts.append(_only("dtype", dtypes, False))
    if len(paths) == 1 and any(c.path not in paths for c in passing):
        parts.append(_only("path", paths, True))
    thin = support <= 2 or len(shapes) == 1
    demoted = ""
    if d.category in KERNEL_BODY and paths == {"wrapper"} and any(c.path == "direct" for c in passing):
        demoted = ("the direct launch of the same kernel counts the same cases right: the wrapper (its launch, "
                   "buffers or caching), not the kernel body")
    return replace(d, scope=", ".join(parts), thin=thin, partial=partial, demoted=demoted)


def diagnose(records: Sequence[TestRecord], *, environment: Mapping[str, str] | None = None,
             partial: bool = False) -> list[Diagnosis]:
    """A measured interpreter defect first, then every rule that fires, strongest first (a pattern seen on one shape
    or two checks after those seen across shapes), less those a stronger one explains; failing tests no kept
    diagnosis explains close the list as "no known pattern". partial: the run stopped early (-x): each item says so."""
    records = sorted(records, key=lambda r: r.nodeid)  # the same records in any order (xdist, merged shards) agree
    failing = _failing(records)
    if not failing:
        return []
    found = [scoped(d, records, partial) for rule in RULES if (d := rule(records)) is not None]
    order = {d.name: i for i, d in enumerate(found)}
    found.sort(key=lambda d: (bool(d.demoted), d.thin, -d.weight, order[d.name]))
    measured = interpreter(records, environment or {})
    kept = _drop_explained([scoped(measured, records, partial), *found] if measured else found)
    explained = {case for d in kept for case in d.cases}
    rest = [r for r in failing if r.id not in explained]
    if rest:
        kept.append(Diagnosis("unknown", NO_PATTERN, f"{len(rest)} failing test(s) match no known pattern; "
                              "see the failure list", _ids(rest), 0, partial=partial))
    return kept


def _interpreter_note(found: Sequence[Diagnosis]) -> str:
    """Under the headline: when an interpreter defect leads, say so before any failure is read as the kernel's."""
    if not found or found[0].category != INTERPRETER:
        return ""
    rest = "" if len(found) == 1 else " Other failures are listed after it."
    return (f'<p id="nan-interpreter-note"><b>FAIL on this interpreter:</b> {esc(found[0].name)}; its failures '
            f"stay failures here, judge the kernel on a device or upcast to fp32 before comparing.{esc(rest)}</p>")


def render(found: Sequence[Diagnosis]) -> str:
    if not found:
        return ""
    items = "".join(
        f"<li><b>{esc(d.name)}</b> [{esc(d.category)}]{' <i>(' + esc(d.scope) + ')</i>' if d.scope else ''}: "
        f"{esc(d.evidence)}"
        f"{' — ' + esc(', '.join(d.cases[:SHOWN_CASES])) if d.cases else ''}"
        f"{f' (+{len(d.cases) - SHOWN_CASES} more)' if len(d.cases) > SHOWN_CASES else ''}</li>"
        for d in found
    )
    note = ('<p id="nan-diagnosis-partial">Partial: the run stopped early; the diagnosis reads only the tests that ran.'
            "</p>" if any(d.partial for d in found) else "")
    return f'{_interpreter_note(found)}<h3>Diagnosis</h3>{note}<ol id="nan-diagnosis">{items}</ol>'
