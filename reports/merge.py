"""python -m reports.merge OUT_DIR SHARD_DIR...: one results.json, junit.xml, precision.html and summary.md (Markdown,
also appended to $GITHUB_STEP_SUMMARY when the runner sets it) from pytest-split shards.

Each SHARD_DIR is what one shard (`--splits N --group i`) left: results.json (reports.plugin records the shard's
group, split count, splitting algorithm, durations-file digest and selection in it), junit.xml and its own
precision.html. The merged results.json has the schema of any run (nan-harness-results/2): `collected` and `ran`
summed, `finished` only when every shard finished, the diagnosis recomputed over every case, and `shards` naming
what was merged. The merged precision.html is a self-contained page with the summary an unsharded run shows
(reports.summary + the diagnosis), the environment and one row per test with its verdict.

Exit status: 0 when the merged reports were written (whether the tests passed is for `reports.compare` and the
nightly to judge; the page's headline says it), 2 when the shards cannot be merged honestly: a folder without a
results file, a malformed results file (reports.results.validate names the field), a run that was not a shard (or is
already a merge), shards of different kernels, kernel commits or backends, of different split counts, algorithms,
durations files or selections, one group given twice, a missing group, or a test reported by two shards; and 2 when
the merged reports cannot be written (OUT_DIR is not a folder).
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cases import registry
from harness import needs
from reports import markdown, not_run, results, summary
from reports.diagnosis import diagnose
from reports.markup import esc
from reports.plugin import EXIT_WORDS
from reports.results import Results, ResultsError
from reports.summary_model import of_results
from reports.tables import CASE_COLUMNS, case_cells, environment_table, failure_details
from reports.text import short_message, why
from verdict.record import TestRecord

# what every shard of one suite must share (the partition is only consistent when these agree)
SPLIT_KEYS = ("splits", "algorithm", "durations_sha256", "selection")


class MergeError(ValueError):
    """Shards that cannot be put together without hiding something."""


@dataclass(frozen=True)
class Shard:
    """One shard folder's results, read through the one validator."""

    folder: Path
    run: Results

    @property
    def info(self) -> dict[str, Any]:
        return self.run.shard or {}

    @property
    def group(self) -> int:
        return int(self.info["group"])

    @property
    def label(self) -> str:
        return f"shard {self.info['group']}/{self.info['splits']} ({self.folder})"


def load_shard(folder: Path) -> Shard:
    """A shard folder's results.json, refusing what is not one shard of a split run."""
    path = folder / "results.json"
    try:
        run = results.load(path)
    except ResultsError as exc:
        raise MergeError(str(exc)) from exc
    if run.shards is not None:
        raise MergeError(f"{path}: already a merged run; merge the shard folders themselves")
    info = run.shard
    if not isinstance(info, dict) or not info.get("group") or not info.get("splits"):
        raise MergeError(f"{path}: not a shard (the run had no --splits N --group i); merge only shard folders")
    return Shard(folder, run)


