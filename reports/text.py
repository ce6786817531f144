"""Failure text for one-line listings; torch-free, so the gate tools (compare, the nightly) read JSON without torch."""
from __future__ import annotations


def short_message(text: str, limit: int = 200) -> str:
    """The most telling line of a failure message: the first 'E ' line, else the first non-empty one."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    errors = [line[1:].strip() for line in lines if line.startswith("E ")]
    line = errors[0] if errors else (lines[0] if lines else "")
    return line if len(line) <= limit else line[: limit - 1] + "…"
