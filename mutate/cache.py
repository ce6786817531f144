"""Results kept between runs: a mutant judged before, with the same code, suite and backend, is not judged again.

A key hashes every module of the unit, the mutant id, the suite's revision (the files that decide a verdict), the
backend, its versions and the selection; unjudged results are never kept (docs/mutate.md, step 7).
"""
from __future__ import annotations

import hashlib
import json
from importlib import metadata
from pathlib import Path
from typing import Any

from mutate.run import ROOT

SUITE_PARTS = ("cases", "reference", "harness", "verdict", "tests/precision", "mutate")
VERSION = 1


def suite_revision(root: Path = ROOT) -> str:
    """A hash of every file that decides a verdict (its path and bytes)."""
    digest = hashlib.sha256()
    for part in SUITE_PARTS:
        for path in sorted((root / part).rglob("*.py")):
            digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def versions() -> dict[str, str]:
    """Versions of what runs the kernel, read without importing it."""
    found = {}
    for name in ("torch", "triton", "triton-ascend", "torch-npu", "numpy"):
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def key_of(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:24]


class Cache:
    """A JSON file of judged results: key -> mutant entry; plus the baseline and the last run's killers."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.doc: dict[str, Any] = {"version": VERSION, "mutants": {}, "baseline": {}, "killers": {}}
        if path is not None and path.is_file():
            try:
                doc = json.loads(path.read_text(encoding="utf-8"))
                if doc.get("version") == VERSION:
                    self.doc = doc
            except ValueError:
                pass

    def mutant(self, key: str) -> dict[str, Any] | None:
        return self.doc["mutants"].get(key)

    def keep(self, key: str, entry: dict[str, Any]) -> None:
        self.doc["mutants"][key] = entry

    def baseline(self, key: str) -> dict[str, Any] | None:
        return self.doc["baseline"].get(key)

    def keep_baseline(self, key: str, value: dict[str, Any]) -> None:
        self.doc["baseline"] = {key: value}

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.doc), encoding="utf-8")
        tmp.replace(self.path)
