"""ROOT/last_good.json: per test id x device kind x chip (and kernel module), the commit that last passed and the
commit (and night) that first failed since; `python -m nightly.last_good ROOT` rebuilds it from the night folders.

Each judged night updates it from its results.json: the environment's "Kernel commit", the backend (device kind)
and "Chip" (else "Device", the card's name: NVIDIA H200, an Ascend model, the interpreter). A night that did not
finish, or that its nightly did not judge, never touches it, so a crash mid-suite cannot move a last good commit.
The folders are the truth: replaying a night already applied (a night run again under its name) rebuilds the table.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nightly.nights import nights, read_json, read_nightly, read_results
from reports import markdown
from reports.markup import esc
from reports.results import Results, write_text_atomic

SCHEMA = "nan-harness-last-good/1"
FILE = "last_good.json"
JUDGED = ("passed", "failed", "regressed")  # nightly.json's verdicts step when the night was judged
SHOWN_IN_MARKDOWN = 5
SHOWN_ON_PAGE = 200
Key = tuple[str, str, str, str]  # test id, kernel module, device kind, chip


@dataclass
class Entry:
    """One test on one kernel, device kind and chip: where it last passed, where it first failed since."""

    test: str
    kernel: str
    device: str
    chip: str
    last_good: dict[str, str | None] | None = None  # {"commit", "night"}
    first_failing: dict[str, str | None] | None = None  # set while the test fails; cleared when it passes again
    last_seen: str = ""

    @property
    def key(self) -> Key:
        return (self.test, self.kernel, self.device, self.chip)

    @property
    def failing(self) -> bool:
        return self.first_failing is not None


@dataclass
class Table:
    """The whole table and the nights it was built from, oldest first."""

    entries: dict[Key, Entry] = field(default_factory=dict)
    nights: list[str] = field(default_factory=list)

    def to_doc(self) -> dict[str, Any]:
        rows = [vars(e) for _, e in sorted(self.entries.items())]
        return {"schema": SCHEMA, "nights": self.nights, "entries": rows}

    @classmethod
    def from_doc(cls, doc: Any) -> Table:
        """The table a to_doc wrote; ValueError for anything else, so a foreign file is never extended."""
        if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
            raise ValueError(f"not a {SCHEMA} document")
        table = cls(nights=[str(n) for n in doc.get("nights") or []])
        for row in doc.get("entries") or []:
            entry = Entry(**row)
            table.entries[entry.key] = entry
        return table

    def failing(self) -> list[Entry]:
        """Tests failing in the newest night that ran their kernel on their device kind and chip."""
        newest: dict[tuple[str, str, str], str] = {}
        for e in self.entries.values():
            where = e.key[1:]
            newest[where] = max(newest.get(where, ""), e.last_seen)
        return sorted((e for e in self.entries.values() if e.failing and e.last_seen == newest[e.key[1:]]),
                      key=lambda e: e.key)


def where(run: Results) -> tuple[str, str, str, str | None]:
    """(kernel module, device kind, chip, kernel commit) of a run, '?' where it recorded none."""
    env = run.environment
    kernel = run.kernel or env.get("Kernel module") or "?"
    device = run.backend or env.get("Backend") or "?"
    chip = env.get("Chip") or env.get("Device") or "?"
    return kernel, device, chip, env.get("Kernel commit")


def apply(table: Table, night: str, run: Results) -> None:
    """Move the table on by one judged night: passes set the last good commit, a first failure is remembered."""
    kernel, device, chip, commit = where(run)
    seen = {"commit": commit, "night": night}
    for record in run.records:
        key = (record.nodeid, kernel, device, chip)
        entry = table.entries.get(key) or Entry(*key)
        if record.outcome == "passed":
            entry.last_good, entry.first_failing = seen, None
        elif record.failed and entry.first_failing is None:
            entry.first_failing = seen
        elif not record.failed:
            continue  # skipped or not run: says nothing about the commit
        entry.last_seen = night
        table.entries[key] = entry
    table.nights.append(night)


def judged(folder: Path) -> tuple[Results | None, str]:
    """The night's results when it finished and its nightly judged it (a hand-made folder: finished is enough)."""
    run, why = read_results(folder)
    if run is None:
        return None, why
    status = ((read_nightly(folder) or {}).get("steps") or {}).get("verdicts", {}).get("status")
    if status is not None and status not in JUDGED:
        return None, f"the nightly did not judge it ({status})"
    return run, ""


