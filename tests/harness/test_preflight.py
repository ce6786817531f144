"""The CPU backend checks its interpreter first, so a numpy mismatch is one clear error, not 600 failures."""
from __future__ import annotations

import pytest

from harness import hooks, preflight

pytestmark = pytest.mark.nan_harness


def test_this_interpreter_passes(device: str) -> None:
    if device != "cpu":
        pytest.skip("the preflight guards the CPU interpreter only")
    assert preflight.interpreter_problem() is None


def test_broken_interpreter_is_a_usage_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preflight, "interpreter_problem", lambda: "InterpreterError: only 0-dimensional arrays")
    with pytest.raises(pytest.UsageError, match=r"numpy .*only 0-dimensional arrays.*numpy<2"):
        hooks._check_interpreter()
