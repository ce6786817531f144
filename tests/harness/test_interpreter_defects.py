"""The interpreter preflight measures which comparisons it gets wrong per dtype, once, and the run's environment
says so: "bf16 `x != x` is false for NaN, -NaN" under triton 3.9's and triton-ascend 3.2.0's interpreters."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest

from harness import backends, preflight
from harness.environment import interpreter_entry
from verdict.interpreter import ENV_KEY, NONE_FOUND, Defect, from_text, to_text

pytestmark = pytest.mark.nan_harness


@pytest.fixture
def cpu_only(device: str) -> None:
    if device != "cpu":
        pytest.skip("the preflight measures the CPU interpreter only")


@pytest.fixture
def fresh_cache() -> Iterator[None]:
    """A test that replaces what the preflight measures must not leave its answer cached for the others."""
    preflight.interpreter_defects.cache_clear()
    yield
    preflight.interpreter_defects.cache_clear()


@pytest.mark.usefixtures("cpu_only")
def test_bf16_self_comparison_is_the_defect_found_here() -> None:
    """Measured (REFERENCE.md section 11): bf16 is compared as raw uint16 bits; fp32, fp16, an fp32 upcast and a
    bit test are right. If this fails, the interpreter changed: update docs/verdicts.md "Known interpreter defects"."""
    defects = preflight.interpreter_defects()
    assert Defect("bf16", "x != x", "is false for NaN, -NaN") in defects, defects
    assert Defect("bf16", "x == x", "is true for NaN, -NaN") in defects, defects
    assert {d.dtype for d in defects} == {"bf16"}, defects
    assert not {d.expr for d in defects} & {"x.to(tl.float32) != x.to(tl.float32)", "(bits & abs_mask) > exponent_mask"}


@pytest.mark.usefixtures("cpu_only", "fresh_cache")
def test_measured_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    real = preflight._format_defects
    monkeypatch.setattr(preflight, "_format_defects", lambda fmt: calls.append(fmt.name) or real(fmt))
    assert preflight.interpreter_defects() == preflight.interpreter_defects()
    assert calls == ["fp32", "fp16", "bf16"]


@pytest.mark.usefixtures("cpu_only", "fresh_cache")
def test_environment_entry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Interpreted backends get the entry ("none found" when clean, "not measured" when the probe cannot run);
    compiled backends never run the probe."""
    cpu = backends.get("cpu")
    assert from_text(interpreter_entry(cpu)[ENV_KEY]) == preflight.interpreter_defects()
    monkeypatch.setattr(preflight, "interpreter_defects", lambda: ())
    assert interpreter_entry(cpu)[ENV_KEY] == NONE_FOUND
    monkeypatch.setattr(preflight, "interpreter_defects", lambda: 1 / 0)
    assert interpreter_entry(cpu)[ENV_KEY].startswith("not measured (ZeroDivisionError")
    assert interpreter_entry(replace(cpu, interpreted=False)) == {}


def test_text_round_trip() -> None:
    """The environment's text is what the diagnosis parses back; other text names no defect."""
    defects = (Defect("bf16", "x != x", "is false for NaN, -NaN"), Defect("bf16", "x < 0", "is false for -2"))
    assert from_text(to_text(defects)) == defects and to_text(()) == NONE_FOUND
    assert from_text(NONE_FOUND) == () and from_text("not measured (RuntimeError: x)") == ()
    assert [d.about_nan for d in defects] == [True, False]
