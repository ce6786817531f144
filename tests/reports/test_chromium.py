"""The planted kernel's report as a reviewer sees it: headless Chromium, after the page's scripts ran."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.reports import runs
from tests.reports.planted_kernel import PLANTED_MARKUP
from tests.support.limits import hang_limit

pytestmark = [
    pytest.mark.nan_reports,
    pytest.mark.usefixtures("cpu_subruns"),
    pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed (.ci/run installs it)"),
]

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]
FAILING = "tests/precision/test_families.py::test_case[fp32-scatter-4x8192-nan0.5-wrapper]"


def chromium(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    cmd = ["chromium", *FLAGS, f"--user-data-dir={profile}", *args, page.as_uri()]
    # the slowest chromium test, its report's sub-run included
    return subprocess.run(cmd, capture_output=True, text=True, timeout=hang_limit(slowest_s=25.5), check=False)


@pytest.fixture
def dom(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> str:
    """The DOM of the planted xdist run's report once its scripts ran."""
    report = runs.planted_xdist(tmp_path_factory).html
    done = chromium(report, tmp_path / "profile", "--dump-dom")
    assert done.returncode == 0 and "</html>" in done.stdout, done.stderr[-2000:]
    return done.stdout


def _row(dom: str, nodeid: str) -> str:
    """The rendered results-table body of one test: its row, then its expanded section."""
    start = dom.index(f'<td class="col-testId">{nodeid}</td>')
    return dom[dom.rindex("<tbody", 0, start) : dom.index("</tbody>", start)]


def test_reviewer_sees_title_summary_and_failing_rows(dom: str) -> None:
    assert f'<h1 id="title">NaN-count precision: {runs.PLANTED_KERNEL}</h1>' in dom
    assert 'id="nan-grid-matrix"' in dom
    for case, state in (("fp32-scatter-8x10000-nan0.5", "fail"), ("fp32-prefix-4x8192-nan0.5", "mixed"),
                        ("fp32-prefix-2x5000-nan0.5", "waived"), ("fp32-scatter-1x128-nan0.5", "pass"),
                        ("bf16-prefix-1x128-nan0.0", "absent")):
        assert f'data-case="{case}" data-state="{state}"' in dom, case
    assert 'data-case="inf fp32" data-state="fail"' in dom  # IEEE class x dtype
    assert "65,536 patterns, 2,046 NaNs expected, 2,047 NaNs counted" in dom  # the sweep line
    row = _row(dom, FAILING)  # rendered by the report's script from its JSON blob
    cells = ('<td class="col-dtype">fp32</td><td class="col-layout">scatter</td><td class="col-shape">4x8192</td>'
             '<td class="col-detail">0.5</td><td class="col-path">wrapper</td><td class="col-verdict">wrong counts</td>'
             '<td class="col-expected">16384</td>'
             '<td class="col-got">16385</td><td class="col-wrong">1</td>')
    assert cells in row
    assert "<tr><td>1</td><td>4096</td><td>4097</td><td></td></tr>" in row  # its wrong row, expanded
    ieee = _row(dom, "tests/reports/planted_cases.py::test_planted_ieee[inf-fp16]")
    assert "<tr><td>1</td><td>0</td><td>1</td><td>+inf fp16 0x7C00</td></tr>" in ieee  # class and bits named
    crash = _row(dom, "tests/reports/planted_cases.py::test_planted_worker_crash")
    assert '<td class="col-result">Failed</td>' in crash and "crashed while running" in crash


def test_nothing_from_kernels_or_ids_becomes_markup(dom: str) -> None:
    assert "&lt;b class=\"planted-markup\"&gt;" in dom  # shown, as text: environment, ids, labels, messages
    assert PLANTED_MARKUP not in dom and "PWNED" not in dom.split("</title>")[0]
    env = dom[dom.index('id="nan-environment"') : dom.index("</table>", dom.index('id="nan-environment"'))]
    assert "portable &lt;b class=\"planted-markup\"&gt;planted&lt;/b&gt;" in env


def test_the_verdict_comes_first_and_the_environment_after(dom: str) -> None:
    """After the page's scripts ran, pytest-html's top environment table is still empty; ours follows the verdict."""
    assert '<table id="environment"></table>' in dom
    assert dom.index('id="nan-verdict"') < dom.index('id="nan-failures"') < dom.index('id="nan-environment"')


def test_screenshot_beside_the_report(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    report = runs.planted_xdist(tmp_path_factory).html
    shot = report.with_suffix(".png")
    done = chromium(report, tmp_path / "profile", f"--screenshot={shot}", "--window-size=1400,2000")
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    print(f"screenshot: {shot}")
