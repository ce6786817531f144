"""python -m reports.merge OUT_DIR SHARD_DIR...: one results.json, junit.xml and precision.html from pytest-split
shards.

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
from html import escape
from pathlib import Path
from typing import Any

from reports import results, summary
from reports.plugin import EXIT_WORDS
from reports.results import ResultsError
from verdict.record import TestRecord

SHOWN_WRONG_ROWS = 50  # per failing test on the merged page; results.json has them all
# what every shard of one suite must share (the partition is only consistent when these agree)
SPLIT_KEYS = ("splits", "algorithm", "durations_sha256", "selection")


class MergeError(ValueError):
    """Shards that cannot be put together without hiding something."""


@dataclass(frozen=True)
class Shard:
    folder: Path
    doc: dict[str, Any]

    @property
    def info(self) -> dict[str, Any]:
        return self.doc["shard"]

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
        doc = results.load(path)
    except ResultsError as exc:
        raise MergeError(str(exc)) from exc
    if "shards" in doc:
        raise MergeError(f"{path}: already a merged run; merge the shard folders themselves")
    info = doc.get("shard")
    if not isinstance(info, dict) or not info.get("group") or not info.get("splits"):
        raise MergeError(f"{path}: not a shard (the run had no --splits N --group i); merge only shard folders")
    return Shard(folder, doc)


def check(shards: Sequence[Shard]) -> None:
    """Refuse shards that are not the complete, disjoint partition of one run of one kernel on one backend."""
    if not shards:
        raise MergeError("no shard folders given")
    first = shards[0]
    for key in SPLIT_KEYS:
        for s in shards[1:]:
            if s.info.get(key) != first.info.get(key):
                raise MergeError(f"shards were split differently: {key} is {first.info.get(key)!r} in {first.label} "
                                 f"but {s.info.get(key)!r} in {s.label}")
    identity = (("kernel", lambda d: d.get("kernel")),
                ("kernel commit", lambda d: (d.get("environment") or {}).get("Kernel commit")),
                ("backend", lambda d: d.get("backend")))
    for name, value_of in identity:
        known = [(s, value_of(s.doc)) for s in shards if value_of(s.doc) is not None]
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
        for case in s.doc["cases"]:
            other = owner.setdefault(case["nodeid"], s)
            if other is not s:
                raise MergeError(f"{case['nodeid']} is in two shards: {other.label} and {s.label}")


def _environment(shards: Sequence[Shard]) -> dict[str, str]:
    """The first shard's environment; a key whose value differs between nodes lists each distinct value."""
    env: dict[str, str] = {}
    for s in shards:
        for key, value in s.doc.get("environment", {}).items():
            values = env.get(key, "").split(" | ") if key in env else []
            if str(value) not in values:
                env[key] = " | ".join([*values, str(value)])
    return env


def _exitstatus(shards: Sequence[Shard]) -> int | None:
    codes = [s.doc.get("exitstatus") for s in shards]
    if any(c is None for c in codes):
        return None
    odd = [int(c) for c in codes if int(c) not in (0, 1)]
    return odd[0] if odd else max(int(c) for c in codes)


