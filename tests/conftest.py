"""Loaded by every process that runs tests/ (xdist's controller included): registers the planted-bug score, and
holds the one fork server each test process starts its sub-runs from."""
from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.selftest import score
from tests.support.forkserver import ForkServer, fork_server


def pytest_configure(config: pytest.Config) -> None:
    score.register(config)


@pytest.fixture(scope="session")
def forks() -> Iterator[ForkServer | None]:
    """A Python with torch and pytest's plugins imported that forks sub-runs, one per test process for the session
    (NAN_SELFTEST_FORK=0: None, plain subprocesses)."""
    with fork_server() as server:
        yield server
