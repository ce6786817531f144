"""reports.merge: sharded runs (pytest-split, 2 and 3 shards, on one machine) merged equal an unsharded run case by
case, with the same summary block; shards that cannot be merged honestly are refused with exit 2."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from reports import merge
from reports.results import SCHEMA
from tests.support.forkserver import ForkServer, fork_server
from tests.support.limits import hang_limit
from tests.support.records import comparable
from tests.support.subrun import ROOT, SubRun, run_pytest

KERNEL = "tests.reports.planted_kernel"  # fails some cases, so failures, verdicts and the diagnosis are compared too
# a few cases of two marks and three patterns, both paths (the planted kernel fails some): enough for 3 shards
KEYWORD = "fp32 and (special or 2x5000-nan0.5)"
SELECTION = ["tests/precision", "-m", "nan_matrix or nan_special", "-k", KEYWORD, "--kernel", KERNEL]
DURATIONS = str(ROOT / ".test_durations")  # the committed file the nightly's shards use


def _shards(base: Path, splits: int, extra: list[str], server: ForkServer | None, in_process: bool = False
            ) -> list[SubRun]:
    return [run_pytest(base / f"group-{group}", [*SELECTION, "--splits", str(splits), "--group", str(group),
                                                 "--durations-path", DURATIONS, *extra], server=server,
                       in_process=in_process) for group in range(1, splits + 1)]


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, device: str) -> dict[str, Any]:
    """The unsharded run and 2 shards judged in their own process, 3 shards through xdist as the nightly's nodes
    run, one at a time from one fork server (tests/reports/test_report_runs.py: the two ways write the same)."""
    if device != "cpu":
        pytest.skip("the shard sub-runs use --device cpu")
    base = tmp_path_factory.mktemp("shards")
    with fork_server() as server:
        whole = run_pytest(base / "whole", SELECTION, server=server, in_process=True)
        two = _shards(base / "two", 2, [], server, in_process=True)
        three = _shards(base / "three", 3, ["-n", "1"], server)  # through xdist, as the nightly's nodes run
    return {"whole": whole, "two": two, "three": three, "base": base}


def summary_block(html: Path) -> str:
    """The summary block (reports.summary.render's <div>), from pytest-html's page or the merged page."""
    text = html.read_text(encoding="utf-8")
    start = text.index('<div class="nan-summary">')
    return text[start:text.index("\n", start)]


def _junit_cases(path: Path) -> dict[str, str]:
    from junitparser import JUnitXml

    out = {}
    for suite in JUnitXml.fromfile(str(path)):
        for case in suite:
            out[f"{case.classname}::{case.name}"] = ",".join(sorted(type(r).__name__ for r in case.result)) or "ok"
    return out


@pytest.mark.timeout(hang_limit(slowest_s=111.5))  # its fixture's six sub-runs, beside a tox run (over tox's 900 s / 10)
@pytest.mark.parametrize("count", ["two", "three"])
def test_merged_shards_equal_the_unsharded_run(runs: dict[str, Any], count: str) -> None:
    whole: SubRun = runs["whole"]
    shards: list[SubRun] = runs[count]
    assert whole.completed, whole.describe()
    for i, s in enumerate(shards, 1):
        assert s.returncode in (0, 1) and s.doc.get("finished"), s.describe()
        assert s.doc["shard"]["group"] == i and s.doc["shard"]["splits"] == len(shards)
        assert s.doc["shard"]["selection"]["markexpr"] == "nan_matrix or nan_special"
        assert s.doc["shard"]["selection"]["keyword"] == KEYWORD
        assert s.records, f"shard {i} ran nothing"
    assert "shard" not in whole.doc  # an unsharded run records no shard
    out = runs["base"] / f"merged-{count}"
    code = merge.main([str(out), *(str(s.folder) for s in reversed(shards))])  # order given does not matter
    assert code == 0
    merged = json.loads((out / "results.json").read_text())
    assert merged["schema"] == SCHEMA and merged["finished"] is True
    assert merged["collected"] == sum(s.doc["collected"] for s in shards) == whole.doc["collected"] == 6
    for key in ("counts", "verdicts", "diagnosis", "kernel", "backend", "coverage_gaps", "exitstatus", "ended", "ran"):
        assert merged[key] == whole.doc[key], key
    assert whole.doc["verdicts"].get("wrong_counts"), "the planted kernel must fail some cases"
    assert [c["nodeid"] for c in merged["cases"]] == [c["nodeid"] for c in whole.doc["cases"]]
    assert comparable(merged["cases"]) == comparable(whole.doc["cases"])
    assert merged["shards"]["groups"] == list(range(1, len(shards) + 1))
    # the same summary block as pytest-html's page of the unsharded run, and the environment and per-test table
    assert summary_block(out / "precision.html") == summary_block(whole.html)
    page = (out / "precision.html").read_text()
    assert page.index('id="nan-verdict"') < page.index('id="nan-environment"') and "Kernel module" in page
    rows = re.findall(r'<tr class="nan-row-\w+" data-nodeid="([^"]+)" data-verdict="(\w+)"', page)
    assert {n.replace("&quot;", '"') for n, _ in rows} == {c["nodeid"] for c in whole.doc["cases"]}
    assert {v for _, v in rows} == set(whole.doc["verdicts"])
    assert "<script" not in page and "http" not in page.split("</style>", 1)[0]  # self-contained
    assert _junit_cases(out / "junit.xml") == _junit_cases(whole.junit)
    # the Markdown summary: the unsharded run's failures and diagnosis, under a heading that says it was merged
    merged_md, whole_md = (out / "summary.md").read_text(), (whole.folder / "summary.md").read_text()
    assert merged_md.startswith(f"### nan-harness ({len(shards)} shards merged): FAIL")
    body = [line for line in merged_md.splitlines()[1:] if not line.startswith("HTML report")]
    assert body == [line for line in whole_md.splitlines()[1:] if not line.startswith("HTML report")]


# --- refusals, on small synthetic shard folders --------------------------------------------------------------

def _case(nodeid: str, outcome: str = "passed") -> dict[str, Any]:
    return {"nodeid": nodeid, "id": nodeid.rsplit("::", 1)[-1], "outcome": outcome,
            "verdict": "pass" if outcome == "passed" else "wrong_counts", "duration": 0.1, "checks": []}


def _shard_doc(group: int, splits: int, nodeids: list[str], **over: Any) -> dict[str, Any]:
    doc = {"schema": SCHEMA, "environment": {"Kernel module": "kernel", "Kernel commit": "abc", "Backend": "cpu"},
           "exitstatus": 0, "finished": True, "ended": "passed", "collected": len(nodeids), "counts": {},
           "verdicts": {}, "diagnosis": [], "kernel": "kernel", "backend": "cpu", "coverage_gaps": [],
           "started": "2026-01-01T00:00:00+00:00", "ran": len(nodeids),
           "shard": {"group": group, "splits": splits, "algorithm": "duration_based_chunks",
                     "durations_sha256": "d" * 64, "selection": {"args": ["tests/precision"], "markexpr": "",
                                                                 "keyword": ""}},
           "cases": [_case(n) for n in nodeids]}
    for key, value in over.items():
        target = doc
        *path, last = key.split(".")
        for p in path:
            target = target[p]
        target[last] = value
    return doc


JUNIT = ('<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="1" timestamp="{t}" '
         'hostname="node{g}"><testcase classname="t" name="{n}" time="0.1"/></testsuite></testsuites>')


def _write(folder: Path, doc: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "results.json").write_text(json.dumps(doc))
    names = [c["nodeid"] for c in doc["cases"]] or ["none"]
    (folder / "junit.xml").write_text(JUNIT.format(t=f"2026-01-01T0{doc['shard']['group']}:00:00",
                                                   g=doc["shard"]["group"], n=names[0]))
    return folder


def _refused(tmp_path: Path, capsys: pytest.CaptureFixture[str], *docs: dict[str, Any]) -> str:
    folders = [_write(tmp_path / f"s{i}", d) for i, d in enumerate(docs)]
    assert merge.main([str(tmp_path / "out"), *map(str, folders)]) == 2
    assert not (tmp_path / "out" / "results.json").exists()
    return capsys.readouterr().err


A, B, C = "tests/precision/t.py::a", "tests/precision/t.py::b", "tests/precision/t.py::c"


@pytest.mark.parametrize("change, words", [
    ({"kernel": "other.module"}, "different kernels"),
    ({"environment.Kernel commit": "def"}, "different kernel commits"),
    ({"backend": "cuda"}, "different backends"),
    ({"shard.durations_sha256": "e" * 64}, "durations_sha256"),
    ({"shard.selection": {"args": ["tests/precision"], "markexpr": "nan_matrix", "keyword": ""}}, "selection"),
])
def test_shards_of_different_runs_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              change: dict[str, Any], words: str) -> None:
    err = _refused(tmp_path, capsys, _shard_doc(1, 2, [A]), _shard_doc(2, 2, [B], **change))
    assert words in err and "shard 2/2" in err


def test_duplicated_missing_and_overlapping_shards_are_refused(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert "given twice" in _refused(tmp_path / "dup", capsys, _shard_doc(1, 2, [A]), _shard_doc(1, 2, [B]))
    err = _refused(tmp_path / "miss", capsys, _shard_doc(1, 3, [A]), _shard_doc(3, 3, [B]))
    assert "missing shard group(s) 2 of 3" in err
    assert "splits" in _refused(tmp_path / "count", capsys, _shard_doc(1, 2, [A]), _shard_doc(2, 3, [B]))
    err = _refused(tmp_path / "both", capsys, _shard_doc(1, 2, [A, B]), _shard_doc(2, 2, [B, C]))
    assert f"{B} is in two shards" in err


def test_what_is_not_a_shard_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plain = _shard_doc(1, 1, [A])
    del plain["shard"]
    folder = tmp_path / "plain"
    folder.mkdir()
    (folder / "results.json").write_text(json.dumps(plain))
    assert merge.main([str(tmp_path / "out"), str(folder)]) == 2
    assert "not a shard" in capsys.readouterr().err
    assert merge.main([str(tmp_path / "out"), str(tmp_path / "nowhere")]) == 2
    assert "cannot read" in capsys.readouterr().err
    ok = [_write(tmp_path / "m1", _shard_doc(1, 2, [A])), _write(tmp_path / "m2", _shard_doc(2, 2, [B]))]
    assert merge.main([str(tmp_path / "merged"), *map(str, ok)]) == 0
    (tmp_path / "merged" / "junit.xml").write_text((ok[0] / "junit.xml").read_text())
    doc = json.loads((tmp_path / "merged" / "results.json").read_text())
    doc["shard"] = {"group": 1, "splits": 1}
    (tmp_path / "merged" / "results.json").write_text(json.dumps(doc))
    assert merge.main([str(tmp_path / "again"), str(tmp_path / "merged")]) == 2
    assert "already a merged run" in capsys.readouterr().err


def test_an_unfinished_shard_leaves_the_merge_unfinished(tmp_path: Path) -> None:
    folders = [_write(tmp_path / "s1", _shard_doc(1, 2, [A])),
               _write(tmp_path / "s2", _shard_doc(2, 2, [B], finished=False, exitstatus=2, ended="interrupted"))]
    assert merge.main([str(tmp_path / "out"), *map(str, folders)]) == 0
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert doc["finished"] is False and doc["exitstatus"] == 2
    assert doc["ended"] == "shard 2/2 interrupted" and doc["collected"] == 2
    assert "INCOMPLETE (shard 2/2 interrupted)" in (tmp_path / "out" / "precision.html").read_text()
    from junitparser import JUnitXml

    suites = list(JUnitXml.fromfile(str(tmp_path / "out" / "junit.xml")))
    assert len(suites) == 1 and suites[0].tests == 2 and suites[0].hostname == "node1,node2"


def test_a_killed_shard_placeholder_still_names_its_shard(tmp_path: Path) -> None:
    """The placeholder results.json a shard writes at start-up carries its shard, so a killed node is named."""
    placeholder = _shard_doc(2, 2, [], finished=False, exitstatus=None, ended="not finished (started x)",
                             kernel=None, backend=None, environment={})
    folders = [_write(tmp_path / "s1", _shard_doc(1, 2, [A])), _write(tmp_path / "s2", placeholder)]
    assert merge.main([str(tmp_path / "out"), *map(str, folders)]) == 0
    doc = json.loads((tmp_path / "out" / "results.json").read_text())
    assert doc["finished"] is False and "shard 2/2 not finished" in doc["ended"]
