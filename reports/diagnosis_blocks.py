"""The last, partial block of a row, with the block read from the shapes: which vocab sizes fail, which pass, and by
how much the rows are off.

A kernel that mishandles a row's last, partial block (a mask or loop bound, whole blocks or chunks only, masked lanes
read as NaN) fails only vocab sizes that are not a multiple of its block B and passes the multiples. B is inferred
for any block, a power of two or not, and per path (a wrapper may launch another block than the direct path gets),
from the counts, and only where every failing shape is off by what B's last block leaves: masked lanes add exactly
-vocab mod B to a row; a kernel reading whole blocks only leaves each row short by exactly the NaNs of its last
vocab mod B elements (where the row's short_suffix is recorded; else by at most that many), counting no more than its
whole blocks. The candidates are the divisors of passing vocabs (with NaNs) that divide no failing vocab; of those
every failing shape fits, the one whose counts fit the most failing checks of any family wins, then the one the
fewest passing rows shorter than it contradict, then the one the most passing vocabs agree with, then the largest;
sizes that score the same are named beside it. Where the counts name no block (a mask one lane too wide fits many),
only the anchor's is named, where the failing checks' own families pass at its multiples (the same cases at another
vocab), and `blocks` leaves the path out; no block is guessed from which shapes pass alone. Checks whose every wrong
row the predicate's values explain (diagnosis_predicate.value_explained: the Inf, subnormals or NaN patterns each row
holds) are no evidence of a block and are left out first.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from cases.anchor import ANCHOR_BLOCK_SIZE
from reports.diagnosis_base import Diagnosis, example, found, passing_checks, vocab, wrong_checks
from reports.diagnosis_predicate import value_explained
from verdict.record import Check, TestRecord

SHAPE_FAMILIES = ("matrix", "shapes", "sweep", "magnitudes")  # their failures must all be off the block
SHOWN_VOCABS = 8
Pair = tuple[TestRecord, Check]


@dataclass(frozen=True)
class Counts:
    """What a block signature reads of one failing check, once: its vocab and how far its wrong rows are off."""

    vocab: int
    short: tuple[int, int]  # the least and most a wrong row counts short (negative: over)
    most_got: int
    counted: bool  # some row counted a NaN
    excess: int | None  # the one amount every wrong row counts over, if they agree
    clean: bool  # no problem beside the counts
    # per wrong row whose values are recorded: the suffix lengths holding exactly the NaNs it missed ((1, 0): none)
    suffixes: tuple[tuple[int, int], ...] = ()


def counts_of(c: Check) -> Counts:
    """One failing check's Counts (read once per check, then tried against every candidate block)."""
    shorts = [w.expected - w.got for w in c.wrong_rows] or [0]
    over = {-s for s in shorts}
    suffixes = tuple((w.short_suffix[0], w.short_suffix[1]) if len(w.short_suffix) == 2 else (1, 0)
                     for w in c.wrong_rows if w.holds)
    return Counts(vocab(c), (min(shorts), max(shorts)), max((w.got for w in c.wrong_rows), default=0),
                  bool(c.got_total), next(iter(over)) if len(over) == 1 else None, not c.problems, suffixes)


def dropped(k: Counts, block: int) -> bool:
    """A kernel that reads whole blocks only: each wrong row short by exactly the NaNs of its last, partial block
    (where its values are recorded; else by at most its elements) and counting no more than the whole blocks hold;
    a row shorter than a block counts nothing."""
    part = k.vocab % block
    return (bool(part) and k.clean and (k.vocab >= block or not k.counted) and k.short[0] > 0
            and k.short[1] <= part and k.most_got <= k.vocab - part
            and all(lo <= part <= hi for lo, hi in k.suffixes))


def within_last(k: Counts, block: int) -> bool:
    """Off by no more than the last, partial block can make it: short by at most its elements, over by at most its
    masked lanes (a mask or loop bound, whatever else the kernel does)."""
    part = k.vocab % block
    return bool(part) and k.short[1] <= part and -k.short[0] <= block - part


def masked(k: Counts, block: int) -> bool:
    """Each wrong row counts exactly the masked lanes of its last block too."""
    return bool(k.vocab % block) and k.excess == -k.vocab % block


Signature = Callable[[Counts, int], bool]


