"""The nightly's tests: merge of pytest-split shards, the trend page, the nightly driver."""
from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "nan_nightly: tests of the nightly, the shard merge and the trend page")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/nightly/" in item.nodeid:
            item.add_marker(pytest.mark.nan_nightly)
