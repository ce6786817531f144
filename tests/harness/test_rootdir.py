"""Joining a harness option with its value: only options that take one, only values that are existing paths."""
from __future__ import annotations

import pytest

from harness.activation import rejoined, value_flags

pytestmark = pytest.mark.nan_harness


class Option:
    """pytest's Argument as value_flags reads it: names() and attrs()."""

    def __init__(self, *names: str, **attrs: object) -> None:
        self._names, self._attrs = names, attrs

    def names(self) -> list[str]:
        return list(self._names)

    def attrs(self) -> dict[str, object]:
        return self._attrs


def test_only_options_that_take_a_value_are_joined() -> None:
    flags = value_flags([Option("--nan-json"), Option("--kernel-path", action="append"),
                         Option("--nan-fp32-full", action="store_true"), Option("-x", "--nan-short")])
    assert flags == {"--nan-json", "--kernel-path", "--nan-short"}


def test_existing_values_are_joined_and_test_paths_are_kept() -> None:
    exists = {"/abs/r.json", "tests/x.py", "/abs/dir"}.__contains__
    args = ["-m", "nan_special", "--nan-json", "/abs/r.json", "--nan-fp32-full", "tests/x.py",
            "--kernel-path", "/abs/dir", "--nan-markdown", "/abs/new.md"]
    flags = {"--nan-json", "--kernel-path", "--nan-markdown"}
    assert rejoined(args, flags, exists) == ["-m", "nan_special", "--nan-json=/abs/r.json", "--nan-fp32-full",
                                             "tests/x.py", "--kernel-path=/abs/dir", "--nan-markdown", "/abs/new.md"]


def test_nothing_to_join_is_none() -> None:
    assert rejoined(["--nan-json=/abs/r.json", "--nan-json"], {"--nan-json"}, lambda _: True) is None