@dataclass(frozen=True)
class Block:
    """One path's block as its shapes show it."""

    size: int
    signature: Signature  # masked or dropped: what the counts of the checks in `fits` match
    fits: tuple[Pair, ...]  # failing checks, of any family, whose counts fit the signature
    failing: tuple[int, ...]  # failing vocabs of the shape families (none a multiple)
    multiples: tuple[int, ...]  # passing vocabs (with NaNs) that are multiples
    others: tuple[int, ...]  # other sizes the shapes fit as well
    # "" when the counts name the block; "the anchor's" when they fit no candidate (a mask off by one, say) and the
    # failing checks' own families pass at multiples of the direct launch's block (the item's `blocks` leaves the
    # path out then)
    guess: str = ""


def _divisors(n: int) -> set[int]:
    """Block sizes n could be a multiple of; none for n < 2 (a count far below the truth, garbage in unwritten rows)."""
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0] if n >= 2 else []
    return {x for d in small for x in (d, n // d) if x >= 2}


def _with_nans(c: Check) -> bool:
    """A passing check that says something of a block: it has NaNs (a row with none passes whatever is read)."""
    return vocab(c) > 0 and (c.expected_total or 0) > 0


def _candidates(wrong: Sequence[Counts], controls: Sequence[int]) -> tuple[set[int], Signature]:
    """Masked lanes name their block exactly (two vocabs, or one and a passing multiple, and more than one lane over
    somewhere); otherwise divisors of the passing vocabs that divide no failing vocab and leave every failing row off
    by no more than its last block."""
    first, vocabs = wrong[0], {k.vocab for k in wrong}
    if first.excess is not None and max(k.excess or 0 for k in wrong) > 1:  # one lane over: a bound off by one
        sizes = {b for b in _divisors(first.vocab + first.excess) if all(masked(k, b) for k in wrong)
                 and (len(vocabs) > 1 or any(v % b == 0 for v in controls))}  # one vocab alone names any excess
        if sizes:
            return sizes, masked
    return {b for v in controls for b in _divisors(v) if all(within_last(k, b) for k in wrong)}, dropped


def _anchor_control(wrong: Sequence[Pair], passing: Sequence[Check]) -> tuple[int, ...]:
    """Vocabs that are multiples of the anchor's block and pass, with NaNs, in a family of the failing checks: the
    same cases at another vocab, the one control a block the counts do not name may rest on."""
    families = {c.params.family for _, c in wrong}
    return tuple(sorted({vocab(c) for c in passing if _with_nans(c) and c.params.in_domain
                         and c.params.family in families and vocab(c) % ANCHOR_BLOCK_SIZE == 0}))


def infer(wrong: Sequence[Pair], everywhere: Sequence[Pair], passing: Sequence[Check]) -> Block | None:
    """The block of one path: `wrong` its shape families' failing checks (every one must be off the block),
    `everywhere` all its failing 2-D checks (their counts pick among candidates), `passing` its passing checks."""
    if not wrong or any(not vocab(c) for _, c in wrong):
        return None
    agree = [vocab(c) for c in passing if _with_nans(c) and c.params.in_domain]
    controls = sorted(set(agree))
    shaped = [counts_of(c) for _, c in wrong]
    sizes, signature = _candidates(shaped, controls)
    if not sizes:
        return None
    counted = [(r, c, counts_of(c)) for r, c in everywhere if vocab(c)]
    exact = [b for b in sizes if all(signature(k, b) for k in shaped)]  # every failing shape what B's tail leaves

    def score(b: int) -> tuple[int, int, int, int]:
        """Failing checks whose counts fit, passing rows shorter than the block (a partial block passing whole),
        passing vocabs agreeing (multiples) or not, then the size."""
        fit = sum(signature(k, b) for _, _, k in counted)
        return fit, -sum(v < b for v in agree), sum(1 if v % b == 0 else -1 for v in agree), b

    failing = tuple(sorted({vocab(c) for _, c in wrong}))
    if not exact:  # the counts name no block: only the anchor's, on a control of the same families
        same = _anchor_control(wrong, passing)
        return Block(ANCHOR_BLOCK_SIZE, signature, (), failing, same, (), "the anchor's") \
            if ANCHOR_BLOCK_SIZE in sizes and same else None
    ranked = sorted(exact, key=score, reverse=True)
    best = ranked[0]
    ties = tuple(b for b in ranked if b != best and score(b)[:3] == score(best)[:3])
    multiples = tuple(sorted({v for v in controls if v % best == 0}))
    if signature is dropped and not multiples:
        return None
    return Block(best, signature, tuple((r, c) for r, c, k in counted if signature(k, best)), failing, multiples,
                 ties)


def _unexplained(records: Sequence[TestRecord]) -> list[Pair]:
    """The wrong 2-D checks that the predicate's values do not explain: what a block may be read from."""
    by_values = {(r.id, id(c)) for r, c in value_explained(records)}
    return [(r, c) for r, c in wrong_checks(records) if vocab(c) and (r.id, id(c)) not in by_values]


def _blocks_by_path(records: Sequence[TestRecord]) -> dict[str, Block] | None:
    """Each failing path's block, read from that path's checks; from every path's checks together where one path's
    alone name none (a control seen on the other path only)."""
    wrong = _unexplained(records)
    shaped = [(r, c) for r, c in wrong if r.family in SHAPE_FAMILIES]
    passing = passing_checks(records)
    paths = sorted({c.path for _, c in shaped})
    per_path = {p: infer([x for x in shaped if x[1].path == p], [x for x in wrong if x[1].path == p],
                         [c for c in passing if c.path == p]) for p in paths}
    if all(per_path.values()):
        return per_path  # type: ignore[return-value]
    joint = infer(shaped, wrong, passing)
    return {p: joint for p in paths} if joint else None


def _spell(vocabs: Sequence[int]) -> str:
    shown = ", ".join(map(str, vocabs[:SHOWN_VOCABS]))
    return shown + (f" (+{len(vocabs) - SHOWN_VOCABS} more)" if len(vocabs) > SHOWN_VOCABS else "")


def _path_evidence(path: str, b: Block) -> str:
    """What one path's shapes say of its block, with the sizes that fit as well."""
    failing, multiples = _spell(b.failing), _spell(b.multiples)
    if b.signature is masked:
        how = (f"each wrong row (vocabs {failing}) counts exactly the masked lanes of its last {b.size}-block too "
               f"(-vocab mod {b.size})")
    else:
        counts = (f"the counts of {len(b.fits)} failing check(s) fit a kernel that reads whole {b.size}-blocks only "
                  f"(each row short by at most vocab mod {b.size})" if b.fits else
                  "each wrong row is off by no more than its last, partial block; the counts name no block, "
                  f"B={b.size} is the anchor's (the direct launch's BLOCK_SIZE), its multiples passing in the "
                  "failing cases' own families")
        how = f"rows whose vocab is not a multiple of B={b.size} fail (vocabs {failing}); multiples pass " \
              f"(vocabs {multiples}); {counts}"
    also = f" ({', '.join(map(str, b.others[:3]))} fit the shapes as well)" if b.others else ""
    return f"{path} path: {how}{also}"


def tail(records: Sequence[TestRecord]) -> Diagnosis | None:
    """Only vocab sizes off a block miscount while its multiples pass, or the excess is exactly the masked lanes;
    it explains every other wrong check its signature fits (rows shorter than a block read as 0, say)."""
    found_blocks = _blocks_by_path(records)
    if not found_blocks:
        return None
    shaped = [(r, c) for r, c in _unexplained(records) if r.family in SHAPE_FAMILIES]
    fits = [x for b in {id(b): b for b in found_blocks.values()}.values() for x in b.fits]
    hits = list({(r.id, id(c)): (r, c) for r, c in [*shaped, *fits]}.values())
    more = [c for r, c in hits if r.family not in SHAPE_FAMILIES]
    all_masked = all(b.signature is masked for b in found_blocks.values())
    name = "the last, partial block of a row " + ("(masked lanes counted)" if all_masked else "(mask or loop bound)")
    evidence = "; ".join(_path_evidence(p, b) for p, b in found_blocks.items())
    evidence += f"; e.g. {example(shaped[0][1])}"
    if more:
        evidence += f"; {len(more)} wrong check(s) of other families fit it too, e.g. {example(more[0])}"
    # a controlled experiment where the multiples pass and the failing counts are what the partial block gives
    controlled = all(b.multiples and b.fits for b in found_blocks.values())
    control = "; ".join(f"{p} path: multiples of {b.size} pass (vocabs {_spell(b.multiples)})"
                        for p, b in found_blocks.items()) if controlled else ""
    blocks = tuple((p, b.size) for p, b in found_blocks.items() if not b.guess)  # only what the counts name
    return found("traversal", name, evidence, hits, bonus=1 if all_masked else 0, control=control, blocks=blocks)
