"""The whole precision suite on the kernels of the designs users bring (tests/designs): each gets the verdicts
its design earns and the diagnosis that names why, on upstream Triton's interpreter and on triton-ascend's.

Measured designs (REFERENCE.md §8): vllm-ascend's kernel fails only the cases with rows past 2^31 elements (its
32-bit row offset kills the interpreter: crash) and the transposed view (its column stride is ignored: wrong
counts). Upstream vLLM's fails the same under upstream Triton, which widens its int1 sums; under triton-ascend
the int1 sums are a per-block OR and the counts fail too, diagnosed as int1 flags first. An independent correct
kernel, with other exceptions and wording, passes everything. Each sub-run is the whole tests/precision: under
one xdist worker for a design with failures, so a segfault is one case's crash verdict and the run goes on; in the
sub-run's own process for the correct one (a run that does not complete there is run again in a worker).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.backends import triton_flavour
from setups.upstream_fixes import fix_source
from tests.support.forkserver import ForkServer
from tests.support.limits import hang_limit
from tests.support.subrun import SUITE, SubRun, run_expected_clean, run_pytest
from verdict.record import CRASH, PASS, WRONG_COUNTS

pytestmark = pytest.mark.nan_selftest

ROOT = Path(__file__).resolve().parents[2]
ASCEND = triton_flavour().startswith("triton-ascend")
BIGOFFSET = r"test_case\[\w+-bigoffset-"
TRANSPOSED = r"test_outside_domain_refused_or_counted\[transposed\]"
OFFSETS = ("offsets", "32-bit row offsets")
COLUMN_STRIDE = ("traversal", "column stride ignored")
INT1 = ("accumulation", "int1")


@dataclass(frozen=True)
class Design:
    """A design's kernel module and what the suite must say of it on this Triton."""

    name: str
    # failing tests: regex on the record id -> its verdict; every failing test must match one, every regex a test
    failures: dict[str, str]
    # (category, words in the name) of the diagnosis, in order: the first is the first diagnosis
    diagnosis: tuple[tuple[str, str], ...]
    # the counts fail too (every other failure is wrong_counts, and there are more than `min_other`)
    min_other: int = 0

    @property
    def module(self) -> str:
        return f"tests.designs.{self.name}"

    def __str__(self) -> str:
        return self.name


CONFINED = {BIGOFFSET: CRASH, TRANSPOSED: WRONG_COUNTS}
DESIGNS: tuple[Design, ...] = (
    Design("independent", {}, ()),
    Design("vllm_ascend", CONFINED, (OFFSETS, COLUMN_STRIDE)),
    # under triton-ascend the transposed view's wrong counts are also per-block ORs: the int1 item explains them,
    # so the column stride is not named on that evidence (issue 16, item 10)
    Design("upstream_vllm", CONFINED, (INT1, OFFSETS), min_other=100) if ASCEND
    else Design("upstream_vllm", CONFINED, (OFFSETS, COLUMN_STRIDE)),
)


def run_design(design: Design, folder: Path, server: ForkServer | None) -> SubRun:
    """tests/precision, all of it, on the design's kernel: under one xdist worker where cases fail (a crash costs
    one case), in the sub-run's own process for a design that fails nothing."""
    if not design.failures:
        return run_expected_clean(folder, [SUITE, "--kernel", design.module], server=server)
    return run_pytest(folder, [SUITE, "--kernel", design.module, "-n", "1", "--max-worker-restart", "12"],
                      server=server)


def verdict_table(run: SubRun) -> dict[str, int]:
    table: dict[str, int] = {}
    for r in run.records:
        table[r.verdict] = table.get(r.verdict, 0) + 1
    return dict(sorted(table.items()))


@pytest.mark.timeout(hang_limit(slowest_s=85.6))  # a whole-suite sub-run, beside a tox run (near tox's 900 s / 10)
@pytest.mark.parametrize("design", DESIGNS, ids=str)
def test_design_verdicts(design: Design, tmp_path: Path, forks: ForkServer | None, device: str,
                         record_property) -> None:  # type: ignore[no-untyped-def]
    if device != "cpu":
        pytest.skip("the expected verdicts are the CPU interpreters' (a device faults where the interpreter crashes)")
    run = run_design(design, tmp_path, forks)
    record_property("design_verdicts", repr(verdict_table(run)))
    assert run.completed and run.returncode == (1 if design.failures else 0), run.describe()
    assert len(run.records) > 400, f"the whole suite did not run\n{run.describe()}"
    failing = {r.id: r.verdict for r in run.records if r.failed}
    unexpected = {}
    for pattern, verdict in design.failures.items():
        matched = {i: v for i, v in failing.items() if re.search(pattern, i)}
        assert matched, f"{design}: no failing test matches {pattern}\n{run.describe()}"
        assert set(matched.values()) == {verdict}, f"{design}: {pattern} should be {verdict}: {matched}"
    others = {i: v for i, v in failing.items() if not any(re.search(p, i) for p in design.failures)}
    if design.min_other:
        unexpected = {i: v for i, v in others.items() if v != WRONG_COUNTS}
        assert len(others) > design.min_other and not unexpected, (
            f"{design}: expected the counts to fail (> {design.min_other} wrong_counts), got {len(others)}, "
            f"of other verdicts {unexpected}")
    else:
        assert not others, f"{design}: unexpected failures {others}\n{run.describe()}"
    assert all(r.verdict == PASS for r in run.records if r.outcome == "passed")
    fixes = [fix for fix, _ in fix_source((ROOT / design.module.replace(".", "/")).with_suffix(".py")
                                          .read_text(encoding="utf-8")).applied]
    unnamed = [r.id for r in run.records if r.failed and not any(fix.names(r) for fix in fixes)]
    named_passing = [r.id for r in run.records if not r.failed and any(fix.names(r) for fix in fixes)]
    assert not unnamed and not named_passing, (  # setups.upstream_fixes names exactly what fails (its other half:
        f"{design}: failures no fix names {unnamed}; cases a fix names that pass {named_passing}")  # test_upstream_fixes)
    found = [(d["category"], d["name"]) for d in run.doc.get("diagnosis", [])]
    assert len(found) == len(design.diagnosis), f"{design}: diagnosis {found}"
    for (category, words), (got_category, name) in zip(design.diagnosis, found):
        assert got_category == category and words in name, f"{design}: diagnosis {found}, expected {design.diagnosis}"
