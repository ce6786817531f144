"""Property test: any generated case (cases.strategies.gen_cases) counts exactly, through both paths.

Hypothesis draws shapes (1 row to the budget's limit; vocab 1 to 300,000, boundary-heavy), row padding, storage
offsets, views into a larger buffer, dtypes, NaN bit patterns and the other values. The run is derandomized (a
fixed seed, no example database) with `--nan-hypothesis-examples` examples per path. On a failure hypothesis
shrinks to a minimal case; its id is in the failure message with the command that reruns it as a case of the
`generated` family (`--nan-gen-case ID -k ID`), and the shrunk case's check is what the reports record.
"""
from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from cases.families.generated import GenCase, build
from harness import skips
from harness.backends import Backend
from harness.compare import compare_counts, describe_input, failed_launch, layout_of, message
from harness.fixtures import record
from harness.target import PATHS, KernelUnderTest, run_path
from verdict.record import PASS, CaseParams, Check

pytestmark = pytest.mark.nan_property
# no explain phase: it traces every line the failing example runs, which the Triton interpreter makes very slow
PHASES = ("explicit", "reuse", "generate", "target", "shrink")
# derandomize=True seeds from the test function's source text, so a rename inside it would draw other cases: the
# seed it derived before `Built.on` became `Built.input_on`, pinned, keeps the same cases whatever the body says
SEED = 0xcc401d498f5ea7791d22a2762db3f08d7c51df9774887ebf6cca96bc1a248a2408f66203250ecb5fd28f195d9f29b399


def property_params(case: GenCase) -> CaseParams:
    """The case as the reports show it; family `property` keeps these apart from the generated family's tally."""
    return CaseParams("property", str(case), case.dtype, "generated", (case.rows, case.vocab), f"nan{case.frac}",
                      case.seed)


def rerun_command(case: GenCase, path: str, config: pytest.Config) -> str:
    """The command that reruns one case as a `generated` family case, with this run's kernel and device."""
    suite_file = Path(__file__).with_name("test_families.py")  # beside this file, in a checkout or installed
    try:
        shown = str(suite_file.relative_to(config.invocation_params.dir))
    except ValueError:
        shown = str(suite_file)
    argv = ["python", "-m", "pytest", shown, "--device", config.getoption("--device"),
            "--kernel", config.getoption("--kernel")]
    for flag in ("--kernel-path", "--kernel-setup"):  # `=`: a folder after a space may root pytest (harness.misread)
        argv += [f"{flag}={value}" for value in config.getoption(flag)]
    argv += ["--nan-gen-case", str(case), "-k", f"{case}-{path}"]
    return shlex.join(argv)


@pytest.mark.parametrize("path", PATHS)
def test_generated_cases_count_exactly(
    path: str, target: KernelUnderTest, backend: Backend, pytestconfig: pytest.Config, request: pytest.FixtureRequest
) -> None:
    if path == "direct" and target.kernel is None:
        skips.skip(request.node, skips.direct_path(target.kernel_skip_reason or "no _num_nans_kernel"))
    examples = pytestconfig.getoption("--nan-hypothesis-examples")
    if examples < 1:
        pytest.skip("--nan-hypothesis-examples 0")
    # imported here, not at collection: every process that collects the suite (each xdist worker of every run)
    # would spend most of a second of CPU importing hypothesis for this one test
    from hypothesis import HealthCheck, Phase, given, note, seed, settings

    from cases.strategies import gen_cases, property_budget

    failures: list[Check] = []  # hypothesis replays the shrunk example last: failures[-1] is the minimal one
    seen = {"examples": 0, "nans": 0}

    @settings(max_examples=examples, derandomize=True, database=None, deadline=None, print_blob=False,
              phases=[Phase[name] for name in PHASES], suppress_health_check=list(HealthCheck))
    @given(case=gen_cases(property_budget(backend.name)))
    @seed(SEED)
    def counts_exactly(case: GenCase) -> None:
        note(f"generated case {case}")
        built = build(case)
        logits = built.input_on(backend.torch_type)
        params = property_params(case)
        try:
            done = run_path(target, path, logits)
            backend.synchronize()
        except Exception as exc:  # noqa: BLE001 - a raise on in-domain input is the kernel's failure
            check = failed_launch(exc, params, path, built.expected, logits, backend.current_card())
        else:
            check = compare_counts(done.counts, built.expected, params=params, path=path,
                                   device_type=backend.torch_type, row_labels=built.labels,
                                   side_effects=done.side_effects, card=backend.current_card(),
                                   input_desc=describe_input(logits), layout=layout_of(logits))
        if not check.ok:
            failures.append(check)
            raise AssertionError(f"{message(check)}\n  rerun: {rerun_command(case, path, pytestconfig)}")
        seen["examples"] += 1
        seen["nans"] += int(built.expected.sum())

    try:
        counts_exactly()
    except BaseException:
        if failures:
            record(request, failures[-1])
        raise
    summary = CaseParams("property", f"hypothesis-{path}", "", "generated", (), f"{seen['examples']} examples")
    record(request, Check(summary, path, PASS, seen["nans"], seen["nans"],
                          input_desc=f"{seen['examples']} generated cases, derandomized"))
