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
    not_runnable: tuple[NotRun, ...] = ()  # paths or families that cannot run for this kernel: reports group by these

    @property
    def coverage_gaps(self) -> tuple[str, ...]:
        """The same gaps as text, for results.json's older `coverage_gaps` field."""
        return tuple(gap.describe() for gap in self.not_runnable)


RUN_INFO_KEY = pytest.StashKey[RunInfo]()
