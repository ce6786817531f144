"""The result record: what a case was, what each check found, and the verdict; one JSON shape for every reader.

The harness writes these (as pytest user properties, so they cross xdist), the reports read them back: the HTML page,
results.json and JUnit properties are built from TestRecords, and every reader of results.json (compare, merge, the
nightly and its trend) gets TestRecords back through `reports.results.load`. Torch-free, like those readers.
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from verdict.codec import JsonRecord, from_data, to_data
from verdict.crash_storm import CrashStorm
from verdict.not_run import NotRun
from verdict.problem import OTHER, Problem

PARAMS_PROPERTY = "nan_params"  # the case a test item runs, attached before it starts
CHECK_PROPERTY = "nan_case"  # one per Check: a `check_counts` or `launch` call, or a failed launch
PLANTED_PROPERTY = "planted"  # a self-test's verdict on one planted variant
CALL_SITE_PROPERTY = "nan_call_site"  # a call-site mismatch (vLLM's callers hold another kernel)
CAPTURABLE_PROPERTY = "nan_capturable"  # whether one call could be captured in a device graph, and why not

# Verdict categories, worst last: a test's verdict is the worst of its checks and of how it ended.
PASS = "pass"
NOT_RUN = "not_run"  # skipped, deselected by the kernel's missing API, or never reached
WAIVED = "waived"  # a known failure under a waiver (strict xfail)
ENVIRONMENT = "environment"  # the machine failed outside the kernel (harness.environment_failures): never the kernel's
REFUSED = "refused"  # raised on input it must count
WRONG_COUNTS = "wrong_counts"
SIDE_EFFECT = "side_effect"  # input modified, writes outside the output, wrong dtype/shape/device of the result
CALL_SITE = "call_site"  # a caller holds a different get_num_nans than the kernel under test
ERROR = "error"  # the test failed for a reason none of the categories names (harness, setup, assertion)
TIMEOUT = "timeout"
DEVICE_FAULT = "device_fault"
CRASH = "crash"  # the process died (segfault, abort): xdist's worker crash
VERDICTS: tuple[str, ...] = (PASS, NOT_RUN, WAIVED, ENVIRONMENT, REFUSED, WRONG_COUNTS, SIDE_EFFECT, CALL_SITE, ERROR,
                             TIMEOUT, DEVICE_FAULT, CRASH)
FAILING: frozenset[str] = frozenset(VERDICTS[VERDICTS.index(REFUSED):])
FAILED_OUTCOMES: tuple[str, ...] = ("failed", "error")  # pytest's words for a test that did not pass
POISON = -0x5A5A5A5B  # 0xA5A5A5A5 as int32: what the harness fills an output with; never a count, so an unwritten row
# stands out (the harness writes it, the diagnosis reads it)


# Kinds of value a row holds, each with its sign ("+inf", "-nan_quiet"): what a wrong NaN predicate counts or misses
# whole. NaNs split by payload: the quiet bit alone (torch's float('nan')), quiet with more payload, signaling.
VALUE_KINDS: tuple[str, ...] = ("zero", "subnormal", "normal", "inf", "nan_canonical", "nan_quiet", "nan_signaling")
NAN_KINDS: frozenset[str] = frozenset(VALUE_KINDS[4:])
# the kind of each IEEE class of cases.ieee; the others ("finite", "nan_other_payload") are no one kind by name
KIND_OF_CLASS: dict[str, str] = {
    "zero": "zero", "min_subnormal": "subnormal", "max_subnormal": "subnormal", "min_normal": "normal",
    "one": "normal", "max_finite": "normal", "inf": "inf", "quiet_nan": "nan_canonical",
    "nan_all_payload": "nan_quiet", "signaling_nan": "nan_signaling", "nan_low_payload": "nan_signaling"}


def signed_kind(kind: str, negative: bool) -> str:
    """The key a row's `holds` counts a kind of value under: "+inf", "-nan_signaling"."""
    return f"{'-' if negative else '+'}{kind}"


