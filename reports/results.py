"""out/results.json: one TestRecord per test item, the environment and how the run ended.

`load` is every reader's way in (compare, merge, trend, the nightly): it refuses, with ResultsError naming the field,
any file that is not what `document` writes (DOCUMENT below) or that says it finished when it cannot have, and hands
back `Results`, the typed document (one `TestRecord` per case). A case's totals, path, cards and `wrong_rows` are
written for readers of the raw JSON; they derive from its `checks`, which is what `TestRecord` reads back.
Torch-free, so gate machines without torch run compare and the nightly.
"""
from __future__ import annotations

import json
import math
import os
import tempfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reports import flaky
from reports.not_run import Group, groups
from reports.data_file import decoded_text
from verdict.codec import from_data
from verdict.record import ENVIRONMENT, FAILED_OUTCOMES, NOT_RUN, VALUE_KINDS, VERDICTS, TestRecord

SCHEMA = "nan-harness-results/2"
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


def load(path: Path) -> Results:
    """Read a results file and refuse anything a writer of SCHEMA would not have written."""
    text = decoded_text(path, str(path), ResultsError)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}: not JSON: {exc}") from exc
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
        DOCUMENT.validate(doc, "")
        _check_consistent(doc)
    except ResultsError as exc:
        raise ResultsError(f"{source}: {exc}") from None


# --- what a results document may hold ----------------------------------------------------------------------------

def _shown(value: Any) -> str:
    """A value as the file spells it, cut short."""
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _at(where: str, key: str) -> str:
    """A field's place as an error names it: `cases[0].wrong_rows[1].expected`."""
    return f"{where}.{key}" if where else key


@dataclass(frozen=True)
class Kind:
    """What a JSON value may be, in the words an error names it with."""

    words: str
    test: Callable[[Any], bool]
    parts: Callable[[Any, str], None] | None = None  # checks inside a value that passed `test`

    def validate(self, value: Any, where: str) -> None:
        """Raise ResultsError naming `where` when the value is not of this kind, so a bad file is refused."""
        if not self.test(value):
            raise ResultsError(f"{where} must be {self.words}, not {_shown(value)}")
        if self.parts is not None:
            self.parts(value, where)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def nullable(kind: Kind) -> Kind:
    """`kind`, or null where the writer has nothing to say (no kernel yet, a problem rather than a row)."""
    def parts(value: Any, where: str) -> None:
        if value is not None:
            kind.validate(value, where)
    return Kind(f"{kind.words} or null", lambda v: v is None or kind.test(v), parts)


def one_of(values: Sequence[str]) -> Kind:
    """One word of a closed set: a misspelt outcome or verdict must not read as a case that did not fail."""
    return Kind(f"one of {', '.join(values)}", lambda v: isinstance(v, str) and v in values)


def list_of(item: Kind) -> Kind:
    """A list whose every item is checked, so an error names the index."""
    def parts(value: list[Any], where: str) -> None:
        for i, v in enumerate(value):
            item.validate(v, f"{where}[{i}]")
    return Kind("a list", lambda v: isinstance(v, list), parts)


def dict_of(value_kind: Kind, keys: Sequence[str] | None = None) -> Kind:
    """An object of any keys (or only `keys`), every value of one kind."""
    def parts(value: dict[str, Any], where: str) -> None:
        for k, v in value.items():
            if keys is not None and k not in keys:
                raise ResultsError(f"{_at(where, k)}: unknown key (allowed: {', '.join(keys)})")
            value_kind.validate(v, _at(where, k))
    return Kind("an object", lambda v: isinstance(v, dict), parts)


def record(fields: Mapping[str, Kind], required: Sequence[str] = ()) -> Kind:
    """An object with these fields (`required` ones always present); keys a newer writer adds pass unchecked."""
    def parts(value: dict[str, Any], where: str) -> None:
        for key in required:
            if key not in value:
                raise ResultsError(f"{_at(where, key)} is missing")
        for key, kind in fields.items():
            if key in value:
                kind.validate(value[key], _at(where, key))
    return Kind("an object", lambda v: isinstance(v, dict), parts)


STRING = Kind("a string", lambda v: isinstance(v, str))
NAME = Kind("a non-empty string", lambda v: isinstance(v, str) and v != "")
BOOL = Kind("true or false", lambda v: isinstance(v, bool))
INT = Kind("an integer", _is_int)
COUNT = Kind("an integer >= 0", lambda v: _is_int(v) and v >= 0)
POSITIVE = Kind("an integer >= 1", lambda v: _is_int(v) and v >= 1)
SECONDS = Kind("a number >= 0", lambda v: (_is_int(v) or isinstance(v, float)) and math.isfinite(v) and v >= 0)
OBJECT = Kind("an object", lambda v: isinstance(v, dict))
VERDICT = one_of(VERDICTS)

VALUE_CLASS = record({"name": STRING, "negative": BOOL, "dtype": STRING, "bits": COUNT, "is_nan": BOOL},
                     required=("name", "negative", "dtype", "bits", "is_nan"))
