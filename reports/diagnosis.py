"""Name likely bug classes from the pattern of failures, with their evidence; "no known pattern" over a guess.

Each rule (reports.diagnosis_rules.RULES) reads the records' data only, never their display text, and returns a
Diagnosis or nothing. A rule fires on a signature that the bug class leaves and others do not: a per-block OR keeps
counts between 1 and the number of blocks, a mishandled last block only hurts vocab sizes off the block (whose size
the shapes name), a predicate misses or counts whole IEEE classes, and so on; where a signature needs a control
(cases that pass with one thing changed), the rule asks for one and says which.
Categories are the planted bugs' classes (tests/planted): predicate, traversal, offsets, accumulation, output, side
effects, contract; plus launch, device (faults, crashes, timeouts no other rule explains), interpreter and unknown.

Ranking: an interpreter defect the preflight measured (harness.preflight) comes first when the failures fit it: a
fact about the run, not a guess. Then items seen across shapes before thin ones (one shape or at most two checks),
the kernel body's patterns that only the wrapper path shows after the others, then most failing tests explained,
rule order breaking ties. Cause before symptom: an item whose control explains another's failures (`explains`)
comes before it, whatever their weights. Each item knows the failing checks its signature fits; one whose checks
the items kept before it explain already is dropped and named in the item that explains it (`absorbed`: a stream
out of order also leaves the poison in the output; a dropped tail also reads IEEE rows shorter than a block as 0).
Failing tests that no kept item explains are listed last as "no known pattern". The verdicts are never changed here.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from reports.diagnosis_base import KERNEL_BODY, NO_PATTERN, Diagnosis, Failure, failing, ids, passing_checks
from reports.diagnosis_rules import RULES, interpreter
from verdict.record import TestRecord

# what a kernel-body pattern seen on the wrapper path alone can be the symptom of: the wrapper's own state or launch
WRAPPER_CAUSES = frozenset({"output", "launch"})


def explains(a: Diagnosis, b: Diagnosis) -> bool:
    """A accounts for B's failures: A rests on a controlled experiment (the same cases pass with one thing changed)
    and covers every failure B rests on; or A is the wrapper's own state or launch, found by such an experiment,
    beside a kernel-body pattern that only the wrapper path shows."""
    if a is b or not a.control:
        return False
    if b.explains and b.explains <= a.explains:
        return True
    return bool(b.demoted) and a.category in WRAPPER_CAUSES


def causes_first(ranked: Sequence[Diagnosis]) -> list[Diagnosis]:
    """RANKED with each item that explains another (and is not explained by it) moved just before the first item it
    explains; everything else keeps its order (a cycle of explanations too)."""
    items = list(ranked)
    causes = {i: [j for j, a in enumerate(items) if explains(a, b) and not explains(b, a)] for i, b in enumerate(items)}
    order: list[int] = []
    started: set[int] = set()

    def place(i: int) -> None:
        if i in started:
            return
        started.add(i)
        for j in causes[i]:
            place(j)
        order.append(i)

    for i in range(len(items)):
        place(i)
    return [items[i] for i in order]


def _drop_explained(ranked: Sequence[Diagnosis]) -> list[Diagnosis]:
    """Drop each item whose failures the items kept before it explain already (its evidence is theirs), naming it in
    the first kept item that covers all of them, else the first that shares any. An item with a control is dropped
    only where items with a control cover it: an experiment is not the symptom it isolates."""
    kept: list[Diagnosis] = []
    explained: set[Failure] = set()
    controlled: set[Failure] = set()
    for d in ranked:
        if not d.explains <= (controlled if d.control else explained):
            kept.append(d)
            explained |= d.explains
            controlled |= d.explains if d.control else set()
            continue
        owner = next((i for i, k in enumerate(kept) if d.explains <= k.explains), None)
        owner = owner if owner is not None else next((i for i, k in enumerate(kept) if d.explains & k.explains), None)
        if owner is not None:
            kept[owner] = replace(kept[owner], absorbed=(*kept[owner].absorbed, d.name))
    return kept


def _only(name: str, seen: set[str], others_pass: bool) -> str:
    return f"{name} {next(iter(seen))} only" + (" (the others count the same cases right)" if others_pass else "")


def scoped(d: Diagnosis, records: Sequence[TestRecord], partial: bool) -> Diagnosis:
    """D with what its evidence spans: shapes, dtypes and paths of the checks it explains, whether one path or
    dtype alone fails while the others pass the same cases, and thin when it rests on one shape or two checks."""
    by_id = {r.id: r for r in records}
    checks = [by_id[t].checks[i] for t, i in d.explains if t in by_id and i >= 0]
    support = len(d.explains)
    shapes = {"x".join(map(str, c.params.shape)) for c in checks if c.params.shape}
    dtypes = {c.params.dtype for c in checks if c.params.dtype}
    paths = {c.path for c in checks if c.path}
    failing_cases = {c.params.case_id for c in checks}
    passing = [c for c in passing_checks(records) if c.params.case_id in failing_cases]
    parts = [f"{support} failing check(s)" if checks else f"{support} failing test(s)"]
    if shapes:
        parts.append(f"seen on {next(iter(shapes))} only" if len(shapes) == 1 else f"{len(shapes)} shapes")
    if len(dtypes) == 1 and len({c.params.dtype for c in passing_checks(records) if c.params.dtype} - dtypes):
        parts.append(_only("dtype", dtypes, False))
    if len(paths) == 1 and any(c.path not in paths for c in passing):
        parts.append(_only("path", paths, True))
    thin = support <= 2 or len(shapes) == 1
    demoted = d.demoted
    if d.category in KERNEL_BODY and paths == {"wrapper"} and any(c.path == "direct" for c in passing):
        demoted = ("the direct launch of the same kernel counts the same cases right: the wrapper (its launch, "
                   "buffers or caching), not the kernel body")
    return replace(d, scope=", ".join(parts), thin=thin, partial=partial, demoted=demoted)


def diagnose(records: Sequence[TestRecord], *, environment: Mapping[str, str] | None = None,
             partial: bool = False) -> list[Diagnosis]:
    """A measured interpreter defect first, then every rule that fires, strongest first (broad before thin, causes
    before the symptoms they explain), less those an item before them explains; failing tests no kept item explains
    close the list as "no known pattern". partial: the run stopped early (-x): each item says so."""
    records = sorted(records, key=lambda r: r.nodeid)  # the same records in any order (xdist, merged shards) agree
    failed = failing(records)
    if not failed:
        return []
    found = [scoped(d, records, partial) for rule in RULES if (d := rule(records)) is not None]
    order = {d.name: i for i, d in enumerate(found)}
    found = causes_first(sorted(found, key=lambda d: (d.thin, bool(d.demoted), -d.weight, order[d.name])))
    measured = interpreter(records, environment or {})
    kept = _drop_explained([scoped(measured, records, partial), *found] if measured else found)
    explained = {case for d in kept for case in d.cases}
    rest = [r for r in failed if r.id not in explained]
    if rest:
        kept.append(Diagnosis("unknown", NO_PATTERN, f"{len(rest)} failing test(s) match no known pattern; "
                              "see the failure list", ids(rest), 0, partial=partial))
    return kept
