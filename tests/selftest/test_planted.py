"""Proof that the suite catches planted bugs: each variant in tests.planted fails on the cases meant to catch it.

Every variant runs the precision suite in a subprocess (`--kernel tests.planted.<name>`, on this run's --device;
tested on the CPU interpreters: upstream triton and triton-ascend), narrowed with -k to
the cases that should catch it; its results.json says which cases failed, and its diagnosis (reports/diagnosis.py,
which reads only the records) must name the variant's bug class first. The clean `kernel` must pass the union of
those selections (the control), and a kernel that kills the process must show up as a failed case while the
run and its reports go on.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from harness.backends import triton_flavour
from tests.planted import BY_NAME, CRASHER, PLANTED, Planted
from tests.selftest.score import PROPERTY
from tests.support.forkserver import ForkServer
from tests.support.subrun import SubRun, run_suite
from verdict.record import Check, TestRecord

pytestmark = pytest.mark.nan_selftest

FLAVOUR = triton_flavour()  # "triton 3.9.0" or "triton-ascend 3.2.0"


def applies(variant: Planted) -> bool:
    """Whether this Triton must catch the variant (a flavour-specific bug passes elsewhere by design)."""
    return variant.flavour is None or FLAVOUR.split()[0] == variant.flavour


def run_variant(variant: Planted, tmp: Path, forks: ForkServer | None, device: str, isolated: bool = False) -> SubRun:
    """The variant's selection judged in the sub-run's own process (the harness's --nan-in-process: no xdist worker,
    no probe child), or in an xdist worker where the plant may end a process or the caller asks for it."""
    options = {"server": forks, "device": device, "extra": variant.options}
    if variant.isolate or isolated:
        return run_suite(variant.module, variant.select, tmp, workers=1, **options)
    run = run_suite(variant.module, variant.select, tmp, in_process=True, **options)
    if not run.completed:
        # the kernel ended the process that ran it: run again in a worker, so the case that crashed gets its name
        run = run_suite(variant.module, variant.select, tmp / "isolated", workers=1, **options)
    return run


SLOW = pytest.mark.nan_selftest_slow  # minutes on the CPU interpreter: tox -e selftest-slow


def _marked(variant: Planted) -> object:
    return pytest.param(variant, marks=SLOW) if variant.slow else variant


@pytest.mark.parametrize("variant", [_marked(v) for v in PLANTED], ids=str)
def test_planted_bug_is_caught(  # type: ignore[no-untyped-def]
    variant: Planted, tmp_path: Path, forks: ForkServer | None, device: str, record_property
) -> None:
    run = run_variant(variant, tmp_path, forks, device)
    hits = run.matching(variant.caught_by, run.failed if variant.build_error_is_the_bug else run.detected)
    caught = run.completed and run.returncode == 1 and bool(hits)
    diagnosis = run.doc.get("diagnosis") or []
    record_property(PROPERTY, json.dumps({
        "variant": variant.name, "bug_class": variant.bug_class, "caught": caught, "hits": hits,
        "applies": applies(variant), "flavour": FLAVOUR,
        "diagnosis": diagnosis[0]["category"] if diagnosis else None,
    }))
    assert run.completed, f"the sub-run did not complete with its reports\n{run.describe()}"
    assert run.outcomes, f"-k {variant.select!r} selected nothing\n{run.describe()}"
    if applies(variant):
        assert caught, (
            f"planted bug {variant.name} ({variant.bug_class}) was not caught by any of {variant.caught_by}\n"
            f"{run.describe()}"
        )
        assert diagnosis and diagnosis[0]["category"] == variant.bug_class, (
            f"planted bug {variant.name} ({variant.bug_class}) is caught but the diagnosis names first "
            f"{[(d['category'], d['name']) for d in diagnosis]}\n{run.describe()}"
        )
        assert not variant.blocks or diagnosis[0].get("blocks") == dict(variant.blocks), (
            f"planted bug {variant.name}: its first item names blocks {diagnosis[0].get('blocks')}, the plant's are "
            f"{dict(variant.blocks)}: {diagnosis[0]['evidence']}"
        )
        return
    # the documented blind spot: this Triton computes right what the other one gets wrong
    assert run.returncode == 0 and not run.failed, (
        f"{variant.name} is expected to pass on {FLAVOUR} (only {variant.flavour} gets it wrong), but it failed: "
        f"the blind spot is closed, update tests/planted/__init__.py\n{run.describe()}"
    )
    env = "ascend-cpu" if variant.flavour == "triton-ascend" else "selftest"
    pytest.xfail(f"{variant.name} is right on {FLAVOUR} (it counts right or refuses the input); only "
                 f"{variant.flavour}'s interpreter shows the bug (run tox -e {env})")


@pytest.mark.parametrize("slow", [False, pytest.param(True, marks=SLOW)], ids=["tox", "slow"])
def test_clean_kernel_passes_every_selection(
    tmp_path: Path, forks: ForkServer | None, device: str, slow: bool
) -> None:
    """The control: our kernel passes every case a variant is caught by, so each catch is the bug's doing (the slow
    variants' cases in a control of their own, run where they are)."""
    variants = [v for v in PLANTED if v.slow == slow]
    select = " or ".join(f"({v.select})" for v in (*variants, *(() if slow else (CRASHER,))))
    options = sorted({option for v in variants for option in v.options})  # what any variant's cases need
    run = run_suite("kernel", select, tmp_path, server=forks, device=device, extra=options, in_process=True)
    assert run.completed and run.returncode == 0 and not run.failed, run.describe()
    for variant in variants:
        assert run.matching(variant.caught_by, run.passed), (
            f"no passing case of the control matches {variant.name}'s caught_by {variant.caught_by}\n{run.describe()}"
        )


