"""The diagnosis's ranked registry (RULES): a rule that is one selection, an optional control and a text is a row
(diagnosis_base.Pattern); rules that read more are functions: of blocks (reports.diagnosis_blocks), IEEE classes
(_predicate), counts and rows (_counts), and here what the call did besides counting (the output's store, results
reused across calls, side effects, a measured interpreter defect)."""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from cases.anchor import ANCHOR_BLOCK_SIZE
from reports import flaky
from reports.diagnosis_base import (INTERPRETER, Diagnosis, Pattern, Rule, example, failing, found, has, ids,
                                    outside, passing_checks, vocab, wrong_checks)
from reports.diagnosis_blocks import tail
from reports.diagnosis_counts import (EXACT_IN_HALF, big_offsets, every_kth_row, half_the_elements, narrow,
                                      off_by_constant, per_block_or, row_limit, saturated, storage_offset,
                                      unread_lanes)
from reports.diagnosis_predicate import predicate
from verdict.interpreter import ENV_KEY as INTERPRETER_DEFECTS, from_text
from verdict.problem import (COPIED, INPUT_MODIFIED, MALFORMED, OUT_OF_MEMORY, PADDING_MODIFIED, SHARED_OUTPUT,
                             STRAY_WRITE)
from verdict.record import CRASH, DEVICE_FAULT, POISON, REFUSED, TIMEOUT, Check, TestRecord

Pair = tuple[TestRecord, Check]
BLOCK_FAMILIES = ("matrix", "shapes")  # families whose rows span one block or several


def _wrong(keep: Callable[[TestRecord, Check], bool]) -> Callable[[Sequence[TestRecord]], list[Pair]]:
    """The failing checks with wrong rows that `keep` picks."""
    return lambda records: [(r, c) for r, c in wrong_checks(records) if keep(r, c)]


def _only(scope: Callable[[TestRecord, Check], bool], keep: Callable[[Check], bool]
          ) -> Callable[[Sequence[TestRecord]], list[Pair]]:
    """The wrong checks in `scope` that `keep` picks, when it picks every one of them (else none)."""
    def hits(records: Sequence[TestRecord]) -> list[Pair]:
        wrong = _wrong(scope)(records)
        return wrong if all(keep(c) for _, c in wrong) else []
    return hits


def _failed(keep: Callable[[Check], bool]) -> Callable[[Sequence[TestRecord]], list[Pair]]:
    """The checks that did not pass, of failing tests, that `keep` picks."""
    return lambda records: [(r, c) for r in failing(records) for c in r.checks if not c.ok and keep(c)]


def _garbage(c: Check) -> bool:
    """Counts no traversal can give (negative, or more than the row holds) that are not the harness's poison:
    uninitialised memory or another buffer read back as the result (past 2048, an accumulator's overflow)."""
    return bool(vocab(c)) and any((w.got < 0 or w.got > vocab(c)) and w.got != POISON
                                  and not 0 <= w.got - POISON <= vocab(c) and w.expected <= EXACT_IN_HALF
                                  for w in c.wrong_rows)


def _detail(c: Check, fallback: str) -> str:
    """A failing check's problems, else the fallback."""
    return "; ".join(map(str, c.problems)) or fallback


def _checks(what: str, detail: Callable[[Check], str]) -> Callable[[Sequence[Pair], Sequence[Check]], str]:
    """The evidence of a rule on single checks: how many, and the first one's detail."""
    return lambda hits, _: f"{len(hits)} {what}, e.g. {detail(hits[0][1])}"


def _tests(detail: Callable[[TestRecord], str]) -> Callable[[Sequence[TestRecord], Sequence[Check]], str]:
    """The evidence of a rule on whole tests: how many, and the first one's detail."""
    return lambda hits, _: f"{len(hits)} test(s), e.g. {hits[0].id}: {detail(hits[0])}"


def _ended_in(verdict: str) -> Callable[[Sequence[TestRecord]], list[TestRecord]]:
    """The failing tests that ended in VERDICT (a fault, a crash, a timeout) that no offset rule explains."""
    def hits(records: Sequence[TestRecord]) -> list[TestRecord]:
        explained = set(big.cases) if (big := big_offsets(records)) else set()
        return [r for r in failing(records) if r.verdict == verdict and r.id not in explained]
    return hits


