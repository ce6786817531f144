"""The Markdown summary as runs write it: beside results.json, into the CI job page, replaced at start-up."""
from __future__ import annotations

from pathlib import Path

import pytest

from reports import markdown
from tests.reports.test_markdown import _table_rows
from tests.support.forkserver import ForkServer
from tests.support.subrun import SUITE, run_pytest

pytestmark = [pytest.mark.nan_reports, pytest.mark.usefixtures("cpu_subruns")]


def test_a_run_writes_its_summary_beside_results_json_and_into_the_job_page(tmp_path: Path,
                                                                            forks: ForkServer | None) -> None:
    step = tmp_path / "job-summary.md"
    step.write_text("# CI job\n")
    stale = tmp_path / "run" / "summary.md"
    stale.parent.mkdir()
    stale.write_text("### nan-harness: PASS\n")
    run = run_pytest(tmp_path / "run", [SUITE, "--kernel", "tests.reports.planted_kernel", "-k", "fp32-special"],
                     env={markdown.STEP_SUMMARY_VAR: str(step)}, server=forks)
    assert run.returncode == 1, run.describe()
    written = stale.read_text()
    assert written.startswith("### nan-harness: FAIL") and "PASS" not in written.splitlines()[0]
    assert _table_rows(written) and f"HTML report: `{run.html}`" in written
    assert step.read_text() == "# CI job\n" + written
    assert "Generated Markdown summary" in run.output


@pytest.mark.parametrize("args, said", [
    (["--kernel", "tests.harness.fixtures.no_wrapper"], "the module does not expose a callable get_num_nans"),
    (["--no-such-option"], "unrecognized arguments: --no-such-option")])  # pytest's own parser, before configure
def test_a_usage_error_says_so_in_every_report(tmp_path: Path, args: list[str], said: str,
                                               forks: ForkServer | None) -> None:
    """The "still running" placeholder written at start is replaced: the summary, results.json, the page and JUnit
    say the run ended with a usage error, and why (issue 40, item 10)."""
    stale = tmp_path / "summary.md"
    stale.write_text("### nan-harness: PASS\n")
    bad = run_pytest(tmp_path, [SUITE, *args], server=forks)
    text = stale.read_text()
    assert bad.returncode == 4 and text.startswith("### nan-harness: INCOMPLETE (usage error)"), (bad.output, text)
    assert said in text and "still running" not in text
    assert (bad.doc["ended"], bad.doc["exitstatus"], bad.doc["finished"]) == ("usage error", 4, False)
    assert said in bad.doc["usage_error"] and said in bad.junit.read_text() and "INCOMPLETE (usage error)" in \
        bad.html.read_text()


def test_markdown_off_means_off(tmp_path: Path, forks: ForkServer | None) -> None:
    off = run_pytest(tmp_path / "off", [SUITE, "-k", "fp32-special", "--nan-markdown="], server=forks)
    assert off.returncode == 0 and not (tmp_path / "off" / "summary.md").exists(), off.describe()
