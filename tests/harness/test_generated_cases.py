"""The square, offset and generated families: ids rebuild their tensors bit-exactly, placement keeps the offset,
and each family catches the false green it was made for (a transposing wrapper, a wrapper that drops the storage
offset, a kernel wrong past 2^17 columns that the property test finds and shrinks to a rerunnable id)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings

from cases.families import generated, offset, square
from cases.family import Context
from cases.formats import to_bits
from cases.strategies import gen_cases, property_budget
from harness.target import KernelUnderTest, bits_snapshot, load, run_path
from reference import bits_reference, torch_reference
from tests.support.forkserver import ForkServer
from tests.support.subrun import run_pytest, run_suite

pytestmark = pytest.mark.nan_harness
FIXTURES = "tests.harness.fixtures"
PROPERTY = "tests/precision/test_generated_property.py"
ID_IN_MESSAGE = re.compile(r"case (gen-\S+) \((wrapper|direct)\)")


def storage_bits(t: torch.Tensor) -> torch.Tensor:
    """Raw bits of a tensor's whole storage."""
    whole = t.untyped_storage().nbytes() // t.element_size()
    return to_bits(t.as_strided((whole,), (1,), 0))


def same_build(a, b) -> None:  # type: ignore[no-untyped-def]
    assert a.logits.shape == b.logits.shape and a.logits.stride() == b.logits.stride()
    assert a.logits.storage_offset() == b.logits.storage_offset() and a.logits.dtype == b.logits.dtype
    assert torch.equal(to_bits(a.logits), to_bits(b.logits)) and torch.equal(a.expected, b.expected)
    assert (a.storage is None) == (b.storage is None)
    if a.storage is not None:
        assert torch.equal(to_bits(a.storage), to_bits(b.storage))


# -- ids ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", generated.cases(Context()), ids=str)
def test_generated_id_rebuilds_the_case_bit_exactly(case: generated.GenCase) -> None:
    again = generated.parse(str(case))
    assert again == case and str(again) == str(case)
    same_build(generated.build(case), generated.build(again))