@dataclass(frozen=True)
class ValueClass(JsonRecord):
    """One bit pattern as data (its IEEE class, sign and dtype), so rules and summaries never parse a row's label."""

    name: str  # an IEEE class of cases.ieee (quiet_nan, signaling_nan, zero, ...), or "nan_other_payload"
    negative: bool
    dtype: str
    bits: int
    is_nan: bool

    @property
    def signed_name(self) -> str:
        return f"{'-' if self.negative else '+'}{self.name} {self.dtype}"

    @property
    def kind(self) -> str:
        """Its signed kind of value ("+subnormal"), as a row's `holds` counts it; "" where the name tells none."""
        return signed_kind(KIND_OF_CLASS[self.name], self.negative) if self.name in KIND_OF_CLASS else ""


@dataclass(frozen=True)
class CaseParams(JsonRecord):
    """What a report shows of a case: its family, id, dtype, layout, shape, the family's detail and seed; and what
    its rows hold where the family knows it as data (the diagnosis reads those, not the row labels)."""

    family: str
    case_id: str
    dtype: str = ""
    layout: str = ""
    shape: tuple[int, ...] = ()
    detail: str = ""  # what sets the case apart in its family (NaN fraction, IEEE class, sweep layout, offset)
    seed: int | None = None
    row_classes: tuple[ValueClass, ...] = ()  # row i holds only row_classes[i] (IEEE class rows); () elsewhere
    nan_patterns: tuple[ValueClass, ...] = ()  # every NaN of the case is one of these (); () when not recorded
    in_domain: bool = True  # False: input outside the documented domain, judged only when the kernel accepts it
    buffer_step: int | None = None  # the check's place among calls on one reused input buffer (None: not one)

    def row_class(self, row: int) -> ValueClass | None:
        """What row ROW holds, when the case's rows are one class each."""
        return self.row_classes[row] if 0 <= row < len(self.row_classes) else None

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseParams:
        """Older files lack row_classes and nan_patterns (read as not recorded), in_domain (their outside cases
        were named "outside-...", the one place an id is read), buffer_step (read as none), and call the family kind."""
        older = {"family": data.get("kind"), "in_domain": not str(data.get("case_id", "")).startswith("outside-")}
        return from_data(cls, {**older, **data})


@dataclass(frozen=True)
class Unwritten(JsonRecord):
    """Whether a row the kernel never wrote reads as POISON in its result: the evidence "never written" needs (the
    direct path: always, into the harness's output; the wrapper path: when its output is a block the harness
    poisoned, harness.prepoison)."""

    observable: bool
    blind_rows: tuple[int, ...] = ()  # slots the allocator overwrites while the block is free: not observable there
    why: str = ""  # why it cannot be told, when it cannot

    def describe(self) -> str:
        """One line for a reader of the check."""
        if not self.observable:
            return f"never written: cannot be told on this check ({self.why})"
        blind = f", except rows {list(self.blind_rows)}" if self.blind_rows else ""
        return f"never written: observable (an unwritten row holds the poison{blind})"


@dataclass(frozen=True)
class WrongRow(JsonRecord):
    """One row whose count differs; `label` names what the row holds (IEEE class and bits, a pattern range) for a
    reader; `holds` and `short_suffix` say it as data, read from the input's bits (harness.compare.held_values)."""

    row: int
    expected: int
    got: int
    label: str = ""
    # how many elements of each signed kind of value (VALUE_KINDS) the row holds, kinds it holds none of left out;
    # () when not recorded (only a check's first wrong rows are, and only of a 2-D float input left unmodified)
    holds: tuple[tuple[str, int], ...] = ()
    # (lo, hi) for a row counted short: its last k elements hold exactly the NaNs it missed for every k from lo to
    # hi (a kernel that never read its last k elements counts what it did); () when not short or not recorded
    short_suffix: tuple[int, ...] = ()

    def describe(self) -> str:
        return f"row {self.row}: expected {self.expected}, got {self.got}" + (f" [{self.label}]" if self.label else "")