def check_partition(shards: Sequence[Shard]) -> None:
    """Refuse shards that are not the complete, disjoint partition of one run of one kernel on one backend."""
    if not shards:
        raise MergeError("no shard folders given")
    first = shards[0]
    for key in SPLIT_KEYS:
        for s in shards[1:]:
            if s.info.get(key) != first.info.get(key):
                raise MergeError(f"shards were split differently: {key} is {first.info.get(key)!r} in {first.label} "
                                 f"but {s.info.get(key)!r} in {s.label}")
    identity = (("kernel", lambda r: r.kernel),
                ("kernel commit", lambda r: r.environment.get("Kernel commit")),
                ("backend", lambda r: r.backend))
    for name, value_of in identity:
        known = [(s, value_of(s.run)) for s in shards if value_of(s.run) is not None]
        values = {v for _, v in known}
        if len(values) > 1:
            listing = "; ".join(f"{s.label}: {v}" for s, v in known)
            raise MergeError(f"shards of different {name}s: {listing}")
    seen: dict[int, Shard] = {}
    for s in shards:
        if s.group in seen:
            raise MergeError(f"shard group {s.group}/{s.info['splits']} given twice: "
                             f"{seen[s.group].folder} and {s.folder}")
        seen[s.group] = s
    splits = int(first.info["splits"])
    missing = sorted(set(range(1, splits + 1)) - set(seen))
    if missing:
        raise MergeError(f"missing shard group(s) {', '.join(map(str, missing))} of {splits}: "
                         f"given {', '.join(str(g) for g in sorted(seen))}")
    extra = sorted(g for g in seen if not 1 <= g <= splits)
    if extra:
        raise MergeError(f"shard group(s) {extra} outside 1..{splits}")
    owner: dict[str, Shard] = {}
    for s in shards:
        for r in s.run.records:
            other = owner.setdefault(r.nodeid, s)
            if other is not s:
                raise MergeError(f"{r.nodeid} is in two shards: {other.label} and {s.label}")


def _environment(shards: Sequence[Shard]) -> dict[str, str]:
    """The first shard's environment; a key whose value differs between nodes lists each distinct value."""
    env: dict[str, str] = {}
    for s in shards:
        for key, value in s.run.environment.items():
            values = env.get(key, "").split(" | ") if key in env else []
            if str(value) not in values:
                env[key] = " | ".join([*values, str(value)])
    return env


def _exitstatus(shards: Sequence[Shard]) -> int | None:
    codes = [s.run.exitstatus for s in shards]
    if any(c is None for c in codes):
        return None
    odd = [int(c) for c in codes if int(c) not in (0, 1)]
    return odd[0] if odd else max(int(c) for c in codes)


def merge_docs(shards: Sequence[Shard]) -> dict[str, Any]:
    """The merged results document (after `check_partition`)."""
    shards = sorted(shards, key=lambda s: s.group)
    records = sorted((r for s in shards for r in s.run.records), key=lambda r: r.nodeid)
    finished = all(s.run.finished for s in shards)
    status = _exitstatus(shards)
    if finished:
        how = EXIT_WORDS.get(int(status), f"exit status {status}") if status is not None else "finished"
    else:
        how = "; ".join(f"shard {s.group}/{s.info['splits']} {s.run.ended}" for s in shards if not s.run.finished)
    first = shards[0]
    env = _environment(shards)
    env["Shards"] = f"{len(shards)} (pytest-split, {first.info.get('algorithm')})"
    extra = {
        "diagnosis": [d.to_dict() for d in diagnose(records, environment=env, partial=not finished)],
        "kernel": next((s.run.kernel for s in shards if s.run.kernel), None),
        "backend": next((s.run.backend for s in shards if s.run.backend), None),
        "coverage_gaps": list(dict.fromkeys(g for s in shards for g in s.run.coverage_gaps)),
        "not_run": _not_run(shards, records),
        "started": min((s.run.started for s in shards if s.run.started), default=None),
        "ran": sum(s.run.ran for s in shards),
        "shards": {**{k: first.info.get(k) for k in SPLIT_KEYS}, "groups": [s.group for s in shards],
                   "folders": [str(s.folder) for s in shards],
                   "collected": [s.run.collected for s in shards],
                   "finished": [s.run.finished for s in shards]},
    }
    return results.document(records, env, status, collected=sum(s.run.collected for s in shards),
                            finished=finished, ended=how, extra=extra)


def _not_run(shards: Sequence[Shard], records: Sequence[TestRecord]) -> list[dict[str, Any]] | None:
    """The merged run's groups of tests not run, counted again over every shard's records (None when a shard's file
    recorded no groups: readers then group the records themselves)."""
    if any(s.run.not_run is None for s in shards):
        return None
    known = [g.what for s in shards for g in s.run.not_run or ()]
    return [g.to_dict() for g in not_run.groups(records, known)]


