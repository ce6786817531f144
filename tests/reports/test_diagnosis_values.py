"""A diagnosis never invents a cause (issue 57, item 5): failures that the values each row holds explain (the Inf,
subnormals or NaN patterns a wrong predicate counts or misses) are the predicate's evidence, never a block's, and no
block is guessed from which shapes pass; a real dropped tail still names its block.

Inputs are the suite's own cases (the matrix, edge shapes, sweeps, specials, IEEE rows from cases/families), counted
on the CPU by a simulated kernel (a NaN test on the bits, a traversal reading whole blocks only) and recorded as the
harness records them (compare_counts, then what each wrong row holds), so the rules read what a real run leaves.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

import pytest
import torch

from cases.families import ieee, matrix, shapes, special, sweep
from cases.family import Context
from cases.formats import fmt_of, from_bits, to_bits
from harness.compare import compare_counts, held_values, with_held_values
from reports.diagnosis import Diagnosis, diagnose
from reports.results import document, validate
from tests.reports.test_diagnosis import _row, case
from verdict.record import TestRecord, WrongRow

pytestmark = pytest.mark.nan_reports
TAIL = "the last, partial block of a row"
FAMILIES = (matrix.FAMILY, shapes.FAMILY, sweep.FAMILY, special.FAMILY, ieee.FAMILY)
CONTEXT = Context("cpu", 5)  # the large batch cut to 5 rows: its shape, not its size, is what a rule reads
Predicate = Callable[[torch.Tensor], torch.Tensor]  # the logits -> which elements the kernel counts


def _fields(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, int, int]:
    """Exponent and mantissa fields of each element, and the format's all-ones exponent and quiet bit."""
    fmt = fmt_of(x.dtype)
    bits = to_bits(x)
    return bits & fmt.exponent_mask, bits & fmt.mantissa_mask, fmt.exponent_mask, fmt.quiet_bit


def is_nan(x: torch.Tensor) -> torch.Tensor:
    exponent, mantissa, top, _ = _fields(x)
    return (exponent == top) & (mantissa != 0)


def inf_too(x: torch.Tensor) -> torch.Tensor:
    """`exponent all ones`: Inf counted with the NaNs."""
    exponent, _, top, _ = _fields(x)
    return exponent == top


def subnormal_too(x: torch.Tensor) -> torch.Tensor:
    """The non-normal bucket on each dtype's own bits: fp16's subnormals (random fp16 logits hold a few) count."""
    exponent, mantissa, _, _ = _fields(x)
    return is_nan(x) | ((exponent == 0) & (mantissa != 0))


def quiet_only(x: torch.Tensor) -> torch.Tensor:
    _, mantissa, _, quiet = _fields(x)
    return is_nan(x) & ((mantissa & quiet) != 0)


def positive_only(x: torch.Tensor) -> torch.Tensor:
    return is_nan(x) & (to_bits(x) & fmt_of(x.dtype).sign_bit == 0)


def count(x: torch.Tensor, predicate: Predicate, block: int) -> torch.Tensor:
    """What a kernel with this predicate, reading whole `block`s only (0: every element), returns."""
    vocab = x.shape[1]
    kept = vocab - vocab % block if block else vocab
    return predicate(x)[:, :kept].sum(dim=1).to(torch.int32)


@functools.cache
def run(predicate: Predicate, wrapper_block: int = 0, direct_block: int = 0) -> tuple[TestRecord, ...]:
    """The families' cases through both paths, recorded as the harness records them."""
    records = []
    for family in FAMILIES:
        for c in family.cases(CONTEXT):
            built, params = family.build(c), family.params(c)
            x = built.logits
            for path, block in (("wrapper", wrapper_block), ("direct", direct_block)):
                check = with_held_values(compare_counts(count(x, predicate, block), built.expected, params=params,
                                                        path=path, device_type="cpu", row_labels=built.labels), x)
                records.append(TestRecord(f"tests/precision/test_families.py::test_case[{c}-{path}]",
                                          "passed" if check.ok else "failed", check.verdict, params, 0.1, (check,)))
    return tuple(records)


def _tail(found: list[Diagnosis]) -> Diagnosis | None:
    return next((d for d in found if d.name.startswith(TAIL)), None)


PREDICATES = {"inf counted": inf_too, "subnormals counted": subnormal_too, "signaling missed": quiet_only,
              "negative missed": positive_only}


@pytest.mark.parametrize("name", PREDICATES)
def test_values_explain_a_predicate_no_block_is_inferred(name: str) -> None:
    """Each wrong row is off by exactly the Inf, subnormals or NaNs of one kind it holds: the predicate leads and
    claims those checks (sweeps, mixed IEEE rows, random rows), and no block is read from which vocabs failed."""
    records = run(PREDICATES[name])
    found = diagnose(records)
    assert found[0].category == "predicate", [(d.category, d.name, d.evidence[:200]) for d in found]
    assert _tail(found) is None and all(not d.blocks for d in found), [(d.name, d.evidence) for d in found]
    explained = set(found[0].cases)
    failing = {r.id for r in records if r.failed}
    assert explained == failing, sorted(failing - explained)


