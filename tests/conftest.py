"""Loaded by every process that runs tests/ (xdist's controller included): registers the planted-bug score, holds
the one fork server each test process starts its sub-runs from, and the one worker server that forks the xdist
workers of every pytest this session starts (tests.support.forkworkers)."""
from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.selftest import score
from tests.support.forkserver import ForkServer, fork_server
from tests.support.forkworkers import SWITCH, WORKERS_VAR, point_at_launcher, worker_server

PRECISION = Path(__file__).parent / "precision"


def pytest_configure(config: pytest.Config) -> None:
    score.register(config)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_setupnodes(config: pytest.Config, specs: list[Any]) -> None:
    """A pytest started below a self-test session: its workers are forked by that session's worker server."""
    if os.environ.get(WORKERS_VAR):
        point_at_launcher(specs, os.environ[WORKERS_VAR])


SUITE_ONLY = pytest.StashKey[bool]()


def _suite_only(session: pytest.Session) -> bool:
    """Whether every collected test is the precision suite's, decided once per session: a mutation worker sets this
    fixture up again for each test it runs (4 ms a time over its 557 items, a quarter of a replayed test)."""
    if SUITE_ONLY not in session.stash:
        session.stash[SUITE_ONLY] = all(PRECISION in item.path.parents for item in session.items)
    return session.stash[SUITE_ONLY]


@pytest.fixture(scope="session", autouse=True)
def forked_workers(request: pytest.FixtureRequest) -> Iterator[None]:
    """The worker server, for sessions that start pytest runs (not the precision suite's own; NAN_SELFTEST_FORK=0 or
    runs: none, every xdist worker a fresh interpreter)."""
    if (os.environ.get(SWITCH, "1") != "1" or not hasattr(os, "fork") or WORKERS_VAR in os.environ
            or _suite_only(request.session)):
        yield
        return
    with worker_server() as path:
        os.environ[WORKERS_VAR] = path
        try:
            yield
        finally:
            os.environ.pop(WORKERS_VAR, None)


@pytest.fixture(scope="session")
def forks() -> Iterator[ForkServer | None]:
    """A Python with torch and pytest's plugins imported that forks sub-runs, one per test process for the session
    (NAN_SELFTEST_FORK=0: None, plain subprocesses)."""
    with fork_server() as server:
        yield server
