"""One result per test item: outcome from its reports, parameters from its check records or its id."""
from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

CASE_PROPERTY = "nan_case"  # the user property harness.plugin's check fixture writes (kept in step with it)
PLANTED_PROPERTY = "planted"  # the planted-bug self-test's verdict per variant (tests/selftest)

DTYPES = ("fp32", "bf16", "fp16", "fp64", "fp8e4m3", "fp8e5m2")
PATHS = ("wrapper", "direct")
FAILED_OUTCOMES = ("failed", "error")
_SHAPE = re.compile(r"^(\d+)x(\d+)$")
_NAN = re.compile(r"^nan(\d+(?:\.\d+)?)$")
_MATRIX_ID = re.compile(r"^(?P<dtype>[a-z0-9]+)-(?P<layout>[a-z]+)-(?P<r>\d+)x(?P<v>\d+)-nan(?P<frac>[\d.]+)$")


@dataclass(frozen=True)
class Check:
    """One call of the `check` fixture: the case it compared and what came out."""

    case_id: str
    kind: str
    dtype: str
    layout: str
    shape: tuple[int, ...]
    nan: str
    path: str
    seed: int | None
    expected_total: int | None
    got_total: int | None
    problems: tuple[str, ...]
    wrong_rows: tuple[dict[str, Any], ...]
    ok: bool
    card: int | None = None  # accelerator index the kernel ran on (None on the CPU)

    @classmethod
    def from_json(cls, text: str) -> Check:
        """Parse one `nan_case` property; missing fields get neutral defaults."""
        d = json.loads(text)
        return cls(
            case_id=str(d.get("case_id", "")),
            kind=str(d.get("kind", "")),
            dtype=str(d.get("dtype", "")),
            layout=str(d.get("layout", "")),
            shape=tuple(int(n) for n in d.get("shape") or ()),
            nan=str(d.get("nan", "")),
            path=str(d.get("path", "")),
            seed=d.get("seed"),
            expected_total=d.get("expected_total"),
            got_total=d.get("got_total"),
            problems=tuple(str(p) for p in d.get("problems") or ()),
            wrong_rows=tuple(dict(w) for w in d.get("wrong_rows") or ()),
            ok=bool(d.get("ok", False)),
            card=d.get("card"),
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "kind": self.kind,
            "dtype": self.dtype,
            "layout": self.layout,
            "shape": list(self.shape),
            "nan": self.nan,
            "path": self.path,
            "seed": self.seed,
            "expected_total": self.expected_total,
            "got_total": self.got_total,
            "problems": list(self.problems),
            "wrong_rows": [dict(w) for w in self.wrong_rows],
            "ok": self.ok,
            "card": self.card,
        }


def checks_from_properties(properties: Iterable[tuple[str, object]]) -> list[Check]:
    """Every check record among a report's user properties, in call order; malformed ones are skipped."""
    found: list[Check] = []
    for name, value in properties:
        if name != CASE_PROPERTY:
            continue
        try:
            found.append(Check.from_json(str(value)))
        except (ValueError, TypeError, AttributeError):
            continue
    return found


def split_nodeid(nodeid: str) -> tuple[str, str]:
    """(test name with its parameter id, parameter id) of a node id, e.g. ('test_matrix[fp32-...]', 'fp32-...')."""
    name = nodeid.rsplit("::", 1)[-1]
    if name.endswith("]") and "[" in name:
        return name, name[name.index("[") + 1 : -1]
    return name, ""


def params_from_id(nodeid: str) -> dict[str, Any]:
    """Best-effort parameters from a test id, for tests that ended before calling check."""
    name, param_id = split_nodeid(nodeid)
    params: dict[str, Any] = {}
    tokens = param_id.split("-") if param_id else []
    if tokens and tokens[-1] in PATHS:
        params["path"] = tokens.pop()
    matrix = _MATRIX_ID.match("-".join(tokens))
    if matrix and name.startswith("test_matrix["):
        params.update(
            kind="matrix",
            case_id="-".join(tokens),
            dtype=matrix["dtype"],
            layout=matrix["layout"],
            shape=[int(matrix["r"]), int(matrix["v"])],
            nan=matrix["frac"],
        )
        return params
    for i, token in enumerate(tokens):
        if token in DTYPES and "dtype" not in params:
            params["dtype"] = token
            if i + 1 < len(tokens) and not _SHAPE.match(tokens[i + 1]) and not _NAN.match(tokens[i + 1]):
                params["layout"] = tokens[i + 1]
        elif (shape := _SHAPE.match(token)) and "shape" not in params:
            params["shape"] = [int(shape[1]), int(shape[2])]
        elif (nan := _NAN.match(token)) and "nan" not in params:
            params["nan"] = nan[1]
    return params


