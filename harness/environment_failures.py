"""Environment failures: a message that says the machine (device, driver, memory, packages) stopped the run.

Such a run ends `environment` (exit ENVIRONMENT_EXIT, results.json `ended: "environment"` and its
`environment_failure`): it judged nothing, so it is never the kernel's failure and never a pass; a nightly keeps
its previous baseline. The patterns are data (harness.environment_table), extended by `--nan-env-patterns FILE`
(TOML, `[[pattern]]` entries with the same fields). A device fault marker (harness.backends: an illegal address,
an aicore exception) always wins: that is the kernel's fault, whatever else the text says.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from harness.backends import any_fault
from harness.environment_table import TABLE
from harness.needs import ENVIRONMENT_EXIT
from verdict.codec import JsonRecord

KINDS = ("device", "memory", "driver", "package")
BACKENDS = ("cuda", "npu", "cpu")
FIELDS = ("name", "regex", "backends", "kind", "startup_only", "example")
MESSAGE_LIMIT = 2000  # characters of the message kept in the reports
FAILURE_KEY = pytest.StashKey["Failure"]()  # the controller's: why this run ended `environment`


class PatternError(ValueError):
    """A pattern entry (built-in or from a user's file) that cannot be used; the message names it and why."""


@dataclass(frozen=True)
class Pattern:
    """One table entry: what to search for, where it applies, and a real message it matches."""

    name: str
    regex: str
    kind: str
    example: str
    backends: tuple[str, ...] = ()  # empty: every backend
    startup_only: bool = True

    def applies(self, backend: str | None, in_test: bool) -> bool:
        """Whether this entry may classify a message seen on `backend` (None: not resolved yet), in a test or not."""
        if in_test and self.startup_only:
            return False
        return backend is None or not self.backends or backend in self.backends

    def search(self, text: str) -> bool:
        return re.search(self.regex, text) is not None


@dataclass(frozen=True)
class Failure(JsonRecord):
    """A matched environment failure: which pattern, the message, and where it was seen (start-up, a test id)."""

    name: str
    kind: str
    message: str
    where: str
    backend: str | None = None

    def headline(self) -> str:
        """One line for every page's verdict: the pattern's name and the message's first line."""
        first = next((line.strip() for line in self.message.splitlines() if line.strip()), "")
        return f"ENVIRONMENT ({self.name}): {first}"


def pattern(entry: Mapping[str, Any], source: str) -> Pattern:
    """An entry checked field by field; a bad one is a PatternError naming `source` and the entry."""
    name = entry.get("name")
    where = f"{source}: pattern {name!r}" if isinstance(name, str) and name else f"{source}: a pattern"
    unknown = sorted(set(entry) - set(FIELDS))
    if unknown:
        raise PatternError(f"{where}: unknown field(s) {', '.join(unknown)} (fields: {', '.join(FIELDS)})")
    for key in ("name", "regex", "example"):
        if not isinstance(entry.get(key), str) or not entry[key]:
            raise PatternError(f"{where}: `{key}` must be a non-empty string")
    kind = entry.get("kind", "device")
    if kind not in KINDS:
        raise PatternError(f"{where}: `kind` must be one of {', '.join(KINDS)}, not {kind!r}")
    backends = entry.get("backends", [])
    if not isinstance(backends, list) or any(b not in BACKENDS for b in backends):
        raise PatternError(f"{where}: `backends` must be a list of {', '.join(BACKENDS)} (empty: all)")
    startup_only = entry.get("startup_only", True)
    if not isinstance(startup_only, bool):
        raise PatternError(f"{where}: `startup_only` must be true or false")
    try:
        re.compile(entry["regex"])
    except re.error as exc:
        raise PatternError(f"{where}: `regex` does not compile: {exc}") from exc
    made = Pattern(entry["name"], entry["regex"], kind, entry["example"], tuple(backends), startup_only)
    if not made.search(made.example):
        raise PatternError(f"{where}: its `example` does not match its own `regex`")
    return made


def builtin() -> tuple[Pattern, ...]:
    """The shipped table, checked like a user's."""
    return tuple(pattern(entry, "harness.environment_table") for entry in TABLE)


def load_file(path: Path) -> tuple[Pattern, ...]:
    """A user's TOML file of `[[pattern]]` entries; a PatternError names what is wrong with it."""
    try:
        data = tomllib.loads(Path(path).read_bytes().decode("utf-8"))
    except OSError as exc:
        raise PatternError(f"--nan-env-patterns {path}: cannot read: {exc.strerror or exc}") from exc
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PatternError(f"--nan-env-patterns {path}: not a UTF-8 TOML file: {exc}") from exc
    entries = data.get("pattern")
    if not isinstance(entries, list) or not entries or set(data) != {"pattern"}:
        raise PatternError(f"--nan-env-patterns {path}: expected only [[pattern]] entries "
                           f"(fields: {', '.join(FIELDS)})")
    return tuple(pattern(e if isinstance(e, dict) else {}, f"--nan-env-patterns {path}") for e in entries)


def table(files: Iterable[str | Path] = (), folder: Path | None = None) -> tuple[Pattern, ...]:
    """The built-in table, then each user file's entries (relative paths against `folder`); names stay unique."""
    patterns = list(builtin())
    for file in files:
        path = Path(folder, file) if folder is not None else Path(file)
        patterns += load_file(path)
    seen: set[str] = set()
    for p in patterns:
        if p.name in seen:
            raise PatternError(f"--nan-env-patterns: pattern name {p.name!r} is used twice")
        seen.add(p.name)
    return tuple(patterns)


# torch_npu words every failed runtime call "NPU function error: ..." (set_device at start-up too: vllm-ascend#1558),
# so that prefix alone, one of the NPU's fault markers, names no fault of a kernel
GENERIC_MARKERS = ("npu function error",)


def _without_generic(text: str) -> str:
    """The message less the fault markers that only say a runtime call failed, for the fault check."""
    return re.sub("|".join(re.escape(m) for m in GENERIC_MARKERS), "", text, flags=re.IGNORECASE)


def classify(text: str, patterns: Sequence[Pattern], *, backend: str | None = None, in_test: bool = False,
             where: str = "start-up") -> Failure | None:
    """The first entry that matches the message, or None; never for a device fault (the kernel's)."""
    if not text or any_fault(_without_generic(text)):
        return None
    for p in patterns:
        if p.applies(backend, in_test) and p.search(text):
            return Failure(p.name, p.kind, text[:MESSAGE_LIMIT], where, backend)
    return None


def end_run(config: pytest.Config, failure: Failure) -> None:
    """Stop the run as an environment failure: the reports read FAILURE_KEY (reports.plugin), the exit is
    ENVIRONMENT_EXIT, never a usage error or a verdict."""
    config.stash[FAILURE_KEY] = failure
    pytest.exit(f"nan-harness: {failure.headline()} -- the machine stopped the run before the kernel was judged "
                f"(not the kernel's failure; exit {ENVIRONMENT_EXIT})", returncode=ENVIRONMENT_EXIT)
