"""A results.json as the harness writes it, from a few case dicts: the tools read it through reports.results'
validator, so a test's stand-in run must be a whole, consistent document."""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reports.results import document
from verdict.record import TestRecord


def write_results(folder: Path, cases: Sequence[Mapping[str, Any]], *, run_id: str, finished: bool = True,
                  ended: str | None = None, collected: int | None = None) -> Path:
    """folder/results.json for these cases; a finished run exits 1 when one failed, else 0 (an unfinished one
    records no exit status)."""
    records = [TestRecord.from_dict({"parameters": {}, "checks": [], "message": "", **c}) for c in cases]
    failed = any(r.failed for r in records)
    exitstatus = (1 if failed else 0) if finished else None
    doc = document(records, {}, exitstatus, collected=len(records) if collected is None else collected,
                   finished=finished, ended=ended or ("tests failed" if failed else "passed"),
                   extra={"run_id": run_id})
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "results.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path
