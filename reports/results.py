"""out/results.json: one TestRecord per test item, the environment and how the run ended.

`load` is every reader's way in (compare, merge, trend, the nightly): it refuses, with ResultsError naming the field,
any file that is not what `document` writes (DOCUMENT below) or that says it finished when it cannot have, and hands
back `Results`, the typed document (one `TestRecord` per case). A case's totals, path, cards and `wrong_rows` are
written for readers of the raw JSON; they derive from its `checks`, which is what `TestRecord` reads back.
Torch-free, so gate machines without torch run compare and the nightly.
"""
from __future__ import annotations

import functools
import json
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import fastjsonschema

from reports.not_run import Group, groups
from reports.data_file import decoded_text
from verdict.codec import from_data
from verdict.record import ENVIRONMENT, FAILED_OUTCOMES, NOT_RUN, TestRecord

SCHEMA = "nan-harness-results/2"
SCHEMA_FILE = Path(__file__).with_name("results.schema.json")  # its JSON Schema, for this validator and users' CI
LEGACY_SCHEMA = "nan-harness-results/1"  # written before runs recorded how they ended
OUTCOMES = ("passed", "failed", "error", "skipped", "xfailed", "xpassed", "pending")  # TestRecord.outcome's words


class ResultsError(ValueError):
    """A results file that cannot be read, is not ours, or describes a run that cannot be judged."""


def tally(values: Sequence[str]) -> dict[str, int]:
    """How many times each value occurs, keys sorted (results.json's tallies)."""
    return dict(sorted(Counter(values).items()))


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


def dumps(doc: dict[str, Any]) -> str:
    """The file's text: one place decides how results.json is laid out."""
    return json.dumps(doc, indent=1) + "\n"


def write(path: Path, doc: dict[str, Any]) -> None:
    write_text_atomic(path, dumps(doc))


@dataclass(frozen=True)
class Results:
    """A results file as every reader sees it once `validate` passed: how the run ended, and one TestRecord per test."""

    environment: dict[str, str]
    exitstatus: int | None
    finished: bool
    ended: str
    collected: int
    ran: int
    counts: dict[str, int]
    verdicts: dict[str, int]
    records: tuple[TestRecord, ...]
    run_id: str | None = None
    kernel: str | None = None
    backend: str | None = None
    started: str | None = None
    coverage_gaps: tuple[str, ...] = ()
    diagnosis: tuple[dict[str, Any], ...] = ()
    shard: dict[str, Any] | None = None  # this run's place among pytest-split shards
    shards: dict[str, Any] | None = None  # a merged run's shards
    environment_failure: dict[str, Any] | None = None  # why a run ended `environment` (harness.environment_failures)
    not_run: tuple[Group, ...] | None = None  # what was not tested, grouped (None: an older file)
    usage_error: str | None = None  # why a run ended `usage error` before its tests ran

    @classmethod
    def from_doc(cls, doc: dict[str, Any]) -> Results:
        """The typed view of a document `validate` accepted (or `document` wrote); a file without `ran` ran all."""
        found: Results = from_data(cls, {**doc, "records": doc["cases"], "ran": doc.get("ran", doc["collected"])})
        return found

    def by_nodeid(self) -> dict[str, TestRecord]:
        """Records keyed by node id, the key every comparison of two runs matches on."""
        return {r.nodeid: r for r in self.records}

    def identity(self) -> dict[str, str]:
        """What the run judged: kernel, backend, device and the kernel's commit ('?' where not recorded; a commit
        the run could not know says so, and why, from the environment's "Kernel origin")."""
        env = self.environment
        origin = env.get("Kernel origin") or "this results.json records neither a commit nor why it has none"
        return {"kernel": self.kernel or env.get("Kernel module") or "?",
                "backend": self.backend or env.get("Backend") or "?",
                "device": env.get("Device") or "?", "kernel commit": env.get("Kernel commit") or f"unknown ({origin})"}

    def not_run_groups(self) -> tuple[list[Group], list[str]]:
        """What was not tested, in groups; and, for an older file that recorded no groups, its gap texts."""
        if self.not_run is not None:
            return list(self.not_run), []
        return groups(self.records), list(self.coverage_gaps)

    def failing(self) -> list[TestRecord]:
        """Tests whose outcome is failed or error."""
        return [r for r in self.records if r.failed]


def _no_constant(word: str) -> Any:
    """NaN and Infinity are Python's JSON, not JSON: no count or second of ours is one (the schema's numbers are
    finite because none can be read)."""
    raise ResultsError(f"{word} is not a JSON number (a count or a duration must be finite)")