def merge_junit(shards: Sequence[Shard], out: Path) -> int:
    """One <testsuite name="pytest"> holding every shard's test cases (properties kept); returns the case count."""
    from junitparser import JUnitXml, TestSuite

    merged = TestSuite("pytest")
    stamps: list[str] = []
    hosts: list[str] = []
    for s in sorted(shards, key=lambda s: s.group):
        path = s.folder / "junit.xml"
        if not path.is_file():
            raise MergeError(f"{path}: missing (each shard writes --junitxml into its folder)")
        try:
            xml = JUnitXml.fromfile(str(path))
        except Exception as exc:  # junitparser raises lxml/ElementTree errors of several kinds
            raise MergeError(f"{path}: not a JUnit file: {exc}") from exc
        for suite in xml:
            stamps += [suite.timestamp] if suite.timestamp else []
            hosts += [suite.hostname] if suite.hostname and suite.hostname not in hosts else []
            for case in suite:
                merged._add_testcase_no_update_stats(case)
    merged.update_statistics()
    if stamps:
        merged.timestamp = min(stamps)  # the earliest shard's start, as ISO times sort
    if hosts:
        merged.hostname = ",".join(hosts)
    doc = JUnitXml("pytest tests")
    doc.add_testsuite(merged)
    doc.update_statistics()
    out.parent.mkdir(parents=True, exist_ok=True)
    doc.write(str(out))
    return int(merged.tests)


# --- the merged page ---------------------------------------------------------------------------------------------

PAGE_STYLE = """<style>
body{font-family:Helvetica,Arial,sans-serif;font-size:13px;color:#111;margin:16px}
table.nan-env,table.nan-results{border-collapse:collapse;margin:6px 0 14px}
table.nan-env td,table.nan-results td,table.nan-results th{border:1px solid #aaa;padding:2px 5px;font-size:12px;
vertical-align:top}
table.nan-results td.nan-msg{text-align:left;max-width:560px;white-space:pre-wrap}
tr.nan-row-failed td,tr.nan-row-error td{background:#fbe3e3}
</style>"""


def results_table(records: Sequence[TestRecord], group_of: dict[str, int]) -> str:
    """One row per test: id, outcome, the case columns pytest-html's page shows (reports.tables), cards, shard,
    duration and why it failed, with a failing test's expanded section folded under it."""
    head = ("test", "outcome", *(label for _, label in CASE_COLUMNS), "cards", "shard", "duration (s)", "message")
    rows = []
    for r in records:
        message = why(r) if r.failed else short_message(r.message)
        details = failure_details(r) if r.failed else ""
        folded = f"<details><summary>wrong rows and problems</summary>{details}</details>" if details else ""
        tds = (f"<td>{esc(r.nodeid)}</td><td>{esc(r.outcome)}</td>{''.join(case_cells(r))}"
               f"<td>{esc(','.join(map(str, r.cards)))}</td><td>{esc(group_of.get(r.nodeid, ''))}</td>"
               f"<td>{r.duration:.3f}</td>")
        rows.append(f'<tr class="nan-row-{esc(r.outcome)}" data-nodeid="{esc(r.nodeid)}" '
                    f'data-verdict="{esc(r.verdict)}">'
                    f'{tds}<td class="nan-msg">{esc(message)}{folded}</td></tr>')
    return (f'<table id="results-table" class="nan-results"><thead><tr>{"".join(f"<th>{esc(h)}</th>" for h in head)}'
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def page(run: Results, families: Sequence[Any], out_dir: Path, group_of: dict[str, int]) -> str:
    """The merged run's self-contained HTML page: shards, the summary block (verdict first), environment, one row
    per test."""
    records = list(run.records)
    block = summary.render(records, families, of_results(run))  # merge_docs' one diagnosis, as the run's
    shards = run.shards or {}
    links = []
    for group, folder in zip(shards["groups"], shards["folders"]):
        own = Path(folder) / "precision.html"
        try:
            href = Path(own.resolve()).relative_to(out_dir.resolve()).as_posix()
        except ValueError:
            href = own.resolve().as_uri()
        links.append(f'<li>shard {group}/{esc(shards["splits"])}: <a href="{esc(href)}">{esc(folder)}</a>'
                     f"{'' if own.is_file() else ' (no precision.html)'}</li>")
    title = f"NaN-count precision: {run.kernel or '?'}"
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{esc(title)} (merged shards)</title>{PAGE_STYLE}'
        f"</head><body>\n<h1>{esc(title)}</h1>\n"
        f'<p id="nan-merged">merged from {len(shards["groups"])} pytest-split shards '
        f"({esc(shards.get('algorithm'))}); {run.collected} tests collected, {run.ran} ran; "
        f"{'finished' if run.finished else 'NOT FINISHED'}: {esc(run.ended)}</p>\n"
        f'<ul id="nan-shards">{"".join(links)}</ul>\n'
        f"<h2>Summary</h2>\n{block}\n"
        f"{environment_table(run.environment)}\n"
        f"<h2>Results</h2>\n{results_table(records, group_of)}\n</body></html>\n"
    )


