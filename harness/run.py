"""What the harness tells the reports about a run: kernel, environment, families and what could not run."""
from __future__ import annotations

from dataclasses import dataclass

import pytest

from cases.family import Family
from verdict.not_run import NotRun


@dataclass(frozen=True)
class RunInfo:
    """Written once by the harness at configure time, read by every report writer."""

    kernel_module: str
    backend: str
    environment: dict[str, str]
    families: tuple[Family, ...]
    coverage_gaps: tuple[str, ...] = ()  # paths or families that cannot run for this kernel, and why
    not_runnable: tuple[NotRun, ...] = ()  # the same as data: every report groups tests not run by these


RUN_INFO_KEY = pytest.StashKey[RunInfo]()
