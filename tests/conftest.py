"""Loaded by every process that runs tests/ (xdist's controller included): registers the planted-bug score."""
from __future__ import annotations

import pytest

from tests.selftest import score


def pytest_configure(config: pytest.Config) -> None:
    score.register(config)
