"""Fixtures of the vLLM integration tests."""
from __future__ import annotations

from tests.vllm.fakes import fakes

__all__ = ["fakes"]