def _stream_order(records: Sequence[TestRecord]) -> list[Pair]:
    """The stream-layout checks read on the caller's stream that are wrong; where there are any, also the checks
    elsewhere whose rows hold the poison in a test that passed on a rerun: unwritten only now and then is the
    timing a stream race leaves (the poison's fill landing after the kernel's store), not a row the kernel skips."""
    wrong = wrong_checks(records)
    ordered = [(r, c) for r, c in wrong if c.params.layout == "stream"]
    if not ordered:
        return []
    raced = [(r, c) for r, c in wrong if c.params.layout != "stream" and flaky.kind(r.flaky) == flaky.FLAKY
             and all(w.got == POISON for w in c.wrong_rows)]
    return ordered + raced


def _stream_evidence(hits: Sequence[Pair], ok: Sequence[Check]) -> str:
    ordered = [c for _, c in hits if c.params.layout == "stream"]
    raced = len(hits) - len(ordered)
    return (f"counts read on the caller's stream without a device-wide synchronize are wrong ({len(ordered)} "
            f"checks), while {len(ok)} checks read after a synchronize pass: {example(ordered[0])}"
            + (f"; {raced} other check(s) left rows holding the poison only now and then (their tests passed on a "
               "rerun): the same race" if raced else ""))


def _out_of_memory(r: TestRecord) -> bool:
    """Every failing check of the test is an allocation that failed (OUT_OF_MEMORY), not a refusal of the input."""
    bad = [c for c in r.checks if not c.ok]
    return bool(bad) and all(any(p.kind == OUT_OF_MEMORY for p in c.problems) for c in bad)


def _refusal(r: TestRecord) -> str:
    """The first exception a check of the test recorded."""
    return next((c.refusal for c in r.checks if c.refusal), "")


def _first_line(r: TestRecord) -> str:
    return r.message.splitlines()[0][:200] if r.message else ""


# -- output ------------------------------------------------------------------------------------------------
def output(records: Sequence[TestRecord]) -> Diagnosis | None:
    """The store, not the count: rows left holding the poison, poison plus the count (added into the output),
    stores into the guard slots around the output, or a malformed result for input in the domain."""
    unwritten, added, stray, malformed = [], [], [], []
    for r in failing(records):
        for c in r.checks:
            if any(w.got == POISON for w in c.wrong_rows):
                unwritten.append(r)
            elif c.wrong_rows and all(0 <= w.got - POISON <= max(vocab(c), 1) for w in c.wrong_rows
                                      if w.got != w.expected):
                added.append(r)
            if has(c, STRAY_WRITE):
                stray.append(r)
            if not outside(c) and has(c, MALFORMED):
                malformed.append(r)
    parts = [(unwritten, "rows never written (the poison put there is still there)"),
             (added, "counts added to what the output held (poison + count): accumulated, not stored"),
             (stray, "stores outside the output (the guard slots around it changed)"),
             (malformed, "a malformed result (dtype, shape, device or layout)")]
    hits = [r for group, _ in parts for r in group]
    if not hits:
        return None
    first = next(r for r in hits)
    detail = next((p for c in first.checks for p in c.problems), "") or example(
        next(c for c in first.checks if c.wrong_rows))
    return found("output", "the output: " + "; ".join(text for group, text in parts if group),
                 f"{len(ids(hits))} test(s), e.g. {first.id}: {detail}", hits, bonus=1)