def merge_docs(shards: Sequence[Shard]) -> dict[str, Any]:
    """The merged results document (after `check`)."""
    from reports.diagnosis import diagnose

    shards = sorted(shards, key=lambda s: s.group)
    records = sorted((r for s in shards for r in results.records(s.doc)), key=lambda r: r.nodeid)
    finished = all(bool(s.doc.get("finished")) for s in shards)
    status = _exitstatus(shards)
    if finished:
        how = EXIT_WORDS.get(int(status), f"exit status {status}") if status is not None else "finished"
    else:
        how = "; ".join(f"shard {s.group}/{s.info['splits']} {s.doc.get('ended', 'not finished')}"
                        for s in shards if not s.doc.get("finished"))
    gaps: list[str] = []
    for s in shards:
        gaps += [g for g in s.doc.get("coverage_gaps") or [] if g not in gaps]
    first = shards[0]
    started = sorted(str(s.doc["started"]) for s in shards if s.doc.get("started"))
    env = _environment(shards)
    env["Shards"] = f"{len(shards)} (pytest-split, {first.info.get('algorithm')})"
    extra = {
        "diagnosis": [d.to_dict() for d in diagnose(records, environment=env)],
        "kernel": next((s.doc["kernel"] for s in shards if s.doc.get("kernel")), None),
        "backend": next((s.doc["backend"] for s in shards if s.doc.get("backend")), None),
        "coverage_gaps": gaps,
        "started": started[0] if started else None,
        "ran": sum(int(s.doc.get("ran") or 0) for s in shards),
        "shards": {**{k: first.info.get(k) for k in SPLIT_KEYS}, "groups": [s.group for s in shards],
                   "folders": [str(s.folder) for s in shards],
                   "collected": [int(s.doc.get("collected") or 0) for s in shards],
                   "finished": [bool(s.doc.get("finished")) for s in shards]},
    }
    return results.document(records, env, status, collected=sum(int(s.doc.get("collected") or 0) for s in shards),
                            finished=finished, ended=how, extra=extra)


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


def _t(value: object) -> str:
    return "" if value is None else escape(str(value))


def _wrong_rows(r: TestRecord) -> str:
    rows = [w for w in r.wrong_rows]
    if not rows:
        return ""
    body = "".join(f"<tr><td>{_t(w.get('case_id'))}</td><td>{_t(w.get('row'))}</td><td>{_t(w.get('expected'))}</td>"
                   f"<td>{_t(w.get('got'))}</td><td>{_t(w.get('label'))}</td></tr>" for w in rows[:SHOWN_WRONG_ROWS])
    more = len(rows) - SHOWN_WRONG_ROWS
    tail = f'<tr><td colspan="5">... and {more} more (see results.json)</td></tr>' if more > 0 else ""
    return ('<details><summary>wrong rows and problems</summary><table class="nan-results"><thead><tr><th>case</th>'
            "<th>row</th><th>expected</th><th>got</th><th>label / problem</th></tr></thead>"
            f"<tbody>{body}{tail}</tbody></table></details>")


def results_table(records: Sequence[TestRecord], group_of: dict[str, int]) -> str:
    head = ("test", "outcome", "verdict", "dtype", "layout", "shape", "NaN frac / class", "path", "expected total",
            "got total", "rows wrong", "cards", "shard", "duration (s)", "message")
    rows = []
    for r in records:
        p = r.params
        wrong = sum(1 for w in r.wrong_rows if w.get("row") is not None)
        message = summary.why(r) if r.failed else (summary.short_message(r.message) if r.message else "")
        cells = (r.nodeid, r.outcome, r.verdict.replace("_", " "), p.dtype if p else "", p.layout if p else "",
                 "x".join(str(n) for n in p.shape) if p else "", p.detail if p else "", r.path, r.expected_total,
                 r.got_total, wrong if r.checks else "", ",".join(map(str, r.cards)), group_of.get(r.nodeid, ""),
                 f"{r.duration:.3f}")
        tds = "".join(f"<td>{_t(c)}</td>" for c in cells)
        rows.append(f'<tr class="nan-row-{_t(r.outcome)}" data-nodeid="{escape(r.nodeid, quote=True)}" '
                    f'data-verdict="{_t(r.verdict)}">{tds}<td class="nan-msg">{_t(message)}'
                    f"{_wrong_rows(r) if r.failed else ''}</td></tr>")
    return (f'<table id="results-table" class="nan-results"><thead><tr>{"".join(f"<th>{_t(h)}</th>" for h in head)}'
            f"</tr></thead><tbody>{''.join(rows)}</tbody></table>")


