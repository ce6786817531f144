"""Rules on what the call did besides counting: stream order and graph replay (judged against passing controls), the
output's store, results reused across calls, side effects, the wrapper's contract, a measured interpreter defect,
and what the process did (faults, crashes, timeouts)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from reports.diagnosis_base import (INTERPRETER, Diagnosis, Rule, example, failing, found, has, ids, outside,
                                    passing_checks, vocab, wrong_checks)
from reports.diagnosis_counts import big_offsets
from verdict.interpreter import ENV_KEY as INTERPRETER_DEFECTS, from_text
from verdict.problem import COPIED, INPUT_MODIFIED, MALFORMED, PADDING_MODIFIED, SHARED_OUTPUT, STRAY_WRITE
from verdict.record import POISON, REFUSED, Check, TestRecord


# -- judged against a control: the same kernel passes with the order or the capture taken away -------------------
def stream_order(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Counts read on the caller's stream are wrong while the same kernel counts right after a device-wide
    synchronize: its work is not ordered after the caller's writes, or its results not before the caller's reads."""
    hits = [(r, c) for r, c in wrong_checks(records) if c.params.layout == "stream"]
    controls = [c for c in passing_checks(records) if c.params.layout not in ("stream", "card")]
    if not hits or not controls:
        return None
    return found("device", "stream order broken (work on another stream without waiting for the caller's, or "
                 "results the caller reads before they are written)",
                 f"counts read on the caller's stream without a device-wide synchronize are wrong "
                 f"({len(hits)} checks), while {len(controls)} checks read after a synchronize pass: "
                 f"{example(hits[0][1])}", hits,
                 control=f"{len(controls)} check(s) read after a device-wide synchronize pass, e.g. "
                         f"{controls[0].params.case_id}")


def graph_replay(records: Sequence[TestRecord]) -> Diagnosis | None:
    """A call captured in a device graph replays wrong counts while eager calls count right: work the call did
    on the host (a cache, a plan read from the data) or skipped is not in the graph."""
    hits = [(r, c) for r, c in wrong_checks(records) if c.params.layout == "graph"]
    controls = [c for c in passing_checks(records) if c.params.layout != "graph"]
    if not hits or not controls:
        return None
    return found("device", "graph replay returns stale counts (part of the call ran on the host or was skipped "
                 "while captured)", f"replayed after the input was refilled, the captured call counts the old "
                 f"contents, while {len(controls)} eager checks pass: {example(hits[0][1])}", hits,
                 control=f"{len(controls)} eager check(s) pass, e.g. {controls[0].params.case_id}")


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


def copies(records: Sequence[TestRecord]) -> Diagnosis | None:
    hits = [(r, p) for r in failing(records) for c in r.checks for p in c.problems if p.kind == COPIED]
    if not hits:
        return None
    return found("contract", "padded rows copied instead of read in place",
                 f"e.g. {hits[0][0].id}: {hits[0][1]}", [r for r, _ in hits])


def rank_accepted(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Input of another rank counted as if it were 2-D: neither refused nor counted exactly."""
    hits = [(r, c) for r in failing(records) for c in r.checks
            if outside(c) and c.params.layout.startswith("rank-") and not c.ok]
    if not hits:
        return None
    c = hits[0][1]
    detail = "; ".join(map(str, c.problems)) or (c.wrong_rows[0].describe() if c.wrong_rows else c.verdict)
    return found("contract", "input of another rank accepted and answered wrongly (refuse it, or count it exactly)",
                 f"{len(hits)} case(s), e.g. {c.params.case_id}: {detail}", hits)


def empty_inputs(records: Sequence[TestRecord]) -> Diagnosis | None:
    """An in-domain input with no rows or no vocab (a zero in its shape) answered wrongly or refused."""
    hits = [(r, c) for r in failing(records) for c in r.checks
            if not c.ok and c.params.in_domain and len(c.params.shape) == 2 and 0 in c.params.shape]
    if not hits:
        return None
    c = hits[0][1]
    detail = "; ".join(map(str, c.problems)) or c.refusal or c.verdict
    return found("contract", "empty batches or a zero vocab mishandled (expected an empty or zero int32 result)",
                 f"{len(hits)} check(s), e.g. {c.params.case_id} ({c.path}): {detail[:200]}", hits,
                 bonus=1)  # beside "the output" on the same checks, the narrower reading wins


def refused(records: Sequence[TestRecord]) -> Diagnosis | None:
    hits = [r for r in failing(records) if r.verdict == REFUSED]
    if not hits:
        return None
    detail = next((c.refusal for c in hits[0].checks if c.refusal), "")
    return found("contract", "in-domain input refused (an exception where counts were due)",
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


# -- what the process did ----------------------------------------------------------------------------------
def by_verdict(verdict: str, name: str) -> Rule:
    """A rule naming the failing tests that ended in VERDICT (a fault, a crash, a timeout) no offset rule explains."""
    def rule(records: Sequence[TestRecord]) -> Diagnosis | None:
        explained = set(big.cases) if (big := big_offsets(records)) else set()
        hits = [r for r in failing(records) if r.verdict == verdict and r.id not in explained]
        if not hits:
            return None
        first = hits[0]
        detail = first.message.splitlines()[0][:200] if first.message else ""
        return found("device", name, f"{len(hits)} test(s), e.g. {first.id}: {detail}", hits)

    rule.__name__ = f"verdict_{verdict}"
    return rule
