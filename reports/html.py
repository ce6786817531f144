"""pytest-html hooks: the title names the kernel under test, and the environment table the backend."""
from __future__ import annotations

import pytest
import torch

from harness import device as backend
from harness.plugin import DEVICE_KEY, TARGET_KEY
from harness.target import KernelUnderTest


class PrecisionHtml:
    """pytest-html hook implementations bound to one run's kernel under test."""

    def __init__(self, target: KernelUnderTest) -> None:
        self.target = target

    def pytest_html_report_title(self, report) -> None:  # type: ignore[no-untyped-def]
        report.title = f"NaN-count precision: {self.target.module_name}"


@pytest.hookimpl(trylast=True)
def pytest_configure(config: pytest.Config) -> None:
    if TARGET_KEY not in config.stash or not config.pluginmanager.hasplugin("html"):
        return
    from pytest_metadata.plugin import metadata_key

    target = config.stash[TARGET_KEY]
    device = config.stash[DEVICE_KEY]
    meta = config.stash[metadata_key]
    meta["Kernel module"] = f"{target.module_name} ({target.file})"
    meta["NaN predicate"] = target.predicate_source
    meta["Backend"] = device
    meta["Device"] = backend.describe(device)
    meta["Triton"] = backend.triton_flavour()
    meta["Torch"] = str(torch.__version__)
    config.pluginmanager.register(PrecisionHtml(target), "nan-precision-html")
