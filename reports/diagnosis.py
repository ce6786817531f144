"""Name likely bug classes from the pattern of failures, with their evidence; "no known pattern" over a guess.

Each rule reads the records only (families, case ids, shapes, input layouts, wrong rows and their labels,
verdicts, check problems, test names) and returns a Diagnosis or nothing. A rule fires on a signature that the
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

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from cases.anchor import ANCHOR_BLOCK_SIZE
from harness.target import POISON  # what the direct launch's output holds before the kernel runs
from reports.markup import esc
from verdict.interpreter import ENV_KEY as INTERPRETER_DEFECTS, from_text
from verdict.record import CRASH, DEVICE_FAULT, REFUSED, TIMEOUT, Check, TestRecord, WrongRow

SHOWN_CASES = 5
INTERPRETER = "interpreter"  # a defect of the Triton interpreter the preflight measured: not the kernel's
CATEGORIES: tuple[str, ...] = (INTERPRETER, "predicate", "traversal", "offsets", "accumulation", "output",
                               "side effects", "contract", "device", "unknown")
NO_PATTERN = "no known pattern"


Failure = tuple[str, int]  # a failing test's id and the index of one failing check (-1: it failed without one)


@dataclass(frozen=True)
class Diagnosis:
    category: str  # one of CATEGORIES
    name: str
    evidence: str
    cases: tuple[str, ...]  # record ids (test name and parameters)
    weight: int  # failing tests explained: the strongest pattern comes first
    explains: frozenset[Failure] = frozenset()  # the failures its signature fits (not written to results.json)

    def to_dict(self) -> dict[str, Any]:
        return {**{k: v for k, v in asdict(self).items() if k != "explains"}, "cases": list(self.cases)}


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
    m = re.search(r"\boffset (\d+)", c.input_desc)
    return int(m.group(1)) if m else 0


def _outside(c: Check) -> bool:
    """A contract case of input outside the documented domain (its counts are judged only when it is accepted)."""
    return c.params.case_id.startswith("outside-")


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


def narrow_accumulator(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Only rows with many NaNs are wrong, while rows with few are right: the count lost past its type's range."""
    hits = [(r, c) for r, c in _wrong_checks(records)
            if r.family == "magnitudes" and all(w.expected > 2048 for w in c.wrong_rows)]
    if not hits:
        return None
    smallest = min(w.expected for _, c in hits for w in c.wrong_rows)
    return _found("accumulation", "narrow or float accumulator (counts past its range are lost)",
                  f"only rows with many NaNs are wrong (smallest wrong count {smallest}), e.g. "
                  f"{_example(hits[0][1])}", hits, bonus=1)


# -- offsets -----------------------------------------------------------------------------------------------
_ROW_START = re.compile(r"row starts at element ([\d,]+)")


def _past_2_31(w: WrongRow) -> bool:
    m = _ROW_START.search(w.label)
    return bool(m) and int(m.group(1).replace(",", "")) + 1 >= 1 << 31