def stale_outputs(records: Sequence[TestRecord]) -> Diagnosis | None:
    """A later call's counts are an earlier call's (or one buffer is handed out twice): results reused across
    calls, by a cached buffer or a cache keyed on the input's address."""
    hits, shared_seen, first_right = [], False, 0
    for r in failing(records):
        shared = any(p.kind == SHARED_OUTPUT for c in r.checks for p in c.problems)  # one tensor, two calls
        steps = sorted((c for c in r.checks if c.params.buffer_step is not None), key=lambda c: c.params.buffer_step)
        first_ok = bool(steps) and steps[0].ok and any(not c.ok for c in steps[1:])
        if shared or first_ok:
            hits.append(r)
            shared_seen, first_right = shared_seen or shared, first_right + first_ok
    if not hits:
        return None
    how = "one output buffer handed back to two calls" if shared_seen else \
        "the first call counts right and later calls on the same buffer or shape do not"
    control = f"the first call on the buffer counts right ({first_right} test(s))" if first_right else ""
    return found("output", "results reused across calls (a cached output, or a cache keyed on the address)",
                 f"{how} ({len(hits)} test(s)), e.g. {hits[0].id}", hits, bonus=1, control=control)


# -- side effects and the contract -------------------------------------------------------------------------
def input_modified(records: Sequence[TestRecord]) -> Diagnosis | None:
    hits = [(r, p) for r in failing(records) for c in r.checks for p in c.problems
            if p.kind in (INPUT_MODIFIED, PADDING_MODIFIED) and not outside(c)]
    if not hits:
        return None
    padding = any(p.kind == PADDING_MODIFIED for _, p in hits)
    what = "input or its row padding modified" if padding else "input modified"
    return found("side effects", f"side effects: {what}", f"{len(ids([r for r, _ in hits]))} test(s), e.g. "
                 f"{hits[0][0].id}: {hits[0][1]}", [r for r, _ in hits])


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
    controls = [c for c in passing_checks(records)
                if c.params.dtype and c.params.dtype not in broken and (c.expected_total or 0) > 0]
    if not hits or not controls or not all(_counts_none(c) for _, c in with_nans):
        return None
    seen = sorted({c.params.dtype for _, c in hits})
    dtypes = "/".join(seen)
    flavour = environment.get("Triton") or "Triton"  # harness.environment's entry: "triton 3.9.0", "triton-ascend ..."
    n_failing = sum(1 for r in failing(records) for c in r.checks if not c.ok)
    share = "every failing check is" if len(hits) == n_failing else f"{len(hits)} of {n_failing} failing checks are"
    measured = "; ".join(d.text for d in defects if d.dtype in seen)
    name = f"{dtypes} NaN comparison under the {flavour} interpreter"
    return found(INTERPRETER, f"{name} (its defect, not the kernel's)",
                 f"{name} (measured at start: {measured}): "
                 f"{share} a {dtypes} input with its NaNs counted short, to 0 (e.g. {example(hits[0][1])}), "
                 f"while {controls[0].params.case_id} counts right. The failures stand: "
                 "judge on a device or upcast to fp32 before comparing", hits,
                 control=f"{len(controls)} check(s) of other dtypes count their NaNs right")