# judged both ways: one plant per kind of test that catches one (a family case and its diagnosis blocks, a module's own
# test, the wrapper's contract, a build error), so the in-process runs above stand for what an isolated run finds
AGREEMENT_SAMPLE = ("tail_dropped", "cached_output", "zero_vocab_block", "store_shifted")


@pytest.mark.parametrize("name", AGREEMENT_SAMPLE)
def test_in_process_judges_as_isolated(name: str, tmp_path: Path, forks: ForkServer | None, device: str) -> None:
    """A pinned sample of plants run in an xdist worker, as a user's run does, find what the in-process runs find:
    the same tests, outcomes, verdicts, failing checks and diagnosis."""
    variant = BY_NAME[name]
    inside = run_variant(variant, tmp_path / "inside", forks, device)
    isolated = run_variant(variant, tmp_path / "isolated", forks, device, isolated=True)
    assert inside.completed and isolated.completed, f"{inside.describe()}\n{isolated.describe()}"
    assert "bringing up nodes" in isolated.output and "bringing up nodes" not in inside.output, inside.output
    assert inside.failed and inside.returncode == isolated.returncode == 1, inside.describe()
    assert judged(inside) == judged(isolated), f"{inside.describe()}\n{isolated.describe()}"
    assert inside.doc["diagnosis"] == isolated.doc["diagnosis"], f"{inside.describe()}\n{isolated.describe()}"


def judged(run: SubRun) -> dict[str, tuple[str, str, tuple[Check, ...]]]:
    """Per test: outcome, verdict and every check (path, verdict, totals, wrong rows, problems), what a verdict is
    made of; all but `unwritten`, whether glibc handed the wrapper a poisoned block (harness/prepoison.py), which
    hangs on the process's allocation history (a 2-row output's 8 bytes: measured both ways)."""
    return {r.nodeid: (r.outcome, r.verdict, tuple(replace(c, unwritten=None) for c in r.checks))
            for r in run.records}


def test_crashing_kernel_is_a_failed_case(
    tmp_path: Path, forks: ForkServer | None, device: str
) -> None:
    """A kernel that segfaults the interpreter fails its case by id; later cases still run; reports get written."""
    if device != "cpu":
        pytest.skip("a segfault needs the CPU interpreter; device faults: tests/harness/test_isolation.py")
    run = run_suite(CRASHER.module, CRASHER.select, tmp_path, workers=1, server=forks)
    assert run.completed, f"the run did not survive the crash\n{run.describe()}"
    assert run.returncode == 1
    crashed = run.matching(CRASHER.caught_by, run.failed)
    assert crashed and crashed == run.failed, f"expected exactly the crashing case to fail\n{run.describe()}"
    assert "crashed" in run.messages[crashed[0]], run.describe()
    survivors = run.matching([r"test_outside_domain_refused_or_counted\[rank"], run.passed)
    assert len(survivors) == 3, f"the cases after the crash did not all run and pass\n{run.describe()}"
    assert run.json_path.is_file(), "the JSON results were not written"
    report = run.html.read_text(encoding="utf-8")
    assert "crashed" in report and "test_outside_domain_refused_or_counted" in report, "the HTML report lacks the crash or the rest"


def test_build_failures_are_not_catches(tmp_path: Path) -> None:
    """A variant that fails to compile fails its cases too, but that proves nothing about the suite."""
    records = [TestRecord("a", "failed", "refused", message="triton.compiler.errors.CompilationError: at 7:20:"),
               TestRecord("b", "failed", "wrong_counts", message="AssertionError: case x"),
               TestRecord("c", "passed", "pass")]
    assert SubRun([], tmp_path, 1, 0.0, "", records).detected == ["b"]