def load(path: Path) -> Results:
    """Read a results file and refuse anything a writer of SCHEMA would not have written."""
    text = decoded_text(path, str(path), ResultsError)
    try:
        doc = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}: not JSON: {exc}") from exc
    except ResultsError as exc:  # NaN or Infinity
        raise ResultsError(f"{path}: {exc}") from None
    except RecursionError as exc:
        raise ResultsError(f"{path}: not JSON this harness writes: nested too deeply") from exc
    validate(doc, str(path))
    return Results.from_doc(doc)


class OtherRun(ResultsError):
    """A valid results file that another run wrote: not the run id a tool gave its child (`--nan-run-id`)."""

    def __init__(self, message: str, found: str | None) -> None:
        super().__init__(message)
        self.found = found


def load_run(path: Path, run_id: str | None = None) -> Results:
    """`load`, refusing (OtherRun) a file whose run id is not run_id: a tool judges only the child it started."""
    run = load(path)
    if run_id is not None and run.run_id != run_id:
        raise OtherRun(f"{path}: holds run {run.run_id!r}, not {run_id!r}", run.run_id)
    return run


def validate(doc: Any, source: str) -> None:
    """One check for every reader, so no gate reads a malformed file as a run (or crashes on it)."""
    try:
        _check_schema(doc)
        _check_shape(doc)
        _check_consistent(doc)
    except ResultsError as exc:
        raise ResultsError(f"{source}: {exc}") from None


# --- what a results document may hold ----------------------------------------------------------------------------

def _shown(value: Any) -> str:
    """A value as the file spells it, cut short."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


@functools.cache
def _schema_check() -> Callable[[Any], Any]:
    """The shipped JSON Schema (reports/results.schema.json, the one statement of the file's shape), compiled once."""
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return fastjsonschema.compile(schema)


def _check_shape(doc: Any) -> None:
    """Raise ResultsError naming the field (`cases[0].wrong_rows[1].expected`) where the file breaks the schema."""
    try:
        _schema_check()(doc)
    except fastjsonschema.JsonSchemaValueException as exc:
        raise ResultsError(exc.message.removeprefix("data.").removeprefix("data ")) from None


def _check_schema(doc: Any) -> None:
    """Only SCHEMA says how its run ended; an older file cannot show that its run finished."""
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema == LEGACY_SCHEMA:
        raise ResultsError(f"schema {LEGACY_SCHEMA} does not record whether its run finished, so it cannot be "
                           f"judged; rerun the suite to write a {SCHEMA} file")
    if schema != SCHEMA:
        raise ResultsError(f"not a {SCHEMA} results file" + (f" (schema {_shown(schema)})" if schema else ""))


def _check_consistent(doc: dict[str, Any]) -> None:
    """What the writer (reports.plugin.ended) never puts together: a finished run that cannot have finished."""
    collected, ran = doc["collected"], doc.get("ran", doc["collected"])
    if doc["finished"] and doc["exitstatus"] not in (0, 1):
        raise ResultsError(f"finished is true but exitstatus is {_shown(doc['exitstatus'])}; "
                           "a finished run exits 0 or 1")
    if doc["finished"] and collected == 0:
        raise ResultsError("finished is true but collected is 0; a run that collected nothing did not finish")
    if doc["finished"] and ran < collected:
        raise ResultsError(f"finished is true but ran is {ran} of {collected} collected")
    if doc["ended"] == ENVIRONMENT and (doc["finished"] or doc["exitstatus"] == 0):
        raise ResultsError("ended is environment but the run says it finished or exited 0; an environment "
                           "failure judged nothing")
    labelled = [c["nodeid"] for c in doc["cases"] if c.get("flaky") and c["outcome"] not in FAILED_OUTCOMES]
    if labelled:
        raise ResultsError(f"{labelled[0]} has a rerun label (flaky) but did not fail: reruns only label failures, "
                           "they never turn one into a pass")
    not_run = sum(1 for c in doc["cases"] if c["verdict"] == NOT_RUN)
    grouped = sum(g["tests"] for g in doc.get("not_run") or ())
    if doc.get("not_run") is not None and grouped != not_run:
        raise ResultsError(f"not_run groups hold {grouped} test(s) but {not_run} case(s) are not_run: every test "
                           "not run is in one group")
    twice = sorted(n for n, k in Counter(c["nodeid"] for c in doc["cases"]).items() if k > 1)
    if twice:
        raise ResultsError(f"duplicate nodeid in cases: {', '.join(twice[:3])}" + (" ..." if len(twice) > 3 else ""))
