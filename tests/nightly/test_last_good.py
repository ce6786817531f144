"""nightly.last_good on synthetic night folders: the last passing and first failing commit per test, device kind and
chip; kept by the nightly, never moved by a night that did not finish, rebuilt from the folders, shown on the trend
page and in a failing night's summary.md."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from nightly import last_good, trend
from reports import markdown
from tests.nightly.test_nightly import A, B, FakeRunner, put_night, results_doc, run

C1, C2, C3, C4 = ("1" * 40, "2" * 40, "3" * 40, "4" * 40)


def doc(outcomes: dict[str, str], commit: str, *, finished: bool = True, backend: str = "cpu",
        device: str = "Triton interpreter") -> dict[str, Any]:
    """A night's results.json with the kernel commit and the device the environment records."""
    out = results_doc(outcomes, finished=finished, backend=backend, commit=commit)
    out["environment"]["Device"] = device
    return out


def entry(table: last_good.Table, test: str, backend: str = "cpu", chip: str = "Triton interpreter"
          ) -> last_good.Entry:
    return table.entries[(test, "kernel", backend, chip)]


def test_rebuild_keeps_last_pass_and_first_failure_and_ignores_unfinished_nights(tmp_path: Path) -> None:
    put_night(tmp_path, "2026-07-01", doc({A: "passed", B: "passed"}, C1))
    put_night(tmp_path, "2026-07-02", doc({A: "failed", B: "passed"}, C2))
    put_night(tmp_path, "2026-07-03", doc({A: "passed", B: "failed"}, C3, finished=False))  # crashed: says nothing
    put_night(tmp_path, "2026-07-04", doc({A: "failed", B: "passed"}, C4))
    put_night(tmp_path, "2026-07-05", doc({A: "passed", B: "failed"}, C4, backend="npu", device="Ascend910B3"))
    table = last_good.rebuild(tmp_path)
    assert table.nights == ["2026-07-01", "2026-07-02", "2026-07-04", "2026-07-05"]
    a = entry(table, A)
    assert a.last_good == {"commit": C1, "night": "2026-07-01"}
    assert a.first_failing == {"commit": C2, "night": "2026-07-02"}  # still failing on C4: the first failure stays
    assert entry(table, B).last_good == {"commit": C4, "night": "2026-07-04"} and not entry(table, B).failing
    npu_a, npu_b = entry(table, A, "npu", "Ascend910B3"), entry(table, B, "npu", "Ascend910B3")
    assert npu_a.last_good["commit"] == C4 and not npu_a.failing  # another chip: its own row
    assert npu_b.last_good is None and npu_b.first_failing == {"commit": C4, "night": "2026-07-05"}
    assert {e.key for e in table.failing()} == {(A, "kernel", "cpu", "Triton interpreter"),
                                                (B, "kernel", "npu", "Ascend910B3")}
    # a passing night clears the failure; the last good commit is then that night's
    put_night(tmp_path, "2026-07-06", doc({A: "passed", B: "passed"}, C4))
    again = last_good.rebuild(tmp_path)
    assert entry(again, A).last_good == {"commit": C4, "night": "2026-07-06"} and not entry(again, A).failing


def test_a_night_its_nightly_did_not_judge_is_left_out(tmp_path: Path) -> None:
    put_night(tmp_path, "2026-07-01", doc({A: "passed"}, C1))
    folder = put_night(tmp_path, "2026-07-02", doc({A: "failed"}, C2))
    (folder / "nightly.json").write_text(json.dumps({"schema": "nan-harness-nightly/1",
                                                     "steps": {"verdicts": {"status": "not judged"}}}))
    table = last_good.rebuild(tmp_path)
    assert table.nights == ["2026-07-01"] and not entry(table, A).failing


def test_the_nightly_keeps_the_table_and_a_failing_night_shows_it(tmp_path: Path) -> None:
    root = tmp_path / "nightly"
    assert run(["--device", "cpu", "--root", str(root), "--night", "2026-07-01"],
               FakeRunner(doc({A: "passed", B: "passed"}, C1))) == 0
    assert run(["--device", "cpu", "--root", str(root), "--night", "2026-07-02"],
               FakeRunner(doc({A: "failed", B: "passed"}, C2), pytest_code=1)) == 1
    file = root / last_good.FILE
    saved = json.loads(file.read_text())
    assert saved["schema"] == last_good.SCHEMA and saved["nights"] == ["2026-07-01", "2026-07-02"]
    summary = (root / "2026-07-02" / "summary.md").read_text()
    assert len(summary.splitlines()) <= markdown.MAX_LINES
    assert "**Last good commits** (cpu, Triton interpreter):" in summary
    lines = summary.splitlines()
    row = lines[lines.index("| test | last passed | first failed |") + 2]
    assert f"`{C1[:12]}` (2026-07-01)" in row and f"`{C2[:12]}` (2026-07-02)" in row
    # a night that did not finish leaves the table as it was, byte for byte
    before = file.read_bytes()
    assert run(["--device", "cpu", "--root", str(root), "--night", "2026-07-03"],
               FakeRunner(doc({A: "passed", B: "failed"}, C3, finished=False), pytest_code=2)) == 2
    assert file.read_bytes() == before
    # the same night run again under its name: the table is replayed from the folders, not applied twice
    assert run(["--device", "cpu", "--root", str(root), "--night", "2026-07-02"],
               FakeRunner(doc({A: "passed", B: "passed"}, C2))) == 0
    table = last_good.read(root)
    assert table is not None and table.to_doc() == last_good.rebuild(root).to_doc()
    assert entry(table, A).last_good == {"commit": C2, "night": "2026-07-02"} and not entry(table, A).failing
    assert "Last good commits" not in (root / "2026-07-02" / "summary.md").read_text()  # nothing fails
    # last: the parser is the selftest env's only (requirements/selftest.txt); the cpu env skips just this check
    tokens = pytest.importorskip("markdown_it").MarkdownIt().enable("table").parse(summary)
    tables = [i for i, t in enumerate(tokens) if t.type == "table_open"]  # a table GitHub renders, not look-alike text
    assert len(tables) >= 2 and "last passed" in "".join(t.content for t in tokens[tables[-1]:])


def test_rebuild_command_and_trend_page(tmp_path: Path) -> None:
    put_night(tmp_path, "2026-07-01", doc({A: "passed", B: "passed"}, C1))
    put_night(tmp_path, "2026-07-02", doc({A: "failed", B: "passed"}, C2))
    assert last_good.main([str(tmp_path)]) == 0
    assert last_good.read(tmp_path).to_doc() == last_good.rebuild(tmp_path).to_doc()
    assert trend.main([str(tmp_path)]) == 0
    page = (tmp_path / "trend" / "trend.html").read_text()
    section = page[page.index('id="nan-last-good"'):page.index("</table>", page.index('id="nan-last-good"'))]
    assert f'data-test="{A}"' in section and B not in section  # failing now only
    assert f"<code>{C1[:12]}</code> (2026-07-01)" in section and f"<code>{C2[:12]}</code> (2026-07-02)" in section
    assert last_good.main([str(tmp_path / "empty")]) == 2
