"""Rules on counts and rows: where a launch stops, rows spaced by a step, counts off by a constant, elements of each
row never read, counters that saturate or round, and 32-bit or ignored offsets."""
from __future__ import annotations

from collections.abc import Sequence

from cases.anchor import ANCHOR_BLOCK_SIZE
from reports.diagnosis_base import (Diagnosis, anchor_blocks, example, failing, found, has_layout, offset, outside,
                                    passing_checks, vocab, wrong_checks)
from verdict.record import CRASH, DEVICE_FAULT, POISON, TIMEOUT, Check, TestRecord, Unwritten, WrongRow


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
    wrong = wrong_checks(records)
    hits = [(r, c, k) for r, c in wrong if (k := _suffix_from(c)) is not None]
    if not hits:
        return None
    limits = sorted({k for _, _, k in hits})
    r, c, k = hits[0]
    paths = sorted({c.path for _, c, _ in hits})
    return found("launch", f"rows from index {limits[0]:,} on never counted ({_limit_name(limits[0])}): the "
                 "launch stops there (grid size, batch split or cap)",
                 f"in {len(hits)} check(s) the rows from {', '.join(f'{x:,}' for x in limits)} on are wrong (at "
                 f"least 90%) and every row below right (path {'/'.join(paths)}), e.g. {c.params.case_id} "
                 f"({c.path}) rows "
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


def _ordinal(k: int) -> str:
    """2nd, 3rd, 4th, 11th, 21st: the item's name is read aloud."""
    suffix = "th" if 10 <= k % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(k % 10, "th")
    return f"{k}{suffix}"


def every_kth_row(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Wrong rows spaced by one step k >= 2, with the rows between them right: a row index scaled or strided by k."""
    hits = []
    for r, c in wrong_checks(records):
        rows = sorted(w.row for w in c.wrong_rows)
        steps = {b - a for a, b in zip(rows, rows[1:])}
        if len(rows) >= 3 and len(steps) == 1 and min(steps) >= 2:
            hits.append((r, c, min(steps)))
    if not hits:
        return None
    r, c, k = hits[0]
    return found("traversal", f"every {_ordinal(k)} row wrong (a row index scaled or stepped by {k})",
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
    hits = [(r, c, k) for r, c in wrong_checks(records) if (k := _saturation(c)) is not None]
    if not hits or len({k for _, _, k in hits}) != 1 or sum(len(c.wrong_rows) for _, c, _ in hits) < 2:
        return None
    r, c, k = hits[0]
    return found("accumulation", f"counts saturate at 2^{k} - 1 ({(1 << k) - 1:,}): a clamped or {k}-bit counter",
                 f"every wrong row of {len(hits)} check(s) counts {(1 << k) - 1:,} where more NaNs were due, e.g. "
                 f"{example(c)}", [(r, c) for r, c, _ in hits], bonus=1)


def _constant_offset(c: Check) -> int | None:
    diffs = {w.got - w.expected for w in c.wrong_rows}
    return next(iter(diffs)) if len(diffs) == 1 and len(c.wrong_rows) >= 2 else None


def off_by_constant(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Every wrong row of every check is off by the same amount: one element (or lane) too many or too few."""
    wrong = wrong_checks(records)
    offs = [(r, c, d) for r, c in wrong if (d := _constant_offset(c)) is not None]
    if not offs or len(offs) != len(wrong) or len({d for _, _, d in offs}) != 1:
        return None
    d = offs[0][2]
    return found("traversal", f"every wrong count off by {d:+d} (one element or lane too {'many' if d > 0 else 'few'}"
                 ": a bound or mask off by one, or a fixed element counted)",
                 f"{len(offs)} check(s), every wrong row off by {d:+d}, e.g. {example(offs[0][1])}",
                 [(r, c) for r, c, _ in offs])


# -- traversal: elements of a row never read
def unread_lanes(records: Sequence[TestRecord]) -> Diagnosis | None:
    """A row of nothing but NaNs counts fewer than its length (more than a per-block OR would): lanes never read."""
    hits = [(r, c, w) for r, c in wrong_checks(records) if vocab(c) and r.family != "magnitudes"
            for w in c.wrong_rows
            if w.expected == vocab(c) and anchor_blocks(vocab(c)) < w.got < w.expected]
    if not hits:
        return None
    r, c, w = hits[0]
    return found("traversal", "elements of each row never read (loop step, tile width or mask)",
                 f"all-NaN rows count fewer than their length, e.g. {c.params.case_id} ({c.path}) row {w.row}: "
                 f"{w.got} of {w.expected}", [(r, c) for r, c, _ in hits])


def _all_nan_rows(records: Sequence[TestRecord]) -> list[tuple[TestRecord, Check, WrongRow]]:
    """Wrong rows that hold nothing but NaNs (they expect their whole length), of at least 4 elements."""
    return [(r, c, w) for r, c in wrong_checks(records) if vocab(c) >= 4 and r.family != "magnitudes"
            for w in c.wrong_rows if w.expected == vocab(c)]


def half_the_elements(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Every wrong all-NaN row counts exactly half its length: half of each row's elements are never tested (one
    half of every two-element load, every other element, or half the row); it explains every undercounting check."""
    full = _all_nan_rows(records)
    if not full or any(w.got not in (vocab(c) // 2, (vocab(c) + 1) // 2) for _, c, w in full):
        return None
    hits = [(r, c) for r, c in wrong_checks(records) if all(0 <= w.got < w.expected for w in c.wrong_rows)]
    r, c, w = full[0]
    return found("traversal", "half of each row's elements never tested (every other element, one half of each "
                 "two-element load, or half the row)",
                 f"every wrong all-NaN row counts exactly half its length ({len(full)} rows), e.g. "
                 f"{c.params.case_id} ({c.path}) row {w.row}: {w.got} of {w.expected}; other wrong rows undercount",
                 hits)



# -- accumulation ------------------------------------------------------------------------------------------
def _or_like(c: Check, w: WrongRow) -> bool:
    """The count a per-block OR gives: at least 1 and at most one per block, where more NaNs were due."""
    return 1 <= w.got <= anchor_blocks(vocab(c)) < w.expected


def per_block_or(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Every wrong row counts between 1 and the blocks per row while more NaNs are there: a per-block OR
    (int1 flags summed where int1 sums are not widened, or max for sum), not a count."""
    wrong = wrong_checks(records)
    hits = [(r, c) for r, c in wrong if vocab(c) and all(_or_like(c, w) for w in c.wrong_rows)]
    if len(hits) < 2 or len(hits) * 2 < len(wrong):
        return None
    return found("accumulation", "flags summed as int1 (a per-block OR, not a count)",
                 f"{len(hits)} of {len(wrong)} wrong checks count at least 1 and at most one NaN per "
                 f"{ANCHOR_BLOCK_SIZE}-wide block, e.g. {example(hits[0][1])}", hits)


EXACT_IN_HALF = 2048  # every count up to 2^11 is exact in fp16 (bf16: 256); a float accumulator rounds past it


def _half_float(n: int) -> bool:
    """n is a value fp16 holds exactly (at most 11 significant bits; bf16's 8 are a subset)."""
    return n >= 0 and n % (1 << max(0, n.bit_length() - 11)) == 0


def _rounded_or_overflowed(c: Check, w: WrongRow) -> bool:
    """A count a float accumulator gives: a value fp16 or bf16 holds, within bf16's rounding (2^-8 relative) of a
    count past 2048, or an overflow read back as a negative value (not the harness's poison, nor poison plus a count);
    a count off by a few elements of the row (an offset, a mask) is neither."""
    poisoned = 0 <= w.got - POISON <= max(vocab(c), 1)
    rounded = _half_float(w.got) and abs(w.got - w.expected) <= w.expected / 256
    return w.expected > EXACT_IN_HALF and not poisoned and (rounded or w.got < 0)


def narrow(r: TestRecord, c: Check) -> bool:
    """Only rows with many NaNs are wrong: the count lost past its type's range (magnitude rows: every wrong row past
    2048; elsewhere: rounded to a float's spacing or overflowed)."""
    return ((r.family == "magnitudes" and all(w.expected > EXACT_IN_HALF for w in c.wrong_rows))
            or all(_rounded_or_overflowed(c, w) for w in c.wrong_rows))


# -- offsets -----------------------------------------------------------------------------------------------
def _past_2_31(c: Check, w: WrongRow) -> bool:
    """The row's last element lies past 2^31 elements from its storage's start (a 32-bit offset wraps there)."""
    start = c.layout.row_start(w.row) if c.layout is not None else None
    return start is not None and start + max(vocab(c), 1) - 1 >= 1 << 31


def big_offsets(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Cases with rows past 2^31 elements kill the process or fault, or miscount exactly those rows."""
    died = [r for r in failing(records) if r.family == "bigoffset" and r.verdict in (CRASH, DEVICE_FAULT, TIMEOUT)]
    far = [(r, c) for r, c in wrong_checks(records) if r.family == "bigoffset"
           and all(_past_2_31(c, w) for w in c.wrong_rows)]
    hits = [*died, *far]
    if not hits:
        return None
    how = f"{len(died)} ended in {', '.join(sorted({r.verdict for r in died}))}" if died else ""
    rows = f"{len(far)} miscount only the rows past 2^31 (e.g. {example(far[0][1])})" if far else ""
    return found("offsets", "32-bit row offsets (rows past 2^31 elements read or fault elsewhere)",
                 f"cases whose rows start past 2^31 elements: {'; '.join(p for p in (how, rows) if p)}", hits)


def storage_offset(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Only views that start inside their storage miscount, while views at its start pass."""
    wrong = [(r, c) for r, c in wrong_checks(records) if not outside(c)]  # a check without a layout: no veto
    at_start = [c for c in passing_checks(records) if offset(c) == 0 and has_layout(c)]
    if not wrong or not at_start or any(offset(c) == 0 for _, c in wrong if has_layout(c)):
        return None
    offsets = sorted({offset(c) for _, c in wrong if has_layout(c)})
    paths = sorted({c.path for _, c in wrong})
    fine = sorted({c.path for c in passing_checks(records) if offset(c) > 0} - set(paths))
    return found("offsets", "the view's storage offset ignored (rows read from the storage's start)",
                 f"only inputs that start inside their storage miscount (offsets {offsets}, path "
                 f"{'/'.join(paths)}{f'; the {fine[0]} path counts them right' if fine else ''}), e.g. "
                 f"{example(wrong[0][1])}", wrong,
                 control=f"{len(at_start)} check(s) of inputs at their storage's start pass")
