"""Name likely bug classes from the pattern of failures, with their evidence; "no known pattern" over a guess.

Each rule looks at the failing records only through the result record (families, wrong rows and their labels,
verdicts, check problems) and returns a Diagnosis or nothing. Categories match the planted bugs' classes.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from html import escape
from typing import Any

from cases.anchor import ANCHOR_BLOCK_SIZE
from verdict.record import CRASH, DEVICE_FAULT, REFUSED, SIDE_EFFECT, TIMEOUT, Check, TestRecord

SHOWN_CASES = 5


@dataclass(frozen=True)
class Diagnosis:
    category: str  # predicate, traversal, offsets, accumulation, output, side effects, contract, device
    name: str
    evidence: str
    cases: tuple[str, ...]
    weight: int  # failing tests explained: the strongest pattern comes first

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "cases": list(self.cases)}


def _failing(records: Sequence[TestRecord]) -> list[TestRecord]:
    return [r for r in records if r.failed]


def _wrong_checks(records: Sequence[TestRecord]) -> list[tuple[TestRecord, Check]]:
    return [(r, c) for r in records for c in r.checks if c.wrong_rows]


def _example(c: Check) -> str:
    w = c.wrong_rows[0]
    return f"{c.params.case_id} ({c.path}) {w.describe()}"


def int1_flags(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Counts never exceed the blocks per row while more NaNs are expected: flags summed as int1 (OR)."""
    hits = []
    for r, c in _wrong_checks(records):
        vocab = c.params.shape[-1] if c.params.shape else 0
        blocks = max(1, -(-vocab // ANCHOR_BLOCK_SIZE))
        if all(w.got <= blocks < w.expected or w.got == w.expected for w in c.wrong_rows):
            hits.append((r, c))
    if len(hits) < 2 or len(hits) < len(_wrong_checks(records)) // 2:
        return None
    return Diagnosis("accumulation", "flags summed as int1 (a per-block OR, not a count)",
                     f"{len(hits)} checks count at most one NaN per {ANCHOR_BLOCK_SIZE}-wide block, e.g. "
                     f"{_example(hits[0][1])}", tuple(r.id for r, _ in hits), len(hits))


def big_offsets(records: Sequence[TestRecord]) -> Diagnosis | None:
    failing = _failing(records)
    big = [r for r in failing if r.family == "bigoffset"]
    if not big or any(r.family not in ("bigoffset", "") for r in failing):
        return None
    return Diagnosis("offsets", "32-bit row offsets (rows past 2^31 elements read or fault elsewhere)",
                     f"only cases with rows past 2^31 elements fail ({len(big)}): {big[0].verdict}",
                     tuple(r.id for r in big), len(big))


_CLASS = re.compile(r"^(?P<sign>[+-])(?P<cls>[a-z_]+) (?P<dtype>\S+) 0x")


def predicate(records: Sequence[TestRecord]) -> Diagnosis | None:
    counted, missed, cases = set(), set(), []
    for r, c in _wrong_checks(records):
        for w in c.wrong_rows:
            m = _CLASS.match(w.label)
            if not m:
                continue
            (counted if w.got > w.expected else missed).add(f"{m['sign']}{m['cls']} {m['dtype']}")
            cases.append(r.id)
    specials = [r.id for r, c in _wrong_checks(records) if r.family == "special" and
                any(w.got > w.expected for w in c.wrong_rows) and r.family]
    if not counted and not missed and not specials:
        return None
    parts = []
    if counted:
        parts.append(f"non-NaN values counted: {', '.join(sorted(counted)[:8])}")
    if missed:
        parts.append(f"NaN patterns missed: {', '.join(sorted(missed)[:8])}")
    if specials and not counted:
        parts.append(f"special values (inf, zero, max, subnormal) counted in {len(specials)} case(s)")
    ids = tuple(dict.fromkeys(cases + specials))
    return Diagnosis("predicate", "the NaN predicate", "; ".join(parts), ids, len(ids) + 1)


def tail(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Only vocab sizes that are not a multiple of the block fail, by counting too few or too many in the tail."""
    wrong = [(r, c) for r, c in _wrong_checks(records) if r.family in ("matrix", "shapes", "sweep", "magnitudes")]
    if not wrong:
        return None
    ragged = [(r, c) for r, c in wrong if c.params.shape and c.params.shape[-1] % ANCHOR_BLOCK_SIZE]
    whole_pass = [r for r in records if r.family in ("matrix", "shapes") and not r.failed and r.params
                  and r.params.shape and r.params.shape[-1] % ANCHOR_BLOCK_SIZE == 0 and r.params.shape[-1] > 0]
    if len(ragged) != len(wrong) or not whole_pass:
        return None
    return Diagnosis("traversal", "the last, partial block of a row (mask or loop bound)",
                     f"only vocab sizes that are not a multiple of {ANCHOR_BLOCK_SIZE} fail ({len(ragged)}), "
                     f"e.g. {_example(ragged[0][1])}; multiples pass", tuple(r.id for r, _ in ragged), len(ragged))


def block_sums(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Rows longer than one block lose or repeat whole blocks: the loop's accumulation or its step."""
    wrong = [(r, c) for r, c in _wrong_checks(records) if r.family in ("matrix", "shapes")]
    long = [(r, c) for r, c in wrong if c.params.shape and c.params.shape[-1] > ANCHOR_BLOCK_SIZE]
    short_pass = [r for r in records if r.family in ("matrix", "shapes") and not r.failed and r.params
                  and r.params.shape and 1 < r.params.shape[-1] <= ANCHOR_BLOCK_SIZE]
    if not long or len(long) != len(wrong) or not short_pass:
        return None
    return Diagnosis("traversal", "multi-block rows: blocks lost, overwritten or stepped wrong",
                     f"only rows longer than one {ANCHOR_BLOCK_SIZE}-block fail ({len(long)}), e.g. "
                     f"{_example(long[0][1])}", tuple(r.id for r, _ in long), len(long))


def padding(records: Sequence[TestRecord]) -> Diagnosis | None:
    hits = [(r, c) for r, c in _wrong_checks(records)
            if r.family == "padded" or "padded" in c.params.case_id]
    over = [(r, c) for r, c in hits if any(w.got > w.expected for w in c.wrong_rows)]
    if not hits:
        return None
    what = "padding counted" if over else "padded rows miscounted"
    return Diagnosis("traversal", f"row stride ({what})",
                     f"rows whose stride exceeds vocab are wrong ({len(hits)}), e.g. {_example(hits[0][1])}",
                     tuple(dict.fromkeys(r.id for r, _ in hits)), len(hits))


def column_stride(records: Sequence[TestRecord]) -> Diagnosis | None:
    hits = [r for r, c in _wrong_checks(records) if "transposed" in c.params.case_id]
    if not hits:
        return None
    return Diagnosis("traversal", "column stride ignored (a non-unit inner stride read as contiguous)",
                     "a transposed view was counted, wrongly, instead of refused", tuple(r.id for r in hits), 1)


def narrow_accumulator(records: Sequence[TestRecord]) -> Diagnosis | None:
    hits = []
    for r, c in _wrong_checks(records):
        if r.family != "magnitudes":
            continue
        if all(w.expected > 2048 for w in c.wrong_rows):
            hits.append((r, c))
    if not hits:
        return None
    smallest = min(w.expected for _, c in hits for w in c.wrong_rows)
    return Diagnosis("accumulation", "narrow or float accumulator (counts past its range are lost)",
                     f"only rows with many NaNs are wrong (smallest wrong count {smallest}), e.g. "
                     f"{_example(hits[0][1])}", tuple(r.id for r, _ in hits), len(hits) + 1)


def _by_verdict(verdict: str, category: str, name: str) -> Callable[[Sequence[TestRecord]], Diagnosis | None]:
    def rule(records: Sequence[TestRecord]) -> Diagnosis | None:
        hits = [r for r in _failing(records) if r.verdict == verdict]
        if not hits:
            return None
        first = hits[0]
        detail = next((p for c in first.checks for p in c.problems), "") or next(
            (c.refusal for c in first.checks if c.refusal), "") or first.message.splitlines()[0:1]
        return Diagnosis(category, name, f"{len(hits)} test(s), e.g. {first.id}: {detail}",
                         tuple(r.id for r in hits), len(hits))

    return rule


def output(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Rows never written (poison), or written with another row's count: the store, not the count."""
    poison = [(r, c) for r, c in _wrong_checks(records) if any(w.got == -0x5A5A5A5B for w in c.wrong_rows)]
    if not poison:
        return None
    return Diagnosis("output", "output rows not written (the poison the harness put there is still there)",
                     f"{len(poison)} check(s), e.g. {_example(poison[0][1])}", tuple(r.id for r, _ in poison),
                     len(poison) + 2)


RULES: tuple[Callable[[Sequence[TestRecord]], Diagnosis | None], ...] = (
    int1_flags, big_offsets, predicate, narrow_accumulator, padding, column_stride, tail, block_sums, output,
    _by_verdict(SIDE_EFFECT, "side effects", "side effects: input modified, stray writes, or a malformed result"),
    _by_verdict(REFUSED, "contract", "in-domain input refused (an exception where counts were due)"),
    _by_verdict(DEVICE_FAULT, "device", "device fault"),
    _by_verdict(CRASH, "device", "process crash"),
    _by_verdict(TIMEOUT, "device", "timeout (a hung kernel)"),
)


def diagnose(records: Sequence[TestRecord]) -> list[Diagnosis]:
    """Every rule that fires, strongest first; one 'no known pattern' entry when tests fail and none fires."""
    if not _failing(records):
        return []
    found = [d for rule in RULES if (d := rule(records)) is not None]
    found.sort(key=lambda d: -d.weight)
    if not found:
        failing = _failing(records)
        return [Diagnosis("unknown", "no known pattern", f"{len(failing)} failing test(s); see the failure list",
                          tuple(r.id for r in failing), 0)]
    return found


def render(found: Sequence[Diagnosis]) -> str:
    if not found:
        return ""
    items = "".join(
        f"<li><b>{escape(d.name)}</b> [{escape(d.category)}]: {escape(d.evidence)}"
        f"{' — ' + escape(', '.join(d.cases[:SHOWN_CASES])) if d.cases else ''}"
        f"{f' (+{len(d.cases) - SHOWN_CASES} more)' if len(d.cases) > SHOWN_CASES else ''}</li>"
        for d in found
    )
    return f'<h3>Diagnosis</h3><ol id="nan-diagnosis">{items}</ol>'