def big_offsets(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Cases with rows past 2^31 elements kill the process or fault, or miscount exactly those rows."""
    died = [r for r in _failing(records) if r.family == "bigoffset" and r.verdict in (CRASH, DEVICE_FAULT, TIMEOUT)]
    far = [(r, c) for r, c in _wrong_checks(records) if r.family == "bigoffset"
           and all(_past_2_31(w) for w in c.wrong_rows)]
    hits = [*died, *far]
    if not hits:
        return None
    how = f"{len(died)} ended in {', '.join(sorted({r.verdict for r in died}))}" if died else ""
    rows = f"{len(far)} miscount only the rows past 2^31 (e.g. {_example(far[0][1])})" if far else ""
    return _found("offsets", "32-bit row offsets (rows past 2^31 elements read or fault elsewhere)",
                  f"cases whose rows start past 2^31 elements: {'; '.join(p for p in (how, rows) if p)}", hits)


def storage_offset(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Only views that start inside their storage miscount, while views at its start pass."""
    wrong = [(r, c) for r, c in _wrong_checks(records) if not _outside(c)]
    at_start = [c for c in _passing_checks(records) if _offset(c) == 0 and c.input_desc]
    if not wrong or not at_start or any(_offset(c) == 0 for _, c in wrong):
        return None
    offsets = sorted({_offset(c) for _, c in wrong})
    paths = sorted({c.path for _, c in wrong})
    fine = sorted({c.path for c in _passing_checks(records) if _offset(c) > 0} - set(paths))
    return _found("offsets", "the view's storage offset ignored (rows read from the storage's start)",
                  f"only inputs that start inside their storage miscount (offsets {offsets}, path "
                  f"{'/'.join(paths)}{f'; the {fine[0]} path counts them right' if fine else ''}), e.g. "
                  f"{_example(wrong[0][1])}", wrong)


# -- the NaN predicate -------------------------------------------------------------------------------------
_CLASS = re.compile(r"^(?P<sign>[+-])(?P<cls>[a-z_]+) (?P<dtype>\S+) 0x")


def predicate(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Whole IEEE classes missed (a row of one NaN class counts 0) or counted (a row of a non-NaN class counts),
    special values counted, or a float dtype the kernel accepted miscounted."""
    counted, missed, dtypes, hits = set(), set(), set(), []
    for r, c in _wrong_checks(records):
        for w in c.wrong_rows:
            m = _CLASS.match(w.label)
            if m and (w.got == 0 < w.expected or w.got > w.expected):
                (counted if w.got > w.expected else missed).add(f"{m['sign']}{m['cls']} {m['dtype']}")
                hits.append((r, c))
        if r.family == "special" and any(w.got > w.expected for w in c.wrong_rows):
            counted.add(f"special values {c.params.dtype}")
            hits.append((r, c))
        if _outside(c) and c.params.layout.startswith("dtype-") and c.params.dtype.startswith(("float", "bfloat")):
            dtypes.add(c.params.dtype)
            hits.append((r, c))
    if not hits:
        return None
    parts = []
    if counted:
        parts.append(f"non-NaN values counted: {', '.join(sorted(counted)[:8])}")
    if missed:
        parts.append(f"NaN patterns missed: {', '.join(sorted(missed)[:8])}")
    if dtypes:
        parts.append(f"{', '.join(sorted(dtypes))} accepted and miscounted (the predicate on that format)")
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
_GUARD = re.compile(r"wrote \d+ int32 slot\(s\) (before|after) its output")
_MALFORMED = re.compile(r"^(dtype |shape |device |result is |values |\d+ counts for |output is not contiguous)")


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
            if any(_GUARD.search(p) for p in c.problems):
                stray.append(r)
            if not _outside(c) and any(_MALFORMED.match(p) for p in c.problems):
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
    hits = []
    for r in _failing(records):
        shared = "same output buffer" in r.message  # two calls handed back one tensor
        steps = [c for c in r.checks if "-refilled-" in c.params.case_id]  # one buffer refilled, checked in order
        first_ok = bool(steps) and steps[0].ok and any(not c.ok for c in steps[1:])
        if shared or first_ok:
            hits.append(r)
    if not hits:
        return None
    return _found("output", "results reused across calls (a cached output, or a cache keyed on the address)",
                  f"the first call counts right and later calls on the same buffer or shape do not "
                  f"({len(hits)} test(s)), e.g. {hits[0].id}: {hits[0].message.splitlines()[0][:200]}",
                  hits, bonus=1)


# -- side effects and the contract -------------------------------------------------------------------------
def input_modified(records: Sequence[TestRecord]) -> Diagnosis | None:
    hits = [(r, p) for r in _failing(records) for c in r.checks for p in c.problems
            if "modified" in p and not _outside(c)]
    if not hits:
        return None
    padding_only = [r for r, p in hits if "padding" in p or "padded storage" in p]
    what = "input or its row padding modified" if padding_only else "input modified"
    return _found("side effects", f"side effects: {what}", f"{len(_ids([r for r, _ in hits]))} test(s), e.g. "
                  f"{hits[0][0].id}: {hits[0][1]}", [r for r, _ in hits])


def copies(records: Sequence[TestRecord]) -> Diagnosis | None:
    hits = [(r, p) for r in _failing(records) for c in r.checks for p in c.problems if " copied" in p]
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


_EMPTY_TESTS = ("test_empty_batch", "test_zero_vocab")


def empty_inputs(records: Sequence[TestRecord]) -> Diagnosis | None:
    hits = [r for r in _failing(records) if r.test_name.startswith(_EMPTY_TESTS)]
    if not hits:
        return None
    return _found("contract", "empty batches or a zero vocab mishandled (expected an empty or zero int32 result)",
                  f"{len(hits)} test(s), e.g. {hits[0].id}: {hits[0].message.splitlines()[0][:200] if hits[0].message else ''}",
                  hits)


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
    big_offsets, storage_offset, per_block_or, predicate, narrow_accumulator, half_the_elements, tail, block_sums,
    unread_lanes, padding, square, column_stride, stream_order, graph_replay, stale_outputs, output, input_modified,
    copies, rank_accepted, empty_inputs,
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


def diagnose(records: Sequence[TestRecord], *, environment: Mapping[str, str] | None = None) -> list[Diagnosis]:
    """A measured interpreter defect first, then every rule that fires, strongest first, less those a stronger one
    explains; failing tests no kept diagnosis explains close the list as "no known pattern"."""
    failing = _failing(records)
    if not failing:
        return []
    found = [d for rule in RULES if (d := rule(records)) is not None]
    order = {id(d): i for i, d in enumerate(found)}
    found.sort(key=lambda d: (-d.weight, order[id(d)]))
    measured = interpreter(records, environment or {})
    kept = _drop_explained([measured, *found] if measured else found)
    explained = {case for d in kept for case in d.cases}
    rest = [r for r in failing if r.id not in explained]
    if rest:
        kept.append(Diagnosis("unknown", NO_PATTERN, f"{len(rest)} failing test(s) match no known pattern; "
                              "see the failure list", _ids(rest), 0))
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
        f"<li><b>{esc(d.name)}</b> [{esc(d.category)}]: {esc(d.evidence)}"
        f"{' — ' + esc(', '.join(d.cases[:SHOWN_CASES])) if d.cases else ''}"
        f"{f' (+{len(d.cases) - SHOWN_CASES} more)' if len(d.cases) > SHOWN_CASES else ''}</li>"
        for d in found
    )
    return f'{_interpreter_note(found)}<h3>Diagnosis</h3><ol id="nan-diagnosis">{items}</ol>'
