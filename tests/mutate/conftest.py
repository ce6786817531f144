"""The mutation tool's tests: operators, generation, classification of runs, runner, report, and its score."""
from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "nan_mutate: tests of python -m mutate (operators, statuses, score)")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/mutate/" in item.nodeid:
            item.add_marker(pytest.mark.nan_mutate)