@settings(max_examples=15, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(case=gen_cases(property_budget("cpu")))
def test_drawn_cases_round_trip_through_their_id(case: generated.GenCase) -> None:
    """What hypothesis draws (and shrinks to) is rebuilt from its printed id alone."""
    again = generated.parse(str(case))
    assert again == case and repr(case) == f"parse({str(case)!r})"
    a, b = generated.build(case), generated.build(again)
    same_build(a, b)
    assert torch.equal(a.expected, torch_reference(a.logits))
    assert case.blocks <= property_budget("cpu").blocks and case.storage_elements <= property_budget("cpu").elements


@pytest.mark.parametrize("bad", [
    "gen-s1-fp64-1x1-stride1-off0-tail0-nan1.0-any-randn",  # dtype
    "gen-s1-fp32-1x10-stride9-off0-tail0-nan1.0-any-randn",  # stride below vocab
    "gen-s1-fp32-1x1-stride1-off0-tail0-nan0.3-any-randn",  # a fraction the family does not draw
    "gen-s1-fp32-1x1-stride1-off0-tail0-nan1.0-weird-randn",  # NaN kind
    "gen-s01-fp32-1x1-stride1-off0-tail0-nan1.0-any-randn",  # not written the way it prints
    "fp32-square-3x3",
])
def test_bad_generated_ids_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        generated.parse(bad)


def test_seeded_cases_are_fixed_and_fit_the_budget() -> None:
    first, again = generated.seeded(10), generated.seeded(10)
    assert [str(c) for c in first] == [str(c) for c in again] and len({str(c) for c in first}) == 10
    assert [str(c) for c in generated.seeded(10, seed=9)] != [str(c) for c in first]
    assert all(c.blocks <= generated.CPU_BUDGET.blocks for c in first)
    big = generated.seeded(100, budget=generated.DEVICE_BUDGET)
    assert max(c.rows for c in big) > 1000 and max(c.vocab for c in big) > 262144
    assert any(c.vocab > 131072 and c.rows > 100 for c in big)


def test_named_cases_join_the_family_and_bad_ones_are_a_family_error() -> None:
    from cases.registry import FamilyError

    named = "gen-s0-fp32-1x131073-stride131073-off0-tail0-nan1.0-any-randn"
    ids = [str(c) for c in generated.cases(Context(options=(("gen_case_ids", (named,)), ("gen_cases", 2))))]
    assert len(ids) == 3 and ids[-1] == named
    with pytest.raises(FamilyError, match="not a generated case id"):
        generated.cases(Context(options=(("gen_case_ids", ("gen-nonsense",)),)))


# -- placement ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", offset.cases(Context()), ids=str)
def test_offset_placement_reproduces_the_storage_offset(case: offset.OffsetCase) -> None:
    built = offset.build(case)
    placed = built.input_on("cpu")
    size = placed.element_size()
    assert placed.storage_offset() == case.offset and placed.stride() == (case.stride, 1)
    assert placed.data_ptr() - placed.untyped_storage().data_ptr() == case.offset * size
    assert (placed.data_ptr() % 16 == 0) == (case.offset * size % 16 == 0)  # allocations are 16-byte aligned
    assert placed.untyped_storage().data_ptr() != built.logits.untyped_storage().data_ptr()  # a copy
    assert torch.equal(storage_bits(placed), storage_bits(built.logits))  # before, between and after the rows too
    assert torch.equal(built.expected, bits_reference(placed))
    prefix = placed.as_strided((case.offset,), (1,), 0)
    assert bool(torch.isnan(prefix).all()), "the elements before the view must be NaNs"


def test_offsets_include_unaligned_and_aligned_starts_for_every_dtype() -> None:
    starts = {(c.dtype, c.offset * offset.build(c).logits.element_size() % 16 == 0) for c in offset.cases(Context())}
    assert starts == {(d, a) for d in ("fp32", "bf16", "fp16") for a in (True, False)}


@pytest.mark.parametrize("case", generated.cases(Context())[:4], ids=str)
def test_generated_placement_keeps_offset_stride_and_surroundings(case: generated.GenCase) -> None:
    built = generated.build(case)
    placed = built.input_on("cpu")
    assert (placed.storage_offset(), placed.stride(), tuple(placed.shape)) == \
        (case.offset, (case.stride, 1), (case.rows, case.vocab))
    assert torch.equal(storage_bits(placed), to_bits(built.storage))


def test_snapshot_covers_the_storage_before_and_after_the_view() -> None:
    """A write just before the view (or after it) is a side effect, not only one between rows."""
    case = offset.OffsetCase("fp32", 3, 2, 100, 107)
    for where in (case.offset - 1, case.storage_elements - 1):
        placed = offset.build(case).input_on("cpu")
        before = bits_snapshot(placed)
        placed.as_strided((1,), (1,), where).fill_(0.0)
        assert not torch.equal(before, bits_snapshot(placed)), where

    def writes_before(logits: torch.Tensor) -> torch.Tensor:
        logits.as_strided((1,), (1,), logits.storage_offset() - 1).fill_(0.0)
        return bits_reference(logits)

    fake = KernelUnderTest("fake", None, writes_before, None, "none", "portable")  # type: ignore[arg-type]
    done = run_path(fake, "wrapper", offset.build(case).input_on("cpu"))
    assert done.side_effects and "before or after the view" in done.side_effects[0].text


# -- square -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("case", square.cases(Context()) + (square.SquareCase("bf16", 1024),), ids=str)
def test_square_counts_change_under_a_transpose(case: square.SquareCase) -> None:
    built = square.build(case)
    n = case.n
    assert built.logits.shape == (n, n)
    transposed = bits_reference(built.logits.t().contiguous())
    assert transposed.tolist() == list(range(n, 0, -1))
    assert int((transposed != built.expected).sum()) >= n - 1  # every row but the middle one of an odd n


# -- the false greens, caught -----------------------------------------------------------------------------------
def test_transposing_wrapper_fails_the_square_family(tmp_path: Path, forks: ForkServer | None) -> None:
    run = run_suite(f"{FIXTURES}.transposes_square", "square", tmp_path, server=forks, in_process=True)
    assert run.completed, run.describe()
    squares = [str(c) for c in square.cases(Context())]
    assert sorted(run.failed) == sorted(f"tests/precision/test_families.py::test_case[{c}-wrapper]" for c in squares), \
        run.describe()
    assert len(run.passed) == len(squares), run.describe()  # the direct launch gets the real layout


def test_offset_ignoring_wrapper_fails_the_offset_family(tmp_path: Path, forks: ForkServer | None) -> None:
    # the offset family only (the contract test test_offset_views catches the same wrapper on its own)
    run = run_suite(f"{FIXTURES}.ignores_offset", "offset and not bigoffset and not test_offset_views", tmp_path,
                    server=forks, in_process=True)
    assert run.completed, run.describe()
    cases = [str(c) for c in offset.cases(Context())]
    assert sorted(run.failed) == sorted(f"tests/precision/test_families.py::test_case[{c}-wrapper]" for c in cases), \
        run.describe()
    assert len(run.passed) == len(cases), run.describe()
    assert all(r.verdict == "wrong_counts" for r in run.records if r.failed)


def test_property_test_shrinks_a_large_vocab_bug_to_a_rerunnable_id(tmp_path: Path, forks: ForkServer | None) -> None:
    kernel = f"{FIXTURES}.large_vocab_wrong"
    run = run_pytest(tmp_path / "property", [PROPERTY, "--kernel", kernel, "--nan-hypothesis-examples", "60",
                                             "-k", "wrapper"], server=forks, in_process=True)
    assert run.completed and run.returncode == 1, run.describe()
    (record,) = run.records
    found = ID_IN_MESSAGE.search(record.message)
    assert found and found.group(2) == "wrapper", record.message
    case_id = found.group(1)
    case = generated.parse(case_id)
    assert case.vocab > 1 << 17 and case.rows == 1, f"not shrunk: {case_id}"
    assert f"parse('{case_id}')" in record.message  # hypothesis's own "Failing test case" line
    assert f"--nan-gen-case {case_id} -k {case_id}-wrapper" in record.message
    assert record.checks and record.checks[-1].params.case_id == case_id and record.checks[-1].params.seed == case.seed
    # the id reruns as a case of the generated family: it fails the planted kernel and passes ours
    rerun = run_pytest(tmp_path / "rerun", ["tests/precision/test_families.py", "--kernel", kernel,
                                            "--nan-gen-case", case_id, "-k", case_id], server=forks, in_process=True)
    assert sorted(rerun.failed) == [f"tests/precision/test_families.py::test_case[{case_id}-{p}]"
                                    for p in ("direct", "wrapper")], rerun.describe()
    ours = load("kernel")
    for path in ("wrapper", "direct"):
        done = run_path(ours, path, generated.build(case).input_on("cpu"))
        assert torch.equal(done.counts.cpu(), generated.build(case).expected) and not done.side_effects


def test_property_test_option_and_marker(tmp_path: Path, forks: ForkServer | None) -> None:
    run = run_pytest(tmp_path, [PROPERTY, "-m", "nan_property", "--nan-hypothesis-examples", "3"], server=forks,
                     in_process=True)
    assert run.completed and run.returncode == 0 and len(run.passed) == 2, run.describe()
    summaries = [c for r in run.records for c in r.checks]
    assert {c.params.case_id for c in summaries} == {"hypothesis-wrapper", "hypothesis-direct"}
    assert all(c.params.detail == "3 examples" for c in summaries)
