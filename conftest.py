"""Root conftest: loads the harness and report plugins so every test run gets --device and --kernel."""
from __future__ import annotations

pytest_plugins = ["harness.plugin", "reports.plugin", "reports.html"]
