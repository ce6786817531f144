"""A pytest plugin for the original's baseline run: which lines of the unit each test reaches (mutate.coverage).

Loaded with `-p mutate.coverage_plugin`; acts only where MUTATE_COVERAGE_FILES names the files to watch
(os.pathsep-separated) and MUTATE_COVERAGE_OUT a folder, and only in the process that runs the tests (the xdist
worker). Writes one JSON line per test to `<folder>/<pid>.jsonl`: `{"nodeid": ..., "lines": {file: [line, ...]}}`.
"""
from __future__ import annotations

import json
import os
from collections.abc import Generator
from pathlib import Path

import pytest

from mutate.coverage import Recorder, recording, to_json

FILES_VAR, OUT_VAR = "MUTATE_COVERAGE_FILES", "MUTATE_COVERAGE_OUT"


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, object, object]:
    files, folder = os.environ.get(FILES_VAR), os.environ.get(OUT_VAR)
    if not files or not folder or not hasattr(item.config, "workerinput"):
        return (yield)
    recorder = Recorder(files.split(os.pathsep))
    with recording(recorder):
        result = yield
    with open(Path(folder) / f"{os.getpid()}.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps({"nodeid": item.nodeid, "lines": to_json(recorder.take())}) + "\n")
    return result


def read(folder: Path) -> dict[str, dict[str, list[int]]]:
    """Every test's lines, merged over the files the workers wrote."""
    found: dict[str, dict[str, list[int]]] = {}
    for path in sorted(folder.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                entry = json.loads(line)
                found[entry["nodeid"]] = entry["lines"]
    return found