def check_out_dir(out_dir: Path) -> None:
    """Refuse an OUT_DIR that can never hold the merged reports, before any work."""
    existing = out_dir
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise MergeError(f"{out_dir}: {existing} exists and is not a folder; give a folder for the merged reports")


def merge(out_dir: Path, folders: Sequence[Path], family_modules: Sequence[str] = ()) -> Results:
    """Check and merge the shard folders into OUT_DIR/results.json, junit.xml, precision.html and summary.md (the
    summary's sections: the registry's case families and family_modules, the extra ones the shards ran with)."""
    check_out_dir(out_dir)
    shards = [load_shard(Path(f)) for f in folders]
    check_partition(shards)
    doc = merge_docs(shards)
    run = Results.from_doc(doc)
    families = registry.load(family_modules)
    group_of = {r.nodeid: s.group for s in shards for r in s.run.records}
    merge_junit(shards, out_dir / "junit.xml")
    results.write(out_dir / "results.json", doc)
    results.write_text_atomic(out_dir / "precision.html", page(run, families, out_dir, group_of))
    results.write_text_atomic(out_dir / "summary.md", markdown.run_summary(
        run, html=str(out_dir / "precision.html"), title=f"nan-harness ({len(shards)} shards merged)"))
    return run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m reports.merge",
        description="Merge pytest-split shard folders (results.json, junit.xml) into one run's reports; "
                    "exit 2 when the shards cannot be merged.")
    parser.add_argument("out_dir", type=Path,
                        help="where the merged results.json, junit.xml, precision.html and summary.md go")
    parser.add_argument("shards", type=Path, nargs="+", help="one folder per shard (--splits N --group i)")
    parser.add_argument("--nan-family", action="append", default=[], metavar="MODULE",
                        help="extra case-family module the shards ran with (for the summary's sections)")
    args = parser.parse_args(argv)
    needs.require("python -m reports.merge", None)
    try:
        run = merge(args.out_dir, args.shards, args.nan_family)
    except MergeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # permissions, a full disk: the reports were not (all) written
        print(f"error: cannot write the merged reports into {args.out_dir}: {exc}", file=sys.stderr)
        return 2
    try:
        markdown.append_step_summary((args.out_dir / "summary.md").read_text(encoding="utf-8"))
    except OSError as exc:
        print(f"error: cannot append to the job summary: {exc}", file=sys.stderr)
        return 2
    state = "finished" if run.finished else "NOT finished"
    print(f"merged {len((run.shards or {}).get('groups', []))} shards into {args.out_dir}: {run.collected} tests, "
          f"{state} ({run.ended}); verdicts {run.verdicts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
