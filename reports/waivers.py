"""Waiver file (TOML): known failures become strict xfails, so a waived case that starts passing fails too."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from harness.activation import is_worker
from reports.data_file import entries, read_toml

EXAMPLE = '[[waiver]]\nid = "tests/precision/test_families.py::test_case[bf16-prefix-1x128-nan0.5-wrapper]"\n' \
    'reason = "why it fails"\nlink = "https://tracker/issue/123"'


class WaiverError(ValueError):
    """The waiver file is unreadable, malformed, or names tests that do not exist."""


@dataclass(frozen=True)
class Waiver:
    """One entry: a full pytest node id, why it is waived, and where that is tracked."""

    id: str
    reason: str
    link: str


def load_waivers(path: Path) -> dict[str, Waiver]:
    """Parse and validate a waiver file; every entry needs a non-empty id, reason and link, ids unique."""
    where = f"--nan-waivers {path}"
    data = read_toml(path, where, WaiverError)
    unknown_keys = set(data) - {"waiver"}
    if unknown_keys:
        raise WaiverError(f"{where}: unknown top-level keys {sorted(unknown_keys)}; expected:\n{EXAMPLE}")
    if not isinstance(data.get("waiver", []), list):
        raise WaiverError(f"{where}: use [[waiver]] tables; expected:\n{EXAMPLE}")
    waivers: dict[str, Waiver] = {}
    for fields in entries(data.get("waiver", []), where, WaiverError, "waiver", EXAMPLE, "a node id"):
        waiver = Waiver(*fields)
        if waiver.id in waivers:
            raise WaiverError(f"{where}: id {waiver.id!r} is waived twice")
        waivers[waiver.id] = waiver
    return waivers


def unknown_ids(waivers: dict[str, Waiver], collected: list[str], rootdir: Path, partial_files: set[str]) -> list[str]:
    """Waiver ids naming no test: their file was collected whole but lacks the id, or the file does not exist.

    Checked against every collected item before -k/-m deselection. A file left out of this run's paths (or named
    with ::, so only collected in part) cannot be checked and its waivers are left alone.
    """
    present = set(collected)
    files = {nodeid.split("::", 1)[0] for nodeid in collected}
    unknown: list[str] = []
    for wid in waivers:
        if wid in present:
            continue
        file = wid.split("::", 1)[0]
        if file in partial_files:
            continue
        if file in files or not (rootdir / file).is_file():
            unknown.append(wid)
    return unknown


def _partial_files(config: pytest.Config) -> set[str]:
    """Files named on the command line with ::, relative to rootdir like node ids."""
    partial: set[str] = set()
    for arg in config.args:
        if "::" not in arg:
            continue
        file = Path(config.invocation_params.dir, arg.split("::", 1)[0]).resolve()
        try:
            partial.add(file.relative_to(config.rootpath).as_posix())
        except ValueError:
            continue
    return partial


class WaiverPlugin:
    """Marks waived items as strict xfails; an id matching no collected test is a usage error."""

    def __init__(self, waivers: dict[str, Waiver], source: Path) -> None:
        self.waivers = waivers
        self.source = source

    @pytest.hookimpl(tryfirst=True)  # before -k/-m deselection: ids are checked against the whole collection
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:
        unknown = unknown_ids(self.waivers, [i.nodeid for i in items], config.rootpath, _partial_files(config))
        if unknown:
            listed = "\n  ".join(unknown)
            message = f"--nan-waivers {self.source}: id(s) match no collected test:\n  {listed}"
            if is_worker(config):  # xdist turns a worker's UsageError into an INTERNALERROR
                config.hook.pytest_collectreport(
                    report=pytest.CollectReport("", "failed", longrepr=message, result=[])
                )
                items.clear()
                return
            raise pytest.UsageError(message)
        for item in items:
            waiver = self.waivers.get(item.nodeid)
            if waiver is not None:
                item.add_marker(pytest.mark.xfail(strict=True, reason=f"waived: {waiver.reason} ({waiver.link})"))

    def pytest_report_header(self) -> list[str]:
        return [f"nan-harness: {len(self.waivers)} waiver(s) from {self.source} (strict xfail)"]
