"""The harness's numeric options: each with its range, checked once at configure into a clear usage error.

They are parsed as text and checked here, not by argparse, so that a bad value is reported after the reports
have been marked "not finished" (an argparse error would leave an earlier run's reports in place).
"""
from __future__ import annotations

from dataclasses import dataclass

import pytest


class OptionError(ValueError):
    """A harness option with a value outside its range; the message names the option, the value and the range."""


@dataclass(frozen=True)
class Numeric:
    """One integer option: its flag, default (None: the backend decides), inclusive range and help."""

    flag: str
    default: int | None
    low: int
    high: int
    metavar: str
    help: str

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")

    def parse(self, value: object) -> int | None:
        """The value as an int in range (None stays None: the default decides)."""
        if value is None:
            return None
        try:
            number = int(str(value).strip(), 10)
        except ValueError:
            raise OptionError(f"{self.flag} {value!r}: not an integer ({self.low}..{self.high})") from None
        if not self.low <= number <= self.high:
            raise OptionError(f"{self.flag} {number}: out of range, use {self.low}..{self.high}")
        return number


NUMERIC: tuple[Numeric, ...] = (
    Numeric("--nan-gen-cases", None, 1, 100_000, "N",
            "cases the generated family draws from its seed, 1..100000 (default 10 on the CPU, 100 on accelerators)"),
    Numeric("--nan-gen-seed", 8, 0, 2**32 - 1, "SEED",
            "seed the generated family draws its cases from, 0..2^32-1. Default: 8"),
    Numeric("--nan-hypothesis-examples", 10, 1, 1_000_000, "N",
            "examples the hypothesis property test draws per path, derandomized, 1..1000000 (default 10: seconds "
            "on the CPU; nightlies 500, accelerators 2000)"),
)


def parse_numeric(config: pytest.Config) -> None:
    """Replace each numeric option's text by its int, or raise OptionError naming the option and its range."""
    for spec in NUMERIC:
        setattr(config.option, spec.dest, spec.parse(getattr(config.option, spec.dest, spec.default)))
