"""reports/results.json: one TestRecord per test item, the environment and how the run ended."""
from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from verdict.record import TestRecord

SCHEMA = "nan-harness-results/2"
READABLE_SCHEMAS = ("nan-harness-results/1", SCHEMA)


class ResultsError(ValueError):
    """A results file that cannot be read, is not ours, or describes a run that cannot be judged."""


def tally(values: Sequence[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return dict(sorted(counts.items()))


def document(
    results: Sequence[TestRecord],
    environment: dict[str, str],
    exitstatus: int | None,
    *,
    collected: int,
    finished: bool,
    ended: str,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The JSON document: schema tag, environment, how the run ended, tallies and one record per test item."""
    return {
        "schema": SCHEMA,
        "environment": environment,
        "exitstatus": exitstatus,
        "finished": finished,
        "ended": ended,
        "collected": collected,
        "counts": tally([r.outcome for r in results]),
        "verdicts": tally([r.verdict for r in results]),
        **(extra or {}),
        "cases": [r.to_dict() for r in results],
    }


def write_text_atomic(path: Path, text: str) -> None:
    """Write a whole file or nothing: a temp file beside it, renamed over it, mode 0644 like other reports."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write(path: Path, doc: dict[str, Any]) -> None:
    write_text_atomic(path, json.dumps(doc, indent=1) + "\n")


def load(path: Path) -> dict[str, Any]:
    """Read a results file and check it is one of ours."""
    try:
        doc = json.loads(Path(path).read_bytes().decode("utf-8"))
    except OSError as exc:
        raise ResultsError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise ResultsError(f"{path}: not UTF-8 text: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}: not JSON: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("schema") not in READABLE_SCHEMAS:
        raise ResultsError(f"{path}: not a {SCHEMA} results file")
    cases = doc.get("cases")
    if not isinstance(cases, list) or not all(isinstance(c, dict) and "nodeid" in c and "outcome" in c for c in cases):
        raise ResultsError(f"{path}: 'cases' must be a list of records with nodeid and outcome")
    return doc


def records(doc: dict[str, Any]) -> list[TestRecord]:
    return [TestRecord.from_dict(c) for c in doc["cases"]]
