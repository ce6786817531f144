"""reports/results.json: one record per test item plus the environment; written and read back here."""
from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reports.records import CaseResult

SCHEMA = "nan-harness-results/1"
RECORD_KEYS = (
    "id", "nodeid", "parameters", "path", "outcome", "duration",
    "expected_total", "got_total", "wrong_rows", "cards", "message", "waiver", "checks",
)
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed", "pending")


class ResultsError(ValueError):
    """A results file that cannot be read or is not ours."""


def document(results: Sequence[CaseResult], environment: dict[str, str], exitstatus: int | None) -> dict[str, Any]:
    """The JSON document: schema tag, environment, outcome counts and one record per test item."""
    counts: dict[str, int] = {}
    for r in results:
        counts[r.outcome] = counts.get(r.outcome, 0) + 1
    return {
        "schema": SCHEMA,
        "environment": environment,
        "exitstatus": exitstatus,
        "counts": dict(sorted(counts.items())),
        "cases": [r.as_dict() for r in results],
    }


def write(path: Path, doc: dict[str, Any]) -> None:
    """Write atomically, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name, suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1, sort_keys=False)
        f.write("\n")
    os.replace(tmp, path)


def load(path: Path) -> dict[str, Any]:
    """Read a results file and check it is one of ours."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}: not JSON: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("schema") != SCHEMA:
        raise ResultsError(f"{path}: not a {SCHEMA} results file")
    cases = doc.get("cases")
    if not isinstance(cases, list) or not all(isinstance(c, dict) and "nodeid" in c and "outcome" in c for c in cases):
        raise ResultsError(f"{path}: 'cases' must be a list of records with nodeid and outcome")
    return doc
