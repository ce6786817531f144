"""What every diagnosis rule shares: the item a rule returns, the readers of the records' data it keys on, and the rule
that is one row of a table (Pattern).

Rules (reports.diagnosis_rules) read the records' data only (families, shapes, input layouts, wrong rows, row classes,
verdicts, problem kinds), never their display text, and return a Diagnosis or nothing; reports.diagnosis ranks them.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from cases.anchor import ANCHOR_BLOCK_SIZE
from verdict.codec import from_data, to_data
from verdict.record import Check, TestRecord

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
    # the passing checks that isolate the cause (a controlled experiment: the same cases pass with one thing changed);
    # an item with a control leads any item whose failures it covers (reports.diagnosis.explains)
    control: str = ""
    blocks: tuple[tuple[str, int], ...] = ()  # (path, block size) the failing and passing shapes show, per path
    absorbed: tuple[str, ...] = ()  # weaker items dropped because this one explains every failure they rest on

    def to_dict(self) -> dict[str, Any]:
        """Its fields, blocks as {path: block size}; not `explains` (the run's own failure keys)."""
        return {**{k: v for k, v in to_data(self).items() if k != "explains"}, "blocks": dict(self.blocks)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Diagnosis:
        """A diagnosis as results.json holds it (older files lack the later fields)."""
        blocks = list((data.get("blocks") or {}).items())
        fields = {"category": "unknown", **data, "blocks": blocks, "explains": None}
        return from_data(cls, fields)  # type: ignore[no-any-return]


Hit = TestRecord | tuple[TestRecord, Check]  # a whole failing test, or one failing check of it
Rule = Callable[[Sequence[TestRecord]], "Diagnosis | None"]


def failing(records: Sequence[TestRecord]) -> list[TestRecord]:
    return [r for r in records if r.failed]


def wrong_checks(records: Sequence[TestRecord]) -> list[tuple[TestRecord, Check]]:
    """Checks with wrong rows, of failing tests."""
    return [(r, c) for r in failing(records) for c in r.checks if c.wrong_rows]


def passing_checks(records: Sequence[TestRecord]) -> list[Check]:
    return [c for r in records for c in r.checks if c.ok]


def vocab(c: Check) -> int:
    return c.params.shape[-1] if len(c.params.shape) == 2 else 0


def anchor_blocks(n: int) -> int:
    """Blocks of the anchor's size (the direct launch's) that a row of n elements spans, at least 1."""
    return max(1, -(-n // ANCHOR_BLOCK_SIZE))


def offset(c: Check) -> int:
    return c.layout.storage_offset if c.layout is not None else 0


def has_layout(c: Check) -> bool:
    return c.layout is not None


def outside(c: Check) -> bool:
    """A contract case of input outside the documented domain (its counts are judged only when it is accepted)."""
    return not c.params.in_domain


def has(c: Check, *kinds: str) -> bool:
    """The check recorded a problem of one of these kinds (Problem.kind: data, not its words)."""
    return any(p.kind in kinds for p in c.problems)


def example(c: Check) -> str:
    w = c.wrong_rows[0]
    return f"{c.params.case_id} ({c.path}) {w.describe()}"


def ids(pairs: Sequence[tuple[TestRecord, Check]] | Sequence[TestRecord]) -> tuple[str, ...]:
    found = [p[0].id if isinstance(p, tuple) else p.id for p in pairs]
    return tuple(dict.fromkeys(found))


def failures(hit: Hit) -> set[Failure]:
    """What one hit explains: its failing check, or every failing check of a whole test (the test, if none)."""
    if isinstance(hit, tuple):
        r, c = hit
        return {(r.id, next(i for i, x in enumerate(r.checks) if x is c))}
    return {(hit.id, i) for i, c in enumerate(hit.checks) if not c.ok} or {(hit.id, -1)}


def found(category: str, name: str, evidence: str, hits: Sequence[Hit], bonus: int = 0, *, control: str = "",
          blocks: tuple[tuple[str, int], ...] = ()) -> Diagnosis:
    """The item a rule returns: its weight is the failing tests it explains (plus the rule's bonus)."""
    names = ids(hits)
    return Diagnosis(category, name, evidence, names, len(names) + bonus, frozenset().union(*map(failures, hits)),
                     control=control, blocks=blocks)


@dataclass(frozen=True)
class Pattern:
    """A rule that is one selection of failing tests or checks, an optional passing control and a text: a row of
    reports.diagnosis_rules.RULES rather than a function of its own."""

    category: str
    name: str
    hits: Callable[[Sequence[TestRecord]], Sequence[Any]]  # the Hits its signature fits
    evidence: Callable[[Sequence[Any], Sequence[Check]], str]  # (hits, controls) -> the text
    control: Callable[[Check], bool] | None = None  # passing checks that isolate the cause; none pass: no item
    control_text: str = ""  # {n}: how many controls pass, {first}: the first one's case id
    bonus: int = 0
    demoted: str = ""  # why it ranks after the others whatever its weight (Diagnosis.demoted)

    def __call__(self, records: Sequence[TestRecord]) -> Diagnosis | None:
        hits = self.hits(records)
        controls = [c for c in passing_checks(records) if self.control(c)] if self.control else []
        if not hits or (self.control is not None and not controls):
            return None
        control = self.control_text.format(n=len(controls), first=controls[0].params.case_id) if controls else ""
        item = found(self.category, self.name, self.evidence(hits, controls), hits, self.bonus, control=control)
        return replace(item, demoted=self.demoted) if self.demoted else item