def test_a_dropped_tail_still_names_its_block() -> None:
    """Right predicate, whole blocks only (1,024 on the wrapper, 8,192 direct): each short row is short by exactly
    the NaNs of its last vocab mod B elements, so the block is named per path."""
    found = diagnose(run(is_nan, 1024, 8192))
    assert found[0].name.startswith(TAIL), [(d.name, d.evidence) for d in found]
    assert dict(found[0].blocks) == {"wrapper": 1024, "direct": 8192}, found[0].evidence


def test_a_second_bug_that_spoils_the_control_names_no_other_block() -> None:
    """Near miss: a dropped 2,048-block beside a predicate counting Inf. The Inf fail sweeps whose vocab is a multiple
    of 2,048, and the IEEE rows (shorter than the block, read as 0) no longer tell which values the predicate counts,
    so 2,048 is not a block the shapes show; no other block is named in its place (16,385 was: a passing vocab whose
    rows shorter than it count 0)."""
    found = diagnose(run(inf_too, 2048, 2048))
    assert all(dict(d.blocks) in ({}, {"wrapper": 2048, "direct": 2048}) for d in found), \
        [(d.name, d.blocks, d.evidence) for d in found]


def test_a_bound_a_few_lanes_short_names_no_block() -> None:
    """Near miss: a loop bound that stops 3 elements before each row's end leaves rows short by at most a partial
    block's worth, which fits whole-block readers of many sizes; the recorded suffixes say the missed NaNs are the
    last 3 elements', which no block's last partial block is, so no block is named."""
    def stops_short(x: torch.Tensor) -> torch.Tensor:
        counted = is_nan(x)
        counted[:, -3:] = False
        return counted

    found = diagnose(run(stops_short))
    assert all(not d.blocks for d in found), [(d.name, d.blocks, d.evidence) for d in found]


def test_what_a_row_holds_is_read_from_its_bits() -> None:
    """held_values: per signed kind of value, and the suffixes holding exactly the NaNs a short row missed."""
    x = torch.zeros(2, 8)
    x[0, 2], x[0, 5], x[0, 7] = float("inf"), float("nan"), float("nan")
    x[1] = from_bits([1, 0x80000000, 0x7FA00000, 0xFFC00001, 0x3F800000, 0x7F800000, 0xFF800000, 0x7FC00000],
                     fmt_of("fp32"))
    rows = held_values(x, [WrongRow(0, 2, 1), WrongRow(1, 3, 5)])
    assert dict(rows[0].holds) == {"+zero": 5, "+inf": 1, "+nan_canonical": 2} and rows[0].short_suffix == (1, 2)
    assert dict(rows[1].holds) == {"+subnormal": 1, "-zero": 1, "+nan_signaling": 1, "-nan_quiet": 1, "+normal": 1,
                                   "+inf": 1, "-inf": 1, "+nan_canonical": 1}
    assert rows[1].short_suffix == ()  # counted over: no suffix to read
    bf16 = held_values(x.to(torch.bfloat16), [WrongRow(0, 2, 0)])[0]
    assert dict(bf16.holds)["+inf"] == 1 and bf16.short_suffix == (3, 8)


def test_held_values_travel_through_results_json() -> None:
    """The rows' data is written with the check and validated; an older file without it reads as not recorded."""
    records = [r for r in run(inf_too) if r.failed][:3]
    doc = document(records, {}, 1, collected=len(records), finished=True, ended="tests failed")
    validate(doc, "test")
    back = [TestRecord.from_dict(c) for c in doc["cases"]]
    assert [w.holds for r in back for w in r.wrong_rows] == [w.holds for r in records for w in r.wrong_rows]
    assert any(w.holds for r in back for w in r.wrong_rows)
    older = {**doc["cases"][0], "checks": [{**c, "wrong_rows": [{k: v for k, v in w.items() if k in (
        "row", "expected", "got", "label")} for w in c["wrong_rows"]]} for c in doc["cases"][0]["checks"]]}
    assert all(not w.holds and not w.short_suffix for w in TestRecord.from_dict(older).wrong_rows)


def test_hand_built_rows_without_values_keep_the_old_reading() -> None:
    """Records with no `holds` (older files, hand-built ones) are not explained by values: a tail whose multiples
    pass in the same family is still read as the anchor's block."""
    records = [case("matrix", "fp32-prefix-2x5000-nan0.5", (2, 5000), [_row(2500, 2501), _row(2500, 2500)]),
               case("matrix", "fp32-prefix-4x8192-nan0.5", (4, 8192), [_row(4096, 4096)])]
    found = diagnose(records)
    assert found[0].name.startswith(TAIL) and "anchor's" in found[0].evidence, [(d.name, d.evidence) for d in found]
