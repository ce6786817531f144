"""Each diagnosis rule on hand-built records: the signature it names (positive) and a near miss it must not name.

Records are built as the harness writes them (CaseParams, Check, WrongRow, TestRecord), so a rule that keys on
anything but the record would fail here.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import pytest

from reports import diagnosis as dg
from reports.diagnosis import NO_PATTERN, diagnose
from reports.tables import diagnosis_block
from cases.formats import fmt_of, hex_bits
from cases.ieee import CLASS_BY_NAME, value_class
from verdict.problem import (COPIED, INPUT_MODIFIED, MALFORMED, OUT_OF_MEMORY, PADDING_MODIFIED, SHARED_OUTPUT,
                             STRAY_WRITE, Problem)
from verdict.record import POISON, CaseParams, Check, InputLayout, TestRecord, Unwritten, ValueClass, WrongRow

pytestmark = pytest.mark.nan_reports
FAMILY_TEST = "tests/precision/test_families.py::test_case"
CONTRACT = "tests/precision/test_wrapper_contract.py"
COLUMN_STRIDE = "column stride ignored (a non-unit inner stride read as contiguous)"
EMPTY_INPUTS = "empty batches or a zero vocab mishandled (expected an empty or zero int32 result)"


def _params(family: str, case_id: str, shape: tuple[int, ...], layout: str = "", dtype: str = "fp32") -> CaseParams:
    return CaseParams(family, case_id, dtype, layout, shape, "", 42)


def _desc(shape: tuple[int, ...], offset: int = 0) -> str:
    return f"shape {shape}, strides ({shape[-1] if shape else 1}, 1), offset {offset}, float32 on cpu"


Row = tuple[int, int, str] | tuple[int, int, str, ValueClass]  # expected, got, label[, the row's IEEE class]


def case(family: str, case_id: str, shape: tuple[int, ...], rows: Sequence[Row] = (),
         path: str = "wrapper", *, layout: str = "", problems: Sequence[str] = (), offset: int = 0,
         nodeid: str = "", verdict: str = "", dtype: str = "fp32", message: str = "",
         row_stride: int | None = None, nan_patterns: Sequence[ValueClass] = (), in_domain: bool = True) -> TestRecord:
    """One test with one check: passing when it has no wrong rows and no problems; rows of one IEEE class each
    (every row a _class_row) record their classes, as the ieee family does."""
    wrong = tuple(WrongRow(i, e, g, label) for i, (e, g, label, *_) in enumerate(rows) if e != g)
    classes = tuple(row[3] for row in rows if len(row) == 4)
    params = replace(_params(family, case_id, shape, layout, dtype),
                     row_classes=classes if len(classes) == len(rows) else (), nan_patterns=tuple(nan_patterns),
                     in_domain=in_domain)
    ok = not wrong and not problems
    check_verdict = "pass" if ok else ("wrong_counts" if wrong else "side_effect")
    strides = (row_stride or (shape[-1] if shape else 1), 1)[-len(shape):] if shape else ()
    layout = InputLayout(shape, strides, offset, "float32", 16)
    check = Check(params, path, check_verdict, sum(row[0] for row in rows) if rows else 0,
                  sum(row[1] for row in rows) if rows else 0, tuple(problems), wrong, None, _desc(shape, offset),
                  layout=layout, rows=len(rows) or None)
    return TestRecord(nodeid or f"{FAMILY_TEST}[{case_id}-{path}]", "passed" if ok else "failed",
                      verdict or check_verdict, params, 0.1, (check,), message if not ok else "")


def _row(expected: int, got: int, label: str = "") -> tuple[int, int, str]:
    return expected, got, label


def _class_row(expected: int, got: int, name: str, *, negative: bool = False,
               dtype: str = "fp32") -> tuple[int, int, str, ValueClass]:
    """A row of one IEEE class, as the ieee family records it: a label for readers, the class as data."""
    fmt = fmt_of(dtype)
    value = value_class(CLASS_BY_NAME[name].bits(fmt, negative), fmt)
    return expected, got, f"{value.signed_name} {hex_bits(value.bits, fmt)}", value


def categories(records: Sequence[TestRecord]) -> list[tuple[str, str]]:
    return [(d.category, d.name) for d in diagnose(records)]


def first(records: Sequence[TestRecord]) -> tuple[str, str]:
    return categories(records)[0]


# -- nothing to say, or nothing known -----------------------------------------------------------------------
def test_passing_run_has_no_diagnosis() -> None:
    assert diagnose([case("matrix", "fp32-prefix-1x128-nan0.5", (1, 128), [_row(64, 64)])]) == []


def test_unknown_failure_is_no_known_pattern() -> None:
    found = diagnose([TestRecord("t.py::test_x", "failed", "error", message="odd")])
    assert [(d.category, d.name) for d in found] == [("unknown", NO_PATTERN)]


def test_unexplained_failures_are_listed_after_the_diagnoses() -> None:
    records = [case("padded", "fp32-padded-5x3000-stride3077", (5, 3000), [_row(10, 90)]),
               TestRecord("t.py::test_x", "failed", "error", message="odd")]
    found = diagnose(records)
    assert found[0].category == "traversal" and found[-1].name == NO_PATTERN and found[-1].cases == ("test_x",)


# -- accumulation --------------------------------------------------------------------------------------------
def test_per_block_or() -> None:
    records = [case("matrix", f"fp32-prefix-1x128-nan0.{i}", (1, 128), [_row(12 * i, 1)]) for i in (1, 5)]
    records.append(case("matrix", "fp32-prefix-2x16384-nan1.0", (2, 16384), [_row(16384, 2), _row(16384, 2)]))
    assert first(records) == ("accumulation", "flags summed as int1 (a per-block OR, not a count)")


def test_per_block_or_near_miss_zero_counts() -> None:
    """Counting 0 where NaNs are is not an OR (an OR gives at least 1): no int1 diagnosis."""
    records = [case("matrix", f"fp32-prefix-2x5000-nan0.{i}", (2, 5000), [_row(500 * i, 0)]) for i in (1, 5)]
    assert all(c != "accumulation" for c, _ in categories(records))


def test_narrow_accumulator() -> None:
    rows = [_row(n, n) for n in (1, 2048)] + [_row(4097, 4096), _row(70001, 4465)]
    assert first([case("magnitudes", "fp32-magnitudes-21x70001", (21, 70001), rows)])[1].startswith("narrow")


def test_narrow_accumulator_near_miss_small_counts_wrong() -> None:
    rows = [_row(2, 1), _row(70001, 4465)]
    assert all(not n.startswith("narrow") for _, n in categories([case("magnitudes", "m", (21, 70001), rows)]))


# -- offsets -------------------------------------------------------------------------------------------------
def _big(verdict: str = "crash", rows: Sequence[tuple[int, int, str]] = ()) -> TestRecord:
    record = case("bigoffset", "fp32-bigoffset-3x4099-stride1073745920", (3, 4099), rows or [_row(1, 2)],
                  row_stride=1073745920)
    return record.with_(verdict=verdict, checks=() if verdict == "crash" else record.checks,
                        message="worker 'gw0' crashed while running")


def test_big_offsets_crash_beside_other_failures() -> None:
    transposed = case("contract", "outside-transposed", (4, 16), [_row(5, 7)], layout="transposed",
                      nodeid=f"{CONTRACT}::test_outside_domain_refused_or_counted[transposed]", in_domain=False)
    found = categories([_big(), _big().with_(nodeid=f"{FAMILY_TEST}[x-direct]"), transposed])
    assert found[0][0] == "offsets" and found[1] == ("traversal", COLUMN_STRIDE)
    assert all(c != "device" for c, _ in found), "a crash explained by 32-bit offsets is not also a device crash"


def test_big_offsets_wrong_rows_past_2_31_only() -> None:
    """Rows start at 0, 2^30 + 4096 and 2^31 + 8192 (the layout's row stride): only the last is past 2^31."""
    rows = [_row(100, 100), _row(201, 201), _row(302, 7)]
    assert first([_big("wrong_counts", rows)])[0] == "offsets"


def test_big_offsets_near_miss_row_0_wrong_too() -> None:
    rows = [_row(100, 3), _row(201, 201), _row(302, 7)]
    assert all(c != "offsets" for c, _ in categories([_big("wrong_counts", rows)]))


def test_storage_offset() -> None:
    records = [case("contract", f"fp32-offset{o}-4x3000", (4, 3000), [_row(995, 995 + o)], offset=o) for o in (1, 3)]
    records.append(case("matrix", "fp32-prefix-2x5000-nan0.5", (2, 5000), [_row(2500, 2500)]))
    assert first(records)[1].startswith("the view's storage offset ignored")


def test_storage_offset_near_miss_offset_zero_wrong_too() -> None:
    records = [case("contract", "fp32-offset3-4x3000", (4, 3000), [_row(995, 998)], offset=3),
               case("matrix", "fp32-prefix-2x5000-nan0.5", (2, 5000), [_row(2500, 2499)]),
               case("matrix", "fp32-prefix-1x128-nan0.5", (1, 128), [_row(64, 64)])]
    assert all(c != "offsets" for c, _ in categories(records))


# -- predicate -----------------------------------------------------------------------------------------------
def test_predicate_class_rows() -> None:
    rows = [_class_row(0, 0, "zero"), _class_row(1000, 0, "quiet_nan", negative=True),
            _class_row(0, 1000, "inf")]
    found = diagnose([case("ieee", "fp32-ieee-rows", (22, 1000), rows)])
    assert found[0].category == "predicate" and "-quiet_nan fp32" in found[0].evidence and "+inf" in found[0].evidence


def test_predicate_accepted_dtype_miscounted() -> None:
    record = case("contract", "outside-dtype-float64", (2, 8), [_row(2, 0)], layout="dtype-float64", dtype="float64", in_domain=False)
    assert first([record]) == ("predicate", "the NaN predicate")


def test_predicate_near_miss_or_counts_on_class_rows() -> None:
    """A one-class NaN row counting 1 of 1000 is a per-block OR, not a class the predicate misses."""
    rows = [_class_row(1000, 1, "quiet_nan"), _class_row(1000, 1, "quiet_nan", negative=True)]
    records = [case("ieee", "fp32-ieee-rows", (22, 1000), rows), case("ieee", "bf16-ieee-rows", (22, 1000), rows)]
    assert [c for c, _ in categories(records)] == ["accumulation"]


def test_predicate_near_miss_integer_dtype() -> None:
    record = case("contract", "outside-dtype-int32", (2, 8), [_row(0, 3)], layout="dtype-int32", dtype="int32", in_domain=False)
    assert all(c != "predicate" for c, _ in categories([record]))


# -- traversal -----------------------------------------------------------------------------------------------
def test_tail_masked_lanes_counted() -> None:
    records = [case("matrix", "fp32-prefix-2x5000-nan0.0", (2, 5000), [_row(0, 3192)]),
               case("shapes", "fp32-shape-1x8191", (1, 8191), [_row(2096, 2097)])]
    assert first(records) == ("traversal", "the last, partial block of a row (masked lanes counted)")


def test_tail_with_a_passing_multiple() -> None:
    records = [case("matrix", "fp32-prefix-2x5000-nan0.1", (2, 5000), [_row(500, 0)]),
               case("matrix", "fp32-prefix-4x8192-nan0.5", (4, 8192), [_row(4096, 4096)])]
    assert first(records) == ("traversal", "the last, partial block of a row (mask or loop bound)")


def test_tail_near_miss_without_a_control() -> None:
    """Ragged vocabs undercount but no multiple of the block ran: no partial-block claim."""
    records = [case("matrix", "fp32-prefix-2x5000-nan0.1", (2, 5000), [_row(500, 0)])]
    assert categories(records) == [("unknown", NO_PATTERN)]


def test_block_sums() -> None:
    records = [case("matrix", "fp32-prefix-2x16384-nan0.5", (2, 16384), [_row(8192, 0)]),
               case("shapes", "fp32-shape-1x16385", (1, 16385), [_row(4047, 0)]),
               case("matrix", "fp32-prefix-2x5000-nan0.5", (2, 5000), [_row(2500, 2500)])]
    assert first(records) == ("traversal", "multi-block rows: blocks lost, overwritten or stepped wrong")


def test_block_sums_near_miss_short_rows_fail_too() -> None:
    records = [case("matrix", "fp32-prefix-2x16384-nan0.5", (2, 16384), [_row(8192, 0)]),
               case("matrix", "fp32-prefix-2x5000-nan0.5", (2, 5000), [_row(2500, 0)]),
               case("matrix", "fp32-prefix-1x128-nan0.5", (1, 128), [_row(64, 64)])]
    assert all(not n.startswith("multi-block") for _, n in categories(records))


def test_unread_lanes() -> None:
    records = [case("matrix", "fp32-prefix-2x5000-nan1.0", (2, 5000), [_row(5000, 4096)])]
    assert first(records) == ("traversal", "elements of each row never read (loop step, tile width or mask)")


def test_unread_lanes_near_miss_not_all_nan() -> None:
    records = [case("matrix", "fp32-prefix-2x5000-nan0.5", (2, 5000), [_row(2500, 2048)])]
    assert categories(records) == [("unknown", NO_PATTERN)]


def test_padding_counted() -> None:
    records = [case("padded", "fp32-padded-5x3000-stride3077", (5, 3000), [_row(600, 677)], "direct")]
    assert first(records) == ("traversal", "row stride (padding counted)")


def test_padding_near_miss_undercount() -> None:
    records = [case("padded", "fp32-padded-5x3000-stride3077", (5, 3000), [_row(600, 0)], "direct")]
    assert all(not n.startswith("row stride") for _, n in categories(records))


def test_column_stride() -> None:
    record = case("contract", "outside-transposed", (4, 16), [_row(5, 7)], layout="transposed", in_domain=False)
    assert first([record]) == ("traversal", "column stride ignored (a non-unit inner stride read as contiguous)")


def test_column_stride_near_miss_refused() -> None:
    record = case("contract", "outside-transposed", (4, 16), [_row(5, 5)], layout="transposed", in_domain=False)
    assert diagnose([record]) == []


def test_stream_order() -> None:
    """Wrong only where counts are read on the caller's stream, with a passing control read after a synchronize."""
    records = [case("semantics", f"stream-{k}-8x40000", (8, 40000), [_row(13000, 0)], layout="stream")
               for k in ("default", "non-default")]
    records.append(case("special", "fp32-special-2x1024", (2, 1024), [_row(37, 37)]))
    assert first(records)[0] == "device" and first(records)[1].startswith("stream order broken")


def test_stream_order_near_miss_without_a_control() -> None:
    """Everything wrong, stream cases included: nothing says the order is the cause."""
    records = [case("semantics", "stream-default-8x40000", (8, 40000), [_row(13000, 0)], layout="stream"),
               case("special", "fp32-special-2x1024", (2, 1024), [_row(37, 0)])]
    assert all(not d.name.startswith("stream order") for d in diagnose(records))


def test_graph_replay() -> None:
    records = [case("semantics", "graph-replay-6x5000", (6, 5000), [_row(1650, 1700)], layout="graph"),
               case("special", "fp32-special-2x1024", (2, 1024), [_row(37, 37)])]
    assert first(records)[1].startswith("graph replay returns stale counts")


def test_graph_replay_near_miss_without_a_control() -> None:
    records = [case("semantics", "graph-replay-6x5000", (6, 5000), [_row(1650, 1700)], layout="graph")]
    assert all(not d.name.startswith("graph replay") for d in diagnose(records))


def test_square() -> None:
    records = [case("contract", f"fp32-square-{n}x{n}", (n, n), [_row(1, n), _row(n, 1)]) for n in (5, 96)]
    records.append(case("matrix", "fp32-prefix-2x5000-nan0.5", (2, 5000), [_row(2500, 2500)]))
    assert first(records)[1].startswith("square inputs")


def test_square_near_miss_without_a_non_square_control() -> None:
    records = [case("contract", "fp32-square-96x96", (96, 96), [_row(1, 96), _row(96, 1)])]
    assert categories(records) == [("unknown", NO_PATTERN)]


# -- output --------------------------------------------------------------------------------------------------
def test_output_unwritten_rows() -> None:
    records = [case("matrix", "fp32-prefix-2x5000-nan0.0", (2, 5000), [_row(0, POISON), _row(0, 0)], "direct")]
    assert first(records)[0] == "output" and "never written" in first(records)[1]


def test_output_added_into_poison() -> None:
    records = [case("matrix", "fp32-prefix-2x5000-nan0.5", (2, 5000), [_row(2500, POISON + 2500)], "direct")]
    assert first(records)[0] == "output" and "added" in first(records)[1]


def test_output_stray_store_and_malformed_result() -> None:
    stray = case("contract", "fp32-guarded-9x8193", (9, 8193), [_row(5, 5)], "direct",
                 problems=[Problem(STRAY_WRITE, "kernel wrote 9 int32 slot(s) after its output (slots: [56, 57])")])
    malformed = case("matrix", "fp32-prefix-1x128-nan0.5", (1, 128), [_row(64, 64)],
                     problems=[Problem(MALFORMED, "dtype torch.int64, expected torch.int32")])
    assert first([stray])[0] == "output" and "outside the output" in first([stray])[1]
    assert first([malformed])[0] == "output" and "malformed" in first([malformed])[1]


def test_output_near_miss_wrong_counts_far_from_poison() -> None:
    records = [case("matrix", "fp32-prefix-2x5000-nan0.5", (2, 5000), [_row(2500, 2499)], "direct")]
    assert all(c != "output" for c, _ in categories(records))


def _refilled(step_ok: Sequence[bool]) -> TestRecord:
    checks = tuple(
        Check(replace(_params("contract", f"fp32-refilled-step{i}-6x5000", (6, 5000), "random"), buffer_step=i),
              "wrapper",
              "pass" if ok else "wrong_counts", 10, 10 if ok else 9, (), () if ok else (WrongRow(0, 10, 9),))
        for i, ok in enumerate(step_ok))
    return TestRecord(f"{CONTRACT}::test_refilled_logits_buffer[fp32]", "failed", "wrong_counts", checks[0].params,
                      0.1, checks, "AssertionError: wrong counts")


def test_stale_outputs() -> None:
    assert first([_refilled([True, False, False])]) == (
        "output", "results reused across calls (a cached output, or a cache keyed on the address)")


def test_stale_outputs_near_miss_not_one_buffer() -> None:
    """The same checks without their place among calls on one buffer (buffer_step) are not read as reuse."""
    record = _refilled([True, False, False])
    plain = record.with_(checks=tuple(replace(c, params=replace(c.params, buffer_step=None)) for c in record.checks))
    assert all(c != "output" for c, _ in categories([plain]))


def test_stale_outputs_near_miss_first_call_wrong() -> None:
    assert all(c != "output" for c, _ in categories([_refilled([False, False, False])]))


# -- side effects and the contract ---------------------------------------------------------------------------
def test_input_modified() -> None:
    record = case("padded", "fp32-padded-5x3000-stride3077", (5, 3000), [_row(600, 600)], "direct",
                  problems=[Problem(PADDING_MODIFIED, "input or its row padding modified: 288 element(s) changed")])
    assert first([record]) == ("side effects", "side effects: input or its row padding modified")


def test_input_modified_near_miss_outside_domain() -> None:
    """An outside-domain input reported modified is judged by its own rule, not as a side effect of in-domain use."""
    record = case("contract", "outside-rank-1d", (7,), problems=[Problem(INPUT_MODIFIED, "input modified")],
                  layout="rank-1d", in_domain=False)
    assert all(c != "side effects" for c, _ in categories([record]))


def test_copies() -> None:
    record = case("contract", "fp32-padded-5x3000", (5, 3000), [_row(9, 9)], layout="padded",
                  problems=[Problem(COPIED, "padded input copied (aten.clone.default)")])
    assert first([record]) == ("contract", "padded rows copied instead of read in place")


def test_copies_near_miss_storage_modified() -> None:
    record = case("contract", "fp32-padded-5x3000", (5, 3000), [_row(9, 9)], layout="padded",
                  problems=[Problem(PADDING_MODIFIED, "the padded storage was modified")])
    assert first([record])[0] == "side effects"


def test_rank_accepted() -> None:
    record = case("contract", "outside-rank-3d", (2, 3, 4), [_row(0, 0)], layout="rank-3d",
                  problems=[Problem(MALFORMED, "shape (6,), expected (2, 3)")], in_domain=False)
    assert first([record])[0] == "contract" and "rank" in first([record])[1]


def test_rank_accepted_near_miss_refused() -> None:
    record = case("contract", "outside-rank-3d", (2, 3, 4), layout="rank-3d", in_domain=False)
    assert diagnose([record]) == []


def _empty(shape: tuple[int, int], problem: Problem, nodeid: str = f"{CONTRACT}::test_empty_batch[0]") -> TestRecord:
    """An empty input's check as test_empty_batch records it: no rows to compare, a malformed result."""
    params = CaseParams("contract", f"empty-{shape[0]}x{shape[1]}", "float32", "empty", shape)
    check = Check(params, "wrapper", "side_effect", 0, 0, (problem,), layout=InputLayout(shape, (max(shape[1], 1), 1),
                                                                                       0, "float32", 16))
    return TestRecord(nodeid, "failed", "side_effect", params, 0.1, (check,), "AssertionError: malformed")


def test_empty_inputs() -> None:
    """A float result on an empty batch and on a zero vocab: read from the shape, whatever the test is called."""
    malformed = Problem(MALFORMED, "dtype torch.float32, expected torch.int32")
    records = [_empty((0, 5000), malformed, "tests/x.py::test_anything[a]"), _empty((3, 0), malformed,
                                                                                    "tests/x.py::test_anything[b]")]
    assert first(records) == ("contract", EMPTY_INPUTS)
    assert len(diagnose(records)) == 1  # "the output" on the same checks is not listed beside it


def test_empty_inputs_near_miss_non_empty_malformed() -> None:
    """The same malformed result on a non-empty input is the output's rule, not the empty-input one."""
    record = _empty((2, 8), Problem(MALFORMED, "dtype torch.float32, expected torch.int32"))
    assert first([record])[0] == "output"


def test_outside_domain_is_read_from_the_record_not_the_id() -> None:
    """in_domain decides: a rank-3 case recorded in-domain is not "another rank accepted", whatever its id says;
    one recorded outside is, whatever its id."""
    malformed = [Problem(MALFORMED, "shape (6,), expected (2, 3)")]
    outside = case("contract", "rank-3d-case", (2, 3, 4), [_row(0, 0)], layout="rank-3d", problems=malformed,
                   in_domain=False)
    named_outside = case("contract", "outside-rank-3d", (2, 3, 4), [_row(0, 0)], layout="rank-3d",
                         problems=malformed)
    assert "rank" in first([outside])[1]
    assert all("rank" not in name for _, name in categories([named_outside]))


def test_refused() -> None:
    params = _params("matrix", "fp32-prefix-1x128-nan0.5", (1, 128))
    check = Check(params, "wrapper", "refused", 64, None, refusal="TypeError: no")
    record = TestRecord(f"{FAMILY_TEST}[fp32-prefix-1x128-nan0.5-wrapper]", "failed", "refused", params,
                        checks=(check,), message="TypeError: no")
    assert first([record]) == ("contract", "in-domain input refused (an exception where counts were due)")


def _out_of_memory(case_id: str, shape: tuple[int, ...], path: str) -> TestRecord:
    """A call that raised the allocator's out-of-memory error on in-domain input, as harness.compare records it."""
    params = _params("generated", case_id, shape)
    text = "OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 MiB. GPU 0 has 7.81 MiB free"
    check = Check(params, path, "refused", 64, None, (Problem(OUT_OF_MEMORY, f"the call could not allocate: {text}"),),
                  refusal=text)
    return TestRecord(f"{FAMILY_TEST}[{case_id}-{path}]", "failed", "refused", params, checks=(check,), message=text)


def test_out_of_memory_is_not_a_refusal_and_ranks_after_the_counts() -> None:
    """A full card (the H100 with ten suites at once) made a predicate kernel's calls fail to allocate on nine
    shapes; the predicate's four miscounted checks still lead, and the refusal item claims none of the nine."""
    memory = [_out_of_memory(f"gen-s{i}-fp32-{i + 3}x8191", (i + 3, 8191), "wrapper") for i in range(9)]
    wrong = [case("ieee", f"fp32-ieee-rows-{n}", (22, n), [_class_row(0, 0, "zero"), _class_row(0, n, "inf")],
                  path=path) for n in (1000, 1024) for path in ("direct", "wrapper")]
    found = diagnose([*memory, *wrong])
    assert [(d.category, d.name.split(" (")[0]) for d in found] == [
        ("predicate", "the NaN predicate"), ("device", "out of memory during the call")]
    assert found[1].demoted and set(found[1].cases) == {r.id for r in memory}
    assert first([*memory, *[replace(r, nodeid=r.nodeid + "x") for r in memory]])[0] == "device"


def test_crash_not_explained_is_device() -> None:
    params = _params("matrix", "fp32-prefix-1x128-nan0.5", (1, 128))
    record = TestRecord(f"{FAMILY_TEST}[fp32-prefix-1x128-nan0.5-direct]", "failed", "crash", params,
                        message="worker 'gw0' crashed while running")
    assert first([record]) == ("device", "process crash")


def test_stale_outputs_near_miss_two_calls_both_wrong() -> None:
    """The two-calls test checks the second call first: a first call miscounted on its own is not a stale output."""
    checks = (Check(_params("contract", "fp32-two-calls-second-4x3000", (4, 3000)), "wrapper", "pass", 0, 0),
              Check(_params("contract", "fp32-two-calls-first-4x3000", (4, 3000)), "wrapper", "wrong_counts", 10, 1,
                    (), (WrongRow(0, 10, 1),)))
    record = TestRecord(f"{CONTRACT}::test_outputs_not_reused_across_calls[fp32]", "failed", "wrong_counts",
                        checks[0].params, 0.1, checks, "AssertionError: case fp32-two-calls-first-4x3000: wrong counts")
    assert all(c != "output" for c, _ in categories([record]))
    words_only = record.with_(checks=checks[:1], verdict="error",
                              message="AssertionError: get_num_nans returned the same output buffer for two calls")
    assert all(c != "output" for c, _ in categories([words_only]))  # the words decide nothing
    flagged = replace(checks[0], verdict="side_effect",
                      problems=(Problem(SHARED_OUTPUT, "one buffer for two calls"),))
    assert first([record.with_(checks=(flagged,), verdict="side_effect", message="")])[0] == "output"


# -- one failure, one diagnosis: a stronger item's checks are not named again (issue 16, item 10) ------------
TAIL = ("traversal", "the last, partial block of a row (mask or loop bound)")


def _tail_dropped_run() -> list[TestRecord]:
    """What a kernel that reads whole blocks only leaves: ragged vocabs short by their tail, rows shorter than a
    block (IEEE rows, contract views) read as 0, a multiple of the block right."""
    ieee = [_class_row(0, 0, "zero"), _class_row(1000, 0, "quiet_nan"),
            _class_row(1000, 0, "quiet_nan", negative=True)]
    return [case("matrix", "fp32-prefix-2x5000-nan0.1", (2, 5000), [_row(500, 0), _row(500, 0)]),
            case("matrix", "fp32-prefix-8x10000-nan1.0", (8, 10000), [_row(10000, 8192)]),
            case("shapes", "fp32-shape-1x8193", (1, 8193), [_row(2048, 2047)]),
            case("matrix", "fp32-prefix-4x8192-nan0.5", (4, 8192), [_row(4096, 4096)]),
            case("ieee", "fp32-ieee-rows", (22, 1000), ieee),
            case("contract", "fp32-offset3-4x3000", (4, 3000), [_row(995, 0)], offset=3,
                 nodeid=f"{CONTRACT}::test_offset_views[fp32-3-wrapper]")]


def test_tail_explains_what_weaker_rules_would_guess() -> None:
    """IEEE rows shorter than a block read as 0 are the dropped tail, not the NaN predicate; an all-NaN row
    short by its tail is not lanes never read; a contract view short by its tail is not "no known pattern"."""
    found = diagnose(_tail_dropped_run())
    assert [(d.category, d.name) for d in found] == [TAIL], found
    assert len(found[0].cases) == 5 and "other families fit it too" in found[0].evidence


def test_tail_near_miss_leaves_what_it_does_not_explain() -> None:
    """A predicate that counts the +NaN rows (not 0 everywhere) is not a tail's doing; a view short by more than
    its tail is not either: both stay, after the tail."""
    records = _tail_dropped_run()[:4]
    records.append(case("ieee", "fp32-ieee-rows", (22, 1000), [_class_row(1000, 1000, "quiet_nan"),
                                                              _class_row(1000, 0, "quiet_nan", negative=True)]))
    records.append(case("contract", "fp32-offset3-4x9000", (4, 9000), [_row(5000, 100)], offset=3,
                        nodeid=f"{CONTRACT}::test_offset_views[fp32-3-direct]"))
    found = categories(records)
    assert found[0] == TAIL and found[1] == ("predicate", "the NaN predicate") and found[-1] == ("unknown", NO_PATTERN)
    assert diagnose(records)[-1].cases == ("test_offset_views[fp32-3-direct]",)


def test_a_weaker_item_is_dropped_only_when_all_its_checks_are_explained() -> None:
    stronger = dg.Diagnosis("traversal", "a", "", ("t1", "t2"), 2, frozenset({("t1", 0), ("t2", 0)}))
    inside = dg.Diagnosis("predicate", "b", "", ("t1",), 1, frozenset({("t1", 0)}))
    partly = dg.Diagnosis("output", "c", "", ("t2", "t3"), 2, frozenset({("t2", 0), ("t3", -1)}))
    assert dg._drop_explained([stronger, partly, inside]) == [replace(stronger, absorbed=("b",)), partly]


# -- a measured interpreter defect, not a kernel bug (issue 16, item 9) -------------------------------------
BF16_DEFECTS = {"Triton": "triton 3.9.0",
                "Interpreter defects": "bf16 `x != x` is false for NaN, -NaN; bf16 `x == x` is true for NaN, -NaN; "
                                       "bf16 `x < 0` is false for -2"}


def _self_compare_run(bf16_got: int = 0) -> list[TestRecord]:
    """A kernel testing `x != x` on the loaded value under an interpreter that never finds bf16 NaNs that way;
    bf16_got: what each of its bf16 checks counts (0: none of their NaNs, as the defect makes it)."""
    records = []
    for dtype in ("fp32", "fp16", "bf16"):
        def got(due: int, dtype: str = dtype) -> int:
            return bf16_got if dtype == "bf16" else due

        ieee = [_class_row(0, 0, "zero", dtype=dtype), _class_row(1000, got(1000), "quiet_nan", dtype=dtype),
                _class_row(1000, 0 if dtype == "bf16" else 1000, "quiet_nan", negative=True, dtype=dtype)]
        records += [case("matrix", f"{dtype}-prefix-1x128-nan0.5", (1, 128), [_row(64, got(64))], dtype=dtype),
                    case("matrix", f"{dtype}-prefix-1x128-nan0.0", (1, 128), [_row(0, 0)], dtype=dtype),
                    case("ieee", f"{dtype}-ieee-rows", (22, 1000), ieee, dtype=dtype),
                    case("contract", f"{dtype}-offset3-4x3000", (4, 3000), [_row(995, got(995))], offset=3,
                         dtype=dtype, nodeid=f"{CONTRACT}::test_offset_views[{dtype}-3-wrapper]")]
    return records


def test_interpreter_defect_named_first_and_alone() -> None:
    found = diagnose(_self_compare_run(), environment=BF16_DEFECTS)
    assert [d.category for d in found] == ["interpreter"], [(d.category, d.name) for d in found]
    assert found[0].name.startswith("bf16 NaN comparison under the triton 3.9.0 interpreter")
    assert "every failing check is a bf16 input" in found[0].evidence and "upcast to fp32" in found[0].evidence
    assert len(found[0].cases) == 3
    assert 'id="nan-interpreter-note"' in diagnosis_block(found)


def test_interpreter_near_miss_not_measured() -> None:
    """Without the preflight's word in the environment the same failures are the kernel's to explain."""
    assert "interpreter" not in [c for c, _ in categories(_self_compare_run())]
    none_found = {**BF16_DEFECTS, "Interpreter defects": "none found"}
    assert all(d.category != "interpreter" for d in diagnose(_self_compare_run(), environment=none_found))


def test_interpreter_near_miss_some_bf16_nans_counted() -> None:
    """A kernel that counts some bf16 NaNs does not compare them as the defect does: its own predicate is suspect."""
    found = diagnose(_self_compare_run(bf16_got=1), environment=BF16_DEFECTS)
    assert all(d.category != "interpreter" for d in found)


def test_interpreter_near_miss_without_a_control() -> None:
    """No other dtype counting right: a kernel that counts nothing anywhere is not the interpreter's doing."""
    bf16_only = [r for r in _self_compare_run() if r.params and r.params.dtype == "bf16"]
    assert all(d.category != "interpreter" for d in diagnose(bf16_only, environment=BF16_DEFECTS))


# -- half the elements: a 16-bit reader of two-element int32 words that counts only the low half of each ------
HALF = ("traversal", "half of each row's elements never tested (every other element, one half of each two-element "
        "load, or half the row)")


def _half_dropped_run() -> list[TestRecord]:
    """What a 16-bit kernel counting only the low half of each 32-bit word left under the interpreter."""
    return [case("matrix", "bf16-prefix-1x128-nan1.0", (1, 128), [_row(128, 64)], dtype="bf16"),
            case("matrix", "bf16-scatter-1x128-nan0.5", (1, 128), [_row(64, 35)], dtype="bf16"),
            case("square", "fp16-square-2x2", (2, 2), [_row(0, 0), _row(2, 1)], dtype="fp16"),
            case("special", "bf16-special-2x1024", (2, 1024), [_row(0, 0), _row(37, 19)], dtype="bf16"),
            case("matrix", "bf16-prefix-1x8192-nan0.5", (1, 8192), [_row(4096, 4096)], dtype="bf16")]


def test_half_the_elements_explains_every_undercount() -> None:
    """All-NaN rows at exactly half their length name the class, and it explains the ragged shapes' undercounts
    that the tail rule would otherwise claim (their vocab is off the block, the multiple passes)."""
    found = diagnose(_half_dropped_run())
    assert [(d.category, d.name) for d in found] == [HALF], found
    assert len(found[0].cases) == 4 and "64 of 128" in found[0].evidence


def test_half_the_elements_near_miss() -> None:
    """One all-NaN row off its half (a dropped tail's 8192 of 10000) and the class is not named."""
    records = [*_half_dropped_run(), case("matrix", "bf16-prefix-1x10000-nan1.0", (1, 10000), [_row(10000, 8192)],
                                          dtype="bf16")]
    assert HALF not in categories(records)
    assert HALF not in categories(_tail_dropped_run())


# -- launch limits, row spacing and count shapes (structured rows: Check.rows and every wrong row) ----------------
def _batch(case_id: str, rows: int, wrong_from: int | None, dtype: str = "fp32", path: str = "wrapper",
           got: int = 0) -> TestRecord:
    """A narrow batch of `rows` rows of 2 NaNs each, every row from wrong_from on counting `got`."""
    counts = [_row(2, got if wrong_from is not None and i >= wrong_from else 2) for i in range(rows)]
    return case("shapes", case_id, (rows, 33), counts, path=path, dtype=dtype)


def test_row_limit_names_the_index_and_the_grid_limit() -> None:
    """The H200 finding: a wrapper whose grid stops at 65,535 programs; diagnosed as the last partial block before."""
    records = [_batch(f"{d}-shape-70001x33", 70_001, 65_535, d) for d in ("fp32", "fp16", "bf16")]
    records += [_batch("fp32-shape-4x8192", 4, None), _batch("fp32-shape-257x33", 257, None)]
    found = diagnose(records)
    assert found[0].category == "launch" and "65,535" in found[0].name and "grid" in found[0].name
    assert "seen on 70001x33 only" in found[0].scope and found[0].thin
    assert "cannot be told (not recorded)" in found[0].evidence  # no Check.unwritten: an older file


def test_row_limit_on_the_direct_path_says_the_rows_were_never_written() -> None:
    counts = [_row(2, 2 if i < 300 else POISON) for i in range(400)]
    found = diagnose([case("batches", "fp32-batch-400x7", (400, 7), counts, path="direct")])
    assert found[0].category == "launch" and "never written" in found[0].evidence


def test_row_limit_on_the_wrapper_path_reads_the_checks_unwritten_evidence() -> None:
    """The wrapper's output pre-poisoned (harness.prepoison): rows holding the poison were never written, rows
    holding anything else were written wrong, and an output the harness could not poison says why it cannot tell."""
    def wrapper_batch(got: int, unwritten: Unwritten) -> TestRecord:
        record = _batch("fp32-batch-400x7", 400, 300, got=got)
        check = replace(record.checks[0], unwritten=unwritten)
        assert Check.from_json(check.to_json()) == check  # the evidence survives results.json
        return record.with_(checks=(check,))

    def evidence(record: TestRecord) -> str:
        found = diagnose([record])
        assert found[0].category == "launch", found
        return found[0].evidence

    assert "never written" in evidence(wrapper_batch(POISON, Unwritten(True)))
    assert "were written" in evidence(wrapper_batch(0, Unwritten(True)))
    told = evidence(wrapper_batch(POISON, Unwritten(False, why="the result is another block")))
    assert "cannot be told (the result is another block)" in told and "never written" not in told
    blind = evidence(wrapper_batch(POISON, Unwritten(True, blind_rows=tuple(range(300, 400)))))
    assert "cannot be told" in blind  # every wrong row is one the allocator writes into: no evidence either way


def test_row_limit_near_miss_rows_below_wrong_too() -> None:
    records = [_batch("fp32-shape-70001x33", 70_001, 65_535).with_()]
    wrong = records[0].checks[0]
    early = wrong.__class__(**{**wrong.__dict__, "wrong_rows": (WrongRow(3, 2, 0), *wrong.wrong_rows)})
    assert all(c != "launch" for c, _ in categories([records[0].with_(checks=(early,))]))


def test_row_limit_near_miss_a_short_suffix_is_content_not_launch() -> None:
    """Magnitude rows are ordered by NaN count: the last rows wrong is a narrow counter, not a launch limit."""
    assert all(c != "launch" for c, _ in categories([_batch("fp32-shape-21x33", 21, 17)]))


@pytest.mark.parametrize("k, name", [(4, "every 4th row wrong"), (3, "every 3rd row wrong"),
                                     (2, "every 2nd row wrong"), (11, "every 11th row wrong")])
def test_every_kth_row(k: int, name: str) -> None:
    counts = [_row(2, 0 if i % k == k - 1 else 2) for i in range(64)]
    assert first([case("shapes", "fp32-shape-64x33", (64, 33), counts)])[1].startswith(name)


def test_every_kth_row_near_miss_irregular_rows() -> None:
    counts = [_row(2, 0 if i in (3, 7, 12) else 2) for i in range(64)]
    assert not any(" row wrong (a row index" in n for _, n in categories([case("shapes", "s", (64, 33), counts)]))


def test_saturated_counter() -> None:
    rows = [_row(n, min(n, 255)) for n in (1, 255, 256, 4097, 70001)]
    assert first([case("magnitudes", "fp32-magnitudes-5x70001", (5, 70001), rows)])[1].startswith(
        "counts saturate at 2^8 - 1")


def test_saturated_near_miss_one_row() -> None:
    rows = [_row(n, min(n, 255)) for n in (1, 255, 256)]
    assert all(not n.startswith("counts saturate") for _, n in categories([case("magnitudes", "m", (3, 70001), rows)]))


def test_off_by_constant() -> None:
    records = [case("shapes", f"fp32-shape-{r}x100", (r, 100), [_row(10, 11)] * r) for r in (2, 3)]
    assert first(records)[1].startswith("every wrong count off by +1")


def test_off_by_constant_near_miss_differing_offsets() -> None:
    records = [case("shapes", "fp32-shape-2x100", (2, 100), [_row(10, 11), _row(10, 13)])]
    assert all(not n.startswith("every wrong count off") for _, n in categories(records))


def test_garbage_counts() -> None:
    records = [case("shapes", "fp32-shape-2x100", (2, 100), [_row(10, -77), _row(10, 123456)])]
    assert first(records)[0] == "output" and "garbage" in first(records)[1]


def test_garbage_near_miss_the_poison_is_unwritten_not_garbage() -> None:
    records = [case("shapes", "fp32-shape-2x100", (2, 100), [_row(10, POISON), _row(10, POISON)], path="direct")]
    assert all("garbage" not in n for _, n in categories(records))


# -- what the evidence spans ----------------------------------------------------------------------------------
def test_a_pattern_on_one_shape_ranks_below_one_across_shapes() -> None:
    """Three padded shapes read their padding (broad, weight 3); a counter saturating on one shape in three dtypes
    explains more tests (weight 4 with its bonus) but rests on one shape: it comes second."""
    padded = [case("padded", f"fp32-padded-{r}x3000-stride3077", (r, 3000), [_row(10, 90)] * r) for r in (2, 3, 5)]
    thin = [case("magnitudes", f"{d}-magnitudes-2x70001", (2, 70001), [_row(256, 255), _row(4097, 255)], dtype=d)
            for d in ("fp32", "fp16", "bf16")]
    found = diagnose([*padded, *thin])
    assert [d.thin for d in found[:2]] == [False, True] and found[0].name.startswith("row stride")
    assert found[1].weight > found[0].weight and found[1].name.startswith("counts saturate")
    assert "3 shapes" in found[0].scope and "seen on 2x70001 only" in found[1].scope


def test_a_path_alone_failing_says_so() -> None:
    records = [case("padded", f"fp32-padded-{r}x3000-stride3077", (r, 3000), [_row(10, 90)] * r, path="wrapper")
               for r in (2, 3)]
    records += [case("padded", f"fp32-padded-{r}x3000-stride3077", (r, 3000), [_row(10, 10)] * r, path="direct")
                for r in (2, 3)]
    assert "path wrapper only" in diagnose(records)[0].scope


def test_a_partial_run_says_so_in_every_item() -> None:
    found = diagnose([case("padded", "fp32-padded-2x3000-stride3077", (2, 3000), [_row(10, 90)] * 2)], partial=True)
    assert found and all(d.partial for d in found)
    assert "Partial: the run stopped early" in diagnosis_block(found)
    assert dg.Diagnosis.from_dict(found[0].to_dict()).partial


# -- whole-suite patterns measured on the H200 (2026-12-03), where the first item used to be wrong ------------------
def test_a_wrapper_only_body_pattern_ranks_after_the_wrapper_s_own() -> None:
    """cache_by_address: the caching allocator hands the same address to the next case, so all-NaN rows get the
    previous case's half counts on the wrapper path only, while the direct launch counts them right."""
    records = []
    for r in (2, 4, 8):
        records.append(case("matrix", f"fp32-prefix-{r}x5000-nan1.0", (r, 5000), [_row(5000, 2500)] * r))
        records.append(case("matrix", f"fp32-prefix-{r}x5000-nan1.0", (r, 5000), [_row(5000, 5000)] * r,
                            path="direct"))
    stale = TestRecord("tests/precision/test_aliasing.py::test_refilled_logits_buffer[fp32]", "failed",
                       "wrong_counts", _params("aliasing", "fp32-6x5000-refilled-1", (6, 5000)), 0.1,
                       (Check(replace(_params("aliasing", "fp32-6x5000-refilled-0", (6, 5000)), buffer_step=0),
                              "wrapper", "pass", 6, 6),
                        Check(replace(_params("aliasing", "fp32-6x5000-refilled-1", (6, 5000)), buffer_step=1),
                              "wrapper", "wrong_counts",
                              12, 6, (), (WrongRow(0, 3, 1),))), "same inputs refilled")
    found = diagnose([*records, stale])
    assert found[0].category == "output" and "reused" in found[0].name, found
    body = next(d for d in found if d.category == "traversal")
    assert body.demoted and "direct launch" in body.demoted


def test_missed_patterns_explain_random_rows_short_while_float_nan_rows_count() -> None:
    """pred_quiet_only: signalling-NaN class rows count 0 (quiet ones right), rows of random NaN patterns fall
    short, every float('nan') matrix row counts: the predicate, not lanes never read."""
    ieee = case("ieee", "fp32-ieee-rows", (22, 1000), [_class_row(1000, 1000, "quiet_nan"),
                                                          _class_row(1000, 0, "signaling_nan"),
                                                          _class_row(1000, 0, "signaling_nan", negative=True)])
    short = [case("shapes", f"fp32-shape-{r}x{v}", (r, v), [_row(v, v - v // 4)] * r)
             for r, v in ((1, 8191), (3, 8193), (1, 16385), (3, 16385))]
    matrix = [case("matrix", "fp32-prefix-2x5000-nan1.0", (2, 5000), [_row(5000, 5000)] * 2)]
    assert first([ieee, *short, *matrix]) == ("predicate", "the NaN predicate")


def test_missed_patterns_do_not_claim_rows_when_float_nan_rows_fail_too() -> None:
    ieee = case("ieee", "fp32-ieee-rows", (22, 1000), [_class_row(1000, 1000, "quiet_nan"),
                                                          _class_row(1000, 0, "signaling_nan")])
    short = [case("shapes", f"fp32-shape-{r}x16385", (r, 16385), [_row(16385, 12000)] * r) for r in (1, 3)]
    matrix = [case("matrix", f"fp32-prefix-{r}x10000-nan1.0", (r, 10000), [_row(10000, 7000)] * r) for r in (2, 8)]
    found = diagnose([ieee, *short, *matrix])
    assert found[0].category == "traversal" and found[0].name.startswith("elements of each row never read"), found


def test_a_float_accumulator_is_not_garbage() -> None:
    """fp16_accum on the H200: counts past 2048 rounded to fp16's spacing, past 65,504 overflowed (negative)."""
    records = [case("shapes", "fp32-shape-3x16385", (3, 16385), [_row(16385, 16384)] * 3),
               case("shortwide", "fp32-shortwide-3x70001", (3, 70001), [_row(70001, -2147483648)] * 3),
               case("matrix", "fp32-prefix-8x10000-nan1.0", (8, 10000), [_row(10000, 10000 - 16)] * 8),
               case("matrix", "fp32-prefix-2x5000-nan0.1", (2, 5000), [_row(500, 500)] * 2)]
    found = diagnose(records)
    assert found[0].category == "accumulation" and all("garbage" not in d.name for d in found), found


def test_row_limit_tolerates_stale_counts_that_happen_to_be_right() -> None:
    """An unwritten output holds whatever was there: a few rows past the limit read right by chance."""
    counts = [_row(2, 2 if i < 65_535 or i % 50 == 0 else 0) for i in range(70_001)]
    found = diagnose([case("batches", "fp32-batch-70001x7", (70_001, 7), counts)])
    assert found[0].category == "launch" and "65,535" in found[0].name


def test_row_limit_near_miss_half_the_rows_past_it() -> None:
    counts = [_row(2, 2 if i < 65_535 or i % 2 else 0) for i in range(70_001)]
    assert all(c != "launch" for c, _ in categories([case("batches", "b", (70_001, 7), counts)]))


def test_a_count_off_by_a_few_elements_is_not_a_float_accumulator() -> None:
    """offset_dropped on the CPU whole suite: views read from their storage's start count a few NaNs more or less
    (2497 for 2500): not a value fp16 holds, so not an accumulator's rounding."""
    records = [case("contract", f"fp32-offset{o}-4x9000", (4, 9000), [_row(2500, 2500 - o)] * 4, offset=o)
               for o in (1, 3)]
    records.append(case("matrix", "fp32-prefix-2x5000-nan0.5", (2, 5000), [_row(2500, 2500)]))
    assert first(records)[0] == "offsets"


def test_a_check_with_no_recorded_layout_does_not_veto_the_storage_offset() -> None:
    """offset_dropped's whole suite: the property test's check recorded no layout (unknown offset, not offset 0)."""
    records = [case("contract", f"fp32-offset{o}-4x3000", (4, 3000), [_row(995, 995 + o)], offset=o) for o in (1, 3)]
    records.append(case("matrix", "fp32-prefix-2x5000-nan0.5", (2, 5000), [_row(2500, 2500)]))
    unknown = case("generated", "gen-s1-fp32-1x7-off1", (1, 7), [_row(0, 1)])
    records.append(unknown.with_(checks=tuple(c.__class__(**{**c.__dict__, "layout": None}) for c in unknown.checks)))
    assert first(records)[1].startswith("the view's storage offset ignored")


# -- rules read data (row classes, NaN patterns, problem kinds), never display text ----------------------------
_NAN_CLASSES = ("quiet_nan", "signaling_nan", "nan_low_payload", "nan_all_payload")


def _negative_nans_missed(dtype: str = "fp32") -> TestRecord:
    """Class rows of a predicate blind to the sign bit: every negative NaN row counts 0, every positive one right."""
    rows = [_class_row(0, 0, "zero", dtype=dtype)]
    rows += [_class_row(1000, 0 if negative else 1000, name, negative=negative, dtype=dtype)
             for name in _NAN_CLASSES for negative in (False, True)]
    return case("ieee", f"{dtype}-ieee-rows", (22, 1000), rows, dtype=dtype)


def _float_nan_rows(nan_bits: int, dtype: str = "bf16") -> list[TestRecord]:
    """Matrix rows of float('nan') cast to DTYPE as NAN_BITS (x86 casts it to bf16 0xFFFF), all counted 0."""
    pattern = value_class(nan_bits, fmt_of(dtype))
    return [case("matrix", f"{dtype}-prefix-{r}x{v}-nan1.0", (r, v), [_row(v, 0)] * r, dtype=dtype,
                 nan_patterns=[pattern]) for r, v in ((2, 5000), (8, 10000), (4, 8192))]


def _random_rows_half_read() -> list[TestRecord]:
    """All-NaN rows of random patterns (both signs) counting about half their length: what lanes never read give."""
    return [case("shapes", f"fp32-shape-{r}x{v}", (r, v), [_row(v, v * 12 // 25)] * r)
            for r, v in ((1, 8191), (3, 8193), (1, 16385), (3, 16385), (2, 70001))]


def test_a_sign_specific_miss_explains_float_nan_rows_cast_to_that_sign() -> None:
    """pred_negative on the CPU whole suite: negative NaN class rows count 0 while positive ones count, bf16
    float('nan') rows (cast to 0xFFFF, a negative NaN) count 0, random-pattern rows fall short by about half.
    The predicate, not lanes never read (the old rules vetoed it on the failing float('nan') rows)."""
    found = diagnose([_negative_nans_missed(), *_float_nan_rows(0xFFFF), *_random_rows_half_read()])
    assert [(d.category, d.name) for d in found] == [("predicate", "the NaN predicate")], found
    assert "every one negative while positive NaNs count right" in found[0].evidence


def test_float_nan_rows_of_a_sign_that_counts_keep_the_veto() -> None:
    """Near miss: the failing float('nan') rows hold a positive NaN (0x7FC0), a sign the class rows count: the
    missed negative classes do not explain them, so short random rows stay lanes never read."""
    found = diagnose([_negative_nans_missed(), *_float_nan_rows(0x7FC0), *_random_rows_half_read()])
    assert found[0].category == "traversal" and found[0].name.startswith("elements of each row never read"), found


def test_float_nan_rows_without_recorded_patterns_keep_the_veto() -> None:
    """Near miss: an older file records no NaN patterns for the float('nan') rows: no claim on them."""
    matrix = [r.with_(checks=tuple(replace(c, params=replace(c.params, nan_patterns=())) for c in r.checks))
              for r in _float_nan_rows(0xFFFF)]
    found = diagnose([_negative_nans_missed(), *matrix, *_random_rows_half_read()])
    assert found[0].category == "traversal", found


def test_class_rows_are_read_from_row_classes_not_labels() -> None:
    """Class rows with no label are still classes (the data); a label naming a class with no recorded row class
    (an older file) is only words: no predicate from it, and no regex falls back to it."""
    unlabelled = _negative_nans_missed()
    unlabelled = unlabelled.with_(checks=tuple(replace(c, wrong_rows=tuple(replace(w, label="") for w in c.wrong_rows))
                                               for c in unlabelled.checks))
    assert first([unlabelled]) == ("predicate", "the NaN predicate")
    words_only = _negative_nans_missed()
    words_only = words_only.with_(checks=tuple(replace(c, params=replace(c.params, row_classes=()))
                                               for c in words_only.checks))
    assert all(c != "predicate" for c, _ in categories([words_only]))


def test_problems_are_read_by_kind_not_words() -> None:
    """A stray store worded unlike the harness's message is still one (its kind); words that read like a malformed
    result, of no kind, are not."""
    stray = case("contract", "fp32-guarded-9x8193", (9, 8193), [_row(5, 5)], "direct",
                 problems=[Problem(STRAY_WRITE, "guard slots changed")])
    assert first([stray]) == ("output", "the output: stores outside the output (the guard slots around it changed)")
    words = case("matrix", "fp32-prefix-1x128-nan0.5", (1, 128), [_row(64, 64)],
                 problems=["dtype torch.int64, expected torch.int32"])
    assert categories([words]) == [("unknown", NO_PATTERN)]


def test_a_dtype_counting_no_nan_at_all_claims_no_float_nan_rows() -> None:
    """Near miss: bf16 class rows count no NaN of either sign (fp32 ones count right) and bf16 float('nan') rows
    count 0: a dtype counting nothing is not a pattern the predicate misses, so short random rows are not claimed."""
    rows = [_class_row(1000, 0, name, negative=negative, dtype="bf16")
            for name in _NAN_CLASSES for negative in (False, True)]
    bf16 = case("ieee", "bf16-ieee-rows", (22, 1000), rows, dtype="bf16")
    found = diagnose([_negative_nans_missed(), bf16, *_float_nan_rows(0xFFFF), *_random_rows_half_read()])
    claimed = {case_id for d in found if d.category == "predicate" for case_id in d.cases}
    assert not any(c.startswith(("test_case[bf16-prefix", "test_case[fp32-shape")) for c in claimed), found


# -- one diagnosis per set of records -----------------------------------------------------------------------
def test_diagnosis_does_not_depend_on_record_order() -> None:
    """Merged shards and an xdist run hand the records over in different orders: the diagnosis text must agree
    (a set joined into the evidence once named the dtypes in hash order and failed the shard-merge test)."""
    records = [case("special", f"{d}-special-2x1024", (2, 1024), [_row(0, 0), _row(37, 40)], dtype=d)
               for d in ("fp32", "fp16", "bf16")]
    records += [case("special", f"{d}-special-2x1024", (2, 1024), [_row(0, 0), _row(37, 37)], "direct", dtype=d)
                for d in ("fp32", "fp16", "bf16")]
    found = diagnose(records)
    assert found == diagnose(records[::-1]) == diagnose(records[2:] + records[:2])
    assert "special values bf16, special values fp16, special values fp32" in found[0].evidence