RULES: tuple[Rule, ...] = (
    row_limit, big_offsets, storage_offset, per_block_or, predicate,
    Pattern("accumulation", "narrow or float accumulator (counts past its range are lost)", _wrong(narrow),
            lambda hits, _: "only rows with many NaNs are wrong (smallest wrong count "
                            f"{min(w.expected for _, c in hits for w in c.wrong_rows)}), e.g. {example(hits[0][1])}",
            bonus=1),
    half_the_elements, tail,
    Pattern("traversal", "multi-block rows: blocks lost, overwritten or stepped wrong",
            _only(lambda r, c: r.family in BLOCK_FAMILIES, lambda c: vocab(c) > ANCHOR_BLOCK_SIZE),
            lambda hits, ok: f"only rows longer than one {ANCHOR_BLOCK_SIZE}-block miscount ({len(hits)} checks), "
                             f"e.g. {example(hits[0][1])}; {ok[0].params.case_id} passes",
            lambda c: c.params.family in BLOCK_FAMILIES and 1 < vocab(c) <= ANCHOR_BLOCK_SIZE,
            "{n} check(s) of rows within one block pass"),
    unread_lanes,
    Pattern("traversal", "row stride (padding counted)",
            _wrong(lambda r, c: (r.family == "padded" or c.params.layout == "padded")
                   and any(w.got > w.expected for w in c.wrong_rows)),
            lambda hits, _: f"rows whose stride exceeds vocab count their NaN padding ({len(hits)} checks), e.g. "
                            f"{example(hits[0][1])}"),
    Pattern("traversal", "square inputs: rows and columns swapped (the layout guessed from the shape)",
            _only(lambda r, c: True, lambda c: len(c.params.shape) == 2 and c.params.shape[0] == c.params.shape[1] > 1),
            lambda hits, ok: f"only square inputs miscount ({len(hits)} checks), e.g. {example(hits[0][1])}; "
                             f"{ok[0].params.case_id} passes",
            lambda c: len(c.params.shape) == 2 and c.params.shape[0] != c.params.shape[1],
            "{n} check(s) of non-square inputs pass"),
    Pattern("traversal", "column stride ignored (a non-unit inner stride read as contiguous)",
            _wrong(lambda r, c: c.params.layout == "transposed"),
            lambda hits, _: f"a transposed view was counted, wrongly, instead of refused: {example(hits[0][1])}"),
    every_kth_row, saturated, off_by_constant,
    Pattern("output", "garbage counts (negative or more than the row holds): an output never written, or another "
            "buffer returned", _wrong(lambda r, c: _garbage(c)), _checks("check(s)", example)),
    # judged against a control: the same kernel passes with the order or the capture taken away
    Pattern("device", "stream order broken (work on another stream without waiting for the caller's, or results the "
            "caller reads before they are written)", _stream_order, _stream_evidence,
            lambda c: c.params.layout not in ("stream", "card"),
            "{n} check(s) read after a device-wide synchronize pass, e.g. {first}"),
    Pattern("device", "graph replay returns stale counts (part of the call ran on the host or was skipped while "
            "captured)", _wrong(lambda r, c: c.params.layout == "graph"),
            lambda hits, ok: f"replayed after the input was refilled, the captured call counts the old contents, "
                             f"while {len(ok)} eager checks pass: {example(hits[0][1])}",
            lambda c: c.params.layout != "graph", "{n} eager check(s) pass, e.g. {first}"),
    stale_outputs,
    # beside "the output" on the same checks, the narrower reading wins (its bonus)
    Pattern("contract", "empty batches or a zero vocab mishandled (expected an empty or zero int32 result)",
            _failed(lambda c: c.params.in_domain and len(c.params.shape) == 2 and 0 in c.params.shape),
            _checks("check(s)", lambda c: f"{c.params.case_id} ({c.path}): {_detail(c, c.refusal or c.verdict)[:200]}"),
            bonus=1),
    output, input_modified,
    Pattern("contract", "padded rows copied instead of read in place",
            lambda records: [r for r in failing(records) if any(p.kind == COPIED for c in r.checks
                                                                for p in c.problems)],
            lambda hits, _: f"e.g. {hits[0].id}: "
                            f"{next(p for c in hits[0].checks for p in c.problems if p.kind == COPIED)}"),
    Pattern("contract", "input of another rank accepted and answered wrongly (refuse it, or count it exactly)",
            _failed(lambda c: not c.params.in_domain and c.params.layout.startswith("rank-")),
            _checks("case(s)", lambda c: f"{c.params.case_id}: "
                    + _detail(c, c.wrong_rows[0].describe() if c.wrong_rows else c.verdict))),
    Pattern("device", "out of memory during the call (the kernel's own allocations, or a card other processes fill)",
            lambda records: [r for r in failing(records) if r.verdict == REFUSED and _out_of_memory(r)],
            _tests(_refusal),
            demoted="not the counts: an allocation failed and no count was wrong; run the test alone to tell the "
                    "kernel's own allocations from a card other processes fill"),
    Pattern("contract", "in-domain input refused (an exception where counts were due)",
            lambda records: [r for r in failing(records) if r.verdict == REFUSED and not _out_of_memory(r)],
            _tests(_refusal)),
    Pattern("device", "device fault", _ended_in(DEVICE_FAULT), _tests(_first_line)),
    Pattern("device", "process crash", _ended_in(CRASH), _tests(_first_line)),
    Pattern("device", "timeout (a hung kernel)", _ended_in(TIMEOUT), _tests(_first_line)),
)