@dataclass
class CaseResult:
    """Everything known about one test item once its reports are in."""

    nodeid: str
    outcome: str = "pending"
    duration: float = 0.0
    checks: list[Check] = field(default_factory=list)
    message: str = ""
    waiver: dict[str, str] | None = None
    planted: dict[str, Any] | None = None  # a self-test's verdict: variant, bug_class, caught, hits, applies

    @property
    def id(self) -> str:
        """The test name with its parameter id, as waivers and compare listings show it."""
        return split_nodeid(self.nodeid)[0]

    @property
    def parameters(self) -> dict[str, Any]:
        """From the first check record when there is one, else parsed from the id."""
        if self.checks:
            first = self.checks[0]
            return {
                "kind": first.kind,
                "case_id": first.case_id,
                "dtype": first.dtype,
                "layout": first.layout,
                "shape": list(first.shape),
                "nan": first.nan,
                "seed": first.seed,
            }
        parsed = params_from_id(self.nodeid)
        parsed.pop("path", None)
        return parsed

    @property
    def path(self) -> str:
        paths = sorted({c.path for c in self.checks if c.path})
        if paths:
            return "/".join(paths)
        return str(params_from_id(self.nodeid).get("path", ""))

    @property
    def expected_total(self) -> int | None:
        return _total(c.expected_total for c in self.checks)

    @property
    def got_total(self) -> int | None:
        return _total(c.got_total for c in self.checks)

    @property
    def wrong_rows(self) -> list[dict[str, Any]]:
        """Wrong rows of every check; a check's problems (dtype, shape, ...) come first as rowless entries."""
        rows: list[dict[str, Any]] = []
        for c in self.checks:
            rows += [{"case_id": c.case_id, "row": None, "expected": None, "got": None, "label": p} for p in c.problems]
            rows += [{"case_id": c.case_id, **w} for w in c.wrong_rows]
        return rows

    @property
    def failed(self) -> bool:
        return self.outcome in FAILED_OUTCOMES

    def absorb(self, when: str, outcome: str, duration: float, properties: Iterable[tuple[str, object]],
               longrepr: str, wasxfail: bool) -> None:
        """Fold one pytest report (setup, call, teardown, or xdist's crash report) into this result."""
        self.duration += duration
        properties = list(properties)
        new = checks_from_properties(properties)
        if len(new) > len(self.checks):  # reports carry the item's properties so far: keep the longest
            self.checks = new
        for name, value in properties:
            if name == PLANTED_PROPERTY:
                try:
                    self.planted = dict(json.loads(str(value)))
                except (ValueError, TypeError):
                    pass
        verdict = _verdict(when, outcome, wasxfail)
        if verdict is None:
            return
        if _RANK[verdict] >= _RANK.get(self.outcome, 0):
            self.outcome = verdict
            if longrepr:
                self.message = longrepr

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "nodeid": self.nodeid,
            "parameters": self.parameters,
            "path": self.path,
            "outcome": self.outcome,
            "duration": round(self.duration, 6),
            "expected_total": self.expected_total,
            "got_total": self.got_total,
            "wrong_rows": self.wrong_rows,
            "cards": sorted({c.card for c in self.checks if c.card is not None}),
            "message": self.message,
            "waiver": self.waiver,
            "checks": [c.as_dict() for c in self.checks],
        }


# A later, worse verdict wins: a teardown error after a pass is an error; a crash after a passed setup a failure.
_RANK: Mapping[str, int] = {
    "pending": 0, "passed": 1, "skipped": 2, "xfailed": 2, "xpassed": 2, "failed": 3, "error": 4,
}


def _verdict(when: str, outcome: str, wasxfail: bool) -> str | None:
    """Map one report to an outcome word; passed setup/teardown reports say nothing on their own."""
    if outcome == "skipped":
        return "xfailed" if wasxfail else "skipped"
    if when in ("setup", "teardown"):
        return "error" if outcome == "failed" else None
    if outcome == "passed":
        return "xpassed" if wasxfail else "passed"
    if outcome == "failed":
        return "failed"  # includes strict XPASS and xdist's crash report (when == "???")
    return None


def _total(values: Iterable[int | None]) -> int | None:
    values = list(values)
    if not values or any(v is None for v in values):
        return None
    return sum(int(v) for v in values)  # type: ignore[arg-type]


def short_message(text: str, limit: int = 200) -> str:
    """The most telling line of a failure message: the last 'E ' line, else the first non-empty one."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line[1:].strip() for line in lines if line.startswith("E ")]
    line = errors[0] if errors else (lines[-1] if lines else "")
    return line if len(line) <= limit else line[: limit - 1] + "…"