PARAMS = record({"family": STRING, "case_id": STRING, "dtype": STRING, "layout": STRING, "shape": list_of(COUNT),
                 "detail": STRING, "seed": nullable(INT), "row_classes": list_of(VALUE_CLASS),
                 "nan_patterns": list_of(VALUE_CLASS), "in_domain": BOOL, "buffer_step": nullable(COUNT)})
CASE_ROW = record({"case_id": STRING, "row": nullable(COUNT), "expected": nullable(INT), "got": nullable(INT),
                   "label": STRING}, required=("row", "expected", "got"))  # row null: a problem, not a row
UNWRITTEN = record({"observable": BOOL, "blind_rows": list_of(COUNT), "why": STRING}, required=("observable",))
HELD = Kind("a [signed kind of value, count > 0] pair", lambda v: isinstance(v, list) and len(v) == 2
            and isinstance(v[0], str) and v[0][1:] in VALUE_KINDS and v[0][:1] in "+-" and _is_int(v[1]) and v[1] > 0)
CHECK_ROW = record({"row": COUNT, "expected": INT, "got": INT, "label": STRING, "holds": list_of(HELD),
                    "short_suffix": list_of(POSITIVE)}, required=("row", "expected", "got"))
CHECK = record({"params": PARAMS, "path": STRING, "verdict": VERDICT, "expected_total": nullable(INT),
                "got_total": nullable(INT), "problems": list_of(STRING), "problem_kinds": list_of(STRING),
                "wrong_rows": list_of(CHECK_ROW),
                "card": nullable(COUNT), "input_desc": STRING, "refusal": STRING, "ok": BOOL,
                "unwritten": nullable(UNWRITTEN)}, required=("verdict",))
FLAKY_LABEL = Kind("deterministic, flaky, 'known flaky: ...' or 'not rerun: ...'",
                   lambda v: isinstance(v, str) and flaky.kind(v) is not None)
NOT_RUN_FIELDS = {"group": STRING, "reason": STRING, "commands": list_of(STRING), "marker": STRING}
NOT_RUN_KIND = record(NOT_RUN_FIELDS, required=("group", "reason"))  # why a test did not run (verdict.not_run)
NOT_RUN_GROUP = record({**NOT_RUN_FIELDS, "tests": COUNT}, required=("group", "reason", "tests"))
CRASH_STORM = record({"signature": STRING, "scope": OBJECT, "crashes": list_of(STRING), "threshold": COUNT,
                      "groups": list_of(OBJECT)}, required=("signature", "scope", "crashes"))  # verdict.crash_storm
RERUN = record({"outcome": one_of(OUTCOMES), "verdict": VERDICT, "seconds": SECONDS, "message": STRING},
               required=("outcome",))  # one rerun of a failed test in a fresh process (reports.reruns)
CASE = record({"id": STRING, "nodeid": NAME, "family": STRING, "parameters": PARAMS, "path": STRING,
               "outcome": one_of(OUTCOMES), "verdict": VERDICT, "duration": SECONDS, "expected_total": nullable(INT),
               "got_total": nullable(INT), "wrong_rows": list_of(CASE_ROW), "cards": list_of(COUNT),
               "message": STRING, "waiver": nullable(dict_of(STRING)), "planted": nullable(OBJECT),
               "call_sites": list_of(OBJECT), "checks": list_of(CHECK), "flaky": nullable(FLAKY_LABEL),
               "reruns": list_of(RERUN), "not_run": nullable(NOT_RUN_KIND),
               "crash_storm": nullable(CRASH_STORM)}, required=("nodeid", "outcome", "verdict"))
SPLIT = {"splits": POSITIVE, "algorithm": nullable(STRING), "durations_sha256": nullable(STRING),
         "selection": nullable(OBJECT)}  # what every shard of one split run shares (reports.merge.SPLIT_KEYS)
SHARD = record({"group": POSITIVE, **SPLIT}, required=("group", "splits"))
SHARDS = record({**SPLIT, "groups": list_of(POSITIVE), "folders": list_of(STRING), "collected": list_of(COUNT),
                 "finished": list_of(BOOL)}, required=("groups", "folders"))  # a merged run's shards
ENVIRONMENT_FAILURE = record({"name": NAME, "kind": STRING, "message": STRING, "where": STRING,
                              "backend": nullable(STRING)}, required=("name", "message"))
DOCUMENT = record({"environment": dict_of(STRING), "exitstatus": nullable(INT), "finished": BOOL, "ended": STRING,
                   "collected": COUNT, "ran": COUNT, "counts": dict_of(COUNT, OUTCOMES),
                   "verdicts": dict_of(COUNT, VERDICTS), "run_id": nullable(STRING), "diagnosis": list_of(OBJECT),
                   "kernel": nullable(STRING), "backend": nullable(STRING), "coverage_gaps": list_of(STRING),
                   "started": nullable(STRING), "shard": nullable(SHARD), "shards": SHARDS, "cases": list_of(CASE),
                   "environment_failure": nullable(ENVIRONMENT_FAILURE), "not_run": nullable(list_of(NOT_RUN_GROUP)),
                   "usage_error": nullable(STRING)},
                  required=("environment", "exitstatus", "finished", "ended", "collected", "counts", "verdicts",
                            "cases"))


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