@dataclass(frozen=True)
class InputLayout(JsonRecord):
    """The input a check ran on, as data the diagnosis reads: its shape, strides and storage offset in elements,
    dtype, and the alignment of its first element in bytes (the largest power of two dividing the address, to 16)."""

    shape: tuple[int, ...] = ()
    strides: tuple[int, ...] = ()
    storage_offset: int = 0
    dtype: str = ""
    alignment: int | None = None

    def row_start(self, row: int) -> int | None:
        """The element index (from the storage's start) where ROW begins, for a 2-D input."""
        return self.storage_offset + row * self.strides[0] if len(self.strides) == 2 else None


@dataclass(frozen=True)
class Check(JsonRecord):
    """One comparison of a kernel's result with the reference, on one path."""

    params: CaseParams
    path: str
    verdict: str
    expected_total: int | None = None
    got_total: int | None = None
    problems: tuple[Problem, ...] = ()  # side effects and malformed results: each a kind and a reader's words
    wrong_rows: tuple[WrongRow, ...] = ()
    card: int | None = None
    input_desc: str = ""  # shape, strides and offset of the input, so a failure can be rebuilt (for a reader)
    refusal: str = ""  # the exception a refusing kernel raised ("AssertionError: ...")
    layout: InputLayout | None = None  # the same input as data (None: not a tensor, or an older results.json)
    rows: int | None = None  # rows the reference counted (every wrong row is in wrong_rows)
    unwritten: Unwritten | None = None  # whether a row never written would show (None: not recorded, older files)

    def __post_init__(self) -> None:
        # every problem has a kind: plain words (a caller's own side effects) are a problem of no known kind
        object.__setattr__(self, "problems", tuple(map(Problem.of, self.problems)))

    @property
    def ok(self) -> bool:
        return self.verdict == PASS

    def audited(self) -> Check:
        """The check, failed as wrong_counts when it says pass but its own totals or wrong rows say otherwise
        (a record that contradicts itself is never a pass)."""
        if self.verdict != PASS or (not self.wrong_rows and self.expected_total == self.got_total) \
                or (self.expected_total is None and self.got_total is None and not self.wrong_rows):
            return self
        why = (f"recorded as pass, but expected total {self.expected_total} and got total {self.got_total} differ"
               if not self.wrong_rows else f"recorded as pass with {len(self.wrong_rows)} wrong row(s)")
        return replace(self, verdict=WRONG_COUNTS, problems=(*self.problems, Problem(OTHER, why)))

    def to_dict(self) -> dict[str, Any]:
        """Its fields, each problem's words with its kind beside them (problem_kinds), and whether it passed."""
        return {**to_data(self), "problems": [p.text for p in self.problems],
                "problem_kinds": [p.kind for p in self.problems], "ok": self.ok}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Check:
        """Older files lack the verdict (read from `ok`) and problem_kinds (every problem reads as OTHER)."""
        words = list(data.get("problems") or ())
        kinds = [*(data.get("problem_kinds") or ()), *[OTHER] * len(words)]  # zip stops at the last word
        check = from_data(cls, {"verdict": PASS if data.get("ok") else WRONG_COUNTS, **data, "problems": []})
        return replace(check, problems=tuple(Problem(str(k), str(p)) for k, p in zip(kinds, words)))


@dataclass(frozen=True)
class Finding:
    """One line of what a test found wrong, as results.json's per-test `wrong_rows` lists it: a check's problem
    (no row) or one of its wrong rows; both carry the case they belong to."""

    case_id: str
    problem: str = ""  # a side effect or malformed result, worded for a reader; empty for a wrong row
    row: WrongRow | None = None

    def describe(self) -> str:
        return self.row.describe() if self.row is not None else self.problem

    def to_dict(self) -> dict[str, Any]:
        """results.json's entry: a problem is a row-less entry whose label is the problem; a row's data for the
        diagnosis (holds, short_suffix) stays with its check."""
        if self.row is None:
            return {"case_id": self.case_id, "row": None, "expected": None, "got": None, "label": self.problem}
        row = self.row
        return {"case_id": self.case_id, "row": row.row, "expected": row.expected, "got": row.got, "label": row.label}