def page(doc: dict[str, Any], families: Sequence[Any], out_dir: Path, group_of: dict[str, int]) -> str:
    """The merged run's self-contained HTML page: summary block, environment, shards, one row per test."""
    from reports.diagnosis import diagnose, render as render_diagnosis

    records = results.records(doc)
    diagnosis = render_diagnosis(diagnose(records, environment=doc["environment"]))
    block = summary.render(records, families, kernel=doc.get("kernel") or "?", backend=doc.get("backend") or "?",
                           finished=bool(doc["finished"]), ended=str(doc["ended"]), gaps=doc.get("coverage_gaps") or (),
                           diagnosis=diagnosis)
    env = "".join(f"<tr><td>{_t(k)}</td><td>{_t(v)}</td></tr>" for k, v in doc["environment"].items())
    shards = doc["shards"]
    links = []
    for group, folder in zip(shards["groups"], shards["folders"]):
        own = Path(folder) / "precision.html"
        try:
            href = Path(own.resolve()).relative_to(out_dir.resolve()).as_posix()
        except ValueError:
            href = own.resolve().as_uri()
        links.append(f'<li>shard {group}/{_t(shards["splits"])}: <a href="{escape(href, quote=True)}">{_t(folder)}</a>'
                     f"{'' if own.is_file() else ' (no precision.html)'}</li>")
    title = f"NaN-count precision: {doc.get('kernel') or '?'}"
    return (
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>{_t(title)} (merged shards)</title>{PAGE_STYLE}'
        f"</head><body>\n<h1>{_t(title)}</h1>\n"
        f'<p id="nan-merged">merged from {len(shards["groups"])} pytest-split shards '
        f"({_t(shards.get('algorithm'))}); {doc['collected']} tests collected, {doc['ran']} ran; "
        f"{'finished' if doc['finished'] else 'NOT FINISHED'}: {_t(doc['ended'])}</p>\n"
        f'<ul id="nan-shards">{"".join(links)}</ul>\n'
        f"<h2>Summary</h2>\n{block}\n"
        f'<h2>Environment</h2>\n<table id="environment" class="nan-env">{env}</table>\n'
        f"<h2>Results</h2>\n{results_table(records, group_of)}\n</body></html>\n"
    )


def check_out_dir(out_dir: Path) -> None:
    """Refuse an OUT_DIR that can never hold the merged reports, before any work."""
    existing = out_dir
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise MergeError(f"{out_dir}: {existing} exists and is not a folder; give a folder for the merged reports")


def merge(out_dir: Path, folders: Sequence[Path], families: Sequence[Any] | None = None) -> dict[str, Any]:
    """Check and merge the shard folders into OUT_DIR/results.json, junit.xml and precision.html."""
    check_out_dir(out_dir)
    shards = [load_shard(Path(f)) for f in folders]
    check(shards)
    doc = merge_docs(shards)
    if families is None:
        from cases import registry

        families = registry.load()
    group_of = {c["nodeid"]: s.group for s in shards for c in s.doc["cases"]}
    merge_junit(shards, out_dir / "junit.xml")
    results.write(out_dir / "results.json", doc)
    results.write_text_atomic(out_dir / "precision.html", page(doc, families, out_dir, group_of))
    return doc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m reports.merge",
        description="Merge pytest-split shard folders (results.json, junit.xml) into one run's reports; "
                    "exit 2 when the shards cannot be merged.")
    parser.add_argument("out_dir", type=Path, help="where the merged results.json, junit.xml and precision.html go")
    parser.add_argument("shards", type=Path, nargs="+", help="one folder per shard (--splits N --group i)")
    parser.add_argument("--nan-family", action="append", default=[], metavar="MODULE",
                        help="extra case-family module the shards ran with (for the summary's sections)")
    args = parser.parse_args(argv)
    try:
        from cases import registry

        families = registry.load(args.nan_family)
        doc = merge(args.out_dir, args.shards, families)
    except MergeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # permissions, a full disk: the reports were not (all) written
        print(f"error: cannot write the merged reports into {args.out_dir}: {exc}", file=sys.stderr)
        return 2
    state = "finished" if doc["finished"] else "NOT finished"
    print(f"merged {len(doc['shards']['groups'])} shards into {args.out_dir}: {doc['collected']} tests, "
          f"{state} ({doc['ended']}); verdicts {doc['verdicts']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