def rebuild(root: Path) -> Table:
    """The table from every judged night folder under root, oldest first."""
    table = Table()
    for folder in nights(root):
        run, _ = judged(folder)
        if run is not None:
            apply(table, folder.name, run)
    return table


def read(root: Path) -> Table | None:
    """ROOT/last_good.json, or None when absent or not this schema."""
    try:
        return Table.from_doc(read_json(root / FILE))
    except (ValueError, TypeError):
        return None


def write(root: Path, table: Table) -> Path:
    path = root / FILE
    write_text_atomic(path, json.dumps(table.to_doc(), indent=1) + "\n")
    return path


def update(root: Path, folder: Path) -> tuple[Table | None, str]:
    """Apply one night to ROOT/last_good.json: (the table, '') or (None, why the night left it as it was)."""
    run, why = judged(folder)
    if run is None:
        return None, why
    table = read(root)
    if table is None or any(n >= folder.name for n in table.nights):
        table = rebuild(root)  # no file yet, or this night (or a later one) was applied: replay the folders
    else:
        apply(table, folder.name, run)
    write(root, table)
    return table, ""


def _commit(seen: dict[str, str | None] | None) -> str:
    return (seen.get("commit") or "unknown")[:12] if seen else ""


def markdown_lines(table: Table, run: Results) -> list[str]:
    """A failing night's few lines: for its first failing tests, the last good commit and the first failing one."""
    kernel, device, chip, _ = where(run)
    failed = [table.entries.get((r.nodeid, kernel, device, chip)) for r in run.failing()]
    rows = [e for e in failed if e is not None]
    if not rows:
        return []
    lines = ["", f"**Last good commits** ({markdown.text(device)}, {markdown.text(chip)}):", "",
             "| test | last passed | first failed |", "|---|---|---|"]
    for e in rows[:SHOWN_IN_MARKDOWN]:
        good = (f"{markdown.code(_commit(e.last_good), in_table=True)} ({markdown.text(e.last_good['night'])})"
                if e.last_good else "never here")
        bad = f"{markdown.code(_commit(e.first_failing), in_table=True)} ({markdown.text(e.first_failing['night'])})"
        lines.append(f"| {markdown.code(e.test.rsplit('::', 1)[-1], in_table=True)} | {good} | {bad} |")
    if len(rows) > SHOWN_IN_MARKDOWN:
        lines.append(f"| … {len(rows) - SHOWN_IN_MARKDOWN} more in {FILE} | | |")
    return lines


def html_section(table: Table) -> str:
    """The trend page's section: every test failing now, with its last good and first failing commit."""
    rows = table.failing()

    def cell(seen: dict[str, str | None] | None, empty: str) -> str:
        if not seen:
            return f"<td>{esc(empty)}</td>"
        return f"<td><code>{esc(_commit(seen))}</code> ({esc(seen.get('night') or '')})</td>"

    body = "".join(
        f'<tr data-test="{esc(e.test)}"><td><code>{esc(e.test)}</code></td><td>{esc(e.kernel)}</td>'
        f"<td>{esc(e.device)}</td><td>{esc(e.chip)}</td>{cell(e.last_good, 'never passed here')}"
        f"{cell(e.first_failing, '')}</tr>" for e in rows[:SHOWN_ON_PAGE])
    more = f"<p>… and {len(rows) - SHOWN_ON_PAGE} more in {FILE}</p>" if len(rows) > SHOWN_ON_PAGE else ""
    return ("<h2>Last good commits</h2><p>tests failing in the newest judged night of their kernel, device kind and "
            f"chip ({len(rows)}), from {len(table.nights)} judged night(s)</p>"
            '<table id="nan-last-good"><thead><tr><th>test</th><th>kernel</th><th>device</th><th>chip</th>'
            f"<th>last passed (night)</th><th>first failed (night)</th></tr></thead><tbody>{body}</tbody></table>"
            + more if rows else "<h2>Last good commits</h2><p>no test is failing in the newest judged nights</p>")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m nightly.last_good", description=__doc__.splitlines()[0])
    parser.add_argument("root", type=Path, help="the nightly's root (out/nightly)")
    args = parser.parse_args(argv)
    table = rebuild(args.root)
    if not table.nights:
        print(f"error: {args.root}: no judged night folder", file=sys.stderr)
        return 2
    path = write(args.root, table)
    print(f"wrote {path}: {len(table.entries)} entries from {len(table.nights)} night(s), "
          f"{len(table.failing())} failing now")
    return 0


if __name__ == "__main__":
    sys.exit(main())