def worst(verdicts: Iterable[str]) -> str:
    """The most severe verdict among several (PASS when there are none)."""
    return max(verdicts, key=VERDICTS.index, default=PASS)


@dataclass(frozen=True)
class TestRecord(JsonRecord):
    """Everything known about one test item once its reports are in: the one record every report reads."""

    __test__ = False  # not a pytest test class, whatever its name

    nodeid: str
    outcome: str = "pending"  # pytest's word: passed, failed, error, skipped, xfailed, xpassed, pending
    verdict: str = NOT_RUN
    params: CaseParams | None = None
    duration: float = 0.0
    checks: tuple[Check, ...] = ()
    message: str = ""
    waiver: dict[str, str] | None = None
    planted: dict[str, Any] | None = None
    call_sites: tuple[dict[str, Any], ...] = ()
    # a failed test's rerun label (reports.flaky): "deterministic", "flaky", "known flaky: ...", "not rerun: <why>"
    flaky: str | None = None
    reruns: tuple[dict[str, Any], ...] = ()  # each rerun in a fresh process: outcome, verdict, seconds, message
    not_run: NotRun | None = None  # why it did not run and what runs it, as the harness recorded it (verdict.not_run)
    crash_storm: CrashStorm | None = None  # the crash storm that left it unrun (verdict.crash_storm)

    @property
    def id(self) -> str:
        """The test name with its parameter id, as listings show it."""
        return self.nodeid.rsplit("::", 1)[-1]

    @property
    def test_name(self) -> str:
        return self.id.split("[", 1)[0]

    @property
    def family(self) -> str:
        return self.params.family if self.params else ""

    @property
    def path(self) -> str:
        paths = sorted({c.path for c in self.checks if c.path})
        return "/".join(paths)

    @property
    def failed(self) -> bool:
        return self.outcome in FAILED_OUTCOMES

    @property
    def expected_total(self) -> int | None:
        return _total(c.expected_total for c in self.checks)

    @property
    def got_total(self) -> int | None:
        return _total(c.got_total for c in self.checks)

    @property
    def findings(self) -> tuple[Finding, ...]:
        """What every check found wrong, check by check: its problems first, then its wrong rows."""
        found: list[Finding] = []
        for c in self.checks:
            found += [Finding(c.params.case_id, problem=p.text) for p in c.problems]
            found += [Finding(c.params.case_id, row=w) for w in c.wrong_rows]
        return tuple(found)

    @property
    def wrong_rows(self) -> tuple[WrongRow, ...]:
        """Every check's wrong rows (no problems): the rows a report counts as wrong."""
        return tuple(w for c in self.checks for w in c.wrong_rows)

    @property
    def cards(self) -> list[int]:
        return sorted({c.card for c in self.checks if c.card is not None})

    def with_(self, **changes: Any) -> TestRecord:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "nodeid": self.nodeid,
            "family": self.family,
            "parameters": self.params.to_dict() if self.params else {},
            "path": self.path,
            "outcome": self.outcome,
            "verdict": self.verdict,
            "duration": round(self.duration, 6),
            "expected_total": self.expected_total,
            "got_total": self.got_total,
            "wrong_rows": [f.to_dict() for f in self.findings],
            "cards": self.cards,
            "message": self.message,
            "waiver": self.waiver,
            "planted": self.planted,
            "call_sites": list(self.call_sites),
            "flaky": self.flaky,
            "reruns": list(self.reruns),
            "not_run": to_data(self.not_run),
            "crash_storm": to_data(self.crash_storm),
            "checks": [c.to_dict() for c in self.checks],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TestRecord:
        """A record as results.json holds it: its case under `parameters`; a record without a node id is refused."""
        return from_data(cls, {**data, "nodeid": str(data["nodeid"]), "params": data.get("parameters") or None})


def _total(values: Iterable[int | None]) -> int | None:
    values = list(values)
    return None if not values or None in values else sum(values)  # type: ignore[arg-type]

